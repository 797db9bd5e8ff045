/**
 * The GM's log controls: the session dialog and its scene control, the Override dialog on a
 * ruling's card, "Open the log" in the settings — with Foundry's DialogV2 and game mocked — and the
 * service's session.start / ruling.override / session.end against the real bridge
 * (`sightline serve --port 0`), read back through the bridge's own log API.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import {
  addSessionControl, defineLogMenu, logMenuHtml, logUrlOf, openSessionDialog, overrideFormHtml, overrideFromCard, overrideFromForm, registerLogMenu, wireOverrideButton,
} from "../scripts/adapters/gm-controls.js";
import { Sightline } from "../scripts/adapters/sightline.js";
import * as P from "../scripts/protocol.js";
import { OWNERSHIP, gameStub, hooksStub, notificationsStub, socketBus, withOwnership } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";

const localize = (k) => k;
const format = (k, data) => `${k} ${JSON.stringify(data)}`;

/** DialogV2's static helpers as far as the controls call them: they resolve to what a button's callback returns. */
function dialogStub(press) {
  const calls = [];
  return {
    calls,
    wait: async (config) => (calls.push(["wait", config]), press(config)),
    prompt: async (config) => (calls.push(["prompt", config]), press(config)),
  };
}
/** The form a DialogV2 button belongs to, as its callback reads it. */
const formButton = (elements) => ({ form: { elements } });

describe("the log's address", () => {
  test("is the bridge's HTTP side of its WebSocket URL, under the same path prefix", () => {
    assert.equal(logUrlOf("ws://localhost:8765/ws"), "http://localhost:8765/log/");
    assert.equal(logUrlOf("wss://table.example/sightline/ws"), "https://table.example/sightline/log/");
    assert.equal(logUrlOf(" wss://table.example:8443/ws/ "), "https://table.example:8443/log/");
    assert.equal(logUrlOf("http://localhost:8765/ws"), null);
    assert.equal(logUrlOf("not a url"), null);
  });

  test("the settings menu registers GM-only and opens a window with the link in a new tab", () => {
    const registered = [];
    class FakeDialogV2 {
      constructor(options) {
        this.options = options;
      }
    }
    const document = { createElement: () => ({ innerHTML: "" }) };
    const Menu = defineLogMenu({ DialogV2: FakeDialogV2, document: /** @type {any} */ (document), url: () => logUrlOf("ws://127.0.0.1:8765/ws"), localize });
    registerLogMenu({ settings: { registerMenu: (...args) => registered.push(args) } }, Menu);
    assert.equal(registered.length, 1);
    const [namespace, key, data] = registered[0];
    assert.deepEqual([namespace, key, data.restricted, data.type], ["sightline-bridge", "openLog", true, Menu]);
    const menu = new Menu(); // Foundry constructs it without arguments
    assert.match(menu.options.content.innerHTML, /<a href="http:\/\/127\.0\.0\.1:8765\/log\/" target="_blank" rel="noopener noreferrer"/);
    assert.equal(menu.options.buttons.length, 1);
    assert.match(logMenuHtml(null, localize), /SIGHTLINE\.LogMenu\.NoUrl/);
  });
});

describe("the session control and dialog", () => {
  test("a Token-controls button, shown to GMs only", () => {
    const controls = { tokens: { tools: { select: {} } } };
    let opened = 0;
    addSessionControl(controls, { isGM: false, onClick: () => (opened += 1) });
    const tool = controls.tokens.tools["sightline-bridge-session"];
    assert.deepEqual([tool.button, tool.visible, tool.order, tool.title], [true, false, 1, "SIGHTLINE.Session.Title"]);
    tool.onChange(new Event("click"), true);
    assert.equal(opened, 1);
  });

  test("Start sends the typed name and says it started; End says which session ended, or that none was open", async () => {
    const asked = [];
    const sightline = {
      startSession: async (name) => (asked.push(["start", name]), { id: "s1", name, started: "t" }),
      endSession: async () => (asked.push(["end"]), asked.length > 2 ? null : { id: "s1", name: "Docks", ended: "t" }),
    };
    const { log, notifications } = notificationsStub();
    const game = { i18n: { localize, format } };
    const start = dialogStub((config) => config.buttons.find((b) => b.action === "start").callback(null, formButton({ name: { value: "  Docks  " } })));
    assert.equal((await openSessionDialog({ DialogV2: start, game, ui: { notifications }, sightline })).action, "start");
    const end = dialogStub((config) => config.buttons.find((b) => b.action === "end").callback(null, formButton({})));
    await openSessionDialog({ DialogV2: end, game, ui: { notifications }, sightline });
    await openSessionDialog({ DialogV2: end, game, ui: { notifications }, sightline });
    assert.deepEqual(asked, [["start", "Docks"], ["end"], ["end"]]);
    assert.deepEqual(log, [
      ["info", 'SIGHTLINE.Session.Started {"name":"Docks"}'],
      ["info", 'SIGHTLINE.Session.Ended {"name":"Docks"}'],
      ["info", "SIGHTLINE.Session.NoneOpen"],
    ]);
    assert.equal(await openSessionDialog({ DialogV2: dialogStub(() => null), game, ui: { notifications }, sightline }), null, "closing the dialog does nothing");
  });
});

