"""Faults: PostgreSQL stopped and restarted under load, a client that vanishes without closing, SIGTERM
during a stream of logged rulings — every request is answered, answers say whether they were logged,
and nothing acknowledged as logged is lost."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from websockets.asyncio.client import ClientConnection, connect

from bridge.config import BridgeConfig
from bridge.log.store import open_store
from bridge.server import run_bridge
from tests.postgres import PostgresProcess
from tests.scenes import on_line_scene

SECRET = "fault-secret"
SIGHTLINE = str(Path(sys.executable).parent / "sightline")
ATTACK = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}


async def hello(ws: ClientConnection, world: str = "w") -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": SECRET}))
    assert json.loads(await ws.recv())["type"] == "welcome"


async def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


@pytest.fixture
def own_postgres() -> Iterator[PostgresProcess]:
    """A PostgreSQL server of this test's own, which the test may stop and start."""
    process = PostgresProcess(fsync=True)
    process.start()
    try:
        yield process
    finally:
        process.remove()


async def test_postgres_down_and_back_under_load(own_postgres: PostgresProcess, tmp_path: Path) -> None:
    """With PostgreSQL down and back under load, rulings are answered throughout and none logged is lost.

    While PostgreSQL is down they say logged: false; once it is back logging resumes; every ruling acknowledged as
    logged is in the database afterwards.
    """
    dsn = f"postgresql://postgres@127.0.0.1:{own_postgres.port}/postgres"
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, database=dsn)
    logged: set[str] = set()
    flags: list[bool] = []
    async with run_bridge(config) as (host, port), connect(f"ws://{host}:{port}/ws") as ws:
        await hello(ws)
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})

        async def burst(tag: str, count: int) -> None:
            for i in range(count):
                answer = await asyncio.wait_for(ask(ws, {**ATTACK, "id": f"{tag}{i}"}), timeout=20)
                assert answer["type"] == "adjudication" and answer["modifier"] == -6
                flags.append(answer["logged"])
                if answer["logged"]:
                    logged.add(answer["record"])

        await burst("before", 30)
        assert all(flags)
        await asyncio.to_thread(own_postgres.stop, fast=True)
        flags.clear()
        await burst("down", 30)
        assert flags and not any(flags)  # answered, and honest about not being logged
        await asyncio.to_thread(own_postgres.start)
        flags.clear()
        for _ in range(100):  # the pool reconnects on its own
            await burst("after", 1)
            if flags[-1]:
                break
            await asyncio.sleep(0.1)
        assert flags[-1] is True
        await burst("again", 20)
        assert all(flags[-20:])
    store = await open_store(dsn, tmp_path)
    try:
        stored = {record.id async for record in store.export("w", None)}
    finally:
        await store.close()
    assert logged <= stored
    assert len(logged) >= 51


async def test_a_vanished_client_is_dropped_by_the_heartbeat(tmp_path: Path) -> None:
    """A client that stops answering pings without closing is closed by the bridge's heartbeat."""
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, heartbeat=0.3, log=False)
    async with run_bridge(config) as (host, port), aiohttp.ClientSession() as http:
        ws = await connect(f"ws://{host}:{port}/ws", ping_interval=None)
        await hello(ws)
        async with http.get(f"http://{host}:{port}/healthz") as response:
            assert (await response.json())["connections"] == 1
        ws.transport.pause_reading()  # the client's machine went to sleep: no pongs any more
        for _ in range(50):
            await asyncio.sleep(0.1)
            async with http.get(f"http://{host}:{port}/healthz") as response:
                if (await response.json())["connections"] == 0:
                    break
        else:
            pytest.fail("the bridge still holds the vanished client's connection")
        ws.transport.abort()


def test_sigterm_drains_logged_rulings(tmp_path: Path) -> None:
    """SIGTERM in the middle of a stream: the bridge exits 0 and every ruling answered as logged is kept."""
    process = subprocess.Popen(
        [SIGHTLINE, "serve", "--port", "0", "--data-dir", str(tmp_path), "--secret", SECRET],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = next(line.split()[-1] for line in iter(process.stdout.readline, "") if "ws://" in line)
    answered: set[str] = set()

    async def stream() -> int | None:
        async with connect(url) as ws:
            await hello(ws)
            await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
            for i in range(200):
                await ws.send(json.dumps({**ATTACK, "id": f"a{i}"}))
            try:
                while True:
                    answer = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
                    if answer.get("logged"):
                        answered.add(answer["record"])
                    if len(answered) == 40:
                        process.send_signal(signal.SIGTERM)
            except Exception as closed:  # the bridge closes the connection as it stops
                return getattr(getattr(closed, "rcvd", None), "code", None)

    code = asyncio.run(stream())
    assert process.wait(timeout=20) == 0
    process.stdout.close()
    assert code == 1001
    assert len(answered) >= 40

    async def stored() -> set[str]:
        store = await open_store(None, tmp_path)
        try:
            return {record.id async for record in store.export("w", None)}
        finally:
            await store.close()

    assert answered <= asyncio.run(stored())
