import { test, describe, beforeEach, afterEach, mock } from "node:test";
import assert from "node:assert/strict";
import { PatchBatcher } from "../scripts/batcher.js";

describe("PatchBatcher", () => {
  let now;
  let flushed;
  let batcher;
  beforeEach(() => {
    mock.timers.enable({ apis: ["setTimeout"] });
    now = 0;
    flushed = [];
    batcher = new PatchBatcher({ flush: (scene, changes) => flushed.push([scene, changes]), delayMs: 100, maxWaitMs: 400, now: () => now });
  });
  afterEach(() => mock.timers.reset());
  const advance = (ms) => {
    now += ms;
    mock.timers.tick(ms);
  };

  test("changes wait for a quiet spell, then leave as one patch", () => {
    batcher.upsert("s", "tokens", { id: "t1", x: 1 });
    advance(50);
    batcher.upsert("s", "tokens", { id: "t1", x: 2 });
    batcher.upsert("s", "walls", { id: "w1" });
    advance(99);
    assert.equal(flushed.length, 0);
    advance(1);
    assert.deepEqual(flushed, [["s", { upsert: { tokens: [{ id: "t1", x: 2 }], walls: [{ id: "w1" }] }, remove: {} }]]);
  });

  test("a steady stream still flushes by maxWaitMs", () => {
    for (let i = 0; i < 10; i++) {
      batcher.upsert("s", "tokens", { id: "t1", x: i });
      advance(60);
    }
    assert.ok(flushed.length >= 1, "flushed during the drag");
    assert.ok(flushed.length <= 2);
  });

  test("deletes win over upserts of the same id, in either order", () => {
    batcher.upsert("s", "tokens", { id: "a" });
    batcher.remove("s", "tokens", "a");
    batcher.remove("s", "tokens", "b");
    batcher.upsert("s", "tokens", { id: "b" });
    batcher.flushNow();
    assert.deepEqual(flushed, [["s", { upsert: {}, remove: { tokens: ["a", "b"] } }]]);
  });

  test("one patch per scene", () => {
    batcher.upsert("s1", "tokens", { id: "a" });
    batcher.upsert("s2", "regions", { id: "r" });
    advance(100);
    assert.deepEqual(flushed.map(([s]) => s).sort(), ["s1", "s2"]);
  });

  test("discard drops a scene's queue (a full sync replaces it)", () => {
    batcher.upsert("s", "tokens", { id: "a" });
    batcher.discard("s");
    assert.equal(batcher.pending, false);
    advance(1000);
    assert.equal(flushed.length, 0);
  });
});
