/**
 * twodsix (Traveller family): the ruling of a Traveller scene goes into twodsix's throw dialog.
 *
 * What twodsix offers (read from its source, xdy/twodsix-foundryvtt):
 * - `TwodsixRollSettings._throwDialog` renders `templates/chat/throw-dialog.hbs` and opens it with
 *   `foundry.applications.api.DialogV2.wait(...)`, so the hook Foundry calls is `renderDialogV2`
 *   (ApplicationV2 calls `render<Class>` for the class and each parent; there is no twodsix
 *   dialog class). Every DialogV2 of every module fires it, so the throw dialog is recognised by
 *   its form: a `difficulty` select and a `rollModifiers.other` number input inside
 *   `.roll-settings` (the GM's request-roll dialog has `other`, the initiative dialog
 *   `diceModifier`: neither is touched).
 * - The `difficulty` select lists the keys of the difficulty list in use,
 *   `CONFIG.TWODSIX.DIFFICULTIES[game.settings.get("twodsix", "difficultyListUsed")]` — six lists
 *   (`CE`, `CEL`, `AC`, `CU`, `Nomad`, `CD`), each `{key: {mod, target}}`. The same name carries
 *   different DMs in different lists (AC's `Average` is DM −2, Nomad's `Formidable` DM −2), so a
 *   difficulty is picked by its DM, never by its name. On Roll, twodsix reads the select's key and
 *   `rollModifiers.other` (a DM added to the 2D roll) from the form.
 * - Its "target DMs" (the `targetDMList` setting linking a status or trait of the target actor to a
 *   DM) are per target, not per attacker-target pair, so they are not used.
 *
 * Mapping (docs/foundry.md): the bridge's level (Easy … Impossible, every diff mod included) is
 * the DM twodsix's reference list (CE, the Traveller task ladder) gives it — Easy +4, Average 0,
 * Difficult −2, Formidable −6, Impossible −8 — and the dialog gets the entry of the list in use
 * with that DM; where the list has none, the nearest DM, the harder one on a tie (never easier than
 * the ruling). The device's `asset` (its Observation or Sensors bonus) is added to "Other"; the
 * ruling's `modifier` (diff mods) is not added again: it is in the difficulty. A ruling that does
 * not allow the task leaves the dialog alone and says so. Pure: the dialog's element and the list
 * are passed in.
 */

export const SYSTEM_ID = "twodsix";

/** The bridge's Traveller ladder → the DM of that level on the Traveller task ladder (twodsix's CE list). */
export const LEVEL_DMS = Object.freeze({ easy: 4, average: 0, difficult: -2, formidable: -6, impossible: -8 });

/**
 * The difficulty list twodsix uses: `CONFIG.TWODSIX.DIFFICULTIES[difficultyListUsed]`.
 * @param {any} config Foundry's CONFIG
 * @param {(key: string) => unknown} getSetting reads a twodsix setting
 * @returns {Record<string, {mod: number, target: number}> | null}
 */
export function difficultiesInUse(config, getSetting) {
  const lists = config?.TWODSIX?.DIFFICULTIES;
  if (!lists) return null;
  let which;
  try {
    which = getSetting("difficultyListUsed");
  } catch {
    which = undefined;
  }
  const list = lists[typeof which === "string" ? which : "CE"];
  return list && typeof list === "object" ? list : null;
}

/**
 * The twodsix difficulty key for a bridge level: the entry of `difficulties` whose DM is the
 * level's, else the nearest DM, the harder on a tie. `keys` (the dialog's options) narrows the
 * choice to what the select offers.
 * @param {string} level `easy` … `impossible`
 * @param {Record<string, {mod: number}>} difficulties twodsix's list in use
 * @param {Iterable<string>} [keys]
 * @returns {{key: string, mod: number, exact: boolean} | null}
 */
export function twodsixDifficulty(level, difficulties, keys) {
  const want = LEVEL_DMS[level];
  if (want === undefined || !difficulties) return null;
  const allowed = keys ? new Set(keys) : null;
  let best = null;
  for (const [key, d] of Object.entries(difficulties)) {
    if (allowed && !allowed.has(key)) continue;
    const mod = d?.mod;
    if (typeof mod !== "number" || !Number.isFinite(mod)) continue;
    const off = Math.abs(mod - want);
    if (!best || off < best.off || (off === best.off && mod < best.mod)) best = { key, mod, off };
  }
  return best ? { key: best.key, mod: best.mod, exact: best.off === 0 } : null;
}

/**
 * What a ruling asks of the twodsix dialog.
 * @returns {null | {blocked: boolean, difficulty?: {key: string, mod: number, exact: boolean} | null, dm?: number, device?: string}}
 *   null when the ruling is not a Traveller one
 */
export function twodsixAdjustments(ruling, difficulties, keys) {
  if (!ruling || ruling.ruleset !== "traveller") return null;
  if (ruling.allowed === false) return { blocked: true };
  return {
    blocked: false,
    difficulty: ruling.difficulty ? twodsixDifficulty(ruling.difficulty, difficulties, keys) : null,
    dm: typeof ruling.asset === "number" ? ruling.asset : 0,
    device: ruling.device ?? "unaided-eyes",
  };
}

/**
 * Whether a rendered DialogV2 element is twodsix's throw dialog (throw-dialog.hbs).
 * @param {any} element
 */
export function isThrowDialog(element) {
  if (!element?.querySelector) return false;
  return Boolean(element.querySelector('.roll-settings select[name="difficulty"]') && element.querySelector('.roll-settings input[name="rollModifiers.other"]'));
}

/**
 * Fill twodsix's rendered throw dialog from a ruling: select the difficulty, add the asset to
 * "Other", and put a line saying so at the top. Once per rendered element.
 * @param {{element: any, difficulties: Record<string, {mod: number, target: number}> | null, ruling: any,
 *          localize: (key: string, data?: Record<string, string>) => string}} opts
 * @returns {{difficulty?: string, dm?: number, blocked?: boolean} | null} what was done
 */
export function prefillThrowDialog({ element, difficulties, ruling, localize }) {
  if (!isThrowDialog(element)) return null;
  const select = element.querySelector('.roll-settings select[name="difficulty"]');
  const keys = [...(select.options ?? [])].map((o) => o.value);
  const adj = twodsixAdjustments(ruling, difficulties, keys);
  if (!adj) return null;
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
  /** @type {{difficulty?: string, dm?: number}} */
  const done = {};
  if (adj.difficulty) {
    select.value = adj.difficulty.key;
    done.difficulty = adj.difficulty.key;
  }
  const other = element.querySelector('.roll-settings input[name="rollModifiers.other"]');
  if (adj.dm) {
    other.value = String((Number.parseInt(other.value, 10) || 0) + adj.dm);
    done.dm = adj.dm;
  }
  const dmText = (n) => (n >= 0 ? `+${n}` : `\u2212${Math.abs(n)}`);
  note(
    localize("SIGHTLINE.Twodsix.Prefilled", {
      difficulty: adj.difficulty ? `${adj.difficulty.key} (${dmText(adj.difficulty.mod)})` : "—",
      dm: dmText(adj.dm),
      device: deviceLabel(localize, adj.device),
    }),
  );
  return done;
}

/** A vision device by its label (`SIGHTLINE.Trait.<id>`), its id only when it has none. */
function deviceLabel(localize, device) {
  if (!device) return "—";
  const key = `SIGHTLINE.Trait.${device}`;
  const text = localize(key);
  return text && text !== key ? text : device;
}
