"""Issue 12's hostile frames over a real WebSocket: each gets the contract's error, the connection (its
writer included) keeps answering, and the scene and the log are intact."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from bridge.config import BridgeConfig
from bridge.core.visibility import SceneVisibility
from bridge.protocol import Pong, encode
from bridge.server import BridgeState, run_bridge
from bridge.session import Send, Session, Worlds
from tests.scenes import on_line_scene

SECRET = "table-secret"


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    """A real bridge (with its SQLite log) on a free port."""
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET)
    async with run_bridge(config) as (host, port):
        yield f"{host}:{port}"


async def ask(ws: ClientConnection, message: dict[str, Any] | str) -> dict[str, Any]:
    await ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(await ws.recv())


async def ready(bridge: str) -> ClientConnection:
    ws = await connect(f"ws://{bridge}/ws")
    await ask(ws, {"type": "hello", "protocol": 1, "world": "w1", "secret": SECRET})
    assert (await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()}))["type"] == "scene.synced"
    return ws


def adjudicate(request: str = "a1") -> dict[str, Any]:
    return {"type": "adjudicate", "id": request, "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}


async def test_deep_nesting_before_hello_is_refused_then_closed_with_a_code_and_a_short_log(
    bridge: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A 1.8 KB frame nested 900 deep before hello: too-large (depth), close 4400, and no traceback logged."""
    caplog.set_level(logging.INFO)
    async with connect(f"ws://{bridge}/ws") as ws:
        answer = await ask(ws, "[" * 900 + "]" * 900)
        assert answer["code"] == "too-large"
        assert answer["details"] == {"field": "message", "limit": "depth", "value": 900, "max": 32}
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4400
    assert "Traceback" not in caplog.text and len(caplog.text) < 2000


async def test_deep_nesting_after_hello_keeps_the_connection(bridge: str) -> None:
    """Nesting 5,000 deep inside ``options`` gets too-large with the request id, and the connection rules on.

    That is past Python's recursion limit; the same connection rules as before.
    """
    ws = await ready(bridge)
    async with ws:
        deep = json.dumps(adjudicate("deep"))[:-1] + ', "options": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
        answer = await ask(ws, deep)
        assert answer["code"] == "too-large" and answer["details"]["limit"] == "depth"
        assert answer["id"] == "deep" and answer["details"]["value"] == 5002  # message, options, 5,000 arrays
        assert (await ask(ws, adjudicate()))["modifier"] == -6


