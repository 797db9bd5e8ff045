/**
 * The wire protocol as plain functions: message builders that produce exactly the objects of
 * protocol-v1.md, a request-id generator, and the table of requests awaiting their answer.
 * Pure: no Foundry globals, no sockets; timers are injected so tests can drive them.
 */

import { MODULE_ID, MODULE_VERSION, PROTOCOL_VERSION } from "./const.js";

/**
 * An error the bridge answered with (`{"type": "error", code, message}`), or one this module
 * raises itself with a code of its own (`timeout`, `disconnected`, `not-connected`, `no-gm`).
 */
export class BridgeError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {object} [details]
   */
  constructor(code, message, details = {}) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    this.details = details;
  }

  /** @param {{code?: string, message?: string, details?: object}} msg an `error` message */
  static fromMessage(msg) {
    return new BridgeError(msg.code ?? "error", msg.message ?? msg.code ?? "error", msg.details ?? {});
  }

  toJSON() {
    return { code: this.code, message: this.message, details: this.details };
  }
}

// Ids.

/**
 * Request ids unique for the life of a connection object: `${prefix}-${n}`.
 * @param {string} [prefix]
 */
export function createIdGenerator(prefix = "sl") {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

// Builders: client → bridge.

/** The most characters of the world's name the bridge takes (`hello.world_name`). */
export const WORLD_NAME_LIMIT = 200;

/**
 * The world's name as `hello` carries it: trimmed, cut to WORLD_NAME_LIMIT characters — whole
 * characters (code points, as the bridge counts them), never half of one — so a long title is
 * shortened rather than refused. "" when there is none.
 * @param {unknown} title
 */
export function worldName(title) {
  return shortened(title, WORLD_NAME_LIMIT);
}

/** The most characters a game session's name may have (`session.start`). */
export const SESSION_NAME_LIMIT = 200;

/**
 * `text` trimmed and cut to `limit` whole characters (code points, as the bridge counts them: an emoji
 * is never cut in half, which would leave a lone surrogate the bridge cannot read).
 * @param {unknown} text @param {number} limit
 */
function shortened(text, limit) {
  return Array.from(String(text ?? "").trim()).slice(0, limit).join("");
}

/**
 * `worldName` is the world's title (Foundry's `game.world.title`): sent as `world_name`, which the
 * bridge's log pages show instead of the world's id; left out when empty (unknown).
 * @param {{world: string, worldName?: string, secret: string, foundry?: string, system?: string,
 *          user: {id: string, name: string, gm: boolean}}} opts
 */
export function hello({ world, worldName: title, secret, foundry, system, user }) {
  /** @type {Record<string, string>} */
  const client = { name: MODULE_ID, version: MODULE_VERSION };
  if (foundry) client.foundry = String(foundry);
  if (system) client.system = String(system);
  const name = worldName(title);
  return { type: "hello", protocol: PROTOCOL_VERSION, world, ...(name ? { world_name: name } : {}), secret, client, user };
}

/** @param {string} id @param {object} scene a contract scene (serialize.js) */
export function sceneSync(id, scene) {
  return { type: "scene.sync", id, scene };
}

/** The scene's own fields a `scene.patch` may replace (extension, docs/protocol.md). */
export const SCENE_PATCH_FIELDS = Object.freeze(["name", "grid", "rules", "environment"]);

/**
 * @param {string} id
 * @param {string} scene scene id
 * @param {{upsert?: Record<string, object[]>, remove?: Record<string, string[]>, name?: string,
 *          grid?: object, rules?: object, environment?: object}} changes
 *   empty kinds are dropped so the message carries only what changed; the scene's own fields
 *   (`SCENE_PATCH_FIELDS`) go when given
 */
export function scenePatch(id, scene, { upsert = {}, remove = {}, ...fields }) {
  /** @type {{type: "scene.patch", id: string, scene: string, upsert?: object, remove?: object} & Record<string, unknown>} */
  const msg = { type: "scene.patch", id, scene };
  const up = nonEmpty(upsert);
  const rm = nonEmpty(remove);
  if (up) msg.upsert = up;
  if (rm) msg.remove = rm;
  for (const key of SCENE_PATCH_FIELDS) if (fields[key] !== undefined) msg[key] = fields[key];
  return msg;
}

/**
 * @param {string} id
 * @param {{scene: string, actor: string, target?: string|null, action: string,
 *          reaction?: boolean, log?: boolean, aware?: boolean}} req
 */
export function adjudicate(id, { scene, actor, target, action, reaction = false, log = true, aware }) {
  /** @type {Record<string, unknown>} */
  const msg = { type: "adjudicate", id, scene, actor };
  if (target) msg.target = target;
  msg.action = action;
  msg.reaction = reaction;
  msg.log = log;
  if (aware !== undefined) msg.aware = aware;
  return msg;
}

/**
 * `session.start` (extension): close the world's open game session and open one named `name`.
 * @param {string} id @param {string} [name]
 */
export function sessionStart(id, name = "") {
  return { type: "session.start", id, name: shortened(name, SESSION_NAME_LIMIT) };
}

/** `session.end` (extension): close the world's open game session. @param {string} id */
export function sessionEnd(id) {
  return { type: "session.end", id };
}

/**
 * `ruling.override` (extension): a GM's ruling for a logged one, with the reason; the original
 * record stays as it was. `modifier` is sent exactly when the action is allowed.
 * @param {string} id
 * @param {{record: string, allowed: boolean, modifier?: number | null, reason: string}} o
 */
export function rulingOverride(id, { record, allowed, modifier = null, reason }) {
  return { type: "ruling.override", id, record, allowed, modifier: allowed ? modifier : null, reason };
}

/** @param {string} id */
export function ping(id) {
  return { type: "ping", id };
}

/** Parse one text frame; throws BridgeError("invalid-message") on anything but a JSON object with a type. */
export function parseMessage(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    throw new BridgeError("invalid-message", "frame is not JSON");
  }
  if (!msg || typeof msg !== "object" || Array.isArray(msg) || typeof msg.type !== "string") {
    throw new BridgeError("invalid-message", "frame is not an object with a type");
  }
  return msg;
}

