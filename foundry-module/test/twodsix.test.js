/**
 * The twodsix feed against a stub of the throw dialog twodsix opens with DialogV2.wait
 * (static/templates/chat/throw-dialog.hbs: `.roll-settings` holding a `difficulty` select keyed by
 * the list in use and an `rollModifiers.other` number input) and its six difficulty lists
 * (src/module/config.js, `DIFFICULTIES`), copied number for number.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { LEVEL_DMS, difficultiesInUse, isThrowDialog, prefillThrowDialog, twodsixAdjustments, twodsixDifficulty } from "../scripts/systems/twodsix.js";

/** twodsix's `TWODSIX.DIFFICULTIES` (config.js). */
const DIFFICULTIES = {
  CE: { Simple: { mod: 6, target: 2 }, Easy: { mod: 4, target: 4 }, Routine: { mod: 2, target: 6 }, Average: { mod: 0, target: 8 }, Difficult: { mod: -2, target: 10 }, VeryDifficult: { mod: -4, target: 12 }, Formidable: { mod: -6, target: 14 }, Impossible: { mod: -8, target: 16 } },
  CEL: { Routine: { mod: 2, target: 4 }, Average: { mod: 0, target: 6 }, Difficult: { mod: -2, target: 8 }, VeryDifficult: { mod: -4, target: 10 }, Formidable: { mod: -6, target: 12 } },
  AC: { Routine: { mod: 2, target: 4 }, Simple: { mod: 0, target: 6 }, Average: { mod: -2, target: 8 }, Difficult: { mod: -4, target: 10 }, VeryDifficult: { mod: -6, target: 12 }, Formidable: { mod: -8, target: 14 }, Impossible: { mod: -10, target: 16 } },
  CU: { Easy: { mod: 4, target: 4 }, Routine: { mod: 2, target: 6 }, Average: { mod: 0, target: 8 }, Difficult: { mod: -2, target: 10 }, VeryDifficult: { mod: -4, target: 12 }, Formidable: { mod: -6, target: 14 } },
  Nomad: { Easy: { mod: 1, target: 7 }, Average: { mod: 0, target: 8 }, Difficult: { mod: -1, target: 9 }, Formidable: { mod: -2, target: 10 }, Impossible: { mod: -4, target: 12 } },
  CD: { Easy: { mod: 1, target: 6 }, Average: { mod: 0, target: 8 }, Difficult: { mod: -1, target: 10 }, Formidable: { mod: -2, target: 12 }, Impossible: { mod: -4, target: 14 } },
};
const LEVELS = ["easy", "average", "difficult", "formidable", "impossible"];

/**
 * The rendered dialog: twodsix's throw dialog (`kind: "throw"`), its GM request-roll dialog
 * (`other`, no `rollModifiers.other`) or any other DialogV2.
 */
function dialogStub(difficulties, { other = "0", kind = "throw" } = {}) {
  const notes = [];
  const select = { value: "Average", options: Object.keys(difficulties).map((value) => ({ value })) };
  const input = { value: other };
  const settings = { prepend: (p) => notes.push(p.textContent) };
  const bySelector =
    kind === "throw"
      ? { '.roll-settings select[name="difficulty"]': select, '.roll-settings input[name="rollModifiers.other"]': input, ".roll-settings": settings }
      : kind === "request"
        ? { '.roll-settings select[name="difficulty"]': select, ".roll-settings": settings }
        : {};
  const element = { dataset: {}, ownerDocument: { createElement: () => ({}) }, querySelector: (sel) => bySelector[sel] ?? null };
  return { element, select, input, notes };
}
const WORDS = { "SIGHTLINE.Trait.image-intensifier": "Image intensifier" };
// Foundry's localize/format: a known key gives its text; an unknown one comes back as the key itself.
const localize = (k, data) => (data ? `${k} ${JSON.stringify(data)}` : WORDS[k] ?? k);
const ruling = (over = {}) => ({ ruleset: "traveller", allowed: true, modifier: 2, difficulty: "formidable", asset: 2, device: "image-intensifier", ...over });

