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
 *   A `rate-limited` answer to hello (the world has its most connections on the bridge) leaves the
 *   bridge's socket open but unadmitted: the module closes it at once and reconnects with backoff,
 *   the bridge's message as the reason.
 *   No welcome within `handshakeTimeoutMs` of the dial (a stuck bridge, or a server that takes the
 *   connection and never answers the upgrade) ends the attempt as `no-answer`, retried.
 *
 * On every `ready` (the first and after each reconnect) it calls `onReady`, which is where the
 * caller sends the full `scene.sync` — patches lost while the line was down are never replayed.
 * When `onReady` has finished with the connection still up, a `settled` event follows and the
 * backoff starts over; a bridge that closes during the resync (1009 for a frame too large, 1011)
 * is retried with growing pauses instead of every half second.
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
 * The address space of a host, as Chrome's Local Network Access sorts them: `loopback` (this
 * machine: localhost, 127.0.0.0/8, ::1), `private` (the local network: 10/8, 172.16/12,
 * 192.168/16, 169.254/16, fc00::/7, fe80::/10, `*.local`) or `public` (anything else).
 * @param {string} hostname
 * @returns {"loopback" | "private" | "public"}
 */
export function addressSpace(hostname) {
  const h = String(hostname ?? "").toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h)) return "loopback";
  const v4 = h.match(/^(\d+)\.(\d+)\.\d+\.\d+$/);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254)) return "private";
    return "public";
  }
  if (/^f[cd][0-9a-f]{2}:/.test(h) || /^fe[89ab][0-9a-f]:/.test(h) || h.endsWith(".local")) return "private";
  return "public";
}

const SPACE_RANK = Object.freeze({ loopback: 0, private: 1, public: 2 });

/**
 * Whether Chrome's Local Network Access stands between the page and the bridge (Chrome 147+ also
 * for WebSockets): a page of a more public address space reaching a more private one — a Foundry
 * on a public host (The Forge, a rented server) dialling `ws://localhost` or a LAN address. Chrome
 * then asks the user for permission; a page that is not a secure context (plain http on a public
 * address) cannot ask and fails silently.
 * @param {{hostname?: string, protocol?: string} | null | undefined} page the Foundry page's location
 * @param {string} url the bridge URL
 * @returns {null | {page: string, bridge: string, secure: boolean}}
 */
export function localNetworkAccess(page, url) {
  if (!page?.hostname) return null;
  let target;
  try {
    target = new URL(url).hostname;
  } catch {
    return null;
  }
  const from = addressSpace(page.hostname);
  const to = addressSpace(target);
  if (SPACE_RANK[to] >= SPACE_RANK[from]) return null;
  // localhost pages are secure contexts on plain http too.
  return { page: from, bridge: to, secure: page.protocol === "https:" || from === "loopback" };
}

/**
 * What a failure to connect means, for the notice: the bridge is not running (`unreachable`), or
 * the browser's local-network permission stands in the way (`local-network`, `local-network-insecure`
 * when the page cannot ask for it, `local-network-denied` when the user refused it).
 * @param {{page?: {hostname?: string, protocol?: string} | null, url: string, permission?: string | null}} ctx
 * @returns {"unreachable" | "local-network" | "local-network-insecure" | "local-network-denied"}
 */
export function diagnoseUnreachable({ page, url, permission = null }) {
  const lna = localNetworkAccess(page, url);
  if (!lna) return "unreachable";
  if (!lna.secure) return "local-network-insecure";
  if (permission === "denied") return "local-network-denied";
  return "local-network";
}

/**
 * The state of Chrome's local-network permission for this page (`granted`, `prompt`, `denied`), or
 * null where the browser does not know the permission (every browser without Local Network Access).
 * Chrome has named it `local-network-access`, then `local-network` and `loopback-network`.
 * @param {{query: (d: {name: any}) => Promise<{state: string}>} | undefined} permissions `navigator.permissions`
 */
export async function localNetworkPermission(permissions = globalThis.navigator?.permissions) {
  if (!permissions?.query) return null;
  let seen = null;
  for (const name of ["local-network-access", "local-network", "loopback-network"]) {
    try {
      const { state } = await permissions.query({ name });
      if (state === "denied") return "denied";
      seen ??= state;
    } catch {
      /* not a permission this browser knows */
    }
  }
  return seen;
}

/** Close code of a frame too large for the peer (RFC 6455): the bridge's answer to a frame over 4 × its limit. */
export const CLOSE_TOO_BIG = 1009;
/** Close code of an unexpected condition on the server (RFC 6455): the bridge failed. */
export const CLOSE_INTERNAL_ERROR = 1011;

/** An `error` message's details, always an object: its presence marks an error the bridge answered with. */
function detailsOf(msg) {
  return msg.details && typeof msg.details === "object" ? msg.details : {};
}

