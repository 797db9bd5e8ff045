"""The bridge's guards over a real socket: world secrets, Origin, TLS, connection caps, hello deadline,
slow readers — each refusal names its reason and leaves the other connections untouched."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trustme
import websockets
from websockets.asyncio.client import ClientConnection, connect

from bench.visibility_bench import make_scene
from bridge.config import BridgeConfig
from bridge.server import BridgeState, run_bridge
from bridge.session import AddressBudgets
from tests.scenes import on_line_scene, token

BridgeFactory = Callable[..., AbstractAsyncContextManager[str]]


@pytest.fixture
def start(tmp_path: Path) -> BridgeFactory:
    """Start a bridge on a free port with config overrides; yields ``host:port``."""

    def factory(**overrides: Any) -> AbstractAsyncContextManager[str]:
        config = replace(BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret="bridge-secret"), **overrides)

        async def run() -> AsyncIterator[str]:
            async with run_bridge(config) as (host, port):
                yield f"{host}:{port}"

        from contextlib import asynccontextmanager

        return asynccontextmanager(run)()

    return factory


async def hello(ws: ClientConnection, world: str, secret: str) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
    return json.loads(await ws.recv())


async def close_code(ws: ClientConnection) -> int | None:
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(ws.recv(), timeout=10)
    return closed.value.rcvd.code if closed.value.rcvd else None


async def test_world_secret_opens_only_its_world(start: BridgeFactory) -> None:
    """A world's own secret opens that world and no other; the bridge secret opens every world."""
    async with start(world_secrets={"w-ashes": "ashes-secret"}) as addr:
        async with connect(f"ws://{addr}/ws") as ws:
            assert (await hello(ws, "w-ashes", "ashes-secret"))["type"] == "welcome"
        async with connect(f"ws://{addr}/ws") as ws:
            assert (await hello(ws, "w-embers", "ashes-secret"))["code"] == "unauthorized"
            assert await close_code(ws) == 4401
        async with connect(f"ws://{addr}/ws") as ws:
            assert (await hello(ws, "w-embers", "bridge-secret"))["type"] == "welcome"


async def test_origin_allow_list(start: BridgeFactory) -> None:
    """With an allow-list, a WebSocket from another Origin is refused at the handshake (403)."""
    async with start(allowed_origins=("https://foundry.example.org",)) as addr:
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with connect(f"ws://{addr}/ws", origin="https://evil.example.com"):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403
        async with connect(f"ws://{addr}/ws", origin="https://foundry.example.org") as ws:  # type: ignore[arg-type]
            assert (await hello(ws, "w", "bridge-secret"))["type"] == "welcome"


