import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { OVERLAY_STYLE, buildOverlayModel, choosePairs, drawOverlay, labelPoint, regionPolygons, shapeToPolygon } from "../scripts/overlay-draw.js";
import { readFileSync } from "node:fs";
import { VERDICT_COLORS, ZONE_COLORS, usePalette } from "../scripts/geometry.js";
import { canvasFrame } from "../scripts/adapters/overlay.js";
import { SceneWatcher } from "../scripts/annotations.js";
import * as F from "./helpers/fixtures.js";
import { overlayLayer, recordingPixi } from "./helpers/overlay-layer.js";

usePalette(JSON.parse(readFileSync(new URL("../palette.json", import.meta.url), "utf8")));

const region = (id, type, extra = {}) => ({ id, name: id, zone: type ? { type } : undefined, shapes: [{ type: "rectangle", x: 0, y: 0, width: 100, height: 50, rotation: 0, hole: false }], ...extra });
const tokens = [{ id: "a", x: 0, y: 0, width: 1, height: 1 }, { id: "b", x: 400, y: 0, width: 1, height: 1 }];

describe("overlay draw data", () => {
  test("shapes become polygons: rectangles rotate about their centre, circles are regular polygons", () => {
    assert.deepEqual(shapeToPolygon({ type: "rectangle", x: 0, y: 0, width: 10, height: 20, rotation: 0 }), [0, 0, 10, 0, 10, 20, 0, 20]);
    const r = shapeToPolygon({ type: "rectangle", x: 0, y: 0, width: 10, height: 10, rotation: 90 }).map((v) => Math.round(v) + 0);
    assert.deepEqual(r, [10, 0, 10, 10, 0, 10, 0, 0]);
    const c = shapeToPolygon({ type: "circle", x: 5, y: 5, radius: 2 });
    for (let i = 0; i < c.length; i += 2) assert.ok(Math.abs(Math.hypot(c[i] - 5, c[i + 1] - 5) - 2) < 1e-9);
    assert.equal(shapeToPolygon({ type: "token" }), null);
  });

  test("resolved polygons win over stored shapes", () => {
    const polys = regionPolygons(region("r", "low", { polygons: [{ points: [0, 0, 1, 0, 1, 1], hole: false }] }));
    assert.deepEqual(polys, [{ points: [0, 0, 1, 0, 1, 1], hole: false }]);
  });

  test("regions without a zone are not drawn; zones get their type's colour and a centred label", () => {
    const model = buildOverlayModel({ regions: [region("fog", "low"), region("stairs", null)], zoneName: (t) => `Zone ${t}` });
    assert.equal(model.zones.length, 1);
    assert.equal(model.zones[0].color, ZONE_COLORS.low);
    assert.deepEqual(model.zones[0].label, { text: "fog · Zone low", x: 50, y: 25 });
    assert.deepEqual(labelPoint([]), null);
  });

  test("a hole is attached to the outer polygon that contains it", () => {
    const model = buildOverlayModel({
      regions: [{ id: "r", zone: { type: "poor" }, polygons: [
        { points: [0, 0, 10, 0, 10, 10, 0, 10], hole: false },
        { points: [100, 0, 110, 0, 110, 10, 100, 10], hole: false },
        { points: [102, 2, 108, 2, 108, 8, 102, 8], hole: true },
      ] }],
    });
    assert.deepEqual(model.zones[0].outer.map((o) => o.holes.length), [0, 1]);
  });

  test("lines take the bridge's line when given, token centres otherwise; colour and label by verdict", () => {
    const pairs = [
      { actor: "a", target: "b", ruling: { allowed: true, modifier: -6, line: { start: { x: 1, y: 2, z: 0 }, end: { x: 3, y: 4, z: 0 } } } },
      { actor: "b", target: "a", ruling: { allowed: false, modifier: null } },
      { actor: "a", target: "x" },
      { actor: "b", target: "a" },
    ];
    const { lines } = buildOverlayModel({ tokens, gridSize: 100, pairs });
    assert.deepEqual(lines[0].from, { x: 1, y: 2 });
    assert.equal(lines[0].color, VERDICT_COLORS.penalised);
    assert.equal(lines[0].label.text, "MOD \u22126");
    assert.deepEqual([lines[1].from, lines[1].to], [{ x: 450, y: 50 }, { x: 50, y: 50 }]);
    assert.equal(lines[1].verdict, "blocked");
    assert.equal(lines.length, 3, "a pair with an unknown token is skipped");
    assert.deepEqual([lines[2].verdict, lines[2].label.text, lines[2].color], ["pending", "…", VERDICT_COLORS.pending]);
  });

  test("drawOverlay makes the PIXI calls: fill per zone, holes between beginHole/endHole, one stroke per line, a Text per label", () => {
    const { PIXI, graphics, labels, calls } = recordingPixi();
    const model = buildOverlayModel({
      regions: [{ id: "r", name: "Yard", zone: { type: "poor" }, polygons: [{ points: [0, 0, 10, 0, 10, 10, 0, 10], hole: false }, { points: [2, 2, 8, 2, 8, 8, 2, 8], hole: true }] }],
      tokens,
      pairs: [{ actor: "a", target: "b", ruling: { allowed: true, modifier: 0 } }],
    });
    const counts = drawOverlay(PIXI, { graphics, labels }, model);
    assert.deepEqual(counts, { polygons: 1, holes: 1, lines: 1, labels: 2 });
    const names = calls.map((c) => c[0]);
    assert.deepEqual(names, ["clear", "lineStyle", "beginFill", "drawPolygon", "beginHole", "drawPolygon", "endHole", "endFill", "lineStyle", "moveTo", "lineTo"]);
    assert.equal(calls[2][1], ZONE_COLORS.poor);
    assert.equal(calls[8][2], VERDICT_COLORS.clear);
    assert.deepEqual(labels.children.map((t) => t.text), ["Yard · poor", "MOD 0"]);
    drawOverlay(PIXI, { graphics, labels }, { zones: [], lines: [] });
    assert.equal(labels.children.length, 0, "a redraw replaces the labels");
  });
});

