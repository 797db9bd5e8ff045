/**
 * The chat card stays short: the modifier and a one-line reason first, everything else in a closed
 * <details>; a logged ruling carries the GM's Override button; an override shows on the card.
 * Then the card measured in real headless Chromium with the module's stylesheet, in a chat-log-wide
 * column: collapsed it is a few lines tall, and opening the details shows the rest.
 */
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { overrideUpdate, reasonLine, rulingCardHtml } from "../scripts/adapters/chat.js";
import { chromiumSkipReason, launchBrowser } from "./helpers/browser.js";

const here = dirname(fileURLToPath(import.meta.url));
const en = JSON.parse(readFileSync(resolve(here, "../lang/en.json"), "utf8"));
/** Foundry's localize over the module's English file: a key it lacks comes back as the key. */
const localize = (key) => key.split(".").reduce((o, k) => o?.[k], en) ?? key;

/** A blocked Infinity ruling as the bridge answers it (two zones crossed, four citations). */
const BLOCKED = {
  type: "adjudication", id: "q1", scene: "s1", actor: "t-fus", target: "t-ana", action: "bs-attack", reaction: false,
  ruleset: "infinity-n4", edition: "current", allowed: false, modifier: null,
  crossings: [{ region: "r-low", zone: "low", kind: "through" }, { region: "r-zero", zone: "zero", kind: "through" }],
  modifiers: [
    { source: "zone", value: -3, applied: false, label: "Low Visibility Zone", region: "r-low", zone: "low", reason: "Visibility Zone MODs never stack: only the most restrictive one applies." },
    { source: "zone", value: null, applied: true, label: "Zero Visibility Zone", region: "r-zero", zone: "zero", reason: "No LoF can be drawn through a Zero Visibility Zone." },
  ],
  notes: ["Region Fog is a zone of another ruleset (Darkness): ignored by Infinity N4."],
  citations: [
    "Infinity N4 Core Rules — Visibility Conditions: Low Visibility Zones apply a MOD of -3.",
    "Infinity N4 Core Rules — Visibility Conditions: LoF cannot be drawn into, through, or out of a Zero Visibility Zone. Any Trooper who is the target of a BS Attack into, through, or out of a Zero Visibility Zone treats the Zero Visibility Zone as a Poor Visibility Zone when drawing LoF to the attacker.",
    "Infinity N4 Core Rules — Visibility Conditions: Any Skill, Special Skill or piece of Equipment that requires LoF, except Dodge, and is performed from, into, or through a Visibility Zone suffers a MOD to the relevant Attribute in the required Roll.",
    "Infinity N4 Core Rules — Visibility Conditions: Visibility Zone MODs never stack with other Visibility Zone MODs. If any Roll would be affected by two or more Visibility Zones of whatever type, players will apply only one MOD, that must be always the most restrictive one.",
  ],
  logged: true, record: "rec-1",
};
const PENALISED = { ...BLOCKED, target: "t-bob", allowed: true, modifier: -3, crossings: [BLOCKED.crossings[0]], modifiers: [{ ...BLOCKED.modifiers[0], applied: true, reason: undefined }], notes: [], citations: BLOCKED.citations.slice(0, 1) };
const names = { tokens: { "t-fus": "Fusilier", "t-ana": "Ana", "t-bob": "Bob" }, regions: { "r-low": "Fog bank", "r-zero": "Smoke" } };

