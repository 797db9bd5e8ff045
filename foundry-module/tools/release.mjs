#!/usr/bin/env node
/**
 * One command for a release of the Foundry module:
 *
 *   node tools/release.mjs <version> [--repository owner/name] [--out dist]
 *   (npm run release -- 0.2.0 --repository owner/name)
 *
 * 1. stamps `<version>` into module.json and package.json (the sources, so that the tag's tree says it);
 * 2. writes `<out>/module.json`, the manifest Foundry installs from, with the URLs derived from the one
 *    repository (`--repository`, else `GITHUB_REPOSITORY`, which GitHub Actions sets to the repository
 *    the workflow runs in), GitHub Releases convention:
 *      manifest  https://github.com/<repo>/releases/latest/download/module.json  (always the newest)
 *      download  https://github.com/<repo>/releases/download/v<version>/sightline-bridge.zip  (this one)
 *      url       https://github.com/<repo>
 *    and `compatibility.verified` only from `verified.json`: the Foundry versions a real-Foundry check
 *    (docs/foundry.md) passed on with this very module version — none recorded, no `verified`;
 * 3. packs `<out>/sightline-bridge.zip` holding that same module.json, the scripts, lang, styles and
 *    palette.json — what `npm run build` packs (scripts/build-zip.mjs).
 *
 * `.github/workflows/release.yml` runs it on a `v*` tag and publishes both files.
 */
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const MODULE_ID = "sightline-bridge";
export const ZIP_NAME = `${MODULE_ID}.zip`;
/**
 * What Foundry installs; tools, tests and node_modules stay out. `palette.json` is the overlay's colours,
 * which scripts/main.js fetches beside module.json (a link to bridge/palette.json here: its content is packed).
 */
const INCLUDE = ["LICENSE", "palette.json", "scripts", "lang", "styles"];
const EXCLUDE = new Set(["scripts/build-zip.mjs"]);
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

/** Foundry versions compared generation first, then build ("13.351" < "14" < "14.360"). */
export function compareFoundry(a, b) {
  const pa = String(a).split(".").map(Number);
  const pb = String(b).split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/**
 * The released manifest: `source` (module.json) with `version`, the three URLs of `repository` and
 * `compatibility.verified` set to the newest Foundry version a recorded check passed on with this
 * module version (`checks`: verified.json's entries), or removed when there is none.
 * @param {Record<string, any>} source
 * @param {{version: string, repository: string, checks?: {module: string, foundry: string, passed: boolean}[]}} opts
 */
export function releaseManifest(source, { version, repository, checks = [] }) {
  if (!VERSION.test(version)) throw new Error(`version ${JSON.stringify(version)} is not x.y.z (a tag v0.2.0 gives 0.2.0)`);
  if (!REPOSITORY.test(repository ?? "")) throw new Error(`repository ${JSON.stringify(repository)} is not owner/name`);
  const base = `https://github.com/${repository}`;
  const passed = checks.filter((c) => c.module === version && c.passed === true).map((c) => String(c.foundry));
  const compatibility = { ...(source.compatibility ?? {}) };
  delete compatibility.verified;
  if (passed.length) compatibility.verified = passed.sort(compareFoundry).at(-1);
  return {
    ...source,
    version,
    compatibility,
    url: base,
    manifest: `${base}/releases/latest/download/module.json`,
    download: `${base}/releases/download/v${version}/${ZIP_NAME}`,
  };
}

function walk(root, path, out) {
  if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) walk(root, join(path, name), out);
  else {
    const rel = relative(root, path).split("\\").join("/");
    if (!EXCLUDE.has(rel)) out[`${MODULE_ID}/${rel}`] = [readFileSync(path), { mtime: new Date("2026-01-01T00:00:00Z") }];
  }
  return out;
}

/** The zip Foundry installs: `manifestText` as module.json plus the module's files, under one folder. */
export function packZip(root, manifestText) {
  const files = { [`${MODULE_ID}/module.json`]: [Buffer.from(manifestText), { mtime: new Date("2026-01-01T00:00:00Z") }] };
  for (const entry of INCLUDE) walk(root, join(root, entry), files);
  return zipSync(files, { level: 9 });
}

/** Stamp, then write `<out>/module.json` and `<out>/sightline-bridge.zip`; returns their paths. */
export function release({ version, repository, root = ROOT, out = join(root, "dist") }) {
  const checks = JSON.parse(readFileSync(join(root, "verified.json"), "utf8")).checks ?? [];
  const sourcePath = join(root, "module.json");
  const manifest = releaseManifest(JSON.parse(readFileSync(sourcePath, "utf8")), { version, repository, checks });
  // The sources carry the version (and no URL: those belong to a release of one repository).
  const source = JSON.parse(readFileSync(sourcePath, "utf8"));
  writeFileSync(sourcePath, `${JSON.stringify({ ...source, version }, null, 2)}\n`);
  const pkgPath = join(root, "package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));
  writeFileSync(pkgPath, `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  mkdirSync(out, { recursive: true });
  const manifestPath = join(out, "module.json");
  const zipPath = join(out, ZIP_NAME);
  writeFileSync(manifestPath, text);
  writeFileSync(zipPath, packZip(root, text));
  return { manifestPath, zipPath, manifest };
}

function main(argv) {
  const args = [...argv];
  const take = (flag) => {
    const i = args.indexOf(flag);
    if (i < 0) return undefined;
    const [, value] = args.splice(i, 2);
    return value;
  };
  const repository = take("--repository") ?? process.env.GITHUB_REPOSITORY;
  const out = take("--out");
  const [version] = args;
  if (!version || !repository) {
    console.error("usage: node tools/release.mjs <version> --repository owner/name [--out dist]\n(GITHUB_REPOSITORY stands in for --repository)");
    process.exit(2);
  }
  try {
    const made = release({ version: version.replace(/^v/, ""), repository, out: out && resolve(out) });
    console.log(`${relative(process.cwd(), made.manifestPath)}: ${made.manifest.id} ${made.manifest.version}, verified ${made.manifest.compatibility.verified ?? "none (no real-Foundry check recorded)"}`);
    console.log(`${relative(process.cwd(), made.zipPath)}: download ${made.manifest.download}`);
  } catch (err) {
    console.error(`release: ${err.message}`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
