import { test } from "node:test";
import assert from "node:assert/strict";
import { createBackoff } from "../scripts/backoff.js";

test("delays double from the base, never pass the cap, and reset", () => {
  const b = createBackoff({ baseMs: 100, maxMs: 1000, jitter: 0 });
  assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000, 1000]);
  b.reset();
  assert.equal(b.next(), 100);
});

test("jitter stays within [ceiling*(1-jitter), ceiling]", () => {
  const low = createBackoff({ baseMs: 1000, maxMs: 1000, jitter: 0.5, random: () => 0 });
  const high = createBackoff({ baseMs: 1000, maxMs: 1000, jitter: 0.5, random: () => 0.999999 });
  assert.equal(low.next(), 500);
  assert.equal(high.next(), 1000);
  const real = createBackoff({ baseMs: 100, maxMs: 30_000 });
  for (let i = 0; i < 50; i++) assert.ok(real.next() <= 30_000);
});
