/**
 * A held scene's `updateScene`: what the bridge reads of the change goes, and nothing else — the
 * darkness slider of a GURPS scene that takes Foundry's darkness sends a patch of its `environment`,
 * a background or notes change sends nothing, the grid sends the scene whole. Foundry's `changed`
 * is the hook's differential data (fvtt-types `Hooks.UpdateDocument`: document, change, options, userId).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { documentChangeReads, sceneChangeKind } from "../scripts/serialize.js";
import { Sightline } from "../scripts/adapters/sightline.js";
import { gameStub, hooksStub, socketBus } from "./helpers/foundry-stubs.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";
import { gmClient, parentedScene, until } from "./helpers/gm-client.js";
import { assertConforms } from "./helpers/schema.js";
import * as F from "./helpers/fixtures.js";

const GURPS_DARK = { "sightline-bridge": { rules: { ruleset: "gurps-4e" }, useSceneDarkness: true } };

/** The GM's service on a scene, with a connection that records what is sent and answers it. */
async function heldScene(overrides = {}) {
  const scene = parentedScene(F.scene(overrides));
  const gm = { id: "gm1", name: "GM", isGM: true, active: true };
  const game = gameStub({ user: gm, users: [gm], scenes: [scene], socket: socketBus().client("gm1") });
  const s = new Sightline({ game, Hooks: hooksStub(), ui: {}, getCanvas: () => ({ scene }), setTimeout: () => 0, clearTimeout: () => {} });
  const sent = [];
  s.connection = /** @type {any} */ ({
    ready: true,
    nextId: () => `q${sent.length + 1}`,
    request: async (m) => {
      sent.push(m);
      return m.type === "scene.sync" ? { type: "scene.synced", id: m.id, scene: m.scene.id } : { type: "scene.patched", id: m.id, scene: m.scene };
    },
  });
  await s.syncScene(scene);
  sent.length = 0;
  return { s, scene, sent };
}

describe("what an updateScene's changed touches", () => {
  test("the background, notes, fog, the grid's colour and the dimensions touch nothing the bridge reads", () => {
    for (const changed of [
      { _id: "s", background: { src: "night.webp" } },
      { _id: "s", notes: "<p>Bring torches</p>" },
      { _id: "s", fog: { exploration: false }, grid: { color: "#ff0000", alpha: 0.5 } },
      { _id: "s", width: 5000, height: 3000, padding: 0.1 },
      { _id: "s", environment: { globalLight: { enabled: true } } },
      { _id: "s", flags: { "other-module": { x: 1 } } },
    ]) {
      assert.equal(sceneChangeKind(changed), null, JSON.stringify(changed));
    }
  });

  test("the name, the module's flags and Foundry's darkness are the scene's own fields; the grid's size is every token's", () => {
    for (const changed of [
      { _id: "s", name: "Docks at night" },
      { _id: "s", environment: { darknessLevel: 0.5 } },
      { _id: "s", darkness: 0.5 },
      { _id: "s", flags: { "sightline-bridge": { environment: { light: 2 } } } },
      { _id: "s", flags: { "sightline-bridge": { "-=rules": null } } },
      { _id: "s", "flags.sightline-bridge.rules": { ruleset: "traveller" } },
    ]) {
      assert.equal(sceneChangeKind(changed), "fields", JSON.stringify(changed));
    }
    for (const changed of [{ _id: "s", grid: { size: 50 } }, { _id: "s", grid: { type: 2 } }, { _id: "s", "grid.distance": 5 }, { _id: "s", walls: [] }, { _id: "s", levels: [] }]) {
      assert.equal(sceneChangeKind(changed), "sync", JSON.stringify(changed));
    }
  });
});

