/**
 * A bridge that misbehaves, over real WebSocket connections (a `ws` server on port 0 plays the bridge,
 * the module dials it with the `ws` client): odd messages, closes with 1009 and 1011, a server that
 * never answers, the Bridge URL cleared. Nothing may throw out of the module, the GM gets one notice
 * per outage, and the retries back off and stop when told to. Foundry's globals are the stubs.
 */
import { test, describe, afterEach } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import WebSocket, { WebSocketServer } from "ws";
import { BridgeConnection } from "../scripts/connection.js";
import { createBackoff } from "../scripts/backoff.js";
import * as F from "./helpers/fixtures.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";
import { gmClient as gmClientOf, refusedSceneClient, sleep, until } from "./helpers/gm-client.js";

const WELCOME = { type: "welcome", protocol: 1, bridge: { version: "scripted" }, rulesets: [{ id: "infinity-n4", editions: ["current"] }] };
const identity = () => ({ world: "w-ashes", user: { id: "gm1", name: "GM", gm: true } });

const closers = [];
afterEach(async () => {
  while (closers.length) await closers.pop()();
});

/**
 * A scripted bridge on 127.0.0.1, port 0. `answer(message, socket)` plays it after the welcome; it
 * counts the connections it accepted (`dials`).
 */
async function scriptedBridge(answer) {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" });
  await new Promise((r) => wss.on("listening", r));
  const state = { dials: 0, received: [], url: `ws://127.0.0.1:${wss.address().port}/ws` };
  wss.on("connection", (sock) => {
    state.dials += 1;
    sock.on("message", (data) => {
      const m = JSON.parse(String(data));
      state.received.push(m);
      if (m.type === "hello") sock.send(JSON.stringify(WELCOME));
      else answer(m, sock);
    });
  });
  closers.push(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise((r) => wss.close(r));
  });
  return state;
}

/** The answers of a bridge that does its job. */
function ordinary(m, sock) {
  const send = (a) => sock.send(JSON.stringify(a));
  if (m.type === "scene.sync") send({ type: "scene.synced", id: m.id, scene: m.scene.id, regions: m.scene.regions.length, tokens: m.scene.tokens.length, walls: m.scene.walls.length });
  else if (m.type === "scene.patch") send({ type: "scene.patched", id: m.id, scene: m.scene });
  else if (m.type === "adjudicate") send({ type: "adjudication", id: m.id, scene: m.scene, actor: m.actor, target: m.target, action: m.action, reaction: false, ruleset: "infinity-n4", edition: "current", allowed: true, modifier: -3, crossings: [], modifiers: [], notes: [], citations: [] });
  else if (m.type === "watch") send({ type: "watching", id: m.id, watch: m.id, scene: m.scene, action: m.action });
  else send({ type: "error", id: m.id, code: "invalid-message", message: `type: ${m.type}` });
}

/** A GM client of a one-scene world (Foundry's globals stubbed), dialling `url` with the real `ws` client. */
const gmClient = (url) => gmClientOf(url, { closers });

/** Everything that escapes to the process (an exception or a rejection nobody handles) while `body` runs. */
async function escapes(body) {
  const seen = [];
  const onError = (err) => seen.push(err);
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  try {
    await body();
    await sleep(50);
  } finally {
    process.off("uncaughtException", onError);
    process.off("unhandledRejection", onError);
  }
  return seen;
}

describe("a bridge that closes the connection on the resync", () => {
  for (const [code, notice] of [[1009, "too-big"], [1011, "bridge-failed"]]) {
    test(`close ${code} after every welcome: retried with growing pauses, one notice saying why`, async () => {
      const bridge = await scriptedBridge((m, sock) => {
        if (m.type === "scene.sync") sock.close(code, code === 1009 ? "message too big" : "internal error");
      });
      const gm = gmClient(bridge.url);
      gm.s.refreshHolder();
      await until(() => bridge.dials >= 4, "four dials", 8000);
      assert.equal(gm.log.filter(([, m]) => /SIGHTLINE\.Status\.Connected/.test(m)).length, 0, "never told 'connected': the resync never went through");
      assert.equal(gm.log.length, 1, `one notice for the outage: ${JSON.stringify(gm.log)}`);
      assert.equal(gm.log[0][0], "warn");
      assert.match(gm.log[0][1], new RegExp(`^SIGHTLINE\\.Error\\.${notice} `));
    });
  }

  test("the pauses between attempts grow while the bridge closes on every resync, and start over once one goes through", async () => {
    let refuse = 4;
    const bridge = await scriptedBridge((m, sock) => {
      if (m.type === "scene.sync" && refuse-- > 0) sock.close(1009, "message too big");
      else ordinary(m, sock);
    });
    const delays = [];
    const conn = new BridgeConnection({
      url: bridge.url,
      secret: "s",
      identity,
      WebSocket,
      page: null,
      backoff: createBackoff({ baseMs: 40, maxMs: 10_000, jitter: 0 }),
      onReady: (c) => c.request({ type: "scene.sync", scene: { id: "s", regions: [], tokens: [], walls: [] } }),
    });
    closers.push(async () => conn.close());
    let settled = 0;
    conn.on("settled", () => (settled += 1));
    conn.on("status", (s) => s.state === "reconnecting" && s.error && delays.push([s.error.code, s.delay]));
    conn.connect();
    await until(() => settled === 1, "a resync that goes through", 8000);
    assert.deepEqual(delays, [["too-big", 40], ["too-big", 80], ["too-big", 160], ["too-big", 320]]);
    // Settled: the next outage starts from the first pause again.
    conn.socket.close(1011, "bye");
    await until(() => delays.length === 5, "the fifth pause");
    assert.equal(delays[4][1], 40);
  });
});

