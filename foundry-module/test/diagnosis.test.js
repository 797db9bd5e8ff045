/**
 * Connection diagnosis: bridge not running, wrong secret, mixed content and Chrome's Local Network
 * Access (a page of a public address reaching a loopback or private one) told apart, by address
 * space and by "Test connection" against a real `sightline serve` and a port nobody listens on.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import WebSocket, { WebSocketServer } from "ws";
import { createBackoff } from "../scripts/backoff.js";
import { BridgeConnection, addressSpace, diagnoseUnreachable, localNetworkAccess, localNetworkPermission, testConnection } from "../scripts/connection.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";
import { fakeWebSocketClass } from "./helpers/fake-websocket.js";
import { testResultText } from "../scripts/adapters/settings.js";

const identity = () => ({ world: "w-test", foundry: "13.346", system: "gurps", user: { id: "gm1", name: "GM", gm: true } });
const PUBLIC_HTTPS = { hostname: "ashes.forge-vtt.com", host: "ashes.forge-vtt.com", protocol: "https:" };
const PUBLIC_HTTP = { hostname: "203.0.113.7", host: "203.0.113.7:30000", protocol: "http:" };
const LOCAL_PAGE = { hostname: "localhost", host: "localhost:30000", protocol: "http:" };
const LAN_PAGE = { hostname: "192.168.1.10", host: "192.168.1.10:30000", protocol: "http:" };

/** A port on 127.0.0.1 that nothing listens on (bound, read, released). */
async function closedPort() {
  const server = createServer();
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  await new Promise((r) => server.close(r));
  return port;
}

describe("address spaces", () => {
  test("loopback, private and public hosts as Chrome sorts them", () => {
    for (const h of ["localhost", "app.localhost", "127.0.0.1", "127.3.2.1", "[::1]"]) assert.equal(addressSpace(h), "loopback", h);
    for (const h of ["10.1.2.3", "172.16.0.1", "172.31.255.1", "192.168.1.20", "169.254.1.1", "[fd00::1]", "nas.local"]) assert.equal(addressSpace(h), "private", h);
    for (const h of ["172.32.0.1", "8.8.8.8", "ashes.forge-vtt.com", "bridge.example.com"]) assert.equal(addressSpace(h), "public", h);
  });

  test("local network access applies from a more public page to a more private bridge only", () => {
    assert.deepEqual(localNetworkAccess(PUBLIC_HTTPS, "ws://localhost:8765/ws"), { page: "public", bridge: "loopback", secure: true });
    assert.deepEqual(localNetworkAccess(PUBLIC_HTTP, "ws://192.168.1.5:8765/ws"), { page: "public", bridge: "private", secure: false });
    assert.deepEqual(localNetworkAccess(LAN_PAGE, "ws://127.0.0.1:8765/ws"), { page: "private", bridge: "loopback", secure: false });
    assert.equal(localNetworkAccess(LOCAL_PAGE, "ws://localhost:8765/ws"), null);
    assert.equal(localNetworkAccess(LAN_PAGE, "ws://192.168.1.5:8765/ws"), null);
    assert.equal(localNetworkAccess(PUBLIC_HTTPS, "wss://bridge.example.com/ws"), null);
  });

  test("a failure is named by where the page and the bridge are, and by the permission", () => {
    assert.equal(diagnoseUnreachable({ page: LOCAL_PAGE, url: "ws://localhost:8765/ws" }), "unreachable");
    assert.equal(diagnoseUnreachable({ page: PUBLIC_HTTPS, url: "ws://localhost:8765/ws" }), "local-network");
    assert.equal(diagnoseUnreachable({ page: PUBLIC_HTTPS, url: "ws://localhost:8765/ws", permission: "denied" }), "local-network-denied");
    assert.equal(diagnoseUnreachable({ page: PUBLIC_HTTP, url: "ws://192.168.1.5:8765/ws" }), "local-network-insecure");
  });

  test("the permission is read under each name Chrome has used; unknown names are skipped", async () => {
    const asked = [];
    const permissions = {
      query: async ({ name }) => {
        asked.push(name);
        if (name === "local-network-access") throw new TypeError("not a valid enum value");
        return { state: name === "loopback-network" ? "denied" : "prompt" };
      },
    };
    assert.equal(await localNetworkPermission(permissions), "denied");
    assert.deepEqual(asked, ["local-network-access", "local-network", "loopback-network"]);
    assert.equal(await localNetworkPermission(undefined), null);
  });

  test("the live connection reports local-network (not 'is serve running?') when a public page's dial fails", () => {
    const { FakeWebSocket, sockets } = fakeWebSocketClass();
    const statuses = [];
    const conn = new BridgeConnection({ url: "ws://localhost:8765/ws", secret: "s", identity, WebSocket: FakeWebSocket, pageProtocol: "https:", page: PUBLIC_HTTPS, setTimeout: () => 0, clearTimeout: () => {} });
    conn.on("status", (s) => statuses.push(s));
    conn.connect();
    sockets[0].drop(1006);
    assert.equal(statuses.at(-1).state, "reconnecting");
    assert.equal(statuses.at(-1).error.code, "local-network");
  });
});

