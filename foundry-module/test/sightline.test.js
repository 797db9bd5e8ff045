import { test, describe, beforeEach, afterEach, mock } from "node:test";
import assert from "node:assert/strict";
import { Sightline, documentHookNames } from "../scripts/adapters/sightline.js";
import { WELCOME, answeringSocketClass, fakeWebSocketClass } from "./helpers/fake-websocket.js";
import { OWNERSHIP, gameStub, hooksStub, notificationsStub, socketBus, withOwnership } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";
import { gurpsRollContent, gurpsStub } from "./helpers/gurps-stub.js";

/** Foundry's targeting as the test's user does it: `game.user.targets` holds the token. */
function target(c, doc, on) {
  const set = new Set([...(c.game.user.targets ?? [])].filter((t) => (t.document?.id ?? t.id) !== doc.id));
  if (on) set.add({ id: doc.id, document: doc });
  c.game.user.targets = set;
}

const settle = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** A fake bridge: answers hello, sync, patch and adjudicate like the contract says (`ruling`: fields, or a function of the question). */
function autoBridge(FakeWebSocket, sockets, { ruling = { allowed: true, modifier: -6 }, watch = false } = {}) {
  const { Socket: AutoSocket, received } = answeringSocketClass(FakeWebSocket, (m, reply) => {
    if (m.type === "scene.sync") reply({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: m.scene.regions.length, tokens: m.scene.tokens.length, walls: m.scene.walls.length });
    else if (m.type === "scene.patch") reply({ type: "scene.patched", id: m.id, scene: m.scene });
    else if (m.type === "watch" && watch) {
      reply({ type: "watching", id: m.id, watch: m.id, scene: m.scene, action: m.action });
      reply({ type: "annotations", watch: m.id, scene: m.scene, version: 1, full: true, removed: [], changed: [{ actor: "t-fus", target: "t-tgt", allowed: false, modifier: null, crossings: [], modifiers: [], notes: [], citations: [] }] });
    } else if (m.type === "watch" || m.type === "unwatch") reply({ type: "error", id: m.id, code: "invalid-message", message: `type: unknown message type ${m.type}` });
    else if (m.type === "adjudicate") reply({ type: "adjudication", id: m.id, scene: m.scene, actor: m.actor, target: m.target, action: m.action, ruleset: "infinity-n4", edition: "current", crossings: [{ region: "r-poor", zone: "poor", kind: "into" }], modifiers: [], notes: [], citations: ["x.txt: y"], ...(typeof ruling === "function" ? ruling(m) : ruling) });
  });
  return { AutoSocket, received, sockets };
}

/** twodsix's rendered throw dialog (throw-dialog.hbs) of a skill throw: "Recon (1)" is its chosen skill. */
function throwDialog(skill) {
  const select = { value: "Average", options: ["Routine", "Simple", "Average"].map((value) => ({ value })) };
  const skills = { value: "Actor.a.Item.s", options: [{ value: "Actor.a.Item.s", text: skill }] };
  const bySelector = {
    '.roll-settings select[name="difficulty"]': select,
    '.roll-settings input[name="rollModifiers.other"]': { value: "0" },
    '.roll-settings select[name="rollModifiers.selectedSkill"]': skills,
    ".roll-settings": { prepend() {} },
  };
  return { element: { dataset: {}, ownerDocument: { createElement: () => ({}) }, querySelector: (sel) => bySelector[sel] ?? null }, select };
}

function world({ system = "gurps", settings = {}, gmActive = true } = {}) {
  const scene = F.scene();
  for (const coll of [scene.tokens, scene.regions, scene.walls, scene.lights]) for (const d of coll) d.parent = scene;
  // The active scene; the player owns the fusilier (the first token) and owns nothing else.
  withOwnership(scene).active = true;
  for (const [i, t] of scene.tokens.contents.entries()) withOwnership(t, i === 0 ? { default: OWNERSHIP.NONE, p1: OWNERSHIP.OWNER } : { default: OWNERSHIP.NONE });
  const gm = { id: "gm1", name: "GM", isGM: true, active: gmActive };
  const gm2 = { id: "gm2", name: "Co-GM", isGM: true, active: false };
  const player = { id: "p1", name: "Player", isGM: false, active: true };
  return { scene, gm, gm2, player, users: [gm, gm2, player], system, settings };
}

function client(w, user, { bus, WebSocket, globals = {}, ChatMessage, prerollPrompt } = {}) {
  const hooks = hooksStub();
  const { log, notifications } = notificationsStub();
  const game = gameStub({ user, users: w.users, settings: w.settings, scenes: [w.scene], socket: bus.client(user.id), system: w.system, messages: w.messages ?? [] });
  const canvas = { scene: w.scene, tokens: { controlled: [] } };
  const s = new Sightline({ game, Hooks: hooks, ui: { notifications }, ChatMessage, getCanvas: () => canvas, WebSocket, globals, prerollPrompt, batchDelayMs: 50 });
  return { s, game, hooks, log, canvas };
}

describe("the hooks the module listens to", () => {
  test("document hooks are create/update/delete only — never refreshToken", () => {
    const names = documentHookNames();
    assert.ok(names.includes("updateToken") && names.includes("deleteRegionBehavior") && names.includes("createWall"));
    assert.equal(names.some((n) => n.startsWith("refresh")), false);
  });
});

