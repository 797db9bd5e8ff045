/**
 * Players reach the bridge through the connected GM's client over Foundry's module socket
 * (`game.socket`, channel `module.sightline-bridge`), so the secret never leaves GM hands.
 *
 * Payloads on the channel:
 *   {kind: "request",  rid, to, message, roll?}      player → holder (the active GM)
 *   {kind: "response", rid, to, ok, result | error}  holder → player
 *   {kind: "apply",    rid, to, ruling}              holder → roller (a confirmed modifier)
 *   {kind: "applied",  rid, to, taken, reason?, now?} roller → holder (whether its client took it; if not, why,
 *                                                    and the pair it holds now: `{scene?, actor, target}` ids)
 *
 * Nothing in a payload is trusted for who sent it. Foundry's server calls a module socket listener
 * with the payload and, second, the id of the user whose client emitted it (`(data, senderId)`, as
 * socketlib's `_onSocketReceived(message, senderId)` relies on; fvtt-types declares `game.socket`
 * as a plain socket.io `Socket` and types neither). So:
 *   - the holder forwards a request only as its sender, after `vet(senderId, message, context)`
 *     (the service checks the scene, the tokens and the world's log policy) — never a `from` or
 *     `user` of the payload; at most `ratePerSecond` requests per sender;
 *   - a response settles a request only if it comes from the GM it was sent to, with its id;
 *   - `apply` is accepted only from the holder (`activeGMId()`); its `applied` answer settles only the
 *     holder's wait for that roller with that id (a forged one settles nothing).
 * Request ids are random (crypto.randomUUID, or 128 bits of crypto.getRandomValues where the page
 * is not a secure context), so no client can guess another's. `game.socket.emit` of a module
 * channel reaches every other client — fvtt-types declares a `recipients` option only for core
 * events such as `AudioHelper.play`'s — so each answer names its addressee (`to`), every other
 * client drops it, and the answer of a forged request goes to the forger alone by `to` as well.
 * Only `adjudicate` and `ping` may be relayed: players never sync or patch scenes.
 */

import { BridgeError } from "../protocol.js";

/** What the holder relays: rulings and pings for everyone; the log operations for GMs only (the holder's `vet` refuses a player's). */
export const RELAYED_TYPES = Object.freeze(new Set(["adjudicate", "ping", "session.start", "session.end", "ruling.override"]));

/**
 * An unguessable request id: a UUID v4 where `crypto.randomUUID` exists (secure contexts), else
 * 128 random bits in hex (`crypto.getRandomValues` works on plain http too).
 * @param {{randomUUID?: () => string, getRandomValues: <T extends ArrayBufferView>(a: T) => T}} [crypto]
 */
