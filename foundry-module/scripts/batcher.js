/**
 * Debounced batching of `scene.patch` changes. Document hooks fire once per change — many per
 * second while a token is dragged or a wall is drawn — so changes wait `delayMs` after the last
 * one (and never longer than `maxWaitMs` after the first) and leave as one patch per scene.
 *
 * House rules:
 * 1. Changes coalesce per (scene, kind, id): the last upsert of an object replaces earlier ones.
 * 2. Deletes win: once an id is removed in a batch, later upserts of it in the same batch are
 *    dropped (Foundry never revives a deleted document under a live id within one drag).
 * 3. Only document changes feed it (create/update/delete hooks), never `refreshToken`'s per-frame
 *    animation; the hook wiring (adapters/sync.js) is where that is kept.
 *
 * Pure: timers are injected.
 */

/**
 * @typedef {{upsert: Record<string, object[]>, remove: Record<string, string[]>}} PatchChanges
 */

export class PatchBatcher {
  /**
   * @param {{flush: (scene: string, changes: PatchChanges) => void, delayMs?: number, maxWaitMs?: number,
   *          setTimeout?: typeof globalThis.setTimeout, clearTimeout?: typeof globalThis.clearTimeout,
   *          now?: () => number}} opts
   */
  constructor({
    flush,
    delayMs = 150,
    maxWaitMs = 1000,
    setTimeout = globalThis.setTimeout,
    clearTimeout = globalThis.clearTimeout,
    now = () => Date.now(),
  }) {
    this._flush = flush;
    this.delayMs = delayMs;
    this.maxWaitMs = maxWaitMs;
    this._setTimeout = (fn, ms) => setTimeout(fn, ms); // unbound: browsers throw "Illegal invocation" otherwise
    this._clearTimeout = (timer) => clearTimeout(timer);
    /** @type {Map<string, Map<string, Map<string, {op: "upsert", obj?: any, make?: () => any} | {op: "remove"}>>>} scene → kind → id → change */
    this._scenes = new Map();
    this._timer = null;
    this._firstAt = null;
    this._now = now;
  }

  /** Queue the new state of an object. */
  upsert(scene, kind, obj) {
    const byId = this._byId(scene, kind);
    if (byId.get(obj.id)?.op === "remove") return;
    byId.set(obj.id, { op: "upsert", obj });
    this._schedule();
  }

  /**
   * Queue an object whose state is read when the batch leaves (`make()` then; null = removed):
   * for objects Foundry derives from another change, e.g. a V14 region attached to a moving token.
   * An upsert of the same object replaces it, like any later change.
   */
  upsertLater(scene, kind, id, make) {
    const byId = this._byId(scene, kind);
    if (byId.get(id)?.op === "remove") return;
    byId.set(id, { op: "upsert", make });
    this._schedule();
  }

  /** Queue the removal of an object. */
  remove(scene, kind, id) {
    this._byId(scene, kind).set(id, { op: "remove" });
    this._schedule();
  }

  /** Forget what is queued for a scene (or every scene): a full sync is about to replace it. */
  discard(scene) {
    if (scene === undefined) this._scenes.clear();
    else this._scenes.delete(scene);
    if (!this._scenes.size) this._cancel();
  }

  /** Whether anything waits to be sent. */
  get pending() {
    return this._scenes.size > 0;
  }

  /** Send everything queued now, one patch per scene. */
  flushNow() {
    this._cancel();
    const scenes = this._scenes;
    this._scenes = new Map();
    for (const [scene, kinds] of scenes) {
      /** @type {PatchChanges} */
      const changes = { upsert: {}, remove: {} };
      for (const [kind, byId] of kinds) {
        for (const [id, change] of byId) {
          const obj = change.op === "upsert" ? (change.obj ?? change.make?.() ?? null) : null;
          if (obj) (changes.upsert[kind] ??= []).push(obj);
          else (changes.remove[kind] ??= []).push(id);
        }
      }
      if (Object.keys(changes.upsert).length || Object.keys(changes.remove).length) this._flush(scene, changes);
    }
  }

  _byId(scene, kind) {
    let kinds = this._scenes.get(scene);
    if (!kinds) this._scenes.set(scene, (kinds = new Map()));
    let byId = kinds.get(kind);
    if (!byId) kinds.set(kind, (byId = new Map()));
    return byId;
  }

  _schedule() {
    const now = this._now();
    if (this._firstAt === null) this._firstAt = now;
    if (this._timer !== null) this._clearTimeout(this._timer);
    const wait = Math.max(0, Math.min(this.delayMs, this._firstAt + this.maxWaitMs - now));
    this._timer = this._setTimeout(() => this.flushNow(), wait);
  }

  _cancel() {
    if (this._timer !== null) this._clearTimeout(this._timer);
    this._timer = null;
    this._firstAt = null;
  }
}
