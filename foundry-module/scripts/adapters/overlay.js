/**
 * The GM overlay: a canvas layer (`canvas.sightline`) drawn on GM clients only, showing zones
 * shaded and labelled by type and sight lines from the controlled token to its targets (or to
 * every token) coloured blocked / penalised / clear with the MOD as label. A scene-control
 * button (Token controls) and a keybinding toggle it.
 *
 * Drawing sits behind one small class around a PIXI.Graphics, as lib-geometry's Draw does.
 */

import { LAYER_NAME, MODULE_ID } from "../const.js";
import { VERDICT_COLORS, lineLabel, tokenCenter, verdictOf, zoneColor } from "../geometry.js";
import { resolvedPolygons, zoneOf } from "../serialize.js";

/**
 * @param {{foundry: any, PIXI: any, game: any, getCanvas: () => any,
 *          rulingFor: (actorId: string, targetId: string) => any,
 *          wantPreviews: (actorDoc: any, targetDocs: any[]) => void,
 *          showAllTokens: () => boolean, enabled: () => boolean}} deps
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
      this.graphics.clear();
      for (const child of this.labels.removeChildren()) child.destroy();
      this.visible = Boolean(game.user?.isGM && deps.enabled());
      if (!this.visible) return;
      const canvas = deps.getCanvas();
      const scene = canvas?.scene;
      if (!scene) return;
      this._drawZones(scene);
      this._drawLines(canvas, scene);
    }

    _label(text, x, y, color = 0xffffff) {
      const style = new PIXI.TextStyle({ fontFamily: "Signika, sans-serif", fontSize: 22, fill: color, stroke: 0x000000, strokeThickness: 4 });
      const label = new PIXI.Text(text, style);
      label.anchor.set(0.5, 0.5);
      label.position.set(x, y);
      this.labels.addChild(label);
    }

    _drawZones(scene) {
      const g = this.graphics;
      for (const region of scene.regions) {
        const zone = zoneOf(region);
        if (!zone) continue;
        const color = zoneColor(zone.type);
        const polygons = resolvedPolygons(region);
        for (const poly of polygons.filter((p) => !p.hole)) {
          g.lineStyle(2, color, 0.9).beginFill(color, 0.3).drawPolygon(poly.points).endFill();
        }
        for (const poly of polygons.filter((p) => p.hole)) {
          g.lineStyle(2, color, 0.9).beginFill(0x000000, 0.0).drawPolygon(poly.points).endFill();
        }
        const b = region.bounds;
        if (b) this._label(`${region.name} · ${game.i18n.localize(`SIGHTLINE.Zone.${zone.type}`)}`, b.x + b.width / 2, b.y + b.height / 2);
      }
    }

    _drawLines(canvas, scene) {
      const actor = canvas.tokens?.controlled?.[0]?.document;
      if (!actor) return;
      const targets = deps.showAllTokens()
        ? scene.tokens.contents.filter((t) => t.id !== actor.id)
        : [...(game.user.targets ?? [])].map((t) => t.document).filter((t) => t && t.id !== actor.id);
      if (!targets.length) return;
      deps.wantPreviews(actor, targets);
      const size = scene.grid.size;
      const from = tokenCenter(actor, size);
      for (const target of targets) {
        const ruling = deps.rulingFor(actor.id, target.id);
        const color = ruling ? VERDICT_COLORS[verdictOf(ruling)] : VERDICT_COLORS.pending;
        const to = tokenCenter(target, size);
        this.graphics.lineStyle(4, color, 0.9).moveTo(from.x, from.y).lineTo(to.x, to.y);
        this._label(lineLabel(ruling), (from.x + to.x) / 2, (from.y + to.y) / 2 - 14, color);
      }
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
