"""The log behind the bridge's own port: game sessions over the protocol, overrides, the secret-guarded
API, no answered record lost when the bridge is killed with SIGKILL (SQLite and PostgreSQL), and the same
game exported alike from either store."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from websockets.asyncio.client import ClientConnection, connect

from bridge.config import BridgeConfig
from bridge.log.store import open_store
from bridge.server import run_bridge
from tests.postgres import new_postgres_database
from tests.scenes import on_line_scene, rect_region, token

SECRET = "gm-secret"
SIGHTLINE = str(Path(sys.executable).parent / "sightline")


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, world_secrets={"w-b": "b-secret"})
    async with run_bridge(config) as (host, port):
        yield f"{host}:{port}"


async def hello(ws: ClientConnection, world: str = "w-a", secret: str = SECRET) -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
    assert json.loads(await ws.recv())["type"] == "welcome"


async def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


ATTACK = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}


async def test_named_session_override_and_api(bridge: str) -> None:
    """session.start names a session; rulings land in it; an override sits beside the original.

    The API on the same port lists them only with a secret that opens the world.
    """
    async with connect(f"ws://{bridge}/ws") as ws:
        await hello(ws)
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        started = await ask(ws, {"type": "session.start", "id": "g", "name": "Friday raid"})
        assert started["type"] == "session.started" and started["session"]["name"] == "Friday raid"
        session_id = started["session"]["id"]
        first = await ask(ws, {**ATTACK, "id": "a1"})
        preview = await ask(ws, {**ATTACK, "id": "a2", "log": False})
        assert first["logged"] is True and preview["logged"] is False and "record" not in preview
        overridden = await ask(
            ws, {"type": "ruling.override", "id": "o", "record": first["record"], "modifier": -3, "reason": "GM call"}
        )
        assert overridden["type"] == "ruling.overridden" and overridden["original"] == first["record"]
        unknown = await ask(ws, {"type": "ruling.override", "id": "o2", "record": "nope", "modifier": 0, "reason": "x"})
        assert unknown["type"] == "error"
        ended = await ask(ws, {"type": "session.end", "id": "e"})
        assert ended["session"]["id"] == session_id and ended["session"]["ended"]

    base = f"http://{bridge}/api/worlds/w-a/sessions/{session_id}/rulings"
    async with aiohttp.ClientSession() as http:
        async with http.get(base) as anonymous:
            assert anonymous.status == 401
        async with http.get(base, headers={"Authorization": "Bearer b-secret"}) as other_world:
            assert other_world.status in (401, 403, 404)
        async with http.get(base, headers={"Authorization": f"Bearer {SECRET}"}) as response:
            assert response.status == 200
            body = await response.json()
    kinds = sorted(r["kind"] for r in body["rulings"])
    assert kinds == ["override", "ruling"]
    original = next(r for r in body["rulings"] if r["kind"] == "ruling")
    override = next(r for r in body["rulings"] if r["kind"] == "override")
    assert original["modifier"] == -6 and original["actor"]["name"] == "A"
    assert override["modifier"] == -3 and override["overrides"] == original["id"]
    assert original["line"]["start"] == {"x": 50.0, "y": 450.0, "z": 0.0}
    assert original["snapshot"] == override["snapshot"] and isinstance(original["snapshot"], str)  # by key


async def test_a_world_secret_cannot_log_into_another_world(bridge: str) -> None:
    """Per-world secrets: w-b's GM sees w-b's log, never w-a's."""
    async with connect(f"ws://{bridge}/ws") as ws:
        await hello(ws, "w-a")
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        await ask(ws, {**ATTACK, "id": "a"})
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer b-secret"}) as http:
        async with http.get(f"http://{bridge}/api/worlds") as response:
            worlds = await response.json() if response.status == 200 else {"worlds": []}
        assert "w-a" not in json.dumps(worlds)
        async with http.get(f"http://{bridge}/api/worlds/w-a/sessions") as response:
            assert response.status in (401, 403, 404)


def start_bridge(data_dir: Path, database: str | None) -> tuple[subprocess.Popen[str], str]:
    command = [SIGHTLINE, "serve", "--port", "0", "--data-dir", str(data_dir), "--secret", SECRET]
    if database:
        command += ["--database", database]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("bridge exited")
        if "ws://" in line:
            return process, line.split()[-1]


