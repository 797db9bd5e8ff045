"""Rules over arrays (bridge/core/rules/effects.py): the reductions over a line's crossings, and the rulesets'
line rules at the edges of their tables (range bands), against the per-pair ruleset."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bridge.core.rules import RULESETS
from bridge.core.rules.effects import LineInputs, reduce_crossings, zone_classes
from bridge.core.scene import Scene
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneState

from ..shapes import rect, region, token
from ..test_visibility_properties import plain_rulings


def _lines(starts: list[int], codes: list[int]) -> LineInputs:
    n = len(starts) - 1
    return LineInputs(
        src=np.zeros(n, dtype=np.intp),
        dst=np.ones(n, dtype=np.intp),
        starts=np.array(starts, dtype=np.intp),
        codes=np.array(codes, dtype=np.intp),
        walled=np.zeros(n, dtype=bool),
    )


def test_reductions_over_crossings_leave_lines_without_any_at_the_identity() -> None:
    """Each line reduces its own crossings only — lines with none (first, between, last) take the identity."""
    # Zones 0 and 1; line 0 none, line 1 zone 0 into + zone 1 through, line 2 none, line 3 zone 1 from, line 4 none.
    lines = _lines([0, 0, 2, 2, 3, 3], [4 * 0 + 1, 4 * 1 + 3, 4 * 1 + 0])
    table = np.array([[1, 2, 4, 8], [16, 32, 64, 128]], dtype=np.int64)
    classes = np.array([0, 1], dtype=np.intp)
    assert reduce_crossings(lines, classes, table, np.bitwise_or, 0).tolist() == [0, 2 | 128, 0, 16, 0]
    assert reduce_crossings(lines, classes, table, np.add, 0).tolist() == [0, 130, 0, 16, 0]
    assert reduce_crossings(lines, classes, -table, np.minimum, 0).tolist() == [0, -128, 0, -16, 0]
    assert reduce_crossings(_lines([0, 0], []), classes, table, np.add, 7).tolist() == [7]


def test_zones_of_one_type_and_parameters_share_a_class() -> None:
    """Zone classes group zones by the key a ruleset reads (type and parameters), numbered in first-seen order."""
    zones = [
        region("a", rect(0, 0, 10, 10), zone="smoke"),
        region("b", rect(0, 0, 10, 10), zone="woods"),
        region("c", rect(0, 0, 10, 10), zone="smoke"),
    ]
    numbers, first = zone_classes(zones, lambda r: r.zone.type if r.zone else "")
    assert numbers.tolist() == [0, 1, 0] and [r.id for r in first] == ["a", "b"]


def _traveller(distances_m: list[float], traits: list[str], environment: dict[str, Any]) -> SceneState:
    """An observer at the origin and one target per distance along x (10 m a square of 100 px)."""
    tokens = [token("o", 0, 0, traits=traits)]
    tokens += [token(f"t{k}", d * 10, 0) for k, d in enumerate(distances_m)]
    scene = Scene.model_validate(
        {
            "id": "s",
            "grid": {"size": 100, "distance": 10, "units": "m"},
            "rules": {"ruleset": "traveller"},
            "tokens": tokens,
            "environment": environment,
        }
    )
    return SceneState(scene, RULESETS["traveller"])


@pytest.mark.parametrize(
    ("device", "short"), [("la-goggles", 100.0), ("image-intensifier", 250.0), ("thermal-viewer", 400.0)]
)
def test_traveller_range_bands_on_their_bounds_equal_the_ruleset(device: str, short: float) -> None:
    """On each band's bound (exactly ½, ¼ … of short range, exactly 2×, 4× …; bounds are inclusive) and just
    beyond, the verdicts over arrays equal the per-pair ruleset's, at night and by day."""
    distances = [short * 2.0**k for k in range(-10, 4)] + [short * 2.0**k + 0.5 for k in range(-3, 4)]
    distances += [0.5, short / 1024 - 0.01]
    seen: set[int | None] = set()
    for environment in ({}, {"light": 2}, {"light": 3, "weather": "poor"}):
        state = _traveller(distances, [device], environment)
        engine = SceneVisibility(state, action="observation")
        plain = plain_rulings(state, "observation", False)
        verdicts = {pair: engine.verdict(*pair) for pair in plain}
        assert verdicts == {pair: (r.allowed, r.modifier) for pair, r in plain.items()}
        seen |= {r.modifier for r in plain.values()}
    assert {-10, -5, -1, 1, 2} <= seen  # the bands are exercised
