/**
 * The contract's fixed vocabulary (protocol-v1.md, "Vocabulary") as data: per ruleset, its zone
 * types with the parameters each takes, its token traits and its actions. The region behaviour
 * sheet, the trait editor and the default attack action all read this table. Pure.
 */

/**
 * @typedef {{name: string, kind: string, min?: number, max?: number,
 *            choices?: readonly string[], required?: boolean}} ZoneParam
 * @typedef {{params: readonly ZoneParam[], blank?: Readonly<Record<string, unknown>>}} ZoneSpec
 *   `required`: the bridge does not use the zone without it (and says so); `blank`: what a zone
 *   given none of its parameters stands for (GURPS darkness left blank: total darkness)
 * @typedef {{zones: Readonly<Record<string, ZoneSpec>>, traits: readonly string[],
 *            actions: readonly string[], attack: string}} RulesetSpec
 */

const NONE = Object.freeze([]);

const INFINITY_ZONES = Object.freeze({
  low: { params: NONE },
  poor: { params: NONE },
  zero: { params: NONE },
  "white-noise": { params: NONE },
  smoke: { params: NONE },
  eclipse: { params: NONE },
});
const INFINITY_TRAITS = Object.freeze([
  "multispectral-visor-1",
  "multispectral-visor-2",
  "multispectral-visor-3",
  "marksmanship",
  "sixth-sense",
]);
const INFINITY_ACTIONS = Object.freeze([
  "bs-attack",
  "dodge",
  "speculative-attack",
  "discover",
  "hacking",
  "combat-jump",
]);

/** @type {Readonly<Record<string, RulesetSpec>>} */
export const RULESETS = Object.freeze({
  "infinity-n4": { zones: INFINITY_ZONES, traits: INFINITY_TRAITS, actions: INFINITY_ACTIONS, attack: "bs-attack" },
  "infinity-codeone": { zones: INFINITY_ZONES, traits: INFINITY_TRAITS, actions: INFINITY_ACTIONS, attack: "bs-attack" },
  "gurps-4e": {
    zones: Object.freeze({
      darkness: {
        params: Object.freeze([
          { name: "penalty", kind: "integer", min: -9, max: -1 },
          { name: "total", kind: "boolean" },
        ]),
        blank: Object.freeze({ total: true }),
      },
      smoke: { params: NONE },
      "unnatural-darkness": { params: NONE },
    }),
    traits: Object.freeze([
      "blind",
      "accustomed-to-blindness",
      "invisible",
      "night-vision-N",
      "dark-vision",
      "infravision",
    ]),
    actions: Object.freeze(["attack", "dodge", "parry", "block"]),
    attack: "attack",
  },
  traveller: {
    zones: Object.freeze({
      smoke: { params: Object.freeze([{ name: "density", kind: "integer", min: 1, required: true }]) },
      woods: { params: NONE },
      illuminated: {
        params: Object.freeze([
          { name: "by", kind: "choice", choices: Object.freeze(["ir-spotlight", "white-spotlight", "illumination-round"]), required: true },
        ]),
      },
    }),
    traits: Object.freeze([
      "binoculars",
      "image-intensifier",
      "color-enhancement",
      "la-goggles",
      "ir-goggles",
      "thermal-viewer",
      "wide-spectrum-visual",
      "radar",
      "ladar",
    ]),
    actions: Object.freeze(["observation", "sensors"]),
    attack: "observation",
  },
});

export const DEFAULT_RULESET = "infinity-n4";

/** Every zone type any ruleset knows, in table order, without repeats. */
export function allZoneTypes() {
  const seen = new Set();
  for (const spec of Object.values(RULESETS)) for (const type of Object.keys(spec.zones)) seen.add(type);
  return [...seen];
}

/** The rulesets whose vocabulary names this zone type. */
export function rulesetsForZone(type) {
  return Object.entries(RULESETS)
    .filter(([, spec]) => Object.hasOwn(spec.zones, type))
    .map(([id]) => id);
}

/**
 * A ruleset's vocabulary by its id, or undefined: the table's own entries only, so that an id such as
 * `toString` or `constructor` (a scene's setting, a world's data) is unknown, never an Object method.
 * @param {unknown} id
 * @returns {RulesetSpec | undefined}
 */
export function rulesetSpec(id) {
  return typeof id === "string" && Object.hasOwn(RULESETS, id) ? RULESETS[id] : undefined;
}

/**
 * What a zone type takes under a ruleset, or undefined (own entries only, as {@link rulesetSpec}).
 * @param {unknown} ruleset
 * @param {unknown} type
 * @returns {ZoneSpec | undefined}
 */
export function zoneSpec(ruleset, type) {
  const spec = rulesetSpec(ruleset);
  return spec && typeof type === "string" && Object.hasOwn(spec.zones, type) ? spec.zones[type] : undefined;
}

/** The action an attack roll stands for under this ruleset (`bs-attack`, `attack`, …). */
export function attackActionFor(ruleset) {
  return (rulesetSpec(ruleset) ?? RULESETS[DEFAULT_RULESET]).attack;
}

/** The traits a ruleset knows, with `night-vision-N` standing for night-vision-1 … -9. */
export function traitsFor(ruleset) {
  return (rulesetSpec(ruleset) ?? RULESETS[DEFAULT_RULESET]).traits;
}

/** Whether a trait string belongs to the contract's vocabulary (any ruleset). */
export function isKnownTrait(trait) {
  if (/^night-vision-[1-9]$/.test(trait)) return true;
  return Object.values(RULESETS).some((spec) => spec.traits.includes(trait) && !trait.endsWith("-N"));
}

/** The environment keys each ruleset reads (contract "Vocabulary"), with their allowed values. */
export const ENVIRONMENT_KEYS = Object.freeze({
  "gurps-4e": Object.freeze({ darkness: Object.freeze({ kind: "integer", min: -10, max: 0 }) }),
  traveller: Object.freeze({
    light: Object.freeze({ kind: "choice", choices: Object.freeze(["day", 1, 2, 3]) }),
    weather: Object.freeze({ kind: "choice", choices: Object.freeze(["good", "poor", "very-poor"]) }),
  }),
});

/** The rulesets' editions as the bridge lists them in `welcome` (contract: Infinity N4 has older texts). */
export const EDITIONS = Object.freeze({
  "infinity-n4": Object.freeze(["current", "2.1", "1.3", "1.2", "original"]),
  "infinity-codeone": Object.freeze(["current"]),
  "gurps-4e": Object.freeze(["current"]),
  traveller: Object.freeze(["current"]),
});