async def test_tls_serves_wss_with_a_self_signed_certificate(start: BridgeFactory, tmp_path: Path) -> None:
    """--certfile/--keyfile: the module can use wss://; the client trusts the test CA."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    for extra in cert.cert_chain_pems[1:]:
        with certfile.open("ab") as handle:
            handle.write(extra.bytes())
    cert.private_key_pem.write_to_path(str(keyfile))
    client_context = ssl.create_default_context()
    ca.configure_trust(client_context)
    async with start(certfile=certfile, keyfile=keyfile) as addr:
        async with connect(f"wss://{addr}/ws", ssl=client_context) as ws:
            assert (await hello(ws, "w", "bridge-secret"))["type"] == "welcome"
        with pytest.raises((websockets.InvalidMessage, websockets.ConnectionClosed, OSError, EOFError)):
            async with connect(f"ws://{addr}/ws", open_timeout=5) as ws:
                await hello(ws, "w", "bridge-secret")


async def test_connections_per_world_are_capped(start: BridgeFactory) -> None:
    """Past the cap a hello is refused (rate-limited), the connection left open: ping answered, hello welcomed later."""
    async with start(max_connections_per_world=2) as addr:
        async with connect(f"ws://{addr}/ws") as a, connect(f"ws://{addr}/ws") as b:
            assert (await hello(a, "w", "bridge-secret"))["type"] == "welcome"
            assert (await hello(b, "w", "bridge-secret"))["type"] == "welcome"
            async with connect(f"ws://{addr}/ws") as c:
                answer = await hello(c, "w", "bridge-secret")
                assert answer == {  # (a hello carries no id, so none is echoed)
                    "type": "error",
                    "code": "rate-limited",
                    "message": "world 'w' already has 2 connections, the most this bridge allows",
                    "details": {"limit": "connections-per-world", "value": 3, "max": 2},
                }
                # Still open, and a ping on it is answered (before any hello, a ping closes the connection 4400).
                await c.send(json.dumps({"type": "ping", "id": "waiting"}))
                assert json.loads(await asyncio.wait_for(c.recv(), timeout=5)) == {"type": "pong", "id": "waiting"}
                assert (await hello(c, "w", "bridge-secret"))["code"] == "rate-limited"  # still no room
                async with connect(f"ws://{addr}/ws") as other:
                    assert (await hello(other, "w-other", "bridge-secret"))["type"] == "welcome"
                await a.send(json.dumps({"type": "ping", "id": "still"}))
                assert json.loads(await a.recv()) == {"type": "pong", "id": "still"}
                await a.close()
                # The bridge counts a as gone when its handler ends, just after the close handshake: c says
                # hello again until then. Its refused hellos counted nothing, so the one place a left is its.
                for _ in range(100):
                    answer = await hello(c, "w", "bridge-secret")
                    if answer["type"] == "welcome":
                        break
                    assert answer["code"] == "rate-limited"
                    await asyncio.sleep(0.02)
                assert answer["type"] == "welcome"
                await c.send(json.dumps({"type": "ping", "id": "in"}))
                assert json.loads(await asyncio.wait_for(c.recv(), timeout=5)) == {"type": "pong", "id": "in"}
                async with connect(f"ws://{addr}/ws") as d:  # b and c hold both places now
                    assert (await hello(d, "w", "bridge-secret"))["code"] == "rate-limited"
        async with connect(f"ws://{addr}/ws") as again:  # all left: room again
            assert (await hello(again, "w", "bridge-secret"))["type"] == "welcome"


async def test_a_hello_refused_for_want_of_room_does_not_outlive_the_deadline(start: BridgeFactory) -> None:
    """A connection saying hello again and again after a refusal for want of room is still closed 4408 in time."""
    full_hello = json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": "bridge-secret"})
    bridge = start(max_connections_per_world=1, hello_timeout=1.0)
    async with bridge as addr, connect(f"ws://{addr}/ws") as a, connect(f"ws://{addr}/ws") as c:
        began = asyncio.get_running_loop().time()
        assert (await hello(a, "w", "bridge-secret"))["type"] == "welcome"
        answers: list[dict[str, Any]] = []
        with pytest.raises(websockets.ConnectionClosed) as closed:  # (a deadline pushed back: DID NOT RAISE)
            while asyncio.get_running_loop().time() - began < 5:
                if not answers or answers[-1]["code"] == "rate-limited":
                    await c.send(full_hello)
                answers.append(json.loads(await asyncio.wait_for(c.recv(), timeout=5)))
                await asyncio.sleep(0.05)
        elapsed = asyncio.get_running_loop().time() - began
        with contextlib.suppress(websockets.ConnectionClosed):  # what came before the close, not yet read
            while True:
                answers.append(json.loads(await asyncio.wait_for(c.recv(), timeout=5)))
        *refusals, last = answers
        assert {answer["code"] for answer in refusals} == {"rate-limited"} and len(refusals) >= 5
        assert last["code"] == "invalid-message" and "no hello within the deadline" in last["message"]
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
        assert 0.9 <= elapsed < 3.0, elapsed
        await a.send(json.dumps({"type": "ping", "id": "still"}))
        assert json.loads(await a.recv()) == {"type": "pong", "id": "still"}


async def test_hello_deadline_closes_a_silent_client(start: BridgeFactory) -> None:
    """A client that never says hello is told so and closed with 4408."""
    async with start(hello_timeout=0.3) as addr, connect(f"ws://{addr}/ws") as ws:
        error = json.loads(await asyncio.wait_for(ws.recv(), timeout=5))
        assert error["code"] == "invalid-message" and "hello" in error["message"]
        assert await close_code(ws) == 4408


async def test_a_client_that_stops_reading_is_closed_not_buffered(tmp_path: Path) -> None:
    """A client that stops reading has at most 4 frames queued and is closed with 1013, not buffered.

    The send queue is bounded in frames: a client flooding watches (pushes of many 64 KiB parts) without reading never
    has more than 4 frames queued, and once its full queue has waited --send-timeout it is closed with 1013 (read once
    it reads again); the bridge itself goes on.
    """
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret="bridge-secret", log=False)
    config = replace(config, send_queue=4, send_timeout=0.5, max_frame_bytes=64 * 1024, messages_per_second=1e9)
    held: list[BridgeState] = []
    async with run_bridge(replace(config, message_burst=10**9), extend=lambda _a, s: held.append(s)) as (host, port):
        async with connect(f"ws://{host}:{port}/ws", max_queue=1, max_size=None, write_limit=2**22) as ws:
            await hello(ws, "w", "bridge-secret")
            scene = make_scene(40, 50).model_dump(mode="json", exclude_none=True)
            await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": scene}))
            for n in range(20):  # each watch's push is about 1.4 MB
                await ws.send(json.dumps({"type": "watch", "id": "w", "scene": scene["id"], "action": "bs-attack"}))
                await ws.send(json.dumps({"type": "unwatch", "id": f"u{n}", "watch": "w"}))
            most, closing = 0, False
            for _ in range(600):  # not reading, for up to 60 s
                boxes = list(held[0].outboxes.values())
                most = max([most, *(len(box) for box, _ws, _t in boxes)])
                if closing := any(server_ws.closed for _box, server_ws, _t in boxes):
                    break
                await asyncio.sleep(0.1)
            assert closing, "the client that does not read was never closed"
            assert most <= 4, f"{most} frames were queued, over the limit of 4"
            assert await close_code(ws) == 1013
        async with connect(f"ws://{host}:{port}/ws") as healthy:  # the bridge itself is fine
            assert (await hello(healthy, "w", "bridge-secret"))["type"] == "welcome"


async def test_the_watch_cost_limit_comes_from_the_configuration(start: BridgeFactory) -> None:
    """--max-watch-tests (config max_watch_tests) bounds what one watch computes; the connection stays.

    Over it, the answer is too-large naming watch-tests with the request id.
    """
    async with start(max_watch_tests=10) as addr, connect(f"ws://{addr}/ws") as ws:
        await hello(ws, "w", "bridge-secret")
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": on_line_scene()}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        await ws.send(json.dumps({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["code"], answer["details"]["limit"]) == ("w1", "too-large", "watch-tests")
        assert answer["details"]["value"] > answer["details"]["max"] == 10
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        assert json.loads(await ws.recv()) == {"type": "pong", "id": "p"}


async def test_scene_size_limits_come_from_the_configuration(start: BridgeFactory) -> None:
    """--max-tokens (config max_tokens) bounds a scene: over it, too-large; the connection stays."""
    async with start(max_tokens=1) as addr, connect(f"ws://{addr}/ws") as ws:
        await hello(ws, "w", "bridge-secret")
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": on_line_scene()}))
        answer = json.loads(await ws.recv())
        assert answer["code"] == "too-large" and answer["details"]["field"] == "scene.tokens"
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        assert json.loads(await ws.recv()) == {"type": "pong", "id": "p"}


async def test_the_level_limit_comes_from_the_configuration(start: BridgeFactory) -> None:
    """--max-levels (config max_levels) 2 refuses a scene of 3 levels as too-large naming levels, and syncs 2."""
    tower = on_line_scene()

    def sync(count: int) -> str:
        levels = [{"id": f"l{i}", "bottom": 10 * i, "top": 10 * i + 10} for i in range(count)]
        return json.dumps({"type": "scene.sync", "id": f"q{count}", "scene": {**tower, "levels": levels}})

    async with start(max_levels=2) as addr, connect(f"ws://{addr}/ws") as ws:
        await hello(ws, "w", "bridge-secret")
        await ws.send(sync(3))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["code"]) == ("q3", "too-large")
        assert answer["details"] == {"field": "scene.levels", "limit": "levels", "value": 3, "max": 2}
        await ws.send(sync(2))
        assert json.loads(await ws.recv())["type"] == "scene.synced"


async def test_world_watch_pairs_bound_every_connection_of_a_world_together(start: BridgeFactory) -> None:
    """All of a world's watches, on any connection, share one bound of pairs; a scene change ends those past it."""
    async with (
        start(max_world_watch_pairs=8) as addr,
        connect(f"ws://{addr}/ws") as gm,
        connect(f"ws://{addr}/ws") as other,
        connect(f"ws://{addr}/ws") as elsewhere,
    ):
        for ws, world in ((gm, "w"), (other, "w"), (elsewhere, "w-other")):
            await hello(ws, world, "bridge-secret")
            await ws.send(json.dumps({"type": "scene.sync", "id": "q1", "scene": on_line_scene()}))
            assert json.loads(await ws.recv())["type"] == "scene.synced"

        async def watch(ws: ClientConnection, watch_id: str) -> dict[str, Any]:
            await ws.send(json.dumps({"type": "watch", "id": watch_id, "scene": "s1", "action": "bs-attack"}))
            answer = json.loads(await ws.recv())
            if answer["type"] == "watching":
                assert json.loads(await ws.recv())["type"] == "annotations"
            return answer

        assert (await watch(gm, "w1"))["type"] == "watching"  # 2 pairs each: 8 in all
        for watch_id in ("w2", "w3", "w4"):
            assert (await watch(other, watch_id))["type"] == "watching"
        refused = await watch(other, "w5")
        assert (refused["id"], refused["code"]) == ("w5", "too-large")
        assert refused["details"] == {"limit": "world-watch-pairs", "value": 10, "max": 8}
        assert "already cover 8 (actor, target) pairs" in refused["message"]
        assert (await watch(elsewhere, "x1"))["type"] == "watching"  # another world's watches are its own
        await gm.send(json.dumps({"type": "unwatch", "id": "u1", "watch": "w1"}))
        assert json.loads(await gm.recv())["type"] == "unwatched"
        assert (await watch(other, "w5"))["type"] == "watching"

        grown = on_line_scene()
        grown["tokens"].append(token("u", 500, 100))  # 3 tokens: 6 pairs a watch; only one of the four fits
        await gm.send(json.dumps({"type": "scene.sync", "id": "q2", "scene": grown}))
        assert json.loads(await gm.recv())["type"] == "scene.synced"
        pushed = [json.loads(await asyncio.wait_for(other.recv(), timeout=10)) for _ in range(4)]
        ended = sorted(m["watch"] for m in pushed if m["type"] == "unwatched")
        assert ended == ["w3", "w4", "w5"]
        assert all("over the limit of 8 for one world" in m["reason"] for m in pushed if m["type"] == "unwatched")
        assert [m["watch"] for m in pushed if m["type"] == "annotations"] == ["w2"]
        assert (await watch(other, "w6"))["details"] == {"limit": "world-watch-pairs", "value": 12, "max": 8}
        await other.send(json.dumps({"type": "ping", "id": "p"}))
        assert json.loads(await other.recv()) == {"type": "pong", "id": "p"}


