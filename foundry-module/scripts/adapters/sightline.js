/**
 * The module's Foundry-facing service: who holds the bridge connection, what is synced, how a
 * targeting or a roll becomes a ruling, and where the ruling goes. Every Foundry global it uses
 * comes in through `env`, so tests build it with stubs of `game`, `Hooks`, `ui` and `canvas`.
 *
 * "What happens when a token moves?" → `onDocumentChange`: the token is serialised and queued in
 * the batcher; the batcher sends one `scene.patch` per scene when the changes quiet down.
 */

import { APPLY_MODES, MODULE_ID, SETTINGS, SOCKET_NAME, ZONE_BEHAVIOR_TYPE } from "../const.js";
import { BridgeConnection, testConnection } from "../connection.js";
import { PatchBatcher } from "../batcher.js";
import { BridgeError, adjudicate as adjudicateMessage, rulingOverride, sceneSync, scenePatch, sessionEnd, sessionStart } from "../protocol.js";
import { SERIALIZERS, documentChangeReads, patchTargetOf, regionsAttachedTo, rulesOf, sceneChangeKind, sceneFields, serializeRegion, serializeScene, serializeToken, tokenIdsOnViewedLevel } from "../serialize.js";
import { attackActionFor } from "../vocabulary.js";
import { SceneWatcher } from "../annotations.js";
import { IgnoredRegistry, ignoredNotice } from "../ignored.js";
import { readerOf, refusalText } from "../errors.js";
import { choosePairs } from "../overlay-draw.js";
import { SocketRelay } from "./socket.js";
import { postRulingCard } from "./chat.js";
import { announce, feedModifier } from "../systems/generic.js";
import { SYSTEM_ID as GURPS_ID, DEFENCES, GurpsBucketFeed, gurpsRollAction } from "../systems/gurps.js";
import { SYSTEM_ID as TWODSIX_ID, difficultiesAsTargets, difficultiesInUse, isObservationThrow, isThrowDialog, observationSkillNames, prefillThrowDialog } from "../systems/twodsix.js";

/** Error codes meaning the bridge is out of reach (not a problem of one request). */
const DOWN_CODES = new Set(["not-connected", "disconnected", "no-gm", "timeout"]);

/** The log operations only a GM may ask for (a co-GM's go through the holder, a player's are refused). */
const GM_LOG_TYPES = new Set(["session.start", "session.end", "ruling.override"]);

/**
 * A relayed log operation rebuilt from its known fields, or a BridgeError: players may not start,
 * end or override anything (the bridge cannot tell a relayed player from the GM who relays).
 */
function vetLogOperation(message, gm) {
  if (!gm) throw new BridgeError("forbidden", "only a GM may start or end a game session or override a ruling");
  if (message.type === "session.start") return sessionStart("", typeof message.name === "string" ? message.name : "");
  if (message.type === "session.end") return sessionEnd("");
  if (typeof message.record !== "string" || typeof message.reason !== "string") throw new BridgeError("invalid-message", "ruling.override needs a record and a reason");
  const allowed = message.allowed !== false;
  return rulingOverride("", { record: message.record, allowed, modifier: allowed ? message.modifier : null, reason: message.reason });
}

/** Whether two JSON values are equal, whatever the order of their objects' keys. */
function sameJson(a, b) {
  const canonical = (v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])])) : Array.isArray(v) ? v.map(canonical) : v);
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Whether a ruling is a defence's (a dodge, parry or block, or any action asked as a reaction) or an attack's. */
function rulingKind(ruling) {
  return DEFENCES.includes(ruling?.action) || ruling?.reaction === true ? "defence" : "attack";
}

/** Documents whose create/update/delete hooks feed scene patches. Never `refreshToken`. */
export const WATCHED_DOCUMENTS = Object.freeze(["Token", "Region", "RegionBehavior", "Wall", "AmbientLight"]);

/** The hook names the service listens to (checked by a test: no refresh* hooks). */
export function documentHookNames() {
  return WATCHED_DOCUMENTS.flatMap((d) => [`create${d}`, `update${d}`, `delete${d}`]);
}

export class Sightline {
  /**
   * @param {{game: any, Hooks: any, ui: any, ChatMessage?: any, getCanvas: () => any,
   *          WebSocket?: any, location?: {protocol: string, hostname?: string, host?: string, origin?: string}, globals?: any, CONFIG?: any,
   *          permissions?: any, prerollPrompt?: {show: (rulings: any[], names: (ruling: any) => {actor: string, target: string}) => unknown, close: (target?: string) => void},
   *          batchDelayMs?: number, setTimeout?: any, clearTimeout?: any}} env
   */
  constructor(env) {
    this.env = env;
    this.connection = null;
    this.status = { state: "idle", error: null };
    /** Scene ids the bridge holds since the last welcome. */
    this.synced = new Set();
    /** Scene id → the scene's own fields last sent (`sceneFields`): a scene update sends only what differs. */
    this._sentFields = new Map();
    /** Last ruling per `${actor}->${target}`, for the overlay. */
    this.rulings = new Map();
    this._previewing = new Set();
    /** Ids of the tokens this user targeted, oldest first (the last one is the current target). */
    this._targetOrder = [];
    /** The module's one entry in the GURPS Modifier Bucket. */
    this.gurps = new GurpsBucketFeed(() => (env.globals ?? globalThis).GURPS);
    /** Rulings a GM applied (confirm mode) or fed at once (auto mode), by pair: the twodsix dialog reads them. */
    this._confirmed = new Map();
    /**
     * The pair the roller's feed last followed (`followPair`), as ids: it stays when the token is released
     * (a roll from the sheet needs none) and goes when no pair is left after targeting. @type {{scene?: string, actor: string, target: string} | null}
     */
    this._heldPair = null;
    /** Confirm mode: the kind (`rulingKind`) of the ruling last proposed to the GMs, by pair. */
    this._proposed = new Map();
    /** Whether this user's last twodsix throw dialog was an observation skill's: its roll is judged. */
    this._observing = false;
    /** @type {Promise<void> | null} */
    this._following = null;
    this._followAgain = false;
    /** Counts `invalidateRulings`: an answer asked before the last one is not cached. */
    this._rulingsEpoch = 0;
    /** Whether a document change's invalidation waits for the other hooks of its go (`documentChanged`). */
    this._invalidateQueued = false;
    /** Roll messages (and pairs) a relayed ruling was logged for: each logs once. */
    this._loggedRolls = new Set();
    this.batcher = new PatchBatcher({
      flush: (scene, changes) => this._sendPatch(scene, changes),
      delayMs: env.batchDelayMs ?? 150,
      setTimeout: env.setTimeout ?? globalThis.setTimeout,
      clearTimeout: env.clearTimeout ?? globalThis.clearTimeout,
    });
    this.relay = null;
    /** Another GM client that announced a live connection (`holder` beacon). */
    this._holderId = null;
    /** Whether the user was told the bridge is down (reset when it is back). */
    this._downNotified = false;
    /** Whether this outage's reconnecting notice was shown (reset when settled and on close). */
    this._retryNotified = false;
    /** The scene the canvas drew last (`canvasReady`). @type {string | null} */
    this._drawnScene = null;
    /** Scene id → the refusal of its last sync the GM was told of (cleared when it syncs). */
    this._syncFailures = new Map();
    /** Scene id → the retry of a refused scene after a change: its timer, whether it runs, whether a change came meanwhile. */
    this._retries = new Map();
    this.onRulingsChanged = () => {};
    /** The overlay's live subscription (`watch`); null until a connection exists. */
    this.watcher = null;
    /** What the bridge holds but does not use, per scene (`scene.synced`/`scene.patched` `ignored`). */
    this.ignored = new IgnoredRegistry();
    /** Called after each answer that updates `ignored` (open region sheets follow). */
    this.onIgnoredChanged = () => {};
    /** Called with every `welcome` (it carries the bridge's palette). @type {(welcome: any) => void} */
    this.onWelcome = () => {};
  }

  get game() {
    return this.env.game;
  }

  setting(key) {
    return this.game.settings.get(MODULE_ID, key);
  }

  /** World defaults for a scene's `rules`. */
  ruleDefaults() {
    return { ruleset: this.setting(SETTINGS.RULESET), edition: this.setting(SETTINGS.EDITION) || "current", locale: this.game.i18n?.lang ?? "en" };
  }

  // Who holds the connection.

