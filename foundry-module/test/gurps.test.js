import { test } from "node:test";
import assert from "node:assert/strict";
import { applyToGurps, gurpsReason } from "../scripts/systems/gurps.js";
import { feedModifier } from "../scripts/systems/generic.js";

function gurpsStub() {
  const added = [];
  return { added, GURPS: { ModifierBucket: { addModifier: (mod, reason) => added.push([mod, reason]) } } };
}
const ruling = { allowed: true, modifier: -4, crossings: [{ region: "r1", zone: "darkness", kind: "into" }, { region: "r2", zone: "smoke", kind: "through" }] };

test("a penalised ruling goes into the Modifier Bucket with its reason", () => {
  const { added, GURPS } = gurpsStub();
  assert.equal(applyToGurps(GURPS, ruling), true);
  assert.deepEqual(added, [[-4, "Sightline: darkness, smoke (\u22124)"]]);
});

test("no modifier, a refused action or no Game Aid: nothing added", () => {
  const { added, GURPS } = gurpsStub();
  assert.equal(applyToGurps(GURPS, { ...ruling, modifier: 0 }), false);
  assert.equal(applyToGurps(GURPS, { ...ruling, allowed: false, modifier: null }), false);
  assert.equal(applyToGurps(undefined, ruling), false);
  assert.deepEqual(added, []);
});

test("the generic feed only touches GURPS when the system is gurps", () => {
  const { added, GURPS } = gurpsStub();
  assert.equal(feedModifier({ systemId: "dnd5e", globals: { GURPS }, ruling }), null);
  assert.equal(feedModifier({ systemId: "gurps", globals: { GURPS }, ruling }), "gurps");
  assert.equal(added.length, 1);
  assert.match(gurpsReason({ modifier: 2, crossings: [] }), /visibility \(\+2\)/);
});