describe("twodsix difficulty by DM", () => {
  test("in the CE list every level is the entry of its own DM, which carries its name", () => {
    assert.deepEqual(LEVELS.map((l) => twodsixDifficulty(l, DIFFICULTIES.CE).key), ["Easy", "Average", "Difficult", "Formidable", "Impossible"]);
    assert.ok(LEVELS.every((l) => twodsixDifficulty(l, DIFFICULTIES.CE).exact));
  });

  test("in the AC list the same names carry other DMs: Average (DM 0) is AC's Simple, Formidable (−6) AC's VeryDifficult", () => {
    assert.deepEqual(LEVELS.map((l) => twodsixDifficulty(l, DIFFICULTIES.AC).key), ["Routine", "Simple", "Average", "VeryDifficult", "Formidable"]);
    assert.deepEqual(twodsixDifficulty("easy", DIFFICULTIES.AC), { key: "Routine", mod: 2, exact: false });
  });

  test("CEL and CU lack some levels: the nearest DM, never an easier one on a tie", () => {
    assert.deepEqual(twodsixDifficulty("easy", DIFFICULTIES.CEL), { key: "Routine", mod: 2, exact: false });
    assert.deepEqual(twodsixDifficulty("impossible", DIFFICULTIES.CEL), { key: "Formidable", mod: -6, exact: false });
    assert.deepEqual(twodsixDifficulty("impossible", DIFFICULTIES.CU), { key: "Formidable", mod: -6, exact: false });
    // A tie (−3 between VeryDifficult −4 and Difficult −2) goes to the harder one.
    assert.equal(twodsixDifficulty("difficult", { Difficult: { mod: -1 }, VeryDifficult: { mod: -3 } }).key, "VeryDifficult");
  });

  test("Nomad and CD lists are compressed: every harder level lands on their hardest entries by DM", () => {
    for (const list of [DIFFICULTIES.Nomad, DIFFICULTIES.CD]) {
      assert.deepEqual(LEVELS.map((l) => twodsixDifficulty(l, list).key), ["Easy", "Average", "Formidable", "Impossible", "Impossible"]);
    }
  });

  test("the list in use is CONFIG.TWODSIX.DIFFICULTIES[difficultyListUsed]", () => {
    const config = { TWODSIX: { DIFFICULTIES } };
    assert.equal(difficultiesInUse(config, (k) => (k === "difficultyListUsed" ? "AC" : null)), DIFFICULTIES.AC);
    assert.equal(difficultiesInUse(config, () => undefined), DIFFICULTIES.CE);
    assert.equal(difficultiesInUse({}, () => "AC"), null);
    assert.equal(difficultiesInUse(config, () => "Homebrew"), null);
  });

  test("a level the select does not offer is never chosen", () => {
    assert.equal(twodsixDifficulty("average", DIFFICULTIES.CE, ["Routine", "Difficult"]).key, "Difficult");
    assert.equal(LEVEL_DMS.formidable, DIFFICULTIES.CE.Formidable.mod);
  });
});

describe("twodsix throw dialog", () => {
  test("the dialog gets the difficulty of the list in use by DM and the asset added to Other", () => {
    const d = dialogStub(DIFFICULTIES.AC, { other: "1" });
    assert.deepEqual(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.AC, ruling: ruling(), localize }), { difficulty: "VeryDifficult", dm: 2 });
    assert.equal(d.select.value, "VeryDifficult", "AC's Formidable is DM −8: by name the task would be two DMs harder");
    assert.equal(d.input.value, "3", "the player's own +1 stays, the asset +2 is added");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.Prefilled .*"difficulty":"VeryDifficult \(\u22126\)".*"dm":"\+2".*"device":"Image intensifier"/);
  });

  test("only twodsix's throw dialog is touched: the request-roll dialog and other DialogV2s are not", () => {
    assert.equal(isThrowDialog(dialogStub(DIFFICULTIES.CE).element), true);
    for (const kind of ["request", "other"]) {
      const d = dialogStub(DIFFICULTIES.CE, { kind });
      assert.equal(isThrowDialog(d.element), false);
      assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), localize }), null);
      assert.equal(d.select.value, "Average");
    }
  });

  test("a re-render of the same element is not filled twice", () => {
    const d = dialogStub(DIFFICULTIES.CE);
    prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), localize });
    assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), localize }), null);
    assert.equal(d.input.value, "2");
  });

  test("a task the bridge does not allow leaves the dialog alone and says so", () => {
    const d = dialogStub(DIFFICULTIES.CE);
    assert.deepEqual(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling({ allowed: false, modifier: null, difficulty: null }), localize }), { blocked: true });
    assert.equal(d.select.value, "Average");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.NoLoS/);
  });

  test("rulings of other rulesets are not fed to twodsix", () => {
    assert.equal(twodsixAdjustments({ ruleset: "infinity-n4", allowed: true, modifier: -3 }, DIFFICULTIES.CE), null);
    const d = dialogStub(DIFFICULTIES.CE);
    assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: { ruleset: "gurps-4e", allowed: true, modifier: -4 }, localize }), null);
  });
});
