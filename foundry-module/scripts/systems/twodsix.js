/**
 * twodsix (Traveller family): the ruling of a Traveller scene goes into twodsix's own roll dialog.
 *
 * What twodsix offers (read from its source, xdy/twodsix-foundryvtt): every skill and item roll
 * can open `RollDialog` (an ApplicationV2, so Foundry calls the `renderRollDialog` hook), whose
 * form has a `difficulty` select keyed by twodsix's difficulty names (`Simple`, `Easy`, `Routine`,
 * `Average`, `Difficult`, `VeryDifficult`, `Formidable`, `Impossible` in the CE list; `Routine` …
 * `Formidable` in the CEL list, chosen by its `difficultyListUsed` setting) and an "Other"
 * modifier `rollModifiers.other` (a DM added to the 2D roll). On Roll it reads both from the form.
 * Its other route, "target DMs" (the `targetDMList` setting linking a status or trait of the
 * target actor to a DM), is per target, not per attacker-target pair, so it is not used.
 *
 * Mapping (docs/foundry.md): the ruling's `difficulty` (Easy … Impossible, already including
 * every diff mod) selects the twodsix difficulty of the same name — the nearest by twodsix's
 * own DM where the list lacks it (CEL has no Easy or Impossible) — and the device's `asset`
 * (its Observation or Sensors bonus) is added to "Other". The ruling's `modifier` (diff mods) is
 * not added again: it is in the difficulty. A ruling that does not allow the task leaves the
 * dialog alone and says so. Pure: the dialog's element is passed in.
 */

export const SYSTEM_ID = "twodsix";

/** The bridge's Traveller ladder → twodsix's key of the same name, and its DM in the CE list. */
export const LEVELS = Object.freeze({
  easy: { key: "Easy", mod: 4 },
  average: { key: "Average", mod: 0 },
  difficult: { key: "Difficult", mod: -2 },
  formidable: { key: "Formidable", mod: -6 },
  impossible: { key: "Impossible", mod: -8 },
});

/**
 * The twodsix difficulty key for a bridge level, in the list twodsix uses.
 * @param {string} level `easy` … `impossible`
 * @param {Record<string, {mod: number, target: number}>} [difficulties] twodsix's list (CE when absent)
 * @returns {{key: string, exact: boolean} | null}
 */
export function twodsixDifficulty(level, difficulties) {
  const want = LEVELS[level];
  if (!want) return null;
  if (!difficulties || Object.hasOwn(difficulties, want.key)) return { key: want.key, exact: true };
  let best = null;
  for (const [key, d] of Object.entries(difficulties)) {
    const off = Math.abs((d?.mod ?? 0) - want.mod);
    // Ties go to the harder level: never make the task easier than the ruling.
    if (!best || off < best.off || (off === best.off && (d?.mod ?? 0) < best.mod)) best = { key, off, mod: d?.mod ?? 0 };
  }
  return best ? { key: best.key, exact: false } : null;
}

/**
 * What a ruling asks of the twodsix dialog.
 * @returns {null | {blocked: boolean, difficulty?: {key: string, exact: boolean} | null, dm?: number, device?: string}}
 *   null when the ruling is not a Traveller one
 */
export function twodsixAdjustments(ruling, difficulties) {
  if (!ruling || ruling.ruleset !== "traveller") return null;
  if (ruling.allowed === false) return { blocked: true };
  return {
    blocked: false,
    difficulty: ruling.difficulty ? twodsixDifficulty(ruling.difficulty, difficulties) : null,
    dm: typeof ruling.asset === "number" ? ruling.asset : 0,
    device: ruling.device ?? "unaided-eyes",
  };
}

/**
 * Fill twodsix's rendered roll dialog from a ruling: select the difficulty, add the asset to
 * "Other", and put a line saying so at the top. Once per rendered element.
 * @param {{element: any, difficulties?: any, ruling: any, localize: (key: string, data?: object) => string}} opts
 * @returns {{difficulty?: string, dm?: number, blocked?: boolean} | null} what was done
 */
export function prefillRollDialog({ element, difficulties, ruling, localize }) {
  const adj = twodsixAdjustments(ruling, difficulties);
  if (!adj || !element?.querySelector) return null;
  if (element.dataset?.sightlinePrefilled) return null;
  if (element.dataset) element.dataset.sightlinePrefilled = "1";
  const note = (text) => {
    const p = element.ownerDocument?.createElement?.("p");
    if (!p) return;
    p.className = "sightline-twodsix-note";
    p.textContent = text;
    element.querySelector(".roll-settings")?.prepend?.(p);
  };
  if (adj.blocked) {
    note(localize("SIGHTLINE.Twodsix.NoLoS"));
    return { blocked: true };
  }
  const done = {};
  const select = element.querySelector('select[name="difficulty"]');
  if (adj.difficulty && select && [...(select.options ?? [])].some((o) => o.value === adj.difficulty.key)) {
    select.value = adj.difficulty.key;
    done.difficulty = adj.difficulty.key;
  }
  const other = element.querySelector('input[name="rollModifiers.other"]');
  if (adj.dm && other) {
    other.value = String((Number.parseInt(other.value, 10) || 0) + adj.dm);
    done.dm = adj.dm;
  }
  note(localize("SIGHTLINE.Twodsix.Prefilled", { difficulty: done.difficulty ?? "—", dm: adj.dm >= 0 ? `+${adj.dm}` : String(adj.dm), device: adj.device }));
  return done;
}
