/**
 * The GM overlay: a canvas layer (`canvas.sightline`) drawn on GM clients only, showing zones
 * shaded and labelled by type and sight lines from the controlled token to its targets (or to
 * every token) coloured blocked / penalised / clear with the MOD as label. A scene-control
 * button (Token controls) and a keybinding toggle it.
 *
 * This file is the Foundry side only: it reads the scene's documents into contract-shaped data
 * and hands them to `overlay-draw.js`, which builds the draw data and makes the PIXI calls (and
 * is what the browser test renders with the real pixi.js).
 */

import { LAYER_NAME, MODULE_ID } from "../const.js";
import { buildOverlayModel, drawOverlay } from "../overlay-draw.js";
import { resolvedPolygons, serializeShape, serializeToken, zoneOf } from "../serialize.js";
import { gridSizes, lineLabel } from "../geometry.js";

/**
 * The scene as the overlay needs it: regions with their zone and area, tokens' footprints.
 * @param {any} scene a Scene document
 */
export function overlaySceneData(scene) {
  const regions = [...(scene.regions ?? [])].map((r) => ({
    id: r.id,
    name: r.name,
    zone: zoneOf(r),
    polygons: resolvedPolygons(r),
    shapes: [...(r.shapes ?? [])].map(serializeShape).filter(Boolean),
  }));
  // Footprints as the bridge gets them: Foundry's centre and size (hexagonal grids included).
  const tokens = [...(scene.tokens ?? [])].map((t) => {
    const c = serializeToken(t, { grid: scene.grid });
    return { id: t.id, x: c.x, y: c.y, width: c.width, height: c.height };
  });
  return { regions, tokens, gridSize: gridSizes(scene.grid).size };
}

/**
 * Run `draw` once, at the canvas's next frame: Foundry's own ticker (`canvas.app.ticker`, a PIXI.Ticker,
 * whose callbacks at the default priority run before the canvas renders), else the browser's
 * `requestAnimationFrame`, else at once (no display).
 * @param {any} canvas @param {(fn: () => void) => unknown} [requestFrame]
 * @returns {(draw: () => void) => void}
 */
export function canvasFrame(canvas, requestFrame = globalThis.requestAnimationFrame?.bind(globalThis)) {
  return (draw) => {
    const ticker = canvas?.app?.ticker;
    if (ticker?.addOnce) ticker.addOnce(draw);
    else if (requestFrame) requestFrame(draw);
    else draw();
  };
}

/**
 * @param {{foundry: any, PIXI: any, game: any, getCanvas: () => any,
 *          pairs: (canvas: any, scene: any) => {actor: string, target: string, ruling?: any}[],
 *          enabled: () => boolean, nextFrame?: (draw: () => void) => void}} deps
 *   `pairs`: the sight lines to draw with their ruling or annotation (the service decides);
 *   `nextFrame`: runs a draw at the next frame (`canvasFrame`); without it, `refresh` draws at once
 */
export function defineOverlayLayer(deps) {
  const { foundry, PIXI, game } = deps;
  const Base = foundry.canvas?.layers?.CanvasLayer ?? globalThis.CanvasLayer;
  return class SightlineLayer extends Base {
    static get layerOptions() {
      return foundry.utils.mergeObject(super.layerOptions, { name: LAYER_NAME });
    }

    async _draw() {
      this.graphics = this.addChild(new PIXI.Graphics());
      this.labels = this.addChild(new PIXI.Container());
      this._frame = null;
      this.redraw();
    }

    async _tearDown(options) {
      this.graphics = null;
      this.labels = null;
      this._frame = null; // a frame asked for before the teardown draws nothing
      return super._tearDown(options);
    }

    /**
     * Ask for a redraw. Every push, token move and toggle asks; the drawing happens once, at the next
     * frame, from the state as it is then (the store has taken every push meanwhile): a bridge pushing
     * many `annotations` a second, or a busy scene with the overlay open, never redraws the whole overlay
     * more than once per frame.
     */
    refresh() {
      if (!this.graphics || this._frame) return;
      if (!deps.nextFrame) {
        this.redraw();
        return;
      }
      const frame = (this._frame = {});
      deps.nextFrame(() => {
        if (this._frame !== frame) return; // torn down (and perhaps drawn anew) since it was asked for
        this._frame = null;
        // Inside the canvas's ticker: a failure here must not stop the frames that follow.
        try {
          this.redraw();
        } catch (err) {
          console.warn(`${MODULE_ID} | the overlay could not be drawn`, err);
        }
      });
    }

    /** Redraw everything now, from the current state. */
    redraw() {
      if (!this.graphics) return;
      this.visible = Boolean(game.user?.isGM && deps.enabled());
      const canvas = deps.getCanvas();
      const scene = canvas?.scene;
      const model =
        this.visible && scene
          ? buildOverlayModel({
              ...overlaySceneData(scene),
              pairs: deps.pairs(canvas, scene),
              // A zone type without a label (a newer bridge's) shows as its id, never as a bare key.
              zoneName: (t) => {
                const key = `SIGHTLINE.Zone.${t}`;
                const label = game.i18n.localize(key);
                return label === key ? t : label;
              },
              lineText: (ruling) => lineLabel(ruling, (key, data) => game.i18n.format(key, data)),
            })
          : { zones: [], lines: [] };
      drawOverlay(PIXI, { graphics: this.graphics, labels: this.labels }, model);
    }
  };
}

/** Register the layer in the interface group (`canvas.sightline`). */
export function registerOverlayLayer(CONFIG, layerClass) {
  CONFIG.Canvas.layers[LAYER_NAME] = { layerClass, group: "interface" };
}

/**
 * V13+ `getSceneControlButtons`: `controls` is a record of SceneControl objects whose `tools` is a
 * record too. Adds a toggle to the Token controls, GM only.
 */
export function addOverlayControl(controls, { isGM, active, onToggle }) {
  const tokens = controls?.tokens;
  if (!tokens?.tools) return;
  tokens.tools[MODULE_ID] = {
    name: MODULE_ID,
    title: "SIGHTLINE.Overlay.Toggle",
    icon: "fa-solid fa-eye",
    order: Object.keys(tokens.tools).length,
    toggle: true,
    active,
    visible: isGM,
    onChange: (_event, toggled) => onToggle(Boolean(toggled)),
  };
}
