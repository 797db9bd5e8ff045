"""``bench.push_bench`` counts what a move changes in the moved token's pairs as a fresh engine would rule them."""

from __future__ import annotations

import random
from typing import Any

from bench.push_bench import changed_pairs
from bench.visibility_bench import make_scene, move_token, state_of
from bridge.core.visibility import SceneVisibility


def _said(ruling: Any) -> tuple[Any, ...]:
    return (ruling.allowed, ruling.modifier, tuple((c.region, c.zone, c.kind) for c in ruling.crossings))


def test_the_changed_pairs_count_matches_fresh_engines_before_and_after_each_move() -> None:
    """One long-lived engine counts the changed pairs as a fresh engine per scene version does, move by move.

    The same scene, seed and moves; no count exceeds the mover's pairs.
    """
    moves = 12
    row = changed_pairs(8, 12, moves)
    scene = make_scene(8, 12, seed=1)
    rng = random.Random(2)
    changed = verdict = pairs = 0
    for i in range(moves):
        token = rng.choice(scene.tokens).id
        old = SceneVisibility(state_of(scene), action="bs-attack").rulings()
        scene = move_token(scene, token, seed=i)
        new = SceneVisibility(state_of(scene), action="bs-attack").rulings()
        mover = [pair for pair in new if token in pair]
        pairs += len(mover)
        changed += sum(1 for pair in mover if _said(old[pair]) != _said(new[pair]))
        verdict += sum(1 for pair in mover if _said(old[pair])[:2] != _said(new[pair])[:2])
    assert row["mover_pairs"] == pairs / moves == 14
    assert row["changed"] == changed / moves and row["verdict_changed"] == verdict / moves
    assert 0 < row["verdict_changed"] <= row["changed"] <= row["mover_pairs"]
