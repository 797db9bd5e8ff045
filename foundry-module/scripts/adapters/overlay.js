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
 * @param {{foundry: any, PIXI: any, game: any, getCanvas: () => any,
 *          pairs: (canvas: any, scene: any) => {actor: string, target: string, ruling?: any}[],
 *          enabled: () => boolean}} deps
 *   `pairs`: the sight lines to draw with their ruling or annotation (the service decides)
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
      this.refresh();
    }

    async _tearDown(options) {
      this.graphics = null;
      this.labels = null;
      return super._tearDown(options);
    }

    /** Redraw everything (cheap: a few polygons and lines). */
    refresh() {
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
