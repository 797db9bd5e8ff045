/**
 * World and client settings, and the overlay keybinding. Thin: only game.settings and
 * game.keybindings calls. The secret is a client setting (kept in the GM's browser), because
 * Foundry sends world settings to every client — players included.
 */

import { APPLY_MODES, DEFAULT_OBSERVATION_SKILLS, DEFAULT_URL, MODULE_ID, SETTINGS } from "../const.js";
import { DEFAULT_RULESET, RULESETS } from "../vocabulary.js";
import { refusalText } from "../errors.js";

/**
 * @param {any} game
 * @param {{onConnectionChange: () => void, onRulesChange: () => void, onOverlayChange: () => void}} callbacks
 */
export function registerSettings(game, { onConnectionChange, onRulesChange, onOverlayChange }) {
  const s = (key, data) => game.settings.register(MODULE_ID, key, { name: `SIGHTLINE.Settings.${key}.Name`, hint: `SIGHTLINE.Settings.${key}.Hint`, ...data });
  // World settings are the GM's to change (Foundry's SETTINGS_MODIFY); `restricted` is an option of menus and
  // keybindings only.
  s(SETTINGS.URL, { scope: "world", config: true, type: String, default: DEFAULT_URL, onChange: onConnectionChange });
  s(SETTINGS.SECRET, { scope: "client", config: true, type: String, default: "", onChange: onConnectionChange });
  s(SETTINGS.RULESET, {
    scope: "world",
    config: true,
    type: String,
    choices: Object.fromEntries(Object.keys(RULESETS).map((id) => [id, `SIGHTLINE.Ruleset.${id}`])),
    default: DEFAULT_RULESET,
    onChange: onRulesChange,
  });
  s(SETTINGS.EDITION, { scope: "world", config: true, type: String, default: "current", onChange: onRulesChange });
  s(SETTINGS.APPLY_MODE, {
    scope: "world",
    config: true,
    type: String,
    choices: { [APPLY_MODES.AUTO]: "SIGHTLINE.ApplyMode.auto", [APPLY_MODES.CONFIRM]: "SIGHTLINE.ApplyMode.confirm" },
    default: APPLY_MODES.AUTO,
  });
  s(SETTINGS.ADJUDICATE_ON_ROLL, { scope: "world", config: true, type: Boolean, default: true });
  s(SETTINGS.PREVIEW_ON_TARGET, { scope: "world", config: true, type: Boolean, default: true });
  // twodsix only (systems/twodsix.js): which skills' throws are observation tasks; shown in its worlds alone.
  s(SETTINGS.OBSERVATION_SKILLS, { scope: "world", config: game.system?.id === "twodsix", type: String, default: DEFAULT_OBSERVATION_SKILLS });
  // Shown only where the modifier cannot reach the roll by itself (not GURPS, not twodsix): adapters/prompt.js.
  s(SETTINGS.PREROLL_PROMPT, { scope: "client", config: true, type: Boolean, default: true });
  s(SETTINGS.OVERLAY_ENABLED, { scope: "client", config: false, type: Boolean, default: false, onChange: onOverlayChange });
  s(SETTINGS.OVERLAY_ALL_TOKENS, { scope: "client", config: true, type: Boolean, default: false, onChange: onOverlayChange });
}

/** Shift+L toggles the GM overlay. */
export function registerKeybindings(game, { toggleOverlay }) {
  game.keybindings.register(MODULE_ID, "toggleOverlay", {
    name: "SIGHTLINE.Keybinding.ToggleOverlay",
    editable: [{ key: "KeyL", modifiers: ["Shift"] }],
    restricted: true,
    onDown: () => {
      toggleOverlay();
      return true;
    },
  });
}

/** Read a setting of this module. */
export function getSetting(game, key) {
  return game.settings.get(MODULE_ID, key);
}

export function setSetting(game, key, value) {
  return game.settings.set(MODULE_ID, key, value);
}

/**
 * A player's settings form without the bridge secret: a client setting shows in every user's form, and
 * only a GM's browser ever dials the bridge. Returns whether a field was hidden.
 * @param {any} element the SettingsConfig root element
 */
export function hideSecretFromPlayers(element) {
  const group = element?.querySelector?.(`[name="${MODULE_ID}.${SETTINGS.SECRET}"]`)?.closest?.(".form-group");
  if (!group) return false;
  group.hidden = true;
  return true;
}

