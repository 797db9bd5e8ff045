/**
 * The "Test connection" button in Foundry's settings form: placed under the secret, it tests what is
 * typed in the form (saved or not) and prints the outcome with what to do.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { addTestConnectionButton, hideSecretFromPlayers, testResultText } from "../scripts/adapters/settings.js";

/** A SettingsConfig form as far as the button touches it (querySelector, closest, after, createElement). */
function settingsForm({ url = "ws://localhost:8765/ws", secret = "typed-secret" } = {}) {
  const added = [];
  const el = (tag) => {
    const listeners = {};
    return { tag, dataset: {}, textContent: "", disabled: false, children: [], attributes: {}, append(...c) { this.children.push(...c); }, setAttribute(k, v) { this.attributes[k] = v; }, addEventListener: (type, fn) => (listeners[type] = fn), fire: (type) => listeners[type]?.() };
  };
  const group = { hidden: false, after: (row) => added.push(row) };
  const inputs = { "sightline-bridge.bridgeUrl": { value: url }, "sightline-bridge.secret": { value: secret, closest: (sel) => (sel === ".form-group" ? group : null) } };
  const element = {
    ownerDocument: { createElement: el },
    querySelector: (sel) => {
      const m = sel.match(/^\[name="(.+)"\]$/);
      if (m) return inputs[m[1]] ?? null;
      if (sel === "[data-sightline-test]") return added[0]?.children[0] ?? null;
      return null;
    },
  };
  return { element, added, group };
}
const localize = (k, data) => `${k}${data ? ` ${JSON.stringify(data)}` : ""}`;

test("the button sits under the secret and tests the URL and secret typed in the form", async () => {
  const { element, added } = settingsForm({ url: " ws://localhost:9999/ws ", secret: "not-saved-yet" });
  const calls = [];
  const button = addTestConnectionButton(element, { localize, page: "ashes.example", run: async (url, secret) => (calls.push([url, secret]), { ok: false, code: "local-network" }) });
  assert.ok(button);
  assert.equal(added.length, 1);
  assert.equal(button.textContent, "SIGHTLINE.Test.Button");
  await button.fire("click");
  assert.deepEqual(calls, [["ws://localhost:9999/ws", "not-saved-yet"]]);
  const out = added[0].children[1];
  assert.equal(out.dataset.code, "local-network");
  assert.match(out.textContent, /^SIGHTLINE\.Error\.local-network .*"page":"ashes\.example"/);
  assert.equal(addTestConnectionButton(element, { localize, run: async () => ({ ok: true, code: "ok" }) }), null, "one button per form");
});

test("a success names the bridge's version; a form without the bridge settings gets no button", () => {
  assert.equal(testResultText({ ok: true, code: "ok", bridge: { version: "0.3.1" } }, { localize, url: "" }), 'SIGHTLINE.Test.ok {"version":"0.3.1"}');
  assert.equal(addTestConnectionButton({ querySelector: () => null, ownerDocument: {} }, { localize, run: async () => ({ ok: true, code: "ok" }) }), null);
});

test("a hello refused for want of room prints the bridge's own reason, in the test's words (nothing retries)", () => {
  const text = testResultText({ ok: false, code: "rate-limited", message: "world 'w' already has 32 connections" }, { localize, url: "ws://localhost:8765/ws" });
  assert.match(text, /^SIGHTLINE\.Test\.rate-limited .*"message":"world 'w' already has 32 connections"/);
});

test("a player's form hides the bridge secret (a client setting every user sees); a form without it is left alone", () => {
  const { element, group } = settingsForm();
  assert.equal(hideSecretFromPlayers(element), true);
  assert.equal(group.hidden, true);
  assert.equal(hideSecretFromPlayers({ querySelector: () => null }), false);
});