describe("a held scene updated", () => {
  test("the darkness slider of a GURPS scene that takes Foundry's darkness sends only its environment, as a patch", async () => {
    const { s, scene, sent } = await heldScene({ flags: GURPS_DARK, environment: { darknessLevel: 0 } });
    scene.environment = { darknessLevel: 0.5 };
    s.onSceneChange(scene, { _id: scene.id, environment: { darknessLevel: 0.5 } });
    assert.deepEqual(sent, [{ type: "scene.patch", id: "q1", scene: "s-docks", environment: { darkness: -5 } }]);
    assertConforms(sent[0]);
    // The same darkness again (another field of the environment moved): nothing more.
    s.onSceneChange(scene, { _id: scene.id, environment: { darknessLevel: 0.5 } });
    assert.equal(sent.length, 1);
  });

  test("a change the bridge judges by makes the cached previews stale; a rename or a background does not", async () => {
    const { s, scene } = await heldScene({ flags: GURPS_DARK, environment: { darknessLevel: 0 } });
    const cached = () => s.rulings.set("t-fus->t-tgt", { modifier: -3 });
    cached();
    scene.background = { src: "night.webp" };
    s.onSceneChange(scene, { _id: scene.id, background: { src: "night.webp" } });
    scene.name = "Docks at night";
    s.onSceneChange(scene, { _id: scene.id, name: "Docks at night" });
    assert.equal(s.rulings.size, 1);
    scene.environment = { darknessLevel: 1 };
    s.onSceneChange(scene, { _id: scene.id, environment: { darknessLevel: 1 } });
    assert.equal(s.rulings.size, 0, "total darkness now: the −3 is no longer true");
    cached();
    s.onSceneChange(scene, { _id: scene.id, grid: { size: 50 } });
    assert.equal(s.rulings.size, 0);
  });

  test("the darkness of a scene whose ruleset does not read it, its background and its notes send nothing", async () => {
    const { s, scene, sent } = await heldScene({ environment: { darknessLevel: 0 } });
    scene.environment = { darknessLevel: 0.8 };
    s.onSceneChange(scene, { _id: scene.id, environment: { darknessLevel: 0.8 } });
    scene.background = { src: "night.webp" };
    s.onSceneChange(scene, { _id: scene.id, background: { src: "night.webp" } });
    scene.notes = "<p>Bring torches</p>";
    s.onSceneChange(scene, { _id: scene.id, notes: "<p>Bring torches</p>" });
    assert.deepEqual(sent, []);
  });

  test("a rename sends the name alone (the log names the scene), never the tokens, regions and walls", async () => {
    const { s, scene, sent } = await heldScene();
    scene.name = "Docks at night";
    s.onSceneChange(scene, { _id: scene.id, name: "Docks at night" });
    assert.deepEqual(sent, [{ type: "scene.patch", id: "q1", scene: "s-docks", name: "Docks at night" }]);
    assertConforms(sent[0]);
  });

  test("an edition changed in the scene's rules is a patch of rules; a ruleset changed re-sends the scene whole", async () => {
    const { s, scene, sent } = await heldScene();
    scene.flags = { "sightline-bridge": { rules: { edition: "1.2" } } };
    s.onSceneChange(scene, { _id: scene.id, flags: { "sightline-bridge": { rules: { edition: "1.2" } } } });
    assert.deepEqual(sent.map((m) => [m.type, m.rules]), [["scene.patch", { ruleset: "infinity-n4", edition: "1.2", locale: "en" }]]);
    // Another ruleset reads other zone parameters and light radii: every region and light changes.
    scene.flags = { "sightline-bridge": { rules: { ruleset: "traveller" } } };
    s.onSceneChange(scene, { _id: scene.id, flags: { "sightline-bridge": { rules: { ruleset: "traveller" } } } });
    await new Promise((r) => setImmediate(r));
    assert.equal(sent[1].type, "scene.sync");
    assert.equal(sent[1].scene.rules.ruleset, "traveller");
  });

  test("a grid resized re-sends the scene whole (a token's footprint is read from the grid); a level's hook, without changed, too", async () => {
    const { s, scene, sent } = await heldScene();
    scene.grid = { ...scene.grid, size: 50 };
    s.onSceneChange(scene, { _id: scene.id, grid: { size: 50 } });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent.map((m) => m.type), ["scene.sync"]);
    assert.equal(sent[0].scene.grid.size, 50);
    s.onSceneChange(scene);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent.map((m) => m.type), ["scene.sync", "scene.sync"]);
  });
});

