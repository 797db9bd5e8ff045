/**
 * Minimal stubs of Foundry's own globals — Hooks, game (settings, users, socket, i18n, scenes),
 * ui.notifications, canvas — enough for the adapters, in the spirit of lib-wrapper's
 * tests/utilities.js. Nothing of the module is mocked.
 */
import { MODULE_ID } from "../../scripts/const.js";

export function hooksStub() {
  const handlers = new Map();
  const called = [];
  return {
    called,
    on(name, fn) {
      (handlers.get(name) ?? handlers.set(name, []).get(name)).push(fn);
    },
    callAll(name, ...args) {
      called.push([name, ...args]);
      for (const fn of handlers.get(name) ?? []) fn(...args);
      return true;
    },
    names: () => [...handlers.keys()],
  };
}

/** A socket bus: every client's emit reaches every other client, as game.socket does. */
export function socketBus() {
  const clients = [];
  return {
    client() {
      const listeners = [];
      const me = {
        on: (channel, fn) => listeners.push([channel, fn]),
        emit: (channel, data) => {
          for (const other of clients) if (other !== me) for (const [c, fn] of other._listeners) if (c === channel) queueMicrotask(() => fn(structuredClone(data)));
        },
        _listeners: listeners,
      };
      clients.push(me);
      return me;
    },
  };
}

export function notificationsStub() {
  const log = [];
  return { log, notifications: { info: (m) => log.push(["info", m]), warn: (m) => log.push(["warn", m]), error: (m) => log.push(["error", m]) } };
}

export function gameStub({ user, users = [user], settings = {}, scenes = [], socket, system = "gurps" }) {
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
    ...settings,
  };
  const sceneMap = new Map(scenes.map((s) => [s.id, s]));
  return {
    world: { id: "w-ashes" },
    version: "13.345",
    system: { id: system },
    user: { targets: new Set(), ...user },
    users: {
      contents: users,
      get activeGM() {
        return users.filter((u) => u.isGM && u.active).sort((a, b) => (a.id < b.id ? -1 : 1))[0] ?? null;
      },
    },
    settings: {
      get: (module, key) => {
        if (module !== MODULE_ID) throw new Error(`unknown module ${module}`);
        return values[key];
      },
      set: (module, key, value) => (values[key] = value),
      register: () => {},
      values,
    },
    i18n: { lang: "en", localize: (k) => k, format: (k, data) => `${k} ${JSON.stringify(data)}` },
    scenes: { get: (id) => sceneMap.get(id), active: scenes[0] ?? null },
    socket,
  };
}
