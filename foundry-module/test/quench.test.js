// The Quench batch shipped with the module: registered only from Quench's `quenchReady` hook, under
// keys Quench accepts (the module id first), each batch defining its tests. Running them needs a real
// Foundry: test/foundry-real.test.js does, where a licence exists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BATCHES, registerQuenchBatches } from "../scripts/quench.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

test("the eight batches register under the module id, each with its tests", () => {
  const batches = new Map();
  registerQuenchBatches({ registerBatch: (key, fn, options) => batches.set(key, { fn, options }) }, /** @type {any} */ ({ game: {}, Hooks: {}, CONST: { GRID_TYPES: {} } }));
  assert.deepEqual([...batches.keys()].sort(), Object.values(BATCHES).sort());
  for (const [key, { fn, options }] of batches) {
    assert.ok(key.startsWith("sightline-bridge."), key);
    assert.match(options.displayName, /^Sightline: /);
    const titles = [];
    const describe = (title, body) => body.call({});
    const it = (title) => titles.push(title);
    fn({ describe, it, assert, after: () => {}, before: () => {}, expect: () => {} });
    assert.ok(titles.length >= 1, `${key} defines tests`);
  }
  const hex = [];
  batches.get(BATCHES.hex).fn({ describe: (_t, b) => b(), it: (t) => hex.push(t), assert, after: () => {} });
  assert.deepEqual(hex.map((t) => t.split(" ")[1]), ["HEXODDR", "HEXEVENR", "HEXODDQ", "HEXEVENQ"]);
});

test("main.js registers them only from Quench's quenchReady hook", () => {
  const main = readFileSync(join(root, "scripts", "main.js"), "utf8");
  assert.match(main, /Hooks\.once\(\/\*\* @type \{any\} \*\/ \("quenchReady"\), \(quench\) => \{\n\s+registerQuenchBatches\(quench,/);
  assert.equal(main.match(/registerQuenchBatches\(/g).length, 1);
});