  /**
   * One GM client per world holds the connection. The active GM's by default; but a GM whose
   * connection works keeps it when another GM becomes the active one (a GM joining without the
   * secret in their browser never takes a working connection over), and a GM that knows another
   * GM holds a live connection (its `holder` beacon on the module socket) stays off. Two live
   * connections (both dialled before hearing of each other): the lower user id keeps its own.
   */
  isHolder() {
    const { user, users } = this.game;
    if (!user?.isGM || (users?.get?.(user.id) ?? user).active === false) return false;
    const other = this.otherHolder();
    if (other) return Boolean(this.connection?.ready) && user.id < other;
    if (this.holdsConnection()) return true;
    return users?.activeGM?.id === user.id;
  }

  /** Whether this client has a connection that is up or on its way (not failed for good, not closed). */
  holdsConnection() {
    return Boolean(this.connection) && this.connection.state !== "error" && this.connection.state !== "closed";
  }

  /** Another GM client known (by its beacon) to hold a live connection, still online; else null. */
  otherHolder() {
    const id = this._holderId;
    if (!id || id === this.game.user?.id) return null;
    const u = this.game.users?.get?.(id);
    return u?.isGM && u?.active !== false ? id : null;
  }

  /** The GM whose client talks to the bridge: players' requests go there, confirmed modifiers come from there. */
  holderId() {
    if (this.isHolder()) return this.game.user.id;
    return this.otherHolder() ?? this.game.users?.activeGM?.id ?? null;
  }

  /**
   * The holder beacon, next to the relay on the module socket: `{kind: "holder", to: "*", ready}`
   * when this client's connection comes up or goes down, and `{kind: "holder?", to: "*"}` asking
   * the holder to say so (sent at start). Only GM senders (Foundry's sender id) count.
   */
  _startBeacon() {
    const socket = this.game.socket;
    if (!socket?.on) return;
    socket.on(SOCKET_NAME, (data, senderId) => this._onBeacon(data, senderId));
    socket.emit(SOCKET_NAME, { kind: "holder?", to: "*" });
  }

  _beacon(ready) {
    if (this.game.user?.isGM) this.game.socket?.emit?.(SOCKET_NAME, { kind: "holder", to: "*", ready });
  }

  _onBeacon(data, senderId) {
    if (!data || typeof data !== "object" || data.to !== "*" || typeof senderId !== "string" || senderId === this.game.user?.id) return;
    if (data.kind === "holder?") {
      if (this.connection?.ready) this._beacon(true);
      return;
    }
    // Only a GM may claim the connection (Foundry's sender id, not the payload, says who sent it).
    if (data.kind !== "holder" || !this.game.users?.get?.(senderId)?.isGM) return;
    if (data.ready === true) this._holderId = senderId;
    else if (this._holderId === senderId) this._holderId = null;
    else return;
    this.refreshHolder();
  }

  /** Start the socket relay (at `ready`). */
  startRelay() {
    this.relay = new SocketRelay({
      socket: this.game.socket,
      channel: SOCKET_NAME,
      userId: this.game.user.id,
      activeGMId: () => this.holderId(),
      isHolder: () => this.isHolder() && Boolean(this.connection?.ready),
      forward: (message) => this.request(message),
      vet: (senderId, message, context) => this.vetRelayed(senderId, message, context),
      onApply: (ruling) => this.applyRuling(ruling),
      setTimeout: this.env.setTimeout,
      clearTimeout: this.env.clearTimeout,
    });
    this.relay.start();
    this._startBeacon();
  }

  /** Open or drop the connection after a user (dis)connects or the settings change. */
  refreshHolder({ force = false } = {}) {
    if (this._holderId && !this.otherHolder()) this._holderId = null;
    if (!this.isHolder()) {
      if (this.connection) {
        this.connection.close();
        this.connection = null;
      }
      return;
    }
    const url = this.setting(SETTINGS.URL);
    const secret = this.setting(SETTINGS.SECRET);
    if (this.connection && !force && this.connection.url === url && this.connection.secret === secret) return;
    this.connection?.close();
    if (!String(url ?? "").trim()) {
      // A cleared Bridge URL switches the connection off: no dial, no retry, no error notice.
      this.connection = null;
      if (this.status.state !== "idle") this._onStatus({ state: "idle", error: null });
      return;
    }
    if (!secret) {
      this._onStatus({ state: "error", error: { code: "no-secret", message: "no secret set" } });
      this.connection = null;
      return;
    }
    const game = this.game;
    const conn = new BridgeConnection({
      url,
      secret,
      WebSocket: this.env.WebSocket,
      pageProtocol: this.env.location?.protocol ?? "http:",
      page: this.env.location ?? null,
      setTimeout: this.env.setTimeout,
      clearTimeout: this.env.clearTimeout,
      identity: () => ({
        world: game.world?.id ?? "world",
        worldName: game.world?.title,
        foundry: String(game.version ?? game.release?.version ?? ""),
        system: game.system?.id,
        user: { id: game.user.id, name: game.user.name, gm: Boolean(game.user.isGM) },
      }),
      onReady: () => this.resyncAll({ reconnected: true }),
    });
    conn.on("status", (s) => {
      if (s.state !== "ready") this.watcher?.disconnected();
      this._onStatus(s);
    });
    conn.on("message", (m) => this.watcher?.handle(m));
    conn.on("welcome", (w) => this.onWelcome(w));
    conn.on("settled", () => this._onSettled());
    this.watcher = new SceneWatcher({
      request: (m) => this.request(m),
      nextId: () => conn.nextId(),
      onChange: () => this.onRulingsChanged(),
      onUnsupported: () => console.info(`${MODULE_ID} | the bridge has no watch; the overlay fetches previews instead`),
    });
    this.connection = conn;
    conn.connect();
  }

  _onStatus(status) {
    const before = this.status;
    this.status = status;
    this.env.Hooks.callAll("sightline.status", status);
    if (status.state === "closed" || status.state === "idle") this._retryNotified = false;
    if (status.state === "ready" && before.state !== "ready") {
      this._beacon(true);
    } else if (before.state === "ready" && status.state !== "ready") {
      this._beacon(false);
    }
    // One notice per outage: the first failure says why; the retries that follow are silent, those that
    // reach the bridge and are refused again (connecting → handshaking → reconnecting, as when a world has
    // its most connections on the bridge) too, and so are those welcomed and closed again before the
    // resync is through (a scene too large for the bridge: 1009). The outage ends at `settled`.
    if (status.state === "error" || (status.state === "reconnecting" && before.state !== "reconnecting" && !this._retryNotified)) {
      this._downNotified = true;
      if (status.state === "reconnecting") this._retryNotified = true;
      const notify = status.state === "error" ? "error" : "warn";
      this.env.ui?.notifications?.[notify](this.statusText(status), { permanent: status.state === "error" });
      if (status.error?.details !== undefined) console.warn(`${MODULE_ID} | the bridge said (${status.error.code}): ${status.error.message}`);
    }
  }

  /**
   * What went wrong with the connection, in the GM's words (its notice, and the status badge's tooltip):
   * `Error.<code>`, with a refusal of the bridge (a world with its most connections) read from its code and
   * details (`details` is there only on an error the bridge answered with). Empty while nothing is wrong.
   * @param {{error?: {code?: string, message?: string, details?: any} | null}} status
   */
  statusText(status) {
    const error = status?.error;
    if (!error) return "";
    const fromBridge = error.details !== undefined ? refusalText(error, readerOf(this.game)).text : "";
    const page = this.env.location;
    // The page's origin, as `--allow-origin` must name it (`unreachable`: the bridge may have turned it away).
    const origin = page?.origin ?? (page?.host ? `${page.protocol ?? "http:"}//${page.host}` : "");
    return this.game.i18n.format(`SIGHTLINE.Error.${error.code ?? "error"}`, { url: String(this.setting(SETTINGS.URL) ?? ""), page: page?.host ?? "", origin, message: fromBridge || "" });
  }

  /**
   * The status badge's tooltip: `statusText`, and under it the bridge's own words when it refused us (for
   * a bug report); a close or a silence has no words of the bridge, and its raw code is never shown.
   * @param {{error?: {code?: string, message?: string, details?: any} | null}} status
   */
  statusTitle(status) {
    const said = status?.error?.details !== undefined ? status.error.message : "";
    return [this.statusText(status), said ? this.game.i18n.format("SIGHTLINE.Refusal.Said", { message: String(said) }) : ""].filter(Boolean).join("\n");
  }

