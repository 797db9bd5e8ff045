/**
 * The one entry: wires Foundry hooks to the service and publishes
 * `game.modules.get("sightline-bridge").api`. No logic of its own.
 */

import { LAYER_NAME, MODULE_ID, SETTINGS } from "./const.js";
import { addTestConnectionButton, hideSecretFromPlayers, registerKeybindings, registerSettings, setSetting } from "./adapters/settings.js";
import { registerZoneBehavior } from "./region-behavior.js";
import { addOverlayControl, canvasFrame, defineOverlayLayer, registerOverlayLayer } from "./adapters/overlay.js";
import { addTraitsHudButton, editTraits } from "./adapters/traits.js";
import { Sightline, WATCHED_DOCUMENTS } from "./adapters/sightline.js";
import { addSceneSettingsControl, editSceneSettings } from "./adapters/scene-settings.js";
import { rulesOf } from "./serialize.js";
import { registerQuenchBatches } from "./quench.js";
import { showIgnoredNotice } from "./adapters/region-notice.js";
import { addSessionControl, defineLogMenu, logUrlOf, openSessionDialog, overrideFromCard, registerLogMenu, wireOverrideButton } from "./adapters/gm-controls.js";
import { PrerollPrompt } from "./adapters/prompt.js";
import { usePalette } from "./geometry.js";

// The one palette (palette.json, beside module.json): the overlay's colours, as the log and demo draw them.
fetch(new URL("../palette.json", import.meta.url))
  .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`HTTP ${response.status}`))))
  .then((palette) => {
    usePalette(palette);
    refreshOverlay();
  })
  .catch((error) => console.warn(`${MODULE_ID} | palette.json could not be read; the overlay draws in grey`, error));

/** @type {Sightline} */
let sightline;

const overlay = () => /** @type {any} */ (canvas)?.[LAYER_NAME];
const refreshOverlay = () => overlay()?.refresh?.();
/** The overlay's watch follows control, the toggles and the scene; then redraw. */
const overlayChanged = () => {
  sightline.updateOverlayWatch().catch(() => {});
  refreshOverlay();
};
/** @returns {any} */
const setting = (key) => game.settings.get(MODULE_ID, /** @type {any} */ (key));
const toggleOverlay = (on = !setting(SETTINGS.OVERLAY_ENABLED)) => setSetting(game, SETTINGS.OVERLAY_ENABLED, on);
/** The ruleset of the scene a token stands on (its own flag, else the world's). */
const rulesetOf = (scene) => rulesOf(scene ?? canvas?.scene, sightline.ruleDefaults()).ruleset;
const openTraits = (tokenDoc) => editTraits({ DialogV2: foundry.applications.api.DialogV2, game, tokenDoc, ruleset: rulesetOf(tokenDoc?.parent) });
const openSceneSettings = (scene = canvas?.scene) =>
  scene && editSceneSettings({ DialogV2: foundry.applications.api.DialogV2, game, scene, defaults: sightline.ruleDefaults() });

