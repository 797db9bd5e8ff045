/**
 * scripts/adapters/region-notice.js: the notice on a region's sheet (RegionConfig, an ApplicationV2)
 * when the bridge does not use the region — in a real DOM (headless Chromium). The notice's place
 * in `.window-content`, de-duplication on re-render and removal for a used region are checked in
 * ignored.test.js; here: what it returns, markup in a reason, a blank reason, a sheet without
 * `.window-content`, the sheet's own content, and the heading in English and Spanish.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromiumSkipReason, launchBrowser } from "./helpers/browser.js";

const here = dirname(fileURLToPath(import.meta.url));
const LANGS = Object.fromEntries(["en", "es"].map((l) => [l, JSON.parse(readFileSync(resolve(here, `../lang/${l}.json`), "utf8"))]));
const SHEET = `<div id="app" class="application sheet region-config"><header class="window-header">Region</header><section class="window-content"><nav class="tabs"></nav><div class="tab identity">Name</div></section></div>`;

describe("showIgnoredNotice (real DOM, headless Chromium)", { skip: chromiumSkipReason() }, () => {
  let browser;
  let page;
  before(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.setContent(`<!doctype html><html><body></body></html>`);
    const source = readFileSync(resolve(here, "../scripts/adapters/region-notice.js"), "utf8").replace(/^export /gm, "");
    await page.addScriptTag({ content: `${source}\nwindow.showIgnoredNotice = showIgnoredNotice;` });
  });
  after(async () => browser?.close());

  /** Render `sheet` fresh, run `fn(el, show)` in the page, return its result. */
  const inSheet = (sheet, fn, arg) =>
    page.evaluate(
      ([sheetHtml, fnSource, a]) => {
        document.body.innerHTML = sheetHtml;
        const el = document.getElementById("app");
        return new Function("el", "show", "arg", `return (${fnSource})(el, show, arg);`)(el, /** @type {any} */ (window).showIgnoredNotice, a);
      },
      [sheet, fn.toString(), arg],
    );

  test("returns the notice it put in the sheet, and null for a used region", async () => {
    const r = await inSheet(SHEET, (el, show) => {
      const notice = show(el, { reason: "no shapes" }, { title: "T:" });
      const isFirst = notice === el.querySelector(".window-content").firstElementChild;
      const none = show(el, null, { title: "T:" });
      return { isFirst, tag: notice.tagName, none };
    });
    assert.deepEqual(r, { isFirst: true, tag: "DIV", none: null });
  });

  test("a reason or title with markup is shown as text, never parsed into elements", async () => {
    const reason = `zone "<img src=x onerror=window.pwned=1>" unknown`;
    const r = await inSheet(
      SHEET,
      (el, show, a) => {
        const notice = show(el, { reason: a }, { title: "<b>Sightline</b>:" });
        return { text: notice.textContent, elements: [...notice.querySelectorAll("*")].map((e) => e.tagName), imgs: el.querySelectorAll("img").length };
      },
      reason,
    );
    assert.deepEqual(r, { text: `<b>Sightline</b>: ${reason}`, elements: ["STRONG"], imgs: 0 });
  });

  test("an entry with a blank reason shows nothing and takes away the notice already shown", async () => {
    const r = await inSheet(SHEET, (el, show) => {
      show(el, { reason: "no shapes" }, { title: "T:" });
      const returned = show(el, { reason: "" }, { title: "T:" });
      return { returned, left: el.querySelectorAll(".sightline-ignored").length };
    });
    assert.deepEqual(r, { returned: null, left: 0 });
  });

  test("a sheet without .window-content gets the notice first in its root element", async () => {
    const r = await inSheet(`<div id="app"><p>Shapes</p></div>`, (el, show) => {
      show(el, { reason: "no shapes" }, { title: "T:" });
      return [...el.children].map((c) => c.className || c.tagName);
    });
    assert.deepEqual(r, ["sightline-ignored", "P"]);
  });

  test("the sheet's own content stays in place, after the notice", async () => {
    const r = await inSheet(SHEET, (el, show) => {
      show(el, { reason: "no shapes" }, { title: "T:" });
      show(el, { reason: "other" }, { title: "T:" });
      return { content: [...el.querySelector(".window-content").children].map((c) => c.className || c.tagName), header: el.querySelector(".window-header").textContent };
    });
    assert.deepEqual(r, { content: ["sightline-ignored", "tabs", "tab identity"], header: "Region" });
  });

  for (const [lang, title] of [
    ["en", "Sightline does not use this zone:"],
    ["es", "Sightline no usa esta zona:"],
  ]) {
    test(`the heading main.js passes (SIGHTLINE.Ignored.RegionTitle) reads in ${lang}: «${title} <reason>»`, async () => {
      assert.equal(LANGS[lang].SIGHTLINE.Ignored.RegionTitle, title);
      const r = await inSheet(SHEET, (el, show, t) => show(el, { reason: "sin formas" }, { title: t }).textContent, title);
      assert.equal(r, `${title} sin formas`);
    });
  }
});
