/**
 * GURPS Game Aid (crnormand/gurps): the ruling's modifier goes into the Modifier Bucket, which the
 * Game Aid folds into the next roll. No Foundry globals: the GURPS object is passed in.
 *
 * What the Game Aid offers (read from its source, module/modifier-bucket/bucket-app.js):
 * - `GURPS.ModifierBucket.addModifier(mod, reason)` → `ModifierStack._add`: an entry whose `desc`
 *   equals `reason` already in `modifierStack.modifierList` gets `mod` ADDED to it (two targets
 *   in the same zone with one shared text would put −8 in the bucket, not −4).
 * - `modifierStack.modifierList` holds `{mod, modint, desc, plus, tagged}`;
 *   `modifierStack.removeIndex(i)` drops one, `ModifierBucket.refresh()` redraws the bucket.
 * - `_doRoll` calls `ModifierBucket.applyMods(...)`, which empties the bucket (AUTO_EMPTY) into the
 *   roll: whatever is in the bucket when the roll starts counts, nothing added afterwards does.
 *
 * So the module keeps at most ONE entry of its own, with a text naming the pair ("Sightline:
 * Fusilier → Raider: darkness (−4)"): setting a new one first removes the previous one, and a
 * dropped target's entry is removed (`GurpsBucketFeed`).
 *
 * Which rolls are judged (`gurpsRollAction`): the Game Aid's roll message (`_doRoll` renders
 * templates/die-roll-chat-message.hbs) shows the roll's on-the-fly text (`chatthing`) first —
 * `[@<actorId>@M:"Broadsword"]` for a melee attack, `R:` ranged, `A:` either, `P:` a parry,
 * `B:` a block, and the attributes `Dodge`, `Parry`, `Block` rolled by name (module/gurps.js builds
 * them; `attribute()` writes the text as given, lib/parselink.js maps DODGE, Parry/PARRY and BLOCK).
 * A ruling of another ruleset never goes into the bucket. Skills (`S:`), other attributes, damage
 * (DamageChat's own template) and everything else are not line-of-sight actions: no card.
 */

import { formatModifier } from "../geometry.js";

export const SYSTEM_ID = "gurps";

/** The Game Aid's Modifier Bucket, when it has the method the module calls. */
export function bucketOf(GURPS) {
  const bucket = GURPS?.ModifierBucket;
  return bucket && typeof bucket.addModifier === "function" ? bucket : null;
}

/**
 * The bucket line, unique per pair: "Sightline: Fusilier → Raider: darkness, smoke (−4)"; a defence's
 * names its pair as `names.who` gives it ("Fusilier, defence against Raider").
 * @param {any} ruling
 * @param {{actor?: string, target?: string, who?: string}} [names] token names (ids when absent)
 */
export function gurpsReason(ruling, names = {}) {
  const zones = [...new Set((ruling.crossings ?? []).map((c) => c.zone))];
  const what = zones.length ? zones.join(", ") : "visibility";
  const who = names.who ?? `${names.actor ?? ruling.actor ?? "?"} \u2192 ${names.target ?? ruling.target ?? "?"}`;
  return `Sightline: ${who}: ${what} (${formatModifier(ruling.modifier)})`;
}

/** Whether a ruling carries a modifier for the bucket: a GURPS one (another ruleset's number means nothing here). */
export function bucketValue(ruling) {
  if (!ruling || ruling.ruleset !== "gurps-4e" || ruling.allowed === false) return null;
  const value = ruling.modifier;
  return typeof value === "number" && Number.isInteger(value) && value !== 0 ? value : null;
}

/**
 * The module's one entry in the Modifier Bucket.
 */
export class GurpsBucketFeed {
  /** @param {() => any} getGURPS the Game Aid's global, read at each call */
  constructor(getGURPS) {
    this.getGURPS = getGURPS;
    /** @type {{key: string, reason: string, value: number} | null} what the module last put in */
    this.entry = null;
  }

