/**
 * The pre-roll prompt: in systems the modifier cannot reach by itself (any system but the GURPS
 * Game Aid and twodsix), the ruling is shown to the roller when they target — before they roll —
 * in a small window they can leave open beside the sheet, as Alternative Token Cover shows cover
 * before an attack. Foundry core has no "an attack is about to be rolled" hook common to every
 * system (ATC wraps each system's own attack method), so targeting with a controlled token is the
 * moment: the preview the module fetches then is the ruling of the roll to come. A new targeting
 * replaces the window; dropping the target it shows closes it. Client setting `prerollPrompt`.
 * `prerollPromptHtml` is pure; `PrerollPrompt` holds the one DialogV2.
 */

import { formatModifier } from "../geometry.js";
import { escapeHtml, reasonLine } from "./chat.js";

/**
 * @param {any[]} rulings previews, one per controlled token
 * @param {{localize: (key: string) => string, names: (ruling: any) => {actor: string, target: string}}} ctx
 */
export function prerollPromptHtml(rulings, { localize, names }) {
  const lines = ['<div class="sightline-preroll">'];
  for (const r of rulings) {
    const n = names(r);
    const value = r.allowed === false ? escapeHtml(localize("SIGHTLINE.Card.NotAllowedShort")) : `${escapeHtml(localize("SIGHTLINE.Card.Modifier"))}: <strong>${formatModifier(r.modifier)}</strong>`;
    lines.push(`<p class="sightline-preroll-pair"><strong>${escapeHtml(n.actor)}</strong> → <strong>${escapeHtml(n.target)}</strong>: ${value}</p>`);
    lines.push(`<p class="sightline-reason">${escapeHtml(reasonLine(r, localize))}</p>`);
  }
  lines.push(`<p class="hint">${escapeHtml(localize("SIGHTLINE.Prompt.Hint"))}</p>`, "</div>");
  return lines.join("\n");
}

/** The one pre-roll window of this client. */
export class PrerollPrompt {
  /** @param {{DialogV2: any, localize: (key: string) => string}} deps */
  constructor({ DialogV2, localize }) {
    this.DialogV2 = DialogV2;
    this.localize = localize;
    this.dialog = null;
    /** The target token id the open window is about. */
    this.target = null;
  }

  /** Show these rulings (of one target), replacing the window that is open. */
  show(rulings, names) {
    this.close();
    if (!rulings.length) return null;
    this.target = rulings[0].target;
    this.dialog = new this.DialogV2({
      window: { title: this.localize("SIGHTLINE.Prompt.Title"), icon: "fa-solid fa-eye" },
      content: prerollPromptHtml(rulings, { localize: this.localize, names }),
      buttons: [{ action: "ok", label: this.localize("SIGHTLINE.Prompt.Ok"), default: true }],
      modal: false,
      position: { width: 340 },
    });
    this.dialog.render({ force: true });
    return this.dialog;
  }

  /** Close the window (all of it, or only when it is about `target`). */
  close(target) {
    if (!this.dialog || (target !== undefined && target !== this.target)) return;
    const dialog = this.dialog;
    this.dialog = null;
    this.target = null;
    dialog.close?.();
  }
}