async def test_a_lone_surrogate_in_an_environment_key_is_refused_and_the_writer_lives(bridge: str) -> None:
    """A lone surrogate in an environment key is refused naming the field and request; the writer lives on.

    ``environment: {"\\ud800": 1}`` answers invalid-message; the connection's writer still answers pings and logged
    rulings.
    """
    ws = await ready(bridge)
    async with ws:
        patch = '{"type": "scene.patch", "id": "p1", "scene": "s1", "environment": {"\\ud800": 1}}'
        answer = await ask(ws, patch)
        assert answer["code"] == "invalid-message" and answer["id"] == "p1"
        assert answer["details"]["field"] == "environment.\ufffd"
        assert await ask(ws, {"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}
        ruling = await ask(ws, adjudicate())
        assert ruling["logged"] is True and ruling["modifier"] == -6


async def test_lone_surrogates_in_names_and_unknown_shapes_are_refused_and_logging_goes_on(bridge: str) -> None:
    """Lone surrogates in a token name or a blob of an unknown shape are refused, by path; logging goes on.

    An unknown shape with a nested blob and an emoji is kept and every ruling on its scene is logged.
    """
    ws = await ready(bridge)
    async with ws:
        token = '{"id": "a", "name": "\\udc00", "x": 0, "y": 0}'
        name = '{"type": "scene.patch", "id": "p2", "scene": "s1", "upsert": {"tokens": [' + token + "]}}"
        answer = await ask(ws, name)
        assert answer["code"] == "invalid-message" and answer["details"]["field"] == "upsert.tokens[0].name"
        scene = on_line_scene()
        odd = {"type": "token-ring", "blob": {"a": [[{"b": "\U0001f600"}]], "c": [1e300]}, "hole": False}
        scene["regions"].append(
            {"id": "ring", "shapes": [odd], "polygons": [{"points": [5000, 0, 5100, 0, 5100, 100]}]}
        )
        bad = json.dumps({"type": "scene.sync", "id": "q2", "scene": scene}).replace("\\ud83d\\ude00", "\\ude00")
        answer = await ask(ws, bad)
        assert answer["code"] == "invalid-message" and answer["details"]["field"].startswith("scene.regions[")
        assert (await ask(ws, {"type": "scene.sync", "id": "q3", "scene": scene}))["type"] == "scene.synced"
        for n in range(3):
            ruling = await ask(ws, adjudicate(f"r{n}"))
            assert ruling["logged"] is True and ruling["modifier"] == -6


async def test_rotation_1e308_is_refused_naming_the_field_and_the_scene_still_rules(bridge: str) -> None:
    """A rectangle rotated 1e308 degrees is refused at the patch; rulings and watches of the scene go on."""
    ws = await ready(bridge)
    async with ws:
        region = {
            "id": "spin",
            "shapes": [{"type": "rectangle", "x": 0, "y": 0, "width": 50, "height": 50, "rotation": 1e308}],
            "zone": {"type": "low"},
        }
        answer = await ask(ws, {"type": "scene.patch", "id": "p3", "scene": "s1", "upsert": {"regions": [region]}})
        assert answer["code"] == "invalid-message"
        assert answer["details"]["field"] == "upsert.regions[0].shapes[0].rotation"
        assert (await ask(ws, adjudicate()))["modifier"] == -6
        watching = await ask(ws, {"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack"})
        assert watching["type"] == "watching"
        assert json.loads(await ws.recv())["type"] == "annotations"


def test_an_answer_that_cannot_be_encoded_becomes_an_internal_error_to_the_same_request() -> None:
    """The writer's last line of defence: ``encode`` never raises (a lone surrogate reaching an answer)."""
    assert json.loads(encode(Pong(id="\ud800"))) == {
        "type": "error",
        "id": "?",
        "code": "internal-error",
        "message": "the bridge could not write its answer",
        "details": {},
    }


def test_a_subnormal_grid_distance_is_refused_naming_the_field() -> None:
    """``grid.distance: 5e-324`` is refused at sync, naming the field.

    Found by bench/fuzz_bench.py: it divided by zero in every watch.
    """
    session = Session(Worlds(), offline=True)
    scene = on_line_scene()
    scene["grid"] = {"size": 100, "distance": 5e-324}
    (effect,) = session.receive(json.dumps({"type": "scene.sync", "id": "q", "scene": scene}))
    assert isinstance(effect, Send)
    answer = json.loads(encode(effect.message))
    assert answer["code"] == "invalid-message" and answer["details"]["field"] == "scene.grid.distance"


def test_a_watch_that_cannot_follow_a_change_ends_and_the_change_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    """When a watch's engine fails on a scene change, the change stands and the watcher is told its watch ended.

    The failure is a bug; the change is applied and answered — no internal error for the sender, no broken watch left
    behind.
    """
    session = Session(Worlds(), offline=True)
    session.receive(json.dumps({"type": "scene.sync", "id": "q", "scene": on_line_scene()}))
    session.receive(json.dumps({"type": "watch", "id": "w", "scene": "s1", "action": "bs-attack"}))

    def broken(self: SceneVisibility, state: object) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(SceneVisibility, "update", broken)
    moved = {"id": "a", "x": 120, "y": 100}
    effects = session.receive(
        json.dumps({"type": "scene.patch", "id": "p", "scene": "s1", "upsert": {"tokens": [moved]}})
    )
    answers = [json.loads(encode(e.message)) for e in effects if isinstance(e, Send)]
    assert [a["type"] for a in answers] == ["scene.patched", "unwatched"]
    assert session.world is not None and session.world.scenes["s1"].token("a").x == 120


def test_a_vanishing_ellipse_radius_is_refused_naming_the_field() -> None:
    """``radiusY: 1e-300`` is refused at sync, naming the field; a radius of exactly 0 stays a valid, empty shape.

    Found by bench/fuzz_bench.py: its square is 0 and the curve equations divided by it.
    """
    session = Session(Worlds(), offline=True)
    scene = on_line_scene()
    ellipse = {"type": "ellipse", "x": 150, "y": 50, "radiusX": 100, "radiusY": 1e-300}
    scene["regions"] = [{"id": "thin", "shapes": [ellipse], "zone": {"type": "low"}}]
    (effect,) = session.receive(json.dumps({"type": "scene.sync", "id": "q", "scene": scene}))
    assert isinstance(effect, Send)
    answer = json.loads(encode(effect.message))
    assert answer["code"] == "invalid-message"
    assert answer["details"]["field"] == "scene.regions[0].shapes[0].radiusY"


async def logged_requests(bridge: str) -> list[str]:
    """The request ids of every ruling world w1's log holds (through the log's API on the same port)."""
    headers = {"Authorization": f"Bearer {SECRET}"}
    async with aiohttp.ClientSession(f"http://{bridge}", headers=headers) as http:
        async with http.get("/api/worlds/w1/sessions") as response:
            sessions = (await response.json())["sessions"]
        found = []
        for session in sessions:
            async with http.get(f"/api/worlds/w1/sessions/{session['id']}/rulings?limit=1000") as response:
                found += [ruling["request"] for ruling in (await response.json())["rulings"]]
    return sorted(found)


async def test_a_ruling_whose_options_would_fill_the_log_is_refused_and_nothing_is_logged(bridge: str) -> None:
    """Options of 200 KB on a logged ruling: too-large (log-record-bytes, options), nothing logged; log: false answers.

    Every logged record keeps the request's options: 100 such messages a second made the log grow 40 MB a second
    and other worlds' logged rulings wait for it to be written.
    """
    ws = await ready(bridge)
    async with ws:
        big = {**adjudicate("big"), "options": {"note": "x" * 200_000}}
        answer = await ask(ws, big)
        assert answer["code"] == "too-large" and answer["id"] == "big"
        details = answer["details"]
        assert details["limit"] == "log-record-bytes" and details["field"] == "options"
        assert details["max"] == 64 * 1024 and details["value"] > 200_000
        assert "log: false" in answer["message"] and "options take" in answer["message"]
        unlogged = await ask(ws, {**big, "id": "unlogged", "log": False})
        assert unlogged["type"] == "adjudication" and unlogged["logged"] is False and unlogged["modifier"] == -6
        ruling = await ask(ws, adjudicate("small"))
        assert ruling["logged"] is True and ruling["modifier"] == -6
    assert await logged_requests(bridge) == ["small"]


async def test_options_too_large_to_log_are_refused_before_the_ruling_is_made(tmp_path: Path) -> None:
    """A logged ruling whose options alone are over log-record-bytes is refused before it is validated; under, it logs.

    Refused only once ruled and its record built, 217,000 option keys cost 0.6 s of CPU after parsing, on the world's
    thread: the scene then remembered a ruling for them (its memo keeps the question's options). Now nothing is, and
    the message is not even validated (one call over every key): a bad field among such options is not what is named.
    """
    held: list[BridgeState] = []
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET)
    async with run_bridge(config, extend=lambda _app, state: held.append(state)) as (host, port):
        ws = await ready(f"{host}:{port}")
        async with ws:
            scene = held[0].worlds.worlds["w1"].use("s1")
            assert scene is not None and not scene.rulings
            many = {f"k{i}": i for i in range(10_000)}  # 127,781 bytes of JSON
            answer = await ask(ws, {**adjudicate("many"), "log": True, "options": many})
            assert (answer["id"], answer["code"]) == ("many", "too-large")
            details = answer["details"]
            assert (details["field"], details["limit"], details["max"]) == ("options", "log-record-bytes", 64 * 1024)
            assert 64 * 1024 < details["value"] <= len(json.dumps(many, separators=(",", ":")))
            assert "log: false" in answer["message"] and "options take" in answer["message"]
            assert not scene.rulings, "the ruling was made before its options were found too large to log"
            unread = await ask(ws, {**adjudicate("unread"), "log": True, "options": many, "reaction": "?"})
            assert (unread["code"], unread["details"]["limit"]) == ("too-large", "log-record-bytes")  # not validated
            few = {f"k{i}": i for i in range(100)}
            logged = await ask(ws, {**adjudicate("few"), "log": True, "options": few})
            assert logged["logged"] is True and logged["modifier"] == -6
            assert len(scene.rulings) == 1
            assert (await ask(ws, {"type": "ping", "id": "p"}))["type"] == "pong"
        assert await logged_requests(f"{host}:{port}") == ["few"]


async def test_options_of_more_values_than_the_limit_are_refused_logged_or_not_before_validation(
    tmp_path: Path,
) -> None:
    """log: false with 217,000 option keys (or one key holding 5,000 items): too-large (option-values), nothing ruled.

    Answered, such a ruling cost ~1 s of CPU on the world's thread (one validation call of ~130 ms holding the
    interpreter, the rest the ruling's memo key walking every option) and its memo kept all the options. Refused
    before validation: a bad field among them is not what is named, and the scene remembers no ruling.
    """
    held: list[BridgeState] = []
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET)
    async with run_bridge(config, extend=lambda _app, state: held.append(state)) as (host, port):
        ws = await ready(f"{host}:{port}")
        async with ws:
            scene = held[0].worlds.worlds["w1"].use("s1")
            assert scene is not None and not scene.rulings
            many = {f"k{i}": i for i in range(217_000)}
            answer = await ask(ws, {**adjudicate("many"), "log": False, "options": many})
            assert (answer["id"], answer["code"]) == ("many", "too-large")
            assert answer["details"] == {"field": "options", "limit": "option-values", "value": 217_000, "max": 1_000}
            unread = await ask(ws, {**adjudicate("unread"), "log": False, "options": many, "reaction": "?"})
            assert (unread["code"], unread["details"]["limit"]) == ("too-large", "option-values")  # not validated
            nested = {"note": [{"x": [i]} for i in range(5_000)]}
            deep = await ask(ws, {**adjudicate("deep"), "log": False, "options": nested})
            assert (deep["code"], deep["details"]["limit"], deep["details"]["value"]) == (
                "too-large",
                "option-values",
                1_001,
            )
            assert "or more" in deep["message"]
            assert not scene.rulings, "a ruling was made (and its options memoised) before they were refused"
            within = await ask(ws, {**adjudicate("within"), "log": False, "options": {f"k{i}": i for i in range(999)}})
            assert within["type"] == "adjudication" and within["modifier"] == -6 and len(scene.rulings) == 1
            assert (await ask(ws, {"type": "ping", "id": "p"}))["type"] == "pong"


