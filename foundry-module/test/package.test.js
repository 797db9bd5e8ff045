import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { rulingCardHtml } from "../scripts/adapters/chat.js";
import { traitsFromForm } from "../scripts/adapters/traits.js";
import { addOverlayControl } from "../scripts/adapters/overlay.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const read = (p) => readFileSync(resolve(root, p), "utf8");

/** Pure modules: no Foundry global may appear in them. */
const PURE = ["const.js", "vocabulary.js", "protocol.js", "serialize.js", "batcher.js", "backoff.js", "connection.js", "geometry.js", "overlay-draw.js", "annotations.js", "systems/gurps.js", "systems/twodsix.js", "systems/generic.js"];
const FOUNDRY_GLOBALS = /\b(game|canvas|CONFIG|Hooks|ui|foundry|PIXI|ChatMessage|CONST|fromUuid|GURPS)\s*[.[(]/;

test("pure modules touch no Foundry global", () => {
  for (const file of PURE) {
    const code = read(`scripts/${file}`).replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    const hit = code.match(FOUNDRY_GLOBALS);
    assert.equal(hit, null, `${file} uses ${hit?.[0]}`);
  }
});

test("module.json declares what Foundry needs", () => {
  const m = JSON.parse(read("module.json"));
  assert.equal(m.id, "sightline-bridge");
  // `verified` only comes with a release, from verified.json (no real-Foundry check has passed yet).
  assert.deepEqual(m.compatibility, { minimum: "13" });
  for (const key of ["url", "manifest", "download"]) assert.equal(m[key], undefined, `${key} is set by tools/release.mjs`);
  assert.equal(m.socket, true);
  assert.deepEqual(m.documentTypes, { RegionBehavior: { visibilityZone: {} } });
  assert.deepEqual(m.esmodules, ["scripts/main.js"]);
  assert.deepEqual(m.languages.map((l) => l.lang), ["en", "es"]);
});

test("en and es carry the same keys, and every key the code names exists", () => {
  const flat = (o, p = "") => Object.entries(o).flatMap(([k, v]) => (typeof v === "object" ? flat(v, `${p}${k}.`) : [`${p}${k}`]));
  const en = flat(JSON.parse(read("lang/en.json")));
  const es = flat(JSON.parse(read("lang/es.json")));
  assert.deepEqual(es.sort(), [...en].sort());
  const sources = ["scripts/main.js", "scripts/adapters/scene-settings.js", "scripts/systems/twodsix.js", "scripts/adapters/chat.js", "scripts/adapters/overlay.js", "scripts/adapters/settings.js", "scripts/adapters/traits.js", "scripts/adapters/sightline.js", "scripts/adapters/gm-controls.js", "scripts/adapters/prompt.js", "scripts/region-behavior.js"].map(read).join("\n");
  for (const [, key] of sources.matchAll(/"(SIGHTLINE\.[A-Za-z.]+[A-Za-z])"/g)) assert.ok(en.includes(key) || en.some((k) => k.startsWith(`${key}.`)), `missing ${key}`);
});

test("the chat card shows modifier, zones and how, each candidate and why, citations — escaped", () => {
  const html = rulingCardHtml(
    {
      actor: "t1", target: "t2", action: "bs-attack", allowed: true, modifier: -6,
      crossings: [{ region: "r1", zone: "poor", kind: "into" }],
      modifiers: [
        { source: "zone", region: "r1", zone: "poor", value: -6, applied: true, label: "Poor Visibility Zone" },
        { source: "zone", region: "r2", zone: "low", value: -3, applied: false, reason: "MODs <never> stack" },
      ],
      citations: ["002.txt: Visibility Zone MODs never stack"],
    },
    { localize: (k) => k, names: { tokens: { t1: "Fusilier", t2: "Target" }, regions: { r1: "Fog" } } },
  );
  assert.match(html, /Fusilier/);
  assert.match(html, /\u22126/);
  assert.match(html, /Fog \(poor\): into/);  // a localize that knows no label: the ids, never a bare key
  assert.match(html, /SIGHTLINE\.Card\.NotApplied\) — MODs &lt;never&gt; stack/);
  assert.match(html, /<cite>002\.txt/);
  assert.doesNotMatch(html, /data-sightline-apply/);
});

test("the chat card shows actions, zones and crossing kinds by their labels, in the reader's language", () => {
  const words = { "SIGHTLINE.Action.bs-attack": "Ataque CD", "SIGHTLINE.Zone.poor": "Mala Visibilidad", "SIGHTLINE.Kind.into": "hacia" };
  const html = rulingCardHtml(
    { actor: "t1", target: "t2", action: "bs-attack", allowed: true, modifier: -6, crossings: [{ region: "r1", zone: "poor", kind: "into" }] },
    { localize: (k) => words[k] ?? k, names: { tokens: { t1: "Fusilero", t2: "Objetivo" }, regions: { r1: "Niebla" } } },
  );
  assert.match(html, /sightline-action">Ataque CD</);
  assert.match(html, /Niebla \(Mala Visibilidad\): hacia/);
  assert.doesNotMatch(html, /bs-attack<|\(poor\)|t1<|t2</);
  const unknown = rulingCardHtml({ actor: "t1", action: "new-action", allowed: true, modifier: 0 }, { localize: (k) => k });
  assert.match(unknown, /sightline-action">new-action</);  // no label yet: the id, not a key
});

test("every action of the vocabulary has its label in English and Spanish", () => {
  const en = JSON.parse(readFileSync(new URL("../lang/en.json", import.meta.url), "utf8")).SIGHTLINE.Action;
  const es = JSON.parse(readFileSync(new URL("../lang/es.json", import.meta.url), "utf8")).SIGHTLINE.Action;
  for (const action of ["bs-attack", "dodge", "speculative-attack", "discover", "hacking", "combat-jump", "attack", "parry", "block", "observation", "sensors"]) {
    assert.ok(en[action] && es[action], action);
  }
});

test("a refused action reads as no line of fire", () => {
  assert.match(rulingCardHtml({ allowed: false, modifier: null, action: "bs-attack" }, { localize: (k) => k }), /SIGHTLINE\.Card\.NotAllowed/);
});

test("trait form: boxes, a night-vision level and free text make a clean list", () => {
  assert.deepEqual(traitsFromForm({ checked: ["dark-vision", "night-vision-N"], nightVision: "3", other: "infravision, custom-x" }), ["dark-vision", "night-vision-3", "infravision", "custom-x"]);
});

test("V13 scene controls: the toggle goes into the Token tools record", () => {
  const controls = { tokens: { tools: { select: {}, target: {} } } };
  let toggled = null;
  addOverlayControl(controls, { isGM: true, active: false, onToggle: (on) => (toggled = on) });
  const tool = controls.tokens.tools["sightline-bridge"];
  assert.equal(tool.toggle, true);
  assert.equal(tool.order, 2);
  tool.onChange({}, true);
  assert.equal(toggled, true);
});
