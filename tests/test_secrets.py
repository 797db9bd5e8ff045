"""Secrets and sign-ins on a real bridge (port 0, real SQLite): wrong secrets slowed per address and logged
without the secret, sign-ins bounded per secret, cross-site posts refused, the cookie Secure behind an https
public URL, owner-only data files, and the secret printed only when it is made."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from websockets.asyncio.client import connect

from bridge.config import BridgeConfig
from bridge.log.http import COOKIE_NAME, LOG_THROTTLE, MAX_SIGN_INS_PER_SECRET
from bridge.server import BridgeState, run_bridge
from bridge.throttle import FailureThrottle, ThrottlePolicy
from tests.scenes import on_line_scene

SIGHTLINE = str(Path(sys.executable).parent / "sightline")
SECRET = "bridge-secret"
WORLDS = {"w-ashes": "ashes-secret", "w-embers": "embers-secret"}
#: Short steps so a test sees the delay grow without waiting long: free 2, then 0.1, 0.2, 0.4, 0.8 s.
FAST = ThrottlePolicy(free_failures=2, base_delay=0.1, max_delay=0.8, log_interval=3600.0)


@contextlib.asynccontextmanager
async def bridge_at(
    data_dir: Path, policy: ThrottlePolicy = FAST, **config: Any
) -> AsyncIterator[tuple[str, BridgeState]]:
    """A real bridge with its SQLite log in ``data_dir``; yields ``host:port`` and its shared state."""
    states: list[BridgeState] = []

    def extend(app: web.Application, state: BridgeState) -> None:
        state.throttle = FailureThrottle(policy)
        app[LOG_THROTTLE] = state.throttle  # the sign-in form and hello share one throttle
        states.append(state)

    settings = BridgeConfig(host="127.0.0.1", port=0, data_dir=data_dir, secret=SECRET, world_secrets=WORLDS, **config)
    async with run_bridge(settings, extend=extend) as (host, port):
        yield f"{host}:{port}", states[0]


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[tuple[str, BridgeState]]:
    async with bridge_at(tmp_path) as running:
        yield running


def browser() -> aiohttp.ClientSession:
    """An HTTP client keeping cookies, as a browser does (also for a bridge reached by IP address)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def hello(address: str, world: str, secret: str) -> dict[str, Any]:
    async with connect(f"ws://{address}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
        answer: dict[str, Any] = json.loads(await ws.recv())
        return answer


async def log_a_ruling(address: str, world: str, secret: str) -> None:
    """One logged ruling in ``world``, so its log exists for a sign-in."""
    async with connect(f"ws://{address}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": on_line_scene()}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        ask = {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"}
        await ws.send(json.dumps(ask))
        assert json.loads(await ws.recv())["logged"] is True


async def sign_in(
    http: aiohttp.ClientSession, address: str, secret: str, **headers: str
) -> tuple[int, aiohttp.ClientResponse]:
    async with http.post(
        f"http://{address}/log/login", data={"secret": secret, "next": "/log/"}, headers=headers, allow_redirects=False
    ) as response:
        return response.status, response


async def test_wrong_hellos_wait_longer_each_time(bridge: tuple[str, BridgeState]) -> None:
    """After the free failures, each wrong hello from an address waits twice as long as the one before.

    Up to the cap; each is still answered `unauthorized`, and the right secret still gets in afterwards.
    """
    address, state = bridge
    waits = []
    for _ in range(6):
        started = time.monotonic()
        assert (await hello(address, "w-ashes", "a-guess"))["code"] == "unauthorized"
        waits.append(time.monotonic() - started)
    assert state.throttle.failures("127.0.0.1") == 6
    # Attempts 3 to 6 waited their steps after the previous failure: 0.1, 0.2, 0.4, 0.8 s (less the moments
    # between that failure and the next attempt's start).
    for attempt, step in zip(waits[2:], (0.1, 0.2, 0.4, 0.8), strict=True):
        assert attempt >= step * 0.7
    assert state.throttle.delay_for("127.0.0.1") == FAST.max_delay
    assert (await hello(address, "w-ashes", WORLDS["w-ashes"]))["type"] == "welcome"


async def test_parallel_guesses_queue_behind_each_other(bridge: tuple[str, BridgeState]) -> None:
    """Four wrong hellos sent at once from a penalised address queue: the last is answered after four steps.

    They do not wait side by side: each waits its step after the one before.
    """
    address, state = bridge
    for _ in range(FAST.free_failures + 1):
        await hello(address, "w-ashes", "a-guess")
    step = state.throttle.delay_for("127.0.0.1")
    started = time.monotonic()
    answers = await asyncio.gather(*(hello(address, "w-ashes", "a-guess") for _ in range(4)))
    assert all(a["code"] == "unauthorized" for a in answers)
    assert time.monotonic() - started >= 4 * step * 0.7
    assert state.throttle.failures("127.0.0.1") == FAST.free_failures + 5


async def test_wrong_sign_ins_are_slowed_and_logged_once_per_interval_without_the_secret(
    bridge: tuple[str, BridgeState], caplog: pytest.LogCaptureFixture
) -> None:
    """Wrong sign-ins and wrong hellos count against one address, logged once per interval without the secret.

    The first is logged at once, the rest when the interval ends; the log never contains a tried secret.
    """
    address, state = bridge
    caplog.set_level(logging.WARNING, logger="sightline.access")
    guesses = [f"guess-{n}-of-the-secret" for n in range(5)]
    async with browser() as http:
        for guess in guesses:
            status, _ = await sign_in(http, address, guess)
            assert status == 401
    await hello(address, "w-ashes", "hello-guess")
    assert state.throttle.failures("127.0.0.1") == 6
    assert state.throttle.delay_for("127.0.0.1") > 0
    first = [r.getMessage() for r in caplog.records if r.name == "sightline.access"]
    assert len(first) == 1 and "1 (1 at sign-in)" in first[0]
    state.throttle.flush_report()  # the interval ends
    reports = [r.getMessage() for r in caplog.records if r.name == "sightline.access"]
    assert len(reports) == 2 and "5 (1 at hello, 4 at sign-in) from 1 address(es)" in reports[1]
    assert "127.0.0.1" in reports[1]
    for text in reports:
        assert not any(guess in text for guess in [*guesses, "hello-guess"])


async def test_one_worlds_sign_ins_never_evict_anothers(tmp_path: Path) -> None:
    """One world's GM signing in past the per-secret bound signs out only that GM's oldest browsers.

    Far more sign-ins than the bound leave the other world's sign-in working.
    """
    async with bridge_at(tmp_path) as (address, _state):
        for world, secret in WORLDS.items():
            await log_a_ruling(address, world, secret)
        async with browser() as embers:
            status, _ = await sign_in(embers, address, WORLDS["w-embers"])
            assert status == 303
            cookies = []
            for _ in range(MAX_SIGN_INS_PER_SECRET + 20):
                async with browser() as ashes:
                    status, response = await sign_in(ashes, address, WORLDS["w-ashes"])
                    assert status == 303
                    cookies.append(response.cookies[COOKIE_NAME].value)
            async with embers.get(f"http://{address}/api/worlds") as response:
                assert response.status == 200 and (await response.json())["worlds"] == ["w-embers"]
        async with browser() as http:
            for cookie, expected in ((cookies[0], 401), (cookies[-1], 200)):
                headers = {"Cookie": f"{COOKIE_NAME}={cookie}"}
                async with http.get(f"http://{address}/api/worlds", headers=headers) as response:
                    assert response.status == expected


async def test_cross_site_sign_in_and_sign_out_are_refused(bridge: tuple[str, BridgeState]) -> None:
    """A form posted from another site neither signs in nor signs out; the bridge's own page does both.

    Another site is told by Sec-Fetch-Site, or by Origin where the browser sends no Sec-Fetch-Site.
    """
    address, _state = bridge
    await log_a_ruling(address, "w-ashes", WORLDS["w-ashes"])
    async with browser() as http:
        for headers in (
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},
            {"Origin": "https://evil.example"},
            {"Origin": "null"},
        ):
            status, _ = await sign_in(http, address, SECRET, **headers)
            assert status == 403, headers
        assert not http.cookie_jar.filter_cookies(f"http://{address}/").get(COOKIE_NAME)
        status, _ = await sign_in(http, address, SECRET, **{"Sec-Fetch-Site": "same-origin"})
        assert status == 303
        status, _ = await sign_in(http, address, SECRET, Origin=f"http://{address}")
        assert status == 303
        async with http.post(
            f"http://{address}/log/logout", headers={"Origin": "https://evil.example"}, allow_redirects=False
        ) as response:
            assert response.status == 403
        async with http.get(f"http://{address}/api/worlds") as response:
            assert response.status == 200  # still signed in
        async with http.post(
            f"http://{address}/log/logout", headers={"Sec-Fetch-Site": "same-origin"}, allow_redirects=False
        ) as response:
            assert response.status == 303
        async with http.get(f"http://{address}/api/worlds") as response:
            assert response.status == 401


async def test_the_cookie_is_secure_when_the_public_url_is_https(tmp_path: Path) -> None:
    """With --public-url https://… the cookie is Secure, though behind a TLS proxy the bridge sees plain HTTP.

    The sign-in form's Origin must be that public origin.
    """
    public = "https://sightline.example.org"
    async with bridge_at(tmp_path / "proxied", public_url=public) as (address, _state):
        await log_a_ruling(address, "w-ashes", WORLDS["w-ashes"])
        async with browser() as http:
            status, _ = await sign_in(http, address, SECRET, Origin=f"http://{address}")
            assert status == 403  # not the public origin
            status, response = await sign_in(http, address, SECRET, Origin=public)
            assert status == 303
            cookie = response.cookies[COOKIE_NAME]
            assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"
    async with bridge_at(tmp_path / "plain") as (address, _state):
        await log_a_ruling(address, "w-ashes", WORLDS["w-ashes"])
        async with browser() as http:
            status, response = await sign_in(http, address, SECRET)
            assert status == 303 and not response.cookies[COOKIE_NAME]["secure"]


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


async def test_the_data_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    """The data files are created readable by their owner only; a world-readable log is narrowed at start.

    Under a permissive umask the SQLite log, its -wal and -shm files, the secret and worlds.json are created 0600 and a
    new data directory 0700; a log file left world-readable is narrowed at start.
    """
    data_dir = tmp_path / "data"
    with umask(0o022):
        result = await asyncio.to_thread(
            subprocess.run,
            [SIGHTLINE, "secret", "--world", "w-ashes"],
            env={**os.environ, "SIGHTLINE_DATA_DIR": str(data_dir)},
            capture_output=True,
            text=True,
            check=True,
        )
        assert result.stdout.strip()
        assert (data_dir.stat().st_mode & 0o777) == 0o700
        async with bridge_at(data_dir) as (address, _state):
            await log_a_ruling(address, "w-ashes", WORLDS["w-ashes"])
            for name in ("sightline.db", "sightline.db-wal", "sightline.db-shm", "worlds.json"):
                assert (data_dir / name).stat().st_mode & 0o777 == 0o600, name
        (data_dir / "sightline.db").chmod(0o644)
        async with bridge_at(data_dir):
            assert (data_dir / "sightline.db").stat().st_mode & 0o777 == 0o600


def _run_env(env: dict[str, str] | None) -> dict[str, str]:
    """The machine's environment without the bridge's own settings, then ``env``."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}, **(env or {})}


def _serve_lines(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> list[str]:
    """Start `sightline serve --port 0 ARGS`, read what it prints up to the log line, stop it."""
    process = subprocess.Popen(
        [SIGHTLINE, "serve", "--port", "0", *args], stdout=subprocess.PIPE, text=True, env=_run_env(env), cwd=cwd
    )
    try:
        assert process.stdout is not None
        lines = []
        while not lines or not lines[-1].startswith("Log:"):
            line = process.stdout.readline()
            assert line, f"serve stopped early after {lines}"
            lines.append(line)
        return lines
    finally:
        process.terminate()
        process.wait(timeout=15)
        if process.stdout is not None:
            process.stdout.close()


def _secret_of(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`sightline secret ARGS`, run to its end (exit 0 checked)."""
    return subprocess.run(
        [SIGHTLINE, "secret", *args], capture_output=True, text=True, check=True, timeout=60, env=_run_env(env)
    )


async def test_the_secret_is_printed_when_made_and_shown_by_sightline_secret(tmp_path: Path) -> None:
    """The first start prints the secret it makes; later starts do not, naming the command that shows it.

    Printing it at every start would land it in the journal. The data directory here comes from SIGHTLINE_DATA_DIR,
    so the command named carries --data-dir: a `sightline secret` run elsewhere would not find it.
    """
    env = {"SIGHTLINE_DATA_DIR": str(tmp_path)}
    first = await asyncio.to_thread(_serve_lines, env=env)
    secret = (tmp_path / "secret").read_text().strip()
    assert sum(secret in line for line in first) == 1
    second = await asyncio.to_thread(_serve_lines, env=env)
    assert not any(secret in line for line in second)
    hint = f"The secret is not printed at every start; `sightline secret --data-dir {tmp_path}` shows it\n"
    assert hint in second
    shown = await asyncio.to_thread(_secret_of, "--data-dir", str(tmp_path))
    assert (shown.stdout, shown.stderr) == (secret + "\n", "")


async def test_a_start_that_cannot_listen_makes_no_secret_and_the_next_prints_it(tmp_path: Path) -> None:
    """A first start on a port already in use makes no secret; the first start that listens makes and prints it.

    Made before listening, the secret was kept by the failed start and never printed by the next.
    """
    data_dir = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        failed = await asyncio.to_thread(
            subprocess.run,
            [SIGHTLINE, "serve", "--port", port, "--data-dir", str(data_dir)],
            capture_output=True,
            text=True,
            timeout=60,
            env=_run_env(None),
        )
    assert failed.returncode == 2 and "already in use" in failed.stderr
    assert not (data_dir / "secret").exists()
    lines = await asyncio.to_thread(_serve_lines, "--data-dir", str(data_dir))
    secret = (data_dir / "secret").read_text().strip()
    assert f"Secret (new, paste into Foundry's Sightline settings): {secret}\n" in lines


async def test_the_later_starts_hint_names_the_data_dir_or_the_given_secret(tmp_path: Path) -> None:
    """Later starts name `sightline secret` as it must be typed; a secret given by option or environment is named.

    `--data-dir d1` gives `sightline secret --data-dir d1`; the default data directory plain `sightline secret`;
    `--secret` or SIGHTLINE_SECRET makes and stores nothing, and says so instead of pointing at `sightline secret`.
    """
    await asyncio.to_thread(_serve_lines, "--data-dir", "d1", cwd=tmp_path)
    lines = await asyncio.to_thread(_serve_lines, "--data-dir", "d1", cwd=tmp_path)
    assert "The secret is not printed at every start; `sightline secret --data-dir d1` shows it\n" in lines
    default = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    first = await asyncio.to_thread(_serve_lines, env=default)
    assert "The secret is printed only now, when it is made; `sightline secret` shows it again\n" in first
    assert "The secret is not printed at every start; `sightline secret` shows it\n" in await asyncio.to_thread(
        _serve_lines, env=default
    )
    for args, env, origin in (
        (["--secret", "s3cret-given"], None, "--secret"),
        ([], {"SIGHTLINE_SECRET": "s3cret-given"}, "SIGHTLINE_SECRET"),
    ):
        data_dir = tmp_path / f"given-{origin}"
        lines = await asyncio.to_thread(_serve_lines, "--data-dir", str(data_dir), *args, env=env)
        assert f"The secret is the one given with {origin} (none was made or stored)\n" in lines
        assert not any("sightline secret" in line or "s3cret-given" in line for line in lines)
        assert not (data_dir / "secret").exists()


async def test_sightline_secret_says_when_it_has_just_made_the_secret(tmp_path: Path) -> None:
    """`sightline secret` on a fresh data directory says on standard error that the secret it prints is new.

    Standard output is the secret alone either way (for `$(sightline secret)`); the second time nothing is said.
    """
    data_dir = tmp_path / "fresh"
    made = await asyncio.to_thread(_secret_of, "--data-dir", str(data_dir))
    secret = (data_dir / "secret").read_text().strip()
    assert made.stdout == secret + "\n"
    assert made.stderr == (
        f"sightline secret: made a new secret ({data_dir} had none), kept in {data_dir / 'secret'}"
        " for `sightline serve`\n"
    )
    again = await asyncio.to_thread(_secret_of, env={"SIGHTLINE_DATA_DIR": str(data_dir)})
    assert (again.stdout, again.stderr) == (secret + "\n", "")


async def test_sightline_secret_world_says_when_it_has_just_made_the_worlds_secret(tmp_path: Path) -> None:
    """`sightline secret --world W` says on standard error when W had no secret (a mistyped id would open nothing).

    Standard output is the secret alone either way; asked again, nothing is said.
    """
    made = await asyncio.to_thread(_secret_of, "--world", "w-ashes", "--data-dir", str(tmp_path))
    secret = json.loads((tmp_path / "worlds.json").read_text())["w-ashes"]
    assert made.stdout == secret + "\n"
    assert made.stderr == (
        "sightline secret: made a new secret for the world 'w-ashes' (it had none), kept in"
        f" {tmp_path / 'worlds.json'}; a world is named by its id, its folder's name under Foundry's Data/worlds\n"
    )
    again = await asyncio.to_thread(_secret_of, "--world", "w-ashes", "--data-dir", str(tmp_path))
    assert (again.stdout, again.stderr) == (secret + "\n", "")


async def test_wrong_bearer_secrets_on_the_api_count_and_wait_too(bridge: tuple[str, BridgeState]) -> None:
    """A wrong `Authorization: Bearer` on the log's JSON API counts against its address like a wrong hello.

    The API is a third door: it waits once the address is penalised, and the right secret still reads.
    """
    address, state = bridge
    async with browser() as http:
        for n in range(FAST.free_failures + 2):
            headers = {"Authorization": f"Bearer guess-{n}"}
            async with http.get(f"http://{address}/api/worlds", headers=headers) as response:
                assert response.status == 401
        assert state.throttle.failures("127.0.0.1") == FAST.free_failures + 2
        step = state.throttle.delay_for("127.0.0.1")
        started = time.monotonic()
        async with http.get(f"http://{address}/api/worlds", headers={"Authorization": f"Bearer {SECRET}"}) as response:
            assert response.status == 200
        assert time.monotonic() - started >= step * 0.7


async def test_a_world_secret_made_while_the_bridge_runs_opens_its_world(tmp_path: Path) -> None:
    """`sightline secret --world W` run beside a running bridge: W's new secret opens W at once, no restart.

    Before, the bridge knew only the worlds.json it started with and refused it (401) until restarted. A wrong secret
    for W is still refused, and the worlds known at the start keep their secrets.
    """
    async with bridge_at(tmp_path) as (address, state):
        assert (await hello(address, "w-new", "a-guess"))["code"] == "unauthorized"
        made = await asyncio.to_thread(
            subprocess.run,
            [str(Path(sys.executable).parent / "sightline"), "secret", "--world", "w-new", "--data-dir", str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        secret = made.stdout.strip()
        assert (await hello(address, "w-new", secret))["type"] == "welcome"
        assert (await hello(address, "w-new", "another-guess"))["code"] == "unauthorized"
        assert (await hello(address, "w-ashes", WORLDS["w-ashes"]))["type"] == "welcome"
        assert (await hello(address, "w-ashes", secret))["code"] == "unauthorized"
        assert state.throttle.failures("127.0.0.1") == 3


async def test_a_world_secret_signs_in_before_its_world_has_a_session(bridge: tuple[str, BridgeState]) -> None:
    """A world's valid secret, before the world's first session: reads its world and signs in, never counted wrong.

    Before, GET /api/worlds and the sign-in answered 401, each counted against the address as a wrong secret. The GM
    now sees the world and may start its first session from the page; a wrong secret is still refused and counted.
    """
    address, state = bridge
    secret = WORLDS["w-ashes"]
    async with browser() as http:
        async with http.get(f"http://{address}/api/worlds", headers={"Authorization": f"Bearer {secret}"}) as response:
            assert response.status == 200 and (await response.json()) == {"worlds": ["w-ashes"], "names": {}}
        status, _ = await sign_in(http, address, secret)
        assert status == 303
        async with http.get(f"http://{address}/log/") as response:
            assert response.status == 200 and 'action="/log/w-ashes/session/start?lang=en"' in await response.text()
        start = f"http://{address}/log/w-ashes/session/start"
        headers = {"Origin": f"http://{address}", "Sec-Fetch-Site": "same-origin"}
        async with http.post(start, data={"name": "First night"}, headers=headers, allow_redirects=False) as response:
            assert response.status == 303
        assert state.throttle.failures("127.0.0.1") == 0
        assert (await sign_in(http, address, "a-guess"))[0] == 401
    assert state.throttle.failures("127.0.0.1") == 1
