/**
 * Checks inside a real Foundry, as Quench test batches (https://github.com/Ethaks/FVTT-Quench).
 *
 * Registered only when Quench is active: main.js calls `registerQuenchBatches` from Quench's
 * `quenchReady` hook, which never fires without it. Each batch builds its own scene and deletes it
 * afterwards. Batches that need a system (GURPS Game Aid, twodsix), Foundry V14 or a connected bridge
 * skip themselves, saying why, where those are missing. The Playwright suite (test/foundry-real.test.js)
 * runs them all in the `felddy/foundryvtt` container; docs/foundry.md says how to run them by hand.
 */

import { MODULE_ID, ZONE_BEHAVIOR_TYPE } from "./const.js";
import { serializeRegion, serializeScene, serializeToken, resolvedPolygons } from "./serialize.js";
import { difficultiesAsTargets, difficultiesInUse, twodsixDifficulty } from "./systems/twodsix.js";
import { postRulingCard } from "./adapters/chat.js";

/** Every batch key starts with the module id, as Quench requires. */
export const BATCHES = Object.freeze({
  region: `${MODULE_ID}.region-with-hole`,
  hex: `${MODULE_ID}.hex-centres`,
  patch: `${MODULE_ID}.token-move-patch`,
  gurps: `${MODULE_ID}.gga-bucket`,
  twodsix: `${MODULE_ID}.twodsix-throw-dialog`,
  levels: `${MODULE_ID}.v14-levels`,
  gm: `${MODULE_ID}.gm-controls`,
  ignored: `${MODULE_ID}.ignored-zone-sheet`,
});

const RULES = { [MODULE_ID]: { rules: { ruleset: "infinity-n4", edition: "current", locale: "en" } } };

/**
 * @param {any} quench the Quench instance (`quenchReady`'s argument)
 * @param {{game: any, Scene: any, Actor: any, Hooks: any, CONST: any, CONFIG: any, getCanvas: () => any, sightline: any,
 *          ChatMessage?: any, document?: Document}} env
 */
