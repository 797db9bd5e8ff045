/**
 * The ruling chat card: the modifier, the zones crossed and how, each candidate modifier with
 * whether it applied and why, and the citations. `rulingCardHtml` is pure (takes a `localize`
 * function); `postRulingCard` is the thin Foundry call.
 */

import { MODULE_ID } from "../const.js";
import { formatModifier, verdictOf } from "../geometry.js";

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * @param {any} ruling an `adjudication` answer
 * @param {{localize: (key: string) => string, names?: {tokens?: Record<string, string>, regions?: Record<string, string>},
 *          confirm?: boolean}} ctx `confirm` adds the GM's Apply button
 */
export function rulingCardHtml(ruling, { localize, names = {}, confirm = false }) {
  const tokenName = (id) => escapeHtml(names.tokens?.[id] ?? id ?? "");
  const regionName = (id) => escapeHtml(names.regions?.[id] ?? id ?? "");
  // An id a person reads is shown by its label (lang/*.json); an id we have no label for stays as it is.
  const labelOf = (prefix, id) => {
    const key = `SIGHTLINE.${prefix}.${id}`;
    const text = localize(key);
    return text && text !== key ? text : String(id ?? "");
  };
  const verdict = verdictOf(ruling);
  const lines = [];
  lines.push(`<div class="sightline-card sightline-${verdict}" data-actor="${escapeHtml(ruling.actor)}" data-target="${escapeHtml(ruling.target ?? "")}">`);
  lines.push(`<header><strong>${tokenName(ruling.actor)}</strong> → <strong>${tokenName(ruling.target)}</strong> <span class="sightline-action">${escapeHtml(labelOf("Action", ruling.action))}</span></header>`);
  if (ruling.allowed === false) {
    lines.push(`<p class="sightline-modifier">${escapeHtml(localize("SIGHTLINE.Card.NotAllowed"))}</p>`);
  } else {
    lines.push(`<p class="sightline-modifier">${escapeHtml(localize("SIGHTLINE.Card.Modifier"))}: <strong>${formatModifier(ruling.modifier)}</strong></p>`);
  }
  const crossings = ruling.crossings ?? [];
  if (crossings.length) {
    lines.push(`<h4>${escapeHtml(localize("SIGHTLINE.Card.Zones"))}</h4><ul class="sightline-crossings">`);
    for (const c of crossings) {
      lines.push(`<li>${regionName(c.region)} (${escapeHtml(labelOf("Zone", c.zone))}): ${escapeHtml(labelOf("Kind", c.kind))}</li>`);
    }
    lines.push("</ul>");
  } else {
    lines.push(`<p>${escapeHtml(localize("SIGHTLINE.Card.NoZones"))}</p>`);
  }
  const mods = ruling.modifiers ?? [];
  if (mods.length) {
    lines.push(`<h4>${escapeHtml(localize("SIGHTLINE.Card.Candidates"))}</h4><ul class="sightline-candidates">`);
    for (const m of mods) {
      const label = m.label ?? (m.zone ? labelOf("Zone", m.zone) : m.source);
      const state = m.applied ? localize("SIGHTLINE.Card.Applied") : localize("SIGHTLINE.Card.NotApplied");
      const reason = m.reason ? ` — ${escapeHtml(m.reason)}` : "";
      lines.push(`<li class="${m.applied ? "applied" : "not-applied"}">${escapeHtml(label)} ${formatModifier(m.value)} (${escapeHtml(state)})${reason}</li>`);
    }
    lines.push("</ul>");
  }
  for (const note of ruling.notes ?? []) lines.push(`<p class="sightline-note">${escapeHtml(note)}</p>`);
  const citations = ruling.citations ?? [];
  if (citations.length) {
    lines.push(`<footer class="sightline-citations">${citations.map((c) => `<cite>${escapeHtml(c)}</cite>`).join("<br>")}</footer>`);
  }
  if (confirm) {
    lines.push(`<p class="sightline-proposal">${escapeHtml(localize("SIGHTLINE.Card.Proposal"))}</p>`);
    lines.push(`<button type="button" data-sightline-apply>${escapeHtml(localize("SIGHTLINE.Card.Apply"))}</button>`);
  }
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
 * @param {{ChatMessage: any, game: any, ruling: any, confirm?: boolean, whisperGM?: boolean, rollerId?: string}} opts
 */
export async function postRulingCard({ ChatMessage, game, ruling, confirm = false, whisperGM = confirm, rollerId }) {
  const scene = game.scenes?.get?.(ruling.scene);
  const content = rulingCardHtml(ruling, { localize: (k) => game.i18n.localize(k), names: namesOf(scene), confirm });
  /** @type {Record<string, unknown>} */
  const data = {
    content,
    speaker: { alias: "Sightline" },
    flags: { [MODULE_ID]: { ruling, rollerId: rollerId ?? game.user.id, confirm } },
  };
  if (whisperGM) data.whisper = ChatMessage.getWhisperRecipients("GM").map((u) => u.id);
  return ChatMessage.create(data);
}
