/**
 * Token centres and footprints on square, gridless and the four hexagonal layouts, against values
 * worked out from hexagon geometry and the formulas of Foundry's grid classes: HexagonalGrid
 * stretches `sizeX` (columns) or `sizeY` (rows) by 2/√3; `TokenDocument#getSize` spans
 * 0.75·⌊n⌋ + 0.5·(n mod 1) + 0.25 cells across the rows; `#getCenterPoint` is the middle of that
 * size unless Foundry's own method says otherwise.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { GRID_TYPES, gridSizes, tokenFootprint, tokenSize } from "../scripts/geometry.js";
import { serializeScene, serializeToken } from "../scripts/serialize.js";
import * as F from "./helpers/fixtures.js";

const close = (a, b, msg) => assert.ok(Math.abs(a - b) < 1e-9, `${msg ?? ""} ${a} ≠ ${b}`);
const SIZE = 100;
/** A regular hexagon whose adjacent centres are SIZE apart has circumradius R = SIZE/√3. */
const R = SIZE / Math.sqrt(3);

describe("grid cell sizes", () => {
  test("square and gridless cells are size × size", () => {
    for (const type of [GRID_TYPES.SQUARE, GRID_TYPES.GRIDLESS]) {
      const g = gridSizes({ type, size: SIZE });
      assert.deepEqual([g.sizeX, g.sizeY, g.hexagonal], [SIZE, SIZE, false]);
    }
  });

  test("pointy-topped rows (odd-r, even-r): a hex is SIZE wide and 2R tall", () => {
    for (const type of [GRID_TYPES.HEXODDR, GRID_TYPES.HEXEVENR]) {
      const g = gridSizes({ type, size: SIZE });
      close(g.sizeX, SIZE);
      close(g.sizeY, 2 * R);
      assert.equal(g.columns, false);
    }
  });

  test("flat-topped columns (odd-q, even-q): a hex is 2R wide and SIZE tall", () => {
    for (const type of [GRID_TYPES.HEXODDQ, GRID_TYPES.HEXEVENQ]) {
      const g = gridSizes({ type, size: SIZE });
      close(g.sizeX, 2 * R);
      close(g.sizeY, SIZE);
      assert.equal(g.columns, true);
    }
  });

  test("Foundry's grid object is read as it is (its own sizeX/sizeY)", () => {
    assert.deepEqual(gridSizes({ type: GRID_TYPES.HEXODDR, size: 100, sizeX: 100, sizeY: 120, isHexagonal: true, columns: false }).sizeY, 120);
  });
});

describe("token footprints", () => {
  test("square: a 2×2 token at (100, 200) spans 200 px and is centred at (200, 300)", () => {
    const fp = tokenFootprint({ x: 100, y: 200, width: 2, height: 2 }, { type: GRID_TYPES.SQUARE, size: SIZE });
    assert.deepEqual(fp, { center: { x: 200, y: 300 }, width: 200, height: 200 });
  });

  test("rows: a 1×1 token is one hexagon, centred R·1 below its top; n rows stack 1.5R apart", () => {
    const grid = { type: GRID_TYPES.HEXODDR, size: SIZE };
    const one = tokenFootprint({ x: 0, y: 0, width: 1, height: 1 }, grid);
    close(one.center.x, SIZE / 2);
    close(one.center.y, R);
    close(one.height, 2 * R);
    for (const n of [2, 3, 4]) close(tokenSize({ width: n, height: n }, grid).height, 2 * R + 1.5 * R * (n - 1), `${n} rows`);
    close(tokenSize({ width: 3, height: 3 }, grid).width, 3 * SIZE);
  });

  test("columns: the same by transposition — n columns stack 1.5R apart across", () => {
    const grid = { type: GRID_TYPES.HEXEVENQ, size: SIZE };
    const one = tokenFootprint({ x: 10, y: 20, width: 1, height: 1 }, grid);
    close(one.center.x, 10 + R);
    close(one.center.y, 20 + SIZE / 2);
    for (const n of [2, 3]) close(tokenSize({ width: n, height: n }, grid).width, 2 * R + 1.5 * R * (n - 1), `${n} columns`);
  });

  test("a half-cell token on a hex grid: 0.5·(n mod 1) of a cell", () => {
    const grid = { type: GRID_TYPES.HEXODDR, size: SIZE };
    close(tokenSize({ width: 0.5, height: 0.5 }, grid).height, (0.25 + 0.25) * 2 * R);
  });

  test("Foundry's own getCenterPoint and getSize win when the document has them", () => {
    const doc = { x: 0, y: 0, width: 2, height: 2, getSize: () => ({ width: 200, height: 202 }), getCenterPoint: () => ({ x: 103, y: 96, elevation: 0 }) };
    assert.deepEqual(tokenFootprint(doc, { type: GRID_TYPES.HEXODDR, size: SIZE }), { center: { x: 103, y: 96 }, width: 200, height: 202 });
  });
});

describe("tokens on the wire", () => {
  test("square grids send the document's own x, y, width, height", () => {
    const t = serializeToken(F.token({ x: 250, y: 375, width: 2, height: 1 }), { grid: { type: 1, size: 100 } });
    assert.deepEqual([t.x, t.y, t.width, t.height], [250, 375, 2, 1]);
  });

  test("hex grids send the rectangle whose centre is Foundry's centre and whose size is Foundry's, in grid.size units", () => {
    for (const [type, cx, cy, w, h] of [
      [GRID_TYPES.HEXODDR, 300 + SIZE / 2, 200 + R, 1, (2 * R) / SIZE],
      [GRID_TYPES.HEXEVENR, 300 + SIZE / 2, 200 + R, 1, (2 * R) / SIZE],
      [GRID_TYPES.HEXODDQ, 300 + R, 200 + SIZE / 2, (2 * R) / SIZE, 1],
      [GRID_TYPES.HEXEVENQ, 300 + R, 200 + SIZE / 2, (2 * R) / SIZE, 1],
    ]) {
      const t = serializeToken(F.token({ x: 300, y: 200 }), { grid: { type, size: SIZE } });
      assert.ok(Math.abs(t.x + (t.width * SIZE) / 2 - cx) < 1e-5 && Math.abs(t.y + (t.height * SIZE) / 2 - cy) < 1e-5, `centre on type ${type}`);
      assert.ok(Math.abs(t.width - w) < 1e-6 && Math.abs(t.height - h) < 1e-6, `size on type ${type}`);
    }
  });

  test("a scene sync reads the scene's grid; a token of a real Foundry is sent by its own methods", () => {
    const tok = F.token({ id: "t-hex", x: 0, y: 0, width: 2, height: 2, getSize: () => ({ width: 200, height: 202.0725942163691 }), getCenterPoint: () => ({ x: 100, y: 115.47005383792516, elevation: 0 }) });
    const scene = F.scene({ grid: { size: 100, distance: 1, units: "m", type: GRID_TYPES.HEXODDR }, tokens: F.collection([tok]) });
    const [t] = serializeScene(scene, { ruleset: "traveller" }).tokens;
    assert.ok(Math.abs(t.x + (t.width * 100) / 2 - 100) < 1e-5);
    assert.ok(Math.abs(t.y + (t.height * 100) / 2 - 115.47005383792516) < 1e-5);
    assert.equal(t.width, 2);
  });
});
