/**
 * Live annotations (the bridge's `watch` subscription, docs/protocol.md): the module asks the
 * bridge to watch a scene for an action — every token, or the pairs of some tokens — and the
 * bridge pushes `annotations`: first the whole set (`full: true`), then only what changed
 * (`changed` pairs, `removed` pairs) on every scene change.
 *
 *   → {type: "watch", id, scene, action, reaction, tokens: [ids] | null, detail: "brief"}
 *   ← {type: "watching", id, watch, scene, action}
 *   ← {type: "annotations", watch, scene, version, full, changed: [annotation], removed: [{actor, target}], more?}
 *     (a push larger than the bridge's frame limit comes in parts of one version: every part but
 *     the last says `more: true`, only the first may say `full: true`)
 *   → {type: "unwatch", id, watch}   ← {type: "unwatched", id, watch}
 *   ← {type: "unwatched", watch, reason}   (the bridge dropped it on its own)
 *
 * `AnnotationStore` keeps pair → annotation per watch from the pushes; `SceneWatcher` holds the
 * one watch the overlay wants, re-watches after a reconnect or a resync, and says when the bridge
 * does not know `watch` at all (then the overlay falls back to per-pair previews). Pure: the
 * request function and the change callback are injected.
 */

/** The key of a directed pair. */
export function pairKey(actor, target) {
  return `${actor}->${target}`;
}

/** The entries of a push's `changed` or `removed` that name a pair (`actor` and `target` strings). */
function pairsIn(list) {
  return Array.isArray(list) ? list.filter((p) => p && typeof p === "object" && typeof p.actor === "string" && typeof p.target === "string") : [];
}

/** @param {string} id @param {{scene: string, action: string, reaction?: boolean, tokens?: string[] | null}} spec */
export function watchMessage(id, { scene, action, reaction = false, tokens = null }) {
  // "brief": the overlay draws lines and MODs; it needs no candidates, notes or citations (a tenth of the bytes).
  return { type: "watch", id, scene, action, reaction, tokens: tokens === null ? null : [...tokens], detail: "brief" };
}

/** @param {string} id @param {string} watch */
export function unwatchMessage(id, watch) {
  return { type: "unwatch", id, watch };
}

/**
 * Pair → annotation, per watch. `apply` takes any bridge message and tells whether it changed
 * anything; messages of other types or of unknown watches are ignored.
 */
export class AnnotationStore {
  constructor() {
    /** @type {Map<string, {scene: string, action: string, version: number, complete: boolean, more?: boolean, pairs: Map<string, any>}>} */
    this.watches = new Map();
  }

  /** Start (or restart) keeping a watch; nothing is known of it until its first full push. */
  open(watch, { scene, action }) {
    this.watches.set(watch, { scene, action, version: -Infinity, complete: false, pairs: new Map() });
  }

  /** Stop keeping a watch. Returns whether it held anything. */
  close(watch) {
    const had = this.watches.get(watch)?.pairs.size > 0;
    this.watches.delete(watch);
    return had;
  }

  clear() {
    const had = [...this.watches.values()].some((w) => w.pairs.size > 0);
    this.watches.clear();
    return had;
  }

  /**
   * @returns {{changed: boolean, stale?: boolean, needsFull?: boolean, more?: boolean}} `stale`: an
   *   older version than the one held, ignored; `needsFull`: a partial push before any full one
   *   (nothing to apply it to), ignored — the caller should re-watch; `more`: a part of a larger
   *   push, applied, whose change is reported with its last part.
   */
  apply(msg) {
    if (msg?.type !== "annotations") return { changed: false };
    const w = this.watches.get(msg.watch);
    if (!w) return { changed: false };
    const version = typeof msg.version === "number" ? msg.version : w.version + 1;
    const full = msg.full === true;
    const continues = w.more === true && version === w.version && !full;
    if (!continues && version <= w.version) return { changed: false, stale: true };
    if (!full && !w.complete) return { changed: false, needsFull: true };
    if (full) {
      w.pairs.clear();
      w.complete = true;
    }
    // What the bridge sends is read, not trusted: entries that name no pair are skipped, and a list
    // that is not a list counts as empty — a push never throws half applied.
    for (const a of pairsIn(msg.changed)) w.pairs.set(pairKey(a.actor, a.target), a);
    for (const r of pairsIn(msg.removed)) w.pairs.delete(pairKey(r.actor, r.target));
    w.version = version;
    w.more = msg.more === true;
    return w.more ? { changed: false, more: true } : { changed: true };
  }

  /** The annotation of a pair, from any watch of that scene (and action, when given). */
  get(scene, actor, target, action) {
    for (const w of this.watches.values()) {
      if (w.scene !== scene || (action && w.action !== action)) continue;
      const a = w.pairs.get(pairKey(actor, target));
      if (a) return a;
    }
    return undefined;
  }

  /** Every annotation held for a scene (and action), deduplicated by pair. */
  all(scene, action) {
    const out = new Map();
    for (const w of this.watches.values()) {
      if (w.scene !== scene || (action && w.action !== action)) continue;
      for (const [k, a] of w.pairs) if (!out.has(k)) out.set(k, a);
    }
    return [...out.values()];
  }

  /** Whether a complete (full-pushed) watch of this scene is held. */
  complete(scene) {
    return [...this.watches.values()].some((w) => w.scene === scene && w.complete);
  }
}

