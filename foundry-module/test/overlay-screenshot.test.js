/**
 * The GM overlay rendered for real: the module's overlay-draw.js with pixi.js 7 (from npm) in
 * headless Chromium, fed with rulings the real bridge (`sightline serve --port 0`) gives for a
 * small Infinity scene with Low, Poor (with a hole) and Zero zones. It checks the rendered colours
 * at known points — a zone's shade, a hole left unshaded, a blocked (red), a penalised (amber) and
 * a clear (green) sight line — and saves the picture to docs/img/overlay.png and artifacts/.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serializeScene } from "../scripts/serialize.js";
import { OVERLAY_STYLE } from "../scripts/overlay-draw.js";
import { VERDICT_COLORS, ZONE_COLORS, usePalette } from "../scripts/geometry.js";
import { collection, polygonTree } from "./helpers/fixtures.js";
import { chromiumSkipReason, launchBrowser, serveStatic } from "./helpers/browser.js";
import { bridgeSkipReason, startRealBridge } from "./helpers/bridge.js";

const here = dirname(fileURLToPath(import.meta.url));
const moduleRoot = resolve(here, "..");
const repoRoot = resolve(moduleRoot, "..");
usePalette(JSON.parse(readFileSync(join(moduleRoot, "palette.json"), "utf8")));  // the colours the page draws with
const WIDTH = 1300;
const HEIGHT = 900;
const BACKGROUND = 0x2b2b2b;

const zoneBehavior = (zoneType) => collection([{ id: `b-${zoneType}`, type: "sightline-bridge.visibilityZone", disabled: false, system: { zoneType, penalty: null, total: false, density: null, by: "" } }]);
const token = (id, name, x, y) => ({ id, name, x, y, width: 1, height: 1, elevation: 0, shape: 0, light: { dim: 0, bright: 0 }, flags: {} });

/** A Foundry-shaped scene (documents as V13/V14 store them), serialised by the module. */
function docksScene() {
  return {
    id: "s-overlay",
    name: "Overlay demo",
    grid: { size: 100, distance: 1, units: "in" },
    flags: {},
    regions: collection([
      { id: "r-fog", name: "Fog bank", elevation: { bottom: -Infinity, top: Infinity }, shapes: [{ type: "rectangle", x: 300, y: 100, width: 200, height: 700, rotation: 0, hole: false }], behaviors: zoneBehavior("low"), flags: {} },
      {
        id: "r-yard",
        name: "Courtyard",
        elevation: { bottom: null, top: null },
        shapes: [
          { type: "rectangle", x: 650, y: 40, width: 350, height: 240, rotation: 0, hole: false },
          { type: "rectangle", x: 760, y: 110, width: 130, height: 100, rotation: 0, hole: true },
        ],
        polygonTree: polygonTree([{ points: [650, 40, 1000, 40, 1000, 280, 650, 280], children: [{ points: [760, 110, 890, 110, 890, 210, 760, 210], hole: true }] }]),
        behaviors: zoneBehavior("poor"),
        flags: {},
      },
      { id: "r-smoke", name: "Smoke", elevation: { bottom: null, top: null }, shapes: [{ type: "circle", x: 800, y: 650, radius: 120, hole: false }], behaviors: zoneBehavior("zero"), flags: {} },
    ]),
    tokens: collection([
      token("t-fus", "Fusilier", 100, 350),
      token("t-a", "Alpha", 1100, 350),
      token("t-b", "Bravo", 1100, 650),
      token("t-c", "Charlie", 100, 750),
      token("t-d", "Delta", 1100, 50),
    ]),
    walls: collection([]),
    lights: collection([]),
  };
}

const scene = serializeScene(docksScene(), { ruleset: "infinity-n4", edition: "current", locale: "en" });
const pairs = ["t-a", "t-b", "t-c", "t-d"].map((target) => ({ actor: "t-fus", target }));

/** Points whose colour is known: inside zones away from lines and labels, and on each line. */
const PROBES = {
  lowZone: [440, 180],
  poorZone: [670, 60],
  poorHole: [810, 125],
  zeroZone: [740, 720],
  clearLine: [150, 730],
  penalisedLine: [560, 400],
  blockedLine: [540, 517],
};

