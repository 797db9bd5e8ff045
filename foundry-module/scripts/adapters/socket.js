/**
 * Players reach the bridge through the connected GM's client over Foundry's module socket
 * (`game.socket`, channel `module.sightline-bridge`), so the secret never leaves GM hands.
 *
 * Payloads on the channel:
 *   {kind: "request",  rid, from, to, message}       player → holder (the active GM)
 *   {kind: "response", rid, to, ok, result | error}  holder → player
 *   {kind: "apply",    to, ruling}                   GM → roller (a confirmed modifier)
 * `game.socket.emit` reaches every other client, so each payload names its addressee.
 * Only `adjudicate` and `ping` may be relayed: players never sync or patch scenes.
 */

import { BridgeError } from "../protocol.js";

export const RELAYED_TYPES = Object.freeze(new Set(["adjudicate", "ping"]));

export class SocketRelay {
  /**
   * @param {{
   *   socket: {on: (channel: string, fn: (data: any) => void) => void, emit: (channel: string, data: any) => void},
   *   channel: string, userId: string,
   *   activeGMId: () => string | null,
   *   isHolder: () => boolean,
   *   forward: (message: any) => Promise<any>,
   *   onApply?: (ruling: any) => void,
   *   timeoutMs?: number,
   *   setTimeout?: typeof globalThis.setTimeout, clearTimeout?: typeof globalThis.clearTimeout,
   * }} opts
   */
  constructor({ socket, channel, userId, activeGMId, isHolder, forward, onApply = () => {}, timeoutMs = 15_000, setTimeout = globalThis.setTimeout, clearTimeout = globalThis.clearTimeout }) {
    this.socket = socket;
    this.channel = channel;
    this.userId = userId;
    this.activeGMId = activeGMId;
    this.isHolder = isHolder;
    this.forward = forward;
    this.onApply = onApply;
    this.timeoutMs = timeoutMs;
    this._setTimeout = (fn, ms) => setTimeout(fn, ms); // unbound: browsers throw "Illegal invocation" otherwise
    this._clearTimeout = (timer) => clearTimeout(timer);
    this._n = 0;
    /** @type {Map<string, {resolve: (v: any) => void, reject: (e: Error) => void, timer: any}>} */
    this._waiting = new Map();
  }

  start() {
    this.socket.on(this.channel, (data) => this._receive(data));
  }

  /** Ask the holder to send this message to the bridge; resolves with the bridge's answer. */
  request(message) {
    if (!RELAYED_TYPES.has(message?.type)) return Promise.reject(new BridgeError("invalid-message", `players cannot send ${message?.type}`));
    const gm = this.activeGMId();
    if (!gm) return Promise.reject(new BridgeError("no-gm", "no GM is connected to relay to the bridge"));
    const rid = `${this.userId}-${++this._n}`;
    return new Promise((resolve, reject) => {
      const timer = this._setTimeout(() => {
        this._waiting.delete(rid);
        reject(new BridgeError("timeout", "the GM's client did not answer"));
      }, this.timeoutMs);
      this._waiting.set(rid, { resolve, reject, timer });
      this.socket.emit(this.channel, { kind: "request", rid, from: this.userId, to: gm, message });
    });
  }

  /** Send a confirmed ruling to the user who rolled, to apply on their client. */
  sendApply(userId, ruling) {
    if (userId === this.userId) this.onApply(ruling);
    else this.socket.emit(this.channel, { kind: "apply", to: userId, ruling });
  }

  async _receive(data) {
    if (!data || data.to !== this.userId) return;
    if (data.kind === "response") {
      const entry = this._waiting.get(data.rid);
      if (!entry) return;
      this._waiting.delete(data.rid);
      this._clearTimeout(entry.timer);
      if (data.ok) entry.resolve(data.result);
      else entry.reject(new BridgeError(data.error?.code ?? "error", data.error?.message ?? "error", data.error?.details));
      return;
    }
    if (data.kind === "apply") {
      this.onApply(data.ruling);
      return;
    }
    if (data.kind === "request") {
      const reply = (payload) => this.socket.emit(this.channel, { kind: "response", rid: data.rid, to: data.from, ...payload });
      if (!this.isHolder()) return reply({ ok: false, error: { code: "not-connected", message: "this GM client holds no bridge connection" } });
      if (!RELAYED_TYPES.has(data.message?.type)) return reply({ ok: false, error: { code: "invalid-message", message: `players cannot send ${data.message?.type}` } });
      try {
        const { id: _ignored, ...message } = data.message;
        reply({ ok: true, result: await this.forward(message) });
      } catch (err) {
        reply({ ok: false, error: { code: err?.code ?? "error", message: err?.message ?? String(err), details: err?.details } });
      }
    }
  }
}
