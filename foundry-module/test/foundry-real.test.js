/**
 * The module inside a real Foundry: the `felddy/foundryvtt` container, one V13 and one V14 tag, driven
 * with Playwright (playwright-core and the system's Chromium). For each tag it starts the container with
 * this module mounted, installs Quench and a game system through Foundry's setup API, creates and
 * launches a world, joins as the Gamemaster, enables Quench and Sightline Bridge, runs the module's
 * Quench batches (scripts/quench.js) and fails on any failing test.
 *
 * Foundry needs a licence: the suite runs only when FOUNDRY_USERNAME and FOUNDRY_PASSWORD (the
 * foundryvtt.com account the container downloads Foundry and its licence with) are set and `docker`
 * and Chromium are present; otherwise every test is skipped with a message that says what is missing.
 * docs/foundry.md ("Checks in a real Foundry") says how to run it and how a pass becomes a verified
 * version. It has never run on the machines that wrote it (no licence there).
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BATCHES } from "../scripts/quench.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const TAGS = { V13: process.env.FOUNDRY_V13_TAG ?? "13.351", V14: process.env.FOUNDRY_V14_TAG ?? "14.366" };
/** Quench's manifest (its GitHub releases) and a small system to make a world with. */
const QUENCH_MANIFEST = process.env.QUENCH_MANIFEST ?? "https://github.com/Ethaks/FVTT-Quench/releases/latest/download/module.json";
const SYSTEM = process.env.FOUNDRY_TEST_SYSTEM ?? "worldbuilding";
const SYSTEM_MANIFEST = process.env.FOUNDRY_TEST_SYSTEM_MANIFEST ?? "https://github.com/foundryvtt/worldbuilding/releases/latest/download/system.json";

function skipReason() {
  const missing = [];
  if (!process.env.FOUNDRY_USERNAME || !process.env.FOUNDRY_PASSWORD) missing.push("FOUNDRY_USERNAME and FOUNDRY_PASSWORD (a Foundry licence)");
  if (spawnSync("docker", ["version"], { stdio: "ignore" }).status !== 0) missing.push("docker");
  if (!existsSync(CHROMIUM)) missing.push(`Chromium at ${CHROMIUM}`);
  return missing.length ? `real-Foundry checks skipped: no ${missing.join(", no ")} — see docs/foundry.md, "Checks in a real Foundry"` : false;
}

const skip = skipReason();
if (skip) console.log(`# ${skip}`);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForHttp(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const res = await fetch(url, { redirect: "manual" });
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await sleep(2000);
  }
  throw new Error(`${url} did not answer within ${ms / 1000} s`);
}

/** One container per tag, on a free local port, with the module mounted read-only. */
function startContainer(tag, adminKey) {
  const name = `sightline-fvtt-${tag.replace(/[^0-9a-z]/gi, "-")}-${process.pid}`;
  const port = 30000 + Math.floor(Math.random() * 2000);
  execFileSync("docker", [
    "run", "-d", "--rm", "--name", name, "-p", `127.0.0.1:${port}:30000`,
    "-e", "FOUNDRY_USERNAME", "-e", "FOUNDRY_PASSWORD", "-e", `FOUNDRY_ADMIN_KEY=${adminKey}`,
    "-v", `${root}:/data/Data/modules/sightline-bridge:ro`,
    `felddy/foundryvtt:${tag}`,
  ], { stdio: "pipe", env: process.env });
  return { name, url: `http://127.0.0.1:${port}` };
}

/** Foundry's setup API, from the setup page (it carries the admin session). */
async function setupAction(page, body) {
  return page.evaluate(async (payload) => {
    const res = await fetch("/setup", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });
    return { status: res.status, text: await res.text() };
  }, body);
}

for (const [generation, tag] of Object.entries(TAGS)) {
  describe(`Foundry ${generation} (felddy/foundryvtt:${tag})`, { skip }, () => {
    let container;
    let browser;
    let page;
    const adminKey = randomBytes(12).toString("hex");

    before(async () => {
      const { chromium } = await import("playwright-core");
      container = startContainer(tag, adminKey);
      await waitForHttp(container.url, 15 * 60_000); // the first start downloads Foundry
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      page = await browser.newPage();
      await page.goto(`${container.url}/auth`);
      if (await page.locator('input[name="adminPassword"], input[name="adminKey"]').count()) {
        await page.fill('input[name="adminPassword"], input[name="adminKey"]', adminKey);
        await page.click('button[type="submit"]');
      }
      await page.goto(`${container.url}/setup`);
      // The licence agreement, shown once on a fresh install.
      if (await page.locator("#eula-agree").count()) {
        await page.check("#eula-agree");
        await page.click("#sign");
      }
      for (const [type, manifest] of [["module", QUENCH_MANIFEST], ["system", SYSTEM_MANIFEST]]) {
        const res = await setupAction(page, { action: "installPackage", type, manifest });
        assert.ok(res.status < 400, `installing ${manifest}: ${res.status} ${res.text}`);
      }
      const world = `sightline-check-${generation.toLowerCase()}`;
      await setupAction(page, { action: "createWorld", id: world, title: "Sightline check", system: SYSTEM });
      await setupAction(page, { action: "launchWorld", world });
      await waitForHttp(`${container.url}/join`, 120_000);
      await page.goto(`${container.url}/join`);
      await page.selectOption('select[name="userid"]', { label: "Gamemaster" });
      await page.click('button[name="join"]');
      await page.waitForFunction(() => globalThis.game?.ready === true, null, { timeout: 120_000 });
      // Enable Quench and Sightline Bridge, then reload into the world with both.
      await page.evaluate(async () => {
        const config = { ...game.settings.get("core", "moduleConfiguration"), quench: true, "sightline-bridge": true };
        await game.settings.set("core", "moduleConfiguration", config);
      });
      await page.reload();
      await page.waitForFunction(() => globalThis.game?.ready === true && globalThis.quench, null, { timeout: 120_000 });
    });

    after(async () => {
      await browser?.close();
      if (container) spawnSync("docker", ["stop", container.name], { stdio: "ignore" });
    });

    test("the module loads and registers its Quench batches (only because Quench is active)", async () => {
      const keys = await page.evaluate(() => [...globalThis.quench._testBatches.keys()].filter((k) => k.startsWith("sightline-bridge.")));
      assert.deepEqual(keys.sort(), Object.values(BATCHES).sort());
    });

    test("every Quench batch of the module passes", async () => {
      const report = await page.evaluate(
        (keys) =>
          new Promise((resolve) => {
            globalThis.quench.runSelectedBatches(keys).then((runner) => {
              const failures = [];
              runner.on("fail", (t, err) => failures.push(`${t.fullTitle()}: ${err?.message}`));
              runner.once("end", () => resolve({ stats: { ...runner.stats }, failures }));
            });
          }),
        Object.values(BATCHES),
      );
      console.log(`# Foundry ${tag}: ${report.stats.passes} passed, ${report.stats.pending} skipped, ${report.stats.failures} failed`);
      assert.deepEqual(report.failures, []);
      assert.ok(report.stats.passes > 0, "some test ran");
    });
  });
}