async def rulings_from_bridges(bridges: list[tuple[subprocess.Popen[str], str]], each: int) -> list[dict[str, Any]]:
    """Every bridge answers ``each`` logged rulings of the world w-shared at once; then each is stopped (SIGTERM,
    exit 0). The answers, in one list."""
    try:

        async def play(url: str, name: str) -> list[dict[str, Any]]:
            async with connect(url) as ws:
                await hello(ws, world="w-shared")
                await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
                for i in range(each):
                    await ws.send(json.dumps({**ATTACK, "id": f"{name}{i}"}))
                return [json.loads(await ws.recv()) for _ in range(each)]

        batches = await asyncio.gather(*(play(url, f"p{n}-") for n, (_, url) in enumerate(bridges)))
    finally:
        for process, _ in bridges:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0
            if process.stdout:
                process.stdout.close()
    return [answer for batch in batches for answer in batch]


async def kill_mid_stream(data_dir: Path, database: str | None) -> set[str]:
    """Stream logged rulings, SIGKILL the bridge while requests are in flight; the answered record ids."""
    process, url = start_bridge(data_dir, database)
    answered: set[str] = set()
    try:
        async with connect(url) as ws:
            await hello(ws)
            await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})

            async def reader() -> None:
                async for frame in ws:
                    answer = json.loads(frame)
                    if answer.get("logged"):
                        answered.add(answer["record"])

            reading = asyncio.create_task(reader())
            for i in range(400):
                await ws.send(json.dumps({**ATTACK, "id": f"a{i}"}))
                if i == 250:
                    while len(answered) < 50:
                        await asyncio.sleep(0.01)
                    process.send_signal(signal.SIGKILL)
                    break
            with pytest.raises(Exception):  # noqa: B017 - the connection dies with the process
                await asyncio.wait_for(reading, timeout=10)
    finally:
        process.wait(timeout=10)
        if process.stdout:
            process.stdout.close()
    assert process.returncode == -signal.SIGKILL
    return answered


@pytest.fixture(params=["sqlite", "postgresql"])
async def log_database(request: pytest.FixtureRequest) -> str | None:
    """``--database`` for each store: None (SQLite in the data dir) or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return None
    return await new_postgres_database(request.getfixturevalue("postgres_server"))


async def test_sigkill_loses_no_answered_record(log_database: str | None, tmp_path: Path) -> None:
    """Durability: every ruling answered as logged before a SIGKILL is in the log after a restart."""
    database = log_database
    answered = await kill_mid_stream(tmp_path, database)
    assert len(answered) >= 50
    process, _ = start_bridge(tmp_path, database)  # restart: migrations and recovery run
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    if process.stdout:
        process.stdout.close()
    store = await open_store(database, tmp_path)
    try:
        stored = {record.id async for record in store.export("w-a", None)}
    finally:
        await store.close()
    assert answered <= stored


def test_log_commands_read_what_serve_wrote(tmp_path: Path) -> None:
    """`sightline log sessions` and `log export` read the store serve wrote, from the same --data-dir."""

    async def play() -> None:
        config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET)
        async with run_bridge(config) as (host, port), connect(f"ws://{host}:{port}/ws") as ws:
            await hello(ws)
            await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
            await ask(ws, {**ATTACK, "id": "a"})

    asyncio.run(play())
    env = {**os.environ, "SIGHTLINE_DATA_DIR": str(tmp_path)}
    sessions = subprocess.run(
        [SIGHTLINE, "log", "sessions", "--json"], capture_output=True, text=True, env=env, check=True
    )
    (session,) = json.loads(sessions.stdout)
    exported = subprocess.run(
        [SIGHTLINE, "log", "export", "--session", session["id"], "--format", "csv"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert exported.stdout.count("\n") == 2 and "bs-attack" in exported.stdout


async def test_two_bridge_processes_share_one_postgresql_log(postgres_server: Any, tmp_path: Path) -> None:
    """docs/operations.md: several bridge processes can share one PostgreSQL log.

    Two real `sightline serve` processes answer logged rulings for one world at once: every answer is logged with its
    own record, and the world has one game session holding all of them (not one per process).
    """
    database = await new_postgres_database(postgres_server)
    answers = await rulings_from_bridges([start_bridge(tmp_path / f"bridge-{n}", database) for n in range(2)], 40)
    assert len(answers) == 80 and all(a["type"] == "adjudication" and a["logged"] for a in answers)
    assert len({a["record"] for a in answers}) == 80
    store = await open_store(database, tmp_path)
    try:
        sessions = await store.list_sessions("w-shared")
        stored = {record.id async for record in store.export("w-shared", None)}
    finally:
        await store.close()
    assert len(sessions) == 1 and sessions[0].rulings == 80
    assert stored == {a["record"] for a in answers}


async def read_as_gm(url: str) -> str:
    """The text at ``url``, read with the bridge's secret."""
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {SECRET}"}) as http,
        http.get(url) as response,
    ):
        assert response.status == 200
        return await response.text()


