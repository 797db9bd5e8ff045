/**
 * Foundry documents → contract objects (protocol-v1.md, `scene.sync` / `scene.patch`).
 *
 * Reads documents by duck typing, the way Foundry V13/V14 stores them — `doc.id`, `doc.x`,
 * `region.shapes`, `region.polygonTree`, `wall.c`, embedded collections that iterate — so tests can
 * pass plain objects shaped like the stored data. Pure: no Foundry globals.
 */

import { FLAGS, MODULE_ID, ZONE_BEHAVIOR_TYPE } from "./const.js";
import { RULESETS, zoneSpec } from "./vocabulary.js";
import { gridSizes, tokenFootprint } from "./geometry.js";

/** Scene collections the bridge keeps, by contract key → Foundry embedded document name. */
export const KINDS = Object.freeze({
  tokens: "Token",
  regions: "Region",
  walls: "Wall",
  lights: "AmbientLight",
});

// Small readers.

/** Finite numbers pass; ±Infinity, NaN, null and undefined become null (the contract's "unbounded"). */
export function finiteOrNull(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function num(value, fallback = 0) {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function idOf(doc) {
  return doc.id ?? doc._id;
}

function flagOf(doc, key) {
  return doc.flags?.[MODULE_ID]?.[key];
}

/** Embedded collections, arrays and Maps all iterate; `undefined` is empty. */
function listOf(collection) {
  if (!collection) return [];
  if (Array.isArray(collection)) return collection;
  if (Array.isArray(collection.contents)) return collection.contents;
  if (typeof collection.values === "function" && !(Symbol.iterator in collection)) return [...collection.values()];
  return [...collection];
}

/** PIXI.Polygon, a `{points}` object or a flat array → a plain flat array of numbers. */
function flatPoints(polygon) {
  const pts = Array.isArray(polygon) ? polygon : polygon?.points;
  return pts ? Array.from(pts, Number) : [];
}

// Tokens.

/** Foundry's CONST.TOKEN_SHAPES: ELLIPSE_1 = 0, ELLIPSE_2 = 1; trapezoids 2–3 and rectangles 4–5. */
const ELLIPSE_SHAPES = new Set([0, 1]);

/**
 * Which radius of a Foundry light a ruleset reads, both in grid distance units as Foundry stores
 * them (`bright` ≤ `dim`; dim is the outer edge):
 * - `traveller`: the **bright** radius — its spotlights and flares make the target "as in
 *   daylight", which is what Foundry's bright light is; a light with only dim light makes none.
 * - every other ruleset (GURPS): the **dim** radius — the torch and flashlight rule lifts darkness
 *   to −3 (a poorly lit target), which is Foundry's dim light; the dim radius is the light's reach.
 * A light's own flag `flags.sightline-bridge.radius` (`"bright"` or `"dim"`) overrides this.
 * @param {{bright?: number, dim?: number}} light
 * @param {string} [ruleset]
 * @param {string} [own] the document's radius flag
 */
export function lightRadius(light, ruleset, own) {
  const bright = num(light?.bright);
  const dim = Math.max(num(light?.dim), bright);
  const which = own === "bright" || own === "dim" ? own : ruleset === "traveller" ? "bright" : "dim";
  return which === "bright" ? bright : dim;
}

/** `white` unless the document's flag `flags.sightline-bridge.lightKind` (or `kind`) says `ir`. */
function lightKind(doc) {
  return flagOf(doc, "lightKind") === "ir" || flagOf(doc, "kind") === "ir" ? "ir" : "white";
}

/** Pixels kept to a millionth: the footprint's arithmetic never shows as 200.00000000000003. */
const px = (v) => Math.round(v * 1e6) / 1e6;

/**
 * A token as the contract has it: `x`/`y` top-left and `width`/`height` in grid spaces of
 * `grid.size` pixels — written as the rectangle whose centre is Foundry's
 * `TokenDocument#getCenterPoint()` and whose size is `#getSize()` (geometry.js `tokenFootprint`).
 * On square and gridless grids that is the document's own x, y, width, height; on hexagonal grids
 * cells are not square (HexagonalGrid stretches `sizeX` or `sizeY` by 2/√3 and a token spans
 * 0.75 of a cell per extra row), so the bridge gets Foundry's centre and extent instead of
 * `grid.size` squares.
 * @param {any} doc a TokenDocument (V13/V14 fields: x, y, width, height, elevation, shape, light)
 * @param {{ruleset?: string, grid?: any}} [opts] the scene's ruleset (which light radius it reads)
 *   and grid (else the document's parent's)
 * @returns {Record<string, unknown>}
 */
export function serializeToken(doc, { ruleset, grid } = {}) {
  const sceneGrid = grid ?? doc.parent?.grid ?? {};
  const size = gridSizes(sceneGrid).size;
  const fp = tokenFootprint({ x: num(doc.x), y: num(doc.y), width: num(doc.width, 1), height: num(doc.height, 1), getSize: doc.getSize?.bind(doc), getCenterPoint: doc.getCenterPoint?.bind(doc) }, sceneGrid);
  /** @type {Record<string, unknown>} */
  const out = {
    id: idOf(doc),
    name: doc.name ?? "",
    x: px(fp.center.x - fp.width / 2),
    y: px(fp.center.y - fp.height / 2),
    width: Math.round((fp.width / size) * 1e9) / 1e9,
    height: Math.round((fp.height / size) * 1e9) / 1e9,
    elevation: num(doc.elevation),
  };
  const traits = flagOf(doc, FLAGS.TRAITS);
  out.traits = Array.isArray(traits) ? traits.filter((t) => typeof t === "string" && t) : [];
  if (ELLIPSE_SHAPES.has(doc.shape)) out.shape = "ellipse";
  const radius = doc.light?.negative ? 0 : lightRadius(doc.light, ruleset, flagOf(doc, "lightRadius"));
  if (radius > 0) out.light = { radius, kind: lightKind(doc) };
  // V14 Scene Levels: the id of the level the token is on (V13 has no such field).
  if (typeof doc.level === "string" && doc.level) out.level = doc.level;
  return out;
}

// V14 Scene Levels.

/**
 * The `levels` set of a V14 region, wall or light (Foundry's SceneLevelsSetField: a `Set` of Level
 * ids once prepared, an array in source data) as a sorted array; empty on V13 or when it names none
 * (then the object stands on every level).
 * @param {any} doc
 * @returns {string[]}
 */
export function levelIdsOf(doc) {
  const levels = doc?.levels;
  if (!levels || typeof levels === "string" || !(Symbol.iterator in Object(levels))) return [];
  return [...new Set(Array.from(levels).filter((id) => typeof id === "string" && id))].sort();
}

/**
 * A V14 Level document → the contract's `{id, name, bottom, top}` (Foundry's `elevation.bottom`/`top`,
 * null unbounded).
 * @param {any} doc a Level document
 */
export function serializeLevel(doc) {
  return {
    id: idOf(doc),
    name: doc.name ?? "",
    bottom: finiteOrNull(doc.elevation?.bottom),
    top: finiteOrNull(doc.elevation?.top),
  };
}

/**
 * The ids of the scene's tokens on the level the user views (V14: the Level whose `isView` is true),
 * tokens on no level included; every token when the scene has no levels (V13) or none is viewed. The
 * overlay's "all tokens" mode draws the pairs of these only, so another floor's tokens stay out of it.
 * @param {any} scene
 * @returns {string[]}
 */
export function tokenIdsOnViewedLevel(scene) {
  const viewed = listOf(scene?.levels).find((level) => level?.isView === true);
  const tokens = listOf(scene?.tokens);
  const on = viewed ? tokens.filter((t) => typeof t.level !== "string" || !t.level || t.level === idOf(viewed)) : tokens;
  return on.map((t) => idOf(t));
}

/** `out.levels` from the document's levels, when it names any. */
function withLevels(out, doc) {
  const levels = levelIdsOf(doc);
  if (levels.length) out.levels = levels;
  return out;
}

// Walls.

/**
 * A wall with the restrictions the bridge reads: `sight` for sight lines, `light` (Foundry's light
 * restriction, `WALL_SENSE_TYPES` like `sight`) for whether a light reaches a token, and the thresholds
 * Foundry keeps for each (`threshold.sight`, `threshold.light`, null when unset).
 * @param {any} doc a WallDocument (c, sight, light, door, ds, dir, threshold)
 */
export function serializeWall(doc) {
  /** @type {Record<string, unknown>} */
  const out = {
    id: idOf(doc),
    c: Array.from(doc.c ?? [], Number).slice(0, 4),
    sight: num(doc.sight, 20),
    light: num(doc.light, 20),
    door: num(doc.door),
    ds: num(doc.ds),
    dir: num(doc.dir),
  };
  const threshold = doc.threshold;
  if (threshold && (typeof threshold.sight === "number" || typeof threshold.light === "number")) {
    /** @type {Record<string, unknown>} */
    const kept = { attenuation: Boolean(threshold.attenuation) };
    if (typeof threshold.sight === "number") kept.sight = threshold.sight;
    if (typeof threshold.light === "number") kept.light = threshold.light;
    out.threshold = kept;
  }
  return withLevels(out, doc);
}

// Lights.

/**
 * @param {any} doc an AmbientLightDocument (x, y, config.dim/bright in grid units, config.negative)
 * @param {{ruleset?: string}} [opts] the scene's ruleset (which radius it reads, see lightRadius)
 * @returns {Record<string, unknown> | null} null for a light that sheds nothing, is hidden, or is
 *   a darkness source (`config.negative`)
 */
export function serializeLight(doc, { ruleset } = {}) {
  if (doc.hidden || doc.config?.negative) return null;
  const radius = lightRadius(doc.config, ruleset, flagOf(doc, "radius"));
  if (radius <= 0) return null;
  return withLevels({ id: idOf(doc), x: num(doc.x), y: num(doc.y), radius, kind: lightKind(doc) }, doc);
}

// Regions.

/** Region shapes the contract names, with the fields each carries. */
const SHAPE_FIELDS = Object.freeze({
  rectangle: ["x", "y", "width", "height", "rotation"],
  circle: ["x", "y", "radius"],
  ellipse: ["x", "y", "radiusX", "radiusY", "rotation"],
  polygon: ["points"],
});

/**
 * A V14 rectangle (foundryvtt issue #13298; fvtt-types 14 `RectangleShapeData`): it turns `rotation`
 * degrees about its origin `(x, y)`, where its anchor `(anchorX, anchorY)` stands — a fraction of its
 * width and height, `(0, 0)` its top-left corner (the default), `(0.5, 0.5)` its centre. The contract
 * keeps V13's rectangle: `x, y` the top-left corner before rotation, turned about the centre. The same
 * rectangle in that form: its centre is the anchor's offset to the centre, turned about the origin;
 * the rotation is unchanged (a rectangle turned by the same angle about another point is the same
 * rectangle, moved). Screen `y` points down, so the usual rotation matrix turns clockwise, as Foundry's
 * rotation and the bridge's do.
 * @param {any} shape
 */
function anchoredRectangle(shape) {
  const width = num(shape.width);
  const height = num(shape.height);
  const rotation = num(shape.rotation);
  const turn = (rotation * Math.PI) / 180;
  const [cos, sin] = rotation % 360 ? [Math.cos(turn), Math.sin(turn)] : [1, 0];
  const dx = (0.5 - num(shape.anchorX)) * width;
  const dy = (0.5 - num(shape.anchorY)) * height;
  const cx = num(shape.x) + dx * cos - dy * sin;
  const cy = num(shape.y) + dx * sin + dy * cos;
  return { type: "rectangle", x: px(cx - width / 2), y: px(cy - height / 2), width, height, rotation, hole: Boolean(shape.hole) };
}

/**
 * One stored shape → its contract form, or null when the contract cannot carry it: a shape type it
 * does not name (V14's cone, ring, emanation, line, token and grid shapes), or a V14 `gridBased`
 * shape — Foundry builds that one in grid units by the grid's metric (a circle becomes the cells a
 * grid distance reaches), which the stored numbers do not say. The region's resolved `polygons`
 * carry both. A V14 rectangle (with `anchorX`/`anchorY`) is turned into the contract's form
 * (`anchoredRectangle`); V13's is sent as stored.
 */
export function serializeShape(shape) {
  const fields = SHAPE_FIELDS[shape?.type];
  if (!fields || shape.gridBased === true) return null;
  if (shape.type === "rectangle" && (typeof shape.anchorX === "number" || typeof shape.anchorY === "number")) return anchoredRectangle(shape);
  /** @type {Record<string, unknown>} */
  const out = { type: shape.type };
  for (const f of fields) out[f] = f === "points" ? flatPoints(shape.points) : num(shape[f]);
  out.hole = Boolean(shape.hole);
  return out;
}

/**
 * The region's resolved area as Foundry computes it: a walk of `polygonTree` (each node a polygon
 * and whether it is a hole), else `polygons` (a PIXI.Polygon whose orientation is negative is a
 * hole). Empty when neither is available (a region not yet prepared).
 */
export function resolvedPolygons(doc) {
  const tree = doc.polygonTree;
  if (tree && (tree.children || Symbol.iterator in tree)) {
    const out = [];
    const walk = (node) => {
      for (const child of listOf(node.children)) {
        const points = flatPoints(child.polygon ?? child.points);
        if (points.length >= 6) out.push({ points, hole: Boolean(child.isHole) });
        walk(child);
      }
    };
    walk(tree);
    return out;
  }
  return listOf(doc.polygons)
    .map((p) => ({ points: flatPoints(p), hole: p?.isPositive === false }))
    .filter((p) => p.points.length >= 6);
}

/**
 * The `zone` of a region: from its first enabled behaviour of type `sightline-bridge.visibilityZone`,
 * or null when it has none or the region is `hidden` (V14: Foundry turns a hidden region's
 * behaviours off) — then the region is no visibility zone.
 */
export function zoneOf(doc, ruleset) {
  // V14: a hidden region's behaviours are inactive (Foundry deactivates them), so it is no zone.
  if (doc.hidden === true) return null;
  for (const behavior of listOf(doc.behaviors)) {
    if (behavior.type !== ZONE_BEHAVIOR_TYPE || behavior.disabled) continue;
    const zone = zoneFromSystem(behavior.system, ruleset);
    if (zone) return zone;
  }
  return null;
}

/**
 * The behaviour's stored data (`{zoneType, penalty, total, density, by}`) → a contract zone.
 *
 * With the scene's `ruleset`, only the parameters that ruleset gives this zone type are sent (an
 * Infinity `smoke` takes none, a Traveller `smoke` takes `density`: the bridge refuses a zone
 * with parameters it does not take). A zone the ruleset fills in when left blank takes that
 * (`blank`: a GURPS darkness with neither penalty nor total is total darkness, as the sheet's hint
 * says). A zone missing a parameter its ruleset requires (`zoneProblem`) is sent as it is: the
 * bridge holds it, does not use it and says why (`scene.synced` `ignored`), never in silence. A
 * zone type of another ruleset goes bare: the bridge lists it as ignored too. Without a ruleset,
 * every parameter any ruleset gives the type is kept (for display).
 * @param {any} system
 * @param {string} [ruleset]
 */
export function zoneFromSystem(system, ruleset) {
  const type = system?.zoneType;
  if (!type || typeof type !== "string") return null;
  /** @type {Record<string, unknown>} */
  const zone = { type };
  const params = new Map();
  for (const id of ruleset ? [ruleset] : Object.keys(RULESETS)) for (const p of zoneSpec(id, type)?.params ?? []) params.set(p.name, p);
  for (const [name, p] of params) {
    const value = system[name];
    if (p.kind === "boolean") {
      if (value === true) zone[name] = true;
    } else if (p.kind === "integer") {
      if (typeof value === "number" && Number.isFinite(value)) zone[name] = value;
    } else if (typeof value === "string" && value) {
      zone[name] = value;
    }
  }
  // GURPS darkness: total darkness stands instead of a penalty.
  if (zone.total === true) delete zone.penalty;
  const blank = ruleset ? zoneSpec(ruleset, type)?.blank : null;
  if (blank && Object.keys(zone).length === 1) Object.assign(zone, blank);
  return zone;
}

/**
 * What a zone lacks under a ruleset, or null: `"<type>: <param>"` for a required parameter. The
 * bridge lists such a zone as ignored, with its reason.
 */
export function zoneProblem(system, ruleset) {
  const spec = zoneSpec(ruleset, system?.zoneType);
  if (!spec) return null;
  const has = (name) => {
    const v = system[name];
    return v === true || (typeof v === "number" && Number.isFinite(v)) || (typeof v === "string" && v !== "");
  };
  for (const p of spec.params) if (p.required && !has(p.name)) return `${system.zoneType}: ${p.name}`;
  return null;
}

/**
 * @param {any} doc a RegionDocument (name, elevation.bottom/top, shapes, polygonTree, behaviors)
 * @param {{ruleset?: string}} [opts] the scene's ruleset (which zone parameters it takes)
 */
export function serializeRegion(doc, { ruleset } = {}) {
  const stored = listOf(doc.shapes);
  const shapes = stored.map(serializeShape).filter(Boolean);
  const polygons = resolvedPolygons(doc);
  /** @type {Record<string, unknown>} */
  const out = {
    id: idOf(doc),
    name: doc.name ?? "",
    elevation: { bottom: finiteOrNull(doc.elevation?.bottom), top: finiteOrNull(doc.elevation?.top) },
    // Without resolved polygons, a region with a shape the contract cannot carry (`serializeShape`) goes
    // with none: the rest alone would be a smaller area (or a hole missing) judged in silence, while a
    // zone with no area is one the bridge lists as ignored, saying why ("no-area").
    shapes: polygons.length || shapes.length === stored.length ? shapes : [],
  };
  if (polygons.length) out.polygons = polygons;
  const zone = zoneOf(doc, ruleset);
  if (zone) out.zone = zone;
  return withLevels(out, doc);
}

// Scenes.

/** The serializer for each contract collection. */
export const SERIALIZERS = Object.freeze({
  tokens: serializeToken,
  regions: serializeRegion,
  walls: serializeWall,
  lights: serializeLight,
});

/**
 * The contract `rules` of a scene: the scene's own flag (`flags.sightline-bridge.rules`
 * `{ruleset, edition, locale, lines}`) wins over the world's settings.
 * @param {any} scene
 * @param {{ruleset: string, edition?: string, locale?: string}} defaults
 */
export function rulesOf(scene, { ruleset, edition = "current", locale = "en" }) {
  const own = flagOf(scene, FLAGS.RULES) ?? {};
  /** @type {Record<string, string>} */
  const rules = {
    ruleset: own.ruleset || ruleset,
    edition: own.edition || edition,
    locale: own.locale || (locale === "es" ? "es" : "en"),
  };
  if (own.lines === "best" || own.lines === "center") rules.lines = own.lines;
  return rules;
}

/**
 * Foundry's scene darkness (`environment.darknessLevel`, 0 … 1) as a GURPS darkness penalty:
 * 1 is total darkness (−10); below it, −1 per ninth (0.5 → −5, 0.1 → −1, 0 → 0).
 */
export function gurpsDarknessFromLevel(level) {
  const l = Math.min(1, Math.max(0, num(level)));
  return l >= 1 ? -10 : -Math.round(9 * l) || 0;
}

/**
 * The contract `environment` of a scene: the flag `flags.sightline-bridge.environment` as the GM
 * set it; for GURPS, with the flag `useSceneDarkness` and no `darkness` of its own, the darkness
 * derived from Foundry's darkness level (`gurpsDarknessFromLevel`).
 */
export function environmentOf(scene, ruleset) {
  const env = { ...(flagOf(scene, FLAGS.ENVIRONMENT) ?? {}) };
  for (const [k, v] of Object.entries(env)) if (v === "" || v === null || v === undefined) delete env[k];
  if (ruleset === "gurps-4e" && flagOf(scene, FLAGS.SCENE_DARKNESS) === true && env.darkness === undefined) {
    env.darkness = gurpsDarknessFromLevel(scene.environment?.darknessLevel ?? scene.darkness);
  }
  return env;
}

/**
 * The scene's own fields of its contract `scene` (not its tokens, regions, walls, lights or levels):
 * what a `scene.patch` may replace (docs/protocol.md: `name`, `grid`, `rules`, `environment`).
 * @param {any} scene
 * @param {{ruleset: string, edition?: string, locale?: string}} defaults world settings
 */
export function sceneFields(scene, defaults) {
  const grid = scene.grid ?? {};
  const rules = rulesOf(scene, defaults);
  return {
    name: scene.name ?? "",
    grid: { size: num(grid.size, 100), distance: num(grid.distance, 1), units: String(grid.units ?? "") },
    rules,
    environment: environmentOf(scene, rules.ruleset),
  };
}

/** Grid fields the serialisation reads (sizes, hexagonal or not); its colour, style and alpha are not. */
const GRID_READ = new Set(["type", "size", "distance", "units"]);

/** Embedded collections: changed through the scene itself, every object may have changed. */
const EMBEDDED = new Set([...Object.keys(KINDS), "levels"]);

/**
 * The paths an `updateScene`'s `changed` names — Foundry's differential data: nested objects
 * (`{_id, environment: {darknessLevel: 0.5}}`), or dotted keys as an update may be written
 * (`"flags.sightline-bridge.rules"`); a deletion key (`-=rules`) or a forced replacement
 * (`==rules`) names its field. Plain objects are walked; anything else ends a path.
 * @param {any} changed
 * @returns {string[][]}
 */
function changedPaths(changed, prefix = []) {
  const out = [];
  for (const [key, value] of Object.entries(changed ?? {})) {
    if (key === "_id" || key === "_stats") continue;
    const path = [...prefix, ...key.split(".").map((k) => k.replace(/^(-=|==)/, ""))];
    const plain = value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype;
    if (plain && Object.keys(value).length) out.push(...changedPaths(value, path));
    else out.push(path);
  }
  return out;
}

/**
 * What an update of a scene changes for the bridge, from `updateScene`'s `changed`:
 * - `"sync"`: what every token's serialisation reads (the grid's type, size, distance, units) or an
 *   embedded collection changed through the scene: the scene goes whole;
 * - `"fields"`: only the scene's own fields may have changed (its `name`, the module's flags — rules,
 *   environment, `useSceneDarkness` — or Foundry's darkness level): `sceneFields` tells which;
 * - `null`: nothing the bridge reads (background, notes, fog, sounds, weather, the grid's colour,
 *   dimensions and padding, which move no token, region or wall) — nothing is sent.
 * @param {any} changed
 * @returns {"sync" | "fields" | null}
 */
export function sceneChangeKind(changed) {
  /** @type {"fields" | null} */
  let kind = null;
  for (const [top, sub] of changedPaths(changed)) {
    if (EMBEDDED.has(top) || (top === "grid" && (sub === undefined || GRID_READ.has(sub)))) return "sync";
    const own =
      top === "name" ||
      top === "darkness" || // before V12, the darkness level's field
      (top === "environment" && (sub === undefined || sub === "darknessLevel")) ||
      (top === "flags" && (sub === undefined || sub === MODULE_ID));
    if (own) kind = "fields";
  }
  return kind;
}

/**
 * Fields of a watched document that no ruling reads (Foundry V13/V14 schemas): their change moves no
 * ruling. Anything not listed counts as read — a field a later Foundry adds re-asks rather than goes stale.
 * `flags` other than the module's are not read either (see `documentChangeReads`).
 */
const NOT_READ = Object.freeze({
  // The token's look, bars, vision, ring, sort and lock; `hidden` (the bridge judges hidden tokens as any).
  Token: new Set(["displayName", "actorLink", "actorId", "delta", "texture", "lockRotation", "rotation", "alpha", "disposition", "displayBars", "bar1", "bar2", "sight", "detectionModes", "occludable", "ring", "turnMarker", "movementAction", "sort", "locked", "hidden", "randomImg", "appendNumber", "prependAdjective", "_movementHistory", "_regions"]),
  // Movement and sound restrictions, the door's animation.
  Wall: new Set(["move", "sound", "animation"]),
  // Where the light points, whether walls constrain it (the bridge does), vision; its colour and animation (`config.*` below).
  AmbientLight: new Set(["rotation", "walls", "vision"]),
  Region: new Set(["color", "visibility", "locked", "highlightMode", "displayMeasurements"]),
  RegionBehavior: new Set(["name"]),
});

/** Of a light's `config` and a token's `light` (Foundry's LightData), the radii and whether it is a darkness source are read; its colour, animation, angle… not. */
const LIGHT_CONFIG_READ = new Set(["bright", "dim", "negative"]);

/**
 * What an `update<Document>` of a token, region, behaviour, wall or light changes for the rulings, from
 * the hook's `changed` (Foundry's differential data):
 * - `"ruling"`: a field a ruling reads (where a token stands and how big, its elevation, level, shape,
 *   light and traits; a region's shapes, elevation, name or visibility zone; a wall; a light's place and radius);
 * - `"name"`: only a token's name (a ruling names its actor in a note, and nothing else of another token's);
 * - `null`: nothing a ruling reads (a token's bars, image, vision or another module's flags; a light's colour).
 * @param {string} documentName @param {any} changed
 * @returns {"ruling" | "name" | null}
 */
export function documentChangeReads(documentName, changed) {
  const notRead = NOT_READ[documentName] ?? new Set();
  /** @type {"name" | null} */
  let kind = null;
  for (const [top, sub] of changedPaths(changed)) {
    if (notRead.has(top)) continue;
    if (top === "flags" && sub !== undefined && sub !== MODULE_ID) continue;
    const light = (documentName === "AmbientLight" && top === "config") || (documentName === "Token" && top === "light");
    if (light && sub !== undefined && !LIGHT_CONFIG_READ.has(sub)) continue;
    if (documentName === "Token" && top === "name") {
      kind = "name";
      continue;
    }
    return "ruling";
  }
  return kind;
}

/**
 * A whole Scene document → the contract `scene` of a `scene.sync`.
 * @param {any} scene
 * @param {{ruleset: string, edition?: string, locale?: string}} defaults world settings
 */
export function serializeScene(scene, defaults) {
  const grid = scene.grid ?? {};
  const fields = sceneFields(scene, defaults);
  const opts = { ruleset: fields.rules.ruleset, grid };
  /** @type {Record<string, unknown>} */
  const out = {
    id: idOf(scene),
    ...fields,
    regions: listOf(scene.regions).map((r) => serializeRegion(r, opts)),
    tokens: listOf(scene.tokens).map((t) => serializeToken(t, opts)),
    walls: listOf(scene.walls).map(serializeWall),
  };
  const lights = listOf(scene.lights)
    .map((l) => serializeLight(l, opts))
    .filter(Boolean);
  if (lights.length) out.lights = lights;
  // V14 Scene Levels (the scene's embedded Level documents); V13 scenes have none and send none.
  const levels = listOf(scene.levels).map(serializeLevel);
  if (levels.length) out.levels = levels;
  return out;
}

/**
 * V14 regions attached to a token (`region.attachment.token`: a ForeignDocumentField, declared
 * `idOnly` — the token's id — but read as the token document by some V14 code, so either is taken):
 * Foundry moves them with the token, so a token's change is also theirs.
 * @param {any} scene @param {string} tokenId
 * @returns {any[]} region documents
 */
export function regionsAttachedTo(scene, tokenId) {
  if (!tokenId) return [];
  return listOf(scene?.regions).filter((r) => {
    const token = r?.attachment?.token;
    return (typeof token === "string" ? token : token?.id) === tokenId;
  });
}

/**
 * Which contract collection a document belongs to, and the document whose change it is: a
 * RegionBehavior's change is its parent region's change (the region's `zone` is re-sent).
 * @returns {{kind: string, doc: any} | null}
 */
export function patchTargetOf(documentName, doc) {
  if (documentName === "RegionBehavior") return doc.parent ? { kind: "regions", doc: doc.parent } : null;
  const kind = Object.keys(KINDS).find((k) => KINDS[k] === documentName);
  return kind ? { kind, doc } : null;
}
