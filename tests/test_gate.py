"""Connections that have not said who they are: a header deadline (slowloris), a cap on open connections
answered 503, and accept failures logged once per interval — over real sockets to a bridge on port 0."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from bridge.config import BridgeConfig
from bridge.gate import AcceptErrorLog, connection_cap
from bridge.server import run_bridge
from bridge.startup import _early_health, listening

SECRET = "gate-secret"


@asynccontextmanager
async def bridge(tmp_path: Path, **overrides: Any) -> AsyncIterator[tuple[str, int]]:
    config = replace(BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False), **overrides)
    async with run_bridge(config) as address:
        yield address


async def still_served(host: str, port: int) -> None:
    async with connect(f"ws://{host}:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": SECRET}))
        assert json.loads(await ws.recv())["type"] == "welcome"


async def test_a_client_trickling_its_headers_is_cut_off_at_the_deadline(tmp_path: Path) -> None:
    """A request whose headers arrive a byte at a time is closed at the header deadline; others are served.

    It is closed while it is still sending; a normal client is served meanwhile.
    """
    async with bridge(tmp_path, header_timeout=0.5) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /ws HTTP/1.1\r\nHost: bridge\r\n")
        cut_off = False
        for _ in range(100):  # 10 s of trickling at most
            try:
                writer.write(b"X")
                await writer.drain()
                if await asyncio.wait_for(reader.read(1024), timeout=0.1) == b"":
                    cut_off = True
                    break
            except TimeoutError:
                continue
            except ConnectionError:
                cut_off = True
                break
        writer.close()
        assert cut_off, "the slow client was never cut off"
        await still_served(host, port)


async def test_headers_sent_in_time_are_answered_normally(tmp_path: Path) -> None:
    """The deadline ends once the head is complete: a plain HTTP request sent in two parts is answered."""
    async with bridge(tmp_path, header_timeout=1.0) as (host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: bridge\r\n")
        await asyncio.sleep(0.2)
        writer.write(b"Connection: close\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200")


async def test_past_the_connection_cap_a_new_connection_gets_503(tmp_path: Path) -> None:
    """With a cap of 3 open connections, a fourth is answered 503 with the reason and closed.

    Once the others are gone (the header deadline) the bridge serves again.
    """
    async with bridge(tmp_path, max_connections=3, header_timeout=1.0) as (host, port):
        held = [await asyncio.open_connection(host, port) for _ in range(3)]
        await asyncio.sleep(0.1)
        reader, writer = await asyncio.open_connection(host, port)
        answer = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 503")
        assert b"3 open connections" in answer
        for held_reader, _held_writer in held:  # each is cut off by the header deadline
            assert await asyncio.wait_for(held_reader.read(), timeout=10) == b""
        for _held_reader, held_writer in held:
            held_writer.close()
        await asyncio.sleep(0.1)
        await still_served(host, port)


def test_the_default_cap_stays_below_the_descriptor_limit() -> None:
    """With no --max-connections the cap leaves a reserve under RLIMIT_NOFILE; a larger one is lowered."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connection_cap() < soft
    assert connection_cap(10) == 10
    assert connection_cap(soft * 2) < soft


def test_accept_failures_are_logged_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    """A thousand EMFILE accept failures within one interval write one line; other loop errors pass through.

    The next interval's first failure writes one more, counting those left out. Other loop errors pass through
    untouched.
    """
    now = [0.0]
    handler = AcceptErrorLog(interval=10.0, clock=lambda: now[0])
    loop = asyncio.new_event_loop()
    passed: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: passed.append(context))
    handler.install(loop)
    try:
        with caplog.at_level(logging.ERROR, logger="sightline.gate"):
            emfile = OSError(24, "Too many open files")
            for _ in range(1000):
                loop.call_exception_handler({"message": "socket.accept() out of system resource", "exception": emfile})
            now[0] = 11.0
            loop.call_exception_handler({"message": "socket.accept() out of system resource"})
            loop.call_exception_handler({"message": "something else broke"})
    finally:
        handler.uninstall(loop)
        loop.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "sightline.gate"]
    assert len(lines) == 2
    assert "Too many open files" in lines[0]
    assert "999 more" in lines[1]
    assert [c["message"] for c in passed] == ["something else broke"]


async def test_while_the_bridge_loads_a_trickling_client_is_still_cut_off_and_healthz_answered(tmp_path: Path) -> None:
    """While the bridge loads, the header deadline still cuts off a trickling client and /healthz is answered.

    Behind a port opened before the application exists (`sightline serve` while it loads), the header deadline still
    closes a client trickling its head; a /healthz sent in two parts is answered early.
    """
    config = replace(
        BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, log=False), header_timeout=0.5
    )
    async with listening(config, early=_early_health(config)) as (gate, _server, host, port):
        slow_reader, slow_writer = await asyncio.open_connection(host, port)
        slow_writer.write(b"GET /ws HTTP/1.1\r\nHost: bridge\r\n")
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: bridge\r\n")
        await asyncio.sleep(0.1)
        writer.write(b"\r\n")
        answer = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200") and json.loads(answer.partition(b"\r\n\r\n")[2])["app"] == "loading"
        assert await asyncio.wait_for(slow_reader.read(), timeout=10) == b""
        slow_writer.close()
        assert gate.timed_out == 1 and gate.held == 0