export function randomRequestId(crypto = globalThis.crypto) {
  if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A request id as this relay makes them (a forged or malformed one is never looked up). */
const RID = /^[0-9a-f-]{32,36}$/;

/** An answer awaited from one user (`from`): the promise's ends and its timeout. @typedef {{resolve: (v: any) => void, reject: (e: Error) => void, timer: any, from: string}} Waiting */

/** Why a roller's client did not take an applied ruling (`Sightline#applyRuling`). */
export const NOT_TAKEN = Object.freeze(["target-dropped", "other-pair", "no-pair"]);

/**
 * An `applied` answer, reduced to what it may say: `taken`, a known `reason`, and the pair the roller holds
 * now (`now`, two ids) — whatever else a payload carries is dropped.
 * @param {any} answer
 * @returns {{taken: boolean, reason?: string, now?: {scene?: string, actor: string, target: string}}}
 */
export function appliedAnswer(answer) {
  if (answer?.taken === true) return { taken: true };
  const reason = NOT_TAKEN.includes(answer?.reason) ? answer.reason : "no-pair";
  const now = answer?.now;
  if (typeof now?.actor !== "string" || typeof now?.target !== "string") return { taken: false, reason };
  return { taken: false, reason, now: typeof now.scene === "string" ? { scene: now.scene, actor: now.actor, target: now.target } : { actor: now.actor, target: now.target } };
}

export class SocketRelay {
  /**
   * @param {{
   *   socket: {on: (channel: string, fn: (data: any, senderId?: string) => void) => any, emit: (channel: string, data: any) => any},
   *   channel: string, userId: string,
   *   activeGMId: () => string | null,
   *   isHolder: () => boolean,
   *   forward: (message: any) => Promise<any>,
   *   vet?: (senderId: string, message: any, context: {roll?: string}) => any,
   *   onApply?: (ruling: any) => any,
   *   timeoutMs?: number, ratePerSecond?: number, burst?: number,
   *   newId?: () => string, now?: () => number,
   *   setTimeout?: typeof globalThis.setTimeout, clearTimeout?: typeof globalThis.clearTimeout,
   * }} opts
   */
  constructor({
    socket,
    channel,
    userId,
    activeGMId,
    isHolder,
    forward,
    vet = () => {
      throw new BridgeError("forbidden", "this GM client checks no relayed request");
    },
    onApply = () => {},
    timeoutMs = 15_000,
    ratePerSecond = 10,
    burst = 30,
    newId = () => randomRequestId(),
    now = () => Date.now(),
    setTimeout = globalThis.setTimeout,
    clearTimeout = globalThis.clearTimeout,
  }) {
    this.socket = socket;
    this.channel = channel;
    this.userId = userId;
    this.activeGMId = activeGMId;
    this.isHolder = isHolder;
    this.forward = forward;
    this.vet = vet;
    this.onApply = onApply;
    this.timeoutMs = timeoutMs;
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this._newId = newId;
    this._now = now;
    this._setTimeout = (fn, ms) => setTimeout(fn, ms); // unbound: browsers throw "Illegal invocation" otherwise
    this._clearTimeout = (timer) => clearTimeout(timer);
    /** Request ids → the wait for the GM's `response`. @type {Map<string, Waiting>} */
    this._waiting = new Map();
    /** Apply ids → the holder's wait for the roller's `applied` answer. @type {Map<string, Waiting>} */
    this._applying = new Map();
    /** Per-sender token buckets of the holder: `{tokens, at}`. */
    this._buckets = new Map();
  }

  start() {
    this.socket.on(this.channel, (data, senderId) => {
      this._receive(data, senderId).catch((err) => console.warn("sightline-bridge | relay message failed", err));
    });
  }

  /**
   * Ask the holder to send this message to the bridge; resolves with the bridge's answer.
   * @param {any} message @param {{roll?: string}} [context] the roll chat message a logged ruling is for
   */
  request(message, context = {}) {
    if (!RELAYED_TYPES.has(message?.type)) return Promise.reject(new BridgeError("invalid-message", `players cannot send ${message?.type}`));
    const gm = this.activeGMId();
    if (!gm) return Promise.reject(new BridgeError("no-gm", "no GM is connected to relay to the bridge"));
    const rid = this._newId();
    const payload = { kind: "request", rid, to: gm, message };
    if (typeof context.roll === "string") payload.roll = context.roll;
    return this._expect(this._waiting, payload, "the GM's client did not answer");
  }

  /**
   * Send a confirmed ruling to the user who rolled, to apply on their client (the holder only).
   * Resolves to the roller's answer, `{taken, reason?, now?}` (`applied`: whether its client took it for the
   * pair it holds); rejects with `timeout` when no answer comes (the roller's browser went away).
   * @param {string} userId @param {any} ruling
   * @returns {Promise<{taken: boolean, reason?: string, now?: {scene?: string, actor: string, target: string}}>}
   */
  sendApply(userId, ruling) {
    if (userId === this.userId) return Promise.resolve(appliedAnswer(this.onApply(ruling)));
    return this._expect(this._applying, { kind: "apply", rid: this._newId(), to: userId, ruling }, "the roller's client did not answer");
  }

  /**
   * Send `payload` (its `rid` and `to` set) and wait in `pending` for its answer from `payload.to`; rejects with
   * `timeout` (`silence`) when none comes within `timeoutMs`.
   * @param {Map<string, Waiting>} pending @param {{kind: string, rid: string, to: string, [key: string]: any}} payload @param {string} silence
   */
  _expect(pending, payload, silence) {
    return new Promise((resolve, reject) => {
      const timer = this._setTimeout(() => {
        pending.delete(payload.rid);
        reject(new BridgeError("timeout", silence));
      }, this.timeoutMs);
      pending.set(payload.rid, { resolve, reject, timer, from: payload.to });
      this.socket.emit(this.channel, payload);
    });
  }

  /**
   * The wait in `pending` that `data` answers — its `rid` one we sent, to `senderId` — taken out, its timer
   * cleared; else `undefined` (a forged or late answer).
   * @param {Map<string, Waiting>} pending @returns {Waiting | undefined}
   */
  _answered(pending, data, senderId) {
    if (typeof data.rid !== "string" || !RID.test(data.rid)) return undefined;
    const entry = pending.get(data.rid);
    if (!entry || entry.from !== senderId) return undefined;
    pending.delete(data.rid);
    this._clearTimeout(entry.timer);
    return entry;
  }

  /** One payload from the channel; `senderId` is Foundry's, the payload's own claims are ignored. */
  async _receive(data, senderId) {
    if (!data || typeof data !== "object" || data.to !== this.userId) return;
    if (typeof senderId !== "string" || !senderId || senderId === this.userId) return;
    if (data.kind === "response") return this._settle(data, senderId);
    if (data.kind === "apply") {
      if (senderId !== this.activeGMId()) return;
      const answer = appliedAnswer(this.onApply(data.ruling));
      if (typeof data.rid === "string" && RID.test(data.rid)) this.socket.emit(this.channel, { kind: "applied", rid: data.rid, to: senderId, ...answer });
      return;
    }
    if (data.kind === "applied") return this._applied(data, senderId);
    if (data.kind === "request") return this._answer(data, senderId);
  }

  _settle(data, senderId) {
    const entry = this._answered(this._waiting, data, senderId);
    if (!entry) return;
    if (data.ok === true) entry.resolve(data.result);
    else entry.reject(new BridgeError(String(data.error?.code ?? "error"), String(data.error?.message ?? "error"), data.error?.details));
  }

  /** The roller's answer to an `apply`: only from the user it went to, with its id. */
  _applied(data, senderId) {
    this._answered(this._applying, data, senderId)?.resolve(appliedAnswer(data));
  }

  async _answer(data, senderId) {
    if (typeof data.rid !== "string" || !RID.test(data.rid)) return;
    const reply = (payload) => this.socket.emit(this.channel, { kind: "response", rid: data.rid, to: senderId, ...payload });
    const refuse = (code, message, details = undefined) => reply({ ok: false, error: { code, message, details } });
    if (!this.isHolder()) return refuse("not-connected", "this GM client holds no bridge connection");
    if (!this._take(senderId)) return refuse("rate-limited", `more than ${this.ratePerSecond} relayed requests a second; this one was dropped`, { limit: "relayed-requests-per-second", max: this.ratePerSecond });
    if (!RELAYED_TYPES.has(data.message?.type)) return refuse("invalid-message", `players cannot send ${data.message?.type}`);
    let message;
    try {
      message = this.vet(senderId, data.message, { roll: typeof data.roll === "string" ? data.roll : undefined });
    } catch (err) {
      return refuse(err?.code ?? "forbidden", err?.message ?? String(err));
    }
    try {
      reply({ ok: true, result: await this.forward(message) });
    } catch (err) {
      reply({ ok: false, error: { code: err?.code ?? "error", message: err?.message ?? String(err), details: err?.details } });
    }
  }

  /** One request of `senderId` fits its bucket (refilled at `ratePerSecond`, holding `burst`). */
  _take(senderId) {
    const now = this._now();
    const bucket = this._buckets.get(senderId) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    this._buckets.set(senderId, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