/**
 * The "Test connection" button under the bridge settings (SettingsConfig's form): dials the URL and
 * secret typed in the form (saved or not) and says in one line what happened and what to do.
 * @param {any} element the SettingsConfig root element
 * @param {{localize: (key: string, data?: Record<string, string>) => string,
 *          run: (url: string, secret: string) => Promise<{ok: boolean, code: string, bridge?: {version?: string}}>,
 *          page?: string, lang?: string}} opts
 * @returns {HTMLButtonElement | null} the button, or null when the form has no bridge settings
 */
export function addTestConnectionButton(element, { localize, run, page = globalThis.location?.host ?? "", lang = "en" }) {
  const secretInput = element?.querySelector?.(`[name="${MODULE_ID}.${SETTINGS.SECRET}"]`);
  const urlInput = element?.querySelector?.(`[name="${MODULE_ID}.${SETTINGS.URL}"]`);
  const group = secretInput?.closest?.(".form-group");
  if (!group || !urlInput || element.querySelector("[data-sightline-test]")) return null;
  const doc = element.ownerDocument;
  const row = doc.createElement("div");
  row.className = "form-group sightline-test";
  const button = doc.createElement("button");
  button.type = "button";
  button.dataset.sightlineTest = "1";
  button.textContent = localize("SIGHTLINE.Test.Button");
  const out = doc.createElement("p");
  out.className = "hint sightline-test-result";
  out.setAttribute("role", "status");
  row.append(button, out);
  group.after(row);
  button.addEventListener("click", async () => {
    button.disabled = true;
    out.textContent = localize("SIGHTLINE.Test.Running");
    try {
      const result = await run(String(urlInput.value ?? "").trim(), String(secretInput.value ?? ""));
      out.dataset.code = result.code;
      out.textContent = testResultText(result, { localize, url: String(urlInput.value ?? ""), page, lang });
      // The bridge's own words, when it refused the test, for a bug report: the line itself is the reader's.
      out.title = testBridgeWords(result);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/**
 * A test's own words where the live connection's notice would mislead: the test dials once, so nothing is
 * "reconnecting" or "retrying", and a refusal, a silence and a close before the welcome are different things.
 */
const TEST_TEXTS = Object.freeze({
  unreachable: "SIGHTLINE.Test.refused",
  "no-answer": "SIGHTLINE.Test.no-answer",
  timeout: "SIGHTLINE.Test.no-welcome",
  closed: "SIGHTLINE.Test.closed",
  "rate-limited": "SIGHTLINE.Test.rate-limited",
});

/** What a close code means, for a connection closed before the bridge's welcome. */
const CLOSE_MEANINGS = Object.freeze({
  1000: "SIGHTLINE.Test.Close.1000",
  1001: "SIGHTLINE.Test.Close.1001",
  1006: "SIGHTLINE.Test.Close.1006",
  1008: "SIGHTLINE.Test.Close.1008",
  1009: "SIGHTLINE.Test.Close.1009",
  1011: "SIGHTLINE.Test.Close.1011",
  1013: "SIGHTLINE.Test.Close.1013",
  4400: "SIGHTLINE.Test.Close.4400",
  4408: "SIGHTLINE.Test.Close.4408",
});

/**
 * The line a test result reads as: the success with the bridge's version, or what happened and what to do.
 * A refusal of the bridge (`details` beside its `message`, or a `refusal` before a close) is read from its
 * code and details in the reader's words (errors.js); a close reason the bridge gave is shown as it came.
 */
export function testResultText(result, { localize, url, page = "", lang = "en" }) {
  if (result.ok) return localize("SIGHTLINE.Test.ok", { version: String(result.bridge?.version ?? "?") });
  const reader = { format: localize, lang };
  const message = result.details !== undefined ? refusalText(result, reader).text : (result.message ?? "");
  const data = { url, page, message, seconds: String(result.seconds ?? 5) };
  if (result.code === "closed") {
    const close = Number(result.close);
    const meaning = localize(CLOSE_MEANINGS[close] ?? "SIGHTLINE.Test.Close.other");
    const words = result.refusal ? refusalText(result.refusal, reader).text : result.message;
    const said = words ? localize("SIGHTLINE.Test.Said", { message: words }) : "";
    return localize(TEST_TEXTS.closed, { ...data, code: String(Number.isFinite(close) ? close : "?"), meaning, said });
  }
  const key = TEST_TEXTS[result.code] ?? `SIGHTLINE.Error.${result.code}`;
  return localize(key, data);
}

/** The bridge's own (English) words of a refused test, for a tooltip; "" when the bridge said nothing. */
export function testBridgeWords(result) {
  if (result?.refusal) return String(result.refusal.message ?? "");
  return result?.details !== undefined ? String(result.message ?? "") : "";
}
