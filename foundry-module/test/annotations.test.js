import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { AnnotationStore, SceneWatcher, pairKey, watchMessage } from "../scripts/annotations.js";
import { BridgeConnection } from "../scripts/connection.js";
import { createBackoff } from "../scripts/backoff.js";
import { fakeWebSocketClass } from "./helpers/fake-websocket.js";

const ann = (actor, target, modifier = -3, allowed = true) => ({ actor, target, allowed, modifier, crossings: [], modifiers: [], notes: [], citations: [], line: { start: { x: 0, y: 0, z: 0 }, end: { x: 1, y: 1, z: 0 } } });
const push = (watch, version, full, changed = [], removed = []) => ({ type: "annotations", watch, scene: "s", version, full, changed, removed });
const settle = async (n = 6) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("AnnotationStore", () => {
  test("a push with lists that are not lists, or entries that name no pair, keeps what it can read and never throws", () => {
    const store = new AnnotationStore();
    store.open("w1", { scene: "s", action: "bs-attack" });
    assert.deepEqual(store.apply({ ...push("w1", 1, true), changed: 5, removed: "x" }), { changed: true });
    assert.deepEqual(store.apply(push("w1", 2, false, [null, 7, { actor: 1, target: "b" }, ann("a", "b")], [null, { actor: "a" }])), { changed: true });
    assert.deepEqual(store.all("s").map((a) => pairKey(a.actor, a.target)), ["a->b"]);
    // `full` is a boolean: "yes" is not a full push, so it does not wipe what is held.
    assert.deepEqual(store.apply({ ...push("w1", 3, "yes"), changed: undefined, removed: undefined }), { changed: true });
    assert.equal(store.all("s").length, 1);
  });

  test("a full push replaces the pairs; a partial one upserts changed and drops removed", () => {
    const store = new AnnotationStore();
    store.open("w1", { scene: "s", action: "bs-attack" });
    assert.deepEqual(store.apply(push("w1", 1, true, [ann("a", "b"), ann("a", "c")])), { changed: true });
    assert.deepEqual(store.apply(push("w1", 2, false, [ann("a", "b", -6)], [{ actor: "a", target: "c" }])), { changed: true });
    assert.equal(store.get("s", "a", "b").modifier, -6);
    assert.equal(store.get("s", "a", "c"), undefined);
    assert.equal(store.apply(push("w1", 3, true, [ann("x", "y")])).changed, true);
    assert.deepEqual(store.all("s").map((a) => pairKey(a.actor, a.target)), ["x->y"], "full replaces everything");
  });

  test("an older or repeated version is ignored as stale", () => {
    const store = new AnnotationStore();
    store.open("w1", { scene: "s", action: "bs-attack" });
    store.apply(push("w1", 5, true, [ann("a", "b", -3)]));
    assert.deepEqual(store.apply(push("w1", 5, false, [ann("a", "b", 0)])), { changed: false, stale: true });
    assert.deepEqual(store.apply(push("w1", 4, false, [ann("a", "b", 0)])), { changed: false, stale: true });
    assert.equal(store.get("s", "a", "b").modifier, -3);
  });

  test("a push in parts (more: true) is applied part by part, and reported changed with its last part", () => {
    const store = new AnnotationStore();
    store.open("w1", { scene: "s", action: "bs-attack" });
    assert.deepEqual(store.apply({ ...push("w1", 3, true, [ann("a", "b")]), more: true }), { changed: false, more: true });
    assert.deepEqual(store.apply({ ...push("w1", 3, false, [ann("a", "c")]), more: true }), { changed: false, more: true });
    assert.deepEqual(store.apply({ ...push("w1", 3, false, [ann("b", "a")]), more: false }), { changed: true });
    assert.deepEqual(store.all("s").map((a) => pairKey(a.actor, a.target)).sort(), ["a->b", "a->c", "b->a"]);
    assert.deepEqual(store.apply(push("w1", 3, false, [ann("x", "y")])), { changed: false, stale: true }, "the push ended");
  });

  test("a partial push before any full one is not applied and asks for a full one", () => {
    const store = new AnnotationStore();
    store.open("w1", { scene: "s", action: "bs-attack" });
    assert.deepEqual(store.apply(push("w1", 1, false, [ann("a", "b")])), { changed: false, needsFull: true });
    assert.equal(store.complete("s"), false);
  });

  test("pushes for unknown watches and other message types are ignored", () => {
    const store = new AnnotationStore();
    assert.deepEqual(store.apply(push("nope", 1, true, [ann("a", "b")])), { changed: false });
    assert.deepEqual(store.apply({ type: "pong" }), { changed: false });
  });

  test("watch messages: tokens null means every token", () => {
    assert.deepEqual(watchMessage("w1", { scene: "s", action: "attack" }), { type: "watch", id: "w1", scene: "s", action: "attack", reaction: false, tokens: null, detail: "brief" });
    assert.deepEqual(watchMessage("w2", { scene: "s", action: "attack", tokens: ["t"] }).tokens, ["t"]);
  });
});

/**
 * A scripted bridge with watch support behind the module's real BridgeConnection and a fake
 * WebSocket: answers hello, watch (then pushes a full set), unwatch; the test pushes the rest.
 */