describe("the Override dialog", () => {
  const ruling = { scene: "s-docks", actor: "t-fus", target: "t-tgt", action: "bs-attack", allowed: true, modifier: -3, crossings: [], modifiers: [], notes: [], citations: [], record: "rec-1" };

  test("the form reads as an override; a reason is required and the modifier is a whole number", () => {
    assert.deepEqual(overrideFromForm({ allowed: true, modifier: "-6", reason: " smoke drifted " }), { allowed: true, modifier: -6, reason: "smoke drifted" });
    assert.deepEqual(overrideFromForm({ allowed: false, modifier: "-6", reason: "wall" }), { allowed: false, modifier: null, reason: "wall" });
    assert.deepEqual(overrideFromForm({ allowed: true, modifier: "-6", reason: "  " }), { error: "SIGHTLINE.Override.NeedReason" });
    assert.deepEqual(overrideFromForm({ allowed: true, modifier: "-2.5", reason: "x" }), { error: "SIGHTLINE.Override.NeedModifier" });
    assert.match(overrideFormHtml(ruling, localize), /name="modifier"[^>]*value="-3"/);
    assert.match(overrideFormHtml(ruling, localize), /<textarea[^>]*name="reason"[^>]*required/);
  });

  test("a GM's Override sends the record, the new ruling and the reason, then shows it on the card", async () => {
    const sent = [];
    const updates = [];
    const message = { flags: { "sightline-bridge": { ruling } }, update: async (u) => updates.push(u) };
    const game = { user: { isGM: true, name: "Gamemaster" }, i18n: { localize }, scenes: { get: () => null } };
    const DialogV2 = dialogStub((config) => config.ok.callback(null, formButton({ allowed: { checked: true }, modifier: { value: "-6" }, reason: { value: "the smoke drifted" } })));
    const sightline = { overrideRuling: async (record, o) => (sent.push([record, o]), { record: "rec-2", original: record }) };
    const override = await overrideFromCard({ DialogV2, game, ui: { notifications: notificationsStub().notifications }, message, sightline });
    assert.deepEqual(sent, [["rec-1", { allowed: true, modifier: -6, reason: "the smoke drifted" }]]);
    assert.equal(override.record, "rec-2");
    assert.equal(updates.length, 1);
    assert.match(updates[0].content, /SIGHTLINE\.Card\.Overridden \(Gamemaster\): <strong>\u22126<\/strong> — the smoke drifted/);
  });

  test("no reason: nothing is sent and the GM is told why; a player gets no dialog at all", async () => {
    const { log, notifications } = notificationsStub();
    const message = { flags: { "sightline-bridge": { ruling } }, update: async () => assert.fail("no update") };
    const sightline = { overrideRuling: async () => assert.fail("nothing sent") };
    const DialogV2 = dialogStub((config) => config.ok.callback(null, formButton({ allowed: { checked: true }, modifier: { value: "1" }, reason: { value: "" } })));
    assert.equal(await overrideFromCard({ DialogV2, game: { user: { isGM: true }, i18n: { localize } }, ui: { notifications }, message, sightline }), null);
    assert.deepEqual(log, [["warn", "SIGHTLINE.Override.NeedReason"]]);
    const none = dialogStub(() => assert.fail("no dialog for a player"));
    assert.equal(await overrideFromCard({ DialogV2: none, game: { user: { isGM: false }, i18n: { localize } }, ui: { notifications }, message, sightline }), null);
  });

  test("renderChatMessageHTML: the button is removed for players and wired for GMs", () => {
    const button = (removed) => {
      const listeners = {};
      return { removed, remove() { this.removed = true; }, addEventListener: (t, fn) => (listeners[t] = fn), click: () => listeners.click?.() };
    };
    const forPlayer = button(false);
    wireOverrideButton(/** @type {any} */ ({ querySelector: () => forPlayer }), { isGM: false, onOverride: () => assert.fail() });
    assert.equal(forPlayer.removed, true);
    const forGM = button(false);
    let pressed = 0;
    wireOverrideButton(/** @type {any} */ ({ querySelector: () => forGM }), { isGM: true, onOverride: () => (pressed += 1) });
    forGM.click();
    assert.deepEqual([forGM.removed, pressed], [false, 1]);
  });
});

