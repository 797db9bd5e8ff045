/**
 * The GURPS Game Aid feed against a bucket that merges entries of the same text as the Game
 * Aid's ModifierStack does, and the Game Aid's roll messages as its die roll template renders them.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { GurpsBucketFeed, bucketValue, gurpsReason, gurpsRollAction } from "../scripts/systems/gurps.js";
import { feedModifier } from "../scripts/systems/generic.js";
import { gurpsRollContent, gurpsStub } from "./helpers/gurps-stub.js";

const ruling = (target, modifier = -4, over = {}) => ({
  ruleset: "gurps-4e",
  actor: "t-fus",
  target,
  allowed: true,
  modifier,
  crossings: [
    { region: "r1", zone: "darkness", kind: "into" },
    { region: "r2", zone: "smoke", kind: "through" },
  ],
  ...over,
});

describe("GURPS Modifier Bucket", () => {
  test("the stub merges like the Game Aid: one shared text for two targets would put −8 in the bucket", () => {
    const g = gurpsStub();
    g.GURPS.ModifierBucket.addModifier(-4, "Sightline: darkness (−4)");
    g.GURPS.ModifierBucket.addModifier(-4, "Sightline: darkness (−4)");
    assert.equal(g.sum(), -8);
  });

  test("our entry names the pair; a second target replaces the first, so the bucket holds −4, not −8", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    assert.equal(feed.set(ruling("t-a"), { actor: "Fusilier", target: "Raider A" }), true);
    assert.deepEqual(g.list(), [[-4, "Sightline: Fusilier \u2192 Raider A: darkness, smoke (\u22124)"]]);
    feed.set(ruling("t-b"), { actor: "Fusilier", target: "Raider B" });
    assert.deepEqual(g.list(), [[-4, "Sightline: Fusilier \u2192 Raider B: darkness, smoke (\u22124)"]]);
    assert.equal(g.sum(), -4);
  });

  test("feeding the same pair again does not count it twice; a new ruling of the pair replaces it", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    feed.set(ruling("t-a"));
    feed.set(ruling("t-a"));
    assert.equal(g.sum(), -4);
    feed.set(ruling("t-a", -2, { crossings: [{ region: "r1", zone: "darkness", kind: "into" }] }));
    assert.equal(g.sum(), -2);
    assert.equal(g.list().length, 1);
  });

  test("the user's own modifiers stay; only our entry is removed when its target is dropped", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    g.GURPS.ModifierBucket.addModifier(2, "Aim");
    feed.set(ruling("t-a"));
    assert.equal(feed.clear("t-fus->t-b"), false, "another pair's drop leaves it");
    assert.equal(feed.clear("t-fus->t-a"), true);
    assert.deepEqual(g.list(), [[2, "Aim"]]);
    assert.ok(g.calls.some(([c]) => c === "refresh"));
  });

  test("after a roll used the entry, nothing of the roll's is removed and the next feed adds afresh", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    feed.set(ruling("t-a"));
    assert.equal(g.GURPS.ModifierBucket.applyMods().length, 1, "the roll took −4");
    assert.equal(feed.pending, false);
    g.GURPS.ModifierBucket.addModifier(1, "Aim");
    assert.equal(feed.clear(), false, "the roll took it: nothing to remove");
    assert.deepEqual(g.list(), [[1, "Aim"]]);
    feed.set(ruling("t-a"));
    assert.equal(g.sum(), -3, "the next roll gets −4 once, next to the user's own +1");
  });

  test("no modifier, a refused action or no Game Aid: nothing added, and the previous entry goes", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    feed.set(ruling("t-a"));
    assert.equal(feed.set(ruling("t-b", 0)), false);
    assert.deepEqual(g.list(), []);
    assert.equal(feed.set(ruling("t-b", null, { allowed: false })), false);
    assert.equal(new GurpsBucketFeed(() => undefined).set(ruling("t-a")), false);
    assert.equal(bucketValue(ruling("t-a", 0)), null);
  });

  test("another ruleset's ruling (an Infinity or Traveller scene in a GURPS world) never reaches the bucket", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    feed.set(ruling("t-a"));
    for (const ruleset of ["infinity-n4", "traveller", undefined]) {
      assert.equal(bucketValue(ruling("t-b", -3, { ruleset })), null, String(ruleset));
      assert.equal(feed.set(ruling("t-b", -3, { ruleset })), false);
    }
    assert.deepEqual(g.list(), [], "and the GURPS entry of the pair before it goes");
  });

  test("the generic feed only touches GURPS when the system is gurps", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    assert.equal(feedModifier({ systemId: "dnd5e", gurps: feed, ruling: ruling("t-a") }), null);
    assert.equal(feedModifier({ systemId: "gurps", gurps: feed, ruling: ruling("t-a") }), "gurps");
    assert.equal(g.list().length, 1);
    assert.match(gurpsReason({ modifier: 2, crossings: [], actor: "a", target: "b" }), /a \u2192 b: visibility \(\+2\)/);
  });
});

describe("Game Aid roll messages", () => {
  test("attacks (melee, ranged, either) and defences (parry, block, dodge) are judged", () => {
    const cases = [
      ['[@a1@M:"Broadsword (Swung)"]', { action: "attack", reaction: false }],
      ['[@a1@R:"Rifle"]', { action: "attack", reaction: false }],
      ['[@a1@A:"Spear"]', { action: "attack", reaction: false }],
      ['[@a1@P:"Broadsword"]', { action: "parry", reaction: true }],
      ['[@a1@B:"Shield"]', { action: "block", reaction: true }],
      ["[@a1@Dodge]", { action: "dodge", reaction: true }],
      // The attributes by name (lib/parselink.js: DODGE, Parry/PARRY, BLOCK; the sheet's Parry button's data-otf).
      ["[@a1@Parry]", { action: "parry", reaction: true }],
      ["[@a1@PARRY -2]", { action: "parry", reaction: true }],
      ["[@a1@BLOCK]", { action: "block", reaction: true }],
      ["[@a1@DODGE]", { action: "dodge", reaction: true }],
      ['[M:"Punch"]', { action: "attack", reaction: false }],
    ];
    for (const [otf, want] of cases) assert.deepEqual(gurpsRollAction({ content: gurpsRollContent(otf) }), want, otf);
  });

  test("skills, attributes, checks, damage and other messages are not", () => {
    for (const otf of ['[@a1@S:"Stealth"]', "[@a1@ST]", "[@a1@CR:12]", '[@a1@D:"Broadsword"]', "[@a1@Parrying Dagger]", "[@a1@Blocker]"]) assert.equal(gurpsRollAction({ content: gurpsRollContent(otf) }), null, otf);
    assert.equal(gurpsRollAction({ content: "<div class='damage-chat-message'>2d+1 cut</div>" }), null);
    assert.equal(gurpsRollAction({ content: undefined }), null);
  });
});
