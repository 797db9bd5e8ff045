"""Worlds on one bridge do not wait for each other, a stop signal is obeyed mid-computation, queues are
bounded in bytes, large pushes are split, and a world's memory is given back once its clients leave.

The busy world's work is a ``watch`` on a scene of many tokens (seconds of CPU, tens of MB of
annotations): real work of the engine, not a sleep. These tests run real ``sightline serve`` processes
where the client must not share the bridge's interpreter (pings timed by the client would otherwise wait
for the same GIL).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from bench.visibility_bench import make_scene
from bridge.config import BridgeConfig
from bridge.server import BridgeState, run_bridge
from tests.scenes import on_line_scene

SECRET = "isolation-secret"


def big_scene(tokens: int, zones: int, scene_id: str = "big") -> dict[str, Any]:
    data = make_scene(tokens, zones).model_dump(mode="json", exclude_none=True)
    data["id"] = scene_id
    return data


@contextmanager
def serve(tmp_path: Path, *options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A real ``sightline serve --port 0`` process; yields it and its WebSocket URL."""
    env = {**os.environ, "SIGHTLINE_DATA_DIR": str(tmp_path)}
    command = [str(Path(sys.executable).parent / "sightline"), "serve", "--port", "0", f"--secret={SECRET}"]
    process = subprocess.Popen([*command, *options], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        url = ""
        while "ws://" not in url:
            url = process.stdout.readline()
            assert url, "the bridge exited before listening"
        yield process, url.split()[-1]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


async def hello(ws: ClientConnection, world: str) -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": SECRET}))
    assert json.loads(await ws.recv())["type"] == "welcome"


async def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


async def engine_loaded(url: str) -> None:
    """Wait until the bridge at ``url`` says its engine is loaded (it loads in the background)."""
    healthz = url.replace("ws://", "http://").removesuffix("/ws") + "/healthz"
    async with aiohttp.ClientSession() as http:
        for _ in range(3000):
            async with http.get(healthz) as response:
                if (await response.json())["engine"] in ("ready", "failed"):
                    return
            await asyncio.sleep(0.1)
    raise AssertionError("the engine was never loaded")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def test_another_worlds_pings_are_answered_while_one_world_computes(tmp_path: Path) -> None:
    """While one world's watches keep its worker busy, another world's pings and rulings are answered between them.

    The busy world always has three watches queued on its worker (each one ended is unwatched and replaced) until
    the quiet world has had 20 pings and 20 rulings answered, its rulings on its own worker. A bridge that made the
    quiet world wait for the busy one would end at least one watch for each ruling; here a watch takes several of
    the quiet world's turns, so the count is held against the machine's own pace, not against a clock.
    """
    with serve(tmp_path, "--max-watch-pairs", "20000", "--max-world-watch-pairs", "100000") as (_process, url):
        async with connect(url, max_size=None) as busy, connect(url) as quiet:
            await hello(busy, "w-busy")
            await hello(quiet, "w-quiet")
            synced = await ask(quiet, {"type": "scene.sync", "id": "s", "scene": on_line_scene()})
            assert synced["type"] == "scene.synced"
            adjudicate = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
            adjudicate["log"] = False
            assert (await ask(busy, {"type": "scene.sync", "id": "s", "scene": big_scene(130, 260)}))["type"]
            sent = ended = 0
            quiet_done = asyncio.Event()

            async def watch_more() -> None:
                nonlocal sent
                await busy.send(json.dumps({"type": "watch", "id": f"w{sent}", "scene": "big", "action": "bs-attack"}))
                sent += 1

            for _ in range(3):
                await watch_more()

            async def busy_side() -> list[str]:
                nonlocal ended
                kinds = []
                while (frame := json.loads(await busy.recv())) != {"type": "pong", "id": "busy-ping"}:
                    if frame["type"] == "annotations" and frame.get("more"):
                        continue  # not a push's last part
                    kinds.append(frame["type"])
                    if frame["type"] == "annotations":
                        ended += 1
                        await busy.send(json.dumps({"type": "unwatch", "id": f"u{ended}", "watch": frame["watch"]}))
                        if not quiet_done.is_set():
                            await watch_more()
                return kinds

            done = asyncio.create_task(busy_side())
            answered = ruled = 0
            while answered < 20:
                ping = {"type": "ping", "id": f"q{answered}"}
                assert await ask(quiet, ping) == {"type": "pong", "id": f"q{answered}"}
                answered += 1
                ruling = await ask(quiet, {**adjudicate, "id": f"a{answered}"})  # on the quiet world's worker
                assert ruling["type"] == "adjudication", ruling
                ruled += 1
                await asyncio.sleep(0.02)  # within the quiet world's rate limit
                assert not done.done(), "the busy world ran out of work while the quiet one was answered"
            ended_meanwhile = ended
            quiet_done.set()
            await busy.send(json.dumps({"type": "ping", "id": "busy-ping"}))
            kinds = await done
            assert kinds.count("watching") == kinds.count("annotations") == sent  # every watch was answered
            assert ended_meanwhile <= ruled // 2, (
                f"{ended_meanwhile} of the busy world's watches ended while the quiet world had {ruled} rulings made"
            )


