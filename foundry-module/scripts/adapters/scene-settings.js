/**
 * The GM's per-scene Sightline settings: ruleset, edition, locale, lines mode and the scene-wide
 * environment of the ruleset (Traveller light and weather, GURPS darkness, or GURPS darkness taken
 * from Foundry's darkness level). Stored as scene flags `rules`, `environment` and
 * `useSceneDarkness`; the module resyncs the scene when they change (`updateScene`).
 * `sceneSettingsHtml` and `sceneSettingsFromForm` are pure; `editSceneSettings` is the dialog.
 */

import { FLAGS, MODULE_ID } from "../const.js";
import { EDITIONS, ENVIRONMENT_KEYS, RULESETS } from "../vocabulary.js";
import { escapeHtml } from "./chat.js";

const opt = (value, label, selected) => `<option value="${escapeHtml(value)}"${String(selected) === String(value) ? " selected" : ""}>${escapeHtml(label)}</option>`;

/**
 * @param {{rules?: any, environment?: any, useSceneDarkness?: boolean}} current the scene's flags
 * @param {{ruleset: string}} defaults the world's ruleset
 * @param {(key: string) => string} localize
 */
export function sceneSettingsHtml(current, defaults, localize) {
  const rules = current.rules ?? {};
  const env = current.environment ?? {};
  const L = (k) => escapeHtml(localize(`SIGHTLINE.Scene.${k}`));
  const rulesets = [opt("", `${localize("SIGHTLINE.Scene.WorldDefault")} (${localize(`SIGHTLINE.Ruleset.${defaults.ruleset}`)})`, rules.ruleset ?? ""), ...Object.keys(RULESETS).map((id) => opt(id, localize(`SIGHTLINE.Ruleset.${id}`), rules.ruleset))];
  // An edition named by a word has its label ("current", "original"); one named by its number ("2.1") shows it.
  const editionName = (e) => (/^[a-z-]+$/.test(e) ? localize(`SIGHTLINE.Edition.${e}`) : e);
  const editions = [...new Set(Object.values(EDITIONS).flat())].map((e) => opt(e, editionName(e), rules.edition ?? "current"));
  const t = ENVIRONMENT_KEYS.traveller;
  return `<div class="sightline-scene">
<div class="form-group"><label>${L("Ruleset")}</label><select name="ruleset">${rulesets.join("")}</select></div>
<div class="form-group"><label>${L("Edition")}</label><select name="edition">${editions.join("")}</select></div>
<div class="form-group"><label>${L("Locale")}</label><select name="locale">${[opt("", localize("SIGHTLINE.Scene.WorldDefault"), rules.locale ?? ""), opt("en", "English", rules.locale), opt("es", "Español", rules.locale)].join("")}</select></div>
<div class="form-group"><label>${L("Lines")}</label><select name="lines">${[opt("center", localize("SIGHTLINE.Scene.LinesCenter"), rules.lines ?? "center"), opt("best", localize("SIGHTLINE.Scene.LinesBest"), rules.lines)].join("")}</select></div>
<fieldset><legend>${L("Traveller")}</legend>
<div class="form-group"><label>${L("Light")}</label><select name="light">${[opt("", "—", env.light ?? ""), ...t.light.choices.map((c) => opt(c, localize(`SIGHTLINE.Scene.LightLevel.${c}`), env.light))].join("")}</select></div>
<div class="form-group"><label>${L("Weather")}</label><select name="weather">${[opt("", "—", env.weather ?? ""), ...t.weather.choices.map((c) => opt(c, localize(`SIGHTLINE.Scene.WeatherKind.${c}`), env.weather))].join("")}</select></div>
</fieldset>
<fieldset><legend>${L("Gurps")}</legend>
<div class="form-group"><label>${L("Darkness")}</label><input type="number" name="darkness" min="-10" max="0" step="1" value="${env.darkness ?? ""}" placeholder="0"></div>
<div class="form-group"><label class="checkbox"><input type="checkbox" name="useSceneDarkness"${current.useSceneDarkness ? " checked" : ""}> ${L("UseSceneDarkness")}</label></div>
</fieldset>
</div>`;
}

/**
 * Form values → the three scene flags. Blank fields are left out (the world default or the
 * ruleset's default applies); numbers are clamped to what the contract allows.
 * @param {Record<string, string | boolean>} values
 */
