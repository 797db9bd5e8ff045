/**
 * The contract's vocabulary as the module holds it (scripts/vocabulary.js): the lookups the region
 * behaviour sheet, the trait editor and the attack action read, and a label in English and Spanish
 * for every word of the table that people see.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  DEFAULT_RULESET, EDITIONS, ENVIRONMENT_KEYS, RULESETS, allZoneTypes, attackActionFor, isKnownTrait, rulesetSpec, rulesetsForZone,
  traitsFor, zoneSpec,
} from "../scripts/vocabulary.js";

const lang = (code) => JSON.parse(readFileSync(new URL(`../lang/${code}.json`, import.meta.url), "utf8")).SIGHTLINE;
const RULESET_IDS = ["infinity-n4", "infinity-codeone", "gurps-4e", "traveller"];

describe("zone types", () => {
  test("allZoneTypes lists every ruleset's zones once each, in table order (smoke, shared by three rulesets, once)", () => {
    assert.deepEqual(allZoneTypes(), ["low", "poor", "zero", "white-noise", "smoke", "eclipse", "darkness", "unnatural-darkness", "woods", "illuminated"]);
  });

  test("rulesetsForZone names exactly the rulesets whose table has the zone; an unknown type or an Object property name has none", () => {
    assert.deepEqual(rulesetsForZone("smoke"), RULESET_IDS);
    assert.deepEqual(rulesetsForZone("poor"), ["infinity-n4", "infinity-codeone"]);
    assert.deepEqual(rulesetsForZone("darkness"), ["gurps-4e"]);
    assert.deepEqual(rulesetsForZone("illuminated"), ["traveller"]);
    for (const type of ["fog", "", "toString", "constructor", "__proto__", "hasOwnProperty"]) assert.deepEqual(rulesetsForZone(type), [], type);
  });

  test("every zone type is known to some ruleset by rulesetsForZone, so the sheet never offers a zone no ruleset reads", () => {
    for (const type of allZoneTypes()) assert.ok(rulesetsForZone(type).length > 0, type);
  });

  test("the parameters a zone takes are the contract's: GURPS darkness blank means total, Traveller smoke and illumination are required", () => {
    const darkness = RULESETS["gurps-4e"].zones.darkness;
    assert.deepEqual(darkness.params.map((p) => [p.name, p.kind, p.min, p.max]), [["penalty", "integer", -9, -1], ["total", "boolean", undefined, undefined]]);
    assert.deepEqual(darkness.blank, { total: true });
    const t = RULESETS.traveller.zones;
    assert.deepEqual(t.smoke.params, [{ name: "density", kind: "integer", min: 1, required: true }]);
    assert.deepEqual(t.illuminated.params[0].choices, ["ir-spotlight", "white-spotlight", "illumination-round"]);
    assert.equal(t.illuminated.params[0].required, true);
    assert.equal(RULESETS["infinity-n4"].zones.smoke.params.length, 0, "Infinity smoke takes no parameter");
  });
});

describe("actions and traits per ruleset", () => {
  test("attackActionFor is each ruleset's attack roll, and the default ruleset's (bs-attack) for an unknown or missing one", () => {
    assert.deepEqual(RULESET_IDS.map(attackActionFor), ["bs-attack", "bs-attack", "attack", "observation"]);
    assert.equal(DEFAULT_RULESET, "infinity-n4");
    for (const ruleset of ["dnd5e", "", undefined, null, "toString", "constructor", "__proto__"]) {
      assert.equal(attackActionFor(ruleset), "bs-attack", String(ruleset));
      assert.equal(traitsFor(ruleset), RULESETS[DEFAULT_RULESET].traits, String(ruleset));
    }
  });

  test("rulesetSpec and zoneSpec read the table's own entries only: an Object property name is no ruleset and no zone", () => {
    assert.equal(rulesetSpec("gurps-4e"), RULESETS["gurps-4e"]);
    assert.equal(zoneSpec("traveller", "smoke"), RULESETS.traveller.zones.smoke);
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      assert.equal(rulesetSpec(name), undefined, name);
      assert.equal(zoneSpec(name, "low"), undefined, name);
      assert.equal(zoneSpec("infinity-n4", name), undefined, name);
    }
    assert.equal(zoneSpec("infinity-n4", "darkness"), undefined, "GURPS's zone is not Infinity's");
    assert.equal(rulesetSpec(undefined), undefined);
  });

  test("each ruleset's attack action is one of its own actions", () => {
    for (const [id, spec] of Object.entries(RULESETS)) assert.ok(spec.actions.includes(spec.attack), id);
  });

  test("traitsFor gives a ruleset's own traits (night-vision-N only under GURPS) and Infinity's for an unknown ruleset", () => {
    assert.ok(traitsFor("gurps-4e").includes("night-vision-N"));
    assert.ok(traitsFor("traveller").includes("radar"));
    assert.ok(!traitsFor("traveller").includes("marksmanship"));
    assert.equal(RULESET_IDS.filter((r) => traitsFor(r).includes("night-vision-N")).join(), "gurps-4e");
    assert.deepEqual(traitsFor("infinity-codeone"), traitsFor("infinity-n4"));
    assert.deepEqual(traitsFor("no-such-ruleset"), RULESETS["infinity-n4"].traits);
    assert.deepEqual(traitsFor(undefined), RULESETS["infinity-n4"].traits);
  });

  test("isKnownTrait: every listed trait of any ruleset, night-vision-1 to -9; not the night-vision-N placeholder, level 0 or 10, or invented strings", () => {
    for (const spec of Object.values(RULESETS)) for (const t of spec.traits.filter((x) => !x.endsWith("-N"))) assert.ok(isKnownTrait(t), t);
    for (let n = 1; n <= 9; n += 1) assert.ok(isKnownTrait(`night-vision-${n}`), `night-vision-${n}`);
    for (const t of ["night-vision-N", "night-vision-0", "night-vision-10", "night-vision-", "xnight-vision-3", "night-vision-3x", "multispectral-visor-4", "Radar", "radar ", "", "custom-x"]) {
      assert.equal(isKnownTrait(t), false, JSON.stringify(t));
    }
  });

  test("the tables cannot be changed at run time (frozen), so one caller cannot alter another's vocabulary", () => {
    for (const value of [RULESETS, RULESETS["gurps-4e"].zones, RULESETS.traveller.traits, RULESETS["gurps-4e"].actions, ENVIRONMENT_KEYS.traveller.light.choices, EDITIONS["infinity-n4"]]) {
      assert.ok(Object.isFrozen(value));
    }
    assert.throws(() => /** @type {any} */ (RULESETS.traveller.traits).push("x-ray"), TypeError);
  });
});

