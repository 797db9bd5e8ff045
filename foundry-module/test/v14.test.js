/**
 * Foundry V14's region and flag changes: a hidden region is no zone, a region attached to a token
 * is re-sent (as Foundry has moved it) when the token changes, the scene flags are replaced
 * with V14's `_replace` operator instead of the deprecated `-=` keys, and region shapes as V14 stores
 * them (a rectangle turned about its anchored origin, grid-based shapes) reach the bridge as the area
 * Foundry draws, or not at all.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { serializeRegion, serializeScene, serializeShape, zoneOf, regionsAttachedTo } from "../scripts/serialize.js";
import { shapeToPolygon } from "../scripts/overlay-draw.js";
import { SIGHTLINE_BIN, bridgeSkipReason } from "./helpers/bridge.js";
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

describe("V14 region shapes, when Foundry has not resolved the region's polygons", () => {
  /** A shape's corners as the contract's rectangle gives them (rotated about its centre), rounded and sorted. */
  const corners = (shape) => {
    const flat = shapeToPolygon(shape).map((v) => Math.round(v) + 0);
    const out = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  };
  /** A zone region with only stored shapes (no `polygons`, no `polygonTree`). */
  const rawRegion = (shapes) => ({ ...F.smokeRegion({ id: "r-raw", name: "Fog bank", shapes, polygonTree: undefined }) });
  // fvtt-types 14 RectangleShapeData: x, y the origin, anchorX/anchorY (initial 0), rotation about the origin, gridBased.
  const v14Rect = (over = {}) => ({ type: "rectangle", x: 100, y: 100, width: 200, height: 100, anchorX: 0, anchorY: 0, rotation: 90, hole: false, gridBased: false, ...over });

  test("a V14 rectangle turned about its origin is sent as the same area in the contract's form (top-left, turned about the centre)", () => {
    // Anchor (0, 0): the top-left corner at (100, 100), the rectangle turned 90° clockwise about it.
    const sent = serializeShape(v14Rect());
    assert.deepEqual(sent, { type: "rectangle", x: -50, y: 150, width: 200, height: 100, rotation: 90, hole: false });
    assert.deepEqual(corners(sent), [[0, 100], [0, 300], [100, 100], [100, 300]]);
    // Anchor (0.5, 0.5): the origin is the centre.
    const centred = serializeShape(v14Rect({ x: 500, y: 500, anchorX: 0.5, anchorY: 0.5, rotation: 30 }));
    assert.deepEqual([centred.x, centred.y, centred.rotation], [400, 450, 30]);
    // Not turned, anchor (1, 1): the origin is the bottom-right corner.
    assert.deepEqual(serializeShape(v14Rect({ anchorX: 1, anchorY: 1, rotation: 0 })), { type: "rectangle", x: -100, y: 0, width: 200, height: 100, rotation: 0, hole: false });
    // V13's rectangle (no anchor) is the contract's already.
    assert.deepEqual(serializeShape({ type: "rectangle", x: 100, y: 100, width: 200, height: 100, rotation: 90, hole: false }), { type: "rectangle", x: 100, y: 100, width: 200, height: 100, rotation: 90, hole: false });
  });

  test("a grid-based shape is left to the resolved polygons; without them its region goes with no shape, not a part of its area", () => {
    const gridCircle = { type: "circle", x: 500, y: 500, radius: 200, hole: false, gridBased: true };
    assert.equal(serializeShape(gridCircle), null);
    assert.deepEqual(serializeShape({ ...gridCircle, gridBased: false }), { type: "circle", x: 500, y: 500, radius: 200, hole: false });
    const resolved = serializeRegion({ ...rawRegion([gridCircle, v14Rect()]), polygonTree: F.polygonTree([{ points: [300, 300, 700, 300, 700, 700, 300, 700] }]) });
    assert.deepEqual(resolved.shapes.map((x) => x.type), ["rectangle"]);
    assert.equal(resolved.polygons.length, 1);
    assert.deepEqual(serializeRegion(rawRegion([gridCircle, v14Rect()])).shapes, []);
    // A V14 shape type the contract does not name, likewise.
    assert.deepEqual(serializeRegion(rawRegion([{ type: "cone", x: 0, y: 0, radius: 300, angle: 60, rotation: 0, hole: false }, v14Rect()])).shapes, []);
    assert.equal(serializeRegion(rawRegion([v14Rect()])).shapes.length, 1);
  });
});

describe("V14 region shapes judged by the real bridge", { skip: bridgeSkipReason() }, () => {
  const replay = (messages) => {
    const run = spawnSync(SIGHTLINE_BIN, ["replay", "-"], { input: messages.map((m) => JSON.stringify(m)).join("\n") + "\n", encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  };
  /** A scene with the actor at (0, 200), the target at (900, 200) and one Poor Visibility region of these stored shapes. */
  const sceneWith = (id, shapes) => {
    const region = { ...F.poorRegion(), shapes, polygons: [], polygonTree: undefined };
    return serializeScene(
      F.scene({ id, regions: F.collection([region]), tokens: F.collection([F.token({ id: "t-a", x: 0, y: 200, flags: {} }), F.token({ id: "t-b", x: 900, y: 200, flags: {} })]), walls: F.collection([]), lights: F.collection([]) }),
      { ruleset: "infinity-n4" },
    );
  };

  test("a V14 rectangle turned 90° about its top-left corner covers the target where Foundry draws it", () => {
    // Stored as V14 does: origin (1000, 0), 400 × 100, turned 90° clockwise about the origin → x 900…1000, y 0…400.
    const scene = sceneWith("s-v14-rect", [{ type: "rectangle", x: 1000, y: 0, width: 400, height: 100, anchorX: 0, anchorY: 0, rotation: 90, hole: false, gridBased: false }]);
    const bare = sceneWith("s-bare", []);
    const [, ruling, , without] = replay([
      { type: "scene.sync", id: "q1", scene },
      { type: "adjudicate", id: "a1", scene: scene.id, actor: "t-a", target: "t-b", action: "bs-attack", log: false },
      { type: "scene.sync", id: "q2", scene: bare },
      { type: "adjudicate", id: "a2", scene: bare.id, actor: "t-a", target: "t-b", action: "bs-attack", log: false },
    ]);
    assert.deepEqual(ruling.crossings?.map((c) => [c.region, c.kind]), [["r-poor", "into"]], JSON.stringify(ruling));
    assert.notEqual(ruling.modifier, without.modifier, `${JSON.stringify(ruling)} vs ${JSON.stringify(without)}`);
  });

  test("a region whose grid-based shape Foundry has not resolved is listed as ignored (no area), never judged as part of its area", () => {
    const scene = sceneWith("s-v14-grid", [{ type: "circle", x: 950, y: 250, radius: 300, hole: false, gridBased: true }, { type: "rectangle", x: 0, y: 0, width: 50, height: 50, rotation: 0, hole: false }]);
    const [synced] = replay([{ type: "scene.sync", id: "q1", scene }]);
    assert.deepEqual(synced.ignored?.map((e) => [e.region, e.cause]), [["r-poor", "no-area"]], JSON.stringify(synced));
  });
});