export function sceneSettingsFromForm(values) {
  /** @type {Record<string, string>} */
  const rules = {};
  for (const k of ["ruleset", "edition", "locale", "lines"]) if (values[k]) rules[k] = String(values[k]);
  if (rules.lines === "center") delete rules.lines;
  if (rules.edition === "current") delete rules.edition;
  /** @type {Record<string, string | number>} */
  const environment = {};
  if (values.light) environment.light = /^[123]$/.test(String(values.light)) ? Number(values.light) : "day";
  if (values.weather) environment.weather = String(values.weather);
  if (values.darkness !== "" && values.darkness !== undefined && values.darkness !== null) {
    const d = Math.round(Number(values.darkness));
    if (Number.isFinite(d)) environment.darkness = Math.min(0, Math.max(-10, d));
  }
  return { rules, environment, useSceneDarkness: values.useSceneDarkness === true || values.useSceneDarkness === "on" };
}

/**
 * Open the dialog for a scene and save the flags (the `updateScene` hook resyncs it).
 * @param {{DialogV2: any, game: any, scene: any, defaults: {ruleset: string}}} opts
 */
export async function editSceneSettings({ DialogV2, game, scene, defaults }) {
  const flags = scene.flags?.[MODULE_ID] ?? {};
  const localize = (k) => game.i18n.localize(k);
  const result = await DialogV2.prompt({
    window: { title: `${localize("SIGHTLINE.Scene.Title")}: ${scene.name}` },
    content: sceneSettingsHtml({ rules: flags[FLAGS.RULES], environment: flags[FLAGS.ENVIRONMENT], useSceneDarkness: flags[FLAGS.SCENE_DARKNESS] }, defaults, localize),
    ok: {
      label: localize("SIGHTLINE.Traits.Save"),
      callback: (_event, button) => {
        const form = button.form;
        /** @type {Record<string, string | boolean>} */
        const values = {};
        for (const name of ["ruleset", "edition", "locale", "lines", "light", "weather", "darkness"]) values[name] = form.elements[name]?.value ?? "";
        values.useSceneDarkness = Boolean(form.elements.useSceneDarkness?.checked);
        return sceneSettingsFromForm(values);
      },
    },
    rejectClose: false,
  });
  if (!result) return null;
  // Replace the objects whole, so a cleared field does not linger.
  for (const update of sceneFlagUpdates(result, { replace: /** @type {any} */ (globalThis)._replace })) await scene.update(update);
  return result;
}

/**
 * The scene updates that store the settings, replacing the `rules` and `environment` objects whole
 * (a merge would keep a field the GM cleared).
 * - V14: Foundry's `_replace(value)` (a `ForcedReplacement` operator; the `-=` key form is
 *   deprecated there and logs a warning): one update.
 * - V13 (no `_replace`): the `-=` key deletes first, then the values are set: two updates.
 * @param {{rules: object, environment: object, useSceneDarkness: boolean}} result
 * @param {{replace?: (value: unknown) => unknown}} [ops] V14's global `_replace`, when it exists
 * @returns {Record<string, unknown>[]}
 */
export function sceneFlagUpdates(result, { replace } = {}) {
  const key = (k) => `flags.${MODULE_ID}.${k}`;
  if (typeof replace === "function") {
    return [{ [key(FLAGS.RULES)]: replace(result.rules), [key(FLAGS.ENVIRONMENT)]: replace(result.environment), [key(FLAGS.SCENE_DARKNESS)]: result.useSceneDarkness }];
  }
  return [
    { [`flags.${MODULE_ID}.-=${FLAGS.RULES}`]: null, [`flags.${MODULE_ID}.-=${FLAGS.ENVIRONMENT}`]: null },
    { [`flags.${MODULE_ID}`]: { [FLAGS.RULES]: result.rules, [FLAGS.ENVIRONMENT]: result.environment, [FLAGS.SCENE_DARKNESS]: result.useSceneDarkness } },
  ];
}

/** A scene-control tool (Token controls, GM only) opening the dialog for the viewed scene. */
export function addSceneSettingsControl(controls, { isGM, onClick }) {
  const tokens = controls?.tokens;
  if (!tokens?.tools) return;
  tokens.tools[`${MODULE_ID}-scene`] = {
    name: `${MODULE_ID}-scene`,
    title: "SIGHTLINE.Scene.Title",
    icon: "fa-solid fa-cloud-moon",
    order: Object.keys(tokens.tools).length,
    button: true,
    visible: isGM,
    onChange: () => onClick(),
  };
}
