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
 * - How twodsix judges a throw (`TwodsixDiceRoll`): with its `difficultiesAsTargetNumber` setting off,
 *   the difficulty's `mod` is added to the roll and the Effect is the total minus the list's
 *   `Average.target`; with it on (most of its rule presets: CEL, AC, CD, MGT2E …) no DM is added and
 *   the Effect is the total minus the difficulty's own `target`. Either way a throw needs
 *   `Average.target − DM`.
 * - The dialog's `rollModifiers.selectedSkill` select (skill rolls only) offers the actor's skills
 *   as "Name (level)", keyed by the skill's uuid.
 *
 * Mapping (docs/foundry.md): the bridge's level (Easy … Impossible, every diff mod included) is
 * the DM twodsix's reference list (CE, the Traveller task ladder) gives it — Easy +4, Average 0,
 * Difficult −2, Formidable −6, Impossible −8. The dialog gets the entry of the list in use whose
 * throw needs the list's `Average.target` minus that DM: by its `mod` when DMs are added, by its
 * `target` when difficulties are target numbers; where the list has none, the nearest, the harder
 * one on a tie (never easier than the ruling). The device's `asset` (its Observation or Sensors
 * bonus) is added to "Other"; the ruling's `modifier` (diff mods) is not added again: it is in the
 * difficulty. A ruling that does not allow the task leaves the dialog alone and says so. Only the
 * throw of an observation skill (the world's list, `observationSkills`) is touched: a ruling says
 * how hard it is to spot the target, not how hard a Medic or Gun Combat throw is. Pure: the
 * dialog's element and the list are passed in.
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
 * Whether twodsix's difficulties are target numbers (its `difficultiesAsTargetNumber` setting) rather
 * than DMs added to the roll. False when the setting cannot be read (older twodsix: DMs).
 * @param {(key: string) => unknown} getSetting reads a twodsix setting
 */
export function difficultiesAsTargets(getSetting) {
  try {
    return getSetting("difficultiesAsTargetNumber") === true;
  } catch {
    return false;
  }
}

/**
 * The twodsix difficulty key for a bridge level: the entry of `difficulties` whose throw needs the
 * list's `Average.target` (8 without one) minus the level's DM — read from its `mod` when DMs are added
 * (`asTargets` false), from its `target` when difficulties are target numbers — else the nearest, the
 * harder on a tie. `keys` (the dialog's options) narrows the choice to what the select offers.
 * @param {string} level `easy` … `impossible`
 * @param {Record<string, {mod: number, target?: number}>} difficulties twodsix's list in use
 * @param {Iterable<string>} [keys]
 * @param {boolean} [asTargets] twodsix's `difficultiesAsTargetNumber`
 * @returns {{key: string, mod: number, target?: number, exact: boolean} | null}
 */
export function twodsixDifficulty(level, difficulties, keys, asTargets = false) {
  const dm = LEVEL_DMS[level];
  if (dm === undefined || !difficulties) return null;
  const base = Number.isFinite(difficulties.Average?.target) ? difficulties.Average.target : 8;
  // The value compared, and how much harder a larger one is: a DM is harder when lower, a target when higher.
  const want = asTargets ? base - dm : dm;
  const harder = asTargets ? 1 : -1;
  const allowed = keys ? new Set(keys) : null;
  let best = null;
  for (const [key, d] of Object.entries(difficulties)) {
    if (allowed && !allowed.has(key)) continue;
    const value = asTargets ? d?.target : d?.mod;
    if (typeof value !== "number" || !Number.isFinite(value) || typeof d.mod !== "number") continue;
    const off = Math.abs(value - want);
    if (!best || off < best.off || (off === best.off && harder * value > harder * best.value)) best = { key, value, off, d };
  }
  if (!best) return null;
  const found = { key: best.key, mod: best.d.mod, exact: best.off === 0 };
  return asTargets ? { ...found, target: best.d.target } : found;
}

/**
 * The names of the observation skills in the world's list (`observationSkills`: comma-separated),
 * lower-cased. @param {unknown} text
 */
export function observationSkillNames(text) {
  return String(text ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * The skill a throw dialog is rolling, by name ("Recon (2)" reads "Recon"), or null when it is not a
 * skill throw (a characteristic throw, the request-roll dialog).
 * @param {any} element the dialog's root element
 */
export function throwSkill(element) {
  const select = element?.querySelector?.('.roll-settings select[name="rollModifiers.selectedSkill"]');
  if (!select) return null;
  const options = [...(select.options ?? [])];
  const chosen = options.find((o) => o.value === select.value) ?? options[select.selectedIndex ?? -1];
  const text = String(chosen?.text ?? chosen?.textContent ?? "").trim();
  return text ? text.replace(/\s*\(-?\d+\)$/, "") : null;
}

/**
 * Whether a rendered dialog is twodsix's throw of an observation skill of `names`
 * (observationSkillNames).
 * @param {any} element
 * @param {string[]} names
 */
export function isObservationThrow(element, names) {
  if (!isThrowDialog(element)) return false;
  const skill = throwSkill(element);
  return Boolean(skill) && names.includes(skill.toLowerCase());
}

/**
 * What a ruling asks of the twodsix dialog.
 * @returns {null | {blocked: boolean, difficulty?: {key: string, mod: number, target?: number, exact: boolean} | null, dm?: number, device?: string}}
 *   null when the ruling is not a Traveller one
 */
export function twodsixAdjustments(ruling, difficulties, keys, asTargets = false) {
  if (!ruling || ruling.ruleset !== "traveller") return null;
  if (ruling.allowed === false) return { blocked: true };
  return {
    blocked: false,
    difficulty: ruling.difficulty ? twodsixDifficulty(ruling.difficulty, difficulties, keys, asTargets) : null,
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
 * Fill twodsix's rendered throw dialog of an observation skill (`skills`: observationSkillNames) from a
 * ruling: select the difficulty, add the asset to "Other", and put a line saying so at the top. Once
 * per rendered element; any other dialog, and the throw of any other skill, is left alone.
 * @param {{element: any, difficulties: Record<string, {mod: number, target: number}> | null, ruling: any,
 *          skills: string[], asTargets?: boolean,
 *          localize: (key: string, data?: Record<string, string>) => string}} opts
 * @returns {{difficulty?: string, dm?: number, blocked?: boolean} | null} what was done
 */
export function prefillThrowDialog({ element, difficulties, ruling, skills, asTargets = false, localize }) {
  if (!isObservationThrow(element, skills)) return null;
  const select = element.querySelector('.roll-settings select[name="difficulty"]');
  const keys = [...(select.options ?? [])].map((o) => o.value);
  const adj = twodsixAdjustments(ruling, difficulties, keys, asTargets);
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
      // What the throw needs, as the dialog names it: a target number ("10+") or the DM added.
      difficulty: adj.difficulty ? `${adj.difficulty.key} (${asTargets ? `${adj.difficulty.target}+` : dmText(adj.difficulty.mod)})` : "—",
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