async def test_sigterm_stops_the_bridge_in_the_middle_of_a_long_computation(tmp_path: Path) -> None:
    """SIGTERM in the middle of a long computation stops the bridge the orderly way, without waiting for it.

    A world's worker is deep in watches of 250 tokens: the client is told 1001 and the process exits (0) without waiting
    for the computation (the drain timeout, a minute here, is never reached), saying it left one under way. Four
    watches (four actions: four whole-scene passes, 2.2-3.2 s of CPU each here) are queued behind one another, so the
    signal, a second after them, finds one under way on any machine less than ten times this one's speed.
    """
    options = ("--drain-timeout", "60", "--max-watch-pairs", "70000", "--max-world-watch-pairs", "300000")
    options += ("--max-watch-tests", "10000000000")
    actions = ("bs-attack", "discover", "dodge", "speculative-attack")
    with serve(tmp_path, *options) as (process, url):
        async with connect(url, max_size=None) as ws:
            await hello(ws, "w-heavy")
            await ask(ws, {"type": "scene.sync", "id": "s", "scene": big_scene(250, 300)})
            for n, action in enumerate(actions):
                await ws.send(json.dumps({"type": "watch", "id": f"w{n}", "scene": "big", "action": action}))
            await asyncio.sleep(1.0)  # the first watch is being computed
            process.send_signal(signal.SIGTERM)
            answered = 0
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    answer = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
                    answered += answer["type"] == "annotations"
            assert answered < len(actions), "every computation finished before the signal"
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert await asyncio.to_thread(process.wait, 30) == 0
        assert process.stdout is not None
        said = process.stdout.read()
        assert "Stopped without waiting for the computation under way (world w-heavy)" in said, said


@asynccontextmanager
async def bridge(tmp_path: Path, **overrides: Any) -> AsyncIterator[str]:
    async with bridge_and_state(tmp_path, **overrides) as (url, _state):
        yield url


@asynccontextmanager
async def bridge_and_state(tmp_path: Path, **overrides: Any) -> AsyncIterator[tuple[str, BridgeState]]:
    """An in-process bridge on port 0, with its shared state (to look at its send queues)."""
    config = replace(BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False), **overrides)
    held: list[BridgeState] = []
    async with run_bridge(config, extend=lambda _app, state: held.append(state)) as (host, port):
        yield f"ws://{host}:{port}/ws", held[0]