/** Error codes meaning "this bridge has no `watch`": fall back to previews. */
const UNSUPPORTED = new Set(["invalid-message", "unknown-type", "unsupported"]);

function sameSpec(a, b) {
  if (!a || !b) return a === b;
  const ta = a.tokens === null ? null : [...a.tokens].sort().join(",");
  const tb = b.tokens === null ? null : [...b.tokens].sort().join(",");
  return a.scene === b.scene && a.action === b.action && Boolean(a.reaction) === Boolean(b.reaction) && ta === tb;
}

/**
 * The one watch the overlay wants at a time.
 *
 * - `want(spec | null)`: the overlay's wish (scene, action, tokens null = all, or the controlled
 *   tokens). A different wish unwatches the old one and watches the new one; null unwatches.
 * - `rewatch()`: after a reconnect (the bridge forgot everything) or a resync of the scene (the
 *   bridge replaced it): drop what is held and watch the wish again.
 * - `handle(msg)`: feed every unsolicited bridge message; `annotations` update the store,
 *   `unwatched` pushed by the bridge drops the watch (re-watched at the next `rewatch`).
 */
export class SceneWatcher {
  /**
   * @param {{request: (message: any) => Promise<any>, nextId: () => string,
   *          store?: AnnotationStore, onChange?: () => void, onUnsupported?: (err: any) => void}} opts
   */
  constructor({ request, nextId, store = new AnnotationStore(), onChange = () => {}, onUnsupported = () => {} }) {
    this._request = request;
    this._nextId = nextId;
    this.store = store;
    this._onChange = onChange;
    this._onUnsupported = onUnsupported;
    /** What the overlay wants. */
    this.wanted = null;
    /** The watch the bridge holds for us: {id, spec}. */
    this.active = null;
    /** false once the bridge answered `watch` with an error meaning it does not know it. */
    this.supported = true;
    /** Why the bridge dropped the last watch on its own, if it did. */
    this.dropped = null;
    this._chain = Promise.resolve();
  }

  /** Set the wish; resolves once the bridge answered (errors are kept in `lastError`). */
  want(spec) {
    const next = spec ? { scene: spec.scene, action: spec.action, reaction: Boolean(spec.reaction), tokens: spec.tokens ?? null } : null;
    if (sameSpec(next, this.wanted) && (this.active || !next || !this.supported)) return this._chain;
    this.wanted = next;
    return this._enqueue(() => this._sync());
  }

  /**
   * Watch the wish again from scratch: after a resync of the scene (the bridge replaced it) or,
   * with `reconnected`, after a reconnect (a new bridge may know `watch` where the old did not).
   */
  rewatch({ reconnected = false } = {}) {
    if (reconnected) this.supported = true;
    return this._enqueue(async () => {
      const old = this.active;
      this.active = null;
      if (old && this.store.close(old.id)) this._onChange();
      this.dropped = null;
      await this._sync({ oldToUnwatch: old });
    });
  }

  /** The connection went down: the bridge forgot our watch; keep the wish for `rewatch`. */
  disconnected() {
    const old = this.active;
    this.active = null;
    if (old && this.store.close(old.id)) this._onChange();
  }

  /** Feed a bridge message that answered no request. Returns whether it was ours. */
  handle(msg) {
    if (msg?.type === "annotations") {
      if (!this.active || msg.watch !== this.active.id) return false;
      const result = this.store.apply(msg);
      if (result.changed) this._onChange();
      if (result.needsFull) this.rewatch();
      return true;
    }
    if (msg?.type === "unwatched" && this.active && msg.watch === this.active.id) {
      this.dropped = msg.reason ?? "dropped by the bridge";
      this.active = null;
      if (this.store.close(msg.watch)) this._onChange();
      return true;
    }
    return false;
  }

  /** The annotations the overlay may draw (the active watch's scene and action). */
  annotations() {
    if (!this.active) return [];
    return this.store.all(this.active.spec.scene, this.active.spec.action);
  }

  _enqueue(job) {
    this._chain = this._chain.then(job).catch((err) => {
      this.lastError = err;
    });
    return this._chain;
  }

  async _sync({ oldToUnwatch = null } = {}) {
    const want = this.wanted;
    const stale = oldToUnwatch ?? (this.active && !sameSpec(this.active.spec, want) ? this.active : null);
    if (stale) {
      if (stale === this.active) this.active = null;
      if (this.store.close(stale.id)) this._onChange();
      try {
        await this._request(unwatchMessage(this._nextId(), stale.id));
      } catch {
        /* the bridge may have dropped it already, or the line is down: nothing to undo */
      }
    }
    if (!want || !this.supported || (this.active && sameSpec(this.active.spec, want))) return;
    const id = this._nextId();
    this.store.open(id, want);
    this.active = { id, spec: want };
    try {
      const answer = await this._request(watchMessage(id, want));
      const watchId = answer?.watch ?? id;
      if (watchId !== id) {
        // The bridge named the watch itself: keep what arrived under the request id, if anything.
        const held = this.store.watches.get(id);
        this.store.watches.delete(id);
        if (held) this.store.watches.set(watchId, held);
        if (this.active?.id === id) this.active = { id: watchId, spec: want };
      }
    } catch (err) {
      if (this.active?.id === id) this.active = null;
      this.store.close(id);
      if (UNSUPPORTED.has(err?.code)) {
        this.supported = false;
        this._onUnsupported(err);
      }
      throw err;
    }
  }
}