async def test_the_worlds_name_from_hello_names_it_on_the_log_pages(log_database: str | None, tmp_path: Path) -> None:
    """hello's world_name names the world on the log pages and the export: the newest one sent, escaped.

    Sent over a real WebSocket, it is kept with the session (session.start and logged rulings); the id is shown only as
    the tooltip.
    """
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET, database=log_database)
    async with run_bridge(config) as (host, port):
        base = f"http://{host}:{port}"
        session_id = ""
        for name in ("Ashes <i>of</i> Kaldor", "Ashes & Embers"):
            async with connect(f"ws://{host}:{port}/ws") as ws:
                said = {"type": "hello", "protocol": 1, "world": "w-a", "world_name": name, "secret": SECRET}
                assert (await ask(ws, said))["type"] == "welcome"
                await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
                if not session_id:
                    started = await ask(ws, {"type": "session.start", "id": "g", "name": "Friday raid"})
                    session_id = started["session"]["id"]
                    assert "world_name" not in started["session"]  # the wire's session is the contract's
                    first = '<span class="world" title="w-a">Ashes &lt;i&gt;of&lt;/i&gt; Kaldor</span>'
                    assert first in await read_as_gm(f"{base}/log/")  # named by session.start alone
                assert (await ask(ws, {**ATTACK, "id": "a"}))["logged"] is True
        listing = await read_as_gm(f"{base}/log/")
        page = await read_as_gm(f"{base}/log/w-a/{session_id}")
        exported = await read_as_gm(f"{base}/api/worlds/w-a/sessions/{session_id}/export.jsonl")
    shown = '<span class="world" title="w-a">Ashes &amp; Embers</span>'
    assert f"<td>{shown}</td>" in listing and "Kaldor" not in listing and ">w-a<" not in listing
    assert shown in page and ">w-a<" not in page
    assert [json.loads(line)["world_name"] for line in exported.splitlines()] == ["Ashes & Embers"] * 2


async def test_a_world_name_too_long_is_refused_by_name(bridge: str) -> None:
    """A hello whose world_name is longer than 200 characters: invalid-message naming the field, close 4400."""
    async with connect(f"ws://{bridge}/ws") as ws:
        await ws.send(
            json.dumps({"type": "hello", "protocol": 1, "world": "w-a", "world_name": "x" * 201, "secret": SECRET})
        )
        error = json.loads(await ws.recv())
        assert (error["code"], error["details"]["field"]) == ("invalid-message", "world_name")
        await ws.wait_closed()
        assert ws.close_code == 4400


