"""Fixtures of the log tests: a real PostgreSQL server for the session, a fresh store per test.

The server is Debian's ``postgresql`` (``/usr/lib/postgresql/*/bin``): ``initdb`` into a temporary
directory, ``postgres`` on a free port of 127.0.0.1 with its socket in that directory, run as the
``postgres`` user through ``runuser`` when the tests run as root (PostgreSQL refuses root), stopped and
removed at the end. Each PostgreSQL test gets its own database on that server.
"""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

from bridge.log.postgres import PostgresLogStore
from bridge.log.sql import SqlLogStore
from bridge.log.sqlite import SqliteLogStore


@dataclass(frozen=True)
class PostgresServer:
    """A running test server: connect as ``postgres`` without a password."""

    port: int

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"


def _postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        pytest.fail(
            "PostgreSQL is not installed: the log tests need Debian's server binaries in "
            "/usr/lib/postgresql/*/bin (apt-get update && apt-get install -y postgresql)",
            pytrace=False,
        )
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of its own for the whole test session."""
    bindir = _postgres_bin()
    root = Path(tempfile.mkdtemp(prefix="sightline-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chown(root, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    subprocess.run(
        [
            *prefix,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    log = open(root / "server.log", "wb")  # noqa: SIM115 - open for the server's lifetime
    server = subprocess.Popen(
        [
            *prefix,
            str(bindir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(root),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            ready = subprocess.run(
                [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"],
                capture_output=True,
            )
            if ready.returncode == 0:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"PostgreSQL did not start: {(root / 'server.log').read_text()}", pytrace=False)
            time.sleep(0.1)
        yield PostgresServer(port)
    finally:
        server.terminate()  # runuser passes SIGTERM on: a smart shutdown
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


_database_counter = iter(range(1, 1_000_000))


async def new_postgres_database(server: PostgresServer) -> str:
    """A fresh, empty database on the test server; returns its DSN."""
    name = f"log_{os.getpid()}_{next(_database_counter)}"
    connection = await asyncpg.connect(server.dsn())
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return server.dsn(name)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The store implementation a parametrised test runs against."""
    return str(request.param)


@pytest.fixture
async def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--database`` value naming an empty log of the current backend."""
    if backend == "sqlite":
        return f"sqlite://{tmp_path / 'log.db'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return await new_postgres_database(server)


def make_store(url: str, *, idle_timeout: timedelta = timedelta(hours=4)) -> SqlLogStore:
    """An unconnected store for ``url`` (as :func:`bridge.log.store.open_store` would pick)."""
    if url.startswith("sqlite://"):
        return SqliteLogStore(Path(url.removeprefix("sqlite://")), idle_timeout=idle_timeout)
    return PostgresLogStore(url, idle_timeout=idle_timeout)


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[SqlLogStore]:
    """A connected, empty store of the current backend."""
    opened = make_store(store_url)
    await opened.connect()
    try:
        yield opened
    finally:
        await opened.close()
        await asyncio.sleep(0)
