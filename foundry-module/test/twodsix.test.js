/**
 * The twodsix feed against a stub of what twodsix's RollDialog renders (throw-dialog.hbs: a
 * `difficulty` select keyed by twodsix's difficulty names, an `rollModifiers.other` number input,
 * inside `.roll-settings`) and its CE / CEL difficulty lists (config.ts).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { prefillRollDialog, twodsixAdjustments, twodsixDifficulty } from "../scripts/systems/twodsix.js";

const CE = { Simple: { mod: 6, target: 2 }, Easy: { mod: 4, target: 4 }, Routine: { mod: 2, target: 6 }, Average: { mod: 0, target: 8 }, Difficult: { mod: -2, target: 10 }, VeryDifficult: { mod: -4, target: 12 }, Formidable: { mod: -6, target: 14 }, Impossible: { mod: -8, target: 16 } };
const CEL = { Routine: { mod: 2, target: 4 }, Average: { mod: 0, target: 6 }, Difficult: { mod: -2, target: 8 }, VeryDifficult: { mod: -4, target: 10 }, Formidable: { mod: -6, target: 12 } };

/** The rendered dialog as the stub of twodsix's template: a difficulty select, an Other input. */
function dialogStub(difficulties, other = "0") {
  const notes = [];
  const select = { value: "Average", options: Object.keys(difficulties).map((value) => ({ value })) };
  const input = { value: other };
  const settings = { prepend: (p) => notes.push(p.textContent) };
  const element = {
    dataset: {},
    ownerDocument: { createElement: () => ({}) },
    querySelector: (sel) => ({ 'select[name="difficulty"]': select, 'input[name="rollModifiers.other"]': input, ".roll-settings": settings })[sel] ?? null,
  };
  return { element, select, input, notes };
}
const localize = (k, data) => `${k} ${JSON.stringify(data ?? {})}`;
const ruling = (over = {}) => ({ ruleset: "traveller", allowed: true, modifier: 2, difficulty: "formidable", asset: 2, device: "image-intensifier", ...over });

describe("twodsix", () => {
  test("bridge levels map to twodsix difficulties of the same name in the CE list", () => {
    assert.deepEqual(["easy", "average", "difficult", "formidable", "impossible"].map((l) => twodsixDifficulty(l, CE).key), ["Easy", "Average", "Difficult", "Formidable", "Impossible"]);
  });

  test("in the CEL list, missing levels take the nearest twodsix DM, never an easier one on a tie", () => {
    assert.deepEqual(twodsixDifficulty("easy", CEL), { key: "Routine", exact: false });
    assert.deepEqual(twodsixDifficulty("impossible", CEL), { key: "Formidable", exact: false });
    assert.deepEqual(twodsixDifficulty("difficult", CEL), { key: "Difficult", exact: true });
  });

  test("the dialog gets the difficulty and the device's asset added to Other; the diff mods are not added twice", () => {
    const d = dialogStub(CE, "1");
    assert.deepEqual(prefillRollDialog({ element: d.element, difficulties: CE, ruling: ruling(), localize }), { difficulty: "Formidable", dm: 2 });
    assert.equal(d.select.value, "Formidable");
    assert.equal(d.input.value, "3", "the player's own +1 stays, the asset +2 is added");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.Prefilled .*"difficulty":"Formidable".*"dm":"\+2".*"device":"image-intensifier"/);
  });

  test("a re-render of the same element is not filled twice", () => {
    const d = dialogStub(CE);
    prefillRollDialog({ element: d.element, difficulties: CE, ruling: ruling(), localize });
    assert.equal(prefillRollDialog({ element: d.element, difficulties: CE, ruling: ruling(), localize }), null);
    assert.equal(d.input.value, "2");
  });

  test("a task the bridge does not allow leaves the dialog alone and says so", () => {
    const d = dialogStub(CE);
    assert.deepEqual(prefillRollDialog({ element: d.element, difficulties: CE, ruling: ruling({ allowed: false, modifier: null, difficulty: null }), localize }), { blocked: true });
    assert.equal(d.select.value, "Average");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.NoLoS/);
  });

  test("rulings of other rulesets are not fed to twodsix", () => {
    assert.equal(twodsixAdjustments({ ruleset: "infinity-n4", allowed: true, modifier: -3 }, CE), null);
    const d = dialogStub(CE);
    assert.equal(prefillRollDialog({ element: d.element, difficulties: CE, ruling: { ruleset: "gurps-4e", allowed: true, modifier: -4 }, localize }), null);
  });
});
