/**
 * The overlay's live feed end to end: the module's BridgeConnection and SceneWatcher (Node, with
 * the `ws` WebSocket) against the real bridge, `sightline serve --port 0`: watch → a full set of
 * annotations → a token moved by `scene.patch` → only that pair's changed annotation; unwatch.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { BridgeConnection } from "../scripts/connection.js";
import { SceneWatcher } from "../scripts/annotations.js";
import { scenePatch, sceneSync } from "../scripts/protocol.js";
import { serializeScene, serializeToken } from "../scripts/serialize.js";
import * as F from "./helpers/fixtures.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";

const waitFor = async (cond, what, ms = 10_000) => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("watch against the real bridge", { skip: bridgeSkipReason(), timeout: 60_000 }, () => {
  let bridge;
  before(async () => (bridge = await startRealBridge("watch-secret")), { timeout: 30_000 });
  after(async () => bridge?.close());

  test("full set first, then only the pair a token move changed; unwatch ends the pushes", async () => {
    const fixture = F.scene();
    const scene = serializeScene(fixture, { ruleset: "infinity-n4", edition: "current", locale: "en" });
    const pushes = [];
    let changes = 0;
    let watcher;
    const ready = new Promise((resolve) => {
      const conn = new BridgeConnection({
        url: bridge.url,
        secret: "watch-secret",
        WebSocket,
        identity: () => ({ world: "w-watch", user: { id: "gm", name: "GM", gm: true } }),
        onReady: async (c) => {
          await c.request(sceneSync(c.nextId(), scene));
          resolve(c);
        },
      });
      watcher = new SceneWatcher({ request: (m) => conn.request(m), nextId: () => conn.nextId(), onChange: () => (changes += 1) });
      conn.on("message", (m) => {
        pushes.push(m);
        watcher.handle(m);
      });
      conn.connect();
    });
    const conn = await ready;
    try {
      await watcher.want({ scene: scene.id, action: "bs-attack", tokens: null });
      await waitFor(() => watcher.annotations().length === 2, "the full set");
      const first = pushes.find((m) => m.type === "annotations");
      assert.equal(first.full, true);
      if (!schemaSkipReason()) assertConforms(first);
      const before = Object.fromEntries(watcher.annotations().map((a) => [`${a.actor}->${a.target}`, a]));
      assert.deepEqual(Object.keys(before).sort(), ["t-fus->t-tgt", "t-tgt->t-fus"]);

      // Move the target next to the fusilier, clear of every zone: both pairs change.
      const moved = serializeToken({ ...fixture.tokens.contents[1], x: 400, y: 800 }, { ruleset: "infinity-n4" });
      const seen = changes;
      await conn.request(scenePatch(conn.nextId(), scene.id, { upsert: { tokens: [moved] } }));
      await waitFor(() => changes > seen, "a partial push");
      const partial = pushes.filter((m) => m.type === "annotations").at(-1);
      assert.equal(partial.full, false);
      assert.ok(partial.version > first.version);
      if (!schemaSkipReason()) assertConforms(partial);
      const after = Object.fromEntries(watcher.annotations().map((a) => [`${a.actor}->${a.target}`, a]));
      assert.deepEqual(after["t-fus->t-tgt"].crossings, [], "the moved pair crosses no zone now");
      assert.notDeepEqual(after["t-fus->t-tgt"], before["t-fus->t-tgt"]);

      // Unwatch: the bridge confirms and pushes no more.
      const id = watcher.active.id;
      await watcher.want(null);
      assert.ok(pushes.some((m) => m.type === "unwatched" && m.watch === id) || watcher.active === null);
      const count = pushes.filter((m) => m.type === "annotations").length;
      await conn.request(scenePatch(conn.nextId(), scene.id, { upsert: { tokens: [{ ...moved, x: 500 }] } }));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(pushes.filter((m) => m.type === "annotations").length, count);
    } finally {
      conn.close();
    }
  });
});
