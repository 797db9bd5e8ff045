"""Fixtures of the log tests: a fresh store per test, on SQLite or on the session's PostgreSQL server
(``postgres_server``, from ``tests/conftest.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bridge.demo import play
from bridge.log.postgres import PostgresLogStore
from bridge.log.sql import SqlLogStore
from bridge.log.sqlite import SqliteLogStore
from tests.postgres import PostgresServer, new_postgres_database


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


@pytest.fixture(scope="session")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's skirmish played through a real bridge, its 13 rulings logged into one game session
    (``DIR/sightline.db``) — a real session to re-judge and browse."""
    data_dir = tmp_path_factory.mktemp("demo-log")
    asyncio.run(play("en", log_dir=data_dir))
    return data_dir
