import { test, describe } from "node:test";
import assert from "node:assert/strict";
import * as S from "../scripts/serialize.js";
import { sceneSync, scenePatch } from "../scripts/protocol.js";
import * as F from "./helpers/fixtures.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";

const skip = schemaSkipReason();
const defaults = { ruleset: "infinity-n4", edition: "current", locale: "en" };

describe("serializeScene", () => {
  const scene = S.serializeScene(F.scene(), defaults);

  test("carries id, name, grid, rules and environment as the contract names them", () => {
    assert.equal(scene.id, "s-docks");
    assert.deepEqual(scene.grid, { size: 100, distance: 1, units: "in" });
    assert.deepEqual(scene.rules, { ruleset: "infinity-n4", edition: "current", locale: "en" });
    assert.deepEqual(scene.environment, {});
  });

  test("an unbounded region's Infinity elevations become null", () => {
    const smoke = scene.regions.find((r) => r.id === "r-smoke");
    assert.deepEqual(smoke.elevation, { bottom: null, top: null });
    assert.deepEqual(smoke.zone, { type: "zero" });
    assert.deepEqual(smoke.shapes, [{ type: "circle", x: 1500, y: 900, radius: 150, hole: false }]);
  });

  test("regions send stored shapes and the resolved polygon tree, holes included", () => {
    const poor = scene.regions.find((r) => r.id === "r-poor");
    assert.deepEqual(poor.elevation, { bottom: 0, top: 3 });
    assert.deepEqual(poor.shapes.map((s) => s.type), ["rectangle", "ellipse", "polygon"], "the V14 cone is left to polygons");
    assert.deepEqual(poor.shapes[1], { type: "ellipse", x: 700, y: 400, radiusX: 100, radiusY: 50, rotation: 15, hole: true });
    assert.deepEqual(poor.polygons.map((p) => p.hole), [false, true, false]);
    assert.deepEqual(poor.polygons[1].points, [600, 400, 700, 350, 800, 400, 700, 450]);
    assert.deepEqual(poor.zone, { type: "poor" }, "the non-zone behaviour before it is skipped");
  });

  test("a region without a zone behaviour has no zone", () => {
    const plain = scene.regions.find((r) => r.id === "r-plain");
    assert.equal("zone" in plain, false);
    assert.equal("polygons" in plain, false);
  });

  test("tokens carry traits from the module flag, ellipse shape when round, and nothing else invented", () => {
    const [fus, tgt] = scene.tokens;
    assert.deepEqual(fus, { id: "t-fus", name: "Fusilier", x: 200, y: 800, width: 1, height: 1, elevation: 0, traits: ["multispectral-visor-1"] });
    assert.equal(tgt.shape, "ellipse");
    assert.deepEqual(tgt.traits, []);
  });

  test("walls carry Foundry's own fields, the light restriction, and a sight threshold when set", () => {
    assert.deepEqual(scene.walls[0], { id: "w1", c: [1000, 0, 1000, 600], sight: 20, light: 20, door: 0, ds: 0, dir: 0 });
    assert.deepEqual(scene.walls[1].threshold, { sight: 30, attenuation: true });
    assert.equal(scene.walls[1].door, 1);
    assert.equal(scene.walls[1].light, 20);
  });

  test("a wall's light restriction and light threshold are sent apart from its sight (contract: walls' `light`)", () => {
    // Contract: walls carry "`light` (Foundry's light restriction, the same values as `sight`, with its own
    // `threshold.light` …)"; `sight` alone decides whether it blocks a sight line.
    const window = S.serializeWall(F.wall({ sight: 0, light: 20 }));
    assert.equal(window.sight, 0);
    assert.equal(window.light, 20);
    const lamp = S.serializeWall(F.wall({ sight: 20, light: 30, threshold: { light: 4, sight: null, sound: null, attenuation: false } }));
    assert.equal(lamp.light, 30);
    assert.deepEqual(lamp.threshold, { light: 4, attenuation: false });
    const clear = S.serializeWall(F.wall({ light: 0 }));
    assert.equal(clear.light, 0);
  });

  test("walls with light restrictions and light thresholds conform to the bridge schema", { skip }, () => {
    const walls = [
      S.serializeWall(F.wall({ sight: 0, light: 20 })),
      S.serializeWall(F.wall({ id: "w2", light: 40, threshold: { light: 4, sight: null, sound: null, attenuation: true } })),
    ];
    assertConforms(sceneSync("q1", { ...scene, walls }));
  });

  test("ambient lights become contract lights with the larger radius", () => {
    assert.deepEqual(scene.lights, [{ id: "l1", x: 50, y: 60, radius: 6, kind: "white" }]);
  });

  test("the scene flag overrides the world ruleset and supplies the environment", () => {
    const own = S.serializeScene(
      F.scene({ flags: { "sightline-bridge": { rules: { ruleset: "gurps-4e", lines: "best" }, environment: { darkness: -3 } } } }),
      { ...defaults, locale: "es" },
    );
    assert.deepEqual(own.rules, { ruleset: "gurps-4e", edition: "current", locale: "es", lines: "best" });
    assert.deepEqual(own.environment, { darkness: -3 });
  });

  test("the scene.sync message conforms to the bridge schema", { skip }, () => {
    assertConforms(sceneSync("q1", scene));
  });

  test("a scene.patch built from documents conforms to the bridge schema", { skip }, () => {
    assertConforms(scenePatch("q2", "s-docks", { upsert: { tokens: [S.serializeToken(F.token())], regions: [S.serializeRegion(F.poorRegion())], walls: [S.serializeWall(F.wall())] }, remove: { regions: ["r-smoke"] } }));
  });
});

