/**
 * Every system: the chat card, the `sightline.adjudicated` hook, and the API's return value.
 * The system-specific feed (GURPS) runs in addition, when the system is known.
 */

import { HOOK_ADJUDICATED } from "../const.js";
import { SYSTEM_ID as GURPS_ID, applyToGurps } from "./gurps.js";

/**
 * Apply a ruling on this client: system feed where one exists. Returns which feed took it.
 * @param {{systemId: string, gurps?: import("./gurps.js").GurpsBucketFeed | null, ruling: any,
 *          names?: {actor?: string, target?: string}}} opts
 * @returns {"gurps" | null}
 */
export function feedModifier({ systemId, gurps, ruling, names }) {
  if (systemId === GURPS_ID && applyToGurps(gurps, ruling, names)) return "gurps";
  return null;
}

/** Tell other modules and macros: `Hooks.on("sightline.adjudicated", (ruling, context) => …)`. */
export function announce(hooks, ruling, context) {
  hooks.callAll(HOOK_ADJUDICATED, ruling, context);
}
