/**
 * Foundry V14 Scene Levels on the wire (contract, "Levels"): the scene's Level documents, each token's
 * `level`, and the `levels` set of regions, walls and lights; a V13 scene sends none of them.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import * as S from "../scripts/serialize.js";
import { sceneSync } from "../scripts/protocol.js";
import * as F from "./helpers/fixtures.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";

const skip = schemaSkipReason();

/** Level documents as V14 stores them (`elevation.bottom/top`, null unbounded; LevelData's example). */
const LEVELS = [
  { id: "l-ground", _id: "l-ground", name: "Downstairs", elevation: { bottom: 0, top: 10 } },
  { id: "l-upper", _id: "l-upper", name: "Upstairs", elevation: { bottom: 10, top: null } },
];

/** A two-level V14 scene: prepared documents hold `levels` as a Set, as SceneLevelsSetField makes it. */
function twoLevelScene() {
  return F.scene({
    levels: F.collection(LEVELS),
    tokens: F.collection([F.token({ level: "l-ground" }), F.token({ id: "t-up", x: 400, elevation: 10, level: "l-upper" })]),
    walls: F.collection([F.wall({ levels: new Set(["l-upper"]) }), F.wall({ id: "w-all", levels: new Set() })]),
    regions: F.collection([F.smokeRegion({ levels: new Set(["l-upper", "l-ground"]) }), F.poorRegion()]),
    lights: F.collection([{ id: "l1", x: 50, y: 60, config: { dim: 6, bright: 3 }, hidden: false, flags: {}, levels: ["l-ground"] }]),
  });
}

describe("V14 Scene Levels", () => {
  test("the scene's levels, token level and the levels of walls, regions and lights are sent", () => {
    const out = S.serializeScene(twoLevelScene(), { ruleset: "infinity-n4" });
    assert.deepEqual(out.levels, [
      { id: "l-ground", name: "Downstairs", bottom: 0, top: 10 },
      { id: "l-upper", name: "Upstairs", bottom: 10, top: null },
    ]);
    assert.deepEqual(out.tokens.map((t) => t.level), ["l-ground", "l-upper"]);
    assert.deepEqual(out.walls.map((w) => w.levels), [["l-upper"], undefined]);
    assert.deepEqual(out.regions.map((r) => r.levels), [["l-ground", "l-upper"], undefined]);
    assert.deepEqual(out.lights.map((l) => l.levels), [["l-ground"]]);
  });

  test("a V13 scene (no levels anywhere) sends exactly what it sent before", () => {
    const out = S.serializeScene(F.scene(), { ruleset: "infinity-n4" });
    assert.equal("levels" in out, false);
    for (const kind of ["tokens", "walls", "regions", "lights"]) {
      for (const item of out[kind]) assert.equal("levels" in item || "level" in item, false, kind);
    }
  });

  test("levels sets read from a Set, an array or nothing; odd entries are dropped", () => {
    assert.deepEqual(S.levelIdsOf({ levels: new Set(["b", "a"]) }), ["a", "b"]);
    assert.deepEqual(S.levelIdsOf({ levels: ["a", "a", "", 3, null] }), ["a"]);
    assert.deepEqual(S.levelIdsOf({ levels: "a" }), []);
    assert.deepEqual(S.levelIdsOf({}), []);
    assert.deepEqual(S.serializeLevel({ _id: "l", name: "Roof", elevation: { bottom: -Infinity, top: Infinity } }), { id: "l", name: "Roof", bottom: null, top: null });
  });

  test("the two-level scene.sync conforms to the bridge schema", { skip }, () => {
    assertConforms(sceneSync("q1", S.serializeScene(twoLevelScene(), { ruleset: "infinity-n4" })));
  });
});

describe("the overlay on a V14 scene", () => {
  test("'all tokens' keeps to the floor the user views; V13 and an unviewed scene keep every token", () => {
    const scene = twoLevelScene();
    assert.deepEqual(S.tokenIdsOnViewedLevel(scene), ["t-fus", "t-up"], "no level viewed");
    scene.levels.contents[1].isView = true;
    assert.deepEqual(S.tokenIdsOnViewedLevel(scene), ["t-up"]);
    scene.tokens = F.collection([...scene.tokens.contents, F.token({ id: "t-nolevel" })]);
    assert.deepEqual(S.tokenIdsOnViewedLevel(scene), ["t-up", "t-nolevel"], "a token on no level is on every floor");
    assert.deepEqual(S.tokenIdsOnViewedLevel(F.scene()), ["t-fus", "t-tgt"]);
  });
});
