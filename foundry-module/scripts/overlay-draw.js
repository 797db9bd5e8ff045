/**
 * The GM overlay's drawing, apart from Foundry: `buildOverlayModel` turns contract-shaped data
 * (regions with their zone and polygons, tokens, rulings or annotations per pair) into plain
 * draw data — polygons with colours, lines with colours and labels — and `drawOverlay` makes the
 * PIXI calls for it on a Graphics and a Container it is given. The PIXI namespace is passed in,
 * so the same code draws in Foundry (its global PIXI) and in the browser test (pixi.js 7 from
 * npm). Pure: no Foundry globals.
 */

import { VERDICT_COLORS, lineLabel, tokenCenter, verdictOf, zoneColor } from "./geometry.js";

/** Line widths, alphas and label sizes of the overlay. */
export const OVERLAY_STYLE = Object.freeze({
  zoneLineWidth: 2,
  zoneLineAlpha: 0.9,
  zoneFillAlpha: 0.3,
  sightLineWidth: 4,
  sightLineAlpha: 0.9,
  labelSize: 22,
  labelStroke: 4,
  lineLabelOffset: 14,
  /**
   * The most sight lines labelled with their MOD. Each label is a PIXI.Text (a canvas and a texture of
   * its own): a whole-scene watch of 100 tokens has 9,900 pairs, and as many Texts made again at every
   * push would stall the canvas. Past this many lines, the lines are drawn in their colours, unlabelled.
   */
  maxLineLabels: 200,
});

const CIRCLE_SEGMENTS = 48;

// Shapes → polygons (for regions Foundry has not resolved, and for data sent as stored shapes).

function rotateAbout(points, cx, cy, degrees) {
  if (!degrees) return points;
  const a = (degrees * Math.PI) / 180;
  const cos = Math.cos(a);
  const sin = Math.sin(a);
  const out = [];
  for (let i = 0; i < points.length; i += 2) {
    const dx = points[i] - cx;
    const dy = points[i + 1] - cy;
    out.push(cx + dx * cos - dy * sin, cy + dx * sin + dy * cos);
  }
  return out;
}

function ellipsePoints(cx, cy, rx, ry, rotation = 0) {
  const pts = [];
  for (let i = 0; i < CIRCLE_SEGMENTS; i++) {
    const t = (2 * Math.PI * i) / CIRCLE_SEGMENTS;
    pts.push(cx + rx * Math.cos(t), cy + ry * Math.sin(t));
  }
  return rotateAbout(pts, cx, cy, rotation);
}

/**
 * A contract shape as a flat polygon; null for a shape type it does not know. Foundry rotates
 * rectangles about their centre; ellipses and circles are centred on `x`, `y`.
 */
export function shapeToPolygon(shape) {
  switch (shape?.type) {
    case "rectangle": {
      const { x = 0, y = 0, width = 0, height = 0, rotation = 0 } = shape;
      return rotateAbout([x, y, x + width, y, x + width, y + height, x, y + height], x + width / 2, y + height / 2, rotation);
    }
    case "circle":
      return ellipsePoints(shape.x ?? 0, shape.y ?? 0, shape.radius ?? 0, shape.radius ?? 0);
    case "ellipse":
      return ellipsePoints(shape.x ?? 0, shape.y ?? 0, shape.radiusX ?? 0, shape.radiusY ?? 0, shape.rotation ?? 0);
    case "polygon":
      return Array.from(shape.points ?? [], Number);
    default:
      return null;
  }
}

/** A region's area as polygons: its resolved `polygons` when present, else its shapes. */
export function regionPolygons(region) {
  if (Array.isArray(region.polygons) && region.polygons.length) {
    return region.polygons.map((p) => ({ points: Array.from(p.points, Number), hole: Boolean(p.hole) }));
  }
  return (region.shapes ?? [])
    .map((s) => ({ points: shapeToPolygon(s), hole: Boolean(s.hole) }))
    .filter((p) => p.points && p.points.length >= 6);
}