describe("zones from behaviour data", () => {
  test("GURPS darkness keeps its penalty; total darkness drops it", () => {
    assert.deepEqual(S.zoneFromSystem({ zoneType: "darkness", penalty: -4, total: false }), { type: "darkness", penalty: -4 });
    assert.deepEqual(S.zoneFromSystem({ zoneType: "darkness", penalty: -4, total: true }), { type: "darkness", total: true });
  });

  test("Traveller smoke density and illumination source pass; blanks are left out", () => {
    assert.deepEqual(S.zoneFromSystem({ zoneType: "smoke", density: 2, by: "" }), { type: "smoke", density: 2 });
    assert.deepEqual(S.zoneFromSystem({ zoneType: "illuminated", by: "ir-spotlight" }), { type: "illuminated", by: "ir-spotlight" });
    assert.deepEqual(S.zoneFromSystem({ zoneType: "woods", penalty: -3 }), { type: "woods" }, "parameters of other zone types are not sent");
  });

  test("a zone type or ruleset named like an Object property (constructor, toString) is an unknown one, never a crash", () => {
    assert.deepEqual(S.zoneFromSystem({ zoneType: "constructor" }, "infinity-n4"), { type: "constructor" });
    assert.equal(S.zoneProblem({ zoneType: "constructor" }, "infinity-n4"), null);
    assert.deepEqual(S.zoneFromSystem({ zoneType: "low" }, "toString"), { type: "low" });
    assert.equal(S.zoneProblem({ zoneType: "smoke" }, "__proto__"), null);
    assert.equal(S.zoneProblem({ zoneType: "smoke" }, "traveller"), "smoke: density", "a real ruleset still names what is missing");
  });

  test("a disabled zone behaviour does not make a zone", () => {
    const region = F.smokeRegion();
    for (const b of region.behaviors) b.disabled = true;
    assert.equal(S.zoneOf(region), null);
  });

  test("polygons fall back to region.polygons with orientation as the hole flag", () => {
    const region = { ...F.plainRegion(), polygons: [F.polygon([0, 0, 10, 0, 10, 10]), F.polygon([2, 2, 3, 2, 3, 3], false)] };
    assert.deepEqual(S.resolvedPolygons(region), [{ points: [0, 0, 10, 0, 10, 10], hole: false }, { points: [2, 2, 3, 2, 3, 3], hole: true }]);
  });
});

describe("patchTargetOf", () => {
  test("a behaviour change is its region's change; unknown documents are ignored", () => {
    const region = F.smokeRegion();
    const behavior = region.behaviors.contents[0];
    assert.deepEqual(S.patchTargetOf("RegionBehavior", behavior), { kind: "regions", doc: region });
    assert.deepEqual(S.patchTargetOf("Wall", F.wall()).kind, "walls");
    assert.equal(S.patchTargetOf("Drawing", {}), null);
  });
});
