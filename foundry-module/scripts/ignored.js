/**
 * What the bridge holds but does not use in rulings, per scene, as `scene.synced` and `scene.patched`
 * list it (contract: "Nothing the GM placed is dropped in silence"; docs/protocol.md, "What the
 * bridge ignores"). Each entry names one thing — `{region|token|wall|light|environment: id, reason,
 * cause}` — with the reason already in the scene's locale. Pure: no Foundry globals.
 *
 * - `scene.synced` replaces a scene's set; `scene.patched` adds what the patch newly makes ignored,
 *   drops what it names `used` and what the patch removed (removals of ids the scene did not hold,
 *   `cause: "not-held"`, are no GM's concern and are not kept);
 * - `toTell` gives the entries for ONE GM notification when the set holds something not told
 *   before, else null — the same set, synced again (a reconnection, a scene update), is not told twice.
 */

/** The kinds an entry may name, in the order a person reads them. */
export const IGNORED_KINDS = Object.freeze(["region", "token", "wall", "light", "environment"]);

/** The kind an entry names (`region`, `token`, …), or null. */
export function kindOf(entry) {
  return IGNORED_KINDS.find((kind) => typeof entry?.[kind] === "string") ?? null;
}

/** `region:r-dark` — one key per thing. */
export function keyOf(entry) {
  const kind = kindOf(entry);
  return kind ? `${kind}:${entry[kind]}` : null;
}

/** A list of an answer (`ignored`, `used`) as read: anything but an array counts as empty. */
const listOf = (value) => (Array.isArray(value) ? value : []);

/** Contract collection (`regions`) → entry kind (`region`). */
const KIND_OF_COLLECTION = Object.freeze({ regions: "region", tokens: "token", walls: "wall", lights: "light" });

export class IgnoredRegistry {
  constructor() {
    /** @type {Map<string, Map<string, any>>} scene id → key → entry */
    this.scenes = new Map();
    /** @type {Map<string, Set<string>>} scene id → the keys last told to the GM */
    this._told = new Map();
  }

  /** A `scene.synced` answer: the scene's whole set. */
  synced(sceneId, answer) {
    const held = new Map();
    for (const entry of listOf(answer?.ignored)) {
      const key = keyOf(entry);
      if (key && entry.cause !== "not-held") held.set(key, entry);
    }
    this.scenes.set(sceneId, held);
  }

  /**
   * A `scene.patched` answer to a patch that removed `removed` (`{regions: [id], …}`, as sent).
   * @param {string} sceneId @param {any} answer @param {Record<string, string[]>} [removed]
   */
  patched(sceneId, answer, removed = {}) {
    const held = this.scenes.get(sceneId) ?? new Map();
    for (const [collection, ids] of Object.entries(removed ?? {})) {
      const kind = KIND_OF_COLLECTION[collection];
      if (kind) for (const id of listOf(ids)) held.delete(`${kind}:${id}`);
    }
    for (const ref of listOf(answer?.used)) held.delete(keyOf(ref));
    for (const entry of listOf(answer?.ignored)) {
      const key = keyOf(entry);
      if (key && entry.cause !== "not-held") held.set(key, entry);
    }
    this.scenes.set(sceneId, held);
  }

  /** The entry of one region of a scene, or null (the bridge uses it, or nothing is known). */
  region(sceneId, regionId) {
    return this.scenes.get(sceneId)?.get(`region:${regionId}`) ?? null;
  }

  /** Every entry of a scene, in the bridge's order. */
  entries(sceneId) {
    return [...(this.scenes.get(sceneId)?.values() ?? [])];
  }

  /**
   * The entries to tell the GM about now, or null: only when the set holds a thing not in the set
   * last told (so one notification per sync that brings news, none for the same set again).
   */
  toTell(sceneId) {
    const held = this.scenes.get(sceneId);
    const keys = new Set(held?.keys() ?? []);
    const told = this._told.get(sceneId) ?? new Set();
    this._told.set(sceneId, keys);
    if (![...keys].some((key) => !told.has(key))) return null;
    return [...held.values()];
  }
}

/**
 * The one notification's text: how many things the bridge does not use in the scene, and the first
 * `shown` reasons (each names its region or token as the GM does; the rest counted).
 * @param {any[]} entries
 * @param {{scene: string, format: (key: string, data?: Record<string, unknown>) => string, shown?: number}} opts
 */
export function ignoredNotice(entries, { scene, format, shown = 3 }) {
  const head = entries.length === 1 ? format("SIGHTLINE.Ignored.One", { scene }) : format("SIGHTLINE.Ignored.Many", { scene, count: entries.length });
  const reasons = entries.slice(0, shown).map((entry) => entry.reason);
  if (entries.length > shown) reasons.push(format("SIGHTLINE.Ignored.More", { count: entries.length - shown }));
  return `${head} ${reasons.join(" ")}`;
}
