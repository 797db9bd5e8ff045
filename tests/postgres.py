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

__all__ = ["PostgresProcess", "PostgresServer", "new_postgres_database", "run_postgres"]


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


class PostgresProcess:
    """A PostgreSQL cluster in a temporary directory that a test can stop and start again."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.bindir = _postgres_bin()
        self.root = Path(tempfile.mkdtemp(prefix="sightline-pg-"))
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.data = self.root / "data"
        self.port = _free_port()
        self.fsync = fsync
        self.server: subprocess.Popen[bytes] | None = None
        subprocess.run(
            [
                *self.prefix,
                str(self.bindir / "initdb"),
                *("-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"),
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )

    def start(self) -> PostgresServer:
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 - the server's own log, closed by the child
        self.server = subprocess.Popen(
            [
                *self.prefix,
                str(self.bindir / "postgres"),
                *("-D", str(self.data), "-p", str(self.port), "-k", str(self.root)),
                *("-c", "listen_addresses=127.0.0.1", "-c", f"fsync={'on' if self.fsync else 'off'}"),
                *("-c", "max_connections=200"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 30
        while True:
            ready = subprocess.run(
                [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"],
                capture_output=True,
            )
            if ready.returncode == 0:
                return PostgresServer(self.port)
            if self.server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"PostgreSQL did not start: {(self.root / 'server.log').read_text()}", pytrace=False)
            time.sleep(0.1)

    def stop(self, *, fast: bool = True) -> None:
        """Stop the server with ``pg_ctl``: ``fast`` disconnects clients at once, else a smart shutdown."""
        if self.server is None:
            return
        mode = "fast" if fast else "smart"
        subprocess.run(
            [*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"],
            capture_output=True,
        )
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        self.server = None

    def remove(self) -> None:
        self.stop(fast=False)
        shutil.rmtree(self.root, ignore_errors=True)


def run_postgres() -> Iterator[PostgresServer]:
    """Start a PostgreSQL server, yield it, stop and remove it."""
    process = PostgresProcess()
    try:
        yield process.start()
    finally:
        process.remove()


_database_counter = iter(range(1, 1_000_000))


async def new_postgres_database(server: PostgresServer, *, icu_locale: str | None = None) -> str:
    """A fresh, empty database on the test server; returns its DSN. With ``icu_locale`` (``"es"``) its text
    sorts by that language's ICU collation, as a server set up in that language does (else ``C.UTF-8``)."""
    name = f"log_{os.getpid()}_{next(_database_counter)}"
    connection = await asyncpg.connect(server.dsn())
    try:
        if icu_locale is None:
            await connection.execute(f'CREATE DATABASE "{name}"')
        else:
            await connection.execute(
                f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '{icu_locale}'"
            )
    finally:
        await connection.close()
    return server.dsn(name)