describe("environment keys and editions", () => {
  test("environment keys and editions name only rulesets of the table, and every ruleset has a current edition", () => {
    assert.deepEqual(Object.keys(EDITIONS), Object.keys(RULESETS));
    for (const [id, editions] of Object.entries(EDITIONS)) assert.equal(editions[0], "current", id);
    assert.deepEqual(EDITIONS["infinity-n4"], ["current", "2.1", "1.3", "1.2", "original"]);
    for (const id of Object.keys(ENVIRONMENT_KEYS)) assert.ok(id in RULESETS, id);
    assert.deepEqual(ENVIRONMENT_KEYS["gurps-4e"].darkness, { kind: "integer", min: -10, max: 0 });
    assert.deepEqual(ENVIRONMENT_KEYS.traveller.light.choices, ["day", 1, 2, 3]);
    assert.deepEqual(ENVIRONMENT_KEYS.traveller.weather.choices, ["good", "poor", "very-poor"]);
  });
});

describe("labels in English and Spanish", () => {
  for (const code of ["en", "es"]) {
    test(`${code}: every ruleset, zone type, trait and action of the table has a label, and no label is its id`, () => {
      const L = lang(code);
      const check = (group, id) => {
        const label = L[group]?.[id];
        assert.ok(typeof label === "string" && label.trim(), `${code} SIGHTLINE.${group}.${id} missing`);
        assert.notEqual(label, id, `${code} SIGHTLINE.${group}.${id} is the id`);
      };
      for (const id of Object.keys(RULESETS)) check("Ruleset", id);
      for (const type of allZoneTypes()) {
        check("Zone", type);
        check("ZoneChoice", type);
      }
      for (const spec of Object.values(RULESETS)) {
        for (const t of spec.traits) check("Trait", t);
        for (const a of spec.actions) check("Action", a);
      }
    });
  }

  test("the Spanish zone and trait labels are translations, the same as English only for words both languages share", () => {
    const en = lang("en");
    const es = lang("es");
    const same = (group, ids) => ids.filter((id) => es[group][id] === en[group][id]);
    assert.deepEqual(same("Zone", allZoneTypes()), ["eclipse"]);
    assert.deepEqual(same("Trait", [...new Set(Object.values(RULESETS).flatMap((s) => s.traits))]), ["invisible", "radar", "ladar"]);
    assert.deepEqual(same("Action", [...new Set(Object.values(RULESETS).flatMap((s) => s.actions))]), []);
  });
});
