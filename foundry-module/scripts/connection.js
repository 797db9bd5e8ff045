/**
 * The WebSocket client of the bridge. Runs in the browser (and in Node with an injected
 * WebSocket class); no Foundry globals.
 *
 * Life cycle (the `state` names, one `status` event at each change):
 *
 *   idle ──connect()──▶ connecting ──open──▶ handshaking ──welcome──▶ ready
 *                          ▲   │                 │                      │
 *                          │   └──close──────────┴────────close─────────┤
 *                          └────── reconnecting (backoff timer) ◀───────┘
 *   error: wrong secret (close 4401 or `unauthorized`), unsupported protocol, bad URL or mixed
 *          content — nothing to retry until the settings change; `closed`: close() was called.
 *
 * On every `ready` (the first and after each reconnect) it calls `onReady`, which is where the
 * caller sends the full `scene.sync` — patches lost while the line was down are never replayed.
 */

import { BridgeError, PendingRequests, createIdGenerator, hello, parseMessage } from "./protocol.js";
import { createBackoff } from "./backoff.js";

/** Close code the bridge uses after `unauthorized` (protocol-v1.md). */
export const CLOSE_UNAUTHORIZED = 4401;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * Check the bridge URL the GM typed before dialling it. Never guesses a scheme.
 * @param {string} url
 * @param {string} [pageProtocol] `location.protocol` of the Foundry page (`https:` or `http:`)
 * @returns {{ok: true, url: string} | {ok: false, code: "invalid-url" | "mixed-content", message: string}}
 */
export function checkUrl(url, pageProtocol = "http:") {
  let parsed;
  try {
    parsed = new URL(String(url ?? "").trim());
  } catch {
    return { ok: false, code: "invalid-url", message: "The bridge URL must be a full URL such as ws://localhost:8765/ws or wss://bridge.example.com/ws." };
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    return { ok: false, code: "invalid-url", message: `The bridge URL must start with ws:// or wss://, not ${parsed.protocol}//.` };
  }
  if (pageProtocol === "https:" && parsed.protocol === "ws:" && !LOOPBACK.has(parsed.hostname)) {
    return {
      ok: false,
      code: "mixed-content",
      message: "This Foundry page is served over https, so the browser refuses an unencrypted ws:// connection to another host. Use a wss:// URL (the bridge behind a TLS reverse proxy) or run the bridge on localhost.",
    };
  }
  return { ok: true, url: parsed.href };
}

/**
 * What a close means and whether to try again.
 * @param {{code?: number, reason?: string}} closeEvent
 * @param {{handshakeDone: boolean, opened: boolean, lastError?: {code?: string} | null}} context
 * @returns {{code: "unauthorized" | "unsupported-protocol" | "unreachable" | "lost", retry: boolean}}
 */
export function classifyClose(closeEvent, { handshakeDone, opened, lastError = null }) {
  if (closeEvent?.code === CLOSE_UNAUTHORIZED || lastError?.code === "unauthorized") return { code: "unauthorized", retry: false };
  if (lastError?.code === "unsupported-protocol") return { code: "unsupported-protocol", retry: false };
  if (!opened || !handshakeDone) return { code: "unreachable", retry: true };
  return { code: "lost", retry: true };
}

/** A minimal event emitter (EventTarget's CustomEvent is not in every Node this runs on). */
class Emitter {
  constructor() {
    /** @type {Map<string, Set<(payload: any) => void>>} */
    this._listeners = new Map();
  }

