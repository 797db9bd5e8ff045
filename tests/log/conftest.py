"""Fixtures of the log tests: a fresh store per test, on SQLite or on the session's PostgreSQL server
(``postgres_server``, from ``tests/conftest.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bridge.demo import play
from bridge.log.ids import new_id
from bridge.log.postgres import PostgresLogStore
from bridge.log.records import RulingRecord
from bridge.log.sql import _INSERT_RULING, SqlLogStore, _ruling_row
from bridge.log.sqlite import SqliteLogStore
from bridge.log.store import format_time, parse_time
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


async def append_as_before_world_names(store: SqlLogStore, record: RulingRecord) -> RulingRecord:
    """``record`` written as a bridge before schema 5 wrote it (a session row without ``world_name``, then
    the ruling in it): what a test of an older log's migration starts from."""
    stored = record.model_copy(
        update={"id": new_id(), "session": new_id(), "time": format_time(parse_time(record.time))}
    )
    async with store._write([record.world]) as db:
        await db.execute(
            "INSERT INTO sessions (id, world, name, started, ended, last_activity, rulings)"
            " VALUES (?, ?, '', ?, NULL, ?, 1)",
            stored.session,
            stored.world,
            stored.time,
            stored.time,
        )
        await db.execute(_INSERT_RULING, *_ruling_row(stored))
    return stored


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