describe("the holder's guard on relayed log operations", () => {
  const w = { gm: { id: "gm1", name: "GM", isGM: true, active: true }, gm2: { id: "gm2", name: "Co-GM", isGM: true, active: true }, player: { id: "p1", name: "Player", isGM: false, active: true } };
  const s = new Sightline({ game: gameStub({ user: w.gm, users: [w.gm, w.gm2, w.player], socket: socketBus().client("gm1") }), Hooks: hooksStub(), ui: {}, getCanvas: () => null });

  test("a player may not start, end or override; a co-GM's request is rebuilt from its known fields", () => {
    for (const type of ["session.start", "session.end", "ruling.override"]) {
      assert.throws(() => s.vetRelayed("p1", { type, name: "x", record: "r", allowed: true, modifier: 1, reason: "x" }), { code: "forbidden" }, type);
    }
    assert.deepEqual(s.vetRelayed("gm2", { type: "session.start", id: "x", name: "Docks", extra: 1 }), { type: "session.start", id: "", name: "Docks" });
    assert.deepEqual(s.vetRelayed("gm2", { type: "ruling.override", record: "r1", allowed: false, modifier: 4, reason: "wall", user: { gm: true } }), { type: "ruling.override", id: "", record: "r1", allowed: false, modifier: null, reason: "wall" });
    assert.throws(() => s.vetRelayed("gm2", { type: "ruling.override", record: 5, reason: "x" }), { code: "invalid-message" });
  });

  test("the builders conform to the bridge's schema", { skip: schemaSkipReason() }, () => {
    assertConforms(P.sessionStart("a1", "Docks"));
    assertConforms(P.sessionEnd("a2"));
    assertConforms(P.rulingOverride("a3", { record: "r1", allowed: true, modifier: -2, reason: "x" }));
    assertConforms(P.rulingOverride("a4", { record: "r1", allowed: false, modifier: -2, reason: "x" }));
  });
});

const waitFor = async (cond, what, ms = 15_000) => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("session and override against the real bridge", { skip: bridgeSkipReason(), timeout: 90_000 }, () => {
  let bridge;
  before(async () => (bridge = await startRealBridge("gm-secret")), { timeout: 60_000 });
  after(async () => bridge?.close());

  test("a named session opens, a logged ruling is overridden with its reason, the session ends — as the log shows", async () => {
    const scene = F.scene();
    for (const coll of [scene.tokens, scene.regions, scene.walls, scene.lights]) for (const d of coll) d.parent = scene;
    withOwnership(scene).active = true;
    for (const t of scene.tokens) withOwnership(t, { default: OWNERSHIP.NONE, p1: OWNERSHIP.OWNER });
    const gm = { id: "gm1", name: "GM", isGM: true, active: true };
    const player = { id: "p1", name: "Player", isGM: false, active: true };
    const bus = socketBus();
    const make = (user) => {
      const game = gameStub({ user, users: [gm, player], scenes: [scene], socket: bus.client(user.id), system: "generic", settings: { bridgeUrl: bridge.url, secret: "gm-secret" } });
      const canvas = { scene, tokens: { controlled: [] } };
      const s = new Sightline({ game, Hooks: hooksStub(), ui: { notifications: notificationsStub().notifications }, getCanvas: () => canvas, WebSocket, globals: {}, batchDelayMs: 20 });
      s.startRelay();
      return s;
    };
    const holder = make(gm);
    const pl = make(player);
    holder.refreshHolder();
    try {
      await waitFor(() => holder.connection?.ready && holder.synced.has("s-docks"), "the connection and the scene");
      const session = await holder.startSession("Docks, night 1");
      assert.equal(session.name, "Docks, night 1");
      const ruling = await holder.adjudicate("t-fus", "t-tgt", { scene: "s-docks", log: true });
      assert.equal(ruling.logged, true);
      const result = await holder.overrideRuling(ruling.record, { allowed: true, modifier: -1, reason: "the fog lifted" });
      assert.equal(result.original, ruling.record);
      assert.notEqual(result.record, ruling.record);
      await assert.rejects(pl.relay.request({ type: "session.end" }), { code: "forbidden" }, "a player cannot end the session through the GM");
      const ended = await holder.endSession();
      assert.equal(ended.id, session.id);
      assert.ok(ended.ended);
      assert.equal(await holder.endSession(), null, "nothing left open");

      const api = logUrlOf(bridge.url).replace(/\/log\/$/, "/api");
      const headers = { Authorization: "Bearer gm-secret" };
      const sessions = (await (await fetch(`${api}/worlds/w-ashes/sessions`, { headers })).json()).sessions;
      const logged = sessions.find((x) => x.id === session.id);
      assert.equal(logged.name, "Docks, night 1");
      assert.ok(logged.ended);
      const rulings = (await (await fetch(`${api}/worlds/w-ashes/sessions/${session.id}/rulings`, { headers })).json()).rulings;
      const override = rulings.find((r) => r.kind === "override");
      assert.deepEqual([override.overrides, override.modifier, override.reason, rulings.length], [ruling.record, -1, "the fog lifted", 2]);
    } finally {
      holder.connection?.close();
    }
  });
});
