/**
 * Foundry V14's region and flag changes: a hidden region is no zone, a region attached to a token
 * is re-sent (as Foundry has moved it) when the token changes, and the scene flags are replaced
 * with V14's `_replace` operator instead of the deprecated `-=` keys.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { serializeRegion, serializeScene, zoneOf, regionsAttachedTo } from "../scripts/serialize.js";
import { PatchBatcher } from "../scripts/batcher.js";
import { sceneFlagUpdates } from "../scripts/adapters/scene-settings.js";
import { Sightline } from "../scripts/adapters/sightline.js";
import { gameStub, hooksStub, socketBus } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";

describe("V14 regions", () => {
  test("a hidden region (Foundry turns its behaviours off) is sent as a plain region, not a zone", () => {
    const region = F.smokeRegion({ hidden: true });
    assert.equal(zoneOf(region, "infinity-n4"), null);
    assert.equal(serializeRegion(region, { ruleset: "infinity-n4" }).zone, undefined);
    assert.deepEqual(serializeRegion(F.smokeRegion({ hidden: false }), { ruleset: "infinity-n4" }).zone, { type: "zero" });
    const scene = F.scene({ regions: F.collection([F.smokeRegion({ hidden: true })]) });
    assert.equal(serializeScene(scene, { ruleset: "infinity-n4" }).regions[0].zone, undefined);
  });

  test("regions attached to a token are found by the token's id", () => {
    const attached = F.smokeRegion({ id: "r-aura", attachment: { token: "t-fus" } });
    const scene = F.scene({ regions: F.collection([attached, F.poorRegion(), F.smokeRegion({ id: "r-other", attachment: { token: null } })]) });
    assert.deepEqual(regionsAttachedTo(scene, "t-fus").map((r) => r.id), ["r-aura"]);
    assert.deepEqual(regionsAttachedTo(scene, null), []);
  });

  test("an attachment read as the token document (not its id) is found too", () => {
    const docs = F.scene().tokens.contents;
    const attached = F.smokeRegion({ id: "r-aura", attachment: { token: docs[0] } });
    const scene = F.scene({ regions: F.collection([attached, F.smokeRegion({ id: "r-other", attachment: { token: docs[1] } })]) });
    assert.deepEqual(regionsAttachedTo(scene, docs[0].id).map((r) => r.id), ["r-aura"]);
  });

  test("a batched region read when the patch leaves carries its state at that time", () => {
    const sent = [];
    const timers = [];
    const b = new PatchBatcher({ flush: (scene, changes) => sent.push([scene, changes]), setTimeout: (fn) => timers.push(fn), clearTimeout: () => {} });
    let x = 100;
    b.upsertLater("s", "regions", "r1", () => ({ id: "r1", x }));
    b.upsertLater("s", "regions", "r2", () => null);
    x = 300;
    b.flushNow();
    assert.deepEqual(sent, [["s", { upsert: { regions: [{ id: "r1", x: 300 }] }, remove: { regions: ["r2"] } }]]);
  });

  test("a token's move re-sends the regions attached to it, as Foundry has moved them", async () => {
    const scene = F.scene();
    const aura = F.smokeRegion({ id: "r-aura", attachment: { token: "t-fus" } });
    scene.regions = F.collection([...scene.regions.contents, aura]);
    for (const coll of [scene.tokens, scene.regions]) for (const d of coll) d.parent = scene;
    const gm = { id: "gm1", name: "GM", isGM: true, active: true };
    const game = gameStub({ user: gm, scenes: [scene], socket: socketBus().client() });
    const timers = [];
    const s = new Sightline({ game, Hooks: hooksStub(), ui: {}, getCanvas: () => ({ scene }), setTimeout: (fn) => timers.push(fn) && timers.length, clearTimeout: () => {} });
    const patches = [];
    s.connection = /** @type {any} */ ({ ready: true, nextId: () => "q1", request: async (m) => patches.push(m) });
    s.synced.add(scene.id);
    const tok = scene.tokens.get("t-fus");
    tok.x = 600;
    s.onDocumentChange("Token", tok, "update");
    // Foundry moves the attached region after the token's update hook.
    aura.shapes = [{ type: "circle", x: 2100, y: 900, radius: 150, hole: false }];
    aura.polygonTree = F.polygonTree([{ points: [2250, 900, 2100, 1050, 1950, 900, 2100, 750] }]);
    s.batcher.flushNow();
    assert.equal(patches.length, 1);
    assert.deepEqual(patches[0].upsert.tokens.map((t) => [t.id, t.x]), [["t-fus", 600]]);
    assert.deepEqual(patches[0].upsert.regions.map((r) => [r.id, r.shapes[0].x]), [["r-aura", 2100]]);
    // Another token's move leaves the region alone.
    s.onDocumentChange("Token", scene.tokens.get("t-tgt"), "update");
    s.batcher.flushNow();
    assert.equal(patches[1].upsert.regions, undefined);
  });
});

describe("V14 flags", () => {
  const result = { rules: { ruleset: "gurps-4e" }, environment: { darkness: -3 }, useSceneDarkness: false };

  test("with V14's _replace the objects are replaced in one update, without any '-=' key", () => {
    const replace = (value) => ({ __replaced: value });
    const updates = sceneFlagUpdates(result, { replace });
    assert.equal(updates.length, 1);
    assert.deepEqual(updates[0], {
      "flags.sightline-bridge.rules": { __replaced: { ruleset: "gurps-4e" } },
      "flags.sightline-bridge.environment": { __replaced: { darkness: -3 } },
      "flags.sightline-bridge.useSceneDarkness": false,
    });
    assert.equal(JSON.stringify(updates).includes("-="), false);
  });

  test("V13 (no _replace) keeps its own '-=' form: delete, then set", () => {
    const updates = sceneFlagUpdates(result);
    assert.deepEqual(Object.keys(updates[0]), ["flags.sightline-bridge.-=rules", "flags.sightline-bridge.-=environment"]);
    assert.deepEqual(updates[1], { "flags.sightline-bridge": { rules: { ruleset: "gurps-4e" }, environment: { darkness: -3 }, useSceneDarkness: false } });
  });
});
