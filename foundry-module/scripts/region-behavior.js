/**
 * The `sightline-bridge.visibilityZone` Region Behavior type: a region with this behaviour is a
 * visibility zone of the contract's vocabulary. The behaviour sheet Foundry builds from the schema
 * offers every zone type, labelled with the rulesets that know it, and the parameters those types
 * take (GURPS darkness penalty or total darkness, Traveller smoke density, the illumination
 * source). The behaviour handles no region events: the bridge, not Foundry, reads it.
 *
 * Declared in module.json (`documentTypes.RegionBehavior.visibilityZone`) and registered at init
 * in `CONFIG.RegionBehavior.dataModels` by `registerZoneBehavior`.
 */

import { ZONE_BEHAVIOR_TYPE } from "./const.js";
import { RULESETS, allZoneTypes, rulesetsForZone } from "./vocabulary.js";

/**
 * `{poor: "SIGHTLINE.ZoneChoice.poor"}` choices — localisation keys Foundry resolves in the sheet;
 * each label names the rulesets the type belongs to and the parameter it takes there.
 */
export function zoneTypeChoices() {
  return Object.fromEntries(allZoneTypes().map((t) => [t, `SIGHTLINE.ZoneChoice.${t}`]));
}

/** Which rulesets each zone type belongs to, for the sheet's hint. */
export function zoneTypeRulesets() {
  return Object.fromEntries(allZoneTypes().map((t) => [t, rulesetsForZone(t)]));
}

const ILLUMINATION = RULESETS.traveller.zones.illuminated.params[0].choices ?? [];

/**
 * Build the data model class. Called at init, when `foundry.data.regionBehaviors` exists.
 * @param {any} foundry the `foundry` global
 */
export function defineVisibilityZoneType(foundry) {
  const { fields } = foundry.data;
  const Base = foundry.data.regionBehaviors.RegionBehaviorType;
  return class VisibilityZoneBehaviorType extends Base {
    static LOCALIZATION_PREFIXES = ["SIGHTLINE.Behavior"];

    /** No region events: the zone is read by the bridge from the scene data. */
    static events = {};

    static defineSchema() {
      return {
        zoneType: new fields.StringField({ required: true, blank: false, choices: zoneTypeChoices(), initial: "poor" }),
        penalty: new fields.NumberField({ required: false, nullable: true, integer: true, min: -9, max: -1, initial: null }),
        total: new fields.BooleanField({ initial: false }),
        // Traveller requires these two; a fresh behaviour starts complete (density 1, a white spotlight).
        density: new fields.NumberField({ required: false, nullable: true, integer: true, min: 1, initial: 1 }),
        by: new fields.StringField({
          required: false,
          blank: true,
          initial: "white-spotlight",
          choices: { "": "SIGHTLINE.Behavior.None", ...Object.fromEntries(ILLUMINATION.map((b) => [b, `SIGHTLINE.Illumination.${b}`])) },
        }),
      };
    }
  };
}

/**
 * Register the type: data model, label and icon.
 * @param {any} CONFIG
 * @param {any} foundry
 */
export function registerZoneBehavior(CONFIG, foundry) {
  CONFIG.RegionBehavior.dataModels[ZONE_BEHAVIOR_TYPE] = defineVisibilityZoneType(foundry);
  CONFIG.RegionBehavior.typeLabels[ZONE_BEHAVIOR_TYPE] = "SIGHTLINE.Behavior.TypeLabel";
  CONFIG.RegionBehavior.typeIcons[ZONE_BEHAVIOR_TYPE] = "fa-solid fa-eye-low-vision";
}