describe("the real bridge closing with 1009", () => {
  test("a scene over four times --max-frame-bytes: the real bridge closes with 1009; one notice, no redial storm", { skip: bridgeSkipReason() }, async () => {
    const bridge = await startRealBridge("s3cret", ["--max-frame-bytes", "1000"]);
    closers.push(() => bridge.close());
    const gm = gmClient(bridge.url);
    // 120 walls: a scene.sync of about 14 KB, over the 4,000 bytes the bridge reads before it closes.
    gm.scene.walls = F.collection(Array.from({ length: 120 }, (_, i) => ({ ...F.wall({ id: `w${i}`, c: [i * 10, 0, i * 10, 500] }), parent: gm.scene })));
    const hooks = /** @type {any} */ (gm.s.env.Hooks);
    gm.s.refreshHolder();
    const attempts = () => hooks.called.filter(([name, s]) => name === "sightline.status" && s.state === "handshaking").length;
    await until(() => attempts() >= 3, "three attempts", 10_000);
    assert.equal(gm.log.length, 1, JSON.stringify(gm.log));
    assert.match(gm.log[0][1], /^SIGHTLINE\.Error\.too-big /);
    const started = Date.now();
    await until(() => attempts() >= 4, "a fourth attempt", 10_000);
    assert.ok(Date.now() - started >= 500, "the pauses grow (a fourth attempt waits at least 1 s by the backoff's fixed half)");
    assert.equal(gm.log.length, 1);
  });
});

describe("a scene the real bridge refused, fixed by the GM", () => {
  /** Count the scene.sync requests the GM's client sends from now on. */
  const countSyncs = (gm, onSync = () => {}) => {
    const conn = gm.s.connection;
    const request = conn.request.bind(conn);
    const sent = { syncs: 0 };
    conn.request = (m) => {
      if (m.type !== "scene.sync") return request(m);
      sent.syncs += 1;
      const answer = request(m);
      onSync(sent.syncs);
      return answer;
    };
    return sent;
  };

  test("a wall deleted resyncs it at once, one sync for a burst of changes; refused again, not told twice", { skip: bridgeSkipReason() }, async () => {
    const gm = await refusedSceneClient(closers);
    assert.equal(gm.s.synced.has(gm.scene.id), false);
    const sent = countSyncs(gm);
    // A burst of changes that fix nothing (a token dragged): one sync after they quiet down, refused again, told once.
    const [fus] = gm.scene.tokens.contents;
    for (let i = 0; i < 20; i++) gm.s.onDocumentChange("Token", fus, "update");
    await until(() => sent.syncs >= 1 && !gm.s._retries.size, "one retry", 5000);
    await sleep(200);
    assert.equal(sent.syncs, 1, "one sync for twenty changes");
    assert.equal(gm.log.filter(([, m]) => /SIGHTLINE\.Error\.sync/.test(m)).length, 1, "the same refusal is not told twice");
    // The GM deletes the second wall (Foundry's deleteWall fires once it is gone from the scene).
    const [, w2] = gm.scene.walls.contents;
    gm.scene.walls = F.collection(gm.scene.walls.contents.filter((w) => w !== w2));
    gm.s.onDocumentChange("Wall", w2, "delete");
    await until(() => gm.s.synced.has(gm.scene.id), "the fixed scene synced");
    assert.equal(sent.syncs, 2);
    const [, tgt] = gm.scene.tokens.contents;
    const ruling = await gm.s.adjudicate(fus, tgt, { log: false });
    assert.equal(typeof ruling.allowed, "boolean", "the scene gives rulings again");
  });

  test("an updateScene of a refused scene offers it again; a token moved during that sync makes one more sync, no more", { skip: bridgeSkipReason() }, async () => {
    const gm = await refusedSceneClient(closers);
    // A change while the retry's sync is on its way (sent, not answered): the sync may have missed it.
    const moved = { ...gm.scene.tokens.contents[0], x: 700, parent: gm.scene };
    const sent = countSyncs(gm, (n) => {
      if (n !== 1) return;
      gm.scene.tokens = F.collection([moved, gm.scene.tokens.contents[1]]);
      gm.s.onDocumentChange("Token", moved, "update");
    });
    // The walls removed by a scene-wide edit: the updateScene hook alone says so.
    const walls = gm.scene.walls.contents;
    gm.scene.walls = F.collection(walls.slice(0, 1));
    gm.s.onSceneChange(gm.scene);
    await until(() => sent.syncs >= 2, "a second sync");
    await until(() => gm.s.synced.has(gm.scene.id) && !gm.s._retries.size, "synced");
    await sleep(150);
    assert.equal(sent.syncs, 2, "the change during the first sync made one more, no more");
    assert.equal(gm.s.synced.has(gm.scene.id), true);
    // A scene nobody refused and the bridge does not hold is left alone.
    assert.equal(gm.s.retryRefused("s-elsewhere"), undefined);
    assert.equal(gm.s._retries.size, 0);
  });
});

