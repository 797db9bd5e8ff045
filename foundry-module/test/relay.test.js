import { test } from "node:test";
import assert from "node:assert/strict";
import { SocketRelay, randomRequestId } from "../scripts/adapters/socket.js";
import { Sightline } from "../scripts/adapters/sightline.js";
import { answeringSocketClass, fakeWebSocketClass } from "./helpers/fake-websocket.js";
import { OWNERSHIP, gameStub, hooksStub, notificationsStub, socketBus, withOwnership } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";

const CHANNEL = "module.sightline-bridge";
const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** A bridge that answers hello, scene.sync and adjudicate, and keeps every message it received. */
function bridgeClass() {
  const { FakeWebSocket } = fakeWebSocketClass();
  const { Socket: Bridge, received } = answeringSocketClass(FakeWebSocket, (m, reply) => {
    if (m.type === "scene.sync") reply({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: 0, tokens: m.scene.tokens.length, walls: 0 });
    else if (m.type === "adjudicate") reply({ type: "adjudication", id: m.id, scene: m.scene, actor: m.actor, target: m.target, action: m.action, allowed: true, modifier: -6, crossings: [], modifiers: [], notes: [], citations: [] });
    else if (m.type === "ping") reply({ type: "pong", id: m.id });
  });
  return { Bridge, received, adjudications: () => received.filter((m) => m.type === "adjudicate") };
}

/**
 * A world as Foundry keeps it: the active scene s-docks (the fusilier is p1's, the target p2's),
 * a hidden scene s-vault with a token, a hidden token in s-docks, one GM and two players; the GM
 * holds the bridge connection. Every client is a real Sightline with its real relay.
 */
async function table({ settings = {}, messages = [] } = {}) {
  const docks = withOwnership(F.scene(), { default: OWNERSHIP.NONE });
  docks.active = true;
  const [fus, tgt] = docks.tokens.contents;
  withOwnership(fus, { default: OWNERSHIP.NONE, p1: OWNERSHIP.OWNER });
  withOwnership(tgt, { default: OWNERSHIP.NONE, p2: OWNERSHIP.OWNER });
  const ambush = withOwnership(F.token({ id: "t-ambush", name: "Ambusher", x: 900, y: 900, hidden: true }), { default: OWNERSHIP.NONE });
  docks.tokens = F.collection([fus, tgt, ambush]);
  const vault = withOwnership(F.scene({ id: "s-vault", name: "Vault", tokens: F.collection([F.token({ id: "t-guard", name: "Guard" })]) }), { default: OWNERSHIP.NONE });
  vault.active = false;
  withOwnership(vault.tokens.contents[0], { default: OWNERSHIP.NONE, p1: OWNERSHIP.OWNER });
  for (const scene of [docks, vault]) for (const t of scene.tokens) t.parent = scene;
  const users = [
    { id: "gm1", name: "GM", isGM: true, active: true },
    { id: "p1", name: "Ana", isGM: false, active: true },
    { id: "p2", name: "Bo", isGM: false, active: true },
  ];
  const bus = socketBus();
  const bridge = bridgeClass();
  const applied = { gm1: [], p1: [], p2: [] };
  const clients = {};
  for (const user of users) {
    const game = gameStub({ user, users, settings, scenes: [docks, vault], socket: bus.client(user.id), system: "gurps", messages });
    const { notifications } = notificationsStub();
    const s = new Sightline({ game, Hooks: hooksStub(), ui: { notifications }, getCanvas: () => ({ scene: docks, tokens: { controlled: [] } }), WebSocket: bridge.Bridge });
    s.applyRuling = (ruling) => applied[user.id].push(ruling);
    s.startRelay();
    clients[user.id] = s;
  }
  clients.gm1.refreshHolder();
  await settle();
  // A rogue client: p2's browser, emitting whatever it likes on the module channel. Foundry still
  // stamps its messages with p2's id, and it hears everything broadcast on the channel.
  const rogueSocket = bus.client("p2");
  const heard = [];
  rogueSocket.on(CHANNEL, (data, from) => heard.push({ data, from }));
  const forge = (data) => rogueSocket.emit(CHANNEL, data);
  return { clients, bridge, applied, forge, heard, docks, vault };
}

const ask = (extra = {}) => ({ type: "adjudicate", scene: "s-docks", actor: "t-fus", target: "t-tgt", action: "bs-attack", reaction: false, log: false, ...extra });

test("a player's adjudicate reaches the bridge as that player, with the answer back", async () => {
  const { clients, bridge } = await table();
  const ruling = await clients.p1.adjudicate("t-fus", "t-tgt", { log: false });
  assert.equal(ruling.modifier, -6);
  const [sent] = bridge.adjudications();
  assert.deepEqual(sent.user, { id: "p1", name: "Ana", gm: false });
  assert.equal(sent.log, false);
  assert.match(sent.id, /^fvtt-/, "the holder assigns its own request id");
});