function scriptedWatchBridge({ supportsWatch = true } = {}) {
  const ws = fakeWebSocketClass();
  const received = [];
  class Bridge extends ws.FakeWebSocket {
    constructor(url) {
      super(url);
      queueMicrotask(() => this.open());
    }
    send(text) {
      super.send(text);
      const m = JSON.parse(text);
      received.push(m);
      const reply = (a) => queueMicrotask(() => this.receive(a));
      if (m.type === "hello") reply({ type: "welcome", protocol: 1, bridge: { version: "t" }, rulesets: [] });
      else if (m.type === "watch") {
        if (!supportsWatch) return reply({ type: "error", id: m.id, code: "invalid-message", message: "type: unknown message type watch" });
        reply({ type: "watching", id: m.id, watch: m.id, scene: m.scene, action: m.action });
        const pairs = (m.tokens ?? ["a", "b"]).flatMap((t) => ["a", "b", "c"].filter((o) => o !== t).map((o) => ann(t, o)));
        reply(push(m.id, 1, true, pairs));
      } else if (m.type === "unwatch") reply({ type: "unwatched", id: m.id, watch: m.watch });
    }
  }
  return { ws, Bridge, received, socket: () => ws.sockets.at(-1) };
}

function connect(bridge) {
  let changes = 0;
  let watcher;
  const conn = new BridgeConnection({
    url: "ws://localhost:8765/ws",
    secret: "s",
    identity: () => ({ world: "w", user: { id: "gm", name: "GM", gm: true } }),
    WebSocket: bridge.Bridge,
    backoff: createBackoff({ baseMs: 1, maxMs: 1, jitter: 0 }),
    onReady: () => watcher.rewatch({ reconnected: true }),
  });
  watcher = new SceneWatcher({ request: (m) => conn.request(m), nextId: () => conn.nextId(), onChange: () => (changes += 1) });
  conn.on("status", (s) => s.state !== "ready" && watcher.disconnected());
  conn.on("message", (m) => watcher.handle(m));
  conn.connect();
  return { conn, watcher, changes: () => changes };
}

describe("SceneWatcher against a scripted bridge", () => {
  test("watch → watching → full annotations; later partial pushes update the pairs", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher, changes } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    await settle();
    const sent = bridge.received.filter((m) => m.type === "watch");
    assert.deepEqual(sent.map((m) => m.tokens), [["a"]]);
    assert.deepEqual(watcher.annotations().map((a) => `${a.actor}->${a.target}`).sort(), ["a->b", "a->c"]);
    const before = changes();
    bridge.socket().receive(push(watcher.active.id, 2, false, [ann("a", "b", 0, false)], [{ actor: "a", target: "c" }]));
    assert.equal(changes(), before + 1);
    assert.deepEqual(watcher.annotations().map((a) => [a.target, a.allowed]), [["b", false]]);
  });

  test("a new wish unwatches the old watch first; the same wish sends nothing; null unwatches", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    const first = watcher.active.id;
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    await watcher.want({ scene: "s", action: "bs-attack", tokens: null });
    await watcher.want(null);
    await settle();
    assert.deepEqual(bridge.received.filter((m) => m.type === "watch" || m.type === "unwatch").map((m) => [m.type, m.type === "watch" ? m.tokens : m.watch]), [
      ["watch", ["a"]],
      ["unwatch", first],
      ["watch", null],
      ["unwatch", bridge.received.filter((m) => m.type === "watch")[1].id],
    ]);
    assert.equal(watcher.active, null);
    assert.deepEqual(watcher.annotations(), []);
  });

  test("after a reconnect the wish is watched again on the new connection, with a fresh full set", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: null });
    await settle();
    assert.equal(watcher.annotations().length, 4);
    bridge.socket().drop(1006);
    assert.equal(watcher.active, null, "the bridge forgot the watch");
    assert.deepEqual(watcher.annotations(), []);
    await new Promise((r) => setTimeout(r, 10));
    await settle(10);
    assert.equal(bridge.ws.sockets.length, 2);
    assert.deepEqual(bridge.ws.sockets[1].sent.map((m) => m.type), ["hello", "watch"]);
    assert.equal(watcher.annotations().length, 4);
  });

  test("a resync re-watches: the old watch is unwatched, a new one sent", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    const old = watcher.active.id;
    await watcher.rewatch();
    await settle();
    assert.deepEqual(bridge.received.slice(-2).map((m) => [m.type, m.watch ?? m.tokens]), [["unwatch", old], ["watch", ["a"]]]);
    assert.notEqual(watcher.active.id, old);
  });

  test("the bridge dropping the watch on its own clears its pairs until the next rewatch", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    await settle();
    bridge.socket().receive({ type: "unwatched", watch: watcher.active.id, reason: "scene removed" });
    assert.equal(watcher.active, null);
    assert.equal(watcher.dropped, "scene removed");
    assert.deepEqual(watcher.annotations(), []);
  });

  test("a push for another watch id is not taken", async () => {
    const bridge = scriptedWatchBridge();
    const { watcher } = connect(bridge);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    assert.equal(watcher.handle(push("someone-else", 9, true, [ann("x", "y")])), false);
  });

  test("a bridge without watch: marked unsupported once, no retries until a reconnect", async () => {
    const bridge = scriptedWatchBridge({ supportsWatch: false });
    let unsupported = 0;
    const { watcher } = connect(bridge);
    watcher._onUnsupported = () => (unsupported += 1);
    await settle();
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["a"] });
    await watcher.want({ scene: "s", action: "bs-attack", tokens: ["b"] });
    await settle();
    assert.equal(watcher.supported, false);
    assert.equal(unsupported, 1);
    assert.equal(bridge.received.filter((m) => m.type === "watch").length, 1);
  });
});
