"""The one palette (``bridge/palette.json``): every zone type has a colour, and the demo's SVG and the
Foundry overlay (``overlay-draw.js``, run in Node) draw with exactly its colours — the log map's are
checked in Chromium (``tests/log/test_pages_browser.py``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bridge.core.rules.data_files import vocabulary
from bridge.core.scene import Scene
from bridge.palette import OTHER, PALETTE, VERDICTS, ZONES, load_palette, zone_colour
from bridge.session import welcome
from bridge.svg import scene_svg

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "foundry-module"


def test_every_zone_type_of_every_ruleset_has_a_colour() -> None:
    """No zone type of the vocabulary falls back to the 'other' grey."""
    for ruleset, row in vocabulary().rulesets.items():
        for zone in row.zones:
            assert zone in ZONES, f"{ruleset}: {zone} has no colour in bridge/palette.json"
    assert zone_colour("a-future-zone") == OTHER


def test_a_bad_palette_is_refused_naming_the_colour() -> None:
    """A colour that is not #rrggbb, or a missing verdict, is refused with the name at fault."""
    good = json.loads((ROOT / "bridge" / "palette.json").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="low is not a #rrggbb colour"):
        load_palette(json.dumps({**good, "zones": {"low": "blue"}}))
    with pytest.raises(ValueError, match="verdicts must be"):
        load_palette(json.dumps({**good, "verdicts": {"clear": "#000000"}}))


def test_demo_svg_draws_zones_and_lines_in_the_palette_colours() -> None:
    """Each zone path of the SVG is filled with its type's palette colour; each line with its verdict's."""
    scene = Scene.model_validate(
        {
            "id": "s",
            "name": "Yard",
            "grid": {"size": 100, "distance": 1, "units": "in"},
            "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": "en"},
            "regions": [
                {
                    "id": f"r-{zone}",
                    "name": zone,
                    "shapes": [{"type": "rectangle", "x": i * 200, "y": 0, "width": 150, "height": 150}],
                    "zone": {"type": zone},
                }
                for i, zone in enumerate(("low", "poor", "zero", "white-noise", "smoke", "eclipse"))
            ],
            "walls": [],
            "tokens": [],
        }
    )
    line = {"start": {"x": 0, "y": 0, "z": 0}, "end": {"x": 500, "y": 0, "z": 0}}
    rulings = [
        {"actor": "a", "target": "b", "allowed": True, "modifier": -3, "line": line},
        {"actor": "a", "target": "b", "allowed": False, "modifier": None, "line": line},
        {"actor": "a", "target": "b", "allowed": True, "modifier": 0, "line": line},
    ]
    svg = scene_svg(scene, rulings)
    fills = dict(re.findall(r'data-zone="([^"]+)" d="[^"]*" fill="(#[0-9a-f]{6})"', svg))
    assert fills == {zone: ZONES[zone] for zone in fills} and len(fills) == 6
    strokes = re.findall(r'<g class="sight-line result-(\w+)"[^>]*><line [^>]*stroke="(#[0-9a-f]{6})"', svg)
    assert strokes == [(result, VERDICTS[result]) for result in ("penalised", "blocked", "clear")]


def test_the_overlay_reads_the_same_file_and_draws_the_same_colours() -> None:
    """overlay-draw.js colours every zone type and verdict as the bridge's palette says, from the same file.

    Run in Node with the module's palette.json; that palette.json is bridge/palette.json itself.
    """
    node = shutil.which("node")
    assert node is not None, "Node is needed for the module (foundry-module/package.json)"
    assert (MODULE / "palette.json").resolve() == (ROOT / "bridge" / "palette.json").resolve()
    script = (
        "import { readFileSync } from 'node:fs';"
        "import { usePalette, VERDICT_COLORS } from './scripts/geometry.js';"
        "import { buildOverlayModel } from './scripts/overlay-draw.js';"
        "usePalette(JSON.parse(readFileSync('palette.json', 'utf8')));"
        "const types = JSON.parse(process.argv[1]);"
        "const shape = { type: 'rectangle', x: 0, y: 0, width: 10, height: 10 };"
        "const regions = types.map((type) => ({ id: type, zone: { type }, shapes: [shape] }));"
        "const model = buildOverlayModel({ regions });"
        "const hex = (c) => '#' + c.toString(16).padStart(6, '0');"
        "console.log(JSON.stringify({ zones: Object.fromEntries(model.zones.map((z) => [z.id, hex(z.color)])),"
        " verdicts: Object.fromEntries(Object.entries(VERDICT_COLORS).map(([k, c]) => [k, hex(c)])) }));"
    )
    types = [*ZONES, "a-future-zone"]
    done = subprocess.run(
        [node, "--input-type=module", "-e", script, json.dumps(types)],
        cwd=MODULE,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    drawn = json.loads(done.stdout)
    assert drawn["zones"] == {**dict(PALETTE["zones"]), "a-future-zone": OTHER}
    assert drawn["verdicts"] == dict(VERDICTS)


def test_welcome_carries_the_palette() -> None:
    """The bridge's welcome carries bridge/palette.json's colours.

    So a module whose palette.json could not be read still draws its overlay in them.
    """
    sent = welcome().palette
    assert sent is not None
    assert (sent.zones, sent.other, sent.verdicts) == (dict(ZONES), OTHER, dict(VERDICTS))