async def test_cost_limits_come_from_the_configuration(start: BridgeFactory) -> None:
    """--max-watch-pairs, --max-watches-per-connection and --max-scenes-per-world reach every connection.

    Each refusal is too-large naming its limit with the request id, and the connection stays.
    """
    config = {"max_watch_pairs": 1, "max_watches_per_connection": 1, "max_scenes_per_world": 1}
    async with start(**config) as addr, connect(f"ws://{addr}/ws") as ws:
        await hello(ws, "w", "bridge-secret")
        await ws.send(json.dumps({"type": "scene.sync", "id": "q1", "scene": on_line_scene()}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        await ws.send(json.dumps({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["code"], answer["details"]["limit"]) == ("w1", "too-large", "watch-pairs")
        await ws.send(json.dumps({"type": "watch", "id": "w2", "scene": "s1", "action": "bs-attack", "tokens": []}))
        assert json.loads(await ws.recv())["type"] == "watching"
        await ws.recv()  # its first annotations
        await ws.send(json.dumps({"type": "watch", "id": "w3", "scene": "s1", "action": "bs-attack", "tokens": []}))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["details"]["limit"]) == ("w3", "watches-per-connection")
        await ws.send(json.dumps({"type": "scene.sync", "id": "q2", "scene": {**on_line_scene(), "id": "s2"}}))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["details"]["limit"], answer["details"]["max"]) == ("q2", "scenes-per-world", 1)
        await ws.send(json.dumps({"type": "ping", "id": "p"}))
        assert json.loads(await ws.recv()) == {"type": "pong", "id": "p"}


async def test_the_option_values_limit_comes_from_the_configuration(start: BridgeFactory) -> None:
    """--max-option-values reaches every connection: 17 option keys over 16 are refused naming the limit, 16 ruled."""
    async with start(max_option_values=16) as addr, connect(f"ws://{addr}/ws") as ws:
        await hello(ws, "w", "bridge-secret")
        await ws.send(json.dumps({"type": "scene.sync", "id": "q1", "scene": on_line_scene()}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        ask = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack", "log": False}
        await ws.send(json.dumps({**ask, "id": "over", "options": {f"k{i}": i for i in range(17)}}))
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["code"]) == ("over", "too-large")
        assert answer["details"] == {"field": "options", "limit": "option-values", "value": 17, "max": 16}
        await ws.send(json.dumps({**ask, "id": "within", "options": {f"k{i}": i for i in range(16)}}))
        assert json.loads(await ws.recv())["type"] == "adjudication"


async def test_a_connection_over_its_byte_budget_is_refused_and_not_read_for_a_while(start: BridgeFactory) -> None:
    """--bytes-per-second: the frame over the budget gets rate-limited with its id, the connection then goes unread."""
    async with (
        start(max_frame_bytes=1024, bytes_per_second=4096) as addr,
        connect(f"ws://{addr}/ws") as ws,
        connect(f"ws://{addr}/ws") as quiet,
    ):
        await hello(ws, "w-loud", "bridge-secret")
        await hello(quiet, "w-quiet", "bridge-secret")
        over = '{"type": "ping", "id": "%s", "pad": "' + "x" * 2950 + '"}'  # 3,000 bytes: too-large
        await ws.send(over % "f1")
        await ws.send(over % "f2")  # the budget (bursts of 4,096 bytes) no longer holds it
        sent = asyncio.get_running_loop().time()
        await ws.send(json.dumps({"type": "ping", "id": "after"}))
        first, second = json.loads(await ws.recv()), json.loads(await ws.recv())
        assert (first["id"], first["code"], first["details"]["limit"]) == ("f1", "too-large", "frame-bytes")
        assert (second["id"], second["code"]) == ("f2", "rate-limited")
        assert second["details"]["limit"] == "bytes-per-second" and second["details"]["max"] == 4096
        assert second["details"]["value"] > 6000  # the hello and both frames, read within this second
        assert "nothing more is read from this connection for 1.2 s" in second["message"]
        await quiet.send(json.dumps({"type": "ping", "id": "q"}))  # another connection is read meanwhile
        assert json.loads(await asyncio.wait_for(quiet.recv(), 1.0)) == {"type": "pong", "id": "q"}
        assert json.loads(await ws.recv()) == {"type": "pong", "id": "after"}
        assert asyncio.get_running_loop().time() - sent >= 1.1  # (3,000 + 1,994 bytes owed) / 4,096 a second
        await ws.send(over.replace("x" * 1000, "", 1) % "f3")  # the connection stays: a smaller one fits again
        answer = json.loads(await ws.recv())
        assert (answer["id"], answer["code"], answer["details"]["limit"]) == ("f3", "too-large", "frame-bytes")


async def test_a_bridge_stopping_does_not_wait_for_a_connection_left_unread(tmp_path: Path) -> None:
    """A connection paused for its byte budget (8 s here) is closed 1001 as soon as the bridge stops, not 2 s later."""
    config = BridgeConfig(
        host="127.0.0.1", port=0, data_dir=tmp_path, secret="bridge-secret", max_frame_bytes=1024, bytes_per_second=1024
    )
    async with run_bridge(config) as (host, port):
        ws = await connect(f"ws://{host}:{port}/ws")
        await hello(ws, "w", "bridge-secret")
        over = '{"type": "ping", "id": "%s", "pad": "' + "x" * 3950 + '"}'  # 4,000 bytes, in bursts of 4,096
        await ws.send(over % "f1")
        await ws.send(over % "f2")
        assert json.loads(await ws.recv())["code"] == "too-large"
        assert json.loads(await ws.recv())["details"]["limit"] == "bytes-per-second"
        stopping = asyncio.get_running_loop().time()
    # run_bridge has stopped: its clients told 1001, the paused one too, without waiting out its pause
    assert asyncio.get_running_loop().time() - stopping < 1.0  # not cancelled by the drain's end (2 s here)
    await ws.wait_closed()
    assert ws.close_code == 1001


async def test_reconnecting_before_hello_does_not_refill_the_byte_budget(start: BridgeFactory) -> None:
    """Bytes read before hello are charged per address: the next big frame is refused, then new connections get 429."""
    async with (
        start(max_frame_bytes=64 * 1024, bytes_per_second=256 * 1024) as addr,
        connect(f"ws://{addr}/ws") as admitted,
    ):
        assert (await hello(admitted, "w", "bridge-secret"))["type"] == "welcome"
        await asyncio.sleep(0.1)  # the address's budget is whole again after that hello
        big = '{"type": "ping", "id": "%s", "pad": "' + "x" * (4 * 64 * 1024 - 40) + '"}'
        assert len(big % "c1") == 4 * 64 * 1024 - 1  # about the largest frame read (4 × the frame limit)
        async with connect(f"ws://{addr}/ws") as first:
            await first.send(big % "c1")  # the whole burst of the address: read, too-large, closed before hello
            answer = json.loads(await first.recv())
            assert (answer["code"], answer["details"]["limit"]) == ("too-large", "frame-bytes")
            assert await close_code(first) == 4400
        async with connect(f"ws://{addr}/ws") as second:  # the same address, at once: its budget is spent
            await second.send(big % "c2")
            refused = json.loads(await second.recv())
            assert (refused["id"], refused["code"]) == ("c2", "rate-limited")
            assert refused["details"]["limit"] == "bytes-per-second" and refused["details"]["max"] == 256 * 1024
            assert "from this address before hello" in refused["message"]
            # While the address owes, a third connection is not opened at all (its first frame would be read).
            with pytest.raises(websockets.InvalidStatus) as turned_away:
                await connect(f"ws://{addr}/ws")
            assert turned_away.value.response.status_code == 429
            assert "Retry-After" in turned_away.value.response.headers
            # The client admitted before is read as before, on its own budget: too-large, not rate-limited.
            await admitted.send(big % "a1")
            answer = json.loads(await asyncio.wait_for(admitted.recv(), 1.0))
            assert (answer["id"], answer["code"], answer["details"]["limit"]) == ("a1", "too-large", "frame-bytes")
            await admitted.send(json.dumps({"type": "ping", "id": "a2"}))
            assert json.loads(await asyncio.wait_for(admitted.recv(), 1.0)) == {"type": "pong", "id": "a2"}
            # The refused connection stays open: once its pause is over, its hello is read and admitted.
            assert (await asyncio.wait_for(hello(second, "w", "bridge-secret"), 5.0))["type"] == "welcome"
        async with connect(f"ws://{addr}/ws") as later:  # the debt paid, the address may connect again
            assert (await hello(later, "w", "bridge-secret"))["type"] == "welcome"


def test_the_budgets_per_address_forget_whole_budgets_and_are_bounded() -> None:
    """AddressBudgets drops a budget refilled to its burst, and holds at most max_addresses (the oldest go first)."""
    budgets = AddressBudgets(1000, 1000, max_addresses=2)
    assert budgets.charge("a", 1000, 0.0)[0] == 0.0
    assert budgets.charge("a", 1000, 0.5)[0] > 0  # owed: reconnecting from "a" does not refill it
    budgets.charge("b", 10, 0.5)
    budgets.charge("c", 10, 0.5)
    assert len(budgets) == 2  # "a" dropped, the least recently charged, at the cap
    assert budgets.charge("d", 10, 10.0)[0] == 0.0 and len(budgets) == 1  # "b" and "c" refilled: forgotten
    budgets.charge("e", 1000, 10.0)
    budgets.charge("e", 1000, 10.0)  # 1,000 bytes in debt at 1,000 a second
    assert budgets.owed("e", 10.5) == pytest.approx(0.5) and budgets.owed("e", 11.0) == 0.0
    assert budgets.owed("nobody", 10.0) == 0.0


async def test_the_budget_before_hello_is_per_forwarded_address_behind_a_trusted_proxy(start: BridgeFactory) -> None:
    """Behind --trusted-proxy the budget before hello is the X-Forwarded-For client's, as the throttle's address is."""
    big = '{"type": "ping", "id": "%s", "pad": "' + "x" * (4 * 64 * 1024 - 40) + '"}'

    async def first_answer(client: str) -> dict[str, Any]:
        async with connect(f"ws://{addr}/ws", additional_headers={"X-Forwarded-For": client}) as ws:
            await ws.send(big % "c")
            return json.loads(await ws.recv())

    async with start(max_frame_bytes=64 * 1024, bytes_per_second=256 * 1024, trusted_proxies=("127.0.0.1",)) as addr:
        assert (await first_answer("203.0.113.1"))["code"] == "too-large"  # the whole burst of 203.0.113.1
        assert (await first_answer("203.0.113.2"))["code"] == "too-large"  # another client: its own budget
        assert (await first_answer("203.0.113.1"))["details"]["limit"] == "bytes-per-second"