Hooks.once("init", () => {
  sightline = new Sightline({
    game,
    Hooks,
    get ui() {
      return ui;
    },
    ChatMessage,
    getCanvas: () => canvas,
    WebSocket: globalThis.WebSocket,
    location: globalThis.location,
    globals: globalThis,
    CONFIG,
    prerollPrompt: new PrerollPrompt({ DialogV2: foundry.applications.api.DialogV2, localize: (k) => game.i18n.localize(k) }),
  });
  sightline.onRulingsChanged = refreshOverlay;
  sightline.onIgnoredChanged = refreshRegionNotices;
  // The bridge's own palette arrives with every welcome: the overlay draws in it even where the module's
  // palette.json could not be read (a folder copied with its link unresolved).
  sightline.onWelcome = (welcome) => {
    if (welcome?.palette && usePalette(welcome.palette)) refreshOverlay();
  };
  registerSettings(game, {
    onConnectionChange: () => sightline.refreshHolder({ force: true }),
    onRulesChange: () => sightline.resyncAll(),
    onOverlayChange: overlayChanged,
  });
  registerKeybindings(game, { toggleOverlay: () => toggleOverlay() });
  // "Open the log" under the module settings: the bridge's log pages, at the address of its WebSocket URL.
  registerLogMenu(
    game,
    defineLogMenu({
      DialogV2: foundry.applications.api.DialogV2,
      document,
      url: () => logUrlOf(setting(SETTINGS.URL)),
      localize: (k) => game.i18n.localize(k),
    }),
  );
  registerZoneBehavior(CONFIG, foundry);
  registerOverlayLayer(
    CONFIG,
    defineOverlayLayer({
      foundry,
      PIXI,
      game,
      getCanvas: () => canvas,
      pairs: (c, scene) => sightline.overlayPairs(c, scene),
      enabled: () => setting(SETTINGS.OVERLAY_ENABLED),
      // At most one redraw per frame, however many pushes and changes arrive within it.
      nextFrame: (draw) => canvasFrame(canvas)(draw),
    }),
  );
  const module = game.modules.get(MODULE_ID);
  if (module) {
    module.api = {
      adjudicate: (actor, target, options) => sightline.adjudicate(actor, target, options),
      preview: (actor, target, options) => sightline.adjudicate(actor, target, { ...options, log: false }),
      sync: () => sightline.resyncAll(),
      status: () => ({ ...sightline.status }),
      editTraits: openTraits,
      editScene: openSceneSettings,
      toggleOverlay,
      startSession: (name) => sightline.startSession(name),
      endSession: () => sightline.endSession(),
      overrideRuling: (record, override) => sightline.overrideRuling(record, override),
    };
  }
});

// Checks in a real Foundry: Quench fires `quenchReady` only when it is active, so without it nothing
// is registered (scripts/quench.js, docs/foundry.md "Checks in a real Foundry").
Hooks.once(/** @type {any} */ ("quenchReady"), (quench) => {
  registerQuenchBatches(quench, { game, Scene, Actor, Hooks, CONST, CONFIG, getCanvas: () => canvas, sightline, ChatMessage, document });
});

Hooks.once("ready", () => {
  // The relay and the holder beacon first; a GM holding a live connection answers within a moment,
  // so a GM joining (with or without the secret) does not dial a second connection.
  sightline.startRelay();
  setTimeout(() => sightline.refreshHolder(), 1000);
});

// "Test connection" next to the bridge settings: dials the URL and secret typed in the form.
Hooks.on("renderSettingsConfig", (_app, element) => {
  if (!game.user.isGM) {
    hideSecretFromPlayers(element);
    return;
  }
  addTestConnectionButton(element, {
    localize: (k, data) => game.i18n.format(k, data),
    run: (url, secret) => sightline.testConnection({ url, secret }),
    lang: game.i18n.lang,
  });
});

Hooks.on("userConnected", () => sightline.refreshHolder());
// A scene drawn: synced whole, unless it is the same scene drawn again (a V14 floor switch) and the
// bridge holds it already (Sightline#onCanvasReady).
Hooks.on("canvasReady", (c) => {
  sightline
    .onCanvasReady(c.scene)
    .catch((err) => console.warn(`${MODULE_ID} | sync failed`, err))
    .finally(overlayChanged);
});
// A scene changed: what the bridge reads of the change goes (its own fields as a patch, the grid as a
// whole sync, a background or notes change nothing); a refused scene is offered again.
Hooks.on("updateScene", (scene, changed) => sightline.onSceneChange(scene, changed));

// V14 Scene Levels: a level created, changed or deleted changes the heights of everything on it (and
// Foundry updates the objects' level sets beside it): the whole scene is synced again.
for (const action of ["create", "update", "delete"]) {
  Hooks.on(/** @type {any} */ (`${action}Level`), (level) => {
    const scene = level?.parent;
    if (scene && sightline.synced.has(scene.id)) sightline.invalidateRulings();
    if (scene) sightline.onSceneChange(scene);
  });
}

for (const documentName of WATCHED_DOCUMENTS) {
  for (const action of ["create", "update", "delete"]) {
    // update<Document>(document, changed, options, userId); create/delete (document, options, userId).
    Hooks.on(/** @type {any} */ (`${action}${documentName}`), (doc, changed) => {
      sightline.documentChanged(documentName, doc, action, action === "update" ? changed : undefined);
    });
  }
}

