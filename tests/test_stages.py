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


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="scheduler counters come from Linux /proc")
def test_a_threads_scheduler_counters_count_its_cpu_and_its_wake_ups() -> None:
    """`sched` reads another thread's CPU time and times put on a core: both grow while it works and wakes up."""
    import threading
    import time

    go, done, leave = threading.Event(), threading.Event(), threading.Event()
    ids: list[stages.ThreadIds] = []

    def work() -> None:
        ids.append(stages.this_thread())
        go.wait()
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass
        done.set()
        leave.wait()

    thread = threading.Thread(target=work)
    thread.start()
    while not ids:
        time.sleep(0.001)
    before = stages.sched(ids[0])
    go.set()
    done.wait()
    after = stages.sched(ids[0])
    leave.set()
    thread.join()
    assert before is not None and after is not None
    assert after[0] - before[0] >= 20_000_000  # 20 ms of CPU, in ns
    assert after[2] > before[2]  # woken at least once


async def test_the_hand_offs_carry_the_receiving_threads_counters(traced: Path, bridge: str) -> None:
    """A traced frame carries the receiving thread's scheduler counters at both hand-offs and once written."""
    data = scene(regions=[], tokens=[token("a", 0, 400), token("t", 1000, 400)])
    async with connect(bridge) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": SECRET}))
        await ws.recv()
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": data}))
        await ws.recv()
        await ws.send(json.dumps({"type": "ping", "id": "after"}))
        await ws.recv()
    (record,) = [json.loads(line) for line in traced.read_text().splitlines() if '"q"' in line]
    assert set(record["sched"]) == {"submitted", "worker", "encoded", "loop", "written"}
    if Path("/proc/self/task").is_dir():
        assert all(len(counters) == 3 for counters in record["sched"].values())
        # the loop's counters never go back between the hand-over and its arrival
        assert all(a <= b for a, b in zip(record["sched"]["encoded"], record["sched"]["loop"], strict=True))