  /** Index of our entry in the bucket's list, or −1 (a roll emptied it, or the user removed it). */
  _indexOf(bucket) {
    const list = bucket?.modifierStack?.modifierList;
    if (!this.entry || !Array.isArray(list)) return -1;
    return list.findIndex((m) => m?.desc === this.entry.reason && Number(m?.modint) === this.entry.value);
  }

  /** Whether our entry is still in the bucket (not yet used by a roll). */
  get pending() {
    return this._indexOf(bucketOf(this.getGURPS())) >= 0;
  }

  /**
   * Remove our entry, if it is still in the bucket. `key` limits it to one pair's entry.
   * @param {string} [key] `${actor}->${target}`
   * @returns {boolean} whether an entry was removed
   */
  clear(key) {
    if (!this.entry || (key && this.entry.key !== key)) return false;
    const bucket = bucketOf(this.getGURPS());
    const i = this._indexOf(bucket);
    this.entry = null;
    if (i < 0 || typeof bucket.modifierStack.removeIndex !== "function") return false;
    bucket.modifierStack.removeIndex(i);
    bucket.refresh?.();
    return true;
  }

  /**
   * Make the ruling's modifier our one entry: the previous one (any pair) is removed first, so
   * the bucket never holds two of ours, and a pair fed again is not counted twice.
   * @param {any} ruling
   * @param {{actor?: string, target?: string}} [names]
   * @returns {boolean} whether a modifier is now in the bucket
   */
  set(ruling, names) {
    const bucket = bucketOf(this.getGURPS());
    if (!bucket) return false;
    const key = `${ruling?.actor}->${ruling?.target}`;
    const value = bucketValue(ruling);
    const reason = value === null ? null : gurpsReason(ruling, names);
    if (this.entry && this.entry.key === key && this.entry.reason === reason && this.pending) return true;
    if (this.entry && this._indexOf(bucket) >= 0 && typeof bucket.modifierStack?.removeIndex !== "function") {
      // A Game Aid without removeIndex: never stack a second entry of ours on the first.
      return false;
    }
    this.clear();
    if (value === null) return false;
    bucket.addModifier(value, reason);
    this.entry = { key, reason, value };
    return true;
  }
}

/** The Game Aid's defences: a ruling of one is the defender's (its `actor`) against the attacker (its `target`). */
export const DEFENCES = Object.freeze(["dodge", "parry", "block"]);

const ACTION_OF = Object.freeze({ M: "attack", R: "attack", A: "attack", P: "parry", B: "block" });

/**
 * The line-of-sight action of a Game Aid roll message, or null when it is none (skill, attribute,
 * damage, anything not from the Game Aid's die roll template).
 * @param {{content?: string}} message
 * @returns {{action: "attack" | "parry" | "block" | "dodge", reaction: boolean} | null}
 */
export function gurpsRollAction(message) {
  const content = String(message?.content ?? "");
  if (!content.includes("roll-message")) return null;
  const m = content.match(/class=['"]roll-result['"]>\s*\[(?:@[^@\]]*@)?\s*([^\]<]*)/);
  if (!m) return null;
  const otf = m[1].trim();
  const prefix = otf.match(/^([MRAPB]):/);
  if (prefix) {
    const action = ACTION_OF[prefix[1]];
    return { action, reaction: action !== "attack" };
  }
  // The attributes rolled by name (`attribute()`: the on-the-fly text as written, lib/parselink.js's
  // DODGE, Parry/PARRY, BLOCK; the character sheet's Parry and Dodge buttons).
  const named = otf.match(/^(dodge|parry|block)\b/i);
  if (named) return { action: /** @type {"dodge" | "parry" | "block"} */ (named[1].toLowerCase()), reaction: true };
  return null;
}

/**
 * Feed a ruling into the bucket now (the generic feed, `systems/generic.js`).
 * @returns {boolean}
 */
export function applyToGurps(feed, ruling, names) {
  return feed ? feed.set(ruling, names) : false;
}