Hooks.on("targetToken", (user, token, targeted) => {
  sightline.onTargetToken(user, token, targeted);
  refreshOverlay();
});
Hooks.on("controlToken", () => {
  sightline.onControlToken();
  overlayChanged();
});
// A turn passed, a fight started or ended: the GURPS bucket's preview follows (attack on one's own turn,
// defence on the others').
Hooks.on("updateCombat", () => sightline.onCombatChange());
Hooks.on("deleteCombat", () => sightline.onCombatChange());
Hooks.on("createChatMessage", (message) => sightline.onChatMessage(message));

Hooks.on("renderChatMessageHTML", (message, html) => {
  const button = html.querySelector?.("[data-sightline-apply]");
  if (!button) return;
  if (sightline.holderId() !== game.user.id) button.remove(); // players take `apply` from the GM whose client holds the bridge only
  else button.addEventListener("click", () => sightline.confirmFromMessage(message).catch((err) => console.warn(`${MODULE_ID} | Apply failed`, err)));
});

// The Override button of a logged ruling's card: GMs only (removed for everyone else).
Hooks.on("renderChatMessageHTML", (message, html) => {
  wireOverrideButton(html, {
    isGM: Boolean(game.user.isGM),
    onOverride: () => overrideFromCard({ DialogV2: foundry.applications.api.DialogV2, game, ui, message, sightline }),
  });
});

Hooks.on("getSceneControlButtons", (controls) => {
  addOverlayControl(controls, { isGM: game.user.isGM, active: setting(SETTINGS.OVERLAY_ENABLED), onToggle: (on) => toggleOverlay(on) });
  addSceneSettingsControl(controls, { isGM: game.user.isGM, onClick: () => openSceneSettings() });
  addSessionControl(controls, { isGM: game.user.isGM, onClick: () => openSessionDialog({ DialogV2: foundry.applications.api.DialogV2, game, ui, sightline }) });
});

// A region the bridge does not use (a zone of another ruleset, a parameter missing…): the reason on its
// sheet. RegionConfig is an ApplicationV2 in V13 and V14: `element` is its HTMLElement.
/** @param {foundry.applications.sheets.RegionConfig.Any} app @param {HTMLElement} element */
const regionNotice = (app, element) => {
  const region = app.document;
  const entry = sightline.ignored.region(region?.parent?.id, region?.id);
  showIgnoredNotice(element, entry, { title: game.i18n.localize("SIGHTLINE.Ignored.RegionTitle") });
};
Hooks.on("renderRegionConfig", (app, element) => {
  if (game.user.isGM) regionNotice(app, element);
});
/** After the bridge answered a sync or patch: region sheets already open follow (a behaviour fixed while
 * its region's sheet stays open loses its notice). */
function refreshRegionNotices() {
  if (!game.user?.isGM) return;
  for (const app of foundry.applications.instances.values()) {
    if (app instanceof foundry.applications.sheets.RegionConfig && app.element) regionNotice(app, app.element);
  }
}

Hooks.on("renderTokenHUD", (hud, html) => {
  addTraitsHudButton(hud, html, {
    isGM: game.user.isGM,
    title: game.i18n.localize("SIGHTLINE.Traits.Title"),
    onClick: openTraits,
  });
});

Hooks.on("sightline.status", (status) => {
  if (!game.user?.isGM) return;
  let badge = document.getElementById("sightline-status");
  if (!badge) {
    badge = document.createElement("div");
    badge.id = "sightline-status";
    document.body.append(badge);
  }
  badge.dataset.state = status.state;
  badge.textContent = `Sightline: ${game.i18n.localize(`SIGHTLINE.Status.${status.state}`)}`;
  badge.title = sightline.statusTitle(status);
});

// twodsix (Traveller): it opens its throw dialog with DialogV2.wait, so the hook is renderDialogV2;
// the service recognises the throw dialog by its form and fills in the ruling's difficulty (by DM,
// from the list in use) and the device's asset.
Hooks.on("renderDialogV2", (_app, element) => {
  sightline.prefillTwodsix(element);
});
