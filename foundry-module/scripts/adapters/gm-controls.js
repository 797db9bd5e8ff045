/**
 * The GM's log controls in Foundry: start (with a name) and end a game session from a scene
 * control, override a logged ruling (with a reason) from its chat card, and open the bridge's log
 * pages from the module settings. The form builders and readers are pure; the DialogV2 calls are
 * thin. The requests go through the service (`Sightline.startSession`, `endSession`,
 * `overrideRuling`), which sends them to the bridge directly on the holder and through the holder
 * for a co-GM.
 */

import { MODULE_ID } from "../const.js";
import { formatModifier } from "../geometry.js";
import { escapeHtml, overrideUpdate } from "./chat.js";
import { readerOf, refusalText } from "../errors.js";

// Game sessions.

/** The session dialog's content: the name of the session to start. */
export function sessionFormHtml(localize) {
  const L = (k) => escapeHtml(localize(`SIGHTLINE.Session.${k}`));
  return `<div class="sightline-session">
<p class="hint">${L("Hint")}</p>
<div class="form-group"><label for="sightline-session-name">${L("Name")}</label><input type="text" id="sightline-session-name" name="name" maxlength="200" placeholder="${L("NamePlaceholder")}" autofocus></div>
</div>`;
}

/** A refusal in the GM's words; the bridge's own (English) words go to the console, for a bug report. */
function refused(err, game) {
  const { text, said } = refusalText(err, readerOf(game));
  if (said) console.warn(`${MODULE_ID} | the bridge said: ${said}`);
  return text;
}

/**
 * Ask the GM what to do (start a named session, or end the open one) and do it.
 * @param {{DialogV2: any, game: any, ui: any, sightline: {startSession: (name: string) => Promise<any>, endSession: () => Promise<any>}}} opts
 * @returns {Promise<{action: "start" | "end", session: any} | null>}
 */
export async function openSessionDialog({ DialogV2, game, ui, sightline }) {
  const localize = (k) => game.i18n.localize(k);
  const choice = await DialogV2.wait({
    window: { title: localize("SIGHTLINE.Session.Title") },
    content: sessionFormHtml(localize),
    buttons: [
      { action: "start", label: localize("SIGHTLINE.Session.Start"), icon: "fa-solid fa-play", default: true, callback: (_event, button) => ({ action: "start", name: String(button.form?.elements?.name?.value ?? "").trim() }) },
      { action: "end", label: localize("SIGHTLINE.Session.End"), icon: "fa-solid fa-stop", callback: () => ({ action: "end" }) },
    ],
    rejectClose: false,
  });
  if (!choice || typeof choice !== "object") return null;
  try {
    if (choice.action === "start") {
      const session = await sightline.startSession(choice.name);
      ui.notifications?.info(game.i18n.format("SIGHTLINE.Session.Started", { name: session?.name || localize("SIGHTLINE.Session.Unnamed") }));
      return { action: "start", session };
    }
    const session = await sightline.endSession();
    ui.notifications?.info(session ? game.i18n.format("SIGHTLINE.Session.Ended", { name: session.name || localize("SIGHTLINE.Session.Unnamed") }) : localize("SIGHTLINE.Session.NoneOpen"));
    return { action: "end", session };
  } catch (err) {
    ui.notifications?.error(`${localize("SIGHTLINE.Session.Failed")} ${refused(err, game)}`);
    return null;
  }
}

/** A scene-control tool (Token controls, GM only) opening the session dialog. Same record shape in V13 and V14. */
export function addSessionControl(controls, { isGM, onClick }) {
  const tokens = controls?.tokens;
  if (!tokens?.tools) return;
  /** @type {foundry.applications.ui.SceneControls.Tool} */
  const tool = {
    name: `${MODULE_ID}-session`,
    title: "SIGHTLINE.Session.Title",
    icon: "fa-solid fa-book",
    order: Object.keys(tokens.tools).length,
    button: true,
    visible: isGM,
    onChange: () => onClick(),
  };
  tokens.tools[tool.name] = tool;
}

// Overrides.

/** The override dialog's content: allowed, the modifier (prefilled with the ruling's), the reason (required). */
export function overrideFormHtml(ruling, localize) {
  const L = (k) => escapeHtml(localize(`SIGHTLINE.Override.${k}`));
  const allowed = ruling.allowed !== false;
  return `<div class="sightline-override-form">
<p>${L("Current")}: <strong>${ruling.allowed === false ? escapeHtml(localize("SIGHTLINE.Card.NotAllowedShort")) : formatModifier(ruling.modifier)}</strong></p>
<div class="form-group"><label class="checkbox"><input type="checkbox" name="allowed"${allowed ? " checked" : ""}> ${L("Allowed")}</label></div>
<div class="form-group"><label for="sightline-override-modifier">${L("Modifier")}</label><input type="number" id="sightline-override-modifier" name="modifier" step="1" min="-99" max="99" value="${allowed ? Number(ruling.modifier ?? 0) : 0}"></div>
<div class="form-group stacked"><label for="sightline-override-reason">${L("Reason")}</label><textarea id="sightline-override-reason" name="reason" maxlength="2000" required></textarea></div>
</div>`;
}

/**
 * The form's values as an override, or `{error}` naming what is missing: a reason is required,
 * and an allowed action needs a whole-number modifier.
 * @param {{allowed: boolean, modifier: string, reason: string}} values
 * @returns {{allowed: boolean, modifier: number | null, reason: string} | {error: string}}
 */