  /**
   * An error of the bridge (or of the relay) in the reader's words; its own English words, when the text
   * does not show them, go to the console for a bug report.
   * @param {any} err
   */
  refusal(err) {
    const { text, said } = refusalText(err, readerOf(this.game));
    if (said) console.warn(`${MODULE_ID} | the bridge said (${err?.code ?? "error"}): ${said}`, err?.details ?? "");
    return text;
  }

  /** The connection carried its resync and is still up: the outage is over, and said so once. */
  _onSettled() {
    this._retryNotified = false;
    this._downNotified = false;
    this.env.ui?.notifications?.info(this.game.i18n.localize("SIGHTLINE.Status.Connected"));
  }

  /**
   * "Test connection" (settings): one hello to `url` with `secret`, outside the live connection.
   * @param {{url: string, secret: string}} opts
   */
  testConnection({ url, secret }) {
    const game = this.game;
    return testConnection({
      url,
      secret,
      WebSocket: this.env.WebSocket,
      page: this.env.location ?? null,
      permissions: this.env.permissions ?? globalThis.navigator?.permissions,
      setTimeout: this.env.setTimeout ?? globalThis.setTimeout,
      clearTimeout: this.env.clearTimeout ?? globalThis.clearTimeout,
      identity: () => ({
        world: game.world?.id ?? "world",
        worldName: game.world?.title,
        foundry: String(game.version ?? game.release?.version ?? ""),
        system: game.system?.id,
        user: { id: game.user.id, name: game.user.name, gm: Boolean(game.user.isGM) },
      }),
    });
  }

  /**
   * The bridge cannot be reached from this client (not connected, lost, no GM to relay through):
   * one notice until the connection is back, whatever number of rolls and targets fail meanwhile.
   * @param {{code?: string}} err
   */
  notifyDown(err) {
    if (this._downNotified) return;
    this._downNotified = true;
    const key = err?.code === "no-gm" ? "SIGHTLINE.Error.no-gm" : "SIGHTLINE.Error.down";
    this.env.ui?.notifications?.warn(this.game.i18n.localize(key));
  }

  // Scene sync.

  /**
   * After every welcome (`reconnected`) or a rules change: send the scenes in view again, then
   * watch again — the bridge forgot our watch, or replaced the scene it was on.
   */
  async resyncAll({ reconnected = false } = {}) {
    this.synced.clear();
    this.batcher.discard();
    const scenes = new Map();
    const viewed = this.env.getCanvas()?.scene;
    if (viewed) scenes.set(viewed.id, viewed);
    const active = this.game.scenes?.active;
    if (active) scenes.set(active.id, active);
    // A scene the bridge refuses (told once, `tellSyncFailed`) does not keep the others unsynced.
    let refused = null;
    for (const scene of scenes.values()) {
      try {
        await this.syncScene(scene, { rewatch: false });
      } catch (err) {
        if (!this.connection?.ready) throw err;
        refused ??= err;
      }
    }
    await this.watcher?.rewatch({ reconnected });
    if (refused) throw refused;
  }

  /** `scene.sync`: the whole scene, replacing what the bridge held (and re-watching it). */
  async syncScene(scene, { rewatch = true } = {}) {
    if (!this.isHolder() || !this.connection?.ready || !scene) return;
    this.batcher.discard(scene.id);
    let answer;
    const whole = serializeScene(scene, this.ruleDefaults());
    // The scene's own fields as sent (`sceneFields`' keys), for the next update to compare with.
    const fields = { name: whole.name, grid: whole.grid, rules: whole.rules, environment: whole.environment };
    try {
      answer = await this.connection.request(sceneSync(this.connection.nextId(), whole));
    } catch (err) {
      this.tellSyncFailed(scene, err);
      throw err;
    }
    this._syncFailures.delete(scene.id);
    this.synced.add(scene.id);
    this._sentFields.set(scene.id, fields);
    this.ignored.synced(scene.id, answer);
    this.tellIgnored(scene.id);
    if (rewatch && this.watcher?.wanted?.scene === scene.id) await this.watcher.rewatch();
  }

  /**
   * `canvasReady`: the canvas drew `scene`. A scene drawn again — V14 tears the canvas down and draws
   * it anew when the viewer switches floors (`Scene#view({level})`, `Canvas.TearDownOptions.nextLevel`)
   * — asks nothing again: a floor switch changes no document, and every change since the last sync went
   * as a patch and made the rulings it could move stale on every client (`documentChanged`; `updateScene`
   * re-syncs, a failed patch re-syncs, a reconnect re-syncs everything). So the holder does not send a
   * scene the bridge holds on this connection again, and no client drops its previews (which would ask
   * the bridge again for each held pair: the GURPS bucket's, twodsix's, the overlay's — through the GM
   * for a player). Another scene, or one the holder's bridge does not hold, is synced whole, its
   * previews asked anew.
   * @param {any} scene
   */
  async onCanvasReady(scene) {
    const redrawn = Boolean(scene?.id) && scene.id === this._drawnScene;
    this._drawnScene = scene?.id ?? null;
    if (redrawn && (!this.isHolder() || this.synced.has(scene.id))) return;
    this.invalidateRulings();
    await this.syncScene(scene);
  }

  /**
   * `updateScene` (with Foundry's `changed`), and a V14 level created, changed or deleted (without):
   * what the change touches decides what goes (`sceneChangeKind`). Nothing the bridge reads (the
   * background, notes, fog, the darkness of a scene whose ruleset does not read it): nothing. The
   * scene's own fields (name, rules, environment): a `scene.patch` of those that differ from what was
   * sent (`patchSceneFields`). The grid, a level, an embedded collection, or no `changed` at all: a
   * scene the bridge holds is synced whole again. A scene it refused is offered again
   * (`retryRefused`) on any change it reads, since the change may be the GM's fix.
   * @param {any} scene
   * @param {any} [changed] `updateScene`'s differential data
   */
  onSceneChange(scene, changed) {
    if (!scene?.id) return;
    const kind = changed === undefined ? "sync" : sceneChangeKind(changed);
    if (!kind) return;
    if (!this.synced.has(scene.id)) {
      this.retryRefused(scene.id);
      return;
    }
    let judged = true;
    if (kind === "fields") judged = this.patchSceneFields(scene);
    else this.syncScene(scene).catch(() => {});
    // What the bridge judges by changed (the darkness, the rules, the grid): the previews go stale, and
    // the bucket's entry is asked again after what was just sent.
    if (judged) this.invalidateRulings();
  }

  /**
   * A held scene's own fields changed: one `scene.patch` carrying those that differ from what the
   * bridge was sent — the darkness slider of a GURPS scene that takes its darkness from Foundry's
   * sends `environment`, a rename sends `name` (the log shows the scene's name with each ruling). A
   * change of ruleset changes what every region and light is sent as: the scene goes whole.
   * @param {any} scene
   * @returns {boolean} whether anything the bridge judges by was sent (a rename alone is not)
   */
  patchSceneFields(scene) {
    if (!this.isHolder() || !this.connection?.ready) return false;
    const sent = this._sentFields.get(scene.id);
    const now = sceneFields(scene, this.ruleDefaults());
    if (!sent || now.rules.ruleset !== sent.rules.ruleset || !sameJson(now.grid, sent.grid)) {
      this.syncScene(scene).catch(() => {});
      return true;
    }
    /** @type {Record<string, unknown>} */
    const changes = {};
    for (const key of ["name", "rules", "environment"]) if (!sameJson(now[key], sent[key])) changes[key] = now[key];
    if (!Object.keys(changes).length) return false;
    this._sentFields.set(scene.id, now);
    this._sendPatch(scene.id, changes);
    return Object.keys(changes).some((key) => key !== "name");
  }