test("a forged request is forwarded only as its real sender: the payload's user and from are ignored", async () => {
  const { bridge, forge, heard } = await table();
  const rid = randomRequestId();
  // p2 claims to be the GM, in the payload and in the message.
  forge({ kind: "request", rid, from: "gm1", to: "gm1", message: ask({ actor: "t-tgt", target: "t-fus", user: { id: "gm1", name: "GM", gm: true } }) });
  await settle();
  const [sent] = bridge.adjudications();
  assert.deepEqual(sent.user, { id: "p2", name: "Bo", gm: false });
  const answer = heard.find((h) => h.data.kind === "response" && h.data.rid === rid);
  assert.equal(answer.data.to, "p2", "the answer goes to the real sender, not to the payload's from");
  assert.equal(answer.from, "gm1");
});

test("no scene the player cannot view, no token they cannot see, no actor they do not own", async () => {
  const { bridge, forge, heard } = await table();
  const cases = [
    [ask({ scene: "s-vault", actor: "t-guard", target: null }), "unknown-scene"], // a hidden scene, even with an owned token
    [ask({ scene: "s-nowhere" }), "unknown-scene"],
    [ask({ target: "t-ambush", actor: "t-tgt" }), "unknown-token"], // a hidden token answers as a missing one
    [ask(), "unknown-token"], // p2 does not own the fusilier
    [ask({ actor: ["t-tgt"] }), "unknown-token"],
  ];
  const rids = [];
  for (const [message] of cases) {
    const rid = randomRequestId();
    rids.push(rid);
    forge({ kind: "request", rid, to: "gm1", message });
  }
  await settle();
  assert.deepEqual(bridge.adjudications(), [], "nothing forged reached the bridge");
  for (const [i, [, code]] of cases.entries()) {
    const answer = heard.find((h) => h.data.rid === rids[i]);
    assert.equal(answer?.data.ok, false, `case ${i}`);
    assert.equal(answer.data.error.code, code, `case ${i}`);
  }
  assert.doesNotMatch(JSON.stringify(heard), /Ambusher|Vault|Guard/, "refusals name nothing hidden");
});

test("log: true is honoured only for a roll the sender made, once per pair, and never forged", async () => {
  const rollOfBo = { id: "m-bo", author: { id: "p2" }, isRoll: true, rolls: [{}] };
  const rollOfAna = { id: "m-ana", author: { id: "p1" }, isRoll: true, rolls: [{}] };
  const chatOfBo = { id: "m-chat", author: { id: "p2" }, isRoll: false, rolls: [] };
  const { bridge, forge } = await table({ messages: [rollOfBo, rollOfAna, chatOfBo] });
  const send = (extra) => forge({ kind: "request", rid: randomRequestId(), to: "gm1", message: ask({ actor: "t-tgt", target: "t-fus", log: true }), ...extra });
  send({}); // no roll at all
  send({ roll: "m-ana" }); // someone else's roll
  send({ roll: "m-chat" }); // not a roll
  send({ roll: "m-bo" }); // Bo's own roll: logged
  send({ roll: "m-bo" }); // the same roll again: not logged twice
  await settle(20);
  assert.deepEqual(bridge.adjudications().map((m) => m.log), [false, false, false, true, false]);
});

test("the world's log policy: with adjudicate-on-roll off no relayed ruling is logged", async () => {
  const { bridge, forge } = await table({ settings: { adjudicateOnRoll: false }, messages: [{ id: "m-bo", author: { id: "p2" }, isRoll: true, rolls: [{}] }] });
  forge({ kind: "request", rid: randomRequestId(), to: "gm1", roll: "m-bo", message: ask({ actor: "t-tgt", target: "t-fus", log: true }) });
  await settle();
  assert.equal(bridge.adjudications()[0].log, false);
});

test("apply is accepted from the active GM only", async () => {
  const { clients, applied, forge } = await table();
  forge({ kind: "apply", to: "p1", ruling: { modifier: 10 } }); // a player's forgery
  forge({ kind: "apply", to: "gm1", ruling: { modifier: 10 } }); // into the GM's own bucket
  await settle();
  assert.deepEqual(applied, { gm1: [], p1: [], p2: [] });
  clients.gm1.relay.sendApply("p1", { modifier: -6 });
  await settle();
  assert.deepEqual(applied.p1, [{ modifier: -6 }]);
});

