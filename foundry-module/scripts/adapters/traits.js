/**
 * Token traits (MSV level, Marksmanship, vision devices, …), edited by the GM from a Token HUD
 * button and stored as `flags.sightline-bridge.traits` (an array of contract trait strings).
 */

import { FLAGS, MODULE_ID } from "../const.js";
import { traitsFor } from "../vocabulary.js";
import { escapeHtml } from "./chat.js";

/** The form's checked boxes, night-vision level and free text → a clean trait list. Pure. */
export function traitsFromForm({ checked = [], nightVision = 0, other = "" }) {
  const out = new Set(checked.filter((t) => t && !t.endsWith("-N")));
  const level = Number(nightVision);
  if (Number.isInteger(level) && level >= 1 && level <= 9) out.add(`night-vision-${level}`);
  for (const t of String(other).split(/[,\s]+/)) if (t.trim()) out.add(t.trim());
  return [...out];
}

/** The dialog body for a token's traits under a ruleset. Pure. */
export function traitsFormHtml(ruleset, current, localize) {
  const known = traitsFor(ruleset);
  const nv = current.find((t) => /^night-vision-\d$/.test(t));
  const rows = known
    .filter((t) => !t.endsWith("-N"))
    .map((t) => `<label class="checkbox"><input type="checkbox" name="trait" value="${escapeHtml(t)}" ${current.includes(t) ? "checked" : ""}> ${escapeHtml(localize(`SIGHTLINE.Trait.${t}`))}</label>`);
  const levelField = known.includes("night-vision-N");
  if (levelField) {
    rows.push(`<label>${escapeHtml(localize("SIGHTLINE.Trait.night-vision-N"))} <input type="number" name="nightVision" min="0" max="9" value="${nv ? nv.split("-").pop() : 0}"></label>`);
  }
  // A night-vision level goes in its field where the ruleset has one; elsewhere it stays in Other, as every
  // other ruleset's trait does, so that saving the dialog never drops it.
  const other = current.filter((t) => !known.includes(t) && !(levelField && t === nv));
  rows.push(`<label>${escapeHtml(localize("SIGHTLINE.Traits.Other"))} <input type="text" name="other" value="${escapeHtml(other.join(", "))}"></label>`);
  return `<div class="sightline-traits">${rows.join("\n")}</div>`;
}

/**
 * Open the editor for a token document and save the result.
 * @param {{DialogV2: any, game: any, tokenDoc: any, ruleset: string}} opts
 */
export async function editTraits({ DialogV2, game, tokenDoc, ruleset }) {
  const current = tokenDoc.getFlag(MODULE_ID, FLAGS.TRAITS) ?? [];
  const localize = (k) => game.i18n.localize(k);
  const result = await DialogV2.prompt({
    window: { title: `${localize("SIGHTLINE.Traits.Title")}: ${tokenDoc.name}` },
    content: traitsFormHtml(ruleset, current, localize),
    ok: {
      label: localize("SIGHTLINE.Traits.Save"),
      callback: (_event, button) => {
        const form = button.form;
        return traitsFromForm({
          checked: [...form.querySelectorAll('input[name="trait"]:checked')].map((i) => i.value),
          nightVision: form.elements.nightVision?.value ?? 0,
          other: form.elements.other?.value ?? "",
        });
      },
    },
    rejectClose: false,
  });
  if (Array.isArray(result)) await tokenDoc.setFlag(MODULE_ID, FLAGS.TRAITS, result);
  return result;
}

/** V13 `renderTokenHUD(hud, html, context)`: add the traits button for GMs. */
export function addTraitsHudButton(hud, html, { isGM, onClick, title }) {
  if (!isGM) return;
  const root = html instanceof HTMLElement ? html : html?.[0];
  const column = root?.querySelector?.(".col.right");
  if (!column) return;
  const button = document.createElement("button");
  button.type = "button";
  button.classList.add("control-icon");
  button.dataset.action = "sightline-traits";
  button.title = title;
  button.innerHTML = '<i class="fa-solid fa-eye-low-vision"></i>';
  button.addEventListener("click", (event) => {
    event.preventDefault();
    onClick(hud.object?.document ?? hud.document);
  });
  column.append(button);
}