async def test_a_ruling_reading_thousands_of_lit_tokens_is_not_logged_whole_each_time(bridge: str) -> None:
    """A ruling that reads 800 lit tokens is refused logging (log-record-bytes, the tokens named); a few lit ones log.

    A record keeps every token whose light may reach the target: a 150-byte adjudicate in a scene of 5,000 such
    tokens stored 3.7 MB in the log each time.
    """
    ws = await ready(bridge)
    async with ws:
        scene = on_line_scene()
        lit = [
            {
                "id": f"l{i}",
                "name": f"Torch bearer {i}",
                "x": 40 * (i % 40),
                "y": 40 * (i // 40),
                "light": {"radius": 1e6},
            }
            for i in range(800)
        ]
        scene["tokens"] += lit
        assert (await ask(ws, {"type": "scene.sync", "id": "many", "scene": scene}))["type"] == "scene.synced"
        answer = await ask(ws, adjudicate("lit"))
        assert answer["code"] == "too-large" and answer["id"] == "lit"
        assert answer["details"]["limit"] == "log-record-bytes" and answer["details"]["field"] == "log"
        assert "the 802 tokens it read" in answer["message"]
        assert (await ask(ws, {**adjudicate("unlogged"), "log": False}))["modifier"] == -6
        scene["tokens"] = scene["tokens"][:12]
        assert (await ask(ws, {"type": "scene.sync", "id": "few", "scene": scene}))["type"] == "scene.synced"
        ruling = await ask(ws, adjudicate("few"))
        assert ruling["logged"] is True and ruling["modifier"] == -6
    assert await logged_requests(bridge) == ["few"]
