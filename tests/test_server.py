"""The bridge over a real WebSocket on port 0: the contract's conversation, isolation, bad frames, shutdown."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from bridge.config import BridgeConfig
from bridge.server import run_bridge
from bridge.session import Session
from tests.scenes import on_line_scene

SECRET = "table-secret"


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    """A real bridge on 127.0.0.1, a free port; yields its base URL."""
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, max_frame_bytes=64 * 1024)
    async with run_bridge(config) as (host, port):
        yield f"{host}:{port}"


async def say_hello(ws: ClientConnection, world: str = "w-ashes", secret: str = SECRET) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
    return json.loads(await ws.recv())


async def ask(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(await ws.recv())


async def test_hello_sync_adjudicate_over_a_real_websocket(bridge: str) -> None:
    """hello → welcome, scene.sync → scene.synced, adjudicate → adjudication with the Poor -6."""
    async with connect(f"ws://{bridge}/ws") as ws:
        assert (await say_hello(ws))["type"] == "welcome"
        synced = await ask(ws, {"type": "scene.sync", "id": "q1", "scene": on_line_scene()})
        assert synced["type"] == "scene.synced"
        ruling = await ask(
            ws, {"type": "adjudicate", "id": "a1", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
        )
        assert ruling["id"] == "a1" and ruling["modifier"] == -6
        assert ruling["logged"] is True and ruling["record"]  # committed to the SQLite log before the answer
        assert await ask(ws, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}


async def test_non_ascii_answers_arrive_as_text_frames_of_the_same_characters(bridge: str) -> None:
    """Answers written as orjson's UTF-8 bytes reach the client as text frames, every character intact.

    No str round trip: a ping's pong (the loop's) and an adjudication (the world's worker's).
    """
    request = "pídeme-ñandú-煙-🙂"
    async with connect(f"ws://{bridge}/ws") as ws:
        await say_hello(ws)
        await ws.send(json.dumps({"type": "ping", "id": request}))
        pong = await ws.recv()
        assert isinstance(pong, str) and json.loads(pong) == {"type": "pong", "id": request}
        await ask(ws, {"type": "scene.sync", "id": "q1", "scene": on_line_scene()})
        await ws.send(
            json.dumps(
                {"type": "adjudicate", "id": request, "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
            )
        )
        ruling = await ws.recv()
        assert isinstance(ruling, str) and request in ruling and json.loads(ruling)["id"] == request


async def test_wrong_secret_closes_with_4401(bridge: str) -> None:
    """Contract: unauthorized, then close code 4401."""
    async with connect(f"ws://{bridge}/ws") as ws:
        answer = await say_hello(ws, secret="guess")
        assert answer["code"] == "unauthorized"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


async def test_worlds_are_isolated_across_connections(bridge: str) -> None:
    """A scene synced in one world is unknown in another, and known to a second client of the same world."""
    async with connect(f"ws://{bridge}/ws") as ashes, connect(f"ws://{bridge}/ws") as embers:
        await say_hello(ashes, "w-ashes")
        await say_hello(embers, "w-embers")
        await ask(ashes, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        other = await ask(
            embers, {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
        )
        assert other["code"] == "unknown-scene"
    async with connect(f"ws://{bridge}/ws") as again:
        await say_hello(again, "w-ashes")
        same = await ask(
            again,
            {
                "type": "adjudicate",
                "id": "a",
                "scene": "s1",
                "actor": "a",
                "target": "t",
                "action": "bs-attack",
                "log": False,
            },
        )
        assert same["modifier"] == -6


async def test_bad_frames_keep_the_connection_and_the_scene(bridge: str) -> None:
    """Malformed JSON, a binary frame and an oversized frame each get an error; the scene survives."""
    async with connect(f"ws://{bridge}/ws", max_size=None) as ws:
        await say_hello(ws)
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        assert (await ask(ws, "{oops"))["code"] == "invalid-message"
        await ws.send(b"\x00\x01")
        assert "binary" in json.loads(await ws.recv())["message"]
        big = await ask(ws, json.dumps({"type": "ping", "id": "p", "pad": "x" * 100_000}))
        assert big["code"] == "too-large"
        ruling = await ask(
            ws, {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
        )
        assert ruling["modifier"] == -6


async def test_an_oversized_frame_is_refused_from_its_bytes_never_decoded(
    bridge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frame over the limit (3-byte characters) is refused too-large with its id from its bytes, never decoded.

    Decoding a 16 MiB frame held the event loop ~50 ms and measuring it (encoding it again) the world's worker ~30 ms:
    every other world waited ~94 ms per frame. The session now receives the frame's UTF-8 bytes as they came.
    """
    received: list[type] = []
    receive = Session.receive

    def recording(session: Session, text: str | bytes) -> Any:
        received.append(type(text))
        return receive(session, text)

    monkeypatch.setattr(Session, "receive", recording)
    async with connect(f"ws://{bridge}/ws", max_size=None) as ws:
        await say_hello(ws)
        frame = json.dumps({"type": "ping", "id": "big", "pad": "\u20ac" * 60_000}, ensure_ascii=False)
        size = len(frame.encode())  # 180,034 bytes, 60,034 characters: over the limit only counted in bytes
        answer = await ask(ws, frame)
        assert (answer["code"], answer["id"]) == ("too-large", "big")
        assert answer["details"] == {"limit": "frame-bytes", "value": size, "max": 64 * 1024}
        assert (await ask(ws, {"type": "ping", "id": "after"}))["type"] == "pong"
    assert received and set(received) == {bytes}, received


