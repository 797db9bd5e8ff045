#!/usr/bin/env node
/**
 * Unpacks the vendored fvtt-types 14 declarations (types/vendor/fvtt-types-14/*.tar.gz, see its
 * README) into node_modules/.fvtt-types-14/, where tsconfig.v14.json reads them. Runs before the V14
 * type check; does nothing when the unpacked copy matches the archive (a stamp of its sha256).
 * Node only (zlib and a ustar/pax reader): no tar binary, no download.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const archive = join(root, "types/vendor/fvtt-types-14/fvtt-types-14.366.0.tar.gz");
const target = join(root, "node_modules/.fvtt-types-14");
const stampFile = join(target, ".stamp");

const gz = readFileSync(archive);
const stamp = createHash("sha256").update(gz).digest("hex");
if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) process.exit(0);

rmSync(target, { recursive: true, force: true });
const tar = gunzipSync(gz);
const text = (buf, start, len) => buf.subarray(start, start + len).toString("utf8").replace(/\0.*$/s, "");
let offset = 0;
let longName = null;
let files = 0;
while (offset + 512 <= tar.length) {
  const header = tar.subarray(offset, offset + 512);
  if (header.every((b) => b === 0)) break;
  const size = parseInt(text(header, 124, 12).trim() || "0", 8);
  const type = String.fromCharCode(header[156] || 48);
  const body = tar.subarray(offset + 512, offset + 512 + size);
  offset += 512 + Math.ceil(size / 512) * 512;
  if (type === "x") {
    // pax extended header: "<len> path=<name>\n" records
    const m = body.toString("utf8").match(/\d+ path=([^\n]*)\n/);
    longName = m ? m[1] : null;
    continue;
  }
  if (type === "g") continue;
  const prefix = text(header, 345, 155);
  const name = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
  longName = null;
  const path = normalize(join(target, name));
  if (!path.startsWith(target + sep)) throw new Error(`refusing to write outside ${target}: ${name}`);
  if (type === "5") mkdirSync(path, { recursive: true });
  else if (type === "0") {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, body);
    files += 1;
  }
}
writeFileSync(stampFile, stamp);
console.log(`fvtt-types 14: ${files} files unpacked into ${target}`);
