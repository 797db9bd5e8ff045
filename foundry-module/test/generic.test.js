/**
 * What every system gets (scripts/systems/generic.js): `feedModifier` hands a ruling to the
 * system's own feed only where one exists and says which took it, and `announce` calls the
 * `sightline.adjudicated` hook with the ruling and its context for other modules and macros.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { announce, feedModifier } from "../scripts/systems/generic.js";
import { GurpsBucketFeed } from "../scripts/systems/gurps.js";
import { HOOK_ADJUDICATED } from "../scripts/const.js";
import { hooksStub } from "./helpers/foundry-stubs.js";
import { gurpsStub } from "./helpers/gurps-stub.js";

const ruling = (over = {}) => ({
  ruleset: "gurps-4e", actor: "t-fus", target: "t-ana", action: "attack", allowed: true, modifier: -4,
  crossings: [{ region: "r1", zone: "darkness", kind: "into" }], ...over,
});

describe("feedModifier", () => {
  test("under GURPS the bucket line names the tokens by the names given, not by their ids", () => {
    const g = gurpsStub();
    const took = feedModifier({ systemId: "gurps", gurps: new GurpsBucketFeed(() => g.GURPS), ruling: ruling(), names: { actor: "Fusilier", target: "Ana" } });
    assert.equal(took, "gurps");
    assert.deepEqual(g.list(), [[-4, "Sightline: Fusilier \u2192 Ana: darkness (\u22124)"]]);
  });

  test("under GURPS without a feed (no Game Aid), or with a ruling that carries nothing for the bucket, no feed took it", () => {
    assert.equal(feedModifier({ systemId: "gurps", gurps: null, ruling: ruling() }), null);
    assert.equal(feedModifier({ systemId: "gurps", ruling: ruling() }), null);
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    for (const r of [ruling({ modifier: 0 }), ruling({ allowed: false, modifier: null })]) assert.equal(feedModifier({ systemId: "gurps", gurps: feed, ruling: r }), null);
    assert.deepEqual(g.list(), []);
    assert.equal(feedModifier({ systemId: "gurps", gurps: new GurpsBucketFeed(() => undefined), ruling: ruling() }), null, "the Game Aid's global is absent");
  });

  test("other systems (twodsix, a generic one, none) never reach the GURPS bucket, even when a feed is at hand", () => {
    const g = gurpsStub();
    const feed = new GurpsBucketFeed(() => g.GURPS);
    for (const systemId of ["twodsix", "dnd5e", "", undefined, "GURPS"]) assert.equal(feedModifier({ systemId, gurps: feed, ruling: ruling() }), null, String(systemId));
    assert.deepEqual(g.calls, []);
  });
});

describe("announce", () => {
  test("calls sightline.adjudicated once, handing listeners the ruling and its context as given", () => {
    const hooks = hooksStub();
    const heard = [];
    hooks.on("sightline.adjudicated", (r, context) => heard.push([r, context]));
    hooks.on("sightline.status", () => heard.push(["wrong hook"]));
    const r = ruling();
    const context = { scene: "s-docks", confirm: false, names: { actor: "Fusilier", target: "Ana" } };
    announce(hooks, r, context);
    assert.equal(HOOK_ADJUDICATED, "sightline.adjudicated");
    assert.deepEqual(hooks.called.map(([name]) => name), ["sightline.adjudicated"]);
    assert.equal(heard.length, 1);
    assert.equal(heard[0][0], r, "the ruling itself");
    assert.equal(heard[0][1], context, "the context itself");
  });
});