async def test_a_text_frame_that_is_not_utf8_is_refused_and_the_connection_stays(bridge: str) -> None:
    """A text frame that is not UTF-8 (a stray byte, an encoded surrogate) gets invalid-message; the scene survives."""
    async with connect(f"ws://{bridge}/ws") as ws:
        await say_hello(ws)
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        for bad in (b'{"type": "ping", "id": "\xff"}', b'{"type": "ping", "id": "p", "pad": "\xed\xa0\x80"}'):
            await ws.send(bad, text=True)
            answer = json.loads(await ws.recv())
            assert answer["code"] == "invalid-message" and "not valid JSON" in answer["message"], answer
        ruling = await ask(
            ws, {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
        )
        assert ruling["modifier"] == -6


async def test_a_frame_beyond_four_times_the_limit_is_not_read(bridge: str) -> None:
    """A frame above 4 × --max-frame-bytes is not buffered: the WebSocket closes with 1009, message too big.

    --max-frame-bytes is 64 KiB here; the close is as docs/protocol.md says; a new connection is served as before.
    """
    async with connect(f"ws://{bridge}/ws", max_size=None) as ws:
        await say_hello(ws)
        await ws.send(json.dumps({"type": "ping", "id": "p", "pad": "x" * (4 * 64 * 1024 + 1)}))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    async with connect(f"ws://{bridge}/ws") as ws:
        await say_hello(ws)
        assert (await ask(ws, {"type": "ping", "id": "again"}))["type"] == "pong"


async def test_healthz_answers_anonymously(bridge: str) -> None:
    """GET /healthz needs no secret and reports ok on the same port."""
    async with aiohttp.ClientSession() as http, http.get(f"http://{bridge}/healthz") as response:
        assert response.status == 200
        body = await response.json()
    assert body["status"] == "ok"


def sightline_bin() -> str:
    return str(Path(sys.executable).parent / "sightline")


async def test_serve_prints_url_and_secret_and_closes_clients_with_1001_on_sigterm(tmp_path: Path) -> None:
    """`sightline serve --port 0` prints the URL and a generated secret; SIGTERM closes clients with 1001."""
    env = {**os.environ, "SIGHTLINE_DATA_DIR": str(tmp_path)}
    env.pop("SIGHTLINE_SECRET", None)
    process = subprocess.Popen([sightline_bin(), "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        url = next(line.split()[-1] for line in lines if "ws://" in line)
        secret = next(line.split()[-1] for line in lines if "Secret" in line)
        assert secret == (tmp_path / "secret").read_text().strip()
        async with connect(url) as ws:
            assert (await say_hello(ws, secret=secret))["type"] == "welcome"
            process.send_signal(signal.SIGTERM)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        assert await asyncio.to_thread(process.wait, 10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
