/**
 * Minimal stubs of Foundry's own globals — Hooks, game (settings, users, socket, i18n, scenes),
 * ui.notifications, canvas — enough for the adapters, in the spirit of lib-wrapper's
 * tests/utilities.js. Nothing of the module is mocked.
 */
import { DEFAULT_OBSERVATION_SKILLS, MODULE_ID } from "../../scripts/const.js";

export function hooksStub() {
  const handlers = new Map();
  const called = [];
  /** @type {StubOf<typeof foundry.helpers.Hooks>} */
  const hooks = {
    on(name, fn) {
      (handlers.get(name) ?? handlers.set(name, []).get(name)).push(fn);
    },
    callAll(name, ...args) {
      called.push([name, ...args]);
      for (const fn of handlers.get(name) ?? []) fn(...args);
      return true;
    },
  };
  return { ...hooks, called, names: () => [...handlers.keys()] };
}

/**
 * A socket bus as Foundry's server runs a module channel: every client's `emit(channel, data)`
 * reaches every *other* client, whose listener is called with a copy of the data and, second, the
 * id of the user whose client emitted it — set by the server from the connection, never by the
 * payload. `client(userId)` is one user's `game.socket` (`on`/`emit`, as socket.io-client's
 * `Socket`, which fvtt-types declares `game.socket` to be).
 */
export function socketBus() {
  const clients = [];
  return {
    client(userId) {
      const listeners = [];
      const me = {
        on: (channel, fn) => {
          listeners.push([channel, fn]);
          return me;
        },
        emit: (channel, data) => {
          for (const other of clients) if (other !== me) for (const [c, fn] of other._listeners) if (c === channel) queueMicrotask(() => fn(structuredClone(data), userId));
          return me;
        },
        _listeners: listeners,
      };
      clients.push(me);
      return me;
    },
  };
}

/** Foundry's document ownership levels (`CONST.DOCUMENT_OWNERSHIP_LEVELS`). */
export const OWNERSHIP = Object.freeze({ NONE: 0, LIMITED: 1, OBSERVER: 2, OWNER: 3 });

/**
 * Give a document Foundry's `ownership` and `testUserPermission(user, permission, {exact})`: a GM
 * is an owner of everything; anyone else has their own entry, else `default`.
 */
export function withOwnership(doc, ownership = { default: OWNERSHIP.NONE }) {
  doc.ownership = ownership;
  doc.testUserPermission = (user, permission, { exact = false } = {}) => {
    const level = user?.isGM ? OWNERSHIP.OWNER : (ownership[user?.id] ?? ownership.default ?? OWNERSHIP.NONE);
    const wanted = typeof permission === "number" ? permission : OWNERSHIP[permission];
    return exact ? level === wanted : level >= wanted;
  };
  return doc;
}

export function notificationsStub() {
  const log = [];
  /** @type {StubOf<foundry.applications.ui.Notifications>} */
  const notifications = { info: (m) => log.push(["info", m]), warn: (m) => log.push(["warn", m]), error: (m) => log.push(["error", m]) };
  return { log, notifications };
}

export function gameStub({ user, users = [user], settings = {}, scenes = [], socket, system = "gurps", messages = [] }) {
  const values = {
    bridgeUrl: "ws://localhost:8765/ws",
    secret: "s3cret",
    ruleset: "infinity-n4",
    edition: "current",
    applyMode: "auto",
    adjudicateOnRoll: true,
    previewOnTarget: true,
    overlayEnabled: false,
    overlayAllTokens: false,
    prerollPrompt: true,
    observationSkills: DEFAULT_OBSERVATION_SKILLS,
    ...settings,
  };
  const sceneMap = new Map(scenes.map((s) => [s.id, s]));
  /** @type {StubOf<foundry.documents.User>} */
  const me = { targets: new Set(), ...user };
  /** @type {StubOf<foundry.helpers.ClientSettings>} */
  const clientSettings = {
    get: (module, key) => {
      if (module !== MODULE_ID) throw new Error(`unknown module ${module}`);
      return values[key];
    },
    set: (module, key, value) => (values[key] = value),
    register: () => {},
  };
  /** @type {StubOf<foundry.packages.World>} */
  const world = { id: "w-ashes", title: "Ashes of Kaldor" };
  /** @type {StubOf<foundry.Game>} */
  const game = {
    world,
    version: "13.345",
    system: { id: system },
    user: me,
    users: /** @type {StubOf<foundry.documents.collections.Users>} */ ({
      contents: users,
      get: (id) => users.find((u) => u.id === id),
      get activeGM() {
        return users.filter((u) => u.isGM && u.active).sort((a, b) => (a.id < b.id ? -1 : 1))[0] ?? null;
      },
    }),
    settings: { ...clientSettings, values },
    i18n: /** @type {StubOf<foundry.helpers.Localization>} */ ({ lang: "en", localize: (k) => k, format: (k, data) => `${k} ${JSON.stringify(data)}` }),
    scenes: /** @type {StubOf<foundry.documents.collections.Scenes>} */ ({ get: (id) => sceneMap.get(id), active: scenes[0] ?? null }),
    messages: /** @type {StubOf<foundry.documents.collections.ChatMessages>} */ ({ contents: messages, get: (id) => messages.find((m) => m.id === id) }),
    socket,
  };
  return /** @type {any} */ (game);
}