describe("the card's structure", () => {
  test("modifier and reason come before a closed <details> holding zones, candidates, notes and citations", () => {
    const html = rulingCardHtml(PENALISED, { localize, names });
    const details = html.indexOf('<details class="sightline-details">');
    assert.ok(details > 0);
    assert.ok(html.indexOf("sightline-modifier") < details && html.indexOf("sightline-reason") < details);
    assert.doesNotMatch(html, /<details[^>]* open/);
    const inside = html.slice(details, html.indexOf("</details>"));
    for (const part of ["sightline-crossings", "sightline-candidates", "sightline-citations"]) assert.match(inside, new RegExp(part));
    assert.match(html, /<summary>Zones, modifiers and sources<\/summary>/);
    assert.match(html, /sightline-reason" title="Low Visibility Zone \(\u22123\)">Low Visibility Zone \(\u22123\)</);
  });

  test("a ruling asked to be logged and answered logged: false says it is not in the log, above the details", () => {
    const unlogged = { ...PENALISED, logged: false, record: undefined };
    const html = rulingCardHtml(unlogged, { localize, names, askedToLog: true });
    const line = html.indexOf('<p class="sightline-unlogged">Not in the log: the bridge could not keep this ruling');
    assert.ok(line > 0 && line < html.indexOf("<details"));
    assert.doesNotMatch(html, /data-sightline-override/);
    assert.doesNotMatch(rulingCardHtml(unlogged, { localize, names }), /sightline-unlogged/); // a preview (log: false)
    assert.doesNotMatch(rulingCardHtml(PENALISED, { localize, names, askedToLog: true }), /sightline-unlogged/);
    const es = JSON.parse(readFileSync(resolve(here, "../lang/es.json"), "utf8"));
    assert.match(es.SIGHTLINE.Card.NotLogged, /^No consta en el registro/);
  });

  test("the reason line of a blocked action names what blocks it and why", () => {
    assert.equal(reasonLine(BLOCKED, localize), "Zero Visibility Zone: No LoF can be drawn through a Zero Visibility Zone.");
    assert.equal(reasonLine({ ...BLOCKED, modifiers: [], notes: [], crossings: [] }, localize), "No visibility zone crossed.");
    assert.equal(reasonLine({ ...BLOCKED, modifiers: [], notes: [] }, localize), "Zones crossed; no modifier applies.");
    assert.equal(reasonLine({ ...BLOCKED, modifiers: [] }, localize), BLOCKED.notes[0]);
  });

  test("a defence's header says who defends against whose attack (en, es); an attack's keeps its arrow", () => {
    const header = (html) => html.match(/<header>([\s\S]*?)<\/header>/)[1].replace(/<[^>]+>/g, "");
    const gurps = { ...PENALISED, ruleset: "gurps-4e", actor: "t-fus", target: "t-rai" };
    const named = { tokens: { ...names.tokens, "t-rai": "Raider's <b>boss</b>" } };
    const dodge = { ...gurps, action: "dodge", reaction: true };
    assert.equal(header(rulingCardHtml(dodge, { localize, names: named })), "Fusilier dodges Raider&#39;s &lt;b&gt;boss&lt;/b&gt;&#39;s attack");
    assert.equal(header(rulingCardHtml({ ...gurps, action: "parry", reaction: true }, { localize, names })), "Fusilier parries t-rai&#39;s attack");
    // A defence is the actor's answer to the target's attack whatever `reaction` says (docs/protocol.md).
    assert.equal(header(rulingCardHtml({ ...gurps, action: "block", reaction: false }, { localize, names })), "Fusilier blocks t-rai&#39;s attack");
    // Another action asked as a reaction (an Infinity ARO) answers the target's attack too.
    assert.equal(header(rulingCardHtml({ ...BLOCKED, reaction: true }, { localize, names })), "Fusilier answers Ana&#39;s attack: BS Attack");
    assert.equal(header(rulingCardHtml(BLOCKED, { localize, names })), "Fusilier \u2192 Ana BS Attack");
    assert.equal(header(rulingCardHtml({ ...gurps, action: "attack", reaction: false }, { localize, names })), "Fusilier \u2192 t-rai Attack");
    const es = JSON.parse(readFileSync(resolve(here, "../lang/es.json"), "utf8"));
    const localizeEs = (key) => key.split(".").reduce((o, k) => o?.[k], es) ?? key;
    assert.equal(header(rulingCardHtml(dodge, { localize: localizeEs, names })), "Fusilier esquiva el ataque de t-rai");
    assert.equal(header(rulingCardHtml({ ...BLOCKED, reaction: true }, { localize: localizeEs, names })), "Fusilier responde al ataque de Ana: Ataque CD");
  });

  test("a logged ruling carries the Override button; a proposal and an unlogged preview do not", () => {
    assert.match(rulingCardHtml(BLOCKED, { localize, names }), /data-record="rec-1"[\s\S]*data-sightline-override>Override…</);
    assert.doesNotMatch(rulingCardHtml({ ...BLOCKED, record: null, logged: false }, { localize, names }), /data-sightline-override/);
    const proposal = rulingCardHtml(BLOCKED, { localize, names, confirm: true });
    assert.match(proposal, /data-sightline-apply/);
    assert.doesNotMatch(proposal, /data-sightline-override/);
  });

  test("an override shows above the details, with who and why, escaped; the bridge's value is struck", () => {
    const message = { flags: { "sightline-bridge": { ruling: PENALISED, confirm: false } } };
    const game = { scenes: { get: () => ({ tokens: [{ id: "t-fus", name: "Fusilier" }], regions: [] }) }, i18n: { localize } };
    const update = overrideUpdate(message, { allowed: true, modifier: -6, reason: "the <smoke> drifted", record: "rec-2", by: "Gamemaster" }, { game });
    assert.deepEqual(update["flags.sightline-bridge.override"], { allowed: true, modifier: -6, reason: "the <smoke> drifted", record: "rec-2", by: "Gamemaster" });
    assert.match(update.content, /sightline-modifier sightline-overridden/);
    assert.match(update.content, /GM override \(Gamemaster\): <strong>\u22126<\/strong> — the &lt;smoke&gt; drifted/);
    assert.ok(update.content.indexOf("sightline-override\"") < update.content.indexOf("<details"));
  });
});

const browserSkip = chromiumSkipReason();

describe("the card in headless Chromium", { skip: browserSkip, timeout: 60_000 }, () => {
  let browser;
  let page;
  before(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    const css = readFileSync(resolve(here, "../styles/sightline.css"), "utf8");
    // Foundry's chat log: a ~300 px column, 14 px text (the measure is ours, the column is Foundry's).
    const cards = [BLOCKED, PENALISED].map((r) => `<li class="chat-message">${rulingCardHtml(r, { localize, names })}</li>`).join("");
    await page.setContent(`<!doctype html><html><head><style>body{margin:0;font:14px/1.4 sans-serif}#chat-log{width:300px;list-style:none;padding:0 6px}${css}</style></head><body><ol id="chat-log">${cards}</ol></body></html>`);
  });
  after(async () => browser?.close());

  test("collapsed, a card is the header, the modifier, one reason line and the disclosure", async () => {
    const heights = await page.$$eval(".sightline-card", (cards) =>
      cards.map((card) => {
        const details = card.querySelector("details");
        const closed = card.getBoundingClientRect().height;
        const reason = card.querySelector(".sightline-reason").getBoundingClientRect().height;
        const hidden = [...details.querySelectorAll("li, cite")].every((el) => !el.checkVisibility());
        details.open = true;
        const open = card.getBoundingClientRect().height;
        details.open = false;
        return { closed, open, reason, hidden };
      }),
    );
    console.log(`card heights in a 300 px chat column (collapsed → open): ${heights.map((h) => `${Math.round(h.closed)} → ${Math.round(h.open)} px`).join(", ")}`);
    for (const h of heights) {
      assert.ok(h.hidden, "zones, candidates and citations are hidden until opened");
      assert.ok(h.reason < 25, `the reason is one line (${h.reason} px)`);
      assert.ok(h.closed < 170, `collapsed card ${h.closed} px`);
      assert.ok(h.open > h.closed * 1.5, `opening the details shows the rest (${h.closed} → ${h.open} px)`);
    }
  });
});
