"""The log in an embedded SQLite file (the default): WAL, ``synchronous=FULL``, one writer at a time.

Writes go through one connection inside ``BEGIN IMMEDIATE`` transactions, which take SQLite's write
lock up front, so a read-then-write (which session is open?) is never interleaved with another
writer — another coroutine (an asyncio lock) or another process on the same file (the file lock,
waited on for up to ``busy_timeout``). Reads use a second connection and never wait for writers.
With ``synchronous=FULL`` in WAL mode, a transaction is on disk when ``COMMIT`` returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import aiosqlite

from ..config import owner_only
from .sql import Executor, Row, SqlLogStore
from .store import DEFAULT_IDLE_TIMEOUT

__all__ = ["SqliteLogStore"]

_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA busy_timeout = 30000",
    "PRAGMA foreign_keys = ON",
)


class _SqliteExecutor:
    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection

    async def execute(self, sql: str, *params: object) -> None:
        await self._connection.execute(sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        await self._connection.executemany(sql, rows)

    async def fetch(self, sql: str, *params: object) -> list[Row]:
        async with self._connection.execute(sql, params) as cursor:
            return list(await cursor.fetchall())


def _owner_only_files(path: Path) -> None:
    """The log holds every ruling and name of a world: its file is its owner's alone (mode 0600).

    Created empty with that mode before SQLite opens it, because SQLite gives the ``-wal`` and ``-shm``
    files the database's own mode; an existing file (and its ``-wal``/``-shm``) others could read is narrowed.
    """
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        owner_only(file)


def _lower(value: object) -> object:
    """SQLite's ``lower()`` folds ASCII only; the filters' case-insensitive matching needs "Álvaro" to
    find "álvaro" as PostgreSQL's does, so the log's connections replace it with Python's."""
    return value.lower() if isinstance(value, str) else value


class _TurnLock:
    """One writer at a time; those waiting take turns by world (the worlds a write touches), oldest first within
    a world. A world with many writes waiting — 32 connections each starting a session, one transaction and one
    ``fsync`` each — delays another world's next write by one of them, not by all (a first-come lock made
    another world's logged ruling wait 80-150 ms behind such a flood)."""

    def __init__(self) -> None:
        self._held = False
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @asynccontextmanager
    async def turn(self, world: str) -> AsyncIterator[None]:
        if self._held or self._waiting:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(world, deque()).append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._next()  # handed the turn as it was cancelled: pass it on
                else:
                    queue = self._waiting.get(world)
                    if queue is not None and granted in queue:
                        queue.remove(granted)
                        if not queue:
                            del self._waiting[world]
                raise
        else:
            self._held = True
        try:
            yield
        finally:
            self._next()

    def _next(self) -> None:
        """Hand the lock to the oldest waiter of the world whose turn it is (that world then goes last)."""
        while self._waiting:
            world, queue = next(iter(self._waiting.items()))
            granted = queue.popleft()
            if queue:
                self._waiting.move_to_end(world)
            else:
                del self._waiting[world]
            if not granted.done():
                granted.set_result(None)
                return
        self._held = False


class SqliteLogStore(SqlLogStore):
    """The log in the SQLite file at ``path`` (created when missing; its directory must exist — a typo in
    ``--database`` is refused rather than silently growing a new directory tree)."""

    def __init__(self, path: Path, *, idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT) -> None:
        super().__init__(idle_timeout=idle_timeout)
        self.path = path
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._write_lock = _TurnLock()

    async def connect(self) -> None:
        if not self.path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, f"no directory {self.path.parent} (make it first, or fix the path)")
        _owner_only_files(self.path)
        self._writer = await aiosqlite.connect(self.path, isolation_level=None)
        await self._writer.create_function("lower", 1, _lower, deterministic=True)
        for pragma in _PRAGMAS:
            await self._writer.execute(pragma)
        await self._migrate()
        self._reader = await aiosqlite.connect(self.path, isolation_level=None)
        await self._reader.create_function("lower", 1, _lower, deterministic=True)
        for pragma in (*_PRAGMAS[2:], "PRAGMA query_only = ON"):
            await self._reader.execute(pragma)

    async def close(self) -> None:
        await self.drain()
        for connection in (self._reader, self._writer):
            if connection is not None:
                await connection.close()
        self._reader = self._writer = None

    @asynccontextmanager
    async def _write(self, locks: Sequence[str]) -> AsyncIterator[Executor]:
        if self._writer is None:
            raise RuntimeError("log store is not connected")
        async with self._write_lock.turn(",".join(sorted(set(locks)))):
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteExecutor(self._writer)
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            await self._writer.execute("COMMIT")

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[Executor]:
        connection = self._reader or self._writer
        if connection is None:
            raise RuntimeError("log store is not connected")
        yield _SqliteExecutor(connection)