describe("a bridge that never answers", () => {
  test("a server that takes the connection and never answers the upgrade: the attempt ends at the handshake timeout and is retried", async () => {
    const sockets = [];
    const server = createServer((socket) => sockets.push(socket)); // reads nothing, says nothing
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    closers.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    });
    const statuses = [];
    const conn = new BridgeConnection({
      url: `ws://127.0.0.1:${server.address().port}/ws`,
      secret: "s",
      identity,
      WebSocket,
      page: null,
      handshakeTimeoutMs: 200,
      backoff: createBackoff({ baseMs: 50, maxMs: 1000, jitter: 0 }),
    });
    closers.push(async () => conn.close());
    conn.on("status", (s) => statuses.push(`${s.state}${s.error ? `:${s.error.code}` : ""}`));
    conn.connect();
    await until(() => sockets.length >= 2, "a second dial after the first timed out", 3000);
    assert.deepEqual(statuses.slice(0, 2), ["connecting", "reconnecting:no-answer"]);
  });
});

describe("odd messages from the bridge", () => {
  test("unknown types, missing fields, wrong types, errors for unknown ids and pushes for other scenes change nothing and throw nothing", async () => {
    let sock;
    const bridge = await scriptedBridge((m, s) => {
      sock = s;
      ordinary(m, s);
    });
    const gm = gmClient(bridge.url);
    const leaked = await escapes(async () => {
      gm.s.refreshHolder();
      await until(() => gm.s.synced.has(gm.scene.id), "the first sync");
      await until(() => gm.log.some(([, m]) => /Connected/.test(m)), "connected");
      // The overlay watches the scene, so that annotations have somewhere to go.
      gm.game.settings.values.overlayEnabled = true;
      gm.game.settings.values.overlayAllTokens = true;
      await gm.s.updateOverlayWatch();
      assert.ok(gm.s.watching);
      const watch = gm.s.watcher.active.id;
      const odd = [
        "not json",
        "[1, 2, 3]",
        JSON.stringify({ type: "no-such-type", id: "x" }),
        JSON.stringify({ type: "error", id: "nobody-asked", code: "unknown-scene", message: "no scene" }),
        JSON.stringify({ type: "error", code: "internal-error", message: "no id at all" }),
        JSON.stringify({ type: "annotations", watch, scene: gm.scene.id, version: 1, full: true, changed: 5, removed: "x" }),
        JSON.stringify({ type: "annotations", watch, scene: gm.scene.id, version: 2, full: false, changed: [null, 7, { actor: 1 }, { actor: "t-fus", target: "t-tgt", allowed: true, modifier: -3 }], removed: [null] }),
        JSON.stringify({ type: "annotations", watch: "other-watch", scene: "s-elsewhere", version: 1, full: true, changed: [{ actor: "a", target: "b" }] }),
        JSON.stringify({ type: "annotations", watch, scene: gm.scene.id, version: "three", full: "yes" }),
        JSON.stringify({ type: "unwatched", watch: "other-watch", reason: 42 }),
        JSON.stringify({ type: "welcome", protocol: 99 }),
      ];
      for (const frame of odd) sock.send(frame);
      await sleep(100);
    });
    assert.deepEqual(leaked, []);
    assert.equal(gm.s.connection.state, "ready", "the connection survives");
    assert.deepEqual(gm.s.watcher.annotations().map((a) => `${a.actor}->${a.target}`), ["t-fus->t-tgt"], "the one readable pair is kept");
    assert.deepEqual(gm.log.filter(([level]) => level !== "info"), [], "no notice for what the module can ignore");
    const [fus, tgt] = gm.scene.tokens.contents;
    assert.equal((await gm.s.adjudicate(fus, tgt, { log: false })).modifier, -3, "and it still answers");
  });

  test("answers to sync and patch whose lists are not lists: the resync goes through and the overlay watches again", async () => {
    const bridge = await scriptedBridge((m, sock) => {
      if (m.type === "scene.sync") sock.send(JSON.stringify({ type: "scene.synced", id: m.id, scene: m.scene.id, ignored: 5 }));
      else if (m.type === "scene.patch") sock.send(JSON.stringify({ type: "scene.patched", id: m.id, scene: m.scene, ignored: 5, used: 3 }));
      else ordinary(m, sock);
    });
    const gm = gmClient(bridge.url);
    gm.game.settings.values.overlayEnabled = true;
    gm.game.settings.values.overlayAllTokens = true;
    const leaked = await escapes(async () => {
      gm.s.refreshHolder();
      await until(() => gm.log.some(([, m]) => /Connected/.test(m)), "connected");
      await gm.s.updateOverlayWatch();
      await gm.s.resyncAll(); // as a change of the world's ruleset does
      const [fus] = gm.scene.tokens.contents;
      gm.s.onDocumentChange("Token", fus, "update");
      await until(() => bridge.received.some((m) => m.type === "scene.patch"), "a patch");
    });
    assert.deepEqual(leaked, []);
    assert.ok(gm.s.synced.has(gm.scene.id), "the patch's answer did not unsync the scene");
    assert.deepEqual(gm.s.ignored.entries(gm.scene.id), []);
    assert.equal(bridge.received.filter((m) => m.type === "watch").length, 2, "watched again after the resync");
    assert.equal(bridge.received.filter((m) => m.type === "scene.sync").length, 2, "no sync after the patch");
  });

  test("a scene the bridge refuses (too large) is told to the GM once, with the limit in the GM's words", async () => {
    const bridge = await scriptedBridge((m, sock) => {
      if (m.type === "scene.sync") sock.send(JSON.stringify({ type: "error", id: m.id, code: "too-large", message: "scene.walls: 60000 walls, the most is 50000", details: { limit: "walls", value: 60000, max: 50000 } }));
      else ordinary(m, sock);
    });
    const gm = gmClient(bridge.url);
    gm.s.refreshHolder();
    await until(() => gm.log.length >= 1, "a notice");
    const [fus, tgt] = gm.scene.tokens.contents;
    for (let i = 0; i < 3; i++) await assert.rejects(gm.s.adjudicate(fus, tgt, { log: false }), { code: "too-large" });
    await gm.s.syncScene(gm.scene).catch(() => {}); // as a canvasReady or an updateScene does
    const told = gm.log.filter(([, m]) => /SIGHTLINE\.Error\.sync/.test(m));
    assert.equal(told.length, 1, JSON.stringify(gm.log));
    // In the GM's words, from the code and details, the numbers formatted for the language (stub: English).
    assert.match(told[0][1], /"scene":"Docks".*SIGHTLINE\.Limit\.walls .*\\"value\\":\\"60,000\\",\\"max\\":\\"50,000\\"/);
  });
});

