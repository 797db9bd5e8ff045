"""A real PostgreSQL server for the tests: Debian's ``postgresql`` binaries, run for one test session.

``initdb`` into a temporary directory, ``postgres`` on a free port of 127.0.0.1 with its socket in that
directory, run as the ``postgres`` user through ``runuser`` when the tests run as root (PostgreSQL refuses
root), stopped and removed at the end. Each test that needs one gets a database of its own.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

__all__ = ["PostgresServer", "new_postgres_database", "run_postgres"]


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


def run_postgres() -> Iterator[PostgresServer]:
    """Start a PostgreSQL server, yield it, stop and remove it."""
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
