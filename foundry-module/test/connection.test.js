import { test, describe, beforeEach, afterEach, mock } from "node:test";
import assert from "node:assert/strict";
import { BridgeConnection, checkUrl, classifyClose, testConnection } from "../scripts/connection.js";
import { createBackoff } from "../scripts/backoff.js";
import { fakeWebSocketClass } from "./helpers/fake-websocket.js";

const identity = () => ({ world: "w-ashes", foundry: "13.345", system: "gurps", user: { id: "u1", name: "GM", gm: true } });
const welcome = { type: "welcome", protocol: 1, bridge: { version: "0.1.0" }, rulesets: [{ id: "infinity-n4", editions: ["current"] }] };
const flush = () => new Promise((r) => setImmediate(r));

describe("checkUrl", () => {
  test("takes ws:// and wss:// URLs as typed", () => {
    assert.deepEqual(checkUrl("ws://localhost:8765/ws"), { ok: true, url: "ws://localhost:8765/ws" });
    assert.equal(checkUrl("wss://bridge.example.com/ws", "https:").ok, true);
  });
  test("never guesses a scheme", () => {
    assert.equal(checkUrl("localhost:8765/ws").code, "invalid-url");
    assert.equal(checkUrl("bridge.example.com").code, "invalid-url");
    assert.equal(checkUrl("https://bridge.example.com/ws").code, "invalid-url");
  });
  test("an https page with a remote ws:// URL is mixed content; loopback is allowed", () => {
    const verdict = checkUrl("ws://192.168.1.20:8765/ws", "https:");
    assert.equal(verdict.code, "mixed-content");
    assert.match(verdict.message, /wss:\/\//);
    assert.match(verdict.message, /localhost/);
    assert.equal(checkUrl("ws://localhost:8765/ws", "https:").ok, true);
    assert.equal(checkUrl("ws://127.0.0.1:8765/ws", "https:").ok, true);
    assert.equal(checkUrl("ws://192.168.1.20:8765/ws", "http:").ok, true);
  });
});

describe("classifyClose", () => {
  test("wrong secret: close 4401 or an unauthorized error, no retry", () => {
    assert.deepEqual(classifyClose({ code: 4401 }, { opened: true, handshakeDone: false }), { code: "unauthorized", retry: false });
    assert.deepEqual(classifyClose({ code: 1000 }, { opened: true, handshakeDone: false, lastError: { code: "unauthorized" } }), { code: "unauthorized", retry: false });
  });
  test("never opened: unreachable, retry; lost after welcome: retry", () => {
    assert.deepEqual(classifyClose({ code: 1006 }, { opened: false, handshakeDone: false }), { code: "unreachable", retry: true });
    assert.deepEqual(classifyClose({ code: 1006 }, { opened: true, handshakeDone: true }), { code: "lost", retry: true });
    assert.deepEqual(classifyClose({ code: 1008 }, { opened: true, handshakeDone: false, lastError: { code: "unsupported-protocol" } }).retry, false);
  });
  test("closed with 1009 (a frame too large) or 1011 (the bridge failed): said so, and retried", () => {
    assert.deepEqual(classifyClose({ code: 1009 }, { opened: true, handshakeDone: true }), { code: "too-big", retry: true });
    assert.deepEqual(classifyClose({ code: 1011 }, { opened: true, handshakeDone: true }), { code: "bridge-failed", retry: true });
    assert.deepEqual(classifyClose({ code: 4000 }, { opened: true, handshakeDone: false, lastError: { code: "timeout" } }), { code: "no-answer", retry: true });
  });
  test("hello answered rate-limited (no room for the world): rate-limited, retry", () => {
    assert.deepEqual(classifyClose({ code: 1000 }, { opened: true, handshakeDone: false, lastError: { code: "rate-limited" } }), { code: "rate-limited", retry: true });
  });
});

describe("BridgeConnection", () => {
  let ws;
  let statuses;
  let readies;
  let conn;
  beforeEach(() => {
    mock.timers.enable({ apis: ["setTimeout"] });
    ws = fakeWebSocketClass();
    statuses = [];
    readies = 0;
    conn = new BridgeConnection({
      url: "ws://localhost:8765/ws",
      secret: "s3cret",
      identity,
      WebSocket: ws.FakeWebSocket,
      pageProtocol: "http:",
      backoff: createBackoff({ baseMs: 1000, maxMs: 8000, jitter: 0 }),
      onReady: async (c) => {
        readies += 1;
        await c.request({ type: "scene.sync", scene: { id: "s" } }).catch(() => {});
      },
    });
    conn.on("status", (s) => statuses.push(s.state + (s.error ? `:${s.error.code}` : "")));
  });
  afterEach(() => mock.timers.reset());

  test("says hello at once, becomes ready on welcome and syncs", async () => {
    conn.connect();
    const [sock] = ws.sockets;
    sock.open();
    assert.equal(sock.sent[0].type, "hello");
    assert.equal(sock.sent[0].secret, "s3cret");
    assert.equal(sock.sent[0].protocol, 1);
    sock.receive(welcome);
    await flush();
    assert.equal(conn.state, "ready");
    assert.equal(readies, 1);
    assert.equal(sock.sent[1].type, "scene.sync");
    assert.deepEqual(statuses, ["connecting", "handshaking", "ready"]);
  });

  test("requests are answered by id", async () => {
    conn.connect();
    const [sock] = ws.sockets;
    sock.open();
    sock.receive(welcome);
    await flush();
    const answer = conn.request({ type: "ping" });
    const sent = sock.sent.at(-1);
    assert.equal(sent.type, "ping");
    sock.receive({ type: "pong", id: sent.id });
    assert.deepEqual(await answer, { type: "pong", id: sent.id });
  });

  test("wrong secret: error state, no reconnection", async () => {
    conn.connect();
    const [sock] = ws.sockets;
    sock.open();
    sock.receive({ type: "error", code: "unauthorized", message: "bad secret" });
    sock.drop(4401, "unauthorized");
    assert.equal(conn.state, "error");
    assert.equal(conn.error.code, "unauthorized");
    mock.timers.tick(60_000);
    assert.equal(ws.sockets.length, 1);
  });

  test("unreachable bridge: reconnects with growing, capped delays", () => {
    conn.connect();
    ws.sockets[0].drop(1006);
    assert.equal(conn.state, "reconnecting");
    assert.equal(conn.error.code, "unreachable");
    const delays = [];
    for (let i = 1; i <= 5; i++) {
      let t = 0;
      while (ws.sockets.length === i) {
        mock.timers.tick(100);
        t += 100;
      }
      delays.push(t);
      ws.sockets[i].drop(1006);
    }
    assert.deepEqual(delays, [1000, 2000, 4000, 8000, 8000]);
  });

  test("after a lost connection: reconnect, hello again, full resync; pending requests fail", async () => {
    conn.connect();
    ws.sockets[0].open();
    ws.sockets[0].receive(welcome);
    await flush();
    const inflight = conn.request({ type: "ping" });
    ws.sockets[0].drop(1006);
    await assert.rejects(inflight, { code: "disconnected" });
    assert.equal(conn.error.code, "lost");
    await assert.rejects(conn.request({ type: "ping" }), { code: "not-connected" });
    mock.timers.tick(1000);
    const second = ws.sockets[1];
    second.open();
    second.receive(welcome);
    await flush();
    assert.equal(readies, 2);
    assert.deepEqual(second.sent.map((m) => m.type), ["hello", "scene.sync"]);
  });

  test("mixed content is refused before dialling", () => {
    const c = new BridgeConnection({ url: "ws://bridge.lan:8765/ws", secret: "x", identity, WebSocket: ws.FakeWebSocket, pageProtocol: "https:" });
    c.connect();
    assert.equal(c.state, "error");
    assert.equal(c.error.code, "mixed-content");
    assert.equal(ws.sockets.length, 0);
  });

  test("no welcome within the handshake timeout ends the attempt as no-answer and retries", () => {
    conn.connect();
    ws.sockets[0].open();
    mock.timers.tick(10_000);
    assert.deepEqual(ws.sockets[0].closedWith, { code: 4000, reason: "no welcome" });
    assert.equal(conn.state, "reconnecting");
    assert.equal(conn.error.code, "no-answer");
    ws.sockets[0].drop(4000); // its close event, later, changes nothing
    assert.deepEqual(statuses, ["connecting", "handshaking", "reconnecting:no-answer"]);
  });

  test("a socket that never opens (the upgrade unanswered) ends at the handshake timeout too, and is dialled again", () => {
    conn.connect();
    mock.timers.tick(9_999);
    assert.equal(conn.state, "connecting");
    mock.timers.tick(1);
    assert.ok(ws.sockets[0].closedWith, "the module closed it");
    assert.deepEqual(statuses, ["connecting", "reconnecting:no-answer"]);
    mock.timers.tick(1000);
    assert.equal(ws.sockets.length, 2);
  });

  test("a rate-limited answer to hello closes the socket at once and reconnects with backoff, showing the bridge's message", async () => {
    const refusal = {
      type: "error",
      code: "rate-limited",
      message: "world 'w-ashes' already has 2 connections, the most this bridge allows",
      details: { limit: "connections-per-world", value: 3, max: 2 },
    };
    const events = [];
    conn.on("status", (s) => events.push(s));
    conn.connect();
    const [first] = ws.sockets;
    first.open();
    first.receive(refusal); // the bridge leaves its socket open: the module does not wait for a close
    assert.deepEqual(first.closedWith, { code: 1000, reason: "rate-limited" });
    assert.equal(conn.state, "reconnecting");
    // The details stay beside the message: the GM reads the limit in their own words (errors.js).
    assert.deepEqual(conn.error, { code: "rate-limited", message: refusal.message, details: refusal.details });
    assert.deepEqual(events.at(-1), { state: "reconnecting", error: { code: "rate-limited", message: refusal.message, details: refusal.details }, delay: 1000 });
    first.drop(1000, "rate-limited"); // its close event, later, changes nothing
    assert.deepEqual(statuses, ["connecting", "handshaking", "reconnecting:rate-limited"]);
    mock.timers.tick(999);
    assert.equal(ws.sockets.length, 1);
    mock.timers.tick(1);
    const second = ws.sockets[1];
    second.open();
    assert.equal(second.sent[0].type, "hello");
    second.receive(refusal);
    assert.equal(second.closedWith?.code, 1000);
    mock.timers.tick(1999); // the backoff grows while the refusals go on
    assert.equal(ws.sockets.length, 2);
    mock.timers.tick(1);
    const third = ws.sockets[2];
    third.open();
    third.receive(welcome);
    await flush();
    assert.equal(conn.state, "ready");
    assert.equal(conn.error, null);
    assert.equal(readies, 1);
    mock.timers.tick(60_000); // no handshake timeout of a refused attempt fires later
    assert.equal(ws.sockets.length, 3);
    assert.equal(third.closedWith, null);
  });

  test("unauthorized during the handshake still ends in the error state, never retried", () => {
    conn.connect();
    ws.sockets[0].open();
    ws.sockets[0].receive({ type: "error", code: "unauthorized", message: "wrong or missing secret for world 'w-ashes'" });
    assert.equal(ws.sockets[0].closedWith, null); // the bridge closes (4401), not the module
    ws.sockets[0].drop(4401, "unauthorized");
    assert.equal(conn.state, "error");
    assert.deepEqual(conn.error, { code: "unauthorized", message: "wrong or missing secret for world 'w-ashes'", details: {} });
    mock.timers.tick(60_000);
    assert.equal(ws.sockets.length, 1);
  });

  test("close() stops reconnecting", () => {
    conn.connect();
    ws.sockets[0].drop(1006);
    conn.close();
    mock.timers.tick(60_000);
    assert.equal(ws.sockets.length, 1);
    assert.equal(conn.state, "closed");
  });
});

describe("testConnection", () => {
  test("a rate-limited answer to hello ends the test at once with the bridge's message", async () => {
    const ws = fakeWebSocketClass();
    const result = testConnection({ url: "ws://localhost:8765/ws", secret: "s3cret", identity, WebSocket: ws.FakeWebSocket, page: null, permissions: undefined });
    await flush();
    const [sock] = ws.sockets;
    sock.open();
    assert.equal(sock.sent[0].type, "hello");
    sock.receive({ type: "error", code: "rate-limited", message: "world 'w-ashes' already has 2 connections, the most this bridge allows" });
    assert.deepEqual(await result, { ok: false, code: "rate-limited", message: "world 'w-ashes' already has 2 connections, the most this bridge allows", details: {} });
    assert.deepEqual(sock.closedWith, { code: 1000, reason: "test done" });
  });
});
