/**
 * Every text a user reads is in lang/en.json and lang/es.json: no raw "SIGHTLINE.X" on screen.
 * Three ways a key reaches `localize`: written out in a script (scanned in every file Foundry loads),
 * built from an id at run time (`SIGHTLINE.Zone.${type}`: each such pattern is expanded over every
 * value it can take, and a pattern the test does not know fails it), and asked for by a form or a
 * card through a helper (`L("Title")`: the forms and cards are rendered with a localize that records
 * every key asked).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RULESETS, EDITIONS, ENVIRONMENT_KEYS, allZoneTypes, traitsFor } from "../scripts/vocabulary.js";
import { SETTINGS } from "../scripts/const.js";
import { checkUrl, classifyClose, diagnoseUnreachable } from "../scripts/connection.js";
import { rulingCardHtml } from "../scripts/adapters/chat.js";
import { sceneSettingsHtml } from "../scripts/adapters/scene-settings.js";
import { traitsFormHtml } from "../scripts/adapters/traits.js";
import { logMenuHtml, overrideFormHtml, sessionFormHtml } from "../scripts/adapters/gm-controls.js";
import { registerKeybindings, registerSettings } from "../scripts/adapters/settings.js";
import { lineLabel } from "../scripts/geometry.js";
import { ignoredNotice } from "../scripts/ignored.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const flat = (o, p = "") => Object.entries(o).flatMap(([k, v]) => (v && typeof v === "object" ? flat(v, `${p}${k}.`) : [`${p}${k}`]));
const LANGS = Object.fromEntries(["en", "es"].map((l) => [l, new Set(flat(JSON.parse(readFileSync(join(root, "lang", `${l}.json`), "utf8"))))]));
/** Whether a language has `key`: a text, or a group of texts (`SIGHTLINE.Behavior`, a LOCALIZATION_PREFIXES entry). */
const holds = (have, key) => have.has(key) || [...have].some((k) => k.startsWith(`${key}.`));
/** The keys of `keys` one of the languages lacks, as "es: SIGHTLINE.X". */
const missing = (keys) => [...new Set(keys)].flatMap((key) => Object.entries(LANGS).filter(([, have]) => !holds(have, key)).map(([lang]) => `${lang}: ${key}`));

/** Every script Foundry loads (module.json's esmodules and what they import): scripts/**, not the build tool. */
function scripts(dir = join(root, "scripts")) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return scripts(path);
    return name.endsWith(".js") ? [path] : [];
  });
}
const SOURCES = Object.fromEntries(scripts().map((path) => [relative(root, path), readFileSync(path, "utf8")]));

/** Every connection state (`BridgeConnection#state`, and the service's own `idle`) the badge names. */
const STATES = ["idle", "connecting", "handshaking", "ready", "reconnecting", "error", "closed"];

/** Every code a status or a test result may carry, read from the functions that make them. */
function errorCodes() {
  const codes = new Set(["no-secret", "timeout", "error", "lost"]); // testConnection's and the service's own
  for (const code of [undefined, 1000, 1006, 1009, 1011, 4000, 4401]) {
    for (const lastError of [null, { code: "unauthorized" }, { code: "unsupported-protocol" }, { code: "rate-limited" }, { code: "timeout" }]) {
      for (const [opened, handshakeDone] of [[false, false], [true, false], [true, true]]) codes.add(classifyClose({ code }, { opened, handshakeDone, lastError }).code);
    }
  }
  for (const [url, protocol] of [["nonsense", "http:"], ["http://x/ws", "http:"], ["ws://bridge.lan/ws", "https:"]]) {
    const check = checkUrl(url, protocol);
    if (check.ok === false) codes.add(check.code);
  }
  for (const page of [null, { hostname: "forge.example", protocol: "https:" }, { hostname: "forge.example", protocol: "http:" }]) {
    for (const permission of [null, "denied"]) codes.add(diagnoseUnreachable({ page, url: "ws://localhost:8765/ws", permission }));
  }
  return [...codes];
}

/**
 * The keys a script builds at run time, by the pattern as written (`SIGHTLINE.Zone.${t}`): every value
 * each pattern can take. Patterns with a helper (`SIGHTLINE.Scene.${k}`) are covered by rendering.
 */
const ALL_TRAITS = [...new Set(Object.keys(RULESETS).flatMap((r) => traitsFor(r)))];
const DOMAINS = {
  Zone: allZoneTypes(),
  ZoneChoice: allZoneTypes(),
  Trait: ALL_TRAITS,
  Ruleset: Object.keys(RULESETS),
  Illumination: RULESETS.traveller.zones.illuminated.params[0].choices,
  Status: STATES,
  Error: errorCodes(),
  Edition: [...new Set(Object.values(EDITIONS).flat())].filter((e) => /^[a-z-]+$/.test(e)), // a number ("2.1") shows as itself
  "Scene.LightLevel": ENVIRONMENT_KEYS.traveller.light.choices.map(String),
  "Scene.WeatherKind": ENVIRONMENT_KEYS.traveller.weather.choices,
  "Settings.*.Name": Object.values(SETTINGS),
  "Settings.*.Hint": Object.values(SETTINGS),
  // Asked through a helper whose calls the renderings below record.
  Card: [],
  Scene: [],
  Session: [],
  Override: [],
  LogMenu: [],
  "*": [], // chat.js's labeller, `SIGHTLINE.${prefix}.${id}` (Action, Zone, Kind): covered by rendering
};
const expand = (pattern, values) => (pattern.includes("*") ? values.map((v) => `SIGHTLINE.${pattern.replace("*", v)}`) : values.map((v) => `SIGHTLINE.${pattern}.${v}`));