describe("the darkness slider against the real bridge", { skip: bridgeSkipReason(), timeout: 90_000 }, () => {
  test("the patch of the environment is taken, and the next ruling reads the new darkness", async () => {
    const closers = [];
    try {
      const bridge = await startRealBridge("s3cret");
      closers.push(() => bridge.close());
      const scene = parentedScene(F.scene({ flags: GURPS_DARK, environment: { darknessLevel: 0 }, lights: F.collection([]) }));
      const { s } = gmClient(bridge.url, { closers, scene, system: "generic" });
      s.refreshHolder();
      await until(() => s.synced.has(scene.id), "the scene synced", 20_000);
      const [fus, tgt] = scene.tokens.contents;
      const before = await s.adjudicate(fus, tgt, { log: false });
      const types = [];
      const request = s.connection.request.bind(s.connection);
      s.connection.request = (m) => (types.push(m.type), request(m));
      scene.environment = { darknessLevel: 0.5 };
      s.onSceneChange(scene, { _id: scene.id, environment: { darknessLevel: 0.5 } });
      const after = await s.adjudicate(fus, tgt, { log: false });
      assert.deepEqual(types, ["scene.patch", "adjudicate"]);
      assert.equal(after.modifier, (before.modifier ?? 0) - 5, `${JSON.stringify(before)} → ${JSON.stringify(after)}`);
    } finally {
      while (closers.length) await closers.pop()();
    }
  });
});

describe("what an update of a token, region, behaviour, wall or light touches of the rulings", () => {
  test("a token's bars, image, vision or another module's flag, a light's colour, a wall's sound touch no ruling; a move, a trait, a radius do", () => {
    const none = [
      ["Token", { _id: "t", bar1: { attribute: "hp" }, texture: { src: "a.webp" }, sight: { range: 30 }, hidden: true, flags: { "other-module": { x: 1 } } }],
      ["Token", { _id: "t", light: { color: "#ff0000", animation: { type: "torch" } } }],
      ["AmbientLight", { _id: "l", config: { color: "#ff8800", alpha: 0.5 }, walls: false }],
      ["Wall", { _id: "w", sound: 0, move: 0 }],
      ["Region", { _id: "r", color: "#00ff00", visibility: 2 }],
      ["RegionBehavior", { _id: "b", name: "Smoke" }],
      ["Token", { _id: "t", _stats: { modifiedTime: 1 } }],
    ];
    for (const [doc, changed] of none) assert.equal(documentChangeReads(doc, changed), null, `${doc} ${JSON.stringify(changed)}`);
    assert.equal(documentChangeReads("Token", { _id: "t", name: "Lookout" }), "name");
    const read = [
      ["Token", { _id: "t", x: 300 }],
      ["Token", { _id: "t", elevation: 10, name: "Lookout" }],
      ["Token", { "flags.sightline-bridge.traits": ["thermal"] }],
      ["Token", { light: { bright: 2 } }],
      ["AmbientLight", { _id: "l", config: { dim: 6 } }],
      ["AmbientLight", { _id: "l", hidden: true }],
      ["Wall", { _id: "w", ds: 1 }],
      ["Region", { _id: "r", shapes: [] }],
      ["RegionBehavior", { _id: "b", disabled: true }],
      ["Token", { _id: "t", someFieldOfALaterFoundry: 1 }],
    ];
    for (const [doc, changed] of read) assert.equal(documentChangeReads(doc, changed), "ruling", `${doc} ${JSON.stringify(changed)}`);
  });
});
