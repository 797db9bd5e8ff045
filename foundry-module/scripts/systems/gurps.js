/**
 * GURPS Game Aid: feed the ruling's modifier into the Modifier Bucket, which the Game Aid adds
 * to the next roll (`GURPS.ModifierBucket.addModifier(value, reason)`). No Foundry globals:
 * the GURPS object is passed in.
 */

import { formatModifier } from "../geometry.js";

export const SYSTEM_ID = "gurps";

/**
 * @param {any} GURPS the Game Aid's global
 * @param {any} ruling
 * @param {{reason?: string}} [opts]
 * @returns {boolean} whether a modifier went into the bucket
 */
export function applyToGurps(GURPS, ruling, { reason } = {}) {
  const bucket = GURPS?.ModifierBucket;
  if (!bucket || typeof bucket.addModifier !== "function") return false;
  if (!ruling || ruling.allowed === false) return false;
  const value = ruling.modifier;
  if (typeof value !== "number" || value === 0) return false;
  bucket.addModifier(value, reason ?? gurpsReason(ruling));
  return true;
}

/** The bucket line: "Sightline: darkness, smoke (−4)". */
export function gurpsReason(ruling) {
  const zones = [...new Set((ruling.crossings ?? []).map((c) => c.zone))];
  const what = zones.length ? zones.join(", ") : "visibility";
  return `Sightline: ${what} (${formatModifier(ruling.modifier)})`;
}
