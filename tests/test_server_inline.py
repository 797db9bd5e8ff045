"""A world's cheap token moves are ruled on the event loop, without the hop to the world's worker: the same answers,
only when the moves have proved cheap, and never with ``--inline-ms 0``. Real bridges on port 0, real WebSockets."""

from __future__ import annotations

import gc
import itertools
import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bench.visibility_bench import make_scene
from bridge.config import BridgeConfig
from bridge.server import BridgeState, run_bridge
from tests.test_server_isolation import SECRET as SERVE_SECRET
from tests.test_server_isolation import serve

SECRET = "inline-secret"
WORLD = "w-inline"


@asynccontextmanager
async def bridge(tmp_path: Path, inline_ms: float) -> AsyncIterator[tuple[ClientConnection, BridgeState]]:
    """A real bridge (no log) and one client of WORLD, hello said; yields the client and the bridge's state."""
    states: list[BridgeState] = []
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False, inline_ms=inline_ms)
    async with run_bridge(config, extend=lambda _app, state: states.append(state)) as (host, port):  # noqa: SIM117
        async with connect(f"ws://{host}:{port}/ws", max_size=None) as ws:  # (the port is known only inside)
            await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": WORLD, "secret": SECRET}))
            assert json.loads(await ws.recv())["type"] == "welcome"
            yield ws, states[0]


async def answers_until_patched(ws: ClientConnection, patch_id: str) -> list[dict[str, Any]]:
    """Every frame up to and including the ``scene.patched`` of ``patch_id`` (the pushes come after it)."""
    frames = []
    while True:
        frame = json.loads(await ws.recv())
        frames.append(frame)
        if frame.get("type") == "scene.patched" and frame["id"] == patch_id:
            break
    frames.append(json.loads(await ws.recv()))  # the watch's push of this move
    return frames


async def play(ws: ClientConnection, state: BridgeState | None, moves: int) -> tuple[list[Any], list[int]]:
    """Sync a 12 × 20 scene, watch it (full detail), then move its tokens one at a time, each token several times;
    returns every answer and, per move, how many jobs the world's worker had been handed once it was answered (with
    the bridge's ``state``)."""
    scene = make_scene(12, 20, seed=3)
    data = scene.model_dump(mode="json", exclude_none=True)
    await ws.send(json.dumps({"type": "scene.sync", "id": "sync", "scene": data}))
    frames: list[Any] = [json.loads(await ws.recv())]
    await ws.send(json.dumps({"type": "watch", "id": "w", "scene": scene.id, "action": "bs-attack", "detail": "full"}))
    frames += [json.loads(await ws.recv()), json.loads(await ws.recv())]
    rng = random.Random(4)
    tokens = {token["id"]: token for token in data["tokens"]}
    handed = []
    for i in range(moves):
        token_id = sorted(tokens)[i % len(tokens)]
        tokens[token_id] = {**tokens[token_id], "x": rng.randint(0, 4000), "y": rng.randint(0, 4000)}
        patch = {"type": "scene.patch", "id": f"m{i}", "scene": scene.id, "upsert": {"tokens": [tokens[token_id]]}}
        await ws.send(json.dumps(patch))
        frames += await answers_until_patched(ws, f"m{i}")
        if state is not None:
            handed.append(state.workers[WORLD].handed)
    return frames, handed


async def test_cheap_moves_are_ruled_on_the_loop_with_the_same_answers_as_on_the_worker(tmp_path: Path) -> None:
    """Once each token has moved cheaply, moves are no longer handed to the world's worker; answers are unchanged.

    The same game against a bridge with ``inline_ms=0``: every move is handed to the worker there, and every answer
    of both bridges — scene.patched, each move's push with its rulings — is the same. The collector is held during
    the moves: its pauses count as a move's CPU time, and one over the budget would rightly send moves back.
    """
    gc.collect()
    gc.disable()
    try:
        async with bridge(tmp_path / "inline", 5.0) as (ws, state):
            inline_frames, inline_handed = await play(ws, state, 48)
        async with bridge(tmp_path / "worker", 0) as (ws, state):
            worker_frames, worker_handed = await play(ws, state, 48)
    finally:
        gc.enable()
    assert inline_frames == worker_frames
    assert [frame["type"] for frame in inline_frames[-2:]] == ["scene.patched", "annotations"]
    assert all(b - a == 1 for a, b in itertools.pairwise(worker_handed))  # every move: a job
    # 12 tokens, 8 moves of history: from the 13th move on, every token has moved once, cheaply.
    assert inline_handed[-1] == inline_handed[12], inline_handed
    assert inline_handed[11] - inline_handed[0] == 11  # each token's first move went to the worker


async def test_moves_costlier_than_the_budget_stay_on_the_worker(tmp_path: Path) -> None:
    """With a budget below what any move costs (a microsecond of CPU), every move is still handed to the worker."""
    async with bridge(tmp_path, 0.001) as (ws, state):
        _frames, handed = await play(ws, state, 30)
    assert all(b - a == 1 for a, b in itertools.pairwise(handed)), handed


async def test_sightline_serve_takes_inline_ms_and_its_traces_say_where_each_move_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sightline serve` rules moves on the loop by default and never with `--inline-ms 0`, as its stage traces show."""
    ran_here = []
    for options in ([], ["--inline-ms", "0"]):
        stages = tmp_path / f"stages{len(options)}.jsonl"
        monkeypatch.setenv("SIGHTLINE_STAGES", str(stages))  # (serve's process inherits it)
        with serve(tmp_path, *options) as (_process, url):
            async with connect(url, max_size=None) as ws:
                await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": WORLD, "secret": SERVE_SECRET}))
                assert json.loads(await ws.recv())["type"] == "welcome"
                await play(ws, None, 36)
        traces = [json.loads(line) for line in stages.read_text().splitlines()]
        moves = [trace for trace in traces if str(trace["id"]).startswith("m")]
        assert len(moves) == 36
        ran_here.append(sum(1 for trace in moves if "inline" in {mark[0] for mark in trace["marks"]}))
    assert ran_here[0] >= 36 - 12 - 8 and ran_here[1] == 0, ran_here
