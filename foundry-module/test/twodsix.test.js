/**
 * The twodsix feed against a stub of the throw dialog twodsix opens with DialogV2.wait
 * (static/templates/chat/throw-dialog.hbs: `.roll-settings` holding a `difficulty` select keyed by
 * the list in use and an `rollModifiers.other` number input) and its six difficulty lists
 * (src/module/config.js, `DIFFICULTIES`), copied number for number.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  LEVEL_DMS,
  difficultiesAsTargets,
  difficultiesInUse,
  isObservationThrow,
  isThrowDialog,
  observationSkillNames,
  prefillThrowDialog,
  throwSkill,
  twodsixAdjustments,
  twodsixDifficulty,
} from "../scripts/systems/twodsix.js";

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
 * The rendered dialog: twodsix's throw dialog (`kind: "throw"`) of `skill` (its skill select: the
 * actor's skills as "Name (level)" keyed by uuid; `skill: null`, a characteristic throw, has none), its GM
 * request-roll dialog (`other`, no `rollModifiers.other`) or any other DialogV2.
 */
function dialogStub(difficulties, { other = "0", kind = "throw", skill = "Recon (2)" } = {}) {
  const notes = [];
  const select = { value: "Average", options: Object.keys(difficulties).map((value) => ({ value })) };
  const input = { value: other };
  const settings = { prepend: (p) => notes.push(p.textContent) };
  const skills = ["Medic (1)", skill ?? "Admin (0)", "Gun Combat (2)"].map((text, i) => ({ value: `Actor.a1.Item.s${i}`, text }));
  const skillSelect = { value: "Actor.a1.Item.s1", options: skills };
  const bySelector =
    kind === "throw"
      ? {
          '.roll-settings select[name="difficulty"]': select,
          '.roll-settings input[name="rollModifiers.other"]': input,
          ".roll-settings": settings,
          ...(skill === null ? {} : { '.roll-settings select[name="rollModifiers.selectedSkill"]': skillSelect }),
        }
      : kind === "request"
        ? { '.roll-settings select[name="difficulty"]': select, ".roll-settings": settings }
        : {};
  const element = { dataset: {}, ownerDocument: { createElement: () => ({}) }, querySelector: (sel) => bySelector[sel] ?? null };
  return { element, select, input, notes };
}
const WORDS = { "SIGHTLINE.Trait.image-intensifier": "Image intensifier" };
// Foundry's localize/format: a known key gives its text; an unknown one comes back as the key itself.
const localize = (k, data) => (data ? `${k} ${JSON.stringify(data)}` : WORDS[k] ?? k);
/** The world's observation skills (the setting's default, as the adapter reads it). */
const SKILLS = observationSkillNames("Recon, Observation, Sensors, Electronics (Sensors)");
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

describe("twodsix difficulty as a target number (its difficultiesAsTargetNumber setting)", () => {
  test("a throw needs the list's Average target minus the level's DM: AC's Average is 8+, as in CE", () => {
    // With targets, AC's names carry CE's numbers (Average 8+, Difficult 10+); by DM they would be 6+ and 8+.
    assert.deepEqual(LEVELS.map((l) => twodsixDifficulty(l, DIFFICULTIES.AC, undefined, true).key), ["Routine", "Average", "Difficult", "Formidable", "Impossible"]);
    assert.deepEqual(twodsixDifficulty("average", DIFFICULTIES.AC, undefined, true), { key: "Average", mod: -2, target: 8, exact: true });
    assert.deepEqual(LEVELS.map((l) => twodsixDifficulty(l, DIFFICULTIES.CE, undefined, true).key), ["Easy", "Average", "Difficult", "Formidable", "Impossible"]);
  });

  test("a list on another base keeps it: CEL's Average is 6+ either way, Difficult two steps above it", () => {
    for (const asTargets of [false, true]) assert.equal(twodsixDifficulty("average", DIFFICULTIES.CEL, undefined, asTargets).key, "Average");
    assert.deepEqual(twodsixDifficulty("difficult", DIFFICULTIES.CEL, undefined, true), { key: "Difficult", mod: -2, target: 8, exact: true });
  });

  test("where no target fits, the nearest, the higher on a tie; never easier than the ruling", () => {
    assert.deepEqual(twodsixDifficulty("formidable", DIFFICULTIES.CD, undefined, true), { key: "Impossible", mod: -4, target: 14, exact: true });
    assert.deepEqual(twodsixDifficulty("impossible", DIFFICULTIES.CD, undefined, true), { key: "Impossible", mod: -4, target: 14, exact: false });
    assert.equal(twodsixDifficulty("difficult", { Average: { mod: 0, target: 8 }, A: { mod: -1, target: 9 }, B: { mod: -3, target: 11 } }, undefined, true).key, "B");
  });

  test("the setting is read from twodsix; unreadable (an older twodsix), DMs", () => {
    assert.equal(difficultiesAsTargets((k) => k === "difficultiesAsTargetNumber"), true);
    assert.equal(difficultiesAsTargets(() => false), false);
    assert.equal(
      difficultiesAsTargets(() => {
        throw new Error("not a registered game setting");
      }),
      false,
    );
  });

  test("the dialog shows the target number the throw needs", () => {
    const d = dialogStub(DIFFICULTIES.AC);
    assert.deepEqual(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.AC, ruling: ruling({ difficulty: "difficult" }), skills: SKILLS, asTargets: true, localize }), { difficulty: "Difficult", dm: 2 });
    assert.equal(d.select.value, "Difficult");
    assert.match(d.notes[0], /"difficulty":"Difficult \(10\+\)"/);
  });
});