const rgb = (hex) => [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];
const over = (top, alpha, bottom) => rgb(top).map((c, i) => Math.round(c * alpha + rgb(bottom)[i] * (1 - alpha)));
function assertColor(actual, expected, what, tolerance = 12) {
  const off = actual.map((c, i) => Math.abs(c - expected[i]));
  assert.ok(Math.max(...off) <= tolerance, `${what}: rendered rgb(${actual}) but expected about rgb(${expected})`);
}

const skip = chromiumSkipReason() || bridgeSkipReason();

describe("overlay screenshot from the real bridge in Chromium with pixi.js 7", { skip, timeout: 90_000 }, () => {
  let browser;
  let site;
  let bridge;
  let page;
  before(
    async () => {
      bridge = await startRealBridge("overlay-secret");
      site = await serveStatic({ "/scripts/": join(moduleRoot, "scripts"), "/pixi/": join(moduleRoot, "node_modules/pixi.js/dist"), "/module/": moduleRoot, "/": join(here, "e2e") });
      browser = await launchBrowser();
      page = await browser.context.newPage();
      await page.setViewportSize({ width: WIDTH, height: HEIGHT });
      await page.goto(`${site.url}/overlay.html`);
      await page.waitForFunction(() => typeof window.renderOverlay === "function" && typeof window.PIXI?.Application === "function");
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await browser?.close();
    await site?.close();
    await bridge?.close();
  });

  test("zones are shaded by type, holes stay clear, lines are red/amber/green by the bridge's ruling; screenshot saved", async () => {
    const out = await page.evaluate((args) => window.renderOverlay(args), { url: bridge.url, secret: "overlay-secret", scene, pairs, action: "bs-attack", width: WIDTH, height: HEIGHT, probes: PROBES });

    // What the bridge ruled, and what the overlay made of it.
    const byTarget = Object.fromEntries(out.rulings.map((r) => [r.target, r]));
    assert.equal(byTarget["t-a"].modifier, -3, "through the Low zone: −3");
    assert.equal(byTarget["t-b"].allowed, false, "through the Zero zone: no line of fire");
    assert.equal(byTarget["t-c"].modifier, 0, "no zone: clear");
    assert.equal(byTarget["t-d"].modifier, -6, "through Low and Poor: the Poor −6 (MODs never stack)");
    const lines = Object.fromEntries(out.model.lines.map((l) => [l.target, l]));
    assert.deepEqual(
      Object.fromEntries(Object.entries(lines).map(([t, l]) => [t, [l.verdict, l.label.text]])),
      { "t-a": ["penalised", "MOD \u22123"], "t-b": ["blocked", "no LoF"], "t-c": ["clear", "MOD 0"], "t-d": ["penalised", "MOD \u22126"] },
    );
    assert.deepEqual(out.counts, { polygons: 3, holes: 1, lines: 4, labels: 7 });

    // The rendered pixels.
    const S = OVERLAY_STYLE;
    assertColor(out.pixels.lowZone, over(ZONE_COLORS.low, S.zoneFillAlpha, BACKGROUND), "Low zone shade");
    assertColor(out.pixels.poorZone, over(ZONE_COLORS.poor, S.zoneFillAlpha, BACKGROUND), "Poor zone shade");
    assertColor(out.pixels.zeroZone, over(ZONE_COLORS.zero, S.zoneFillAlpha, BACKGROUND), "Zero zone shade");
    assertColor(out.pixels.poorHole, rgb(BACKGROUND), "the hole in the Poor zone is not shaded");
    assertColor(out.pixels.clearLine, over(VERDICT_COLORS.clear, S.sightLineAlpha, BACKGROUND), "clear line (green)");
    assertColor(out.pixels.penalisedLine, over(VERDICT_COLORS.penalised, S.sightLineAlpha, BACKGROUND), "penalised line (amber)");
    assertColor(out.pixels.blockedLine, over(VERDICT_COLORS.blocked, S.sightLineAlpha, BACKGROUND), "blocked line (red)");

    const png = await page.locator("canvas").screenshot({ type: "png" });
    mkdirSync(join(repoRoot, "artifacts"), { recursive: true });
    writeFileSync(join(repoRoot, "artifacts/overlay.png"), png);
    mkdirSync(join(repoRoot, "docs/img"), { recursive: true });
    writeFileSync(join(repoRoot, "docs/img/overlay.png"), png);
    assert.ok(png.length > 10_000, "a real picture, not an empty canvas");
  });
});
