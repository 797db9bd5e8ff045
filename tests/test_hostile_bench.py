"""bench/hostile.py's costliest watch is what the default limits let through, and no less; its client
waits out the message rate instead of waiting forever for a pong the bridge dropped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from websockets.asyncio.client import connect

from bench.hostile import DEFAULTS, drain_until_pong, hello, watch_scene
from bridge.config import BridgeConfig
from bridge.server import run_bridge
from bridge.session import Session, Worlds, watch_pairs


def test_the_hostile_watch_is_at_the_default_watch_limits() -> None:
    """The bench's watch scene is accepted and sits at the default --max-watch-pairs and --max-watch-tests.

    Its pairs are within --max-watch-pairs, and its segment tests (pairs × (vertices + walls), as the bridge counts
    them) are within 1 % below --max-watch-tests.
    """
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


async def test_a_ping_dropped_for_the_rate_is_sent_again(tmp_path: Path) -> None:
    """A ping dropped for the rate is sent again: the bench's client gets its pong instead of waiting for ever.

    A fast attack spends its burst and its own ping is dropped (rate-limited, with the ping's id); the client once
    waited for ever there (the circles row).
    """
    config = BridgeConfig(
        host="127.0.0.1", port=0, data_dir=tmp_path, secret="s", messages_per_second=20.0, message_burst=3
    )
    async with run_bridge(config) as (host, port), connect(f"ws://{host}:{port}/ws") as ws:
        await hello(ws, "w", "s")
        for n in range(3):  # the burst, spent
            await ws.send(json.dumps({"type": "unwatch", "id": f"u{n}", "watch": "none"}))
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        answers: dict[str, int] = {}
        await asyncio.wait_for(drain_until_pong(ws, "p", answers), timeout=10)
        assert answers.get("rate-limited", 0) >= 1
