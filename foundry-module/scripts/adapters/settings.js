/**
 * World and client settings, and the overlay keybinding. Thin: only game.settings and
 * game.keybindings calls. The secret is a client setting (kept in the GM's browser), because
 * Foundry sends world settings to every client — players included.
 */

import { APPLY_MODES, DEFAULT_URL, MODULE_ID, SETTINGS } from "../const.js";
import { DEFAULT_RULESET, RULESETS } from "../vocabulary.js";

/**
 * @param {any} game
 * @param {{onConnectionChange: () => void, onRulesChange: () => void, onOverlayChange: () => void}} callbacks
 */
export function registerSettings(game, { onConnectionChange, onRulesChange, onOverlayChange }) {
  const s = (key, data) => game.settings.register(MODULE_ID, key, { name: `SIGHTLINE.Settings.${key}.Name`, hint: `SIGHTLINE.Settings.${key}.Hint`, ...data });
  s(SETTINGS.URL, { scope: "world", config: true, restricted: true, type: String, default: DEFAULT_URL, onChange: onConnectionChange });
  s(SETTINGS.SECRET, { scope: "client", config: true, type: String, default: "", onChange: onConnectionChange });
  s(SETTINGS.RULESET, {
    scope: "world",
    config: true,
    restricted: true,
    type: String,
    choices: Object.fromEntries(Object.keys(RULESETS).map((id) => [id, `SIGHTLINE.Ruleset.${id}`])),
    default: DEFAULT_RULESET,
    onChange: onRulesChange,
  });
  s(SETTINGS.EDITION, { scope: "world", config: true, restricted: true, type: String, default: "current", onChange: onRulesChange });
  s(SETTINGS.APPLY_MODE, {
    scope: "world",
    config: true,
    restricted: true,
    type: String,
    choices: { [APPLY_MODES.AUTO]: "SIGHTLINE.ApplyMode.auto", [APPLY_MODES.CONFIRM]: "SIGHTLINE.ApplyMode.confirm" },
    default: APPLY_MODES.AUTO,
  });
  s(SETTINGS.ADJUDICATE_ON_ROLL, { scope: "world", config: true, restricted: true, type: Boolean, default: true });
  s(SETTINGS.PREVIEW_ON_TARGET, { scope: "world", config: true, restricted: true, type: Boolean, default: true });
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
