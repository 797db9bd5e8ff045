"""The log in an embedded SQLite file (the default): WAL, ``synchronous=FULL``, one writer at a time.

Writes go through one connection inside ``BEGIN IMMEDIATE`` transactions, which take SQLite's write
lock up front, so a read-then-write (which session is open?) is never interleaved with another
writer — another coroutine (an asyncio lock) or another process on the same file (the file lock,
waited on for up to ``busy_timeout``). Reads use a second connection and never wait for writers.
With ``synchronous=FULL`` in WAL mode, a transaction is on disk when ``COMMIT`` returns.

Before each write the store checks that its path still names the file it has open: a log file deleted,
moved or replaced while the bridge runs would otherwise take every later "logged" ruling with it (SQLite
goes on writing the unlinked file, and a new one starts empty at the next start). The store then writes
what it holds back to the path (or, when another file was put there, beside it as
``sightline.db.replaced-<time>``), says so on its logger, and goes on in the file at the path.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import sqlite3
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite

from ..config import owner_only
from .sql import Executor, Row, SqlLogStore
from .store import DEFAULT_IDLE_TIMEOUT

__all__ = ["SqliteLogStore"]

_log = logging.getLogger(__name__)

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


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names (device, inode); ``None`` when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


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
        #: The file the connections have open (device, inode), as the path named it at connect.
        self._file: tuple[int, int] | None = None
        #: Its ``-wal`` and ``-shm`` files (path → identity), which SQLite leaves behind when the file goes.
        self._sidecars: dict[Path, tuple[int, int] | None] = {}
        self._reopening = False

    async def connect(self) -> None:
        if not self.path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, f"no directory {self.path.parent} (make it first, or fix the path)")
        _owner_only_files(self.path)
        self._file = _identity(self.path)
        self._writer = await aiosqlite.connect(self.path, isolation_level=None)
        await self._writer.create_function("lower", 1, _lower, deterministic=True)
        for pragma in _PRAGMAS:
            await self._writer.execute(pragma)
        await self._migrate()
        self._reader = await aiosqlite.connect(self.path, isolation_level=None)
        await self._reader.create_function("lower", 1, _lower, deterministic=True)
        for pragma in (*_PRAGMAS[2:], "PRAGMA query_only = ON"):
            await self._reader.execute(pragma)
        self._sidecars = {
            file: _identity(file) for file in (self.path.with_name(self.path.name + end) for end in ("-wal", "-shm"))
        }

    async def close(self) -> None:
        await self.drain()
        if self._writer is not None and _identity(self.path) != self._file:
            async with self._write_lock.turn(""):  # deleted since the last write: keep what was logged
                try:
                    await self._keep_lost_file()
                except OSError as exc:
                    _log.error("%s; what it held is lost", exc)
        for connection in (self._reader, self._writer):
            if connection is not None:
                await connection.close()
        self._reader = self._writer = None

    @asynccontextmanager
    async def _write(self, locks: Sequence[str]) -> AsyncIterator[Executor]:
        if self._writer is None:
            raise RuntimeError("log store is not connected")
        if self._reopening:  # the migration of the file opened again, the write lock held already
            async with self._transaction() as db:
                yield db
            return
        async with self._write_lock.turn(",".join(sorted(set(locks)))):
            if _identity(self.path) != self._file:
                await self._keep_lost_file()
            async with self._transaction() as db:
                yield db

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Executor]:
        writer = self._writer
        if writer is None:
            raise RuntimeError("log store is not connected")
        await writer.execute("BEGIN IMMEDIATE")
        try:
            yield _SqliteExecutor(writer)
        except BaseException:
            await writer.execute("ROLLBACK")
            raise
        # A COMMIT that cannot be written (the disk full, a file-size limit) fails with "disk I/O error" and
        # SQLite rolls the transaction back itself: the next one starts normally once there is room.
        await writer.execute("COMMIT")

    async def _keep_lost_file(self) -> None:
        """The path no longer names the file the log has open: it was deleted, moved or replaced.

        What the open file holds is written back to the path (deleted or moved) or beside it (replaced by
        another file: ``NAME.replaced-<UTC time>``), the old connections are closed and the file at the path
        is opened; the logger says what happened. An :class:`OSError` naming the file when it cannot be
        done (then the old file stays open, and the next write tries again)."""
        assert self._writer is not None
        gone = not self.path.exists()
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        keep = self.path if gone else self.path.with_name(f"{self.path.name}.replaced-{stamp}")
        partial = keep.with_name(keep.name + ".partial")
        try:
            async with self._writer.execute("SELECT COUNT(*) FROM rulings") as cursor:
                row = await cursor.fetchone()
            count = int(row[0]) if row else 0
            partial.unlink(missing_ok=True)
            target = sqlite3.connect(partial, check_same_thread=False)
            try:
                await self._writer.backup(target)
            finally:
                target.close()
            os.chmod(partial, 0o600)
        except (OSError, sqlite3.Error) as exc:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            what = "deleted" if gone else "replaced"
            raise OSError(
                errno.EIO, f"the log file {self.path} was {what} while the bridge ran; cannot write it again: {exc}"
            ) from exc
        for connection in (self._reader, self._writer):
            if connection is not None:
                with contextlib.suppress(Exception):
                    await connection.close()
        self._reader = self._writer = None
        # SQLite does not remove the -wal and -shm of a file that went: left there, the file opened next at
        # the path would read the old file's pages from them as its own. What they held is in the copy.
        for file, identity in self._sidecars.items():
            if identity is not None and _identity(file) == identity:
                file.unlink(missing_ok=True)
        partial.replace(keep)
        self._latest.clear()  # the deltas' bases: what is stored in the file now at the path
        self._stored.clear()
        self._named.clear()  # the names' sort keys: likewise
        if gone:
            _log.warning(
                "the log file %s was deleted or moved while the bridge was running; it has been written again from"
                " the bridge's open copy (%d rulings), and logging goes on in it. To start a new log, stop the"
                " bridge before removing the file.",
                self.path,
                count,
            )
        else:
            _log.warning(
                "the log file %s was replaced by another file while the bridge was running; what the bridge had"
                " logged (%d rulings) is kept in %s, and logging goes on in the new file at %s.",
                self.path,
                count,
                keep,
                self.path,
            )
        self._reopening = True
        try:
            await self.connect()
        finally:
            self._reopening = False

    async def _explain(self, db: Executor, sql: str, params: Sequence[object]) -> list[str]:
        return [str(row[3]) for row in await db.fetch("EXPLAIN QUERY PLAN " + sql, *params)]

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[Executor]:
        connection = self._reader or self._writer
        if connection is None:
            raise RuntimeError("log store is not connected")
        yield _SqliteExecutor(connection)
