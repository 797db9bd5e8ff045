#!/usr/bin/env node
/**
 * Builds dist/sightline-bridge.zip: the files Foundry installs (module.json, scripts, lang,
 * styles, and palette.json — Sightline's one palette, which in the repository links to
 * bridge/palette.json; the zip carries its content), under a top-level `sightline-bridge/` folder. Pure JS (fflate); no downloads.
 * Not shipped in the zip itself: build-zip.mjs, tests, node_modules.
 */
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const INCLUDE = ["module.json", "LICENSE", "palette.json", "scripts", "lang", "styles"];
const EXCLUDE = new Set(["scripts/build-zip.mjs"]);

function walk(path, out) {
  if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name), out);
  else {
    const rel = relative(root, path).split("\\").join("/");
    if (!EXCLUDE.has(rel)) out[`sightline-bridge/${rel}`] = [readFileSync(path), { mtime: new Date("2026-01-01T00:00:00Z") }];
  }
  return out;
}

const files = {};
for (const entry of INCLUDE) walk(join(root, entry), files);
const zip = zipSync(files, { level: 9 });
mkdirSync(join(root, "dist"), { recursive: true });
const target = join(root, "dist", "sightline-bridge.zip");
writeFileSync(target, zip);
console.log(`${relative(process.cwd(), target)}: ${Object.keys(files).length} files, ${zip.length} bytes`);