test("apply is answered by the roller's client alone: a forged 'applied' settles nothing", async () => {
  const { clients, forge, heard } = await table();
  clients.p1.applyRuling = () => ({ taken: false, reason: "target-dropped", secret: "dropped on the way" });
  const overhear = heard.push.bind(heard);
  // The rogue client overhears the apply to p1 and answers it at once, as if p1 had taken it.
  heard.push = (h) => {
    if (h.data.kind === "apply") forge({ kind: "applied", rid: h.data.rid, to: "gm1", taken: true });
    return overhear(h);
  };
  const answer = await clients.gm1.relay.sendApply("p1", { actor: "t-fus", target: "t-tgt", modifier: -6 });
  assert.deepEqual(answer, { taken: false, reason: "target-dropped" }, "p1's own answer, reduced to what it may say");
  assert.ok(heard.some((h) => h.data.kind === "applied" && h.from === "p1" && h.data.to === "gm1"));
});

test("a GM's Apply the roller's client never answers (it takes apply from another GM) is told to the GM after the wait", async () => {
  const { clients } = await table();
  const warned = [];
  clients.gm1.env.ui.notifications.warn = (text) => warned.push(text);
  clients.gm1.relay.timeoutMs = 30;
  clients.p1.relay.activeGMId = () => "gm2"; // p1's client believes another GM holds the bridge: it drops gm1's apply
  await clients.gm1.confirmFromMessage({ flags: { "sightline-bridge": { rollerId: "p1", ruling: { scene: "s-docks", actor: "t-fus", target: "t-tgt", modifier: -6 } } } });
  assert.deepEqual(warned, ['SIGHTLINE.Confirm.NoAnswer {"user":"Ana","actor":"Fusilier","target":"Target"}']);
});

test("a forged response settles nothing: only the GM that was asked answers, by the unguessable id", async () => {
  const { clients, forge, heard } = await table();
  const forged = [];
  const overhear = heard.push.bind(heard);
  // The rogue client overhears the request (a module channel reaches every client) and answers it
  // at once, long before the GM's client has asked the bridge.
  heard.push = (h) => {
    if (h.data.kind === "request" && h.from === "p1") {
      assert.match(h.data.rid, /^[0-9a-f-]{32,36}$/);
      forge({ kind: "response", rid: h.data.rid, to: "p1", ok: true, result: { modifier: 99 } });
      forged.push(h.data.rid);
    }
    return overhear(h);
  };
  const ruling = await clients.p1.adjudicate("t-fus", "t-tgt", { log: false });
  assert.equal(forged.length, 1);
  assert.equal(ruling.modifier, -6);
});

test("request ids are random: no two alike, none derived from the user", () => {
  const ids = new Set(Array.from({ length: 1000 }, () => randomRequestId()));
  assert.equal(ids.size, 1000);
  for (const id of ids) assert.doesNotMatch(id, /p1|gm1/);
  // Without crypto.randomUUID (plain http is no secure context) 128 random bits still make the id.
  const hex = randomRequestId({ getRandomValues: (a) => globalThis.crypto.getRandomValues(a) });
  assert.match(hex, /^[0-9a-f]{32}$/);
});

test("players cannot relay scene.sync (or anything but adjudicate/ping)", async () => {
  const { clients, bridge, forge, heard } = await table();
  await assert.rejects(clients.p1.relay.request({ type: "scene.sync", scene: {} }), { code: "invalid-message" });
  const rid = randomRequestId();
  forge({ kind: "request", rid, to: "gm1", message: { type: "scene.sync", id: "x", scene: { id: "s-docks" } } });
  await settle();
  assert.equal(bridge.received.filter((m) => m.type === "scene.sync").length, 1, "only the GM's own sync");
  assert.equal(heard.find((h) => h.data.rid === rid).data.error.code, "invalid-message");
});

test("a flood of relayed requests from one player is cut at the relay's rate", async () => {
  const { bridge, forge, heard } = await table();
  for (let i = 0; i < 60; i++) forge({ kind: "request", rid: randomRequestId(), to: "gm1", message: { type: "ping" } });
  await settle(30);
  const refused = heard.filter((h) => h.data.kind === "response" && h.data.error?.code === "rate-limited");
  assert.ok(bridge.received.filter((m) => m.type === "ping").length <= 31);
  assert.ok(refused.length >= 29);
});

test("with no GM online the player is told so at once", async () => {
  const bus = socketBus();
  const player = new SocketRelay({ socket: bus.client("p1"), channel: CHANNEL, userId: "p1", activeGMId: () => null, isHolder: () => false, forward: async () => assert.fail("players never forward") });
  player.start();
  await assert.rejects(player.request({ type: "ping" }), { code: "no-gm" });
});
