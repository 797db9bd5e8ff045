/**
 * Nothing ignored in silence: the bridge's `ignored` lists (scene.synced, scene.patched) kept per
 * scene, told to the GM in ONE warning when they bring news, and shown on the region's sheet.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { IgnoredRegistry, ignoredNotice, keyOf } from "../scripts/ignored.js";
import { Sightline } from "../scripts/adapters/sightline.js";
import { answeringSocketClass, fakeWebSocketClass } from "./helpers/fake-websocket.js";
import { gameStub, hooksStub, notificationsStub, socketBus } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";
import { chromiumSkipReason, launchBrowser } from "./helpers/browser.js";

const here = dirname(fileURLToPath(import.meta.url));
const settle = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

const FOG = { region: "r-fog", cause: "foreign-zone", reason: "Fog: Darkness is a zone type of GURPS 4e, not of Infinity N4; it is not used in rulings." };
const RADAR = { token: "t-a", cause: "foreign-traits", reason: "Ana: the trait Radar belongs to Traveller, not to Infinity N4; it is not used in rulings." };
const DOT = { wall: "w-dot", cause: "no-length", reason: "A wall with both ends at the same point has no length; it blocks nothing." };
const GHOST = { region: "r-ghost", cause: "not-held", reason: "Not in this scene: there was nothing to remove." };
const synced = (ignored) => ({ type: "scene.synced", id: "q", scene: "s-docks", regions: 1, tokens: 1, walls: 1, ...(ignored.length ? { ignored } : {}) });

describe("the registry of what the bridge does not use", () => {
  test("the bridge's answers conform to its exported schema (the fakes below are the real shape)", { skip: schemaSkipReason() }, () => {
    assertConforms(synced([FOG, RADAR, DOT]));
    assertConforms({ type: "scene.patched", id: "p", scene: "s-docks", ignored: [GHOST], used: [{ region: "r-fog" }] });
  });

  test("scene.synced replaces the scene's set; removals of ids never held are not kept", () => {
    const reg = new IgnoredRegistry();
    reg.synced("s-docks", synced([FOG, RADAR]));
    assert.deepEqual(reg.region("s-docks", "r-fog"), FOG);
    reg.synced("s-docks", { ...synced([DOT]), ignored: [DOT, GHOST] });
    assert.deepEqual(reg.entries("s-docks").map(keyOf), ["wall:w-dot"]);
    assert.equal(reg.region("s-docks", "r-fog"), null);
  });

  test("scene.patched adds what it newly ignores and drops what it says is used and what the patch removed", () => {
    const reg = new IgnoredRegistry();
    reg.synced("s-docks", synced([FOG, RADAR]));
    reg.patched("s-docks", { type: "scene.patched", id: "p", scene: "s-docks", ignored: [DOT, GHOST], used: [{ region: "r-fog" }] }, { tokens: ["t-a"] });
    assert.deepEqual(reg.entries("s-docks").map(keyOf), ["wall:w-dot"]);
  });

  test("the GM is told once per new set: the same set again is not told, a new thing is", () => {
    const reg = new IgnoredRegistry();
    reg.synced("s-docks", synced([]));
    assert.equal(reg.toTell("s-docks"), null, "nothing ignored: nothing to tell");
    reg.synced("s-docks", synced([FOG, RADAR]));
    assert.deepEqual(reg.toTell("s-docks"), [FOG, RADAR]);
    reg.synced("s-docks", synced([RADAR, FOG]));
    assert.equal(reg.toTell("s-docks"), null, "the same set, synced again");
    reg.synced("s-docks", synced([FOG]));
    assert.equal(reg.toTell("s-docks"), null, "a smaller set brings no news");
    reg.synced("s-docks", synced([FOG, DOT]));
    assert.deepEqual(reg.toTell("s-docks"), [FOG, DOT]);
  });

  test("the notice counts the things and gives the first reasons, the rest counted", () => {
    const format = (key, data) => `${key.split(".").pop()}${JSON.stringify(data ?? {})}`;
    assert.equal(ignoredNotice([FOG], { scene: "Docks", format }), `One{"scene":"Docks"} ${FOG.reason}`);
    const four = [FOG, RADAR, DOT, { ...DOT, wall: "w-2" }];
    assert.equal(ignoredNotice(four, { scene: "Docks", format }), `Many{"scene":"Docks","count":4} ${FOG.reason} ${RADAR.reason} ${DOT.reason} More{"count":1}`);
  });

  test("every notice string exists in English and Spanish", () => {
    for (const lang of ["en", "es"]) {
      const strings = JSON.parse(readFileSync(resolve(here, `../lang/${lang}.json`), "utf8")).SIGHTLINE.Ignored;
      for (const key of ["One", "Many", "More", "ThisScene", "RegionTitle"]) assert.ok(strings?.[key], `${lang}: SIGHTLINE.Ignored.${key}`);
      assert.match(strings.Many, /\{count\}/);
      assert.match(strings.Many, /\{scene\}/);
    }
  });
});

/** A bridge that answers scene.sync with `ignored` (what `ignoredFor(scene)` says) and patches with `patched`. */
function ignoringBridge(FakeWebSocket, { ignoredFor, patched = () => ({}) }) {
  return answeringSocketClass(FakeWebSocket, (m, reply) => {
    if (m.type === "scene.sync") reply({ ...synced(ignoredFor(m.scene)), id: m.id, scene: m.scene.id });
    else if (m.type === "scene.patch") reply({ type: "scene.patched", id: m.id, scene: m.scene, ...patched(m) });
    else if (m.type === "watch") reply({ type: "error", id: m.id, code: "invalid-message", message: "type: unknown" });
  });
}

