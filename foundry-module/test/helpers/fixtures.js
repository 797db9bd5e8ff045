/**
 * Documents shaped as Foundry V13/V14 stores them: ids as `id`/`_id`, embedded collections that
 * iterate and carry `contents`, region shapes as ShapeData objects, a polygon tree of nodes with
 * `polygon.points` and `isHole`, `elevation.top = Infinity` for an unbounded region.
 */

/** An EmbeddedCollection stand-in: iterable, `.contents`, `.get(id)`. */
export function collection(docs) {
  const map = new Map(docs.map((d) => [d.id, d]));
  return {
    contents: docs,
    get size() {
      return docs.length;
    },
    get: (id) => map.get(id),
    [Symbol.iterator]: () => docs[Symbol.iterator](),
  };
}

/** A PIXI.Polygon-like object. */
export function polygon(points, isPositive = true) {
  return { points, isPositive };
}

export function polygonTree(nodes) {
  const mk = ({ points, hole = false, children = [] }) => ({ polygon: polygon(points, !hole), isHole: hole, children: children.map(mk) });
  return { isHole: true, children: nodes.map(mk) };
}

/** @param {Record<string, unknown>} [overrides] */
export function smokeRegion(overrides = {}) {
  /** @type {StubOf<foundry.documents.RegionDocument> & Record<string, any>} */
  const region = {
    id: "r-smoke",
    _id: "r-smoke",
    name: "Smoke",
    elevation: { bottom: -Infinity, top: Infinity },
    shapes: [{ type: "circle", x: 1500, y: 900, radius: 150, hole: false }],
    polygonTree: polygonTree([{ points: [1650, 900, 1500, 1050, 1350, 900, 1500, 750] }]),
    behaviors: null,
    flags: {},
    ...overrides,
  };
  region.behaviors ??= collection([
    /** @type {StubOf<foundry.documents.RegionBehavior>} */ ({ id: "b1", type: "sightline-bridge.visibilityZone", disabled: false, system: { zoneType: "zero", penalty: null, total: false, density: null, by: "" }, parent: region }),
  ]);
  return region;
}

export function poorRegion() {
  /** @type {StubOf<foundry.documents.RegionDocument> & Record<string, any>} */
  const region = {
    id: "r-poor",
    name: "Fog bank",
    elevation: { bottom: 0, top: 3 },
    shapes: [
      { type: "rectangle", x: 400, y: 200, width: 600, height: 400, rotation: 0, hole: false },
      { type: "ellipse", x: 700, y: 400, radiusX: 100, radiusY: 50, rotation: 15, hole: true },
      { type: "polygon", points: [1000, 200, 1200, 200, 1100, 400], hole: false },
      // A V14 shape type the contract does not name: carried by `polygons` only.
      { type: "cone", x: 0, y: 0, radius: 300, angle: 60, rotation: 0, hole: false },
    ],
    polygonTree: polygonTree([
      { points: [400, 200, 1000, 200, 1000, 600, 400, 600], children: [{ points: [600, 400, 700, 350, 800, 400, 700, 450], hole: true }] },
      { points: [1000, 200, 1200, 200, 1100, 400] },
    ]),
    flags: {},
  };
  region.behaviors = collection([
    { id: "b0", type: "executeScript", disabled: false, system: {}, parent: region },
    { id: "b2", type: "sightline-bridge.visibilityZone", disabled: false, system: { zoneType: "poor", penalty: null, total: false, density: null, by: "" }, parent: region },
  ]);
  return region;
}

/** @returns {StubOf<foundry.documents.RegionDocument>} */
export function plainRegion() {
  return { id: "r-plain", name: "Stairs", elevation: { bottom: null, top: null }, shapes: [], polygons: [], behaviors: collection([]), flags: {} };
}

/**
 * @param {Record<string, unknown>} [overrides]
 * @returns {StubOf<foundry.documents.TokenDocument> & Record<string, any>}
 */
export function token(overrides = {}) {
  /** @type {StubOf<foundry.documents.TokenDocument>} */
  const doc = {
    id: "t-fus",
    name: "Fusilier",
    x: 200,
    y: 800,
    width: 1,
    height: 1,
    elevation: 0,
    shape: 4,
    light: { dim: 0, bright: 0 },
    flags: { "sightline-bridge": { traits: ["multispectral-visor-1"] } },
  };
  return { ...doc, ...overrides };
}

/** @param {Record<string, unknown>} [overrides] */
export function wall(overrides = {}) {
  /** @type {StubOf<foundry.documents.WallDocument>} */
  const doc = { id: "w1", c: [1000, 0, 1000, 600], sight: 20, door: 0, ds: 0, dir: 0, threshold: { light: null, sight: null, sound: null, attenuation: false }, flags: {} };
  return { ...doc, ...overrides };
}

/** @returns {StubOf<foundry.documents.AmbientLightDocument>} */
function light() {
  return { id: "l1", x: 50, y: 60, config: { dim: 6, bright: 3 }, hidden: false, flags: {} };
}

/**
 * @param {Record<string, unknown>} [overrides]
 * @returns {StubOf<foundry.documents.Scene> & Record<string, any>}
 */
export function scene(overrides = {}) {
  /** @type {StubOf<foundry.documents.Scene>} */
  const doc = {
    id: "s-docks",
    name: "Docks",
    grid: { size: 100, distance: 1, units: "in", type: 1 },
    flags: {},
    regions: collection([smokeRegion(), poorRegion(), plainRegion()]),
    tokens: collection([token(), token({ id: "t-tgt", name: "Target", x: 2000, y: 800, shape: 0, flags: {} })]),
    walls: collection([wall(), wall({ id: "w2", c: [0, 0, 100, 0], sight: 10, door: 1, ds: 1, dir: 2, threshold: { sight: 30, attenuation: true } })]),
    lights: collection([light()]),
  };
  return { ...doc, ...overrides };
}