  /**
   * A scene the bridge refused (too large, invalid) changed — the scene itself, or its tokens, regions,
   * walls or lights: sync it again, for the GM who fixed what the refusal named expects the fix to be
   * picked up now, not at the next ruling asked there. Once per change: changes that come together (the
   * hooks of one deletion of many walls, a token dragged) make one sync, the patch delay after the first
   * of them, which reads the scene as it is then (a stream of changes cannot put it off for ever);
   * changes during that sync make one more after it (the first may have missed them). Refused again for
   * the same reason, the GM is not told twice (`tellSyncFailed`).
   * @param {string} sceneId
   */
  retryRefused(sceneId) {
    if (!this._syncFailures.has(sceneId) || this.synced.has(sceneId) || !this.isHolder() || !this.connection?.ready) return;
    const pending = this._retries.get(sceneId);
    if (pending) {
      // Waiting: this change is read with the others when the sync leaves. Under way: one more after it.
      if (pending.running) pending.again = true;
      return;
    }
    const setTimer = this.env.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms));
    const retry = { running: false, again: false, timer: null };
    this._retries.set(sceneId, retry);
    retry.timer = setTimer(async () => {
      retry.running = true;
      try {
        const scene = this.game.scenes?.get?.(sceneId);
        if (scene && this._syncFailures.has(sceneId) && !this.synced.has(sceneId)) await this.syncScene(scene);
      } catch {
        /* refused again: told once per reason by tellSyncFailed; the next change tries again */
      } finally {
        if (this._retries.get(sceneId) === retry) this._retries.delete(sceneId);
        // A change during that sync may have missed it: once more — a held scene's ordinary resync if it was
        // accepted, another retry if it was refused.
        const scene = this.game.scenes?.get?.(sceneId);
        if (retry.again && scene) this.onSceneChange(scene);
      }
    }, this.env.batchDelayMs ?? 150);
  }

  async ensureSynced(sceneId) {
    if (this.synced.has(sceneId)) return;
    const scene = this.game.scenes?.get(sceneId);
    if (!scene) throw new BridgeError("unknown-scene", `no scene ${sceneId} in this world`);
    await this.syncScene(scene);
  }

  /**
   * `create<Document>` / `update<Document>` / `delete<Document>` of a watched document, as main.js wires
   * them (`changed`: an update's differential data): the change goes to the bridge (`onDocumentChange`,
   * on the holder), and the rulings go stale only when it can move one (`changeMovesRulings`) — a
   * token renamed, a bar or an image changed, another module's flag, a light's colour re-ask nothing.
   * The changes of one go (the hooks of one update of many walls, a token and the regions it carries)
   * make one re-preview, after the last of them.
   * @param {string} documentName @param {any} doc @param {string} action `create`, `update` or `delete` @param {any} [changed]
   */
  documentChanged(documentName, doc, action, changed) {
    if (!WATCHED_DOCUMENTS.includes(documentName)) return;
    this.onDocumentChange(documentName, doc, action);
    if (!this.changeMovesRulings(documentName, doc, action, changed)) return;
    if (this._invalidateQueued) return;
    this._invalidateQueued = true;
    queueMicrotask(() => {
      this._invalidateQueued = false;
      this.invalidateRulings();
    });
  }

  /**
   * Whether a change of a watched document can change a ruling this client holds or shows: the
   * document is on the viewed scene (or the scene of a ruling held), and the change is one a ruling
   * reads (`documentChangeReads`) — a token's name only for a token of a pair held (a Traveller note
   * names the actor); a token created or deleted only when it sheds light or is of a pair held; a
   * region behaviour only when it is (or becomes) a visibility zone.
   * @param {string} documentName @param {any} doc @param {string} action @param {any} [changed]
   */
  changeMovesRulings(documentName, doc, action, changed) {
    const target = patchTargetOf(documentName, doc);
    const sceneId = target?.doc?.parent?.id;
    if (!target || !sceneId) return true;
    const held = [...this.rulings.values(), ...this._confirmed.values()];
    if (this.env.getCanvas()?.scene?.id !== sceneId && !held.some((r) => r?.scene === sceneId)) return false;
    const pair = this.currentPair();
    const ofPair = (id) => pair?.actor?.id === id || pair?.target?.id === id || held.some((r) => r?.actor === id || r?.target === id);
    if (documentName === "RegionBehavior" && doc?.type !== ZONE_BEHAVIOR_TYPE && changed?.type === undefined) return false;
    if (action !== "update" || changed === undefined) {
      if (documentName !== "Token") return true;
      return ofPair(doc?.id) || Boolean(serializeToken(doc, { ruleset: rulesOf(doc.parent, this.ruleDefaults()).ruleset }).light);
    }
    const reads = documentChangeReads(documentName, changed);
    return reads === "ruling" || (reads === "name" && ofPair(doc?.id));
  }

  /** A create/update/delete hook fired for a watched document: the change goes to the bridge. */
  onDocumentChange(documentName, doc, action) {
    if (!this.isHolder() || !this.connection?.ready) return;
    const target = patchTargetOf(documentName, doc);
    if (!target) return;
    const sceneId = target.doc.parent?.id;
    if (!sceneId) return;
    if (!this.synced.has(sceneId)) {
      this.retryRefused(sceneId); // a refused scene: the change may be the GM's fix
      return;
    }
    if (action === "delete" && documentName !== "RegionBehavior") {
      this.batcher.remove(sceneId, target.kind, target.doc.id);
      return;
    }
    const ruleset = rulesOf(target.doc.parent, this.ruleDefaults()).ruleset;
    const obj = SERIALIZERS[target.kind](target.doc, { ruleset });
    if (obj) this.batcher.upsert(sceneId, target.kind, obj);
    else this.batcher.remove(sceneId, target.kind, target.doc.id);
    // V14: regions attached to this token move with it; they are read when the patch leaves, after
    // Foundry has moved them.
    if (documentName === "Token") {
      for (const region of regionsAttachedTo(target.doc.parent, target.doc.id)) {
        this.batcher.upsertLater(sceneId, "regions", region.id, () => serializeRegion(region, { ruleset }));
      }
    }
  }

  _sendPatch(sceneId, changes) {
    if (!this.connection?.ready) return;
    const patched = this.connection.request(scenePatch(this.connection.nextId(), sceneId, changes));
    patched.then((answer) => {
      this.ignored.patched(sceneId, answer, changes.remove);
      this.tellIgnored(sceneId);
    }, () => {});
    patched.catch((err) => {
      // The bridge lost the scene (restart without reconnect, or an invalid patch): start over.
      console.warn(`${MODULE_ID} | scene.patch failed (${err.code}); resyncing ${sceneId}`);
      this.synced.delete(sceneId);
      this.ensureSynced(sceneId).catch(() => {});
    });
  }

  /**
   * The bridge refused a scene (too large, invalid): ONE warning to the GM per scene and reason, with
   * the bridge's words, until that scene syncs. A lost connection is the outage's notice, not this.
   * @param {any} scene @param {any} err
   */
  tellSyncFailed(scene, err) {
    if (!this.game.user?.isGM || DOWN_CODES.has(err?.code)) return;
    const reason = `${err?.code ?? "error"}: ${err?.message ?? err}`;
    const told = this._syncFailures.get(scene.id);
    if (told === reason) return;
    this._syncFailures.set(scene.id, reason);
    const name = scene.name || this.game.i18n.localize("SIGHTLINE.Ignored.ThisScene");
    this.env.ui?.notifications?.warn(this.game.i18n.format("SIGHTLINE.Error.sync", { scene: name, message: this.refusal(err) }));
  }

  /**
   * ONE warning to the GM when the bridge does not use something of a scene it did not say before
   * (the same set, synced again, is not told twice); the reasons come in the scene's locale.
   */
  tellIgnored(sceneId) {
    this.onIgnoredChanged();
    if (!this.game.user?.isGM) return;
    const entries = this.ignored.toTell(sceneId);
    if (!entries) return;
    const scene = this.game.scenes?.get?.(sceneId);
    const format = (key, data) => this.game.i18n.format(key, data);
    const name = scene?.name || this.game.i18n.localize("SIGHTLINE.Ignored.ThisScene");
    this.env.ui?.notifications?.warn(ignoredNotice(entries, { scene: name, format }));
  }

  // Requests.

  /**
   * On the holder: the message a player's relayed request becomes, or a BridgeError refusing it.
   * Built afresh from what Foundry says of the sender (`senderId` is Foundry's, never the payload's):
   * the scene must be one the sender can view (active, or LIMITED at least), the actor a token the
   * sender owns and the target one the sender can see (not hidden, unless the sender owns it) —
   * a hidden token answers exactly as a missing one. `user` is the sender as Foundry knows them;
   * `log` is true only under the world's log policy: the world adjudicates rolls
   * (`adjudicateOnRoll`) and the request names a roll chat message the sender wrote, used once per
   * actor and target — so no client can fill the log without rolling.
   * @param {string} senderId @param {any} message @param {{roll?: string}} [context]
   */
  vetRelayed(senderId, message, { roll } = {}) {
    const user = this.game.users?.get?.(senderId);
    if (!user) throw new BridgeError("forbidden", "the request comes from no user of this world");
    if (message?.type === "ping") return { type: "ping" };
    const gm = Boolean(user.isGM);
    if (GM_LOG_TYPES.has(message?.type)) return vetLogOperation(message, gm);
    const scene = typeof message?.scene === "string" ? this.game.scenes?.get(message.scene) : null;
    if (!scene || !(gm || scene.active || scene.testUserPermission(user, "LIMITED"))) {
      throw new BridgeError("unknown-scene", `no scene ${JSON.stringify(message?.scene)} you can view`);
    }
    const token = (id) => (typeof id === "string" ? scene.tokens?.get(id) : null);
    const actor = token(message.actor);
    if (!actor || !(gm || actor.testUserPermission(user, "OWNER"))) {
      throw new BridgeError("unknown-token", `no token ${JSON.stringify(message.actor)} of yours in this scene`);
    }
    const target = message.target == null ? null : token(message.target);
    if (message.target != null && (!target || !(gm || !target.hidden || target.testUserPermission(user, "OWNER")))) {
      throw new BridgeError("unknown-token", `no token ${JSON.stringify(message.target)} you can see in this scene`);
    }
    const clean = {
      type: "adjudicate",
      scene: scene.id,
      actor: actor.id,
      action: message.action,
      reaction: message.reaction === true,
      log: message.log === true && this._rollMayLog(user, roll, actor.id, target?.id ?? null),
      user: { id: user.id, name: String(user.name ?? ""), gm },
    };
    if (target) clean.target = target.id;
    if (typeof message.aware === "boolean") clean.aware = message.aware;
    if (message.options && typeof message.options === "object" && !Array.isArray(message.options)) clean.options = message.options;
    return clean;
  }

  /** The world's log policy for a relayed ruling: a roll of the sender's, once per actor and target. */
  _rollMayLog(user, rollId, actorId, targetId) {
    if (!this.setting(SETTINGS.ADJUDICATE_ON_ROLL) || typeof rollId !== "string") return false;
    const message = this.game.messages?.get(rollId);
    const author = message?.author?.id ?? message?.author;
    if (!message || author !== user.id || !(message.isRoll || message.rolls?.length)) return false;
    const key = `${rollId}:${actorId}->${targetId}`;
    if (this._loggedRolls.has(key)) return false;
    this._loggedRolls.add(key);
    if (this._loggedRolls.size > 1000) this._loggedRolls.delete(this._loggedRolls.values().next().value);
    return true;
  }

  /**
   * Send a message to the bridge: directly on the holder, through the holder otherwise.
   * @param {any} message @param {{roll?: string}} [context] the roll chat message a logged ruling is for
   */
  async request(message, context = {}) {
    if (this.isHolder()) {
      if (!this.connection?.ready) throw new BridgeError("not-connected", "the bridge is not connected");
      if (message.scene) await this.ensureSynced(message.scene);
      // Changes still waiting in the batch leave first (the bridge answers a world's messages in
      // order): a ruling asked right after a move is judged where the tokens now stand.
      if (message.type === "adjudicate" && this.batcher.pending) this.batcher.flushNow();
      const send = () => this.connection.request(message.id ? message : { ...message, id: this.connection.nextId() });
      try {
        return await send();
      } catch (err) {
        // The bridge forgot the scene: it holds a few scenes per world and drops the least recently used
        // one nobody watches when another is synced (docs/protocol.md). Sync it again and ask once more.
        if (err?.code !== "unknown-scene" || !message.scene || !this.connection?.ready) throw err;
        this.synced.delete(message.scene);
        await this.ensureSynced(message.scene);
        return send();
      }
    }
    if (!this.relay) throw new BridgeError("not-connected", "the module is not ready");
    try {
      return await this.relay.request(message, context);
    } catch (err) {
      if (err?.code === "no-gm") this.notifyDown(err);
      throw err;
    }
  }

  /**
   * Adjudicate one action. Tokens may be documents, placeables or ids.
   * @param {any} actor @param {any} target
   * @param {{action?: string, log?: boolean, reaction?: boolean, aware?: boolean, scene?: string, roll?: string}} [opts]
   *   `roll`: the id of the roll chat message this ruling is for (a player's logged ruling needs one)
   */
  async adjudicate(actor, target, { action, log = true, reaction = false, aware, scene, roll } = {}) {
    const actorDoc = actor?.document ?? actor;
    const targetDoc = target?.document ?? target;
    const actorId = typeof actorDoc === "string" ? actorDoc : actorDoc?.id;
    const targetId = typeof targetDoc === "string" ? targetDoc : targetDoc?.id;
    const sceneId = scene ?? actorDoc?.parent?.id ?? this.env.getCanvas()?.scene?.id;
    const attack = this.attackAction(sceneId);
    const asked = action ?? attack;
    const epoch = this._rulingsEpoch;
    const ruling = await this.request(adjudicateMessage("", { scene: sceneId, actor: actorId, target: targetId, action: asked, reaction, log, aware }), { roll });
    // The pair's cached ruling is its attack (the overlay, the bucket's preview): a defence or another
    // action asked for a roll never stands in for it; nor does an answer the scene changed under.
    if (targetId && asked === attack && !reaction && epoch === this._rulingsEpoch) {
      this.rulings.set(`${actorId}->${targetId}`, ruling);
      this.onRulingsChanged();
    }
    return ruling;
  }

  /** The ruleset a scene is judged under: its own rules flag, else the world's setting. */
  rulesetOf(sceneId) {
    const sceneDoc = this.game.scenes?.get(sceneId);
    return sceneDoc ? rulesOf(sceneDoc, this.ruleDefaults()).ruleset : this.setting(SETTINGS.RULESET);
  }

  /**
   * Whether the roll a token's user makes next is, by the turn order, a defence: a started combat in
   * which the token fights but whose current turn is another combatant's. GURPS attacks are made on
   * one's own turn (a Wait maneuver aside); on the others' turns a fighter defends.
   * @param {any} actorDoc a TokenDocument
   */
  defendingNow(actorDoc) {
    const combat = this.game.combat;
    if (!combat?.started || !actorDoc?.id) return false;
    const current = combat.combatant;
    if (!current || current.tokenId === actorDoc.id) return false;
    return [...(combat.combatants ?? [])].some((c) => c.tokenId === actorDoc.id && c.sceneId === actorDoc.parent?.id);
  }

  /**
   * The token whose turn it is in a started combat on the defender's scene, when that is not the
   * defender itself: in GURPS the attacker of a defence rolled on another's turn. Null otherwise.
   * @param {any} defenderDoc a TokenDocument
   */
  attackerNow(defenderDoc) {
    const combat = this.game.combat;
    const current = combat?.started ? combat.combatant : null;
    if (!current?.tokenId || current.tokenId === defenderDoc?.id || current.sceneId !== defenderDoc?.parent?.id) return null;
    return defenderDoc.parent?.tokens?.get?.(current.tokenId) ?? null;
  }

  /**
   * `updateCombat` / `deleteCombat`: a turn passed or the fight ended. Auto mode: the bucket follows.
   * Confirm mode: `followTurnForConfirm`.
   */
  onCombatChange() {
    if (this.game.system?.id !== GURPS_ID) return;
    if (this.setting(SETTINGS.APPLY_MODE) !== APPLY_MODES.AUTO) {
      this.followTurnForConfirm().catch((err) => console.warn(`${MODULE_ID} | the new turn's ruling could not be proposed`, err));
      return;
    }
    if (this.gurps.entry || this.currentPair()) this._refollow();
  }

  /**
   * Confirm mode, a GURPS fight, a turn passed: the roll the held pair's user makes next changes kind
   * (an attack on one's own turn, a defence on the others', `defendingNow`). A ruling a GM applied for the
   * other kind no longer fits: it leaves the bucket and the applied rulings (`_confirmed`), and the GMs
   * are offered the ruling the new turn needs, whispered with Apply as at targeting. A turn that keeps the
   * kind (one foe's turn to another's) offers nothing again: the ruling applied or proposed still fits.
   */
  async followTurnForConfirm() {
    const pair = this.currentPair();
    if (!pair || !this.setting(SETTINGS.PREVIEW_ON_TARGET)) return;
    if (this.rulesetOf(pair.actor.parent?.id ?? this.env.getCanvas()?.scene?.id) !== "gurps-4e") return;
    const key = `${pair.actor.id}->${pair.target.id}`;
    const kind = this.defendingNow(pair.actor) ? "defence" : "attack";
    const applied = this._confirmed.get(key);
    if (applied && rulingKind(applied) !== kind) {
      this._confirmed.delete(key);
      this.gurps.clear(key);
    }
    if (this._confirmed.has(key) || this._proposed.get(key) === kind) return;
    await this.followPair({ propose: true });
  }

  // The GM's log controls (session.start / session.end / ruling.override, docs/protocol.md).

  /**
   * Open a named game session (the bridge closes the open one). GM only; resolves to the session.
   * @param {string} [name]
   */
  async startSession(name = "") {
    if (!this.game.user?.isGM) throw new BridgeError("forbidden", "only a GM may start a game session");
    const answer = await this.request(sessionStart("", name));
    return answer.session;
  }

  /** Close the open game session; resolves to it, or null when none was open. GM only. */
  async endSession() {
    if (!this.game.user?.isGM) throw new BridgeError("forbidden", "only a GM may end a game session");
    const answer = await this.request(sessionEnd(""));
    return answer.session ?? null;
  }

  /**
   * A GM's override of a logged ruling, with the reason: a new log record beside the original.
   * @param {string} record @param {{allowed: boolean, modifier?: number | null, reason: string}} o
   * @returns {Promise<{record: string, original: string}>}
   */
  async overrideRuling(record, { allowed, modifier = null, reason }) {
    if (!this.game.user?.isGM) throw new BridgeError("forbidden", "only a GM may override a ruling");
    const answer = await this.request(rulingOverride("", { record, allowed, modifier, reason }));
    return { record: answer.record, original: answer.original };
  }

  /** The cached ruling for a pair, for the overlay. */
  rulingFor(actorId, targetId) {
    return this.rulings.get(`${actorId}->${targetId}`);
  }

  /** Fetch previews (`log: false`) the overlay lacks, one at a time per pair. */
  wantPreviews(actorDoc, targetDocs) {
    for (const t of targetDocs) {
      const key = `${actorDoc.id}->${t.id}`;
      if (this.rulings.has(key) || this._previewing.has(key)) continue;
      this._previewing.add(key);
      this.adjudicate(actorDoc, t, { log: false })
        .catch(() => {})
        .finally(() => this._previewing.delete(key));
    }
  }

  // The overlay.

  /** The attack action of a scene's ruleset. */
  attackAction(sceneId) {
    return attackActionFor(this.rulesetOf(sceneId));
  }

  /**
   * What the overlay wants watched: on the holder GM with the overlay on, the viewed scene for its
   * attack action — every token (`tokens: null`) with "lines to every token", else the controlled
   * token(s); nothing when no token is controlled.
   */
  overlayWatchSpec() {
    const canvas = this.env.getCanvas();
    const scene = canvas?.scene;
    if (!scene || !this.game.user?.isGM || !this.setting(SETTINGS.OVERLAY_ENABLED)) return null;
    const all = Boolean(this.setting(SETTINGS.OVERLAY_ALL_TOKENS));
    const controlled = (canvas.tokens?.controlled ?? []).map((t) => t.document?.id ?? t.id).filter(Boolean);
    if (!all && !controlled.length) return null;
    return { scene: scene.id, action: this.attackAction(scene.id), reaction: false, tokens: all ? null : controlled };
  }

  /** Control, targeting, the overlay toggles or the scene changed: watch what the overlay shows. */
  updateOverlayWatch() {
    if (!this.watcher || !this.isHolder() || !this.connection?.ready) return Promise.resolve();
    return this.watcher.want(this.overlayWatchSpec());
  }

  /** Whether the overlay draws from live annotations (else from previews). */
  get watching() {
    return Boolean(this.watcher?.supported && this.watcher.active);
  }

  /**
   * The overlay's sight lines with their ruling: from the watch's annotations when the bridge
   * pushes them, else from cached previews (fetched here when missing).
   */
  overlayPairs(canvas, scene) {
    const actors = (canvas?.tokens?.controlled ?? []).map((t) => t.document?.id ?? t.id);
    const targets = [...(this.game.user?.targets ?? [])].map((t) => t.document?.id ?? t.id);
    const tokenIds = tokenIdsOnViewedLevel(scene); // V14: the viewed floor's tokens only
    const allTokens = Boolean(this.setting(SETTINGS.OVERLAY_ALL_TOKENS));
    if (this.watching) {
      const annotated = this.watcher.annotations();
      const byKey = new Map(annotated.map((a) => [`${a.actor}->${a.target}`, a]));
      return choosePairs({ actors, targets, allTokens, tokenIds, annotated }).map((p) => ({ ...p, ruling: byKey.get(`${p.actor}->${p.target}`) }));
    }
    const pairs = choosePairs({ actors, targets, allTokens, tokenIds });
    const missing = pairs.filter((p) => !this.rulings.has(`${p.actor}->${p.target}`));
    for (const actor of new Set(missing.map((p) => p.actor))) {
      const actorDoc = scene.tokens.get?.(actor);
      const targetDocs = missing.filter((p) => p.actor === actor).map((p) => scene.tokens.get?.(p.target)).filter(Boolean);
      if (actorDoc && targetDocs.length) this.wantPreviews(actorDoc, targetDocs);
    }
    return pairs.map((p) => ({ ...p, ruling: this.rulings.get(`${p.actor}->${p.target}`) }));
  }

  /** Cached rulings of a token go stale when it or anything in the scene moves. */
  invalidateRulings() {
    const auto = this.setting(SETTINGS.APPLY_MODE) === APPLY_MODES.AUTO;
    const had = this.rulings.size > 0;
    // Emptied first: the re-preview below reads the cache before its first await. An answer to a question
    // asked before now is not cached (`adjudicate`): a re-preview asked again after a change made while
    // the last one was under way asks the bridge, instead of finding that older answer.
    this.rulings.clear();
    this._rulingsEpoch++;
    if (auto) this._confirmed.clear();
    // In auto mode the roller's feed follows the scene: a moved token re-previews the pair — for the
    // GURPS bucket while its entry waits for a roll (a roll emptied it: the next targeting fills it), for
    // twodsix whenever a pair is held (its throw dialog reads the preview when it opens).
    const system = this.game.system?.id;
    if (auto && (this.gurps.pending || (system === TWODSIX_ID && this.currentPair()))) this._refollow();
    if (had) this.onRulingsChanged();
  }

  /**
   * `controlToken`: the user took another token while a target is held — a new pair, whose ruling the
   * bucket (GURPS) or the throw dialog (twodsix) needs, as a new target's: the GM playing one NPC after
   * another would otherwise roll the next one's attack with the previous one's modifier. A release
   * leaving no pair keeps the feed as it is (a roll from the sheet needs no selected token).
   */
  onControlToken() {
    const system = this.game.system?.id;
    if (system !== GURPS_ID && system !== TWODSIX_ID) return;
    if (this.currentPair()) this._refollow();
  }

  /** One `followPair` at a time; changes while it runs ask for one more. */
  _refollow() {
    if (this._following) {
      this._followAgain = true;
      return;
    }
    this._following = this.followPair()
      .catch(() => {})
      .finally(() => {
        this._following = null;
        if (this._followAgain) {
          this._followAgain = false;
          this._refollow();
        }
      });
  }

  // Targeting and rolls.

  /** Names of a pair's tokens, for texts people read (the GURPS bucket line). */
  pairNames(ruling) {
    const scene = this.game.scenes?.get?.(ruling?.scene) ?? this.env.getCanvas()?.scene;
    const name = (id) => scene?.tokens?.get?.(id)?.name ?? id;
    /** @type {{actor: string, target: string, who?: string}} */
    const names = { actor: name(ruling?.actor), target: name(ruling?.target) };
    if (DEFENCES.includes(ruling?.action)) names.who = this.game.i18n.format("SIGHTLINE.Gurps.DefenceAgainst", { defender: names.actor, attacker: names.target });
    return names;
  }

  /**
   * The pair whose modifier belongs in the roll the user is about to make: the first controlled
   * token and the most recently targeted token still targeted.
   * @returns {{actor: any, target: any} | null} token documents
   */
  currentPair() {
    const actor = this.env.getCanvas()?.tokens?.controlled?.[0];
    const actorDoc = actor?.document ?? actor;
    if (!actorDoc) return null;
    const targets = new Map([...(this.game.user?.targets ?? [])].map((t) => [t.document?.id ?? t.id, t.document ?? t]));
    for (let i = this._targetOrder.length - 1; i >= 0; i--) {
      const doc = targets.get(this._targetOrder[i]);
      if (doc && doc.id !== actorDoc.id) return { actor: actorDoc, target: doc };
    }
    return null;
  }

  /**
   * `targetToken(user, token, targeted)`: a preview for each controlled token; then the GURPS
   * bucket follows the current pair (auto mode), or the GMs are asked to confirm it (confirm mode).
   */
  async onTargetToken(user, token, targeted) {
    if (user?.id !== this.game.user.id) return [];
    const tokenId = token?.document?.id ?? token?.id;
    this._targetOrder = this._targetOrder.filter((id) => id !== tokenId);
    if (targeted) this._targetOrder.push(tokenId);
    const rulings = [];
    if (!targeted) {
      this.env.prerollPrompt?.close(tokenId);
      // A target let go takes its pairs' applied and proposed rulings along: targeted again, the GMs are asked anew.
      for (const map of [this._confirmed, this._proposed]) for (const key of [...map.keys()]) if (key.endsWith(`->${tokenId}`)) map.delete(key);
    }
    if (targeted && this.setting(SETTINGS.PREVIEW_ON_TARGET)) {
      const controlled = (this.env.getCanvas()?.tokens?.controlled ?? []).filter((t) => t !== token && t.id !== token.id);
      for (const actor of controlled) {
        try {
          rulings.push(await this.adjudicate(actor, token, { log: false }));
        } catch (err) {
          console.warn(`${MODULE_ID} | preview failed`, err);
        }
      }
      if (rulings.length && this.wantsPrerollPrompt()) this.env.prerollPrompt?.show(rulings, (r) => this.pairNames(r));
    }
    await this.followPair({ propose: targeted });
    return rulings;
  }

  /**
   * Whether this client shows the ruling before the roll in a window (adapters/prompt.js): its
   * setting is on and the system is one the modifier cannot reach by itself (GURPS has the
   * bucket, twodsix the throw dialog).
   */
  wantsPrerollPrompt() {
    const system = this.game.system?.id;
    return Boolean(this.setting(SETTINGS.PREROLL_PROMPT)) && system !== GURPS_ID && system !== TWODSIX_ID;
  }

  /**
   * Keep the roller's feed on the current pair before the roll: in auto mode the GURPS bucket holds
   * the current pair's modifier and nothing else (a dropped target's entry goes); in confirm mode a
   * new pair is proposed to the GMs, whose Apply feeds it (`applyRuling`), a pair the GM applied
   * before gets that ruling back, and an entry of another pair is removed.
   */
  async followPair({ propose = false } = {}) {
    const system = this.game.system?.id;
    if (system !== GURPS_ID && system !== TWODSIX_ID) return;
    const pair = this.currentPair();
    const key = pair && `${pair.actor.id}->${pair.target.id}`;
    if (!pair) {
      this._heldPair = null;
      this.gurps.clear();
      return;
    }
    this._heldPair = { scene: pair.actor.parent?.id, actor: pair.actor.id, target: pair.target.id };
    if (this.gurps.entry && this.gurps.entry.key !== key) this.gurps.clear();
    if (!this.setting(SETTINGS.PREVIEW_ON_TARGET)) return;
    // Another combatant's turn in a GURPS fight: the next roll is a defence against the target (a
    // dodge, parry or block: the same −4 or 0 under the rules), so the bucket holds the defence's.
    const defence = system === GURPS_ID && this.rulesetOf(pair.actor.parent?.id ?? this.env.getCanvas()?.scene?.id) === "gurps-4e" && this.defendingNow(pair.actor);
    let ruling = defence ? undefined : this.rulings.get(key);
    if (!ruling) {
      try {
        ruling = await this.adjudicate(pair.actor, pair.target, defence ? { log: false, action: "dodge", reaction: true } : { log: false });
      } catch {
        return;
      }
    }
    if (this.setting(SETTINGS.APPLY_MODE) === APPLY_MODES.AUTO) {
      this._confirmed.set(key, ruling);
      if (system === GURPS_ID) this.gurps.set(ruling, this.pairNames(ruling));
    } else if (this._confirmed.has(key)) {
      // Confirm mode: the GM's word for this pair stands while its target is held — coming back to the pair
      // (another token taken and left, a newer target dropped) puts it back in the bucket, unasked.
      const applied = this._confirmed.get(key);
      if (system === GURPS_ID) this.gurps.set(applied, this.pairNames(applied));
    } else if (propose) {
      this._proposed.set(key, rulingKind(ruling));
      await this.publish(ruling, { trigger: "preview", proposal: true });
    }
  }

  /**
   * The pair this client's next roll is for: the current pair (`currentPair`), else — no token controlled
   * any more, a roll from the sheet — the pair the feed last followed while its target is still targeted.
   * @returns {{scene?: string, actor: string, target: string} | null} ids
   */
  heldPair() {
    const pair = this.currentPair();
    if (pair) return { scene: pair.actor.parent?.id, actor: pair.actor.id, target: pair.target.id };
    const held = this._heldPair;
    if (!held || this.env.getCanvas()?.tokens?.controlled?.length) return null;
    return [...(this.game.user?.targets ?? [])].some((t) => (t.document?.id ?? t.id) === held.target) ? held : null;
  }

  /**
   * A GM's Apply reached this client: feed the ruling where the system allows (the GURPS bucket; the twodsix
   * dialog reads it when it opens), when it is for the pair this client holds (`heldPair`). A ruling for
   * another pair is not fed — it would land on another roll — and the answer says why, for the GM's notice.
   * @returns {{taken: true} | {taken: false, reason: "target-dropped" | "other-pair" | "no-pair", now?: {scene?: string, actor: string, target: string}}}
   */
  applyRuling(ruling) {
    const held = this.heldPair();
    if (held && held.actor === ruling?.actor && held.target === ruling?.target) {
      this._confirmed.set(`${ruling.actor}->${ruling.target}`, ruling);
      feedModifier({ systemId: this.game.system?.id, gurps: this.gurps, ruling, names: this.pairNames(ruling) });
      return { taken: true };
    }
    const targeted = [...(this.game.user?.targets ?? [])].some((t) => (t.document?.id ?? t.id) === ruling?.target);
    if (!targeted) return { taken: false, reason: "target-dropped" };
    return held ? { taken: false, reason: "other-pair", now: held } : { taken: false, reason: "no-pair" };
  }

  /**
   * The action a roll message stands for, or null when it is not one the rules judge: for the
   * GURPS Game Aid only its attack and defence rolls; for twodsix only the throw of an observation
   * skill through its dialog; elsewhere any roll (the module cannot tell).
   * @returns {{action?: string, reaction: boolean} | null}
   */
  rollActionOf(message) {
    const system = this.game.system?.id;
    if (system === GURPS_ID) return gurpsRollAction(message);
    if (system === TWODSIX_ID) {
      // A skill throw whose dialog was an observation skill's (its flag `rollClass`); a Medic or Gun Combat
      // throw, a characteristic or a throw made without the dialog is not what the rulings judge.
      const observing = this._observing;
      this._observing = false;
      const rollClass = message.getFlag?.(TWODSIX_ID, "rollClass") ?? message.flags?.[TWODSIX_ID]?.rollClass;
      return observing && rollClass === "Skill" ? { reaction: false } : null;
    }
    return { reaction: false };
  }

  /**
   * `createChatMessage`: an attack is a roll message made by this user while a token is controlled
   * and targets are set. Adjudicate (`log: true`), post the card, announce the hook.
   */
  async onChatMessage(message) {
    if (!this.setting(SETTINGS.ADJUDICATE_ON_ROLL)) return [];
    const author = message.author?.id ?? message.user?.id ?? message.user;
    if (author !== this.game.user.id) return [];
    if (message.flags?.[MODULE_ID]) return [];
    if (!(message.isRoll || message.rolls?.length)) return [];
    const kind = this.rollActionOf(message);
    if (!kind) return [];
    const canvas = this.env.getCanvas();
    const speakerToken = message.speaker?.token && canvas?.scene?.tokens?.get(message.speaker.token);
    const actor = speakerToken ?? canvas?.tokens?.controlled?.[0]?.document;
    let targets = [...(this.game.user.targets ?? [])];
    // A defence rolled with no target, in a fight on another's turn: against the combatant attacking now.
    if (!targets.length && kind.reaction && actor) targets = [this.attackerNow(actor)].filter(Boolean);
    if (!targets.length || !actor) return [];
    const rulings = [];
    /** The failures told for this roll: the same one (a scene the bridge refuses) once, not once per target. */
    const told = new Set();
    for (const target of targets) {
      const targetDoc = target.document ?? target;
      if (targetDoc.id === actor.id) continue;
      try {
        const ruling = await this.adjudicate(actor, targetDoc, { log: true, roll: message.id, action: kind.action, reaction: kind.reaction });
        await this.publish(ruling, { trigger: "roll", messageId: message.id });
        rulings.push(ruling);
      } catch (err) {
        console.warn(`${MODULE_ID} | adjudication failed`, err);
        // The bridge (or every GM) is gone: one notice for the whole roll, not one per target.
        if (DOWN_CODES.has(err?.code)) {
          this.notifyDown(err);
          break;
        }
        // The same refusal is the same code and limit (its numbers move from one target to the next), else the same words.
        const same = `${err?.code}|${err?.details?.limit ?? err?.message ?? err}`;
        if (!told.has(same)) this.env.ui?.notifications?.warn(`${this.game.i18n.localize("SIGHTLINE.Error.adjudicate")} ${this.refusal(err)}`);
        told.add(same);
      }
    }
    return rulings;
  }

  /**
   * Chat card and the hook. A roll's card is whispered to the GMs in confirm mode, without an
   * Apply button: the roll is done. A `proposal` (a preview in confirm mode, before the roll) is
   * whispered to the GMs with Apply, which feeds the roller's client.
   */
  async publish(ruling, context = {}) {
    const confirm = this.setting(SETTINGS.APPLY_MODE) === APPLY_MODES.CONFIRM;
    const proposal = Boolean(context.proposal);
    // A roll's ruling was asked with log: true: its card says so when the bridge could not log it.
    const askedToLog = context.trigger === "roll";
    if (this.env.ChatMessage) await postRulingCard({ ChatMessage: this.env.ChatMessage, game: this.game, ruling, confirm: proposal, whisperGM: confirm || proposal, rollerId: this.game.user.id, askedToLog });
    if (!proposal) announce(this.env.Hooks, ruling, { ...context, confirm });
  }

  /**
   * `renderDialogV2`: when it is twodsix's throw dialog of an observation skill, fill it from the preview
   * of the controlled token and its single target (systems/twodsix.js), and judge the throw it makes.
   * @param {any} element the dialog's root element
   */
  prefillTwodsix(element) {
    if (this.game.system?.id !== TWODSIX_ID || !isThrowDialog(element)) return null;
    const skills = observationSkillNames(this.setting(SETTINGS.OBSERVATION_SKILLS));
    this._observing = isObservationThrow(element, skills);
    if (!this._observing) return null;
    const actorId = this.env.getCanvas()?.tokens?.controlled?.[0]?.document?.id;
    const targets = [...(this.game.user?.targets ?? [])];
    if (!actorId || targets.length !== 1) return null;
    const key = `${actorId}->${targets[0].document?.id ?? targets[0].id}`;
    // Auto mode: the preview; confirm mode: only a ruling a GM applied.
    const ruling = this.setting(SETTINGS.APPLY_MODE) === APPLY_MODES.CONFIRM ? this._confirmed.get(key) : (this.rulings.get(key) ?? this._confirmed.get(key));
    if (!ruling) return null;
    const twodsixSetting = (key) => this.game.settings.get(TWODSIX_ID, key);
    const difficulties = difficultiesInUse(this.env.CONFIG, twodsixSetting);
    const asTargets = difficultiesAsTargets(twodsixSetting);
    return prefillThrowDialog({ element, difficulties, ruling, skills, asTargets, localize: (k, data) => this.game.i18n.format(k, data) });
  }

  /**
   * The holding GM pressed Apply on a card: the roller's client feeds the modifier, and answers whether it
   * took it (`applyRuling`). The GM is told, in words, when it did not — the roller let go of that pair,
   * holds another, is not connected or did not answer — and otherwise, when the turn order expects the
   * other kind of roll, that it went to the bucket all the same (`outOfTurnNotice`). Another GM's press
   * is not sent (players take `apply` from the holder only): that GM is told whose client can apply it.
   * @returns {Promise<void>}
   */
  async confirmFromMessage(message) {
    const data = message.flags?.[MODULE_ID];
    if (!data?.ruling || !this.game.user.isGM || !this.relay) return;
    // Players accept `apply` from the holder only (the relay's `activeGMId` is `holderId()`): another GM's click
    // would be dropped on arrival, so that GM is told whose client can apply it.
    const holder = this.holderId();
    if (holder !== this.game.user.id) {
      const name = this.game.users?.get?.(holder)?.name || this.game.i18n.localize("SIGHTLINE.Confirm.AnotherGM");
      return void this.env.ui?.notifications?.warn(this.game.i18n.format("SIGHTLINE.Confirm.NotHolder", { holder: name }));
    }
    const roller = this.game.users?.get?.(data.rollerId);
    // Names only: a token this client cannot find (deleted since) is "a token", never its id.
    const tokenName = (scene, id) => this.game.scenes?.get?.(scene)?.tokens?.get?.(id)?.name || this.game.i18n.localize("SIGHTLINE.Confirm.SomeToken");
    const { scene, actor, target } = data.ruling;
    const words = { user: roller?.name || this.game.i18n.localize("SIGHTLINE.Confirm.Roller"), actor: tokenName(scene, actor), target: tokenName(scene, target) };
    const warn = (key, more = {}) => this.env.ui?.notifications?.warn(this.game.i18n.format(key, { ...words, ...more }));
    if (roller?.active === false) return void warn("SIGHTLINE.Confirm.RollerAway");
    let answer;
    try {
      answer = await this.relay.sendApply(data.rollerId, data.ruling);
    } catch {
      return void warn("SIGHTLINE.Confirm.NoAnswer");
    }
    if (!answer.taken) {
      if (answer.reason === "other-pair" && answer.now) {
        const nowScene = answer.now.scene ?? scene;
        return void warn("SIGHTLINE.Confirm.NotTaken.OtherPair", { nowActor: tokenName(nowScene, answer.now.actor), nowTarget: tokenName(nowScene, answer.now.target) });
      }
      return void warn(answer.reason === "target-dropped" ? "SIGHTLINE.Confirm.NotTaken.TargetDropped" : "SIGHTLINE.Confirm.NotTaken.NoPair");
    }
    const outOfTurn = this.outOfTurnNotice(data.ruling);
    if (outOfTurn) this.env.ui?.notifications?.warn(outOfTurn);
  }

  /**
   * Confirm mode, a GURPS fight (`gurps-4e`): a ruling applied from a card whose kind the turn order no
   * longer expects — an attack's while another combatant has the turn (the next roll is likely a defence),
   * or a defence's on the defender's own turn — still goes to the bucket (the GM may allow an attack out of
   * turn, a Wait maneuver), and the GM is told so, with the turn's name: this text. Null when the kind fits,
   * or no started combat on the ruling's scene counts its actor in.
   * @param {any} ruling
   * @returns {string | null}
   */
  outOfTurnNotice(ruling) {
    if (this.game.system?.id !== GURPS_ID || this.rulesetOf(ruling?.scene) !== "gurps-4e") return null;
    const scene = this.game.scenes?.get?.(ruling?.scene);
    const actorDoc = scene?.tokens?.get?.(ruling?.actor);
    const combat = this.game.combat;
    const current = combat?.started ? combat.combatant : null;
    if (!actorDoc || !current || ![...(combat.combatants ?? [])].some((c) => c.tokenId === actorDoc.id && c.sceneId === scene.id)) return null;
    const kind = rulingKind(ruling);
    if ((kind === "defence") === this.defendingNow(actorDoc)) return null;
    const names = this.pairNames(ruling);
    const turn = (current.sceneId === scene.id && scene.tokens.get?.(current.tokenId)?.name) || current.name || current.tokenId;
    const key = kind === "attack" ? "SIGHTLINE.Confirm.AttackOutOfTurn" : "SIGHTLINE.Confirm.DefenceOnOwnTurn";
    return this.game.i18n.format(key, { actor: names.actor, target: names.target, turn });
  }
}
