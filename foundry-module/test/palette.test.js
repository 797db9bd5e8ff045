// Sightline's one palette: the module ships palette.json, which in the repository is bridge/palette.json
// itself (a link), and the overlay draws every zone type and verdict in its colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RULESETS } from "../scripts/vocabulary.js";
import { VERDICT_COLORS, ZONE_COLORS, hexColor, usePalette, zoneColor } from "../scripts/geometry.js";
import { buildOverlayModel } from "../scripts/overlay-draw.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const palette = JSON.parse(readFileSync(join(root, "palette.json"), "utf8"));

test("the module's palette.json is the bridge's own file, not a copy", () => {
  assert.equal(realpathSync(join(root, "palette.json")), realpathSync(join(root, "..", "bridge", "palette.json")));
});

test("the overlay draws each zone type of every ruleset, and each verdict, in the palette's colour", () => {
  assert.equal(usePalette(palette), true);
  for (const [ruleset, spec] of Object.entries(RULESETS)) {
    for (const type of Object.keys(spec.zones)) {
      assert.ok(type in palette.zones, `${ruleset}: ${type} has no colour in palette.json`);
      const model = buildOverlayModel({ regions: [{ id: "r", zone: { type }, shapes: [{ type: "rectangle", x: 0, y: 0, width: 10, height: 10 }] }] });
      assert.equal(model.zones[0].color, hexColor(palette.zones[type]), `${type}`);
    }
  }
  for (const verdict of ["blocked", "penalised", "clear", "pending"]) assert.equal(VERDICT_COLORS[verdict], hexColor(palette.verdicts[verdict]));
  assert.equal(zoneColor("a-future-zone"), hexColor(palette.other));
});

test("a palette missing colours leaves grey, never undefined", () => {
  assert.equal(usePalette({ zones: { low: "blue" } }), false);
  assert.equal(ZONE_COLORS.low, undefined);
  assert.equal(zoneColor("low"), 0x9e9e9e);
  assert.equal(VERDICT_COLORS.clear, 0x9e9e9e);
  usePalette(palette);
});