describe("which sight lines the overlay shows", () => {
  const tokenIds = ["a", "b", "c"];
  test("controlled token → targets by default", () => {
    assert.deepEqual(choosePairs({ actors: ["a"], targets: ["b", "a"], allTokens: false, tokenIds }), [{ actor: "a", target: "b" }]);
  });
  test("lines to every token: controlled → every other token; nothing controlled → every annotated pair", () => {
    assert.deepEqual(choosePairs({ actors: ["a"], targets: [], allTokens: true, tokenIds }).map((p) => p.target), ["b", "c"]);
    const annotated = [{ actor: "b", target: "c" }, { actor: "c", target: "b" }];
    assert.deepEqual(choosePairs({ actors: [], targets: [], allTokens: true, tokenIds, annotated }), annotated);
    assert.deepEqual(choosePairs({ actors: [], targets: ["b"], allTokens: false, tokenIds }), []);
  });
  test("nothing controlled, lines to every token: only the annotated pairs between tokens shown (the viewed floor's)", () => {
    // A whole-scene watch annotates every floor, and a push may name tokens the scene no longer has.
    const annotated = [{ actor: "b", target: "c" }, { actor: "b", target: "up" }, { actor: "up", target: "c" }, { actor: "gone", target: "gone2" }];
    assert.deepEqual(choosePairs({ actors: [], targets: [], allTokens: true, tokenIds, annotated }), [{ actor: "b", target: "c" }]);
  });
});

describe("a crowded overlay", () => {
  test("past maxLineLabels sight lines, the lines are drawn in their colours without a Text each", () => {
    const ids = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const many = ids.map((id, i) => ({ id, x: (i % 10) * 200, y: Math.floor(i / 10) * 200, width: 1, height: 1 }));
    const pairs = ids.flatMap((a) => ids.filter((b) => b !== a).map((b) => ({ actor: a, target: b, ruling: { allowed: true, modifier: -3 } })));
    const { PIXI, graphics, labels } = recordingPixi();
    const counts = drawOverlay(PIXI, { graphics, labels }, buildOverlayModel({ tokens: many, pairs }));
    assert.equal(counts.lines, 9900);
    assert.equal(counts.labels, 0);
    const few = drawOverlay(PIXI, { graphics, labels }, buildOverlayModel({ tokens: many, pairs: pairs.slice(0, OVERLAY_STYLE.maxLineLabels) }));
    assert.equal(few.labels, OVERLAY_STYLE.maxLineLabels, "up to the bound every line keeps its label");
  });
});

describe("the overlay layer in Foundry", () => {
  test("zone and line labels are in the reader's language; a zone type without a label shows its id, never a key", async () => {
    const es = JSON.parse(readFileSync(new URL("../lang/es.json", import.meta.url), "utf8"));
    const text = (key) => key.split(".").reduce((o, k) => o?.[k], es);
    /** @type {any} */
    const i18n = { localize: (key) => (typeof text(key) === "string" ? text(key) : key), format: (key, data = {}) => (typeof text(key) === "string" ? text(key) : key).replace(/\{(\w+)\}/g, (_, k) => data[k]) };
    const scene = F.scene();
    // The smoke region's behaviour names a zone type this module has no label for (a newer bridge's).
    scene.regions.contents[0].behaviors.contents[0].system.zoneType = "ash-cloud";
    const canvas = { scene };
    const pairs = () => [
      { actor: "t-fus", target: "t-tgt", ruling: { allowed: false, modifier: null } },
      { actor: "t-tgt", target: "t-fus", ruling: { allowed: true, modifier: -3 } },
    ];
    const { layer, labels } = overlayLayer({ i18n, canvas, pairs });
    await layer._draw();
    const shown = labels.children.map((t) => t.text);
    assert.ok(shown.includes("sin LdT") && shown.includes("MOD \u22123"), shown.join(" | "));
    assert.ok(shown.includes("Fog bank · Mala Visibilidad"), shown.join(" | "));
    assert.ok(shown.includes("Smoke · ash-cloud"), shown.join(" | "));
    assert.ok(!shown.some((t) => t.includes("SIGHTLINE.") || t === "no LoF"), shown.join(" | "));
  });
});