describe("Sightline service", () => {
  let ws;
  let bridge;
  let bus;
  beforeEach(() => {
    ws = fakeWebSocketClass();
    bridge = autoBridge(ws.FakeWebSocket, ws.sockets);
    bus = socketBus();
  });

  test("only the active GM connects; it says hello and syncs the viewed scene", async () => {
    const w = world();
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    const pl = client(w, w.player, { bus, WebSocket: bridge.AutoSocket });
    gm.s.refreshHolder();
    pl.s.refreshHolder();
    await settle();
    assert.equal(bridge.received.filter((m) => m.type === "hello").length, 1);
    const said = bridge.received.find((m) => m.type === "hello");
    assert.deepEqual([said.world, said.world_name], ["w-ashes", "Ashes of Kaldor"]); // game.world's id and title
    assert.equal(gm.s.connection.state, "ready");
    assert.equal(pl.s.connection, null);
    const sync = bridge.received.find((m) => m.type === "scene.sync");
    assert.equal(sync.scene.id, "s-docks");
    assert.ok(gm.s.synced.has("s-docks"));
    if (!schemaSkipReason()) for (const m of bridge.received) assertConforms(m);
  });

  test("every welcome reaches onWelcome, with the bridge's palette when it sends one", async () => {
    const w = world();
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    const seen = [];
    gm.s.onWelcome = (welcome) => seen.push(welcome);
    gm.s.refreshHolder();
    await settle();
    assert.equal(seen.length, 1);
    assert.equal(seen[0].type, "welcome");
  });

  test("another GM takes over when the active GM leaves", async () => {
    const w = world();
    const gm1 = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    const gm2 = client(w, w.gm2, { bus, WebSocket: bridge.AutoSocket });
    gm1.s.refreshHolder();
    await settle();
    w.gm.active = false;
    w.gm2.active = true;
    gm1.s.refreshHolder();
    gm2.s.refreshHolder();
    await settle();
    assert.equal(gm1.s.connection, null);
    assert.equal(gm2.s.connection.state, "ready");
    assert.equal(bridge.received.filter((m) => m.type === "hello").length, 2);
  });

  test("document changes become one debounced scene.patch; deletes win", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const w = world();
      const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
      gm.s.batcher._now = () => 0;
      gm.s.refreshHolder();
      await settle();
      const tok = w.scene.tokens.contents[0];
      for (const x of [300, 400, 500]) gm.s.onDocumentChange("Token", { ...tok, x }, "update");
      gm.s.onDocumentChange("Wall", w.scene.walls.contents[0], "update");
      gm.s.onDocumentChange("Wall", w.scene.walls.contents[0], "delete");
      const behavior = w.scene.regions.contents[0].behaviors.contents[0];
      gm.s.onDocumentChange("RegionBehavior", behavior, "delete");
      assert.equal(bridge.received.filter((m) => m.type === "scene.patch").length, 0);
      mock.timers.tick(50);
      await settle();
      const patches = bridge.received.filter((m) => m.type === "scene.patch");
      assert.equal(patches.length, 1);
      assert.deepEqual(patches[0].upsert.tokens.map((t) => t.x), [500]);
      assert.deepEqual(patches[0].remove, { walls: ["w1"] });
      assert.equal(patches[0].upsert.regions[0].id, "r-smoke", "a behaviour change re-sends its region");
      if (!schemaSkipReason()) assertConforms(patches[0]);
    } finally {
      mock.timers.reset();
    }
  });

  test("a player's targeting fetches a preview through the GM and feeds the GURPS bucket once", async () => {
    const gurpsBridge = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling: { allowed: true, modifier: -6, ruleset: "gurps-4e" } }); // the bucket takes GURPS rulings only
    const w = world();
    const gm = client(w, w.gm, { bus, WebSocket: gurpsBridge.AutoSocket });
    const g = gurpsStub();
    const pl = client(w, w.player, { bus, WebSocket: gurpsBridge.AutoSocket, globals: { GURPS: g.GURPS } });
    gm.s.startRelay();
    pl.s.startRelay();
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    const rulings = await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(rulings.length, 1);
    const adj = gurpsBridge.received.find((m) => m.type === "adjudicate");
    assert.equal(adj.log, false);
    assert.equal(adj.action, "bs-attack");
    assert.deepEqual(g.list(), [[-6, "Sightline: Fusilier \u2192 Target: poor (\u22126)"]]);
    // Retargeting the same pair does not add it twice before the roll.
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(g.sum(), -6);
  });

  test("GURPS: the bucket follows the latest target and loses a dropped target's modifier", async () => {
    const gurpsBridge = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling: { allowed: true, modifier: -6, ruleset: "gurps-4e" } }); // the bucket takes GURPS rulings only
    const w = world();
    const third = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    third.parent = w.scene;
    w.scene.tokens = F.collection([...w.scene.tokens.contents, third]);
    const g = gurpsStub();
    const gm = client(w, w.gm, { bus, WebSocket: gurpsBridge.AutoSocket, globals: { GURPS: g.GURPS } });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    g.GURPS.ModifierBucket.addModifier(1, "Aim");
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    target(gm, third, true);
    await gm.s.onTargetToken(gm.game.user, { id: third.id, document: third }, true);
    assert.deepEqual(g.list(), [[1, "Aim"], [-6, "Sightline: Fusilier \u2192 Sniper: poor (\u22126)"]], "two targets: one entry of ours, −6 not −12");
    target(gm, third, false);
    await gm.s.onTargetToken(gm.game.user, { id: third.id, document: third }, false);
    assert.deepEqual(g.list(), [[1, "Aim"], [-6, "Sightline: Fusilier \u2192 Target: poor (\u22126)"]], "back to the remaining target");
    target(gm, tgt, false);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, false);
    assert.deepEqual(g.list(), [[1, "Aim"]], "no target: only the user's own modifier is left");
  });

  /**
   * A GURPS world judged under gurps-4e in darkness: an attack at −10, a defence (dodge, parry, block)
   * at −4, or what `answers` says for the question. The GM holds the bridge and plays the Fusilier.
   */
  async function gurpsTable({ answers } = {}) {
    const byAction = (m) => ({ ruleset: "gurps-4e", allowed: true, crossings: [{ region: "r-dark", zone: "darkness", kind: "within" }], modifier: m.action === "attack" ? -10 : -4 });
    const gurpsBridge = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling: answers ?? byAction });
    const w = world({ settings: { ruleset: "gurps-4e" } });
    const g = gurpsStub();
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const gm = client(w, w.gm, { bus, WebSocket: gurpsBridge.AutoSocket, globals: { GURPS: g.GURPS }, ChatMessage });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    /** A started combat of the two whose current turn is `turn`'s (a TokenDocument), as `game.combat` is. */
    const combat = (turn) => {
      const combatants = [fus, tgt].map((t) => ({ tokenId: t.id, sceneId: w.scene.id }));
      return { started: true, combatants, combatant: combatants.find((c) => c.tokenId === turn.id) };
    };
    return { w, g, gm, fus, tgt, bridge: gurpsBridge, created, combat };
  }

  test("GURPS in combat: on the foe's turn the bucket holds the defence (−4), on one's own turn the attack (−10)", async () => {
    const { g, gm, fus, tgt, bridge: b, combat } = await gurpsTable();
    gm.game.combat = combat(tgt);
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    const asked = b.received.filter((m) => m.type === "adjudicate").at(-1);
    assert.deepEqual([asked.action, asked.reaction, asked.log], ["dodge", true, false]);
    assert.deepEqual(g.list(), [[-4, 'Sightline: SIGHTLINE.Gurps.DefenceAgainst {"defender":"Fusilier","attacker":"Target"}: darkness (\u22124)']]);
    gm.game.combat = combat(fus); // the turn passes to the Fusilier (updateCombat)
    gm.s.onCombatChange();
    await settle();
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]], "one entry of ours, the attack's");
    gm.game.combat = null; // the fight is over (deleteCombat): attacks again
    gm.s.onCombatChange();
    await settle();
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]]);
  });

  test("GURPS: a token that is no combatant, or a combat not started, previews the attack", async () => {
    const { g, gm, tgt, combat } = await gurpsTable();
    gm.game.combat = { ...combat(tgt), combatants: [{ tokenId: tgt.id, sceneId: "s-docks" }] };
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(g.sum(), -10, "the Fusilier does not fight in this combat");
    gm.game.combat = { ...combat(tgt), started: false };
    target(gm, tgt, false);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, false);
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(g.sum(), -10, "a combat not yet started has no turns");
  });

  test("GURPS: a dodge rolled against the foe never stands in for the pair's attack (bucket and overlay)", async () => {
    const { g, gm, fus, tgt, combat } = await gurpsTable();
    gm.game.combat = combat(tgt);
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    // The Fusilier's player rolls the dodge: the Game Aid empties the bucket into it, the card is judged.
    g.GURPS.ModifierBucket.applyMods();
    const dodge = { id: "m-dodge", author: { id: "gm1" }, rolls: [{}], speaker: { token: fus.id }, flags: {}, content: gurpsRollContent("[@a@Dodge]") };
    const [ruling] = await gm.s.onChatMessage(dodge);
    assert.equal(ruling.modifier, -4);
    assert.equal(gm.s.rulings.get(`${fus.id}->${tgt.id}`)?.modifier, -10, "the pair's cached ruling is still its attack");
    gm.game.combat = combat(fus);
    gm.s.onCombatChange();
    await settle();
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]]);
  });

  test("GURPS: a token moved re-previews the pair after its patch, and the bucket takes the new value", async () => {
    let modifier = -10;
    const { g, gm, fus, tgt, bridge: b } = await gurpsTable({ answers: () => ({ ruleset: "gurps-4e", allowed: true, crossings: [], modifier }) });
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(g.sum(), -10);
    // The target steps out of the darkness into a torch's light: Foundry's updateToken, as main.js wires it.
    modifier = -3;
    gm.s.documentChanged("Token", { ...tgt, x: tgt.x + 400 }, "update", { _id: tgt.id, x: tgt.x + 400 });
    await settle();
    assert.deepEqual(g.list(), [[-3, "Sightline: Fusilier \u2192 Target: visibility (\u22123)"]]);
    const sent = b.received.filter((m) => m.type === "scene.patch" || m.type === "adjudicate").map((m) => m.type);
    assert.deepEqual(sent.slice(-2), ["scene.patch", "adjudicate"], "the move reaches the bridge before the question");
  });

  test("GURPS: taking another token with the target held puts the new pair's ruling in the bucket, not the last one's", async () => {
    const { w, g, gm, tgt, bridge: b } = await gurpsTable({ answers: (m) => ({ ruleset: "gurps-4e", allowed: true, crossings: [], modifier: m.actor === "t-3" ? -6 : -10 }) });
    const sniper = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    sniper.parent = w.scene;
    w.scene.tokens = F.collection([...w.scene.tokens.contents, sniper]);
    target(gm, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: visibility (\u221210)"]]);
    // The GM plays the next NPC: controlToken (the Fusilier released, the Sniper taken).
    gm.canvas.tokens.controlled = [];
    gm.s.onControlToken();
    gm.canvas.tokens.controlled = [{ id: sniper.id, document: sniper }];
    gm.s.onControlToken();
    await settle();
    assert.deepEqual(g.list(), [[-6, "Sightline: Sniper \u2192 Target: visibility (\u22126)"]]);
    assert.equal(b.received.filter((m) => m.type === "adjudicate" && m.actor === "t-3").length, 1);
  });

  /**
   * A twodsix world judged under traveller: the GM holds the bridge, plays the Fusilier and targets the Target.
   * `difficulties` is `CONFIG.TWODSIX.DIFFICULTIES`; `twodsix` the system's settings (mutable: read at each call).
   */
  async function twodsixTable({ ruling, difficulties, twodsix = {}, ChatMessage = undefined }) {
    const w = world({ system: "twodsix" });
    const b = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling });
    const gm = client(w, w.gm, { bus, WebSocket: b.AutoSocket, ChatMessage });
    gm.s.env.CONFIG = { TWODSIX: { DIFFICULTIES: difficulties } };
    gm.game.settings.get = ((get) => (module, key) => (module === "twodsix" ? twodsix[key] : get(module, key)))(gm.game.settings.get);
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(gm, tgt, true);
    return { w, b, gm, fus, tgt, twodsix };
  }

  test("twodsix: after the observer moves, its throw dialog is filled from a fresh preview of the held pair", async () => {
    let difficulty = "average";
    const ruling = () => ({ ruleset: "traveller", difficulty, asset: 0, modifier: 0 });
    const difficulties = { CE: { Routine: { mod: 2, target: 6 }, Simple: { mod: 6, target: 2 }, Average: { mod: 0, target: 8 } } };
    const { gm, fus, tgt } = await twodsixTable({ ruling, difficulties });
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(gm.s.prefillTwodsix(throwDialog("Recon (1)").element)?.difficulty, "Average");
    // The observer steps out of the smoke (updateToken, as main.js wires it): the throw becomes Easy (DM +4).
    difficulty = "easy";
    gm.s.documentChanged("Token", { ...fus, x: fus.x + 300 }, "update", { _id: fus.id, x: fus.x + 300 });
    await settle();
    assert.equal(gm.s.prefillTwodsix(throwDialog("Recon (1)").element)?.difficulty, "Routine", "CE's Routine (+2) is as near as Simple (+6), and harder");
  });

  test("twodsix: only a change that can move a held pair's ruling re-previews it, once per client for a burst", async () => {
    const ruling = { ruleset: "traveller", difficulty: "average", asset: 0, modifier: 0 };
    const { w, b, gm, fus, tgt } = await twodsixTable({ ruling, difficulties: { CE: { Average: { mod: 0, target: 8 } } } });
    const sniper = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    sniper.parent = w.scene;
    w.scene.tokens = F.collection([...w.scene.tokens.contents, sniper]);
    // A player holding the same pair: their previews are relayed through the GM.
    const pl = client(w, w.player, { bus, WebSocket: b.AutoSocket });
    pl.game.settings.get = gm.game.settings.get;
    gm.s.startRelay();
    pl.s.startRelay();
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    await settle(10);
    const asked = () => b.received.filter((m) => m.type === "adjudicate").length;
    const before = asked();
    assert.equal(before, 2, "one preview each");
    // Foundry fires each document hook on every client.
    const everywhere = (...change) => {
      for (const c of [gm, pl]) c.s.documentChanged(...change);
    };
    const [lamp] = w.scene.lights.contents;
    const [wall1, wall2] = w.scene.walls.contents;
    const region = w.scene.regions.contents[0];
    everywhere("Token", { ...sniper, name: "Lookout" }, "update", { _id: sniper.id, name: "Lookout" });
    everywhere("Token", tgt, "update", { _id: tgt.id, bar1: { attribute: "hp" }, texture: { src: "raider.webp" }, flags: { "other-module": { mark: 1 } } });
    everywhere("Token", sniper, "create");
    everywhere("AmbientLight", lamp, "update", { _id: lamp.id, config: { color: "#ff8800", animation: { type: "torch" } } });
    everywhere("Wall", wall1, "update", { _id: wall1.id, sound: 0, move: 0 });
    everywhere("Region", region, "update", { _id: region.id, color: "#00ff00" });
    everywhere("RegionBehavior", { id: "b-tp", type: "teleportToken", parent: region, system: {} }, "update", { _id: "b-tp", system: { destination: "x" } });
    everywhere("JournalEntry", { id: "j1", name: "Handout" }, "create");
    await settle(10);
    assert.equal(asked(), before, "nothing a ruling reads changed: no request");
    // The observer steps out and two walls go in one deletion: one re-preview per client holding the pair.
    everywhere("Token", { ...fus, x: fus.x + 300 }, "update", { _id: fus.id, x: fus.x + 300 });
    everywhere("Wall", wall1, "delete");
    everywhere("Wall", wall2, "delete");
    await settle(10);
    assert.equal(asked(), before + 2);
    // The pair's own token renamed: a Traveller note names the actor, so the pair is asked again.
    everywhere("Token", { ...fus, name: "Scout" }, "update", { _id: fus.id, name: "Scout" });
    await settle(10);
    assert.equal(asked(), before + 4);
  });

  test("twodsix: a change made while the pair's re-preview is under way asks again; the older answer is not kept", async () => {
    let difficulty = "average";
    let during = null;
    const ruling = () => {
      const answer = { ruleset: "traveller", difficulty, asset: 0, modifier: 0 };
      const change = during;
      during = null;
      change?.(); // a change reaching this client after the question left, before its answer
      return answer;
    };
    const difficulties = { CE: { Routine: { mod: 2, target: 6 }, Simple: { mod: 6, target: 2 }, Average: { mod: 0, target: 8 } } };
    const { w, b, gm, fus, tgt } = await twodsixTable({ ruling, difficulties });
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    const asked = () => b.received.filter((m) => m.type === "adjudicate").length;
    const before = asked();
    const [wall] = w.scene.walls.contents;
    // The observer steps out of the smoke (easy); while that is asked, a wall is moved into the line (average again).
    difficulty = "easy";
    during = () => {
      difficulty = "average";
      gm.s.documentChanged("Wall", wall, "update", { _id: wall.id, c: [1900, 0, 1900, 2000] });
    };
    gm.s.documentChanged("Token", { ...fus, x: fus.x + 300 }, "update", { _id: fus.id, x: fus.x + 300 });
    await settle(10);
    assert.equal(asked(), before + 2, "asked again after the change");
    assert.equal(gm.s.prefillTwodsix(throwDialog("Recon (1)").element)?.difficulty, "Average", "the answer after the wall, not the one before it (Routine)");
  });

  test("GURPS: a defence rolled with no target on the foe's turn is judged against the combatant attacking now", async () => {
    const { gm, fus, tgt, bridge: b, created, combat } = await gurpsTable();
    const dodge = (id) => ({ id, author: { id: "gm1" }, rolls: [{}], speaker: { token: fus.id }, flags: {}, content: gurpsRollContent("[@a@Dodge]") });
    assert.deepEqual(await gm.s.onChatMessage(dodge("m0")), [], "no fight, no target: nothing to judge");
    gm.game.combat = combat(tgt);
    const [ruling] = await gm.s.onChatMessage(dodge("m1"));
    assert.equal(ruling.modifier, -4);
    const asked = b.received.filter((m) => m.type === "adjudicate").at(-1);
    assert.deepEqual([asked.actor, asked.target, asked.action, asked.reaction, asked.log], [fus.id, tgt.id, "dodge", true, true]);
    assert.equal(created.length, 1);
    gm.game.combat = combat(fus); // its own turn: an attack needs a target, and a defence has no attacker
    assert.deepEqual(await gm.s.onChatMessage(dodge("m2")), []);
    assert.deepEqual(await gm.s.onChatMessage({ ...dodge("m3"), content: gurpsRollContent('[@a@R:"Rifle"]') }), []);
  });

  test("GURPS: only the Game Aid's attack and defence rolls get a card, with their action", async () => {
    const w = world();
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket, ChatMessage });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(gm, tgt, true);
    const roll = (chatthing) => ({ id: "m", author: { id: "gm1" }, rolls: [{}], speaker: { token: fus.id }, flags: {}, content: gurpsRollContent(chatthing) });
    for (const otf of ['[@a@S:"Stealth"]', "[@a@ST]", '[@a@D:"Broadsword"]']) assert.deepEqual(await gm.s.onChatMessage(roll(otf)), [], otf);
    assert.deepEqual(await gm.s.onChatMessage({ id: "d", author: { id: "gm1" }, rolls: [{}], speaker: {}, flags: {}, content: "<div class='damage-chat-message'>2d cut</div>" }), []);
    assert.equal(created.length, 0);
    assert.equal(bridge.received.filter((m) => m.type === "adjudicate").length, 0);
    await gm.s.onChatMessage(roll('[@a@R:"Rifle"]'));
    await gm.s.onChatMessage(roll("[@a@Dodge]"));
    const asked = bridge.received.filter((m) => m.type === "adjudicate");
    assert.deepEqual(asked.map((m) => [m.action, m.reaction, m.log]), [["attack", false, true], ["dodge", true, true]]);
    assert.equal(created.length, 2);
  });

  test("a roll with targets adjudicates with log: true, posts the card and calls the hook", async () => {
    const w = world({ system: "dnd5e" });
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket, ChatMessage });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    gm.game.user.targets = new Set([{ id: tgt.id, document: tgt }]);
    const rulings = await gm.s.onChatMessage({ id: "m1", author: { id: "gm1" }, rolls: [{}], speaker: {}, flags: {} });
    assert.equal(rulings.length, 1);
    assert.equal(bridge.received.find((m) => m.type === "adjudicate").log, true);
    assert.equal(created.length, 1);
    assert.match(created[0].content, /sightline-card/);
    assert.equal(created[0].whisper, undefined);
    assert.ok(gm.hooks.called.some(([name, r]) => name === "sightline.adjudicated" && r.modifier === -6));
    // Its own card (a message with the module flag) never triggers another adjudication.
    assert.deepEqual(await gm.s.onChatMessage({ author: { id: "gm1" }, rolls: [{}], flags: { "sightline-bridge": {} } }), []);
  });

  test("pre-roll prompt: a generic system shows the preview when the player targets, and closes it when the target is dropped", async () => {
    /** A stand-in for adapters/prompt.js's PrerollPrompt: what it was asked to show, what to close. */
    const prompt = (log) => ({ show: (rulings, names) => log.push(["show", rulings.map((r) => `${names(r).actor}->${names(r).target} ${r.modifier}`)]), close: (t) => log.push(["close", t]) });
    const shown = [];
    const w = world({ system: "dnd5e" });
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    const pl = client(w, w.player, { bus, WebSocket: bridge.AutoSocket, prerollPrompt: prompt(shown) });
    gm.s.startRelay();
    pl.s.startRelay();
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    assert.deepEqual(shown, [["show", ["Fusilier->Target -6"]]]);
    target(pl, tgt, false);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, false);
    assert.deepEqual(shown.at(-1), ["close", tgt.id]);

    // Off in this client's settings, or a system the modifier reaches by itself: no window.
    for (const [system, settings] of [["dnd5e", { prerollPrompt: false }], ["gurps", {}], ["twodsix", {}]]) {
      const quiet = [];
      const w2 = { ...world({ system, settings }), scene: w.scene };
      const c = client(w2, w2.gm, { bus: socketBus(), WebSocket: bridge.AutoSocket, prerollPrompt: prompt(quiet) });
      c.s.refreshHolder();
      await settle();
      c.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
      target(c, tgt, true);
      assert.equal((await c.s.onTargetToken(c.game.user, { id: tgt.id, document: tgt }, true)).length, 1, system);
      assert.deepEqual(quiet, [], `${system} ${JSON.stringify(settings)}`);
    }
  });

  test("confirm mode: a roll's card goes to the GMs without Apply — the roll is done", async () => {
    const w = world({ system: "dnd5e", settings: { applyMode: "confirm" } });
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket, ChatMessage });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    await gm.s.publish(await gm.s.adjudicate(fus, tgt), { trigger: "roll" });
    assert.deepEqual(created[0].whisper, ["gm1"]);
    assert.doesNotMatch(created[0].content, /data-sightline-apply/);
  });

  test("a roll's ruling the bridge could not log says so on its card; one it logged, or a preview, does not", async () => {
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    for (const [logged, trigger, says] of [[false, "roll", true], [true, "roll", false], [false, "preview", false]]) {
      const failing = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling: { allowed: true, modifier: -6, logged, ...(logged ? { record: "rec-1" } : {}) } });
      const w = world({ system: "dnd5e" });
      const gm = client(w, w.gm, { bus, WebSocket: failing.AutoSocket, ChatMessage });
      gm.s.refreshHolder();
      await settle();
      const [fus, tgt] = w.scene.tokens.contents;
      await gm.s.publish(await gm.s.adjudicate(fus, tgt), { trigger });
      const content = created.at(-1).content;
      assert.equal(/sightline-unlogged/.test(content), says, `${trigger}, logged ${logged}`);
      if (says) assert.match(content, /<p class="sightline-unlogged">SIGHTLINE.Card.NotLogged<\/p>/); // the stub localizes to keys
    }
  });

  test("confirm mode, GURPS: the GMs confirm before the roll, and Apply lands in the roller's bucket only while the pair stands", async () => {
    const ruling = { allowed: true, modifier: -6, ruleset: "gurps-4e" }; // the bucket takes GURPS rulings only
    const { gm, pl, g, created, fus, tgt } = await gurpsConfirmTable({ ruling, settings: { applyMode: "confirm" } });
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    assert.deepEqual(g.list(), [], "nothing lands before the GM confirms");
    assert.equal(created.length, 1);
    assert.deepEqual(created[0].whisper, ["gm1"]);
    assert.match(created[0].content, /data-sightline-apply/);
    gm.s.confirmFromMessage({ flags: created[0].flags });
    await settle();
    assert.deepEqual(g.list(), [[-6, "Sightline: Fusilier \u2192 Target: poor (\u22126)"]], "before the roll");
    // Dropped target: its entry goes, and a late Apply for it does nothing.
    target(pl, tgt, false);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, false);
    assert.deepEqual(g.list(), []);
    gm.s.confirmFromMessage({ flags: created[0].flags });
    await settle();
    assert.deepEqual(g.list(), []);
  });

  /** The bridge's GURPS answer by action: an attack in darkness −10, a defence −4. */
  const byAction = (m) => ({ ruleset: "gurps-4e", allowed: true, reaction: m.reaction, crossings: [{ region: "r-dark", zone: "darkness", kind: "within" }], modifier: m.action === "attack" ? -10 : -4 });

  /**
   * A GURPS world in confirm mode: the GM holds the bridge and relays; the player plays the Fusilier against the
   * Target, with the GURPS bucket (`extra` tokens stand on the scene too). The bridge answers an attack −10 and a defence −4 (darkness). `turn(token)` starts
   * a fight on that token's turn among `fighters` (the Fusilier and the Target, then `extra`), `turn(null)` ends it,
   * as `updateCombat` / `deleteCombat` would, on both clients. `proposals()` are the GMs' cards with Apply
   * (`created`: every chat message). `ruling` and `settings` replace the bridge's answers and the world's settings.
   */
  async function gurpsConfirmTable({ extra = [], ruling = byAction, settings = { applyMode: "confirm", ruleset: "gurps-4e" } } = {}) {
    const gurpsBridge = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling });
    const w = world({ settings });
    for (const t of extra) t.parent = w.scene;
    w.scene.tokens = F.collection([...w.scene.tokens.contents, ...extra]);
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const g = gurpsStub();
    const gm = client(w, w.gm, { bus, WebSocket: gurpsBridge.AutoSocket, ChatMessage });
    const pl = client(w, w.player, { bus, WebSocket: gurpsBridge.AutoSocket, ChatMessage, globals: { GURPS: g.GURPS } });
    gm.s.startRelay();
    pl.s.startRelay();
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    const fighters = [fus, tgt, ...extra];
    const fight = (turn) => {
      const combatants = fighters.map((t) => ({ tokenId: t.id, sceneId: w.scene.id, name: `combatant ${t.id}` }));
      return { started: true, combatants, combatant: combatants.find((c) => c.tokenId === turn.id) };
    };
    const turn = async (who) => {
      pl.game.combat = gm.game.combat = who && fight(who); // one world: both clients see the same combat
      pl.s.onCombatChange();
      await settle(10);
    };
    const proposals = () => created.filter((m) => m.flags["sightline-bridge"].confirm);
    const apply = async (message) => {
      gm.s.confirmFromMessage({ flags: message.flags });
      await settle();
    };
    return { w, gm, pl, g, created, fus, tgt, turn, proposals, apply };
  }

  test("confirm mode, GURPS: when the turn changes the kind of the next roll, the applied entry goes and the GMs are offered the new ruling", async () => {
    const sniper = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    const { pl, g, fus, tgt, turn, proposals, apply } = await gurpsConfirmTable({ extra: [sniper] });
    await turn(fus); // the Fusilier's own turn: its next roll is an attack
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    assert.equal(proposals().length, 1);
    await apply(proposals()[0]);
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]]);
    // The turn passes to the Target: the Fusilier's next roll is a defence. The attack's −10 goes; the GMs are asked about the dodge.
    await turn(tgt);
    assert.deepEqual(g.list(), [], "the attack's entry does not wait in the bucket for the defence");
    assert.equal(proposals().length, 2);
    const offered = proposals()[1];
    assert.deepEqual([offered.flags["sightline-bridge"].ruling.action, offered.flags["sightline-bridge"].ruling.modifier, offered.whisper], ["dodge", -4, ["gm1"]]);
    assert.match(offered.content, /data-sightline-apply/);
    // Another foe's turn: still a defence; nothing new to confirm.
    await turn(sniper);
    assert.equal(proposals().length, 2);
    await apply(offered);
    assert.deepEqual(g.list(), [[-4, 'Sightline: SIGHTLINE.Gurps.DefenceAgainst {"defender":"Fusilier","attacker":"Target"}: darkness (\u22124)']]);
    await turn(sniper);
    assert.deepEqual(g.list().length, 1, "the applied defence still fits");
    // The fight ends: attacks again, the defence goes and the attack is offered.
    await turn(null);
    assert.deepEqual(g.list(), []);
    assert.equal(proposals().length, 3);
    assert.equal(proposals()[2].flags["sightline-bridge"].ruling.action, "attack");
  });

  test("confirm mode, GURPS: Apply on an older card of the other kind still lands, and the GM is told whose turn it is", async () => {
    const { gm, pl, g, fus, tgt, turn, proposals, apply } = await gurpsConfirmTable();
    const warnings = () => gm.log.filter(([level]) => level === "warn").map(([, text]) => text);
    await turn(fus); // the Fusilier's own turn: its next roll is an attack
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    const attackCard = proposals()[0];
    await apply(attackCard);
    assert.deepEqual(warnings(), [], "the attack's card on the attacker's turn fits");
    await turn(tgt); // the Target's turn: the defence is offered
    const defenceCard = proposals()[1];
    assert.equal(defenceCard.flags["sightline-bridge"].ruling.action, "dodge");
    await apply(defenceCard);
    assert.deepEqual(warnings(), []);
    // The GM presses Apply on the older attack card: it lands (an attack out of turn is the GM's call), with a warning.
    await apply(attackCard);
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]]);
    assert.deepEqual(warnings(), ['SIGHTLINE.Confirm.AttackOutOfTurn {"actor":"Fusilier","target":"Target","turn":"Target"}']);
    // Back on the Fusilier's turn, the older defence card: it lands, and the GM is told it is the defender's own turn.
    await turn(fus);
    await apply(defenceCard);
    assert.deepEqual(g.list(), [[-4, 'Sightline: SIGHTLINE.Gurps.DefenceAgainst {"defender":"Fusilier","attacker":"Target"}: darkness (\u22124)']]);
    assert.equal(warnings().at(-1), 'SIGHTLINE.Confirm.DefenceOnOwnTurn {"actor":"Fusilier","target":"Target","turn":"Fusilier"}');
    // No fight: no turn to go against, nothing said.
    await turn(null);
    await apply(attackCard);
    await apply(defenceCard);
    assert.equal(warnings().length, 2);
    assert.deepEqual(pl.log, [], "the roller is not told: the GM's notice is the GM's");
  });

  test("confirm mode, GURPS: a late Apply the roller's client cannot take is told to the GM in words, never as landed", async () => {
    const sniper = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    const { w, gm, pl, g, fus, tgt, turn, proposals, apply } = await gurpsConfirmTable({ extra: [sniper] });
    const warnings = () => gm.log.filter(([level]) => level === "warn").map(([, text]) => text);
    const hold = async (actor, foe) => {
      pl.canvas.tokens.controlled = actor ? [{ id: actor.id, document: actor }] : [];
      if (foe) target(pl, foe, true);
      if (foe) await pl.s.onTargetToken(pl.game.user, { id: foe.id, document: foe }, true);
      else pl.s.onControlToken();
      await settle();
    };
    await turn(fus);
    await hold(fus, tgt);
    const card = proposals().at(-1); // the Fusilier's attack on the Target
    await turn(tgt); // the Target's turn: that attack card applied now is an attack out of turn
    // 1. The player drops the target, then the GM applies: nothing lands, and the GM is told why (not "it goes to the bucket").
    target(pl, tgt, false);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, false);
    await apply(card);
    assert.deepEqual(g.list(), []);
    assert.deepEqual(warnings(), ['SIGHTLINE.Confirm.NotTaken.TargetDropped {"user":"Player","actor":"Fusilier","target":"Target"}']);
    // 2. The player targets the Target again, then the Sniper too (the newer pair): the Target's card would land on the Sniper's roll.
    await hold(fus, tgt);
    await hold(fus, sniper);
    await apply(card);
    assert.deepEqual(g.list(), []);
    assert.equal(warnings().at(-1), 'SIGHTLINE.Confirm.NotTaken.OtherPair {"user":"Player","actor":"Fusilier","target":"Target","nowActor":"Fusilier","nowTarget":"Sniper"}');
    // 3. The Sniper dropped (the Target is the pair again), then the token deselected (a roll from the sheet needs none):
    //    the pair is still the one held, so the late Apply lands as an earlier one would have stayed, and the notice is true.
    target(pl, sniper, false);
    await pl.s.onTargetToken(pl.game.user, { id: sniper.id, document: sniper }, false);
    await hold(null, null);
    await apply(card);
    assert.deepEqual(g.list(), [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]]);
    assert.equal(warnings().at(-1), 'SIGHTLINE.Confirm.AttackOutOfTurn {"actor":"Fusilier","target":"Target","turn":"Target"}');
    assert.equal(warnings().length, 3);
    // 4. The player's browser is closed: the GM is told at once that the modifier reached no one.
    w.player.active = false;
    await apply(card);
    assert.equal(warnings().at(-1), 'SIGHTLINE.Confirm.RollerAway {"user":"Player","actor":"Fusilier","target":"Target"}');
    assert.deepEqual(pl.log, [], "the roller's client answers the GM; the player is not interrupted");
    assert.ok(warnings().every((t) => !/t-fus|t-tgt|t-3|p1/.test(t)), "names, never ids");
  });

  test("confirm mode, GURPS: an applied ruling stands while its target is held; a target dropped and targeted again is asked anew", async () => {
    const sniper = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    const { pl, g, fus, tgt, proposals, apply } = await gurpsConfirmTable({ extra: [sniper] });
    const aim = async (foe, on) => {
      target(pl, foe, on);
      await pl.s.onTargetToken(pl.game.user, { id: foe.id, document: foe }, on);
      await settle();
    };
    const applied = [[-10, "Sightline: Fusilier \u2192 Target: darkness (\u221210)"]];
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    await aim(tgt, true);
    await apply(proposals()[0]);
    assert.deepEqual(g.list(), applied);
    // A newer target, then dropped: the pair is the Target's again, and the GM's word for it goes back in the bucket.
    await aim(sniper, true);
    assert.deepEqual(g.list(), [], "the Target's modifier would land on the Sniper's roll");
    assert.equal(proposals().length, 2, "the Sniper's pair is offered");
    await aim(sniper, false);
    assert.deepEqual(g.list(), applied);
    assert.equal(proposals().length, 2, "nothing asked again for a pair the GM applied");
    // The Target dropped, then targeted again: a new card for the GMs (not an empty bucket nobody is asked about).
    await aim(tgt, false);
    assert.deepEqual(g.list(), []);
    await aim(tgt, true);
    assert.deepEqual(g.list(), [], "nothing lands before the GM confirms again");
    assert.equal(proposals().length, 3);
    assert.equal(proposals()[2].flags["sightline-bridge"].ruling.target, tgt.id);
    await apply(proposals()[2]);
    assert.deepEqual(g.list(), applied);
  });

  test("confirm mode: Apply pressed on a GM client that does not hold the bridge says whose does, instead of doing nothing", async () => {
    const { w, gm, pl, g, fus, tgt, proposals, apply } = await gurpsConfirmTable();
    // A second GM joins and becomes the active GM; the first keeps the working connection (and so the players' trust).
    const gm0 = { id: "gm0", name: "Late GM", isGM: true, active: true };
    w.users.push(gm0);
    const late = client(w, gm0, { bus, WebSocket: bridge.AutoSocket });
    late.game.settings.values.secret = "";
    late.s.startRelay();
    await settle();
    assert.equal(late.s.holderId(), "gm1");
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    await late.s.confirmFromMessage({ flags: proposals()[0].flags });
    await settle();
    assert.deepEqual(g.list(), [], "the player's client takes apply from the holder only");
    assert.deepEqual(late.log, [["warn", 'SIGHTLINE.Confirm.NotHolder {"holder":"GM"}']]);
    await apply(proposals()[0]); // the holder's Apply lands
    assert.equal(g.list().length, 1);
    assert.deepEqual(gm.log.filter(([level]) => level === "warn"), []);
  });

  test("twodsix: the throw dialog (renderDialogV2) gets the preview's difficulty from the list in use", async () => {
    const travellerRuling = { ruleset: "traveller", difficulty: "average", asset: 1, device: "binoculars", modifier: 0 };
    const difficulties = { AC: { Routine: { mod: 2, target: 4 }, Simple: { mod: 0, target: 6 }, Average: { mod: -2, target: 8 } } };
    const { w, gm, tgt, twodsix } = await twodsixTable({ ruling: travellerRuling, difficulties, twodsix: { difficultyListUsed: "AC" } });
    await gm.s.onTargetToken(gm.game.user, { id: tgt.id, document: tgt }, true);
    const { element, select } = throwDialog("Recon (1)");
    assert.deepEqual(gm.s.prefillTwodsix(element), { difficulty: "Simple", dm: 1 });
    assert.equal(select.value, "Simple", "AC's DM 0 is Simple; its Average is DM −2");
    // twodsix's rule presets that use AC make its difficulties target numbers: AC's Average is then 8+.
    twodsix.difficultiesAsTargetNumber = true;
    const again = throwDialog("Recon (1)");
    assert.deepEqual(gm.s.prefillTwodsix(again.element), { difficulty: "Average", dm: 1 });
    // The world's observation skills only: a Medic throw at the same target keeps twodsix's own difficulty.
    const medic = throwDialog("Medic (2)");
    assert.equal(gm.s.prefillTwodsix(medic.element), null);
    assert.equal(medic.select.value, "Average");
    w.settings.observationSkills = "Medic";
    gm.game.settings.values.observationSkills = "Medic";
    assert.deepEqual(gm.s.prefillTwodsix(throwDialog("Medic (2)").element), { difficulty: "Average", dm: 1 });
  });

  test("twodsix: only a throw made through an observation skill's dialog gets a card and a logged ruling", async () => {
    const created = [];
    const ChatMessage = { create: async (data) => created.push(data), getWhisperRecipients: () => [{ id: "gm1" }] };
    const ruling = { ruleset: "traveller", allowed: true, modifier: 0, difficulty: "average" };
    const { b, gm, fus } = await twodsixTable({ ruling, difficulties: { CE: { Average: { mod: 0, target: 8 } } }, ChatMessage });
    // twodsix's roll message: its flags (TwodsixDiceRoll.sendToChat) say which kind of throw it was.
    const roll = (rollClass) => ({ id: `m-${rollClass}`, author: { id: "gm1" }, rolls: [{}], speaker: { token: fus.id }, flags: { twodsix: { rollClass } } });
    const asked = () => b.received.filter((m) => m.type === "adjudicate" && m.log).length;
    gm.s.prefillTwodsix(throwDialog("Medic (1)").element);
    assert.deepEqual(await gm.s.onChatMessage(roll("Skill")), [], "a Medic throw");
    assert.deepEqual(await gm.s.onChatMessage(roll("Skill")), [], "a throw without the dialog");
    gm.s.prefillTwodsix(throwDialog("Recon (1)").element);
    assert.deepEqual(await gm.s.onChatMessage(roll("Attack")), [], "a weapon's throw after the Recon dialog was closed");
    assert.equal(asked(), 0);
    assert.equal(created.length, 0);
    gm.s.prefillTwodsix(throwDialog("Recon (1)").element);
    assert.equal((await gm.s.onChatMessage(roll("Skill"))).length, 1, "the Recon throw");
    assert.equal(asked(), 1);
    assert.equal(created.length, 1);
    assert.deepEqual(await gm.s.onChatMessage(roll("Skill")), [], "once: the next throw needs its own dialog");
  });

  test("a GM joining without the secret never takes over the working connection", async () => {
    const w = world();
    // gm1 (with the secret) holds the connection; gm0 sorts first, so joining makes it the active GM.
    const gm0 = { id: "gm0", name: "Late GM", isGM: true, active: false };
    w.users.push(gm0);
    const holder = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    holder.s.startRelay();
    holder.s.refreshHolder();
    await settle();
    assert.equal(holder.s.connection.state, "ready");
    gm0.active = true;
    const late = client(w, gm0, { bus, WebSocket: bridge.AutoSocket });
    late.game.settings.values.secret = "";
    late.s.startRelay();
    await settle();
    holder.s.refreshHolder();
    late.s.refreshHolder();
    await settle();
    assert.equal(holder.s.connection?.state, "ready", "the working connection stays");
    assert.equal(late.s.connection, null);
    assert.deepEqual(late.log, [], "no 'set the secret' error for a GM who does not need it");
    assert.equal(bridge.received.filter((m) => m.type === "hello").length, 1);
    // A player's request goes to the GM who holds the connection, not to the active GM.
    const pl = client(w, w.player, { bus, WebSocket: bridge.AutoSocket });
    pl.s.startRelay();
    await settle();
    assert.equal(pl.s.holderId(), "gm1");
    // The holder leaves: the GM without the secret is told to set it.
    w.gm.active = false;
    holder.s.connection.close();
    await settle();
    late.s.refreshHolder();
    await settle();
    assert.match(late.log.at(-1)?.[1] ?? "", /SIGHTLINE\.Error\.no-secret/);
  });

  test("a roll with three targets while the bridge is down gives one notice, not three", async () => {
    const w = world({ system: "dnd5e" });
    const third = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    const fourth = F.token({ id: "t-4", name: "Spotter", x: 2400, y: 600, flags: {} });
    w.scene.tokens = F.collection([...w.scene.tokens.contents, third, fourth]);
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    for (const t of [tgt, third, fourth]) target(gm, t, true);
    const roll = { id: "m1", author: { id: "gm1" }, rolls: [{}], speaker: {}, flags: {} };
    assert.deepEqual(await gm.s.onChatMessage(roll), []);
    assert.deepEqual(await gm.s.onChatMessage({ ...roll, id: "m2" }), []);
    assert.deepEqual(gm.log, [["warn", "SIGHTLINE.Error.down"]]);
    // Back up: the next outage is told again.
    gm.s.refreshHolder();
    await settle();
    gm.log.length = 0;
    gm.s.connection.socket.drop(1006);
    await settle();
    assert.equal(gm.log.filter(([, m]) => /SIGHTLINE\.Error\.(lost|unreachable)/.test(m)).length, 1);
  });

  test("a roll with three targets the bridge refuses to judge for one reason gives one notice, not three", async () => {
    const w = world({ system: "dnd5e" });
    const third = F.token({ id: "t-3", name: "Sniper", x: 2400, y: 200, flags: {} });
    const fourth = F.token({ id: "t-4", name: "Spotter", x: 2400, y: 600, flags: {} });
    w.scene.tokens = F.collection([...w.scene.tokens.contents, third, fourth]);
    const refusal = "action 'bs-attack' is not one of this scene's ruleset";
    const { Socket } = answeringSocketClass(ws.FakeWebSocket, (m, reply) => {
      if (m.type === "scene.sync") reply({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: 0, tokens: 0, walls: 0 });
      else reply({ type: "error", id: m.id, code: "invalid-message", message: refusal, details: {} });
    });
    const gm = client(w, w.gm, { bus, WebSocket: Socket });
    gm.s.refreshHolder();
    await settle();
    gm.log.length = 0;
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    for (const t of [tgt, third, fourth]) target(gm, t, true);
    assert.deepEqual(await gm.s.onChatMessage({ id: "m1", author: { id: "gm1" }, rolls: [{}], speaker: {}, flags: {} }), []);
    assert.deepEqual(gm.log, [["warn", `SIGHTLINE.Error.adjudicate SIGHTLINE.Refusal.invalid-message ${JSON.stringify({ message: refusal, field: "" })}`]]);
  });

  test("a question about a scene the bridge forgot syncs the scene again and is answered", async () => {
    const w = world({ system: "dnd5e" });
    const held = new Set(); // the scenes the fake bridge holds; it forgets them as a full world does
    const { Socket, received } = answeringSocketClass(ws.FakeWebSocket, (m, reply) => {
      if (m.type === "scene.sync") {
        held.add(m.scene.id);
        reply({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: 0, tokens: 0, walls: 0 });
      } else if (m.type === "adjudicate" && !held.has(m.scene)) {
        reply({ type: "error", id: m.id, code: "unknown-scene", message: `no scene '${m.scene}' in this world; send scene.sync first`, details: {} });
      } else if (m.type === "adjudicate") {
        reply({ type: "adjudication", id: m.id, scene: m.scene, actor: m.actor, target: m.target, action: m.action, reaction: false, ruleset: "infinity-n4", edition: "current", allowed: true, modifier: -3, crossings: [], modifiers: [], notes: [], citations: [] });
      } else reply({ type: "error", id: m.id, code: "invalid-message", message: `type: ${m.type}`, details: {} });
    });
    const gm = client(w, w.gm, { bus, WebSocket: Socket });
    gm.s.refreshHolder();
    await settle();
    assert.ok(held.has(w.scene.id) && gm.s.synced.has(w.scene.id));
    held.clear(); // another scene was synced on the bridge and this one, unwatched, was forgotten
    received.length = 0;
    const [fus, tgt] = w.scene.tokens.contents;
    const ruling = await gm.s.adjudicate(fus, tgt, { log: true });
    assert.equal(ruling.modifier, -3);
    assert.deepEqual(received.map((m) => m.type), ["adjudicate", "scene.sync", "adjudicate"]);
    assert.equal(received[2].log, true, "the question asked again as it was");
    // Any other error is not retried.
    received.length = 0;
    await assert.rejects(gm.s.request({ type: "watch", id: "", scene: w.scene.id, action: "bs-attack" }), { code: "invalid-message" });
    assert.deepEqual(received.map((m) => m.type), ["watch"]);
  });

  test("canvasReady: the same scene drawn again (a V14 floor switch) is not synced again while the bridge holds it", async () => {
    const w = world({ system: "dnd5e" });
    const other = F.scene({ id: "s-other", name: "Harbour" });
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    gm.game.scenes.get = (id) => (id === other.id ? other : id === w.scene.id ? w.scene : undefined);
    const syncs = () => bridge.received.filter((m) => m.type === "scene.sync").map((m) => m.scene.id);
    await gm.s.onCanvasReady(w.scene); // drawn at load, before the connection: nothing to send yet
    gm.s.refreshHolder();
    await settle();
    assert.deepEqual(syncs(), ["s-docks"], "the welcome's resync");
    await gm.s.onCanvasReady(w.scene); // a floor switch: the canvas drawn again
    await gm.s.onCanvasReady(w.scene);
    assert.deepEqual(syncs(), ["s-docks"]);
    await gm.s.onCanvasReady(other); // another scene: synced whole
    await gm.s.onCanvasReady(w.scene); // and back: synced whole, as before
    assert.deepEqual(syncs(), ["s-docks", "s-other", "s-docks"]);
    // A scene the bridge does not hold on this connection is synced even when drawn again.
    gm.s.synced.delete(w.scene.id);
    await gm.s.onCanvasReady(w.scene);
    assert.deepEqual(syncs(), ["s-docks", "s-other", "s-docks", "s-docks"]);
    // After a reconnect the welcome's resync sends it; the redraw that follows does not.
    gm.s.connection.socket.drop(1006);
    gm.s.refreshHolder({ force: true });
    await settle();
    await gm.s.onCanvasReady(w.scene);
    assert.deepEqual(syncs().slice(4), ["s-docks"]);
  });

  test("canvasReady: a floor switch asks nothing again — no sync, no preview of a held pair, on the GM's client or a player's", async () => {
    const gurpsBridge = autoBridge(ws.FakeWebSocket, ws.sockets, { ruling: { allowed: true, modifier: -6, ruleset: "gurps-4e" } });
    const w = world();
    const g = gurpsStub();
    const gm = client(w, w.gm, { bus, WebSocket: gurpsBridge.AutoSocket });
    const pl = client(w, w.player, { bus, WebSocket: gurpsBridge.AutoSocket, globals: { GURPS: g.GURPS } });
    gm.s.startRelay();
    pl.s.startRelay();
    gm.s.refreshHolder();
    await settle();
    const asked = (type) => gurpsBridge.received.filter((m) => m.type === type).length;
    // The scene drawn on both clients; the player's Fusilier targets: its preview is in the bucket, waiting for the roll.
    await gm.s.onCanvasReady(w.scene);
    await pl.s.onCanvasReady(w.scene);
    const [fus, tgt] = w.scene.tokens.contents;
    pl.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    target(pl, tgt, true);
    await pl.s.onTargetToken(pl.game.user, { id: tgt.id, document: tgt }, true);
    await settle();
    const before = { sync: asked("scene.sync"), adjudicate: asked("adjudicate") };
    assert.equal(before.adjudicate, 1);
    // A V14 floor switch draws the same scene again on every client that views it: nothing the bridge judges changed.
    for (const c of [gm, pl, gm, pl]) await c.s.onCanvasReady(w.scene);
    await settle();
    assert.deepEqual({ sync: asked("scene.sync"), adjudicate: asked("adjudicate") }, before);
    assert.ok(pl.s.rulings.has(`${fus.id}->${tgt.id}`), "the player's preview stays cached for the overlay");
    assert.deepEqual(g.list(), [[-6, "Sightline: Fusilier \u2192 Target: poor (\u22126)"]]);
    // A change the bridge judges still re-asks the pair (documentChanged), as before the switch.
    pl.s.documentChanged("Wall", { id: "w-new", parent: w.scene }, "create");
    await settle();
    assert.equal(asked("adjudicate"), before.adjudicate + 1);
  });

  test("with no GM online a player is told so", async () => {
    const w = world({ gmActive: false });
    const pl = client(w, w.player, { bus, WebSocket: bridge.AutoSocket });
    pl.s.startRelay();
    const [fus, tgt] = w.scene.tokens.contents;
    await assert.rejects(pl.s.adjudicate(fus, tgt), { code: "no-gm" });
    assert.deepEqual(pl.log, [["warn", "SIGHTLINE.Error.no-gm"]]);
  });

  test("a hello refused rate-limited warns once with the limit in the GM's words; the retries stay silent until welcomed", async () => {
    const w = world();
    const reason = "world 'w-ashes' already has 32 connections, the most this bridge allows";
    let room = false;
    const refusal = { type: "error", code: "rate-limited", message: reason, details: { limit: "connections-per-world", value: 33, max: 32 } };
    // The bridge leaves a refused socket open: only the module closes it. Admitted, it answers the resync.
    const synced = (m, reply) => m.type === "scene.sync" && reply({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: 0, tokens: 0, walls: 0 });
    const { Socket: Full } = answeringSocketClass(ws.FakeWebSocket, synced, { hello: () => (room ? WELCOME : refusal) });
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const gm = client(w, w.gm, { bus, WebSocket: Full });
      gm.s.refreshHolder();
      await settle();
      assert.equal(gm.s.status.state, "reconnecting");
      assert.deepEqual(gm.s.status.error, { code: "rate-limited", message: reason, details: refusal.details });
      assert.equal(gm.log.length, 1);
      assert.equal(gm.log[0][0], "warn");
      // The limit in the GM's words (stub: the key and its data), not the bridge's English.
      assert.match(gm.log[0][1], /^SIGHTLINE\.Error\.rate-limited .*"message":"SIGHTLINE\.Limit\.connections-per-world .*33.*32/);
      for (let i = 0; i < 3; i++) {
        mock.timers.tick(31_000); // past the longest backoff: another dial, hello, refusal
        await settle();
      }
      const dials = ws.sockets.length;
      assert.ok(dials >= 4, `${dials} dials`);
      assert.ok(ws.sockets.slice(0, -1).every((socket) => socket.closedWith?.code === 1000), "each refused socket closed by the module");
      assert.equal(gm.log.length, 1, "no notice for the retries");
      room = true;
      mock.timers.tick(31_000);
      await settle();
      assert.equal(gm.s.status.state, "ready");
      assert.deepEqual(gm.log.at(-1), ["info", "SIGHTLINE.Status.Connected"]);
    } finally {
      mock.timers.reset();
    }
  });

  test("a wrong secret gives a localised error notice", async () => {
    const w = world();
    class Refusing extends ws.FakeWebSocket {
      constructor(url) {
        super(url);
        queueMicrotask(() => this.open());
      }
      send(text) {
        super.send(text);
        queueMicrotask(() => {
          this.receive({ type: "error", code: "unauthorized", message: "bad secret" });
          this.drop(4401);
        });
      }
    }
    const gm = client(w, w.gm, { bus, WebSocket: Refusing });
    gm.s.refreshHolder();
    await settle();
    assert.equal(gm.s.status.state, "error");
    assert.deepEqual(gm.log.at(-1)[0], "error");
    assert.match(gm.log.at(-1)[1], /SIGHTLINE\.Error\.unauthorized/);
  });

  test("the overlay watches the controlled token and draws from the bridge's annotations", async () => {
    const w = world({ settings: { overlayEnabled: true } });
    const watching = autoBridge(ws.FakeWebSocket, ws.sockets, { watch: true });
    const gm = client(w, w.gm, { bus, WebSocket: watching.AutoSocket });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    gm.game.user.targets = new Set([{ id: tgt.id, document: tgt }]);
    await gm.s.updateOverlayWatch();
    await settle();
    const watch = watching.received.find((m) => m.type === "watch");
    assert.deepEqual([watch.scene, watch.action, watch.tokens], ["s-docks", "bs-attack", ["t-fus"]]);
    assert.equal(gm.s.watching, true);
    const pairs = gm.s.overlayPairs(gm.canvas, w.scene);
    assert.deepEqual(pairs.map((p) => [p.actor, p.target, p.ruling?.allowed]), [["t-fus", "t-tgt", false]]);
    assert.equal(watching.received.some((m) => m.type === "adjudicate"), false, "no previews while annotations flow");
    // "Lines to every token" watches the whole scene.
    gm.game.settings.values.overlayAllTokens = true;
    await gm.s.updateOverlayWatch();
    await settle();
    assert.deepEqual(watching.received.filter((m) => m.type === "watch" || m.type === "unwatch").map((m) => m.type), ["watch", "unwatch", "watch"]);
    assert.equal(watching.received.filter((m) => m.type === "watch").at(-1).tokens, null);
  });

  test("without watch on the bridge the overlay falls back to previews (log: false)", async () => {
    const w = world({ settings: { overlayEnabled: true } });
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    gm.s.refreshHolder();
    await settle();
    const [fus, tgt] = w.scene.tokens.contents;
    gm.canvas.tokens.controlled = [{ id: fus.id, document: fus }];
    gm.game.user.targets = new Set([{ id: tgt.id, document: tgt }]);
    await gm.s.updateOverlayWatch();
    await settle();
    assert.equal(gm.s.watcher.supported, false);
    assert.equal(gm.s.overlayPairs(gm.canvas, w.scene)[0].ruling, undefined, "first draw: pending");
    await settle();
    const adj = bridge.received.filter((m) => m.type === "adjudicate");
    assert.deepEqual(adj.map((m) => [m.actor, m.target, m.log]), [["t-fus", "t-tgt", false]]);
    assert.equal(gm.s.overlayPairs(gm.canvas, w.scene)[0].ruling.modifier, -6);
  });

  test("the overlay watches nothing when it is off or nothing is controlled", async () => {
    const w = world({ settings: { overlayEnabled: false } });
    const gm = client(w, w.gm, { bus, WebSocket: bridge.AutoSocket });
    assert.equal(gm.s.overlayWatchSpec(), null);
    gm.game.settings.values.overlayEnabled = true;
    assert.equal(gm.s.overlayWatchSpec(), null, "no controlled token, targets-only mode");
    gm.game.settings.values.overlayAllTokens = true;
    assert.deepEqual(gm.s.overlayWatchSpec(), { scene: "s-docks", action: "bs-attack", reaction: false, tokens: null });
  });
});