/** Even-odd point-in-polygon test on a flat point array. */
export function pointInPolygon(x, y, points) {
  let inside = false;
  for (let i = 0, j = points.length - 2; i < points.length; j = i, i += 2) {
    const xi = points[i];
    const yi = points[i + 1];
    const xj = points[j];
    const yj = points[j + 1];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Centre of the bounding box of the non-hole polygons (where the zone's label goes). */
export function labelPoint(polygons) {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const p of polygons) {
    if (p.hole) continue;
    for (let i = 0; i < p.points.length; i += 2) {
      minX = Math.min(minX, p.points[i]);
      maxX = Math.max(maxX, p.points[i]);
      minY = Math.min(minY, p.points[i + 1]);
      maxY = Math.max(maxY, p.points[i + 1]);
    }
  }
  if (!Number.isFinite(minX)) return null;
  return { x: (minX + maxX) / 2, y: (minY + maxY) / 2 };
}

/**
 * @typedef {{id: string, color: number, outer: {points: number[], holes: number[][]}[], label: {text: string, x: number, y: number} | null}} ZoneDraw
 * @typedef {{actor: string, target: string, from: {x: number, y: number}, to: {x: number, y: number},
 *            verdict: string, color: number, label: {text: string, x: number, y: number}}} LineDraw
 */

/**
 * Everything the overlay draws, as data.
 * @param {{regions?: any[], tokens?: any[], gridSize?: number,
 *          pairs?: {actor: string, target: string, ruling?: any}[],
 *          zoneName?: (type: string) => string, lineText?: (ruling: any) => string}} input
 *   `regions`: contract regions (`zone`, `polygons` and/or `shapes`; those without a zone are
 *   skipped); `pairs`: the sight lines to draw, each with its ruling or annotation (`allowed`,
 *   `modifier`, optional `line`) or none yet (drawn grey, "…"); `lineText`: a line's label, in
 *   the reader's words (default: `lineLabel`'s English).
 * @returns {{zones: ZoneDraw[], lines: LineDraw[]}}
 */
export function buildOverlayModel({ regions = [], tokens = [], gridSize = 100, pairs = [], zoneName = (t) => t, lineText = (ruling) => lineLabel(ruling) }) {
  const zones = [];
  for (const region of regions) {
    const zone = region.zone;
    if (!zone?.type) continue;
    const polygons = regionPolygons(region);
    const outer = polygons.filter((p) => !p.hole).map((p) => ({ points: p.points, holes: [] }));
    for (const hole of polygons.filter((p) => p.hole)) {
      const owner = outer.find((o) => pointInPolygon(hole.points[0], hole.points[1], o.points)) ?? null;
      if (owner) owner.holes.push(hole.points);
    }
    const at = labelPoint(polygons);
    const name = region.name ? `${region.name} · ` : "";
    zones.push({ id: region.id, color: zoneColor(zone.type), outer, label: at ? { text: `${name}${zoneName(zone.type)}`, ...at } : null });
  }
  const byId = new Map(tokens.map((t) => [t.id, t]));
  const lines = [];
  for (const pair of pairs) {
    const ruling = pair.ruling ?? null;
    let from;
    let to;
    if (ruling?.line?.start && ruling?.line?.end) {
      from = { x: ruling.line.start.x, y: ruling.line.start.y };
      to = { x: ruling.line.end.x, y: ruling.line.end.y };
    } else {
      const a = byId.get(pair.actor);
      const b = byId.get(pair.target);
      if (!a || !b) continue;
      from = tokenCenter(a, gridSize);
      to = tokenCenter(b, gridSize);
    }
    const verdict = ruling ? verdictOf(ruling) : "pending";
    lines.push({
      actor: pair.actor,
      target: pair.target,
      from,
      to,
      verdict,
      color: VERDICT_COLORS[verdict],
      label: { text: lineText(ruling), x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 - OVERLAY_STYLE.lineLabelOffset },
    });
  }
  return { zones, lines };
}

/**
 * Draw a model: zones (filled, outlined, holes cut) and sight lines on `graphics`, labels as
 * Text children of `labels`. Clears both first.
 * @param {any} pixi the PIXI namespace (v7): Foundry's global, or pixi.js from npm
 * @param {{graphics: any, labels: any}} target
 * @param {{zones: ZoneDraw[], lines: LineDraw[]}} model
 * @param {{fontFamily?: string}} [opts]
 * @returns {{polygons: number, holes: number, lines: number, labels: number}} what was drawn
 */
export function drawOverlay(pixi, { graphics, labels }, model, { fontFamily = "Signika, sans-serif" } = {}) {
  const S = OVERLAY_STYLE;
  graphics.clear();
  for (const child of labels.removeChildren()) child.destroy();
  const counts = { polygons: 0, holes: 0, lines: 0, labels: 0 };
  const label = (text, x, y, fill) => {
    const style = new pixi.TextStyle({ fontFamily, fontSize: S.labelSize, fill, stroke: 0x000000, strokeThickness: S.labelStroke, lineJoin: "round" });
    const t = new pixi.Text(text, style);
    t.anchor.set(0.5, 0.5);
    t.position.set(x, y);
    labels.addChild(t);
    counts.labels += 1;
  };
  for (const zone of model.zones) {
    for (const o of zone.outer) {
      graphics.lineStyle(S.zoneLineWidth, zone.color, S.zoneLineAlpha);
      graphics.beginFill(zone.color, S.zoneFillAlpha);
      graphics.drawPolygon(o.points);
      if (o.holes.length) {
        graphics.beginHole();
        for (const h of o.holes) graphics.drawPolygon(h);
        graphics.endHole();
        counts.holes += o.holes.length;
      }
      graphics.endFill();
      counts.polygons += 1;
    }
  }
  for (const line of model.lines) {
    graphics.lineStyle(S.sightLineWidth, line.color, S.sightLineAlpha);
    graphics.moveTo(line.from.x, line.from.y);
    graphics.lineTo(line.to.x, line.to.y);
    counts.lines += 1;
  }
  for (const zone of model.zones) if (zone.label) label(zone.label.text, zone.label.x, zone.label.y, 0xffffff);
  if (model.lines.length <= S.maxLineLabels) for (const line of model.lines) label(line.label.text, line.label.x, line.label.y, line.color);
  return counts;
}

/**
 * Which sight lines the overlay shows.
 * - Lines to targets (the default): every controlled token → every token the user targets.
 * - Lines to every token: every controlled token → every other token of the scene; with no
 *   token controlled, every pair the bridge annotated between tokens of `tokenIds` (on V14 the
 *   viewed floor's: a whole-scene watch annotates every floor).
 * @param {{actors: string[], targets: string[], allTokens: boolean, tokenIds: string[],
 *          annotated?: {actor: string, target: string}[]}} input
 * @returns {{actor: string, target: string}[]}
 */
export function choosePairs({ actors, targets, allTokens, tokenIds, annotated = [] }) {
  const out = [];
  const seen = new Set();
  const add = (actor, target) => {
    const k = `${actor}->${target}`;
    if (actor === target || seen.has(k)) return;
    seen.add(k);
    out.push({ actor, target });
  };
  if (allTokens && !actors.length) {
    const shown = new Set(tokenIds);
    for (const a of annotated) if (shown.has(a.actor) && shown.has(a.target)) add(a.actor, a.target);
    return out;
  }
  for (const actor of actors) for (const target of allTokens ? tokenIds : targets) add(actor, target);
  return out;
}
