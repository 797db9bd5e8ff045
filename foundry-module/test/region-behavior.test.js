/**
 * scripts/region-behavior.js: the `sightline-bridge.visibilityZone` Region Behavior type — what it
 * registers in CONFIG, the schema Foundry builds the behaviour sheet from, and the labels the GM
 * reads there (English and Spanish).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineVisibilityZoneType, registerZoneBehavior, zoneTypeChoices, zoneTypeRulesets } from "../scripts/region-behavior.js";
import { RULESETS, allZoneTypes } from "../scripts/vocabulary.js";
import { foundryDataStub, regionBehaviorConfigStub } from "./helpers/foundry-stubs.js";

const here = dirname(fileURLToPath(import.meta.url));
const LANGS = Object.fromEntries(["en", "es"].map((l) => [l, JSON.parse(readFileSync(resolve(here, `../lang/${l}.json`), "utf8"))]));
/** The text of a localisation key in one language, or undefined. */
const text = (lang, key) => key.split(".").reduce((o, k) => o?.[k], LANGS[lang]);
/** How a ruleset's family is named in the sheet's labels. */
const FAMILY = { "infinity-n4": "Infinity", "infinity-codeone": "Infinity", "gurps-4e": "GURPS", traveller: "Traveller" };

describe("registerZoneBehavior", () => {
  test("registers the data model, label key and icon under 'sightline-bridge.visibilityZone', leaving Foundry's own types alone", () => {
    const foundry = foundryDataStub();
    const CONFIG = regionBehaviorConfigStub();
    registerZoneBehavior(CONFIG, foundry);
    const type = "sightline-bridge.visibilityZone";
    assert.equal(Object.getPrototypeOf(CONFIG.RegionBehavior.dataModels[type]), foundry.data.regionBehaviors.RegionBehaviorType);
    assert.equal(CONFIG.RegionBehavior.typeLabels[type], "SIGHTLINE.Behavior.TypeLabel");
    assert.match(CONFIG.RegionBehavior.typeIcons[type], /^fa-solid fa-[a-z-]+$/);
    assert.deepEqual(Object.keys(CONFIG.RegionBehavior.dataModels).sort(), ["pauseGame", type]);
    assert.equal(CONFIG.RegionBehavior.typeIcons.pauseGame, "fa-solid fa-pause");
  });

  test("the type's label reads in English and Spanish", () => {
    assert.equal(text("en", "SIGHTLINE.Behavior.TypeLabel"), "Visibility Zone (Sightline)");
    assert.equal(text("es", "SIGHTLINE.Behavior.TypeLabel"), "Zona de visibilidad (Sightline)");
  });
});

describe("the behaviour's schema", () => {
  const Type = defineVisibilityZoneType(foundryDataStub());
  const schema = Type.defineSchema();

  test("handles no region events (the bridge reads the zone) and localises its fields under SIGHTLINE.Behavior", () => {
    assert.deepEqual(Type.events, {});
    assert.deepEqual(Type.LOCALIZATION_PREFIXES, ["SIGHTLINE.Behavior"]);
    assert.deepEqual(Object.keys(schema), ["zoneType", "penalty", "total", "density", "by"]);
  });

  test("zoneType is a required, non-blank choice of every zone type of the vocabulary, 'poor' at first", () => {
    const f = schema.zoneType;
    assert.equal(f.constructor.name, "StringField");
    assert.equal(f.required, true);
    assert.equal(f.blank, false);
    assert.equal(f.initial, "poor");
    assert.deepEqual(Object.keys(f.choices), allZoneTypes());
    for (const t of allZoneTypes()) assert.equal(f.choices[t], `SIGHTLINE.ZoneChoice.${t}`);
  });

  test("penalty is a GURPS darkness penalty (an integer from -9 to -1, blank for none); total a boolean, off", () => {
    assert.equal(schema.penalty.constructor.name, "NumberField");
    assert.deepEqual([schema.penalty.integer, schema.penalty.min, schema.penalty.max, schema.penalty.nullable, schema.penalty.initial], [true, -9, -1, true, null]);
    assert.equal(schema.total.constructor.name, "BooleanField");
    assert.equal(schema.total.initial, false);
  });

  test("a fresh behaviour is a complete Traveller zone: density 1 (an integer, at least 1) and a white spotlight", () => {
    assert.deepEqual([schema.density.integer, schema.density.min, schema.density.initial], [true, 1, 1]);
    const by = schema.by;
    assert.equal(by.initial, "white-spotlight");
    assert.equal(by.blank, true);
    const sources = RULESETS.traveller.zones.illuminated.params[0].choices;
    assert.deepEqual(Object.keys(by.choices), ["", ...sources]);
    assert.ok(Object.hasOwn(by.choices, by.initial), "the initial source is one of the choices");
    assert.equal(by.choices[""], "SIGHTLINE.Behavior.None");
    for (const s of sources) assert.equal(by.choices[s], `SIGHTLINE.Illumination.${s}`);
  });
});

describe("the sheet's labels, English and Spanish", () => {
  const schema = defineVisibilityZoneType(foundryDataStub()).defineSchema();

  test("every choice of the sheet (zone types, light sources, none) has a label in en and es", () => {
    const keys = [...Object.values(schema.zoneType.choices), ...Object.values(schema.by.choices)];
    for (const lang of ["en", "es"]) for (const key of keys) assert.ok(typeof text(lang, key) === "string" && text(lang, key).length > 0, `${lang}: missing ${key}`);
  });

  test("every field has a label and a hint in en and es under the LOCALIZATION_PREFIXES (SIGHTLINE.Behavior.FIELDS.<field>)", () => {
    for (const lang of ["en", "es"])
      for (const field of Object.keys(schema))
        for (const part of ["label", "hint"]) assert.ok(text(lang, `SIGHTLINE.Behavior.FIELDS.${field}.${part}`), `${lang}: missing SIGHTLINE.Behavior.FIELDS.${field}.${part}`);
  });

  test("each zone type's label names, in both languages, every ruleset family it belongs to (zoneTypeRulesets)", () => {
    const rulesets = zoneTypeRulesets();
    assert.deepEqual(Object.keys(rulesets), allZoneTypes());
    assert.deepEqual(rulesets.darkness, ["gurps-4e"]);
    assert.deepEqual(rulesets.smoke, ["infinity-n4", "infinity-codeone", "gurps-4e", "traveller"]);
    for (const [type, key] of Object.entries(zoneTypeChoices())) {
      for (const lang of ["en", "es"]) {
        const label = text(lang, key);
        for (const family of new Set(rulesets[type].map((r) => FAMILY[r]))) assert.ok(label.includes(family), `${lang} ${type}: «${label}» does not name ${family}`);
        for (const family of new Set(Object.values(FAMILY))) if (!rulesets[type].some((r) => FAMILY[r] === family)) assert.ok(!label.includes(family), `${lang} ${type}: «${label}» names ${family}, which has no such zone`);
      }
    }
  });
});