/** A status's `details`, when the status is the bridge's refusal itself (same code), so it is read in the reader's words. */
function fromBridge(code, lastError) {
  return lastError?.details !== undefined && lastError.code === code ? { details: lastError.details } : {};
}

/**
 * What a close means and whether to try again.
 * @param {{code?: number, reason?: string}} closeEvent
 * @param {{handshakeDone: boolean, opened: boolean, lastError?: {code?: string} | null}} context
 * @returns {{code: "unauthorized" | "unsupported-protocol" | "rate-limited" | "unreachable" | "no-answer" | "too-big" | "bridge-failed" | "lost", retry: boolean}}
 *   `no-answer`: something took the connection but no welcome came within the handshake timeout;
 *   `too-big`: the bridge closed with 1009 (a message of ours over four times its frame limit);
 *   `bridge-failed`: it closed with 1011 (an error inside the bridge).
 */
export function classifyClose(closeEvent, { handshakeDone, opened, lastError = null }) {
  if (closeEvent?.code === CLOSE_UNAUTHORIZED || lastError?.code === "unauthorized") return { code: "unauthorized", retry: false };
  if (lastError?.code === "unsupported-protocol") return { code: "unsupported-protocol", retry: false };
  // hello refused for want of room (too many connections of this world): later, there may be room.
  if (!handshakeDone && lastError?.code === "rate-limited") return { code: "rate-limited", retry: true };
  if (closeEvent?.code === CLOSE_TOO_BIG) return { code: "too-big", retry: true };
  if (closeEvent?.code === CLOSE_INTERNAL_ERROR) return { code: "bridge-failed", retry: true };
  if (!handshakeDone && lastError?.code === "timeout") return { code: "no-answer", retry: true };
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
   *   identity: () => {world: string, worldName?: string, foundry?: string, system?: string, user: {id: string, name: string, gm: boolean}},
   *   WebSocket?: any, pageProtocol?: string, page?: {hostname?: string, protocol?: string} | null,
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
    page = globalThis.location ?? null,
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
    this._page = page;
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
    const context = { opened: false, handshakeDone: false, lastError: null, ended: false };
    // The timer runs from the dial, not from `open`: a server that takes the TCP connection and never
    // answers the upgrade leaves a browser's WebSocket "connecting" for minutes, and Node's `ws` for
    // ever. Its end is this attempt's end — the socket's own close event may never come.
    this._clearTimeout(this._handshakeTimer);
    this._handshakeTimer = this._setTimeout(() => {
      if (generation !== this._generation || context.handshakeDone || context.ended) return;
      context.lastError = { code: "timeout", message: context.opened ? "no welcome from the bridge" : "the WebSocket handshake did not complete" };
      try {
        if (context.opened) socket.close(4000, "no welcome");
        else socket.close();
      } catch {
        /* ignore */
      }
      this._afterClose(generation, { code: 4000, reason: "no welcome" }, context);
    }, this._handshakeTimeoutMs);
    socket.onopen = () => {
      if (generation !== this._generation) return;
      context.opened = true;
      this._setState("handshaking");
      const id = this._identity();
      this._send(hello({ ...id, secret: this.secret }));
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
          this._setState("ready");
          this.emit("welcome", msg);
          // The backoff starts over only once the connection has carried the resync: a bridge that
          // welcomes and then closes on the scene (1009, 1011) is retried with growing pauses, not
          // every half second.
          const settled = () => {
            if (generation === this._generation && this.state === "ready") {
              this._backoff.reset();
              this.emit("settled", msg);
            }
          };
          Promise.resolve()
            .then(() => this._onReady(this, msg))
            .then(settled, (err) => {
              this.emit("resync-error", err);
              settled();
            });
          return;
        }
        if (msg.type === "error") context.lastError = { code: msg.code, message: msg.message, details: detailsOf(msg) };
        if (msg.type === "error" && msg.code === "rate-limited") {
          // The bridge keeps this socket open, unadmitted (it may be said hello again): this attempt ends
          // here, not at the handshake timeout, and the reconnection's backoff spaces the next hellos.
          this._clearTimeout(this._handshakeTimer);
          try {
            socket.close(1000, "rate-limited");
          } catch {
            /* already closed */
          }
          this._afterClose(generation, { code: 1000, reason: "rate-limited" }, context);
          return;
        }
      } else if (msg.type === "error" && (msg.code === "unauthorized" || msg.code === "unsupported-protocol")) {
        context.lastError = { code: msg.code, message: msg.message, details: detailsOf(msg) };
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
    if (generation !== this._generation || context.ended) return; // (a socket the module closed itself: its close event too)
    context.ended = true;
    this.socket = null;
    this._pending.rejectAll(new BridgeError("disconnected", "connection to the bridge lost"));
    const verdict = classifyClose(event, context);
    // Never reached the bridge: not running, or the browser's local-network permission.
    if (verdict.code === "unreachable" && !context.opened) verdict.code = /** @type {any} */ (diagnoseUnreachable({ page: this._page, url: this.url }));
    if (!verdict.retry) {
      this._setState("error", { code: verdict.code, message: context.lastError?.message ?? verdict.code, ...fromBridge(verdict.code, context.lastError) });
      return;
    }
    const delay = this._backoff.next();
    this._setState("reconnecting", { code: verdict.code, message: context.lastError?.message ?? verdict.code, ...fromBridge(verdict.code, context.lastError) }, { delay });
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

/**
 * "Test connection": dial the bridge once with this URL and secret, say hello and report what
 * happened in one word, closing the socket in every case. Nothing is retried.
 * @param {{url: string, secret: string, identity: () => any, WebSocket?: any,
 *          page?: {hostname?: string, protocol?: string} | null, permissions?: any,
 *          timeoutMs?: number, setTimeout?: typeof globalThis.setTimeout, clearTimeout?: typeof globalThis.clearTimeout}} opts
 * @returns {Promise<{ok: boolean, code: string, message?: string, details?: object, refusal?: {code?: string, message?: string, details?: object}, bridge?: any, close?: number, seconds?: number}>}
 *   `code`: `ok`, `invalid-url`, `mixed-content`, `no-secret`, `unauthorized`, `unsupported-protocol`,
 *   `rate-limited` (the world has its most connections on the bridge), `unreachable` (the connection was
 *   refused), `no-answer` (nothing answered the dial within `seconds`), `timeout` (the WebSocket opened but
 *   no welcome came within `seconds`), `closed` (the WebSocket opened and was closed before a welcome: `close`
 *   is the close code, `message` the bridge's error or close reason, if any), `local-network`,
 *   `local-network-insecure`, `local-network-denied`. A one-off test: never `lost`, nothing is retried.
 */
export async function testConnection({
  url,
  secret,
  identity,
  WebSocket = globalThis.WebSocket,
  page = globalThis.location ?? null,
  permissions = globalThis.navigator?.permissions,
  timeoutMs = 5000,
  setTimeout = globalThis.setTimeout,
  clearTimeout = globalThis.clearTimeout,
}) {
  const check = checkUrl(url, page?.protocol ?? "http:");
  if (check.ok === false) return { ok: false, code: check.code, message: check.message };
  if (!secret) return { ok: false, code: "no-secret" };
  const permission = localNetworkAccess(page, check.url) ? await localNetworkPermission(permissions) : null;
  if (permission === "denied") return { ok: false, code: "local-network-denied" };
  return new Promise((resolve) => {
    let socket;
    let opened = false;
    let done = false;
    /** The bridge's `error` answer to the hello, if one came before the close. @type {{code?: string, message?: string, details?: object} | null} */
    let refusal = null;
    /** @type {any} */
    let timer = null;
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        socket?.close(1000, "test done");
      } catch {
        /* closed already */
      }
      resolve(result);
    };
    const unreachable = () => ({ ok: false, code: diagnoseUnreachable({ page, url: check.url, permission }) });
    try {
      socket = new WebSocket(check.url);
    } catch (err) {
      finish({ ...unreachable(), message: String(err) });
      return;
    }
    const seconds = Math.round(timeoutMs / 1000);
    // Nothing answered the dial (a firewall that drops it, a host that is off) is not "refused"; where the
    // browser's local-network permission stands between, that is the likelier cause.
    const silent = () => (localNetworkAccess(page, check.url) ? unreachable() : { ok: false, code: "no-answer", seconds });
    timer = setTimeout(() => finish(opened ? { ok: false, code: "timeout", seconds } : silent()), timeoutMs);
    socket.onopen = () => {
      opened = true;
      socket.send(JSON.stringify(hello({ ...identity(), secret })));
    };
    socket.onmessage = (event) => {
      let msg;
      try {
        msg = parseMessage(typeof event.data === "string" ? event.data : String(event.data));
      } catch {
        return;
      }
      if (msg.type === "welcome") finish({ ok: true, code: "ok", bridge: msg.bridge });
      else if (msg.type === "error" && (msg.code === "unauthorized" || msg.code === "unsupported-protocol" || msg.code === "rate-limited")) finish({ ok: false, code: msg.code, message: msg.message, details: detailsOf(msg) });
      else if (msg.type === "error") refusal = { code: msg.code, message: msg.message, details: detailsOf(msg) };
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (event?.code === CLOSE_UNAUTHORIZED) finish({ ok: false, code: "unauthorized" });
      else if (!opened) finish(unreachable());
      else {
        // Closed before a welcome: what closed it, by its close code, and the bridge's own words when it gave any.
        const close = typeof event?.code === "number" ? event.code : 1006;
        const said = refusal?.message ?? (typeof event?.reason === "string" && event.reason ? event.reason : "");
        finish({ ok: false, code: "closed", close, message: said, ...(refusal ? { refusal } : {}) });
      }
    };
  });
}
