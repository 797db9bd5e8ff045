/**
 * The pre-roll window (adapters/prompt.js) with Foundry's DialogV2 mocked: one window at a time,
 * replaced by a new targeting, closed when its target is dropped; it reads modifier and reason.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PrerollPrompt, prerollPromptHtml } from "../scripts/adapters/prompt.js";

const localize = (k) => k;
const ruling = (target, modifier) => ({ actor: "t-fus", target, allowed: modifier !== null, modifier, crossings: [], modifiers: modifier ? [{ source: "zone", value: modifier, applied: true, label: "Low Visibility Zone" }] : [], notes: [] });
const names = (r) => ({ actor: "Fusilier", target: r.target === "t-a" ? "Ana" : "Bob" });

test("the window shows each pair's modifier and its one-line reason, and tells the player to add it", () => {
  const html = prerollPromptHtml([ruling("t-a", -3)], { localize, names });
  assert.match(html, /<strong>Fusilier<\/strong> → <strong>Ana<\/strong>: SIGHTLINE\.Card\.Modifier: <strong>\u22123<\/strong>/);
  assert.match(html, /sightline-reason">Low Visibility Zone \(\u22123\)</);
  assert.match(html, /SIGHTLINE\.Prompt\.Hint/);
  assert.match(prerollPromptHtml([ruling("t-b", null)], { localize, names }), /SIGHTLINE\.Card\.NotAllowedShort/);
});

test("one non-modal window: a new target replaces it, dropping another target leaves it, dropping its own closes it", () => {
  const opened = [];
  class FakeDialogV2 {
    constructor(options) {
      this.options = options;
      this.closed = false;
      opened.push(this);
    }
    render(options) {
      this.rendered = options;
    }
    close() {
      this.closed = true;
    }
  }
  const prompt = new PrerollPrompt({ DialogV2: FakeDialogV2, localize });
  prompt.show([ruling("t-a", -3)], names);
  assert.deepEqual([opened[0].options.modal, opened[0].rendered], [false, { force: true }]);
  prompt.show([ruling("t-b", -6)], names);
  assert.deepEqual(opened.map((d) => d.closed), [true, false]);
  prompt.close("t-a");
  assert.equal(opened[1].closed, false);
  prompt.close("t-b");
  assert.equal(opened[1].closed, true);
  assert.equal(prompt.show([], names), null);
});