describe("an overlay under a flood of pushes", () => {
  /** The layer as Foundry builds it, drawing with the recording PIXI; `frames` holds the draws asked for a frame. */
  function floodedLayer({ pairs, nextFrame }) {
    const i18n = { localize: (k) => k, format: (k, data = {}) => (k === "SIGHTLINE.Overlay.Modifier" ? `MOD ${data.modifier}` : k) };
    const { layer, graphics, labels, calls } = overlayLayer({ i18n, canvas: { scene: F.scene() }, pairs, nextFrame });
    return { layer, graphics, labels, draws: () => calls.filter((c) => c[0] === "clear").length };
  }

  test("N annotations pushes within one frame: the store takes each at once, the canvas draws once, with the last state", async () => {
    const frames = [];
    let layer;
    const watcher = new SceneWatcher({ request: async (m) => ({ type: "watching", id: m.id, watch: m.id }), nextId: () => "w1", onChange: () => layer.refresh() });
    const pairs = () => watcher.annotations().map((a) => ({ actor: a.actor, target: a.target, ruling: a }));
    const built = floodedLayer({ pairs, nextFrame: (draw) => frames.push(draw) });
    layer = built.layer;
    await layer._draw();
    assert.equal(built.draws(), 1, "the layer's first drawing is immediate");
    await watcher.want({ scene: "s-docks", action: "shoot", tokens: null });
    const push = (version, modifier) => ({ type: "annotations", watch: "w1", scene: "s-docks", version, full: version === 1, changed: [{ actor: "t-fus", target: "t-tgt", allowed: true, modifier }], removed: [] });
    const N = 60;
    for (let v = 1; v <= N; v++) {
      watcher.handle(push(v, -v));
      assert.equal(watcher.annotations()[0].modifier, -v, "the store takes every push as it comes");
    }
    assert.equal(built.draws(), 1, "no drawing between frames");
    assert.equal(frames.length, 1, "one frame asked for, however many pushes");
    frames.shift()();
    assert.equal(built.draws(), 2, "one drawing at the frame");
    assert.ok(built.labels.children.some((t) => t.text === `MOD \u2212${N}`), built.labels.children.map((t) => t.text).join(" | "));
    // The next push asks for the next frame: the overlay never stays behind.
    watcher.handle(push(N + 1, 0));
    assert.equal(frames.length, 1);
    frames.shift()();
    assert.ok(built.labels.children.some((t) => t.text === "MOD 0"));
    assert.equal(built.draws(), 3);
  });

  test("a frame asked for before the canvas was torn down draws nothing; the redrawn layer draws at once", async () => {
    const frames = [];
    const built = floodedLayer({ pairs: () => [], nextFrame: (draw) => frames.push(draw) });
    await built.layer._draw();
    built.layer.refresh();
    await built.layer._tearDown({});
    assert.doesNotThrow(() => frames.shift()());
    assert.equal(built.draws(), 1);
    built.layer.refresh();
    assert.equal(frames.length, 0, "a torn-down layer asks for no frame");
    await built.layer._draw();
    assert.equal(built.draws(), 2);
  });

  test("a draw that throws inside the frame is caught (the canvas's ticker goes on) and the next push draws again", async () => {
    const frames = [];
    let fail = false;
    const built = floodedLayer({ pairs: () => (fail ? null.boom : []), nextFrame: (draw) => frames.push(draw) });
    await built.layer._draw();
    fail = true;
    built.layer.refresh();
    const warn = console.warn;
    const warned = [];
    console.warn = (...args) => warned.push(args);
    try {
      assert.doesNotThrow(() => frames.shift()());
    } finally {
      console.warn = warn;
    }
    assert.equal(warned.length, 1);
    fail = false;
    built.layer.refresh();
    assert.equal(frames.length, 1, "a frame is asked for again");
    frames.shift()();
    assert.equal(built.draws(), 2, "the first drawing and this one (the failed one stopped before drawing)");
  });

  test("Foundry's ticker (canvas.app.ticker.addOnce) runs the draw when there is one; requestAnimationFrame otherwise", () => {
    const once = [];
    const raf = [];
    canvasFrame({ app: { ticker: { addOnce: (fn) => once.push(fn) } } }, (fn) => raf.push(fn))(() => {});
    assert.deepEqual([once.length, raf.length], [1, 0]);
    canvasFrame(undefined, (fn) => raf.push(fn))(() => {});
    assert.deepEqual([once.length, raf.length], [1, 1]);
    let drawn = false;
    canvasFrame(null, undefined)(() => (drawn = true));
    assert.ok(drawn, "no display at all: drawn at once");
  });
});