/**
 * `foundry.data` as far as a Region Behavior type needs it: the field classes keep their options
 * as Foundry's `DataField` constructor does (`field.options`, and each option as a property of the
 * field: `field.choices`, `field.initial`, …), and `regionBehaviors.RegionBehaviorType` is a base
 * class with Foundry's static `events` and `LOCALIZATION_PREFIXES`.
 */
export function foundryDataStub() {
  class DataField {
    constructor(options = {}) {
      this.options = options;
      Object.assign(this, options);
    }
  }
  /** @type {StubOf<typeof foundry.data.fields>} */
  const fields = { StringField: class StringField extends DataField {}, NumberField: class NumberField extends DataField {}, BooleanField: class BooleanField extends DataField {} };
  class RegionBehaviorType {
    static events = {};
    static LOCALIZATION_PREFIXES = [];
    static defineSchema() {
      return {};
    }
  }
  /** @type {StubOf<typeof foundry.data.regionBehaviors>} */
  const regionBehaviors = { RegionBehaviorType };
  /** @type {StubOf<typeof foundry.data>} */
  const data = { fields, regionBehaviors };
  return /** @type {any} */ ({ data });
}

/** `CONFIG.RegionBehavior` before modules register: Foundry's own types only. */
export function regionBehaviorConfigStub() {
  /** @type {StubOf<typeof CONFIG.RegionBehavior>} */
  const RegionBehavior = { dataModels: { pauseGame: class {} }, typeLabels: { pauseGame: "TYPES.RegionBehavior.pauseGame" }, typeIcons: { pauseGame: "fa-solid fa-pause" } };
  return /** @type {any} */ ({ RegionBehavior });
}

/**
 * The controls `getSceneControlButtons` hands to modules in V13/V14: a record of controls by name,
 * each with its `tools` record (`SceneControls.Control` / `SceneControls.Tool`).
 */
export function sceneControlsStub() {
  /** @type {StubOf<foundry.applications.ui.SceneControls.Tool>} */
  const select = { name: "select", order: 0, title: "CONTROLS.BasicSelect", icon: "fa-solid fa-expand", button: false };
  /** @type {StubOf<foundry.applications.ui.SceneControls.Tool>} */
  const target = { name: "target", order: 1, title: "CONTROLS.TargetSelect", icon: "fa-solid fa-bullseye" };
  /** @type {StubOf<foundry.applications.ui.SceneControls.Control>} */
  const tokens = { name: "tokens", order: 0, title: "CONTROLS.GroupToken", icon: "fa-solid fa-user-alt", tools: { select, target }, activeTool: "select" };
  /** @type {StubOf<foundry.applications.ui.SceneControls.Control>} */
  const walls = { name: "walls", order: 3, title: "CONTROLS.GroupWall", icon: "fa-solid fa-block-brick", tools: {}, activeTool: "select" };
  return /** @type {any} */ ({ tokens, walls });
}

/**
 * Give a document Foundry's `update(changes)` (`Document#update`, async), recording each call's
 * changes in `doc.updates` in order instead of applying them.
 */
export function withUpdates(doc) {
  const updates = [];
  /** @type {StubOf<foundry.documents.Scene>} */
  const methods = {
    async update(changes) {
      updates.push(changes);
      return doc;
    },
  };
  return Object.assign(doc, methods, { updates });
}

/**
 * DialogV2's static `prompt` as Foundry's renders it (needs a DOM): the `content` and the OK
 * button inside one <form>, so a button callback reads `button.form`; `fill(form)` plays the
 * user, then OK calls `ok.callback(event, button, dialog)` and the prompt resolves to what it
 * returns. `fill` returning false closes the window instead: null with `rejectClose: false`.
 * `shown` keeps each config and its form.
 */
export function dialogV2Stub(fill) {
  const shown = [];
  /** @type {StubOf<typeof foundry.applications.api.DialogV2>} */
  const DialogV2 = {
    async prompt(config) {
      const form = document.createElement("form");
      form.className = "dialog-form standard-form";
      form.innerHTML = `<div class="dialog-content standard-form">${config.content ?? ""}</div><footer class="form-footer"><button type="submit" data-action="ok">${config.ok?.label ?? "Confirm"}</button></footer>`;
      document.body.append(form);
      shown.push({ config, form });
      try {
        if ((await fill(form)) === false) {
          if (config.rejectClose === false) return null;
          throw new Error("Dialog was dismissed without pressing a button.");
        }
        const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[data-action="ok"]'));
        const event = new SubmitEvent("submit", { submitter: button });
        return (await config.ok?.callback?.(event, button, DialogV2)) ?? "ok";
      } finally {
        form.remove();
      }
    },
  };
  return { DialogV2, shown };
}

/** Give a document Foundry's `getFlag(scope, key)` and `setFlag(scope, key, value)` over its `flags`. */
export function withFlags(doc) {
  doc.flags ??= {};
  doc.getFlag = (scope, key) => doc.flags[scope]?.[key];
  doc.setFlag = async (scope, key, value) => {
    (doc.flags[scope] ??= {})[key] = value;
    return doc;
  };
  return doc;
}
