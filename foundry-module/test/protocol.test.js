import { test, describe, mock } from "node:test";
import assert from "node:assert/strict";
import * as P from "../scripts/protocol.js";
import { assertConforms, schemaSkipReason } from "./helpers/schema.js";

const skip = schemaSkipReason();

describe("protocol builders", () => {
  const user = { id: "u1", name: "Gamemaster", gm: true };

  test("hello carries protocol 1, world, secret, client and user as the contract shows", () => {
    const msg = P.hello({ world: "w-ashes", secret: "s3", foundry: "14.366", system: "gurps", user });
    assert.deepEqual(msg, {
      type: "hello",
      protocol: 1,
      world: "w-ashes",
      secret: "s3",
      client: { name: "sightline-bridge", version: "0.1.0", foundry: "14.366", system: "gurps" },
      user,
    });
  });

  test("hello carries the world's title as world_name, trimmed; none when the title is empty", () => {
    const msg = P.hello({ world: "w-ashes", worldName: "  Ashes of Kaldor ", secret: "s3", user });
    assert.equal(msg.world_name, "Ashes of Kaldor");
    assert.deepEqual(Object.keys(msg), ["type", "protocol", "world", "world_name", "secret", "client", "user"]);
    for (const none of [undefined, null, "", "   "]) {
      assert.ok(!("world_name" in P.hello({ world: "w", worldName: none, secret: "x", user })), String(none));
    }
  });

  test("a title past 200 characters is cut at 200 whole characters, never half of one", () => {
    const long = "🜂".repeat(150) + "Ashes".repeat(20); // 250 characters, the first 150 outside the BMP
    const name = P.hello({ world: "w", worldName: long, secret: "x", user }).world_name;
    assert.equal(Array.from(name).length, P.WORLD_NAME_LIMIT);
    assert.equal(name, "🜂".repeat(150) + "Ashes".repeat(10));
    assert.equal(P.worldName("x".repeat(200)), "x".repeat(200));
    assert.equal(P.worldName("🜂".repeat(201)), "🜂".repeat(200)); // 400 UTF-16 units in, 200 characters out
  });

  test("a game session's name is trimmed and cut at 200 whole characters, never half of one", () => {
    const odd = "x" + "🜂".repeat(150); // 151 characters, 301 UTF-16 units: a cut at 200 units splits a pair
    assert.equal(P.sessionStart("a1", ` ${odd} `).name, odd);
    assert.equal(P.sessionStart("a1", "🜂".repeat(201)).name, "🜂".repeat(P.SESSION_NAME_LIMIT));
    assert.deepEqual(P.sessionStart("a1"), { type: "session.start", id: "a1", name: "" });
  });

  test("scene.patch drops empty kinds and empty groups", () => {
    const msg = P.scenePatch("q2", "s-docks", { upsert: { tokens: [{ id: "t" }], walls: [] }, remove: { regions: [] } });
    assert.deepEqual(msg, { type: "scene.patch", id: "q2", scene: "s-docks", upsert: { tokens: [{ id: "t" }] } });
  });

  test("adjudicate omits target for combat-jump and keeps log and reaction explicit", () => {
    assert.deepEqual(P.adjudicate("a1", { scene: "s", actor: "t1", action: "combat-jump", log: false }), {
      type: "adjudicate", id: "a1", scene: "s", actor: "t1", action: "combat-jump", reaction: false, log: false,
    });
  });

  test("every builder output conforms to the bridge schema", { skip }, () => {
    assertConforms(P.hello({ world: "w", secret: "x", foundry: "13.345", system: "gurps", user }));
    assertConforms(P.hello({ world: "w", worldName: "🜂".repeat(300), secret: "x", user })); // cut to the schema's bound
    assertConforms(P.adjudicate("a1", { scene: "s", actor: "t1", target: "t2", action: "bs-attack", log: true }));
    assertConforms(P.adjudicate("a2", { scene: "s", actor: "t1", target: "t2", action: "dodge", aware: false, log: false }));
    assertConforms(P.scenePatch("q2", "s", { remove: { tokens: ["t1"] } }));
    assertConforms(P.ping("p1"));
  });

  test("ids are unique and prefixed", () => {
    const next = P.createIdGenerator("x");
    assert.deepEqual([next(), next()], ["x-1", "x-2"]);
  });

  test("parseMessage refuses non-objects and objects without type", () => {
    assert.throws(() => P.parseMessage("nope"), { code: "invalid-message" });
    assert.throws(() => P.parseMessage("[1]"), { code: "invalid-message" });
    assert.equal(P.parseMessage('{"type":"pong","id":"p"}').type, "pong");
  });
});

describe("PendingRequests", () => {
  test("an answer resolves, an error answer rejects with its code", async () => {
    const pending = new P.PendingRequests();
    const a = pending.add("a");
    const b = pending.add("b");
    assert.equal(pending.settle({ type: "pong", id: "a" }), true);
    assert.equal(pending.settle({ type: "error", id: "b", code: "unknown-scene", message: "no scene s" }), true);
    assert.deepEqual(await a, { type: "pong", id: "a" });
    await assert.rejects(b, { name: "BridgeError", code: "unknown-scene" });
    assert.equal(pending.settle({ type: "pong", id: "zzz" }), false);
    assert.equal(pending.size, 0);
  });

  test("a request without answer times out", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const pending = new P.PendingRequests({ timeoutMs: 500 });
      const a = pending.add("a");
      mock.timers.tick(499);
      assert.equal(pending.size, 1);
      mock.timers.tick(1);
      await assert.rejects(a, { code: "timeout" });
      assert.equal(pending.size, 0);
    } finally {
      mock.timers.reset();
    }
  });

  test("rejectAll settles everything outstanding", async () => {
    const pending = new P.PendingRequests();
    const a = pending.add("a");
    pending.rejectAll(new P.BridgeError("disconnected", "gone"));
    await assert.rejects(a, { code: "disconnected" });
  });
});
