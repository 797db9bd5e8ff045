"""The log in PostgreSQL, for hosts where several bridge processes share one database.

A pool of asyncpg connections. Each write transaction first takes a transaction-scoped advisory lock
per world it touches (in sorted order, so two writers never deadlock), which serialises "which session
is open?" decisions across processes; the partial unique index on open sessions backs that up.
Migrations run under an advisory lock too, so processes starting together migrate once. Ids and times
are ``TEXT COLLATE "C"``, so they sort as bytes whatever the database's locale.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import lru_cache

import asyncpg  # type: ignore[import-untyped]

from .sql import Executor, Row, SqlLogStore
from .store import DEFAULT_IDLE_TIMEOUT

__all__ = ["PostgresLogStore"]

_PLACEHOLDER = re.compile(r"\?")


@lru_cache(maxsize=512)
def _numbered(sql: str) -> str:
    """``?`` placeholders as PostgreSQL's ``$1, $2, …`` (the log's SQL has no ``?`` in literals)."""
    counter = iter(range(1, 10_000))
    return _PLACEHOLDER.sub(lambda _: f"${next(counter)}", sql)


class _PostgresExecutor:
    def __init__(self, connection: asyncpg.pool.PoolConnectionProxy) -> None:
        self._connection = connection

    async def execute(self, sql: str, *params: object) -> None:
        await self._connection.execute(_numbered(sql), *params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        await self._connection.executemany(_numbered(sql), rows)

    async def fetch(self, sql: str, *params: object) -> list[Row]:
        return list(await self._connection.fetch(_numbered(sql), *params))


class PostgresLogStore(SqlLogStore):
    """The log in the PostgreSQL database at ``dsn`` (``postgresql://user:pass@host:port/db``)."""

    key_type = 'TEXT COLLATE "C"'

    def __init__(
        self,
        dsn: str,
        *,
        idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
        min_size: int = 1,
        max_size: int = 10,
    ) -> None:
        super().__init__(idle_timeout=idle_timeout)
        self.dsn = dsn
        self._pool_size = (min_size, max_size)
        self._pool: asyncpg.Pool | None = None

    async def connect(self) -> None:
        self._pool = await asyncpg.create_pool(self.dsn, min_size=self._pool_size[0], max_size=self._pool_size[1])
        await self._migrate()

    async def close(self) -> None:
        await self.drain()
        if self._pool is not None:
            await self._pool.close()
        self._pool = None

    @asynccontextmanager
    async def _write(self, locks: Sequence[str]) -> AsyncIterator[Executor]:
        if self._pool is None:
            raise RuntimeError("log store is not connected")
        async with self._pool.acquire() as connection, connection.transaction():
            for name in sorted(set(locks)):
                await connection.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "sightline:" + name)
            yield _PostgresExecutor(connection)

    async def _explain(self, db: Executor, sql: str, params: Sequence[object]) -> list[str]:
        return [str(row[0]) for row in await db.fetch("EXPLAIN " + sql, *params)]

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[Executor]:
        if self._pool is None:
            raise RuntimeError("log store is not connected")
        async with self._pool.acquire() as connection:
            yield _PostgresExecutor(connection)