export function overrideFromForm({ allowed, modifier, reason }) {
  const text = String(reason ?? "").trim();
  if (!text) return { error: "SIGHTLINE.Override.NeedReason" };
  if (!allowed) return { allowed: false, modifier: null, reason: text.slice(0, 2000) };
  const value = Number(String(modifier ?? "").trim() || "0");
  if (!Number.isInteger(value) || Math.abs(value) > 99) return { error: "SIGHTLINE.Override.NeedModifier" };
  return { allowed: true, modifier: value, reason: text.slice(0, 2000) };
}

/**
 * The GM pressed Override on a ruling's card: ask for the new ruling and the reason, send
 * `ruling.override`, and show it on the card.
 * @param {{DialogV2: any, game: any, ui: any, message: any,
 *          sightline: {overrideRuling: (record: string, o: {allowed: boolean, modifier: number | null, reason: string}) => Promise<{record: string, original: string}>}}} opts
 */
export async function overrideFromCard({ DialogV2, game, ui, message, sightline }) {
  const ruling = message.flags?.[MODULE_ID]?.ruling;
  if (!game.user?.isGM || !ruling?.record) return null;
  const localize = (k) => game.i18n.localize(k);
  const values = await DialogV2.prompt({
    window: { title: localize("SIGHTLINE.Override.Title") },
    content: overrideFormHtml(ruling, localize),
    ok: {
      label: localize("SIGHTLINE.Override.Save"),
      callback: (_event, button) => {
        const f = button.form.elements;
        return overrideFromForm({ allowed: Boolean(f.allowed?.checked), modifier: f.modifier?.value ?? "", reason: f.reason?.value ?? "" });
      },
    },
    rejectClose: false,
  });
  if (!values) return null;
  if ("error" in values) {
    ui.notifications?.warn(localize(values.error));
    return null;
  }
  try {
    const result = await sightline.overrideRuling(ruling.record, values);
    const override = { ...values, record: result.record, by: String(game.user.name ?? "") };
    await message.update(overrideUpdate(message, override, { game }));
    return override;
  } catch (err) {
    ui.notifications?.error(`${localize("SIGHTLINE.Override.Failed")} ${refused(err, game)}`);
    return null;
  }
}

/**
 * `renderChatMessageHTML`: the Override button of a logged ruling's card works for GMs and is
 * removed for everyone else.
 * @param {HTMLElement} html @param {{isGM: boolean, onOverride: () => void}} opts
 */
export function wireOverrideButton(html, { isGM, onOverride }) {
  const button = html?.querySelector?.("[data-sightline-override]");
  if (!button) return null;
  if (!isGM) {
    button.remove();
    return null;
  }
  button.addEventListener("click", () => onOverride());
  return button;
}

// The log pages.

/**
 * The address of the bridge's log pages, from the bridge's WebSocket URL: `ws://host:8765/ws` →
 * `http://host:8765/log/`, `wss://host/sightline/ws` → `https://host/sightline/log/` (a proxy
 * that serves the bridge under a path serves its pages there too). Null when the URL is no ws(s) URL.
 * @param {string} wsUrl
 */
export function logUrlOf(wsUrl) {
  let url;
  try {
    url = new URL(String(wsUrl ?? "").trim());
  } catch {
    return null;
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") return null;
  const scheme = url.protocol === "wss:" ? "https:" : "http:";
  const base = url.pathname.replace(/\/ws\/?$/, "").replace(/\/+$/, "");
  return `${scheme}//${url.host}${base}/log/`;
}

/** The "Open the log" window's content: the link (new tab) and how to sign in. */
export function logMenuHtml(url, localize) {
  const L = (k) => escapeHtml(localize(`SIGHTLINE.LogMenu.${k}`));
  if (!url) return `<p class="sightline-log-menu">${L("NoUrl")}</p>`;
  return `<div class="sightline-log-menu">
<p><a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer" data-sightline-log-link>${L("Open")}</a></p>
<p class="hint">${escapeHtml(url)}</p>
<p class="hint">${L("SignIn")}</p>
</div>`;
}

/**
 * The settings-menu class (`game.settings.registerMenu(..., {type})`): Foundry constructs it
 * without arguments and renders it when the GM presses the menu's button. A DialogV2 with the link
 * to the log pages — a link the GM clicks, so no pop-up blocker stands in the way. The content goes
 * in as a `<div>` element: DialogV2 cleans a content string (`foundry.utils.cleanHTML`), which could
 * drop the link's `target`, and the log must not replace the Foundry tab.
 * @param {{DialogV2: any, document: Document, url: () => string | null, localize: (key: string) => string}} deps
 */
export function defineLogMenu({ DialogV2, document, url, localize }) {
  return class SightlineLogMenu extends DialogV2 {
    constructor(options = {}) {
      const content = document.createElement("div");
      content.innerHTML = logMenuHtml(url(), localize);
      super({
        window: { title: localize("SIGHTLINE.LogMenu.Title"), icon: "fa-solid fa-scroll" },
        content,
        buttons: [{ action: "close", label: localize("SIGHTLINE.LogMenu.Close"), default: true }],
        ...options,
      });
    }
  };
}

/** Register the "Open the log" button under the module settings (GM only). */
export function registerLogMenu(game, menuClass) {
  game.settings.registerMenu(MODULE_ID, "openLog", {
    name: "SIGHTLINE.LogMenu.Name",
    label: "SIGHTLINE.LogMenu.Label",
    hint: "SIGHTLINE.LogMenu.Hint",
    icon: "fa-solid fa-scroll",
    type: menuClass,
    restricted: true,
  });
}
