/**
 * Small geometry and presentation helpers shared by the overlay and the chat card. Pure.
 */

/** Centre of a contract token's footprint in pixels (`x`/`y` top-left, `width`/`height` in grid spaces of `gridSize` px). */
export function tokenCenter(token, gridSize) {
  return { x: token.x + (token.width * gridSize) / 2, y: token.y + (token.height * gridSize) / 2 };
}

/** Foundry's CONST.GRID_TYPES. */
export const GRID_TYPES = Object.freeze({ GRIDLESS: 0, SQUARE: 1, HEXODDR: 2, HEXEVENR: 3, HEXODDQ: 4, HEXEVENQ: 5 });

/**
 * A grid's cell size in pixels, as Foundry's grid classes set it: `sizeX = sizeY = size`, except
 * that HexagonalGrid's constructor multiplies `sizeX` (columns, flat-topped: HEXODDQ, HEXEVENQ) or
 * `sizeY` (rows, pointy-topped: HEXODDR, HEXEVENR) by 2/√3. A grid object that has its own
 * `sizeX`/`sizeY` (Foundry's `scene.grid`) is read as it is.
 * @param {{type?: number, size?: number, sizeX?: number, sizeY?: number, columns?: boolean, isHexagonal?: boolean}} grid
 * @returns {{size: number, sizeX: number, sizeY: number, hexagonal: boolean, columns: boolean}}
 */
export function gridSizes(grid = {}) {
  const size = typeof grid.size === "number" && grid.size > 0 ? grid.size : 100;
  const type = grid.type ?? GRID_TYPES.SQUARE;
  const hexagonal = grid.isHexagonal ?? (type >= GRID_TYPES.HEXODDR && type <= GRID_TYPES.HEXEVENQ);
  const columns = grid.columns ?? (type === GRID_TYPES.HEXODDQ || type === GRID_TYPES.HEXEVENQ);
  const stretch = 2 * Math.sqrt(1 / 3); // Foundry's 2 * Math.SQRT1_3 (it defines Math.SQRT1_3 = √(1/3))
  let sizeX = typeof grid.sizeX === "number" ? grid.sizeX : size;
  let sizeY = typeof grid.sizeY === "number" ? grid.sizeY : size;
  if (hexagonal && typeof grid.sizeX !== "number" && typeof grid.sizeY !== "number") {
    if (columns) sizeX = size * stretch;
    else sizeY = size * stretch;
  }
  return { size, sizeX, sizeY, hexagonal, columns };
}

/**
 * A token's size in pixels by the formula of Foundry's `TokenDocument#getSize`: on hexagonal grids
 * the dimension across the rows (columns grid: width; rows grid: height) is
 * `0.75·⌊n⌋ + 0.5·(n mod 1) + 0.25` cells, then width × `sizeX`, height × `sizeY`.
 * @param {{width?: number, height?: number}} token width/height in grid spaces
 * @param {any} grid
 */
export function tokenSize(token, grid) {
  const g = gridSizes(grid);
  let width = token.width ?? 1;
  let height = token.height ?? 1;
  const rows = (n) => 0.75 * Math.floor(n) + 0.5 * (n % 1) + 0.25;
  if (g.hexagonal) {
    if (g.columns) width = rows(width);
    else height = rows(height);
  }
  return { width: width * g.sizeX, height: height * g.sizeY };
}

/**
 * A token's footprint — its centre and its size in pixels — from Foundry's own
 * `TokenDocument#getCenterPoint()` and `#getSize()` when the document has them (a real Foundry:
 * hexagonal token shapes included), else by the same formulas for a rectangular footprint
 * (centre = top-left + size / 2, as `getCenterPoint` falls back to).
 * @param {any} doc a TokenDocument, or a plain object with x, y, width, height
 * @param {any} grid the scene's grid
 * @returns {{center: {x: number, y: number}, width: number, height: number}}
 */
export function tokenFootprint(doc, grid) {
  const size = typeof doc?.getSize === "function" ? doc.getSize() : tokenSize(doc ?? {}, grid);
  if (typeof doc?.getCenterPoint === "function") {
    const c = doc.getCenterPoint();
    return { center: { x: c.x, y: c.y }, width: size.width, height: size.height };
  }
  return { center: { x: (doc?.x ?? 0) + size.width / 2, y: (doc?.y ?? 0) + size.height / 2 }, width: size.width, height: size.height };
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

/**
 * Overlay colours (0xRRGGBB) from Sightline's one palette, `palette.json` — the same file the bridge
 * draws the log map and the demo picture with (the module ships it; in the repository it links to
 * bridge/palette.json). Grey until `usePalette` has read it: `main.js` fetches it at start-up.
 */
const GREY = 0x9e9e9e;
/** Overlay colours by verdict. */
export const VERDICT_COLORS = { blocked: GREY, penalised: GREY, clear: GREY, pending: GREY };
/** Zone shading by type (any ruleset); a type the palette does not name gets `palette.other`. */
export const ZONE_COLORS = {};
let otherZone = GREY;

/** "#rrggbb" as 0xRRGGBB; null for anything else. */
export function hexColor(text) {
  return typeof text === "string" && /^#[0-9a-fA-F]{6}$/.test(text) ? Number.parseInt(text.slice(1), 16) : null;
}

/**
 * Take the colours of a palette (the parsed `palette.json`: `zones`, `other`, `verdicts`, each "#rrggbb").
 * @param {{zones?: Record<string, string>, other?: string, verdicts?: Record<string, string>}} palette
 * @returns {boolean} whether it held a colour for every verdict
 */
export function usePalette(palette) {
  for (const key of Object.keys(ZONE_COLORS)) delete ZONE_COLORS[key];
  for (const [type, text] of Object.entries(palette?.zones ?? {})) {
    const color = hexColor(text);
    if (color !== null) ZONE_COLORS[type] = color;
  }
  otherZone = hexColor(palette?.other) ?? GREY;
  let complete = true;
  for (const verdict of /** @type {const} */ (["blocked", "penalised", "clear", "pending"])) {
    const color = hexColor(palette?.verdicts?.[verdict]);
    if (color === null) complete = false;
    VERDICT_COLORS[verdict] = color ?? GREY;
  }
  return complete;
}

export function zoneColor(type) {
  return ZONE_COLORS[type] ?? otherZone;
}

/** A modifier as players read it: +3, −6, 0; "—" when the action is not allowed. */
export function formatModifier(modifier) {
  if (modifier === null || modifier === undefined) return "—";
  if (modifier > 0) return `+${modifier}`;
  if (modifier < 0) return `\u2212${Math.abs(modifier)}`;
  return "0";
}

/**
 * The overlay label of a sight line: "MOD −6", "MOD 0", or "no LoF" — in the reader's words when a
 * `format` (Foundry's `game.i18n.format`) is given (`SIGHTLINE.Overlay.Modifier`, `.NoLoF`).
 * @param {any} ruling @param {((key: string, data?: Record<string, string>) => string) | null} [format]
 */
export function lineLabel(ruling, format = null) {
  if (!ruling) return "…";
  if (ruling.allowed === false) return format ? format("SIGHTLINE.Overlay.NoLoF") : "no LoF";
  const modifier = formatModifier(ruling.modifier);
  return format ? format("SIGHTLINE.Overlay.Modifier", { modifier }) : `MOD ${modifier}`;
}
