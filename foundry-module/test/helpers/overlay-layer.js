/**
 * The overlay as Foundry draws it, without a canvas: a recording stand-in for PIXI (every Graphics
 * call and every Text made) and the module's overlay layer (`defineOverlayLayer`) built on a stand-in
 * for Foundry's `CanvasLayer` — only Foundry's and PIXI's own classes are stood in for.
 */
import { defineOverlayLayer } from "../../scripts/adapters/overlay.js";

/** A recording stand-in for the PIXI namespace: every Graphics call and Text made. */
export function recordingPixi() {
  const calls = [];
  class Graphics {
    constructor() {
      return new Proxy(this, { get: (t, name) => (name === "calls" ? calls : (...args) => (calls.push([name, ...args]), t)) });
    }
  }
  class Text {
    constructor(text, style) {
      this.text = text;
      this.style = style;
      this.anchor = { set: () => {} };
      this.position = { set: (x, y) => Object.assign(this, { x, y }) };
    }
    destroy() {}
  }
  const container = { children: [], addChild(c) { this.children.push(c); return c; }, removeChildren() { const c = this.children; this.children = []; return c; } };
  return { PIXI: { Graphics, Text, TextStyle: class { constructor(o) { Object.assign(this, o); } } }, graphics: new Graphics(), labels: container, calls };
}

/**
 * The module's overlay layer as Foundry builds it for a GM, drawing with `recordingPixi`: its labels
 * go to `labels`, its Graphics calls to `calls`.
 * @param {{i18n: any, canvas: any, pairs: () => any[], nextFrame?: (draw: () => void) => void}} opts
 *   the GM's `game.i18n`, the canvas (its `scene`), the pairs drawn, and how a draw waits for a frame
 *   (without it, a refresh draws at once)
 */
export function overlayLayer({ i18n, canvas, pairs, nextFrame }) {
  const { PIXI, graphics, labels, calls } = recordingPixi();
  PIXI.Container = class {
    constructor() {
      return labels;
    }
  };
  class CanvasLayer {
    static get layerOptions() {
      return {};
    }
    addChild(child) {
      return child;
    }
    async _tearDown() {}
  }
  const foundry = { canvas: { layers: { CanvasLayer } }, utils: { mergeObject: (a, b) => ({ ...a, ...b }) } };
  const Layer = defineOverlayLayer({ foundry, PIXI, game: { user: { isGM: true }, i18n }, getCanvas: () => canvas, pairs, enabled: () => true, nextFrame });
  return { layer: new Layer(), graphics, labels, calls };
}