  /** @param {string} event @param {(payload: any) => void} fn @returns {() => void} unsubscribe */
  on(event, fn) {
    let set = this._listeners.get(event);
    if (!set) this._listeners.set(event, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  emit(event, payload) {
    for (const fn of [...(this._listeners.get(event) ?? [])]) {
      try {
        fn(payload);
      } catch (err) {
        console.error(`sightline-bridge | ${event} listener failed`, err);
      }
    }
  }
}

export class BridgeConnection extends Emitter {
  /**
   * @param {{
   *   url: string, secret: string,
   *   identity: () => {world: string, foundry?: string, system?: string, user: {id: string, name: string, gm: boolean}},
   *   WebSocket?: any, pageProtocol?: string,
   *   onReady?: (connection: BridgeConnection, welcome: any) => (void | Promise<void>),
   *   requestTimeoutMs?: number, handshakeTimeoutMs?: number,
   *   backoff?: {next(): number, reset(): void},
   *   setTimeout?: typeof globalThis.setTimeout, clearTimeout?: typeof globalThis.clearTimeout,
   * }} opts
   */
  constructor({
    url,
    secret,
    identity,
    WebSocket = globalThis.WebSocket,
    pageProtocol = globalThis.location?.protocol ?? "http:",
    onReady = () => {},
    requestTimeoutMs = 10_000,
    handshakeTimeoutMs = 10_000,
    backoff = createBackoff(),
    setTimeout = globalThis.setTimeout,
    clearTimeout = globalThis.clearTimeout,
  }) {
    super();
    this.url = url;
    this.secret = secret;
    this._identity = identity;
    this._WebSocket = WebSocket;
    this._pageProtocol = pageProtocol;
    this._onReady = onReady;
    this._handshakeTimeoutMs = handshakeTimeoutMs;
    this._backoff = backoff;
    this._setTimeout = (fn, ms) => setTimeout(fn, ms); // unbound: browsers throw "Illegal invocation" otherwise
    this._clearTimeout = (timer) => clearTimeout(timer);
    this._nextId = createIdGenerator("fvtt");
    this._pending = new PendingRequests({ timeoutMs: requestTimeoutMs, setTimeout, clearTimeout });
    /** @type {"idle"|"connecting"|"handshaking"|"ready"|"reconnecting"|"error"|"closed"} */
    this.state = "idle";
    /** @type {{code: string, message: string} | null} */
    this.error = null;
    this.welcome = null;
    this.socket = null;
    this._reconnectTimer = null;
    this._handshakeTimer = null;
    this._generation = 0;
  }

  // Public methods.

  /** Dial the bridge (again). Resolves at once; follow `status` events for the outcome. */
  connect() {
    this._cancelReconnect();
    const check = checkUrl(this.url, this._pageProtocol);
    if (check.ok === false) {
      this._setState("error", { code: check.code, message: check.message });
      return;
    }
    this._dial(check.url);
  }

  /** Hang up for good (until connect() is called again). */
  close() {
    this._cancelReconnect();
    this._generation += 1;
    const socket = this.socket;
    this.socket = null;
    this._pending.rejectAll(new BridgeError("disconnected", "connection closed"));
    if (socket) {
      try {
        socket.close(1000, "client closing");
      } catch {
        /* already closed */
      }
    }
    this._setState("closed");
  }

  get ready() {
    return this.state === "ready";
  }

  /**
   * Send a request and await its answer (an `error` answer rejects with a BridgeError).
   * An `id` is assigned when the message has none.
   */
  request(message) {
    if (!this.ready) return Promise.reject(new BridgeError("not-connected", "the bridge is not connected"));
    const msg = message.id ? message : { ...message, id: this._nextId() };
    const answer = this._pending.add(msg.id);
    this._send(msg);
    return answer;
  }

  /** A fresh request id. */
  nextId() {
    return this._nextId();
  }

  // I/O.

  _dial(url) {
    const generation = ++this._generation;
    this.error = null;
    this._setState(this.state === "reconnecting" ? "reconnecting" : "connecting");
    let socket;
    try {
      socket = new this._WebSocket(url);
    } catch (err) {
      // Browsers throw a SecurityError synchronously for blocked mixed content.
      this._afterClose(generation, { code: 1006 }, { opened: false, handshakeDone: false, lastError: { code: "unreachable", message: String(err) } });
      return;
    }
    this.socket = socket;
    const context = { opened: false, handshakeDone: false, lastError: null };
    socket.onopen = () => {
      if (generation !== this._generation) return;
      context.opened = true;
      this._setState("handshaking");
      const id = this._identity();
      this._send(hello({ ...id, secret: this.secret }));
      this._handshakeTimer = this._setTimeout(() => {
        if (generation !== this._generation || context.handshakeDone) return;
        context.lastError = { code: "timeout", message: "no welcome from the bridge" };
        try {
          socket.close(4000, "no welcome");
        } catch {
          /* ignore */
        }
      }, this._handshakeTimeoutMs);
    };
    socket.onmessage = (event) => {
      if (generation !== this._generation) return;
      let msg;
      try {
        msg = parseMessage(typeof event.data === "string" ? event.data : String(event.data));
      } catch (err) {
        this.emit("message-error", err);
        return;
      }
      if (!context.handshakeDone) {
        if (msg.type === "welcome") {
          context.handshakeDone = true;
          this._clearTimeout(this._handshakeTimer);
          this.welcome = msg;
          this._backoff.reset();
          this._setState("ready");
          this.emit("welcome", msg);
          Promise.resolve()
            .then(() => this._onReady(this, msg))
            .catch((err) => this.emit("resync-error", err));
          return;
        }
        if (msg.type === "error") context.lastError = { code: msg.code, message: msg.message };
      } else if (msg.type === "error" && (msg.code === "unauthorized" || msg.code === "unsupported-protocol")) {
        context.lastError = { code: msg.code, message: msg.message };
      }
      if (!this._pending.settle(msg)) this.emit("message", msg);
    };
    socket.onerror = () => {
      /* a close event always follows; it carries the outcome */
    };
    socket.onclose = (event) => {
      this._clearTimeout(this._handshakeTimer);
      this._afterClose(generation, event, context);
    };
  }

  _afterClose(generation, event, context) {
    if (generation !== this._generation) return;
    this.socket = null;
    this._pending.rejectAll(new BridgeError("disconnected", "connection to the bridge lost"));
    const verdict = classifyClose(event, context);
    if (!verdict.retry) {
      this._setState("error", { code: verdict.code, message: context.lastError?.message ?? verdict.code });
      return;
    }
    const delay = this._backoff.next();
    this._setState("reconnecting", { code: verdict.code, message: context.lastError?.message ?? verdict.code }, { delay });
    this._reconnectTimer = this._setTimeout(() => {
      this._reconnectTimer = null;
      const check = checkUrl(this.url, this._pageProtocol);
      if (check.ok === true) this._dial(check.url);
      else this._setState("error", { code: check.code, message: check.message });
    }, delay);
  }

  _cancelReconnect() {
    if (this._reconnectTimer !== null) this._clearTimeout(this._reconnectTimer);
    this._reconnectTimer = null;
  }

  _send(msg) {
    this.socket?.send(JSON.stringify(msg));
  }

  _setState(state, error = null, extra = {}) {
    this.state = state;
    if (error) this.error = error;
    else if (state === "ready" || state === "closed") this.error = null;
    this.emit("status", { state, error: this.error, ...extra });
  }
}