describe("Test connection", { skip: bridgeSkipReason() }, () => {
  let bridge;
  before(async () => {
    bridge = await startRealBridge("right-secret");
  });
  after(async () => bridge?.close());

  test("the right secret: ok, with the bridge's version", async () => {
    const r = await testConnection({ url: bridge.url, secret: "right-secret", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
    assert.equal(r.ok, true);
    assert.equal(r.code, "ok");
    assert.equal(typeof r.bridge.version, "string");
  });

  test("a wrong secret: unauthorized", async () => {
    const r = await testConnection({ url: bridge.url, secret: "wrong", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
    assert.deepEqual([r.ok, r.code], [false, "unauthorized"]);
  });

  test("nothing listening: 'unreachable' from a local page, 'local-network' from a public https page, 'local-network-insecure' from public http", async () => {
    const url = `ws://127.0.0.1:${await closedPort()}/ws`;
    assert.equal((await testConnection({ url, secret: "x", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined })).code, "unreachable");
    assert.equal((await testConnection({ url, secret: "x", identity, WebSocket, page: PUBLIC_HTTPS, permissions: undefined })).code, "local-network");
    assert.equal((await testConnection({ url, secret: "x", identity, WebSocket, page: PUBLIC_HTTP, permissions: undefined })).code, "local-network-insecure");
  });

  test("a bridge that turns this page's origin away (--allow-origin, HTTP 403): the text names that cause too", async () => {
    const strict = await startRealBridge("right-secret", ["--allow-origin", "https://game.example"]);
    try {
      const r = await testConnection({ url: strict.url, secret: "right-secret", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
      assert.equal(r.code, "unreachable", "a browser cannot tell a 403 from a refused port: both close 1006 unopened");
      const en = JSON.parse(readFileSync(new URL("../lang/en.json", import.meta.url), "utf8")).SIGHTLINE;
      const text = testResultText(r, { localize: (k, data = {}) => k.split(".").slice(1).reduce((o, p) => o?.[p], en).replace(/\{(\w+)\}/g, (_, n) => data[n]), url: strict.url });
      assert.match(text, /--allow-origin/);
    } finally {
      await strict.close();
    }
  });

  test("a blocked permission, mixed content, a bad URL and no secret are told before dialling", async () => {
    const denied = { query: async () => ({ state: "denied" }) };
    assert.equal((await testConnection({ url: bridge.url, secret: "right-secret", identity, WebSocket, page: PUBLIC_HTTPS, permissions: denied })).code, "local-network-denied");
    assert.equal((await testConnection({ url: "ws://bridge.example.com/ws", secret: "x", identity, WebSocket, page: PUBLIC_HTTPS })).code, "mixed-content");
    assert.equal((await testConnection({ url: "bridge.example.com", secret: "x", identity, WebSocket, page: PUBLIC_HTTPS })).code, "invalid-url");
    assert.equal((await testConnection({ url: bridge.url, secret: "", identity, WebSocket, page: LOCAL_PAGE })).code, "no-secret");
  });
});

describe("a world with its most connections on the real bridge", { skip: bridgeSkipReason() }, () => {
  test("the refused connection says why, retries, and is welcomed once a place frees", async () => {
    const bridge = await startRealBridge("s", ["--max-connections-per-world", "1"]);
    const quick = () => createBackoff({ baseMs: 50, maxMs: 200 });
    const open = () => new BridgeConnection({ url: bridge.url, secret: "s", identity, WebSocket, page: LOCAL_PAGE, pageProtocol: "http:", backoff: quick(), handshakeTimeoutMs: 5_000 });
    const until = async (what, ok, ms = 10_000) => {
      const end = Date.now() + ms;
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const first = open();
    const second = open();
    try {
      first.connect();
      await until("the first connection's welcome", () => first.state === "ready");
      const states = [];
      second.on("status", (status) => states.push(status.state));
      second.connect();
      await until("the second's refusal", () => second.error?.code === "rate-limited");
      assert.match(second.error.message, /already has 1 connection/);
      assert.equal(second.state, "reconnecting");
      await until("a retry refused in turn", () => states.filter((s) => s === "handshaking").length >= 2);
      assert.equal(first.state, "ready", "the admitted connection is untouched");
      first.close();
      await until("the second's welcome once the first has left", () => second.state === "ready");
    } finally {
      first.close();
      second.close();
      await bridge.close();
    }
  });
});

describe("Test connection says what happened, in the reader's words (one dial, nothing retried)", () => {
  const lang = (code) => JSON.parse(readFileSync(new URL(`../lang/${code}.json`, import.meta.url), "utf8"));
  /** Foundry's i18n.format over a language file. */
  const formatter = (strings) => (key, data = {}) => {
    const text = key.split(".").reduce((o, k) => o?.[k], strings);
    return typeof text === "string" ? text.replace(/\{(\w+)\}/g, (_, k) => data[k] ?? `{${k}}`) : key;
  };
  const en = formatter(lang("en"));
  const es = formatter(lang("es"));

  /** A WebSocket server on port 0 that does `onHello(socket, hello)` with the module's hello. */
  async function fakeBridge(onHello) {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" });
    await new Promise((r) => wss.once("listening", r));
    wss.on("connection", (socket) => socket.once("message", (data) => onHello(socket, JSON.parse(String(data)))));
    const { port } = /** @type {import("node:net").AddressInfo} */ (wss.address());
    return { url: `ws://127.0.0.1:${port}/ws`, close: () => new Promise((r) => wss.close(() => r(undefined))) };
  }

  test("a bridge shutting down (1001) before the welcome: 'closed' with that meaning, never 'connection lost; reconnecting'", async () => {
    const bridge = await fakeBridge((socket) => socket.close(1001, "bridge shutting down"));
    try {
      const r = await testConnection({ url: bridge.url, secret: "s", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
      assert.deepEqual([r.ok, r.code, r.close, r.message], [false, "closed", 1001, "bridge shutting down"]);
      const text = testResultText(r, { localize: en, url: bridge.url });
      assert.match(text, /closed the connection before accepting it \(close code 1001: the bridge is shutting down or restarting/);
      assert.doesNotMatch(text, /reconnect|retry|SIGHTLINE\./i);
      assert.match(testResultText(r, { localize: es, url: bridge.url }), /código de cierre 1001: el puente se está apagando/);
    } finally {
      await bridge.close();
    }
  });

  test("a greeting the bridge refuses (an error, then 4400): the close's meaning and the bridge's own words", async () => {
    const bridge = await fakeBridge((socket) => {
      socket.send(JSON.stringify({ type: "error", code: "invalid-message", message: "hello.protocol: expected 1" }));
      socket.close(4400, "invalid-message");
    });
    try {
      const r = await testConnection({ url: bridge.url, secret: "s", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
      assert.deepEqual([r.code, r.close, r.message], ["closed", 4400, "hello.protocol: expected 1"]);
      const text = testResultText(r, { localize: en, url: bridge.url });
      assert.match(text, /did not accept the module's greeting .* It said: “The bridge refused the message as invalid: hello\.protocol: expected 1”/);
    } finally {
      await bridge.close();
    }
  });

  test("a server that takes the connection and never greets back: 'no-welcome', not 'lost'", async () => {
    const bridge = await fakeBridge(() => {});
    try {
      const r = await testConnection({ url: bridge.url, secret: "s", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined, timeoutMs: 300 });
      assert.deepEqual([r.code, r.seconds], ["timeout", 0]);
      assert.match(testResultText({ ...r, seconds: 5 }, { localize: en, url: bridge.url }), /did not answer the bridge's greeting within 5 seconds/);
    } finally {
      await bridge.close();
    }
  });

  test("a TCP server that never answers the upgrade: 'no-answer'; a closed port: 'refused'", async () => {
    const held = new Set();
    const silent = createServer((socket) => held.add(socket));
    await new Promise((r) => silent.listen(0, "127.0.0.1", r));
    const { port } = /** @type {import("node:net").AddressInfo} */ (silent.address());
    try {
      const r = await testConnection({ url: `ws://127.0.0.1:${port}/ws`, secret: "s", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined, timeoutMs: 300 });
      assert.equal(r.code, "no-answer");
      assert.match(testResultText(r, { localize: en, url: "ws://x/ws" }), /^Test failed: nothing answered at ws:\/\/x\/ws within 0 seconds/);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((r) => silent.close(r));
    }
    const refused = await testConnection({ url: `ws://127.0.0.1:${await closedPort()}/ws`, secret: "s", identity, WebSocket, page: LOCAL_PAGE, permissions: undefined });
    assert.equal(refused.code, "unreachable");
    const text = testResultText(refused, { localize: en, url: "ws://127.0.0.1:1/ws" });
    assert.match(text, /no WebSocket connection could be opened at ws:\/\/127\.0\.0\.1:1\/ws\. Either nothing listens/);
    assert.doesNotMatch(text, /keeps retrying/);
    assert.match(testResultText(refused, { localize: es, url: "u" }), /no se pudo abrir una conexión WebSocket en u/);
  });
});
