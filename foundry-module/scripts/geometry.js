/**
 * Small geometry and presentation helpers shared by the overlay and the chat card. Pure.
 */

/** Centre of a token's footprint in pixels (`x`/`y` top-left, `width`/`height` in grid spaces). */
export function tokenCenter(token, gridSize) {
  return { x: token.x + (token.width * gridSize) / 2, y: token.y + (token.height * gridSize) / 2 };
}

/**
 * How a ruling reads on the overlay: `blocked` (not allowed), `penalised` (a non-zero modifier)
 * or `clear`.
 * @returns {"blocked" | "penalised" | "clear"}
 */
export function verdictOf(ruling) {
  if (!ruling || ruling.allowed === false) return "blocked";
  return ruling.modifier ? "penalised" : "clear";
}

/** Overlay colours by verdict (0xRRGGBB). */
export const VERDICT_COLORS = Object.freeze({ blocked: 0xd32f2f, penalised: 0xf9a825, clear: 0x43a047, pending: 0x9e9e9e });

/** Zone shading by type (any ruleset), lighter to stronger as visibility worsens; unknown types get grey. */
export const ZONE_COLORS = Object.freeze({
  low: 0xb0bec5,
  poor: 0x7986cb,
  zero: 0x8e24aa,
  "white-noise": 0xeceff1,
  smoke: 0x9e9e9e,
  eclipse: 0xab47bc,
  darkness: 0x3949ab,
  "unnatural-darkness": 0x5e35b1,
  woods: 0x43a047,
  illuminated: 0xfff176,
});

export function zoneColor(type) {
  return ZONE_COLORS[type] ?? 0x757575;
}

/** A modifier as players read it: +3, −6, 0; "—" when the action is not allowed. */
export function formatModifier(modifier) {
  if (modifier === null || modifier === undefined) return "—";
  if (modifier > 0) return `+${modifier}`;
  if (modifier < 0) return `\u2212${Math.abs(modifier)}`;
  return "0";
}

/** The overlay label of a sight line: "MOD −6", "MOD 0", or "no LoF". */
export function lineLabel(ruling) {
  if (!ruling) return "…";
  if (ruling.allowed === false) return "no LoF";
  return `MOD ${formatModifier(ruling.modifier)}`;
}