describe("twodsix: only observation throws", () => {
  test("the world's list reads as names; a dialog's skill is its chosen option without the level", () => {
    assert.deepEqual(observationSkillNames(" Recon, Electronics (Sensors) ,, "), ["recon", "electronics (sensors)"]);
    assert.deepEqual(observationSkillNames(undefined), []);
    assert.equal(throwSkill(dialogStub(DIFFICULTIES.CE, { skill: "Electronics (Sensors) (-3)" }).element), "Electronics (Sensors)");
    assert.equal(throwSkill(dialogStub(DIFFICULTIES.CE, { skill: null }).element), null);
    assert.equal(isObservationThrow(dialogStub(DIFFICULTIES.CE, { skill: "recon (0)" }).element, SKILLS), true);
  });

  test("a throw of another skill, or of a characteristic, is left as twodsix made it", () => {
    for (const skill of ["Medic (1)", "Gun Combat (2)", "Reconnaissance (1)", null]) {
      const d = dialogStub(DIFFICULTIES.CE, { skill, other: "1" });
      assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), skills: SKILLS, localize }), null, String(skill));
      assert.equal(d.select.value, "Average");
      assert.equal(d.input.value, "1");
      assert.deepEqual(d.notes, []);
    }
  });
});

describe("twodsix throw dialog", () => {
  test("the dialog gets the difficulty of the list in use by DM and the asset added to Other", () => {
    const d = dialogStub(DIFFICULTIES.AC, { other: "1" });
    assert.deepEqual(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.AC, ruling: ruling(), skills: SKILLS, localize }), { difficulty: "VeryDifficult", dm: 2 });
    assert.equal(d.select.value, "VeryDifficult", "AC's Formidable is DM −8: by name the task would be two DMs harder");
    assert.equal(d.input.value, "3", "the player's own +1 stays, the asset +2 is added");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.Prefilled .*"difficulty":"VeryDifficult \(\u22126\)".*"dm":"\+2".*"device":"Image intensifier"/);
  });

  test("only twodsix's throw dialog is touched: the request-roll dialog and other DialogV2s are not", () => {
    assert.equal(isThrowDialog(dialogStub(DIFFICULTIES.CE).element), true);
    for (const kind of ["request", "other"]) {
      const d = dialogStub(DIFFICULTIES.CE, { kind });
      assert.equal(isThrowDialog(d.element), false);
      assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), skills: SKILLS, localize }), null);
      assert.equal(d.select.value, "Average");
    }
  });

  test("a re-render of the same element is not filled twice", () => {
    const d = dialogStub(DIFFICULTIES.CE);
    prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), skills: SKILLS, localize });
    assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling(), skills: SKILLS, localize }), null);
    assert.equal(d.input.value, "2");
  });

  test("a task the bridge does not allow leaves the dialog alone and says so", () => {
    const d = dialogStub(DIFFICULTIES.CE);
    assert.deepEqual(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: ruling({ allowed: false, modifier: null, difficulty: null }), skills: SKILLS, localize }), { blocked: true });
    assert.equal(d.select.value, "Average");
    assert.match(d.notes[0], /SIGHTLINE\.Twodsix\.NoLoS/);
  });

  test("rulings of other rulesets are not fed to twodsix", () => {
    assert.equal(twodsixAdjustments({ ruleset: "infinity-n4", allowed: true, modifier: -3 }, DIFFICULTIES.CE), null);
    const d = dialogStub(DIFFICULTIES.CE);
    assert.equal(prefillThrowDialog({ element: d.element, difficulties: DIFFICULTIES.CE, ruling: { ruleset: "gurps-4e", allowed: true, modifier: -4 }, skills: SKILLS, localize }), null);
  });
});
