"""Stage marks (bridge.stages): a traced bridge writes each frame's path, stage by stage, once its answer is out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from bridge import stages
from bridge.config import BridgeConfig
from bridge.server import run_bridge
from tests.scenes import rect_region, scene, token

SECRET = "s"


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "stages.jsonl"
    stages.configure(str(path))
    try:
        yield path
    finally:
        stages.configure(None)


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False)
    async with run_bridge(config) as (host, port):
        yield f"ws://{host}:{port}/ws"


async def test_a_watched_patch_is_stamped_at_every_stage_in_order(traced: Path, bridge: str) -> None:
    """A patch that moves a watched token leaves one record with every stage of its path, in time order."""
    data = scene(
        regions=[rect_region("r-low", "low", 400, 350, 200, 200)],
        tokens=[token("a", 0, 400), token("t", 1000, 400)],
    )
    async with connect(bridge) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": SECRET}))
        await ws.recv()
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": data}))
        await ws.recv()
        await ws.send(json.dumps({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack", "detail": "brief"}))
        await ws.recv()
        await ws.recv()
        move = {"type": "scene.patch", "id": "move", "scene": "s1", "upsert": {"tokens": [token("t", 1000, 1500)]}}
        await ws.send(json.dumps(move))
        assert {json.loads(await ws.recv())["type"] for _ in range(2)} == {"scene.patched", "annotations"}
        await ws.send(json.dumps({"type": "ping", "id": "after"}))  # the writer is past the patch's frames
        await ws.recv()
    records = [json.loads(line) for line in traced.read_text().splitlines()]
    (record,) = [r for r in records if r["id"] == "move"]
    assert not [r for r in records if r["id"] == "after"]  # a ping, answered on the loop: not traced
    names = [mark[0] for mark in record["marks"]]
    expected = ["read", "submitted", "worker", "parsed", "validated", "patched", "updated", "built"]
    expected += ["answered", "encoded", "loop", "queued", "written"]
    assert sorted(names, key=expected.index) == expected
    worker_side = [mark for mark in record["marks"] if mark[0] in expected[2:10]]
    assert [mark[1] for mark in worker_side] == sorted(mark[1] for mark in worker_side)  # wall clock, in order
    assert len({mark[3] for mark in worker_side}) == 1  # one thread: the world's worker
