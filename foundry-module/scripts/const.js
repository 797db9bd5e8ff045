/**
 * Every name this module shares with Foundry, the bridge or other modules lives here: the module
 * id, the socket channel, the region behaviour sub-type, setting and flag keys, hook names.
 * Pure: no Foundry globals.
 */

export const MODULE_ID = "sightline-bridge";
export const MODULE_VERSION = "0.1.0";

/** The wire protocol version this module speaks (shared/contract/protocol-v1.md). */
export const PROTOCOL_VERSION = 1;

/** Foundry's module socket channel; needs `"socket": true` in module.json. */
export const SOCKET_NAME = `module.${MODULE_ID}`;

/** The Region Behavior sub-type that marks a region as a visibility zone. */
export const ZONE_BEHAVIOR = "visibilityZone";
export const ZONE_BEHAVIOR_TYPE = `${MODULE_ID}.${ZONE_BEHAVIOR}`;

/** The canvas layer name (`canvas.sightline`). */
export const LAYER_NAME = "sightline";

/** Hook called with every ruling the module obtains for an attack. */
export const HOOK_ADJUDICATED = "sightline.adjudicated";

/** Setting keys (game.settings.get(MODULE_ID, SETTINGS.X)). */
export const SETTINGS = Object.freeze({
  URL: "bridgeUrl",
  SECRET: "secret",
  RULESET: "ruleset",
  EDITION: "edition",
  APPLY_MODE: "applyMode",
  ADJUDICATE_ON_ROLL: "adjudicateOnRoll",
  PREVIEW_ON_TARGET: "previewOnTarget",
  OVERLAY_ENABLED: "overlayEnabled",
  OVERLAY_ALL_TOKENS: "overlayAllTokens",
  PREROLL_PROMPT: "prerollPrompt",
  OBSERVATION_SKILLS: "observationSkills",
});

/** twodsix skills whose throws are observation tasks, the rulings' (a world setting; comma-separated). */
export const DEFAULT_OBSERVATION_SKILLS = "Recon, Observation, Sensors, Electronics (Sensors)";

/** Apply modes: feed the modifier at once, or wait for the GM to confirm it. */
export const APPLY_MODES = Object.freeze({ AUTO: "auto", CONFIRM: "confirm" });

/** Document flag keys (flags[MODULE_ID][FLAGS.X]). */
export const FLAGS = Object.freeze({
  /** Token: array of contract trait strings. */
  TRAITS: "traits",
  /** Scene: `{ruleset?, edition?, lines?}` overriding the world settings. */
  RULES: "rules",
  /** Scene: contract `environment` object, e.g. `{darkness: -3}`. */
  ENVIRONMENT: "environment",
  /** Scene: true to derive GURPS `darkness` from Foundry's darkness level (opt-in). */
  SCENE_DARKNESS: "useSceneDarkness",
});

/** Default bridge URL: the bridge's default listen address. */
export const DEFAULT_URL = "ws://localhost:8765/ws";