async def play_one_evening(url: str) -> None:
    """A short game over a real WebSocket: a named session, rulings as tokens move and a zone appears, a preview
    (not logged), a GM override, a ruling blocked by a wall, the session's end."""
    async with connect(url) as ws:
        said = {"type": "hello", "protocol": 1, "world": "w-a", "world_name": "Ashes & <Embers>", "secret": SECRET}
        assert (await ask(ws, said))["type"] == "welcome"
        await ask(ws, {"type": "scene.sync", "id": "q", "scene": on_line_scene()})
        await ask(ws, {"type": "session.start", "id": "g", "name": "Night raid | part 1"})
        first = await ask(ws, {**ATTACK, "id": "a1"})
        await ask(ws, {**ATTACK, "id": "p1", "log": False})
        for step, x in enumerate((200, 500, 900)):
            moved = {"type": "scene.patch", "id": f"m{step}", "scene": "s1"}
            await ask(ws, {**moved, "upsert": {"tokens": [token("a", x, 400)]}})
            await ask(ws, {**ATTACK, "id": f"b{step}", "action": "discover" if step == 1 else "bs-attack"})
        zone = rect_region("r-smoke", "zero", 950, 350, 40, 200)
        await ask(ws, {"type": "scene.patch", "id": "z", "scene": "s1", "upsert": {"regions": [zone]}})
        await ask(ws, {**ATTACK, "id": "c1"})
        wall = {"id": "wall", "c": [980, 0, 980, 1000], "sight": 20}
        await ask(ws, {"type": "scene.patch", "id": "w", "scene": "s1", "upsert": {"walls": [wall]}})
        await ask(ws, {**ATTACK, "id": "c2", "reaction": True})
        override = {"type": "ruling.override", "id": "o", "record": first["record"], "modifier": -3}
        assert (await ask(ws, {**override, "reason": 'GM: "=cover", half'}))["type"] == "ruling.overridden"
        await ask(ws, {"type": "session.end", "id": "e"})


def normalised(text: str) -> str:
    """An export with what differs between two logs of the same game replaced: record and session ids (in order of
    appearance), times."""
    found: dict[str, str] = {}
    text = re.sub(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?( UTC)?", "<time>", text)
    return re.sub(r"\b[0-9A-HJKMNP-TV-Z]{26}\b", lambda m: found.setdefault(m.group(), f"<id{len(found)}>"), text)


async def test_sqlite_and_postgresql_export_the_same_game_alike(postgres_server: Any, tmp_path: Path) -> None:
    """Parity: one game logged by a real bridge to SQLite and to PostgreSQL exports alike (JSONL, CSV, Markdown).

    Only record and session ids and times differ; `log sessions` lists the same session.
    """
    exports: dict[str, dict[str, str]] = {}
    for database in (None, await new_postgres_database(postgres_server)):
        data_dir = tmp_path / ("postgres" if database else "sqlite")
        config = BridgeConfig(host="127.0.0.1", port=0, data_dir=data_dir, secret=SECRET, database=database)
        async with run_bridge(config) as (host, port):
            await play_one_evening(f"ws://{host}:{port}/ws")
        where = ["--data-dir", str(data_dir), *(["--database", database] if database else [])]
        listed = subprocess.run([SIGHTLINE, "log", "sessions", "--json", *where], capture_output=True, text=True)
        (session,) = json.loads(listed.stdout)
        assert (session["name"], session["rulings"], session["world_name"]) == (
            "Night raid | part 1",
            7,
            "Ashes & <Embers>",
        )
        exports[str(database)] = {"sessions": normalised(listed.stdout)}
        for form in ("jsonl", "csv", "md"):
            command = [SIGHTLINE, "log", "export", "--session", session["id"], "--format", form, *where]
            exported = subprocess.run(command, capture_output=True, text=True, check=True)
            exports[str(database)][form] = normalised(exported.stdout)
    sqlite, postgres = exports.values()
    assert sqlite["jsonl"].count("\n") == 7 and '"kind":"override"' in sqlite["jsonl"]
    for form in ("sessions", "jsonl", "csv", "md"):
        assert sqlite[form] == postgres[form], form


async def test_two_bridges_on_one_sqlite_data_directory_keep_every_ruling(tmp_path: Path) -> None:
    """Two real `sightline serve` on one data directory by mistake: SQLite's locks keep the log whole, nothing lost.

    Both answer logged rulings of one world at once: every answer is a record of its own and in the log, the world has
    one game session holding them all, and SQLite's integrity check passes.
    """
    answers = await rulings_from_bridges([start_bridge(tmp_path, None) for _ in range(2)], 60)
    assert len(answers) == 120 and all(a["type"] == "adjudication" and a["logged"] for a in answers)
    db = sqlite3.connect(tmp_path / "sightline.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        db.close()
    store = await open_store(None, tmp_path)
    try:
        sessions = await store.list_sessions("w-shared")
        stored = {record.id async for record in store.export("w-shared", None)}
    finally:
        await store.close()
    assert len(sessions) == 1 and sessions[0].rulings == 120
    assert stored == {a["record"] for a in answers}
