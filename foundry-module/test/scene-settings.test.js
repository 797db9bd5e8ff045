/**
 * scripts/adapters/scene-settings.js: the GM's per-scene settings — the dialog's form (its current
 * values, its labels in English and Spanish), the form read back into the scene flags, the dialog
 * saving them, and the Token-controls button that opens it. (The `_replace` / `-=` update forms of
 * sceneFlagUpdates are checked in v14.test.js.)
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { addSceneSettingsControl, sceneSettingsFromForm, sceneSettingsHtml } from "../scripts/adapters/scene-settings.js";
import { sceneControlsStub } from "./helpers/foundry-stubs.js";
import { chromiumSkipReason, openModulePage } from "./helpers/browser.js";

const here = dirname(fileURLToPath(import.meta.url));
const LANGS = Object.fromEntries(["en", "es"].map((l) => [l, JSON.parse(readFileSync(resolve(here, `../lang/${l}.json`), "utf8"))]));
const text = (lang, key) => key.split(".").reduce((o, k) => o?.[k], LANGS[lang]);
const root = resolve(here, "..");
const FLAG = "sightline-bridge";

describe("sceneSettingsHtml", () => {
  test("localised labels are escaped, never read as markup", () => {
    const html = sceneSettingsHtml({}, { ruleset: "traveller" }, (k) => (k === "SIGHTLINE.Scene.Weather" ? "<b>Tiempo</b> & clima" : k));
    assert.ok(html.includes("&lt;b&gt;Tiempo&lt;/b&gt; &amp; clima"));
    assert.ok(!html.includes("<b>"));
  });

  for (const lang of ["en", "es"]) {
    test(`every label the form asks for exists in ${lang}.json (rulesets, light levels, weather kinds included)`, () => {
      const asked = new Set();
      const localize = (k) => (asked.add(k), text(lang, k) ?? `MISSING ${k}`);
      const html = sceneSettingsHtml({}, { ruleset: "traveller" }, localize);
      assert.ok(asked.size >= 20, `only ${asked.size} keys asked`);
      for (const k of asked) assert.equal(typeof text(lang, k), "string", `${lang}: missing ${k}`);
      assert.ok(!html.includes("MISSING"));
      assert.ok(!/>SIGHTLINE\./.test(html), "no key shown as a label");
    });
  }

  test("the Spanish form reads in Spanish", () => {
    const html = sceneSettingsHtml({}, { ruleset: "gurps-4e" }, (k) => text("es", k));
    for (const label of ["Por defecto del mundo (GURPS 4ª edición)", "Noche, nivel de luz 1", "De día", ">Vigente (el texto más reciente)<", ">2.1<"]) assert.ok(html.includes(label), `missing «${label}»`);
    assert.ok(!html.includes(">current<"), "an edition shown by its label, not its id");
  });
});

describe("sceneSettingsFromForm", () => {
  test("blank fields, centre lines and the current edition are left out (the defaults apply)", () => {
    const flags = sceneSettingsFromForm({ ruleset: "", edition: "current", locale: "", lines: "center", light: "", weather: "", darkness: "", useSceneDarkness: false });
    assert.deepEqual(flags, { rules: {}, environment: {}, useSceneDarkness: false });
  });

  test("Traveller light: '1'..'3' become numbers, 'day' stays, anything else falls back to 'day'", () => {
    assert.equal(sceneSettingsFromForm({ light: "3" }).environment.light, 3);
    assert.equal(sceneSettingsFromForm({ light: "day" }).environment.light, "day");
    assert.equal(sceneSettingsFromForm({ light: "4" }).environment.light, "day");
  });

  test("GURPS darkness is rounded and clamped to 0..-10; a non-number is left out", () => {
    const d = (darkness) => sceneSettingsFromForm({ darkness }).environment.darkness;
    assert.deepEqual([d("-3"), d("-2.6"), d("-14"), d("5"), d("0"), d("abc"), d(""), d(undefined)], [-3, -3, -10, 0, 0, undefined, undefined, undefined]);
  });

  test("the scene-darkness checkbox counts as ticked when true or 'on', not otherwise", () => {
    assert.deepEqual(["on", true, "", false, "off"].map((v) => sceneSettingsFromForm({ useSceneDarkness: v }).useSceneDarkness), [true, true, false, false, false]);
  });

});

describe("addSceneSettingsControl", () => {
  test("adds a GM-only button tool after the Token controls' own tools; pressing it opens the dialog", () => {
    const controls = sceneControlsStub();
    let opened = 0;
    addSceneSettingsControl(controls, { isGM: true, onClick: () => opened++ });
    const tool = controls.tokens.tools["sightline-bridge-scene"];
    assert.deepEqual(Object.keys(controls.tokens.tools), ["select", "target", "sightline-bridge-scene"]);
    assert.deepEqual({ ...tool, onChange: typeof tool.onChange }, { name: "sightline-bridge-scene", title: "SIGHTLINE.Scene.Title", icon: "fa-solid fa-cloud-moon", order: 2, button: true, visible: true, onChange: "function" });
    tool.onChange(new Event("click"), true);
    assert.equal(opened, 1);
    assert.deepEqual(controls.walls.tools, {});
  });

  test("a player's client gets the tool hidden", () => {
    const controls = sceneControlsStub();
    addSceneSettingsControl(controls, { isGM: false, onClick: () => {} });
    assert.equal(controls.tokens.tools["sightline-bridge-scene"].visible, false);
  });

  test("controls without Token tools (none, or an older shape) are left alone", () => {
    assert.doesNotThrow(() => addSceneSettingsControl(undefined, { isGM: true, onClick: () => {} }));
    const controls = { walls: sceneControlsStub().walls };
    addSceneSettingsControl(controls, { isGM: true, onClick: () => {} });
    assert.deepEqual(Object.keys(controls), ["walls"]);
  });
});

describe("the form and the dialog in headless Chromium (real form controls)", { skip: chromiumSkipReason(), timeout: 60_000 }, () => {
  let opened;
  let page;
  before(async () => {
    opened = await openModulePage(
      root,
      { settings: "/scripts/adapters/scene-settings.js", stubs: "/test/helpers/foundry-stubs.js", F: "/test/helpers/fixtures.js" },
      { es: LANGS.es },
    );
    page = opened.page;
    await page.evaluate(() => {
      const w = /** @type {any} */ (window);
      /** What the form submits: each named control's value, a checkbox's state. */
      w.read = (form) => Object.fromEntries([...form.elements].filter((e) => e.name).map((e) => [e.name, e.type === "checkbox" ? e.checked : e.value]));
      /** Render the form's HTML in a real <form> and read it back. */
      w.rendered = (html) => {
        const form = document.createElement("form");
        form.innerHTML = html;
        return w.read(form);
      };
    });
  });
  after(async () => {
    await opened?.close();
  });

  test("the form shows the scene's current settings selected, darkness filled in and the scene-darkness box ticked", async () => {
    const values = await page.evaluate(() => {
      const { settings, rendered } = /** @type {any} */ (window);
      const current = { rules: { ruleset: "traveller", edition: "current", locale: "es", lines: "best" }, environment: { light: 2, weather: "very-poor", darkness: -4 }, useSceneDarkness: true };
      return rendered(settings.sceneSettingsHtml(current, { ruleset: "infinity-n4" }, (k) => k));
    });
    assert.deepEqual(values, { ruleset: "traveller", edition: "current", locale: "es", lines: "best", light: "2", weather: "very-poor", darkness: "-4", useSceneDarkness: true });
  });

  test("a scene without flags shows the world default (naming the world's ruleset), centre lines and no environment", async () => {
    const out = await page.evaluate(() => {
      const { settings, rendered } = /** @type {any} */ (window);
      const html = settings.sceneSettingsHtml({}, { ruleset: "gurps-4e" }, (k) => k);
      const form = document.createElement("form");
      form.innerHTML = html;
      return { values: rendered(html), label: form.elements.ruleset.selectedOptions[0].textContent };
    });
    assert.deepEqual(out.values, { ruleset: "", edition: "current", locale: "", lines: "center", light: "", weather: "", darkness: "", useSceneDarkness: false });
    assert.equal(out.label, "SIGHTLINE.Scene.WorldDefault (SIGHTLINE.Ruleset.gurps-4e)");
  });

  test("opening the form and saving it untouched keeps the scene's settings", async () => {
    const out = await page.evaluate(() => {
      const { settings, rendered } = /** @type {any} */ (window);
      const current = { rules: { ruleset: "infinity-n4", edition: "1.3", locale: "en", lines: "best" }, environment: { light: 1, weather: "poor", darkness: -7 }, useSceneDarkness: true };
      return { current, saved: settings.sceneSettingsFromForm(rendered(settings.sceneSettingsHtml(current, { ruleset: "traveller" }, (k) => k))) };
    });
    assert.deepEqual(out.saved, out.current);
  });

  test("the Spanish dialog is titled with the scene's name and shows its flags; the GM's edits replace them (V13: delete, then set)", async () => {
    const out = await page.evaluate(async () => {
      const { settings, stubs, F, es, read } = /** @type {any} */ (window);
      const scene = stubs.withUpdates(F.scene({ name: "Docks", flags: { "sightline-bridge": { rules: { ruleset: "gurps-4e" }, environment: { darkness: -3 }, useSceneDarkness: false } } }));
      const game = stubs.gameStub({ user: { id: "u-gm", isGM: true } });
      game.i18n = { ...game.i18n, lang: "es", localize: (k) => k.split(".").reduce((o, p) => o?.[p], es) ?? k };
      let before = null;
      const { DialogV2, shown } = stubs.dialogV2Stub((form) => {
        before = read(form);
        form.elements.ruleset.value = "traveller";
        form.elements.locale.value = "es";
        form.elements.light.value = "2";
        form.elements.weather.value = "good";
        form.elements.darkness.value = "";
      });
      const result = await settings.editSceneSettings({ DialogV2, game, scene, defaults: { ruleset: "infinity-n4" } });
      const { config } = shown[0];
      return { result, before, updates: scene.updates, title: config.window.title, ok: config.ok.label, rejectClose: config.rejectClose };
    });
    const saved = { rules: { ruleset: "traveller", locale: "es" }, environment: { light: 2, weather: "good" }, useSceneDarkness: false };
    assert.deepEqual(out.before, { ruleset: "gurps-4e", edition: "current", locale: "", lines: "center", light: "", weather: "", darkness: "-3", useSceneDarkness: false });
    assert.deepEqual(out.result, saved);
    assert.equal(out.title, `${text("es", "SIGHTLINE.Scene.Title")}: Docks`);
    assert.equal(out.ok, text("es", "SIGHTLINE.Traits.Save"));
    for (const lang of ["en", "es"]) for (const k of ["SIGHTLINE.Scene.Title", "SIGHTLINE.Traits.Save"]) assert.equal(typeof text(lang, k), "string", `${lang}: ${k}`);
    assert.equal(out.rejectClose, false);
    assert.deepEqual(out.updates, [{ [`flags.${FLAG}.-=rules`]: null, [`flags.${FLAG}.-=environment`]: null }, { [`flags.${FLAG}`]: saved }]);
  });

  test("in V14 (global _replace) the flags are saved in one update, with the ticked scene-darkness box", async () => {
    const updates = await page.evaluate(async () => {
      const { settings, stubs, F } = /** @type {any} */ (window);
      const scene = stubs.withUpdates(F.scene({ flags: {} }));
      const w = /** @type {any} */ (window);
      w._replace = (value) => ({ replaced: value });
      try {
        const { DialogV2 } = stubs.dialogV2Stub((form) => {
          form.elements.darkness.value = "-5";
          form.elements.useSceneDarkness.checked = true;
        });
        await settings.editSceneSettings({ DialogV2, game: stubs.gameStub({ user: { id: "u-gm", isGM: true } }), scene, defaults: { ruleset: "gurps-4e" } });
      } finally {
        delete w._replace;
      }
      return scene.updates;
    });
    assert.deepEqual(updates, [{ [`flags.${FLAG}.rules`]: { replaced: {} }, [`flags.${FLAG}.environment`]: { replaced: { darkness: -5 } }, [`flags.${FLAG}.useSceneDarkness`]: true }]);
  });

  test("a closed dialog changes nothing and returns null", async () => {
    const out = await page.evaluate(async () => {
      const { settings, stubs, F } = /** @type {any} */ (window);
      const scene = stubs.withUpdates(F.scene({ flags: { "sightline-bridge": { rules: { ruleset: "gurps-4e" } } } }));
      const result = await settings.editSceneSettings({ DialogV2: stubs.dialogV2Stub(() => false).DialogV2, game: stubs.gameStub({ user: { id: "u-gm", isGM: true } }), scene, defaults: { ruleset: "gurps-4e" } });
      return { result, updates: scene.updates };
    });
    assert.deepEqual(out, { result: null, updates: [] });
  });
});
