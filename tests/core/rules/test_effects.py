"""Rules over arrays (bridge/core/rules/effects.py): the reductions over a line's crossings, and the rulesets'
line rules at the edges of their tables (range bands), against the per-pair ruleset."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.core.rules import RULESETS
from bridge.core.rules.effects import EffectTable, LineInputs, reduce_crossings, zone_classes
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


def _table(counts: Any, blocks: Any, value: Any, own: int = 0) -> EffectTable:
    """A table over zone types ``a`` and ``b`` from ``[observer][type][kind]`` lists."""
    return EffectTable.of(
        {"a": 0, "b": 1},
        np.array(counts, dtype=bool),
        np.array(blocks, dtype=bool),
        np.array(value, dtype=np.int64),
        own,
        True,
    )


def _plain_reduce(table: EffectTable, lines: LineInputs, observers: list[int], types: list[str]) -> list[Any]:
    """The reduction written out: per line, the counted crossing of lowest rank (a block, then the lowest MOD),
    the first among equals; a zone of a type the table does not know never counts."""
    found = []
    for k, observer in enumerate(observers):
        best: tuple[int, int] | None = None
        for at, code in enumerate(lines.codes[lines.starts[k] : lines.starts[k + 1]].tolist()):
            t = table.zone_types.get(types[code // 4])
            if t is None or not table.counts[observer, t, code % 4]:
                continue
            rank = -(1 << 40) if table.blocks[observer, t, code % 4] else int(table.value[observer, t, code % 4])
            if best is None or rank < best[0]:
                best = (rank, at)
        blocked = bool(lines.walled[k]) or (best is not None and best[0] == -(1 << 40))
        modifier = 0 if blocked else (best[0] if best is not None else 0) + table.own_mod
        found.append((not blocked, modifier, -1 if best is None else best[1]))
    return found


def test_a_lines_verdict_is_its_first_crossing_of_lowest_rank() -> None:
    """The effect table's reduction: a block beats any MOD, and the lowest MOD applies (the first of equals).

    A crossing that does not count or of a foreign zone type never applies, a wall blocks, and lines without crossings
    take the action's own MOD.
    """
    # Observer 0: type a counts -3 into / -6 through, blocks within; type b's from does not count.
    # Observer 1: nothing counts.
    table = _table(
        [[[0, 1, 1, 1], [0, 1, 1, 1]], [[0] * 4, [0] * 4]],
        [[[0, 0, 1, 0], [0, 0, 0, 0]], [[0] * 4, [0] * 4]],
        [[[0, -3, 0, -6], [0, -6, -3, -3]], [[0] * 4, [0] * 4]],
        own=-1,
    )
    zones = ["a", "b", "a", "woods"]  # zone 3: a type the table does not know
    codes = [
        [4 * 0 + 1, 4 * 1 + 1, 4 * 2 + 3],  # -3, -6, -6: the first -6 (position 1)
        [4 * 0 + 3, 4 * 0 + 2],  # -6, then a block: the block
        [4 * 1 + 0, 4 * 3 + 3],  # not counted, foreign: none
        [],  # none
        [4 * 1 + 2],  # -3, but a wall
        [4 * 0 + 1],  # observer 1: nothing counts
    ]
    starts = np.concatenate(([0], np.cumsum([len(c) for c in codes])))
    lines = LineInputs(
        src=np.zeros(6, dtype=np.intp),
        dst=np.ones(6, dtype=np.intp),
        starts=starts.astype(np.intp),
        codes=np.array([c for line in codes for c in line], dtype=np.intp),
        walled=np.array([0, 0, 0, 0, 1, 0], dtype=bool),
    )
    observers = [0, 0, 0, 0, 0, 1]
    _, columns = table.zone_columns(zones, str)
    verdicts = table.reduce(lines.starts, lines.codes, np.array(observers, dtype=np.intp), columns, lines.walled)
    found = list(zip(verdicts.allowed.tolist(), verdicts.modifier.tolist(), verdicts.applied.tolist(), strict=True))
    assert found == [(True, -7, 1), (False, 0, 1), (True, -1, -1), (True, -1, -1), (False, 0, 0), (True, -1, -1)]
    assert found == _plain_reduce(table, lines, observers, zones)


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_the_reduction_of_random_tables_and_lines_is_the_plain_one(data: st.DataObject) -> None:
    """On random tables and lines, the compiled reduction equals :func:`_plain_reduce` line by line.

    Tables of 2 observers, 2 types and values -12..3; lines of 0-6 crossings of 4 zones, one of a foreign type.
    """
    bits = st.lists(st.booleans(), min_size=16, max_size=16)
    shape = (2, 2, 4)
    counts = np.array(data.draw(bits)).reshape(shape)
    blocks = np.array(data.draw(bits)).reshape(shape)
    value = np.array(data.draw(st.lists(st.integers(-12, 3), min_size=16, max_size=16))).reshape(shape)
    table = _table(counts, blocks, value, own=data.draw(st.integers(-3, 3)))
    zones = ["a", "b", "smoke", "a"]
    codes = data.draw(st.lists(st.lists(st.integers(0, 15), max_size=6), max_size=8))
    observers = data.draw(st.lists(st.integers(0, 1), min_size=len(codes), max_size=len(codes)))
    walled = data.draw(st.lists(st.booleans(), min_size=len(codes), max_size=len(codes)))
    lines = LineInputs(
        src=np.zeros(len(codes), dtype=np.intp),
        dst=np.ones(len(codes), dtype=np.intp),
        starts=np.concatenate(([0], np.cumsum([len(c) for c in codes]))).astype(np.intp),
        codes=np.array([c for line in codes for c in line], dtype=np.intp),
        walled=np.array(walled, dtype=bool),
    )
    _, columns = table.zone_columns(zones, str)
    verdicts = table.reduce(lines.starts, lines.codes, np.array(observers, dtype=np.intp), columns, lines.walled)
    found = list(zip(verdicts.allowed.tolist(), verdicts.modifier.tolist(), verdicts.applied.tolist(), strict=True))
    assert found == _plain_reduce(table, lines, observers, zones)


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
    """On each range band's bound and just beyond, verdicts over arrays equal the per-pair ruleset's, night and day.

    The bounds: exactly ½, ¼ … of short range, exactly 2×, 4× …; bounds are inclusive.
    """
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
