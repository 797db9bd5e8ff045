/**
 * scripts/adapters/scene-settings.js: the GM's per-scene settings — the dialog's form (its current
 * values, its labels in English and Spanish), the form read back into the scene flags, the dialog
 * saving them, and the Token-controls button that opens it. (The `_replace` / `-=` update forms of
 * sceneFlagUpdates are checked in v14.test.js.)
 */
import { test, describe, afterEach } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { addSceneSettingsControl, editSceneSettings, sceneSettingsFromForm, sceneSettingsHtml } from "../scripts/adapters/scene-settings.js";
import { dialogV2AnswerStub, gameStub, sceneControlsStub, withUpdates } from "./helpers/foundry-stubs.js";
import * as F from "./helpers/fixtures.js";

const here = dirname(fileURLToPath(import.meta.url));
const LANGS = Object.fromEntries(["en", "es"].map((l) => [l, JSON.parse(readFileSync(resolve(here, `../lang/${l}.json`), "utf8"))]));
const text = (lang, key) => key.split(".").reduce((o, k) => o?.[k], LANGS[lang]);
const GM = { id: "gm1", name: "GM", isGM: true, active: true };
const FLAG = "sightline-bridge";

/** What a browser submits for the form as rendered: each select's selected option (else its first), each input's value, a checkbox's state. */
function renderedValues(html) {
  const values = {};
  for (const [, name, body] of html.matchAll(/<select name="([^"]+)">(.*?)<\/select>/gs)) {
    const options = [...body.matchAll(/<option value="([^"]*)"( selected)?>/g)];
    values[name] = (options.find((o) => o[2]) ?? options[0])[1];
  }
  for (const [, attrs] of html.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]+)"/.exec(attrs)[1];
    values[name] = /type="checkbox"/.test(attrs) ? /\bchecked\b/.test(attrs) : /value="([^"]*)"/.exec(attrs)[1];
  }
  return values;
}

describe("sceneSettingsHtml", () => {
  test("shows the scene's current settings selected, darkness filled in and the scene-darkness box ticked", () => {
    const current = { rules: { ruleset: "traveller", edition: "current", locale: "es", lines: "best" }, environment: { light: 2, weather: "very-poor", darkness: -4 }, useSceneDarkness: true };
    const values = renderedValues(sceneSettingsHtml(current, { ruleset: "infinity-n4" }, (k) => k));
    assert.deepEqual(values, { ruleset: "traveller", edition: "current", locale: "es", lines: "best", light: "2", weather: "very-poor", darkness: "-4", useSceneDarkness: true });
  });

  test("a scene without flags shows the world default (naming the world's ruleset), centre lines and no environment", () => {
    const html = sceneSettingsHtml({}, { ruleset: "gurps-4e" }, (k) => k);
    assert.deepEqual(renderedValues(html), { ruleset: "", edition: "current", locale: "", lines: "center", light: "", weather: "", darkness: "", useSceneDarkness: false });
    assert.match(html, /<option value="" selected>SIGHTLINE\.Scene\.WorldDefault \(SIGHTLINE\.Ruleset\.gurps-4e\)<\/option>/);
  });

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
    for (const label of ["Por defecto del mundo (GURPS 4ª edición)", "Noche, nivel de luz 1", "De día"]) assert.ok(html.includes(label), `missing «${label}»`);
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

  test("opening the form and saving it untouched keeps the scene's settings", () => {
    const current = { rules: { ruleset: "infinity-n4", edition: "1.3", locale: "en", lines: "best" }, environment: { light: 1, weather: "poor", darkness: -7 }, useSceneDarkness: true };
    assert.deepEqual(sceneSettingsFromForm(renderedValues(sceneSettingsHtml(current, { ruleset: "traveller" }, (k) => k))), current);
  });
});

describe("editSceneSettings", () => {
  const scene = () => {
    return withUpdates(F.scene({ name: "Docks", flags: { [FLAG]: { rules: { ruleset: "gurps-4e" }, environment: { darkness: -3 }, useSceneDarkness: false } } }));
  };
  const answers = { ruleset: "traveller", edition: "current", locale: "es", lines: "center", light: "2", weather: "good", darkness: "", useSceneDarkness: true };
  const saved = { rules: { ruleset: "traveller", locale: "es" }, environment: { light: 2, weather: "good" }, useSceneDarkness: false };
  afterEach(() => delete globalThis._replace);

  test("the dialog is titled with the scene's name, shows its flags, and saving replaces them (V13: delete, then set)", async () => {
    const s = scene();
    const game = gameStub({ user: GM, scenes: [s] });
    const { DialogV2, prompts } = dialogV2AnswerStub(() => ({ ...answers, useSceneDarkness: false }));
    const result = await editSceneSettings({ DialogV2, game, scene: s, defaults: { ruleset: "infinity-n4" } });
    assert.deepEqual(result, saved);
    assert.equal(prompts[0].window.title, "SIGHTLINE.Scene.Title: Docks");
    assert.equal(prompts[0].ok.label, "SIGHTLINE.Traits.Save");
    assert.equal(prompts[0].rejectClose, false);
    assert.equal(renderedValues(prompts[0].content).ruleset, "gurps-4e");
    assert.equal(renderedValues(prompts[0].content).darkness, "-3");
    assert.deepEqual(s.updates, [
      { [`flags.${FLAG}.-=rules`]: null, [`flags.${FLAG}.-=environment`]: null },
      { [`flags.${FLAG}`]: saved },
    ]);
  });

  test("in V14 (global _replace) the flags are saved in one update with the checkbox's state", async () => {
    const s = scene();
    globalThis._replace = (value) => ({ replaced: value });
    const { DialogV2 } = dialogV2AnswerStub(() => answers);
    await editSceneSettings({ DialogV2, game: gameStub({ user: GM, scenes: [s] }), scene: s, defaults: { ruleset: "infinity-n4" } });
    assert.deepEqual(s.updates, [
      { [`flags.${FLAG}.rules`]: { replaced: saved.rules }, [`flags.${FLAG}.environment`]: { replaced: saved.environment }, [`flags.${FLAG}.useSceneDarkness`]: true },
    ]);
  });

  test("a dismissed dialog changes nothing and returns null", async () => {
    const s = scene();
    const { DialogV2 } = dialogV2AnswerStub(() => null);
    assert.equal(await editSceneSettings({ DialogV2, game: gameStub({ user: GM, scenes: [s] }), scene: s, defaults: { ruleset: "infinity-n4" } }), null);
    assert.deepEqual(s.updates, []);
  });

  test("the dialog's title and button read in Spanish (keys present in en and es)", async () => {
    const s = scene();
    const game = gameStub({ user: GM, scenes: [s] });
    game.i18n.localize = (k) => text("es", k) ?? k;
    const { DialogV2, prompts } = dialogV2AnswerStub(() => null);
    await editSceneSettings({ DialogV2, game, scene: s, defaults: { ruleset: "infinity-n4" } });
    assert.equal(prompts[0].window.title, `${text("es", "SIGHTLINE.Scene.Title")}: Docks`);
    for (const lang of ["en", "es"]) for (const k of ["SIGHTLINE.Scene.Title", "SIGHTLINE.Traits.Save"]) assert.equal(typeof text(lang, k), "string", `${lang}: ${k}`);
    assert.equal(prompts[0].ok.label, text("es", "SIGHTLINE.Traits.Save"));
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