function service(user, WebSocket) {
  const scene = F.scene();
  for (const coll of [scene.tokens, scene.regions, scene.walls, scene.lights]) for (const d of coll) d.parent = scene;
  scene.active = true;
  const { log, notifications } = notificationsStub();
  const game = gameStub({ user, users: [user], scenes: [scene], socket: socketBus().client(user.id) });
  const s = new Sightline({ game, Hooks: hooksStub(), ui: { notifications }, getCanvas: () => ({ scene, tokens: { controlled: [] } }), WebSocket, batchDelayMs: 10 });
  return { s, log, scene };
}

describe("the service tells the GM once and keeps what each region's sheet shows", () => {
  test("one warning per sync that brings news; the same set on a resync is not repeated", async () => {
    const ws = fakeWebSocketClass();
    let ignored = [FOG, RADAR];
    const bridge = ignoringBridge(ws.FakeWebSocket, { ignoredFor: () => ignored });
    const gm = service({ id: "gm1", name: "GM", isGM: true, active: true }, bridge.Socket);
    let changes = 0;
    gm.s.onIgnoredChanged = () => (changes += 1);
    gm.s.refreshHolder();
    await settle();
    assert.equal(changes, 1, "open region sheets are told after the answer");
    const warnings = () => gm.log.filter(([level]) => level === "warn").map(([, text]) => text);
    assert.deepEqual(warnings(), [`SIGHTLINE.Ignored.Many {"scene":"Docks","count":2} ${FOG.reason} ${RADAR.reason}`]);
    assert.deepEqual(gm.s.ignored.region("s-docks", "r-fog"), FOG);
    await gm.s.resyncAll({ reconnected: true });
    await gm.s.syncScene(gm.scene);
    assert.equal(warnings().length, 1, "the same set, synced twice more, is told once");
    ignored = [];
    await gm.s.syncScene(gm.scene);
    assert.equal(gm.s.ignored.region("s-docks", "r-fog"), null, "fixed: the sheet's notice goes");
    assert.equal(warnings().length, 1);
  });

  test("a patch that newly makes something ignored warns once; its not-held removals never do", async () => {
    const ws = fakeWebSocketClass();
    const bridge = ignoringBridge(ws.FakeWebSocket, { ignoredFor: () => [], patched: (m) => (m.upsert ? { ignored: [FOG] } : { ignored: [GHOST] }) });
    const gm = service({ id: "gm1", name: "GM", isGM: true, active: true }, bridge.Socket);
    gm.s.refreshHolder();
    await settle();
    gm.s._sendPatch("s-docks", { upsert: {}, remove: { regions: ["r-ghost"] } });
    await settle();
    const warnings = () => gm.log.filter(([level]) => level === "warn");
    assert.deepEqual(warnings(), [], "a removal of an id never held is no news for the GM");
    gm.s._sendPatch("s-docks", { upsert: { regions: [{ id: "r-fog" }] }, remove: {} });
    await settle();
    assert.deepEqual(warnings(), [["warn", `SIGHTLINE.Ignored.One {"scene":"Docks"} ${FOG.reason}`]]);
  });

  test("a client that is not a GM is never warned", () => {
    const ws = fakeWebSocketClass();
    const player = service({ id: "p1", name: "Player", isGM: false, active: true }, ws.FakeWebSocket);
    player.s.ignored.synced("s-docks", synced([FOG]));
    player.s.tellIgnored("s-docks");
    assert.deepEqual(player.log.filter(([level]) => level === "warn"), []);
  });
});

describe("the region's sheet shows the bridge's reason (real DOM, headless Chromium)", { skip: chromiumSkipReason() }, () => {
  let browser;
  let page;
  before(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    // A RegionConfig as ApplicationV2 renders it: the app element, its .window-content, the form parts.
    await page.setContent(`<!doctype html><html><body><div id="app" class="application sheet region-config"><header class="window-header">Region</header><section class="window-content"><nav class="tabs"></nav><div class="tab identity">Name</div></section></div></body></html>`);
    const source = readFileSync(resolve(here, "../scripts/adapters/region-notice.js"), "utf8").replace(/^export /gm, "");
    await page.addScriptTag({ content: `${source}\nwindow.showIgnoredNotice = showIgnoredNotice;` });
  });
  after(async () => browser?.close());

  test("the notice comes first in the content with the title and the reason; re-renders never duplicate it; a used region has none", async () => {
    const state = await page.evaluate((entry) => {
      const el = document.getElementById("app");
      const show = /** @type {any} */ (window).showIgnoredNotice;
      show(el, entry, { title: "Sightline does not use this zone:" });
      show(el, entry, { title: "Sightline does not use this zone:" });
      const notices = el.querySelectorAll(".sightline-ignored");
      const content = el.querySelector(".window-content");
      const first = content.firstElementChild;
      const result = { count: notices.length, first: first?.className, text: first?.textContent, role: first?.getAttribute("role") };
      show(el, null, { title: "x" });
      return { ...result, after: el.querySelectorAll(".sightline-ignored").length };
    }, FOG);
    assert.deepEqual(state, { count: 1, first: "sightline-ignored", text: `Sightline does not use this zone: ${FOG.reason}`, role: "status", after: 0 });
  });
});