async def test_send_queue_is_bounded_in_bytes(tmp_path: Path) -> None:
    """A client that does not read its large pushes never has more than 8 MiB queued, and is closed in time.

    Its queue never holds more than its 8 MiB bound (the rest waits), and once the writer has waited --send-timeout on
    one frame the client is closed (1013, read once it reads again); another client of the world goes on.
    """
    bound = 8 * 1024 * 1024
    async with (
        bridge_and_state(
            tmp_path, send_queue=10**6, send_queue_bytes=bound, send_timeout=1.0, max_world_watch_pairs=10**6
        ) as (url, state),
        connect(url, max_queue=1, max_size=None) as ws,
        connect(url) as other,
    ):
        await hello(ws, "w")
        await hello(other, "w")
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": big_scene(100, 200)})
        for n in range(4):  # about 20 MB of annotations each
            await ws.send(json.dumps({"type": "watch", "id": f"w{n}", "scene": "big", "action": "bs-attack"}))
        assert await ask(other, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}
        peak, seen_full, closing = 0, False, False
        for _ in range(300):  # not reading for up to 30 s, watching its queue
            held = list(state.outboxes.values())
            peak = max([peak, *(box.bytes for box, _ws, _t in held)])
            seen_full = seen_full or any(box.bytes > bound // 2 for box, _ws, _t in held)
            if closing := seen_full and any(server_ws.closed for _box, server_ws, _t in held):
                break  # the bridge is closing the one that does not read
            await asyncio.sleep(0.1)
        assert closing, "the client that does not read was never closed"
        assert peak <= bound, f"its queue held {peak} bytes, over its bound of {bound}"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:
                await asyncio.wait_for(ws.recv(), timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        assert await ask(other, {"type": "ping", "id": "p2"}) == {"type": "pong", "id": "p2"}


async def test_a_reading_client_gets_an_answer_larger_than_its_send_queue(tmp_path: Path) -> None:
    """A client that reads gets a watch push five times its send queue's bound, whole and in order.

    The push is 1.4 MB, in parts of 64 KiB; the connection stays.
    """
    async with (
        bridge(tmp_path, send_queue_bytes=256 * 1024, max_frame_bytes=64 * 1024, send_timeout=60.0) as url,
        connect(url, max_size=None) as ws,
    ):
        await hello(ws, "w")
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": big_scene(40, 50)})
        await ws.send(json.dumps({"type": "watch", "id": "w", "scene": "big", "action": "bs-attack"}))
        await ws.send(json.dumps({"type": "ping", "id": "after"}))  # sent before the push is read
        assert json.loads(await ws.recv())["type"] == "watching"
        parts, received = [], 0
        while (frame := await ws.recv()) and json.loads(frame).get("type") == "annotations":
            received += len(frame)
            parts.append(json.loads(frame))
        assert json.loads(frame) == {"type": "pong", "id": "after"}
        assert received > 5 * 256 * 1024 and not parts[-1].get("more")
        pairs = [(a["actor"], a["target"]) for p in parts for a in p["changed"]]
        assert len(pairs) == len(set(pairs)) == 40 * 39


async def test_a_watch_push_over_the_frame_limit_arrives_in_parts_under_it(tmp_path: Path) -> None:
    """A full push larger than the frame limit comes as several `annotations` of one version, each under it.

    The first is `full`, all but the last `more`; together they hold every pair once.
    """
    limit = 64 * 1024
    async with bridge(tmp_path, max_frame_bytes=limit) as url, connect(url, max_size=None) as ws:
        await hello(ws, "w")
        scene = big_scene(25, 20)
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": scene})
        watching = await ask(ws, {"type": "watch", "id": "w", "scene": "big", "action": "bs-attack"})
        assert watching["type"] == "watching"
        parts = []
        while True:
            frame = await ws.recv()
            assert isinstance(frame, str) and len(frame.encode()) <= limit
            parts.append(json.loads(frame))
            if not parts[-1].get("more"):
                break
        assert len(parts) > 1
        assert [p["full"] for p in parts] == [True] + [False] * (len(parts) - 1)
        assert {p["version"] for p in parts} == {parts[0]["version"]}
        pairs = [(a["actor"], a["target"]) for p in parts for a in p["changed"]]
        assert len(pairs) == len(set(pairs)) == 25 * 24


async def test_a_worlds_memory_is_given_back_after_its_clients_leave(tmp_path: Path) -> None:
    """After a world's last client left, the bridge gives back most of the memory the world had added.

    A world that held a large scene and watch: after its last client left (and --world-linger), the bridge's RSS falls
    back to within a quarter of what the world had added (measured, /proc).
    """
    with serve(tmp_path, "--world-linger", "0") as (process, url):
        async with connect(url) as idle:
            await hello(idle, "w-idle")
            await engine_loaded(url)  # its ~100 MB are the process's, not the world's: measured before
            # What a first scene and watch load once for the whole process (modules imported on first use,
            # compiled tables, the collector's first freeze) is not the world's either: a small world
            # loads it, then leaves, before the baseline is taken.
            async with connect(url, max_size=None) as small:
                await hello(small, "w-small")
                await ask(small, {"type": "scene.sync", "id": "s", "scene": big_scene(10, 20)})
                await small.send(json.dumps({"type": "watch", "id": "w", "scene": "big", "action": "bs-attack"}))
                assert json.loads(await small.recv())["type"] == "watching"
                while json.loads(await small.recv()).get("more"):
                    pass
            await asyncio.sleep(1.0)
            before = rss_kib(process.pid)
            async with connect(url, max_size=None) as ws:
                await hello(ws, "w-large")
                await ask(ws, {"type": "scene.sync", "id": "s", "scene": big_scene(100, 200)})
                for n in range(3):
                    await ws.send(json.dumps({"type": "watch", "id": f"w{n}", "scene": "big", "action": "bs-attack"}))
                    assert json.loads(await ws.recv())["type"] == "watching"
                    while json.loads(await ws.recv()).get("more"):  # the push's parts
                        pass
                peak = rss_kib(process.pid)
            assert peak - before > 50 * 1024, f"the world added only {peak - before} KiB: nothing to give back"
            after = peak
            for _ in range(150):  # up to 30 s: on a loaded machine the world's worker frees it more slowly
                await asyncio.sleep(0.2)
                after = rss_kib(process.pid)
                if after - before < (peak - before) / 4:
                    break
            assert after - before < (peak - before) / 4, f"RSS {before} → {peak} → {after} KiB"
            assert await ask(idle, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}