describe("the Bridge URL cleared", () => {
  test("while connected: the connection closes, nothing is dialled again and no error is shown", async () => {
    const bridge = await scriptedBridge(ordinary);
    const gm = gmClient(bridge.url);
    gm.s.refreshHolder();
    await until(() => gm.s.connection?.ready, "connected");
    gm.game.settings.values.bridgeUrl = "";
    gm.s.refreshHolder({ force: true });
    await sleep(1200);
    assert.equal(gm.s.connection, null);
    assert.equal(gm.s.status.state, "idle");
    assert.equal(bridge.dials, 1);
    assert.deepEqual(gm.log.filter(([level]) => level !== "info"), []);
  });

  test("while reconnecting after the bridge went away: the retries stop", async () => {
    const bridge = await scriptedBridge(ordinary);
    const gm = gmClient(bridge.url);
    gm.s.refreshHolder();
    await until(() => gm.s.connection?.ready, "connected");
    await closers.shift()(); // the bridge goes away
    await until(() => gm.s.status.state === "reconnecting", "reconnecting");
    gm.game.settings.values.bridgeUrl = "  ";
    gm.s.refreshHolder({ force: true });
    const states = [];
    gm.s.env.Hooks.on("sightline.status", (s) => states.push(s.state));
    await sleep(1500);
    assert.equal(gm.s.status.state, "idle");
    assert.deepEqual(states, [], "no dial after the URL was cleared");
  });
});
