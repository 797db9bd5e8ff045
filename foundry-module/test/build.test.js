// The release zip: `npm run build` packs what Foundry installs, under one top-level folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync, strFromU8 } from "fflate";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

test("the build script packs module.json, the scripts, both languages and the styles, and no tests", () => {
  execFileSync(process.execPath, [join(root, "scripts", "build-zip.mjs")], { cwd: root, stdio: "pipe" });
  const entries = unzipSync(readFileSync(join(root, "dist", "sightline-bridge.zip")));
  const names = Object.keys(entries);
  assert.ok(names.every((name) => name.startsWith("sightline-bridge/")), "one top-level folder");
  for (const needed of ["module.json", "palette.json", "scripts/main.js", "lang/en.json", "lang/es.json"]) {
    assert.ok(names.includes(`sightline-bridge/${needed}`), `missing ${needed}`);
  }
  assert.ok(!names.some((name) => name.includes("/test/") || name.endsWith("build-zip.mjs")), "no tests or build tools");
  // The one palette travels as its content (the repository's palette.json is a link to bridge/palette.json).
  const shipped = JSON.parse(strFromU8(entries["sightline-bridge/palette.json"]));
  assert.deepEqual(shipped, JSON.parse(readFileSync(join(root, "..", "bridge", "palette.json"), "utf8")));
  const manifest = JSON.parse(strFromU8(entries["sightline-bridge/module.json"]));
  assert.equal(manifest.id, "sightline-bridge");
  for (const script of manifest.esmodules) assert.ok(names.includes(`sightline-bridge/${script}`), `esmodule ${script} packed`);
});