export function registerQuenchBatches(quench, env) {
  const { game, Hooks, CONST } = env;
  const api = () => game.modules.get(MODULE_ID)?.api;
  const connected = () => Boolean(env.sightline?.connection?.ready);
  /** A scene made for one batch, deleted by `after`. */
  const scenes = [];
  const makeScene = async (data) => {
    const scene = await env.Scene.create({ name: `Sightline check ${Date.now()}`, flags: RULES, ...data });
    scenes.push(scene);
    return scene;
  };
  const cleanUp = async () => {
    for (const scene of scenes.splice(0)) await scene?.delete?.();
  };
  const tokenData = (name, x, y, extra = {}) => ({ name, x, y, width: 1, height: 1, elevation: 0, actorLink: false, ...extra });
  const waitFor = async (test, ms = 3000) => {
    const end = Date.now() + ms;
    while (!test()) {
      if (Date.now() > end) return false;
      await new Promise((r) => setTimeout(r, 25));
    }
    return true;
  };

  quench.registerBatch(
    BATCHES.region,
    ({ describe, it, assert, after }) => {
      describe("a region with a hole and the visibility-zone behaviour", function () {
        after(cleanUp);
        it("is sent as Foundry resolves it: a solid ring, a hole ring and our zone", async function () {
          const scene = await makeScene({ width: 1000, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          const [region] = await scene.createEmbeddedDocuments("Region", [
            {
              name: "Smoke ring",
              shapes: [
                { type: "rectangle", x: 100, y: 100, width: 600, height: 600, rotation: 0, hole: false },
                { type: "circle", x: 400, y: 400, radius: 150, hole: true },
              ],
              behaviors: [{ type: ZONE_BEHAVIOR_TYPE, system: { zoneType: "poor" } }],
            },
          ]);
          const out = serializeRegion(region, { ruleset: "infinity-n4" });
          assert.deepEqual(out.zone, { type: "poor" });
          const rings = resolvedPolygons(region);
          assert.equal(rings.filter((r) => r.hole).length, 1, "one hole ring");
          assert.equal(rings.filter((r) => !r.hole).length, 1, "one solid ring");
          if (!connected()) return this.skip(); // the ruling part needs `sightline serve`
          const [a, b, c] = await scene.createEmbeddedDocuments("Token", [
            tokenData("In the hole", 350, 350),
            tokenData("Also in the hole", 400, 350),
            tokenData("Outside", 850, 350),
          ]);
          await env.sightline.ensureSynced(scene.id);
          const inside = await api().adjudicate(a, b, { action: "bs-attack", log: false });
          assert.deepEqual(inside.crossings, [], "a line within the hole crosses nothing");
          const out2 = await api().adjudicate(a, c, { action: "bs-attack", log: false });
          assert.deepEqual(out2.crossings.map((x) => x.kind), ["through"]);
        });
      });
    },
    { displayName: "Sightline: region with a hole" },
  );

  quench.registerBatch(
    BATCHES.ignored,
    ({ describe, it, assert, after }) => {
      describe("a zone the bridge does not use", function () {
        after(cleanUp);
        it("shows the bridge's reason at the top of the region's sheet (renderRegionConfig)", async function () {
          if (!game.user.isGM) return this.skip();
          const service = env.sightline;
          const scene = await makeScene({ width: 1000, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          const [region] = await scene.createEmbeddedDocuments("Region", [
            {
              name: "Fog",
              shapes: [{ type: "rectangle", x: 100, y: 100, width: 200, height: 200, rotation: 0, hole: false }],
              behaviors: [{ type: ZONE_BEHAVIOR_TYPE, system: { zoneType: "darkness", penalty: -3 } }],
            },
          ]);
          const reason = "Fog: Darkness is a zone type of GURPS 4e, not of Infinity N4; it is not used in rulings.";
          const real = service.connection;
          const holder = service.isHolder;
          // A bridge's answer listing the region (no bridge needed); the service, the hook and the sheet are real.
          service.connection = {
            ready: true,
            nextId: () => "quench",
            request: async (m) => ({ type: "scene.synced", id: m.id, scene: scene.id, regions: 1, tokens: 0, walls: 0, ignored: [{ region: region.id, cause: "foreign-zone", reason }] }),
          };
          service.isHolder = () => true;
          const sheet = region.sheet;
          try {
            await service.syncScene(scene, { rewatch: false });
            await sheet.render({ force: true });
            const shown = () => sheet.element?.querySelector?.(".sightline-ignored");
            assert.isTrue(await waitFor(() => Boolean(shown())), "the notice is on the sheet");
            assert.include(shown().textContent, reason);
          } finally {
            await sheet?.close?.();
            service.connection = real;
            service.isHolder = holder;
            service.synced.delete(scene.id);
          }
        });
      });
    },
    { displayName: "Sightline: ignored zone on its sheet" },
  );

  quench.registerBatch(
    BATCHES.hex,
    ({ describe, it, assert, after }) => {
      describe("token centres and footprints on hex grids", function () {
        after(cleanUp);
        const types = ["HEXODDR", "HEXEVENR", "HEXODDQ", "HEXEVENQ"];
        for (const type of types) {
          it(`on ${type} the bridge gets getCenterPoint() and getSize()`, async function () {
            const scene = await makeScene({ width: 2000, height: 2000, grid: { size: 100, type: CONST.GRID_TYPES[type] } });
            const tokens = await scene.createEmbeddedDocuments("Token", [tokenData("One", 300, 300), tokenData("Two", 600, 600, { width: 2, height: 2 })]);
            for (const token of tokens) {
              const out = serializeToken(token, { ruleset: "infinity-n4" });
              const centre = token.getCenterPoint();
              const size = token.getSize();
              const px = Number(out.width) * scene.grid.size;
              const py = Number(out.height) * scene.grid.size;
              assert.closeTo(Number(out.x) + px / 2, centre.x, 1e-6);
              assert.closeTo(Number(out.y) + py / 2, centre.y, 1e-6);
              assert.closeTo(px, size.width, 1e-6);
              assert.closeTo(py, size.height, 1e-6);
            }
          });
        }
      });
    },
    { displayName: "Sightline: hex centres" },
  );

  quench.registerBatch(
    BATCHES.patch,
    ({ describe, it, assert, after }) => {
      describe("a token move", function () {
        after(cleanUp);
        it("becomes one scene.patch upserting the moved token", async function () {
          if (!game.user.isGM) return this.skip();
          const service = env.sightline;
          const scene = await makeScene({ width: 1000, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          const [token] = await scene.createEmbeddedDocuments("Token", [tokenData("Mover", 100, 100)]);
          const sent = [];
          const real = service.connection;
          const holder = service.isHolder;
          // Record instead of sending (no bridge needed); the hook, the serialiser and the batcher are real.
          service.connection = { ready: true, nextId: () => "quench", request: async (m) => sent.push(m) };
          service.isHolder = () => true;
          service.synced.add(scene.id);
          try {
            await token.update({ x: 500 });
            assert.isTrue(await waitFor(() => sent.some((m) => m.type === "scene.patch")), "a scene.patch left");
            const patch = sent.find((m) => m.type === "scene.patch");
            assert.equal(patch.scene, scene.id);
            assert.deepEqual(patch.upsert.tokens.map((t) => [t.id, t.x]), [[token.id, 500]]);
          } finally {
            service.connection = real;
            service.isHolder = holder;
            service.synced.delete(scene.id);
          }
        });
      });
    },
    { displayName: "Sightline: token move → patch" },
  );

  quench.registerBatch(
    BATCHES.gurps,
    ({ describe, it, assert, after }) => {
      describe("the GURPS Game Aid modifier bucket", function () {
        after(cleanUp);
        it("after previews for two targets and one dropped, holds nothing for the dropped one", async function () {
          if (game.system.id !== "gurps" || !connected()) return this.skip();
          const bucket = globalThis.GURPS?.ModifierBucket;
          const entries = () => (bucket?.modifierStack?.modifierList ?? []).filter((m) => String(m.desc).startsWith("Sightline"));
          const scene = await makeScene({ width: 2000, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          await scene.createEmbeddedDocuments("Region", [
            { name: "Dark", shapes: [{ type: "rectangle", x: 800, y: 0, width: 800, height: 1000, rotation: 0, hole: false }], behaviors: [{ type: ZONE_BEHAVIOR_TYPE, system: { zoneType: "darkness", penalty: -4 } }] },
          ]);
          await scene.update({ flags: { [MODULE_ID]: { rules: { ruleset: "gurps-4e", edition: "current", locale: "en" } } } });
          await scene.createEmbeddedDocuments("Token", [tokenData("Shooter", 100, 400), tokenData("Near", 1000, 300), tokenData("Far", 1200, 600)]);
          await scene.view();
          const canvas = env.getCanvas();
          const [shooter, near, far] = canvas.tokens.placeables;
          shooter.control({ releaseOthers: true });
          near.setTarget(true, { releaseOthers: true });
          far.setTarget(true, { releaseOthers: false });
          await waitFor(() => entries().length > 0, 5000);
          far.setTarget(false, { releaseOthers: false });
          await waitFor(() => !entries().some((m) => String(m.desc).includes("Far")), 5000);
          assert.isFalse(entries().some((m) => String(m.desc).includes("Far")), "the dropped target's modifier left the bucket");
          assert.isAtMost(entries().length, 1, "one Sightline entry, for the one target held");
        });
      });
    },
    { displayName: "Sightline: GGA bucket" },
  );

  quench.registerBatch(
    BATCHES.twodsix,
    ({ describe, it, assert, after }) => {
      describe("twodsix's throw dialog", function () {
        after(cleanUp);
        it("opens an observation skill's throw with the ruling's difficulty (from the list in use) and its asset", async function () {
          if (game.system.id !== "twodsix") return this.skip();
          const service = env.sightline;
          const scene = await makeScene({ width: 1000, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          const actor = await env.Actor.create({ name: "Sightline observer", type: "traveller" });
          try {
            await scene.createEmbeddedDocuments("Token", [tokenData("Observer", 100, 100, { actorId: actor.id }), tokenData("Target", 600, 100, { actorId: actor.id })]);
            await scene.view();
            const [observer, target] = env.getCanvas().tokens.placeables;
            observer.control({ releaseOthers: true });
            target.setTarget(true, { releaseOthers: true });
            const ruling = { ruleset: "traveller", actor: observer.document.id, target: target.document.id, allowed: true, modifier: -2, difficulty: "difficult", asset: 1 };
            service.rulings.set(`${ruling.actor}->${ruling.target}`, ruling);
            // A skill of the world's Observation skills (the default list names Recon): its item's skillRoll opens the dialog.
            const [recon] = await actor.createEmbeddedDocuments("Item", [{ name: "Recon", type: "skills" }]);
            const opened = new Promise((resolve) => Hooks.once("renderDialogV2", (app, element) => resolve({ app, element })));
            const roll = /** @type {any} */ (recon).skillRoll(true, undefined, false);
            const { app, element } = await opened;
            const select = element.querySelector('.roll-settings select[name="difficulty"]');
            const other = element.querySelector('.roll-settings input[name="rollModifiers.other"]');
            const twodsixSetting = (key) => game.settings.get("twodsix", key);
            const difficulties = difficultiesInUse(env.CONFIG, twodsixSetting);
            const want = twodsixDifficulty("difficult", difficulties, [...select.options].map((o) => o.value), difficultiesAsTargets(twodsixSetting));
            assert.equal(select.value, want.key);
            assert.equal(Number.parseInt(other.value, 10), 1);
            await app.close();
            await roll;
          } finally {
            await actor.delete();
          }
        });
      });
    },
    { displayName: "Sightline: twodsix throw dialog" },
  );

  quench.registerBatch(
    BATCHES.levels,
    ({ describe, it, assert, after }) => {
      describe("a two-level V14 scene", function () {
        after(cleanUp);
        it("sends its levels, and an upstairs wall leaves a ground-floor line alone", async function () {
          if ((game.release?.generation ?? 13) < 14) return this.skip();
          const scene = await makeScene({ width: 1200, height: 1000, grid: { size: 100, type: CONST.GRID_TYPES.SQUARE } });
          const [ground, upper] = await scene.createEmbeddedDocuments("Level", [
            { name: "Downstairs", elevation: { bottom: 0, top: 10 } },
            { name: "Upstairs", elevation: { bottom: 10, top: 20 } },
          ]);
          await scene.createEmbeddedDocuments("Wall", [{ c: [550, 0, 550, 1000], levels: [upper.id] }]);
          const [a, b, c, d] = await scene.createEmbeddedDocuments("Token", [
            tokenData("Ground A", 100, 400, { level: ground.id }),
            tokenData("Ground B", 900, 400, { level: ground.id }),
            tokenData("Upper C", 100, 400, { level: upper.id, elevation: 10 }),
            tokenData("Upper D", 900, 400, { level: upper.id, elevation: 10 }),
          ]);
          const out = /** @type {any} */ (serializeScene(scene, { ruleset: "infinity-n4" }));
          // (A V14 scene may hold a default Level of its own beside these two: only the test's are compared.)
          const made = new Set([ground.id, upper.id]);
          assert.deepEqual(out.levels.filter((l) => made.has(l.id)).map((l) => [l.id, l.bottom, l.top]), [[ground.id, 0, 10], [upper.id, 10, 20]]);
          assert.deepEqual(out.walls[0].levels, [upper.id]);
          assert.deepEqual(out.tokens.map((t) => t.level), [ground.id, ground.id, upper.id, upper.id]);
          if (!connected()) return this.skip(); // the ruling part needs `sightline serve`
          await env.sightline.ensureSynced(scene.id);
          assert.isTrue((await api().adjudicate(a, b, { action: "bs-attack", log: false })).allowed, "ground floor: the upstairs wall does not block");
          assert.isFalse((await api().adjudicate(c, d, { action: "bs-attack", log: false })).allowed, "upstairs: it blocks");
        });
      });
    },
    { displayName: "Sightline: V14 levels" },
  );

  quench.registerBatch(
    BATCHES.gm,
    ({ describe, it, assert }) => {
      describe("the GM's controls", function () {
        it("adds the session tool to the Token controls, for GMs", function () {
          if (!game.user.isGM) return this.skip();
          const controls = { tokens: { name: "tokens", tools: { select: { name: "select", order: 0 } } } };
          Hooks.callAll("getSceneControlButtons", controls);
          const tool = controls.tokens.tools[`${MODULE_ID}-session`];
          assert.isTrue(Boolean(tool?.button && tool.visible));
        });
        it("registers Open the log, whose window Foundry builds without arguments and links to the log in a new tab", async function () {
          const menu = game.settings.menus.get(`${MODULE_ID}.openLog`);
          assert.isTrue(Boolean(menu?.restricted));
          const app = new menu.type();
          await app.render({ force: true });
          const link = app.element?.querySelector?.("[data-sightline-log-link]");
          try {
            assert.equal(link?.getAttribute("target"), "_blank");
            assert.match(link?.getAttribute("href") ?? "", /^https?:\/\/.+\/log\/$/);
          } finally {
            await app.close();
          }
        });
        it("renders a logged ruling's card collapsed, with Override for the GM", async function () {
          if (!game.user.isGM || !env.ChatMessage || !env.document) return this.skip();
          const ruling = { scene: "none", actor: "a", target: "b", action: "bs-attack", allowed: true, modifier: -3, crossings: [{ region: "r", zone: "low", kind: "through" }], modifiers: [{ source: "zone", value: -3, applied: true, label: "Low Visibility Zone" }], notes: [], citations: ["x"], logged: true, record: "rec-check" };
          const message = await postRulingCard({ ChatMessage: env.ChatMessage, game, ruling, whisperGM: true });
          try {
            const selector = `[data-message-id="${message.id}"] .sightline-card`;
            assert.isTrue(await waitFor(() => Boolean(env.document.querySelector(selector))), "the card is in the chat log");
            const card = env.document.querySelector(selector);
            assert.isFalse(/** @type {HTMLDetailsElement} */ (card.querySelector("details.sightline-details")).open);
            assert.isNotNull(card.querySelector("[data-sightline-override]"));
          } finally {
            await message.delete();
          }
        });
      });
    },
    { displayName: "Sightline: GM controls" },
  );
}
