/**
 * The ruling chat card: the modifier and a one-line reason first; then, collapsed, the zones crossed
 * and how, each candidate modifier with whether it applied and why, the notes and the citations.
 * A logged ruling carries the GM's Override button. `rulingCardHtml` is pure (takes a `localize`
 * function); `postRulingCard` and `overrideOnMessage` are the thin Foundry calls.
 */

import { MODULE_ID } from "../const.js";
import { formatModifier, verdictOf } from "../geometry.js";

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** An id a person reads, by its label (lang/*.json); an id without a label stays as it is. */
function labeller(localize) {
  return (prefix, id) => {
    const key = `SIGHTLINE.${prefix}.${id}`;
    const text = localize(key);
    return text && text !== key ? text : String(id ?? "");
  };
}

/**
 * The one line that says why the modifier is what it is: the applied modifiers with their values
 * ("Low Visibility Zone (−3)"; one that blocks, with its reason); without any, the first note, else
 * "no zone crossed" or "no modifier applies". Plain text.
 * @param {any} ruling @param {(key: string) => string} localize
 */
export function reasonLine(ruling, localize) {
  const label = labeller(localize);
  const applied = (ruling.modifiers ?? []).filter((m) => m.applied);
  if (applied.length) {
    return applied
      .map((m) => {
        const name = m.label ?? (m.zone ? label("Zone", m.zone) : m.source);
        // A modifier without a value blocks the action: its reason says why ("No LoF can be drawn through …").
        if (m.value === null || m.value === undefined) return m.reason ? `${name}: ${m.reason}` : name;
        return `${name} (${formatModifier(m.value)})`;
      })
      .join("; ");
  }
  if (ruling.notes?.length) return String(ruling.notes[0]);
  if (!(ruling.crossings ?? []).length) return localize("SIGHTLINE.Card.NoZones");
  return localize("SIGHTLINE.Card.NoneApplies");
}

/** The defences (GURPS dodge, parry, block; Infinity's Dodge): the actor defends against the target's attack (docs/protocol.md). */
const DEFENCE_KEYS = Object.freeze({ dodge: "Dodges", parry: "Parries", block: "Blocks" });

/**
 * A localised sentence with its `{name}` placeholders filled with HTML (the names, already escaped) and
 * the rest of it escaped.
 * @param {string} template @param {Record<string, string>} html
 */
function fillHtml(template, html) {
  return String(template)
    .split(/(\{\w+\})/)
    .map((part) => {
      const name = part.match(/^\{(\w+)\}$/)?.[1];
      return name && name in html ? html[name] : escapeHtml(part);
    })
    .join("");
}

/**
 * The card's header. An attack reads "Fusilier → Raider · BS Attack" (the actor acts on the target). A
 * defence reads who defends against whose attack ("Fusilier dodges Raider's attack"): a dodge, parry or
 * block is always the actor's answer to the target's attack, and so is any action asked with
 * `reaction: true` ("Fusilier answers Raider's attack: BS Attack", an Infinity ARO) — an arrow from the
 * defender would read as the defender attacking.
 * @param {any} ruling
 * @param {{localize: (key: string) => string, tokenName: (id: string) => string, action: string}} ctx
 */
export function headerHtml(ruling, { localize, tokenName, action }) {
  const actor = `<strong>${tokenName(ruling.actor)}</strong>`;
  const target = `<strong>${tokenName(ruling.target)}</strong>`;
  const defence = DEFENCE_KEYS[ruling.action];
  if (defence || ruling.reaction === true) {
    const key = defence ? `SIGHTLINE.Card.${defence}` : "SIGHTLINE.Card.Answers";
    const text = localize(key);
    if (text && text !== key) {
      const sentence = fillHtml(text, { defender: actor, attacker: target, action: escapeHtml(action) });
      return `<span class="sightline-defence">${sentence}</span>`;
    }
  }
  return `${actor} → ${target} <span class="sightline-action">${escapeHtml(action)}</span>`;
}

/**
 * The card, short: the modifier and a one-line reason first; zones, candidates, notes and citations
 * in a closed `<details>` (Foundry's chat log shows it as a disclosure the reader opens).
 * @param {any} ruling an `adjudication` answer
 * @param {{localize: (key: string) => string, names?: {tokens?: Record<string, string>, regions?: Record<string, string>},
 *          confirm?: boolean, override?: {allowed: boolean, modifier: number | null, reason: string, by?: string} | null,
 *          askedToLog?: boolean}} ctx
 *   `confirm` adds the GM's Apply button; `override` shows a GM's override above the details.
 *   A logged ruling (`record`) carries the Override button, which only GMs are shown (renderChatMessageHTML).
 *   `askedToLog` (a roll's ruling, asked with `log: true`): when the bridge answers `logged: false` (its
 *   log failed), the card says the ruling is not in the log, rather than only lacking the Override button.
 */
export function rulingCardHtml(ruling, { localize, names = {}, confirm = false, override = null, askedToLog = false }) {
  const tokenName = (id) => escapeHtml(names.tokens?.[id] ?? id ?? "");
  const regionName = (id) => escapeHtml(names.regions?.[id] ?? id ?? "");
  const labelOf = labeller(localize);
  const L = (key) => escapeHtml(localize(`SIGHTLINE.Card.${key}`));
  const verdict = verdictOf(ruling);
  const lines = [];
  const record = ruling.record ? ` data-record="${escapeHtml(ruling.record)}"` : "";
  lines.push(`<div class="sightline-card sightline-${verdict}" data-actor="${escapeHtml(ruling.actor)}" data-target="${escapeHtml(ruling.target ?? "")}"${record}>`);
  lines.push(`<header>${headerHtml(ruling, { localize, tokenName, action: labelOf("Action", ruling.action) })}</header>`);
  const overridden = override ? " sightline-overridden" : "";
  if (ruling.allowed === false) {
    lines.push(`<p class="sightline-modifier${overridden}">${L("NotAllowed")}</p>`);
  } else {
    lines.push(`<p class="sightline-modifier${overridden}">${L("Modifier")}: <strong>${formatModifier(ruling.modifier)}</strong></p>`);
  }
  const reason = reasonLine(ruling, localize);
  lines.push(`<p class="sightline-reason" title="${escapeHtml(reason)}">${escapeHtml(reason)}</p>`);
  if (override) {
    const value = override.allowed === false ? L("NotAllowedShort") : `<strong>${formatModifier(override.modifier)}</strong>`;
    const by = override.by ? ` (${escapeHtml(override.by)})` : "";
    lines.push(`<p class="sightline-override">${L("Overridden")}${by}: ${value} — ${escapeHtml(override.reason)}</p>`);
  }
  if (askedToLog && ruling.logged === false) lines.push(`<p class="sightline-unlogged">${L("NotLogged")}</p>`);
  lines.push(`<details class="sightline-details"><summary>${L("Details")}</summary>`);
  const crossings = ruling.crossings ?? [];
  if (crossings.length) {
    lines.push(`<h4>${L("Zones")}</h4><ul class="sightline-crossings">`);
    for (const c of crossings) {
      lines.push(`<li>${regionName(c.region)} (${escapeHtml(labelOf("Zone", c.zone))}): ${escapeHtml(labelOf("Kind", c.kind))}</li>`);
    }
    lines.push("</ul>");
  } else {
    lines.push(`<p>${L("NoZones")}</p>`);
  }
  const mods = ruling.modifiers ?? [];
  if (mods.length) {
    lines.push(`<h4>${L("Candidates")}</h4><ul class="sightline-candidates">`);
    for (const m of mods) {
      const label = m.label ?? (m.zone ? labelOf("Zone", m.zone) : m.source);
      const state = m.applied ? localize("SIGHTLINE.Card.Applied") : localize("SIGHTLINE.Card.NotApplied");
      const why = m.reason ? ` — ${escapeHtml(m.reason)}` : "";
      lines.push(`<li class="${m.applied ? "applied" : "not-applied"}">${escapeHtml(label)} ${formatModifier(m.value)} (${escapeHtml(state)})${why}</li>`);
    }
    lines.push("</ul>");
  }
  for (const note of ruling.notes ?? []) lines.push(`<p class="sightline-note">${escapeHtml(note)}</p>`);
  const citations = ruling.citations ?? [];
  if (citations.length) {
    lines.push(`<footer class="sightline-citations">${citations.map((c) => `<cite>${escapeHtml(c)}</cite>`).join("<br>")}</footer>`);
  }
  lines.push("</details>");
  if (confirm) {
    lines.push(`<p class="sightline-proposal">${L("Proposal")}</p>`);
    lines.push(`<button type="button" data-sightline-apply>${L("Apply")}</button>`);
  }
  if (ruling.record && !confirm) lines.push(`<button type="button" class="sightline-override-button" data-sightline-override>${L("Override")}</button>`);
  lines.push("</div>");
  return lines.join("\n");
}

/** Token and region names of the scene, for the card. */
export function namesOf(scene) {
  const map = (coll) => Object.fromEntries([...(coll ?? [])].map((d) => [d.id, d.name]));
  return { tokens: map(scene?.tokens), regions: map(scene?.regions) };
}

/**
 * Post the card. With `confirm` (a proposal before the roll) it carries an Apply button; the
 * ruling and the roller are in the message flags. `whisperGM` (confirm mode, and every proposal)
 * whispers it to the GMs.
 * `askedToLog`: the ruling was asked with `log: true` (a roll's), see `rulingCardHtml`.
 * @param {{ChatMessage: any, game: any, ruling: any, confirm?: boolean, whisperGM?: boolean, rollerId?: string, askedToLog?: boolean}} opts
 */
export async function postRulingCard({ ChatMessage, game, ruling, confirm = false, whisperGM = confirm, rollerId, askedToLog = false }) {
  const scene = game.scenes?.get?.(ruling.scene);
  const content = rulingCardHtml(ruling, { localize: (k) => game.i18n.localize(k), names: namesOf(scene), confirm, askedToLog });
  /** @type {Record<string, unknown>} */
  const data = {
    content,
    speaker: { alias: "Sightline" },
    flags: { [MODULE_ID]: { ruling, rollerId: rollerId ?? game.user.id, confirm } },
  };
  if (whisperGM) data.whisper = ChatMessage.getWhisperRecipients("GM").map((u) => u.id);
  return ChatMessage.create(data);
}

/**
 * The update that shows a GM's override on the card it overrides: the card drawn again with the
 * override line, and the override kept in the message flags (`override`) beside the ruling.
 * @param {any} message the ruling's ChatMessage
 * @param {{allowed: boolean, modifier: number | null, reason: string, record: string, by?: string}} override
 * @param {{game: any}} env
 */
export function overrideUpdate(message, override, { game }) {
  const data = message.flags?.[MODULE_ID] ?? {};
  const scene = game.scenes?.get?.(data.ruling?.scene);
  const content = rulingCardHtml(data.ruling, { localize: (k) => game.i18n.localize(k), names: namesOf(scene), confirm: Boolean(data.confirm), override });
  return { content, [`flags.${MODULE_ID}.override`]: override };
}