function nonEmpty(groups) {
  const out = {};
  for (const [kind, list] of Object.entries(groups)) if (list && list.length) out[kind] = list;
  return Object.keys(out).length ? out : null;
}

// Requests awaiting an answer.

/**
 * The requests sent and not yet answered, by id. An answer with the same id settles its promise:
 * an `error` rejects it with a BridgeError, anything else resolves it. Each request times out.
 */
export class PendingRequests {
  /**
   * @param {{timeoutMs?: number, setTimeout?: typeof globalThis.setTimeout,
   *          clearTimeout?: typeof globalThis.clearTimeout}} [opts]
   */
  constructor({ timeoutMs = 10_000, setTimeout = globalThis.setTimeout, clearTimeout = globalThis.clearTimeout } = {}) {
    this.timeoutMs = timeoutMs;
    this._setTimeout = (fn, ms) => setTimeout(fn, ms); // unbound: browsers throw "Illegal invocation" otherwise
    this._clearTimeout = (timer) => clearTimeout(timer);
    /** @type {Map<string, {resolve: (v: any) => void, reject: (e: Error) => void, timer: any}>} */
    this._byId = new Map();
  }

  get size() {
    return this._byId.size;
  }

  /** Register a request id; the promise settles with its answer, or rejects on timeout. */
  add(id) {
    if (this._byId.has(id)) throw new Error(`duplicate request id ${id}`);
    return new Promise((resolve, reject) => {
      const timer = this._setTimeout(() => {
        this._byId.delete(id);
        reject(new BridgeError("timeout", `no answer to ${id} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this._byId.set(id, { resolve, reject, timer });
    });
  }

  /** Settle the request this message answers. Returns false when no request has its id. */
  settle(msg) {
    const id = msg?.id;
    if (typeof id !== "string") return false;
    const entry = this._byId.get(id);
    if (!entry) return false;
    this._byId.delete(id);
    this._clearTimeout(entry.timer);
    if (msg.type === "error") entry.reject(BridgeError.fromMessage(msg));
    else entry.resolve(msg);
    return true;
  }

  /** Reject every outstanding request (connection lost or closed). */
  rejectAll(error) {
    for (const [id, entry] of this._byId) {
      this._clearTimeout(entry.timer);
      entry.reject(error);
      this._byId.delete(id);
    }
  }
}
