/**
 * The bridge's refusals in the reader's words. The bridge answers `{"type": "error", code, message,
 * details}` with `message` in English (the contract, "Errors"); what a GM or a player reads is made here
 * from `code` and, for the limits, `details: {limit, value, max}` — the numbers formatted for the
 * reader's language — while the bridge's own English `message` stays beside it (`said`) for the console,
 * a tooltip or a bug report. A code (or a limit) this module does not know shows the bridge's message,
 * never a raw key. Pure: no Foundry globals; the caller hands in `format` (`game.i18n.format`) and `lang`
 * (`game.i18n.lang`).
 */

/** Each error code the bridge (or this module, for what it refuses itself) answers with → its text. */
export const REFUSALS = Object.freeze({
  "invalid-message": "SIGHTLINE.Refusal.invalid-message",
  "unknown-scene": "SIGHTLINE.Refusal.unknown-scene",
  "unknown-token": "SIGHTLINE.Refusal.unknown-token",
  "unknown-ruleset": "SIGHTLINE.Refusal.unknown-ruleset",
  unauthorized: "SIGHTLINE.Refusal.unauthorized",
  "unsupported-protocol": "SIGHTLINE.Refusal.unsupported-protocol",
  "too-large": "SIGHTLINE.Refusal.too-large",
  "rate-limited": "SIGHTLINE.Refusal.rate-limited",
  "log-unavailable": "SIGHTLINE.Refusal.log-unavailable",
  "internal-error": "SIGHTLINE.Refusal.internal-error",
  // The module's own (connection.js, adapters/socket.js, adapters/sightline.js).
  "not-connected": "SIGHTLINE.Refusal.not-connected",
  disconnected: "SIGHTLINE.Refusal.disconnected",
  timeout: "SIGHTLINE.Refusal.timeout",
  "no-gm": "SIGHTLINE.Refusal.no-gm",
  forbidden: "SIGHTLINE.Refusal.forbidden",
});

/**
 * Each limit a `too-large` or `rate-limited` answer names (`details.limit`) → its text, with `{value}`
 * and `{max}`: every name the bridge sends (bridge/core/world.py `SceneLimits.check` and its callers,
 * bridge/session.py, bridge/server.py), and the relay's own.
 */
export const LIMITS = Object.freeze({
  regions: "SIGHTLINE.Limit.regions",
  tokens: "SIGHTLINE.Limit.tokens",
  walls: "SIGHTLINE.Limit.walls",
  lights: "SIGHTLINE.Limit.lights",
  levels: "SIGHTLINE.Limit.levels",
  vertices: "SIGHTLINE.Limit.vertices",
  "ring-vertices": "SIGHTLINE.Limit.ring-vertices",
  "scenes-per-world": "SIGHTLINE.Limit.scenes-per-world",
  "frame-bytes": "SIGHTLINE.Limit.frame-bytes",
  depth: "SIGHTLINE.Limit.depth",
  "messages-per-second": "SIGHTLINE.Limit.messages-per-second",
  "bytes-per-second": "SIGHTLINE.Limit.bytes-per-second",
  "connections-per-world": "SIGHTLINE.Limit.connections-per-world",
  "log-record-bytes": "SIGHTLINE.Limit.log-record-bytes",
  "option-values": "SIGHTLINE.Limit.option-values",
  "best-line-tests": "SIGHTLINE.Limit.best-line-tests",
  "watch-pairs": "SIGHTLINE.Limit.watch-pairs",
  "watch-tests": "SIGHTLINE.Limit.watch-tests",
  "world-watch-pairs": "SIGHTLINE.Limit.world-watch-pairs",
  "watches-per-connection": "SIGHTLINE.Limit.watches-per-connection",
  "relayed-requests-per-second": "SIGHTLINE.Limit.relayed-requests-per-second",
});

/** A number as the reader writes it ("60,000", "60.000"); anything else as it came. */
function numberIn(lang) {
  let nf;
  try {
    nf = new Intl.NumberFormat(lang || "en");
  } catch {
    nf = new Intl.NumberFormat("en"); // a language tag Intl does not take
  }
  return (v) => (typeof v === "number" && Number.isFinite(v) ? nf.format(v) : String(v ?? "?"));
}

/**
 * What to show for an error the bridge (or the relay, or the connection) answered with.
 * @param {any} err a BridgeError (`code`, `message`, `details`), an `error` message, or anything thrown
 * @param {{format: (key: string, data?: Record<string, string>) => string, lang?: string}} i18n
 * @returns {{text: string, said: string}} `text` in the reader's words; `said` the bridge's own message
 *   when `text` does not already show it (for the console, a tooltip, a bug report), else "".
 */
export function refusalText(err, { format, lang = "en" }) {
  const message = String(err?.message ?? err ?? "");
  const code = typeof err?.code === "string" ? err.code : "";
  const details = err?.details && typeof err.details === "object" ? err.details : {};
  const limitKey = Object.hasOwn(LIMITS, details.limit) ? LIMITS[details.limit] : null;
  if ((code === "too-large" || code === "rate-limited") && limitKey && typeof details.max === "number") {
    const number = numberIn(lang);
    return { text: format(limitKey, { value: number(details.value), max: number(details.max) }), said: message };
  }
  if (!Object.hasOwn(REFUSALS, code)) return { text: message, said: "" };
  const key = REFUSALS[code];
  // These texts carry the bridge's words themselves: the field at fault, or what no limit name says.
  const shown = code === "invalid-message" || code === "too-large" || code === "rate-limited" || code === "internal-error";
  return { text: format(key, { message, field: String(details.field ?? "") }), said: shown ? "" : message };
}

/**
 * `refusalText`'s second argument from Foundry's `game.i18n` (handed in: this module stays free of globals).
 * @param {{i18n?: {format: (key: string, data?: Record<string, string>) => string, lang?: string}}} game
 */
export function readerOf(game) {
  return { format: (key, data) => game.i18n.format(key, data), lang: game.i18n?.lang ?? "en" };
}