describe("localisation", () => {
  test("every key written out in a script Foundry loads is in English and Spanish", () => {
    const keys = [];
    for (const code of Object.values(SOURCES)) {
      for (const [, key] of code.matchAll(/["'`](SIGHTLINE\.[A-Za-z0-9.-]*[A-Za-z0-9])["'`]/g)) keys.push(key);
    }
    assert.ok(keys.length > 50, `${keys.length} keys found: the scan reads the scripts`);
    assert.deepEqual(missing(keys), []);
  });

  test("every key built from an id at run time has its label for every id it can take", () => {
    const unknown = [];
    const keys = [];
    for (const [file, code] of Object.entries(SOURCES)) {
      for (const [text] of code.matchAll(/SIGHTLINE\.(?:[A-Za-z0-9.-]|\$\{[^}]+\})+/g)) {
        if (!text.includes("${")) continue;
        // `SIGHTLINE.Settings.${key}.Name` → "Settings.*.Name"; `SIGHTLINE.Zone.${t}` → "Zone"; `SIGHTLINE.${prefix}.${id}` → "*".
        const pattern = text.slice("SIGHTLINE.".length).replace(/\$\{[^}]+\}/g, "*").replace(/\.\*$/, "");
        if (!(pattern in DOMAINS)) unknown.push(`${file}: ${text}`);
        else keys.push(...expand(pattern, DOMAINS[pattern]));
      }
    }
    assert.deepEqual(unknown, [], "a key pattern this test does not expand: add its values to DOMAINS");
    assert.deepEqual(missing(keys), []);
  });

  test("the forms, the chat card, the overlay labels and the notices ask only for keys both languages have", () => {
    const asked = [];
    const localize = (key, data) => (asked.push(key), data ? `${key} ${JSON.stringify(data)}` : key);
    for (const ruleset of Object.keys(RULESETS)) {
      sceneSettingsHtml({ rules: { ruleset }, environment: {} }, { ruleset, edition: "current", locale: "en" }, localize);
      traitsFormHtml(ruleset, [], localize);
    }
    sessionFormHtml(localize);
    logMenuHtml("http://localhost:8765/log/", localize);
    logMenuHtml(null, localize);
    const crossings = allZoneTypes().flatMap((zone) => ["from", "into", "within", "through"].map((kind) => ({ region: "r", zone, kind })));
    const actions = [...new Set(Object.keys(RULESETS).flatMap((r) => RULESETS[r].actions))];
    for (const action of actions) {
      const ruling = { actor: "a", target: "b", action, allowed: true, modifier: -3, record: "rec-1", crossings, modifiers: [{ source: "zone", zone: "poor", value: -3, applied: true, label: "Poor" }, { source: "zone", value: -6, applied: false, label: "Zero" }], notes: [], citations: [] };
      rulingCardHtml(ruling, { localize, confirm: true });
      rulingCardHtml({ ...ruling, allowed: false, modifier: null }, { localize, override: { allowed: false, modifier: null, reason: "r" } });
      rulingCardHtml({ ...ruling, crossings: [], modifiers: [] }, { localize });
      overrideFormHtml(ruling, localize);
      overrideFormHtml({ ...ruling, allowed: false }, localize);
    }
    for (const ruling of [{ allowed: false, modifier: null }, { allowed: true, modifier: -6 }]) lineLabel(ruling, localize);
    for (const count of [1, 5]) ignoredNotice(Array.from({ length: count }, (_, i) => ({ region: `r${i}`, reason: "x" })), { scene: "Docks", format: localize });
    const registered = [];
    const game = { system: { id: "twodsix" }, settings: { register: (_m, key, data) => registered.push(data) }, keybindings: { register: (_m, key, data) => registered.push(data) } };
    registerSettings(game, { onConnectionChange() {}, onRulesChange() {}, onOverlayChange() {} });
    registerKeybindings(game, { toggleOverlay() {} });
    for (const data of registered) asked.push(data.name, ...(data.hint ? [data.hint] : []), ...Object.values(data.choices ?? {}));
    const keys = asked.filter((k) => k.startsWith("SIGHTLINE."));
    // The card's labeller may ask for a label an id lacks (a newer bridge's action) and show the id: only vocabulary ids here.
    assert.ok(keys.length > 100, `${keys.length} keys asked`);
    assert.deepEqual(missing(keys), []);
  });

  test("the overlay's line labels are the reader's words, not English written into the code", () => {
    const es = JSON.parse(readFileSync(join(root, "lang", "es.json"), "utf8")).SIGHTLINE.Overlay;
    const format = (key, data = {}) => key.split(".").slice(1).reduce((o, k) => o?.[k], { Overlay: es }).replace(/\{(\w+)\}/g, (_, k) => data[k]);
    assert.equal(lineLabel({ allowed: false, modifier: null }, format), "sin LdT");
    assert.equal(lineLabel({ allowed: true, modifier: -6 }, format), "MOD \u22126");
    assert.equal(lineLabel(null, format), "…");
  });
});
