"""bench/hostile.py's costliest watch is what the default limits let through, and no less."""

from __future__ import annotations

import json

from bench.hostile import DEFAULTS, watch_scene
from bridge.session import Session, Worlds, watch_pairs


def test_the_hostile_watch_is_at_the_default_watch_limits() -> None:
    """The bench's watch scene is accepted, its pairs are within --max-watch-pairs, and its segment tests
    (pairs × (vertices + walls), as the bridge counts them) are within 1 % below --max-watch-tests."""
    scene, tokens, _held = watch_scene()
    session = Session(Worlds(), offline=True)
    (synced,) = session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": scene}))
    assert synced.message.type == "scene.synced"  # type: ignore[attr-defined]
    assert session.world is not None
    state = session.world.scenes[scene["id"]]
    pairs = watch_pairs(state, None)
    tests = pairs * (state.vertices + len(state.scene.walls))
    assert pairs == tokens * (tokens - 1) <= DEFAULTS.max_watch_pairs
    assert 0.99 * DEFAULTS.max_watch_tests <= tests <= DEFAULTS.max_watch_tests
