"""The log store over SQL: everything both databases share.

The subclasses (:mod:`.sqlite`, :mod:`.postgres`) only open connections, give transactions and
translate placeholders; all SQL lives here and in ``migrations/*.sql``, written once for both. The
dialect layer is three things: the byte-ordered text type (``{key}`` in the migrations), ``?`` versus
``$n`` placeholders, and how writers of one world are serialised (SQLite: ``BEGIN IMMEDIATE`` locks the
file; PostgreSQL: a transaction-scoped advisory lock per world). The partial unique index
``sessions_one_open`` guarantees one open session per world in both, even if that were bypassed.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Any, ClassVar, Protocol

from ..core.rules.data_files import vocabulary
from ..core.rules.labels import label
from .group_commit import GroupCommit
from .i18n import LANGUAGES
from .ids import new_id
from .records import Party, RulingRecord, SceneSnapshot, snapshot_json
from .snapshot_delta import Replayer, delta
from .store import (
    END_ID,
    LoggedSession,
    LogStore,
    RulingFilter,
    RulingPage,
    SessionChoices,
    check_order,
    decode_cursor,
    decode_sorted_cursor,
    encode_cursor,
    encode_sorted_cursor,
    format_time,
    name_sort_key,
    parse_time,
)

__all__ = ["Executor", "SqlLogStore", "load_migrations"]

_log = logging.getLogger(__name__)

Row = Sequence[Any]

_SESSION_COLUMNS = "id, world, name, started, ended, last_activity, rulings"
_RULING_COLUMNS = (
    "id, world, session, time, kind, overrides, scene, actor_id, actor_name, target_id, target_name,"
    " action, allowed, modifier, snapshot, body"
)
#: What every schema's rulings hold: a bridge older than schema 7 writes these (the tests write older logs with it).
_INSERT_RULING = f"INSERT INTO rulings ({_RULING_COLUMNS}) VALUES ({', '.join('?' * 16)})"
#: Each ruling's place in the actor, target and MOD orders (schema 7, :func:`_sort_values`).
_SORT_COLUMNS = "actor_sort, target_sort, mod_sort"
_INSERT_SORTED_RULING = f"INSERT INTO rulings ({_RULING_COLUMNS}, {_SORT_COLUMNS}) VALUES ({', '.join('?' * 19)})"
#: ``mod_sort`` of a ruling without a MOD (not allowed): below every MOD (−99 to 99).
_NO_MOD = -1000
_INSERT_SNAPSHOT = (
    "INSERT INTO snapshots (key, scene, body, base, depth, chain) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (key) DO NOTHING"
)
#: A token as the pages show it: its name, else its id (a ruling without a target: "").
_SHOWN = {
    "actor": "COALESCE(NULLIF(actor_name, ''), actor_id)",
    "target": "COALESCE(NULLIF(target_name, ''), target_id, '')",
}
#: How each order of :data:`~bridge.log.store.ORDERS` sorts (``None``: by id alone, which is time order): by
#: the ruling's stored sort columns (schema 7), each walked from a page's cursor through its index
#: ``rulings_session_*_sort`` (session, column, id) — names as the pages show them by their sort key
#: (:func:`~bridge.log.store.name_sort_key`, compared byte by byte: the same order in SQLite and PostgreSQL,
#: whatever the server's collation); a ruling without a MOD (not allowed) below every MOD (:data:`_NO_MOD`). A
#: ruling written by a bridge older than schema 7 into a newer log has none of them: it sorts first by name
#: and with the rulings without a MOD.
_SORT_EXPRESSIONS: dict[str, str | None] = {
    "time": None,
    "actor": "actor_sort",
    "target": "target_sort",
    "mod": "mod_sort",
}
_INSERT_NAME_SORT_KEY = "INSERT INTO name_sort_keys (name, sort_key) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
#: Names whose sort key this process knows to be stored (it need not write them again).
_KNOWN_NAMES = 8192
#: Whether a ruling of a world refers to a snapshot (snapshots are shared by content across worlds).
_REFERS_TO_SNAPSHOT = "SELECT 1 FROM rulings WHERE world = ? AND snapshot = ? LIMIT 1"
#: A snapshot and, recursively, the ones its delta is based on (down to a whole one).
_SNAPSHOT_CHAIN = (
    "WITH RECURSIVE chain (key, base, body) AS ("
    " SELECT key, base, body FROM snapshots WHERE key IN ({keys})"
    " UNION SELECT s.key, s.base, s.body FROM snapshots s JOIN chain c ON s.key = c.base"
    ") SELECT key, base, body FROM chain"
)
_SNAPSHOT_CACHE_SIZE = 256
#: The most deltas between a stored snapshot and a whole one (a read applies at most this many).
MAX_SNAPSHOT_DEPTH = 500
#: The most bytes of deltas between a stored snapshot and a whole one, in whole snapshots: reading one
#: reads at most this much more; storing costs about 1 + 1/this times the deltas.
MAX_CHAIN_WHOLES = 4
_KNOWN_SNAPSHOTS = 4096
_MIGRATION_LOCK = "sightline:migrations"


class Executor(Protocol):
    """One connection inside a transaction (or not, for reads); SQL uses ``?`` placeholders."""

    async def execute(self, sql: str, *params: object) -> None: ...

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...

    async def fetch(self, sql: str, *params: object) -> list[Row]: ...


def load_migrations() -> list[tuple[int, str, str]]:
    """``(version, name, text)`` of every migration file, in order."""
    found = []
    for entry in resources.files("bridge.log").joinpath("migrations").iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


async def _world_names(db: Executor, worlds: Sequence[str] | None) -> dict[str, str]:
    """Each world's newest name: the one kept with its most recently active session that has one."""
    if worlds is not None and not worlds:
        return {}
    sql = "SELECT world, world_name FROM sessions WHERE world_name <> ''"
    params = list(worlds or [])
    if worlds is not None:
        sql += f" AND world IN ({', '.join('?' * len(params))})"
    rows = await db.fetch(sql + " ORDER BY last_activity, id", *params)
    return {str(world): str(name) for world, name in rows}  # the newest last


def _statements(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [part.strip() for part in "\n".join(lines).split(";") if part.strip()]


def _session(row: Row, world_names: dict[str, str] | None = None) -> LoggedSession:
    """A session row (:data:`_SESSION_COLUMNS`); ``world_names`` names its world (else ``""``)."""
    return LoggedSession(
        id=row[0],
        world=row[1],
        world_name=(world_names or {}).get(row[1], ""),
        name=row[2],
        started=row[3],
        ended=row[4],
        last_activity=row[5],
        rulings=int(row[6]),
    )


@dataclass
class _OpenSession:
    id: str
    last_activity: str
    #: The newest name of the world sent with a ruling of this session ("": none yet).
    world_name: str = ""
    added: int = 0
    dirty: bool = False


class _SessionTracker:
    """Resolves the session of each record in one write transaction, writing session rows at the end."""

    def __init__(self, db: Executor, idle_timeout: timedelta) -> None:
        self._db = db
        self._idle = idle_timeout
        self._open: dict[str, _OpenSession | None] = {}

    async def resolve(self, world: str, at: datetime, *, touch: bool, world_name: str = "") -> str:
        """The session a ruling of ``world`` at ``at`` joins (opened when none is open or it has idled out);
        a non-empty ``world_name`` becomes the session's name of the world."""
        if world not in self._open:
            rows = await self._db.fetch(
                "SELECT id, last_activity, world_name FROM sessions WHERE world = ? AND ended IS NULL", world
            )
            self._open[world] = _OpenSession(rows[0][0], rows[0][1], rows[0][2]) if rows else None
        current = self._open[world]
        if current is not None and at - parse_time(current.last_activity) > self._idle:
            await self._flush_one(current)
            await self._db.execute("UPDATE sessions SET ended = ? WHERE id = ?", current.last_activity, current.id)
            current = None
        if current is None:
            stamp = format_time(at)
            current = _OpenSession(new_id(), stamp, world_name)
            await self._db.execute(
                f"INSERT INTO sessions ({_SESSION_COLUMNS}, world_name) VALUES (?, ?, '', ?, NULL, ?, 0, ?)",
                current.id,
                world,
                stamp,
                stamp,
                world_name,
            )
            self._open[world] = current
        if touch:
            current.added += 1
            current.last_activity = max(current.last_activity, format_time(at))
            current.world_name = world_name or current.world_name
            current.dirty = True
        return current.id

    async def _flush_one(self, current: _OpenSession) -> None:
        if current.dirty:
            await self._db.execute(
                "UPDATE sessions SET rulings = rulings + ?, last_activity = ?, world_name = ? WHERE id = ?",
                current.added,
                current.last_activity,
                current.world_name,
                current.id,
            )
            current.added, current.dirty = 0, False

    async def flush(self) -> None:
        for current in self._open.values():
            if current is not None:
                await self._flush_one(current)


class SqlLogStore(LogStore):
    """:class:`LogStore` on a SQL database; subclasses supply connections and transactions."""

    #: The byte-ordered text type that replaces ``{key}`` in the migrations.
    key_type: ClassVar[str] = "TEXT"

    def __init__(self, *, idle_timeout: timedelta) -> None:
        self.idle_timeout = idle_timeout
        self._snapshots: OrderedDict[str, SceneSnapshot] = OrderedDict()
        self._group: GroupCommit[RulingRecord] | None = None
        #: Per (world, scene): the last snapshot stored or found stored, the base of the next delta.
        self._latest: dict[tuple[str, str], SceneSnapshot] = {}
        #: Snapshots known to be stored: key → (depth, bytes of the deltas down to a whole one).
        self._stored: OrderedDict[str, tuple[int, int]] = OrderedDict()
        #: Token names (else ids) whose sort key is known to be stored.
        self._named: OrderedDict[str, None] = OrderedDict()

    async def drain(self) -> None:
        """Let appends under way commit (before the connections close)."""
        if self._group is not None:
            await self._group.drain()
            self._group = None

    # Subclass hooks.

    @abc.abstractmethod
    async def connect(self) -> None:
        """Open connections and bring the schema up to date."""

    @abc.abstractmethod
    def _write(self, locks: Sequence[str]) -> AbstractAsyncContextManager[Executor]:
        """A write transaction, serialised with every other writer holding any of ``locks``."""

    @abc.abstractmethod
    def _read(self) -> AbstractAsyncContextManager[Executor]:
        """A connection for reads."""

    @abc.abstractmethod
    async def _explain(self, db: Executor, sql: str, params: Sequence[object]) -> list[str]:
        """The plan of ``sql``, one line a step."""

    # Schema.

    async def _migrate(self) -> None:
        async with self._write([_MIGRATION_LOCK]) as db:
            await db.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)"
            )
            rows = await db.fetch("SELECT MAX(version) FROM schema_version")
            current = rows[0][0] or 0
            for version, name, text in load_migrations():
                if version <= current:
                    continue
                for statement in _statements(text.replace("{key}", self.key_type)):
                    await db.execute(statement)
                step = _MIGRATION_STEPS.get(version)
                if step is not None:  # what SQL alone cannot do: values computed by the bridge
                    await step(db)
                await db.execute(
                    "INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)",
                    version,
                    name,
                    format_time(datetime.now().astimezone()),
                )

    async def schema_version(self) -> int:
        """The newest migration applied to this database."""
        async with self._read() as db:
            rows = await db.fetch("SELECT MAX(version) FROM schema_version")
        return int(rows[0][0] or 0)

    # Writing.

    async def append(self, record: RulingRecord) -> RulingRecord:
        """Committed before it returns; records appended at the same time share one transaction."""
        if self._group is None:
            self._group = GroupCommit(self.append_many, on_late=_committed_late)
        return await self._group.submit(record)

    async def append_many(self, records: Sequence[RulingRecord]) -> list[RulingRecord]:
        if not records:
            return []
        worlds = sorted({record.world for record in records})
        stored: list[RulingRecord] = []
        async with self._write(worlds) as db:
            sessions = _SessionTracker(db, self.idle_timeout)
            snapshots: dict[str, tuple[str, SceneSnapshot]] = {}
            for record in records:
                at = parse_time(record.time)
                session = None
                if record.session is not None:
                    session = await self._existing_session(db, record.world, record.session)
                if session is None:
                    session = await sessions.resolve(record.world, at, touch=True, world_name=record.world_name)
                elif record.world_name:
                    await db.execute(
                        "UPDATE sessions SET rulings = rulings + 1, world_name = ? WHERE id = ?",
                        record.world_name,
                        session,
                    )
                else:
                    await db.execute("UPDATE sessions SET rulings = rulings + 1 WHERE id = ?", session)
                if record.snapshot is not None:
                    snapshots.setdefault(record.snapshot.key, (record.world, record.snapshot))
                stored.append(record.model_copy(update={"id": new_id(), "session": session, "time": format_time(at)}))
            await sessions.flush()
            latest, found = await self._store_snapshots(db, list(snapshots.values()))
            await db.executemany(
                _INSERT_SORTED_RULING, [_ruling_row(record) + _sort_values(record) for record in stored]
            )
            named = await self._store_sort_keys(db, stored)
        # Only once committed: the base of a later delta is always a stored snapshot.
        self._know_names(named)
        self._latest.update(latest)
        for key, depth, chain in found:
            self._know(key, depth, chain)
        for _, snapshot in snapshots.values():
            self._remember(snapshot)
        return stored

    async def _store_snapshots(
        self, db: Executor, snapshots: list[tuple[str, SceneSnapshot]]
    ) -> tuple[dict[tuple[str, str], SceneSnapshot], list[tuple[str, int, int]]]:
        """Store each snapshot not stored yet: as a delta from its scene's previous one when the chain
        allows it (at most :data:`MAX_SNAPSHOT_DEPTH` deltas, together no bigger than
        :data:`MAX_CHAIN_WHOLES` times the snapshot whole), else whole.

        Returns each scene's new latest snapshot, and ``(key, depth, chain)`` of what is now stored
        (for the caller to remember once the transaction has committed)."""
        latest: dict[tuple[str, str], SceneSnapshot] = {}
        known: dict[str, tuple[int, int]] = {}
        rows: list[tuple[object, ...]] = []
        for world, snapshot in snapshots:
            scene = (world, snapshot.scene)
            previous = latest.get(scene) or self._latest.get(scene)
            latest[scene] = snapshot
            if snapshot.key in self._stored or snapshot.key in known:
                continue
            before = None if previous is None else known.get(previous.key) or self._stored.get(previous.key)
            base_of = (
                previous if previous is not None and before is not None and before[0] < MAX_SNAPSHOT_DEPTH else None
            )
            # In a thread: a scene of 50,000 walls took 0.1 s to write out and 0.3 s to compare with the last one,
            # which on the event loop every world's messages waited for.
            body, base, depth, chain = await asyncio.to_thread(_snapshot_row, snapshot, base_of, before or (0, 0))
            known[snapshot.key] = (depth, chain)
            rows.append((snapshot.key, snapshot.scene, body, base, depth, chain))
        if not rows:
            return latest, []
        await db.executemany(_INSERT_SNAPSHOT, rows)
        # Another process may have stored some first (ON CONFLICT): learn what is really there.
        keys = [str(row[0]) for row in rows]
        found = await db.fetch(
            f"SELECT key, depth, chain FROM snapshots WHERE key IN ({', '.join('?' * len(keys))})", *keys
        )
        return latest, [(str(key), int(depth), int(chain)) for key, depth, chain in found]

    async def _store_sort_keys(self, db: Executor, records: Sequence[RulingRecord]) -> list[str]:
        """Store the sort key of each actor's and target's shown name not known to be stored yet (the
        ``actor`` and ``target`` orders read them); returns the names, to remember once committed."""
        shown = dict.fromkeys(
            name
            for record in records
            for name in (_shown(record.actor), _shown(record.target) if record.target else "")
            if name and name not in self._named
        )
        if shown:
            await db.executemany(_INSERT_NAME_SORT_KEY, [(name, name_sort_key(name)) for name in shown])
        return list(shown)

    def _know_names(self, names: Sequence[str]) -> None:
        for name in names:
            self._named[name] = None
            self._named.move_to_end(name)
        while len(self._named) > _KNOWN_NAMES:
            self._named.popitem(last=False)

    def _know(self, key: str, depth: int, chain: int) -> None:
        self._stored[key] = (depth, chain)
        self._stored.move_to_end(key)
        while len(self._stored) > _KNOWN_SNAPSHOTS:
            self._stored.popitem(last=False)

    async def _existing_session(self, db: Executor, world: str, session: str) -> str | None:
        rows = await db.fetch("SELECT id FROM sessions WHERE id = ? AND world = ?", session, world)
        return str(rows[0][0]) if rows else None

    async def start_session(self, world: str, name: str, at: datetime, *, world_name: str = "") -> LoggedSession:
        stamp = format_time(at)
        session_id = new_id()
        async with self._write([world]) as db:
            await db.execute("UPDATE sessions SET ended = ? WHERE world = ? AND ended IS NULL", stamp, world)
            await db.execute(
                f"INSERT INTO sessions ({_SESSION_COLUMNS}, world_name) VALUES (?, ?, ?, ?, NULL, ?, 0, ?)",
                session_id,
                world,
                name,
                stamp,
                stamp,
                world_name,
            )
        return LoggedSession(
            id=session_id, world=world, world_name=world_name, name=name, started=stamp, last_activity=stamp
        )

    async def end_session(self, world: str, at: datetime) -> LoggedSession | None:
        async with self._write([world]) as db:
            rows = await db.fetch(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE world = ? AND ended IS NULL", world)
            if not rows:
                return None
            session = _session(rows[0])
            # An idle session (no ruling for the idle timeout) ended at its last ruling, as the world's next
            # ruling would have closed it: the GM tidying up the next day does not stretch the game to now.
            idle = session.state(at, self.idle_timeout) == "idle"
            stamp = max(session.last_activity if idle else format_time(at), session.started)
            await db.execute("UPDATE sessions SET ended = ? WHERE id = ?", stamp, session.id)
        return session.model_copy(update={"ended": stamp})

    async def current_or_new_session(self, world: str, at: datetime) -> LoggedSession:
        async with self._write([world]) as db:
            session_id = await _SessionTracker(db, self.idle_timeout).resolve(world, at, touch=False)
            rows = await db.fetch(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", session_id)
        return _session(rows[0])

    async def override(
        self,
        world: str,
        record_id: str,
        modifier: int | None,
        allowed: bool,
        reason: str,
        user: Party | None,
        at: datetime,
    ) -> RulingRecord:
        original = await self.get_record(world, record_id)
        if original is None:
            raise KeyError(record_id)
        record = original.model_copy(
            update={
                "id": new_id(),
                "kind": "override",
                "overrides": original.id,
                "time": format_time(at),
                "request": None,
                "user": user,
                "allowed": allowed,
                "modifier": modifier if allowed else None,
                "reason": reason,
            }
        )
        async with self._write([world]) as db:
            await db.execute(_INSERT_SORTED_RULING, *_ruling_row(record), *_sort_values(record))
            await db.execute("UPDATE sessions SET rulings = rulings + 1 WHERE id = ?", record.session)
            named = await self._store_sort_keys(db, [record])  # the original's names: stored unless it is older
        self._know_names(named)
        return record

    # Reading.

    async def get_record(self, world: str, record_id: str) -> RulingRecord | None:
        async with self._read() as db:
            rows = await db.fetch("SELECT id, body, snapshot FROM rulings WHERE id = ? AND world = ?", record_id, world)
            records = await self._records(db, rows)
        return records[0] if records else None

    async def get_session(self, session_id: str, *, world: str | None = None) -> LoggedSession | None:
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?"
        params: list[object] = [session_id]
        if world is not None:
            sql += " AND world = ?"
            params.append(world)
        async with self._read() as db:
            rows = await db.fetch(sql, *params)
            if not rows:
                return None
            names = await _world_names(db, [rows[0][1]])
        return _session(rows[0], names)

    async def list_worlds(self) -> list[str]:
        async with self._read() as db:
            rows = await db.fetch("SELECT DISTINCT world FROM sessions ORDER BY world")
        return [str(row[0]) for row in rows]

    async def world_names(self, worlds: Sequence[str] | None = None) -> dict[str, str]:
        async with self._read() as db:
            return await _world_names(db, worlds)

    async def list_sessions(self, world: str | None = None) -> list[LoggedSession]:
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions"
        params: list[object] = []
        if world is not None:
            sql += " WHERE world = ?"
            params.append(world)
        sql += " ORDER BY started DESC, id DESC"
        async with self._read() as db:
            rows = await db.fetch(sql, *params)
            names = await _world_names(db, None if world is None else [world])
        return [_session(row, names) for row in rows]

    async def query(
        self,
        world: str,
        session: str | None,
        *,
        filters: RulingFilter | None = None,
        limit: int = 100,
        cursor: str | None = None,
        snapshots: bool = True,
        before: str | None = None,
        order: str = "time",
    ) -> RulingPage:
        page = _Page.of(order, cursor, before, limit)
        filters = filters or RulingFilter()
        async with self._read() as db:
            sql, params = await page.sql(db, world, session, filters)
            rows = await db.fetch(sql, *params)
            more = len(rows) > limit
            backwards = page.backwards
            rows = rows[:limit] if not backwards else rows[:limit][::-1]
            records = await self._records(db, [row[:3] for row in rows], snapshots=snapshots)
        expression, after, last_page = page.expression, page.after, page.last_page

        def cursor_of(index: int) -> str:
            row = rows[index]
            return encode_cursor(str(row[0])) if expression is None else encode_sorted_cursor(row[3], str(row[0]))

        if not backwards:
            # A page after a cursor has rulings before it (the cursor came from one of them).
            next_cursor = cursor_of(-1) if more and records else None
            previous = cursor_of(0) if after is not None and records else None
        else:
            # A page before a cursor has rulings after it (the one the cursor names, at least) — unless the
            # cursor is past every record (``LAST_PAGE``): that page is the last.
            next_cursor = cursor_of(-1) if records and not last_page else None
            previous = cursor_of(0) if more and records else None
        keys = {str(row[0]): str(row[2]) for row in rows if row[2] is not None}
        return RulingPage(records, next_cursor, keys, previous)

    async def page_plan(
        self,
        world: str,
        session: str | None,
        *,
        filters: RulingFilter | None = None,
        limit: int = 100,
        cursor: str | None = None,
        before: str | None = None,
        order: str = "time",
    ) -> list[str]:
        """How the database would read the page :meth:`query` reads with the same arguments: its plan, one line a
        step (SQLite's ``EXPLAIN QUERY PLAN``, PostgreSQL's ``EXPLAIN``). For the benchmark and the tests: whether
        a page walks an index or reads and sorts the whole session."""
        page = _Page.of(order, cursor, before, limit)
        async with self._read() as db:
            sql, params = await page.sql(db, world, session, filters or RulingFilter())
            return await self._explain(db, sql, params)

    async def choices(self, world: str, session: str, *, most: int = 200) -> SessionChoices:
        async with self._read() as db:
            found = {
                column: [v for v in await _distinct(db, world, session, column, most) if v][:most]
                for column in ("actor_name", "target_name", "action", "scene")
            }
            actors, targets, actions = found["actor_name"], found["target_name"], found["action"]
            # Each scene's name as its latest snapshot in the session has it (a renamed scene: the new name).
            latest: dict[str, str] = {}
            for scene in found["scene"]:
                rows = await db.fetch(
                    "SELECT snapshot FROM rulings WHERE session = ? AND world = ? AND scene = ?"
                    " AND snapshot IS NOT NULL ORDER BY id DESC LIMIT 1",
                    session,
                    world,
                    scene,
                )
                if rows:
                    latest[scene] = str(rows[0][0])
            snapshots = await self._load_snapshots(db, set(latest.values()))
        scenes: dict[str, str] = {}
        regions: dict[str, dict[str, str]] = {}
        for scene, key in latest.items():
            snapshot = snapshots.get(key)
            if snapshot is not None and snapshot.name:
                scenes[scene] = snapshot.name
            if snapshot is not None:
                regions[scene] = {str(r.get("id")): str(r["name"]) for r in snapshot.regions if r.get("name")}
        return SessionChoices(actors, targets, actions, scenes, regions)

    async def export(
        self, world: str, session: str | None, *, batch_size: int = 500, order: str = "time"
    ) -> AsyncIterator[RulingRecord]:
        cursor: str | None = None
        name = (await self.world_names([world])).get(world)
        while True:
            page = await self.query(world, session, limit=batch_size, cursor=cursor, order=order)
            for record in page.records:
                # The world as the pages name it: its newest name, whatever this ruling's client called it.
                yield (
                    record
                    if name is None or record.world_name == name
                    else record.model_copy(update={"world_name": name})
                )
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def _records(self, db: Executor, rows: Sequence[Row], *, snapshots: bool = True) -> list[RulingRecord]:
        """The records of ``rows`` (``id, body, snapshot``), with their snapshots unless ``snapshots`` is
        false (then only the keys, in the page's ``snapshot_keys``).

        Decoding (up to a page of records, and the snapshots they need) runs in a thread, so a big page
        never holds the event loop that serves every other world."""
        found = await self._load_snapshots(db, {row[2] for row in rows if row[2] is not None}) if snapshots else {}
        return await asyncio.to_thread(_parse_records, rows, found)

    async def _load_snapshots(self, db: Executor, keys: set[str]) -> dict[str, SceneSnapshot]:
        """The snapshots of ``keys`` (those stored): from the cache, else read with the chains of deltas
        they are stored as — one query — and rebuilt in a thread, each delta applied once."""
        found = {key: self._snapshots[key] for key in keys if key in self._snapshots}
        missing = sorted(keys - set(found))
        if not missing:
            return found
        rows = await db.fetch(_SNAPSHOT_CHAIN.format(keys=", ".join("?" * len(missing))), *missing)
        stored = {str(key): (None if base is None else str(base), str(body)) for key, base, body in rows}
        cached = {key: self._snapshots[key] for key in stored if key in self._snapshots}
        built = await asyncio.to_thread(_rebuild, stored, missing, cached)
        for key, snapshot in built.items():
            found[key] = snapshot
            self._remember(snapshot)
        return found

    async def get_snapshot(self, world: str, key: str) -> SceneSnapshot | None:
        """The snapshot ``key`` if a record of ``world`` refers to it (snapshots are shared by content)."""
        async with self._read() as db:
            rows = await db.fetch(_REFERS_TO_SNAPSHOT, world, key)
            if not rows:
                return None
            return (await self._load_snapshots(db, {key})).get(key)

    async def refers_to_snapshot(self, world: str, key: str) -> bool:
        async with self._read() as db:
            rows = await db.fetch(_REFERS_TO_SNAPSHOT, world, key)
        return bool(rows)

    def _remember(self, snapshot: SceneSnapshot) -> None:
        self._snapshots[snapshot.key] = snapshot
        self._snapshots.move_to_end(snapshot.key)
        while len(self._snapshots) > _SNAPSHOT_CACHE_SIZE:
            self._snapshots.popitem(last=False)


def _snapshot_row(
    snapshot: SceneSnapshot, previous: SceneSnapshot | None, before: tuple[int, int]
) -> tuple[str, str | None, int, int]:
    """``(body, base, depth, chain)`` of a snapshot to store: a delta from ``previous`` (stored at ``before``'s
    depth and chain) when there is one and the chain stays within :data:`MAX_CHAIN_WHOLES`, else whole."""
    body = snapshot_json(snapshot)  # one wall at a time: other worlds' threads run meanwhile
    if previous is not None:
        change = delta(previous, snapshot)
        if change is not None:
            text = json.dumps(change, separators=(",", ":"), ensure_ascii=False)
            if before[1] + len(text) <= MAX_CHAIN_WHOLES * len(body):
                return text, previous.key, before[0] + 1, before[1] + len(text)
    return body, None, 0, 0


def _committed_late(asked: RulingRecord, stored: RulingRecord) -> None:
    """A ruling whose answer stopped waiting for the log (``logged: false``) was committed after all."""
    _log.warning(
        "ruling %s of world %s, answered with logged: false because the log took too long, was committed"
        " afterwards: it is in the log as record %s",
        asked.request,
        asked.world,
        stored.id,
    )


def _parse_records(rows: Sequence[Row], snapshots: dict[str, SceneSnapshot]) -> list[RulingRecord]:
    records = []
    for record_id, body, key in rows:
        record = RulingRecord.model_validate_json(body)
        records.append(record.model_copy(update={"id": record_id, "snapshot": snapshots.get(key)}))
    return records


def _rebuild(
    stored: dict[str, tuple[str | None, str]], wanted: list[str], cached: dict[str, SceneSnapshot]
) -> dict[str, SceneSnapshot]:
    """The ``wanted`` snapshots from their stored rows (key → ``(base, body)``: whole when ``base`` is
    ``None``, else a delta of ``base``) and the ``cached`` ones; nearest the whole first, so a run of
    versions applies each delta once."""
    depths: dict[str, int] = {}

    def depth(key: str) -> int:
        trail = []
        while key not in depths and key not in cached and stored[key][0] is not None:
            trail.append(key)
            key = str(stored[key][0])
        known = depths.setdefault(key, 0)
        for n, step in enumerate(reversed(trail), start=1):
            depths[step] = known + n
        return depths[trail[0]] if trail else known

    built: dict[str, SceneSnapshot] = {}
    for key in sorted((k for k in wanted if k in stored), key=depth):
        path, at = [], key
        while at not in built and at not in cached and stored[at][0] is not None:
            path.append(at)
            at = str(stored[at][0])
        start = built.get(at) or cached.get(at) or SceneSnapshot.model_validate_json(stored[at][1])
        if not path:
            built[key] = start
            continue
        replayer = Replayer(start)
        for step in reversed(path):
            replayer.apply(json.loads(stored[step][1]))
        built[key] = replayer.snapshot()
    return built


def _ruling_row(record: RulingRecord) -> tuple[object, ...]:
    body = record.model_dump_json(exclude={"snapshot"})
    return (
        record.id,
        record.world,
        record.session,
        record.time,
        record.kind,
        record.overrides,
        record.scene,
        record.actor.id,
        record.actor.name,
        record.target.id if record.target else None,
        record.target.name if record.target else None,
        record.action,
        record.allowed,
        record.modifier,
        record.snapshot.key if record.snapshot else None,
        body,
    )


@functools.lru_cache(maxsize=_KNOWN_NAMES)
def _name_sort_key(name: str) -> str:
    """:func:`~bridge.log.store.name_sort_key`, remembered: a session's few names are written again and again."""
    return name_sort_key(name)


def _sort_values(record: RulingRecord) -> tuple[str, str, int]:
    """``actor_sort, target_sort, mod_sort`` of a ruling (:data:`_SORT_COLUMNS`)."""
    target = _name_sort_key(_shown(record.target)) if record.target else ""
    return _name_sort_key(_shown(record.actor)), target, _NO_MOD if record.modifier is None else record.modifier


def _contains(text: str) -> str:
    """A ``LIKE`` pattern (escape ``\\``) matching any lower-cased text that contains ``text``."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def matching_actions(text: str) -> list[str]:
    """Every action id of any ruleset whose id or label (English or Spanish) contains ``text``, in any
    case: what the action filter finds when a GM types part of the words they read."""
    wanted = text.strip().lower()
    found = set()
    for rid, row in vocabulary().rulesets.items():
        for action in row.actions:
            names = [action, *(label(rid, "action", action, lang) for lang in LANGUAGES)]
            if any(wanted in name.lower() for name in names):
                found.add(action)
    return sorted(found)


#: The most distinct values of a column a partial filter is resolved against; past it, the filter scans.
_MOST_DISTINCT = 2000
#: A sorted page whose filter matches at most this many rulings of the session through an index (a token, an
#: action, a time range) sorts them; past it, it walks its order's index from the cursor (:func:`_few_match`).
_SORT_AT_MOST = 5000
#: Each sort column as an expression no index holds (same values, same order: ``|| ''`` keeps the column's
#: byte order in PostgreSQL as in SQLite): what makes either database read a filter's rulings and sort them.
_UNINDEXED = {"actor_sort": "actor_sort || ''", "target_sort": "target_sort || ''", "mod_sort": "mod_sort + 0"}


async def _few_match(db: Executor, session: str | None, filters: RulingFilter, exact: dict[str, list[str]]) -> bool:
    """Whether a sorted page's filter narrows the session, through an index, to at most :data:`_SORT_AT_MOST`
    rulings: a token, an action (each resolved to exact values) or a time range matching that few, counted
    through its own index (covering: no ruling is read), at most that many. Those are read and sorted: cheaper
    than walking the order's index, which may pass most of the session before the page is full. Without such a
    filter (none, only allowed / not allowed, or a broad one) the page walks the order's index and stops when
    full."""
    if session is None:
        return False  # the orders' indexes are per session: a world's rulings are sorted whatever the filter
    #: Per filter, its clauses (each through one index; the sum of their counts bounds the filter's matches).
    narrowing: dict[str, list[tuple[str, list[object]]]] = {}
    for name, columns in {"actor": ("actor_id", "actor_name"), "target": ("target_id", "target_name")}.items():
        if columns[0] in exact:
            narrowing[name] = [(_in(column, exact[column], []), [*exact[column]]) for column in columns]
    if "action" in exact:
        narrowing["action"] = [(_in("action", exact["action"], []), [*exact["action"]])]
    given = (("time >= ?", filters.since), ("time <= ?", filters.until))
    if bounds := [(clause, format_time(value)) for clause, value in given if value is not None]:
        narrowing["time"] = [(" AND ".join(clause for clause, _ in bounds), [value for _, value in bounds])]
    counts = []
    for clauses in narrowing.values():
        count = 0
        for clause, params in clauses:
            sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM rulings WHERE session = ? AND {clause} LIMIT ?) AS found"
            count += int((await db.fetch(sql, session, *params, _SORT_AT_MOST + 1))[0][0])
        counts.append(count)
    return bool(counts) and min(counts) <= _SORT_AT_MOST


def _shown(party: Party) -> str:
    """A token as the pages show it (and the ``actor``/``target`` orders sort it): its name, else its id."""
    return party.name or party.id


async def _fill_name_sort_keys(db: Executor) -> None:
    """Schema 6 on a log that has rulings: the sort key of every actor's and target's name and id of every
    session (a superset of the names the pages show), read with one index seek per distinct value."""
    names: set[str] = set()
    for session, world in await db.fetch("SELECT id, world FROM sessions"):
        for column in ("actor_id", "actor_name", "target_id", "target_name"):
            names.update(await _distinct(db, str(world), str(session), column, _ALL_DISTINCT))
    names.discard("")
    if names:
        await db.executemany(_INSERT_NAME_SORT_KEY, [(name, name_sort_key(name)) for name in sorted(names)])


async def _fill_sort_columns(db: Executor) -> None:
    """Schema 7 on a log that has rulings: each ruling's place in the actor, target and MOD orders, from the
    names' sort keys (schema 6's table, first completed with any name a bridge older than schema 6 wrote into
    it without one), then the orders' indexes — built once filled, not updated row by row."""
    await _fill_name_sort_keys(db)
    sort_key = "COALESCE((SELECT sort_key FROM name_sort_keys WHERE name = {shown}), '')"
    await db.execute(
        f"UPDATE rulings SET actor_sort = {sort_key.format(shown=_SHOWN['actor'])},"
        f" target_sort = {sort_key.format(shown=_SHOWN['target'])}, mod_sort = COALESCE(modifier, {_NO_MOD})"
    )
    for column in ("actor_sort", "target_sort", "mod_sort"):
        await db.execute(f"CREATE INDEX rulings_session_{column} ON rulings (session, {column}, id)")


_MIGRATION_STEPS: dict[int, Callable[[Executor], Awaitable[None]]] = {6: _fill_name_sort_keys, 7: _fill_sort_columns}
#: "Every distinct value" for :func:`_distinct`.
_ALL_DISTINCT = 2**62


async def _distinct(db: Executor, world: str, session: str, column: str, most: int) -> list[str]:
    """The distinct values of ``column`` in a session, sorted — at most ``most`` + 1, so that a caller can
    tell "more than ``most``": one index seek per value (a loose index scan over the session's index of
    that column), however many rulings share them."""
    sql = (
        "WITH RECURSIVE found (value) AS ("
        f" SELECT MIN({column}) FROM rulings WHERE session = ? AND world = ?"
        f" UNION ALL SELECT (SELECT MIN({column}) FROM rulings"
        f" WHERE session = ? AND world = ? AND {column} > found.value)"
        " FROM found WHERE found.value IS NOT NULL"
        ") SELECT value FROM found WHERE value IS NOT NULL LIMIT ?"
    )
    rows = await db.fetch(sql, session, world, session, world, most + 1)
    return [str(row[0]) for row in rows]


async def _resolve(db: Executor, world: str, session: str, filters: RulingFilter) -> dict[str, list[str]]:
    """Each partial filter of a session's query as the exact values it matches (column → values), read
    from the session's distinct values through their indexes; a column with more distinct values than
    :data:`_MOST_DISTINCT` is left out (its filter then scans with ``LIKE``)."""
    wanted = {
        "actor": filters.actor,
        "target": filters.target,
        "action": filters.action,
    }
    columns = {"actor": ("actor_id", "actor_name"), "target": ("target_id", "target_name"), "action": ("action",)}
    exact: dict[str, list[str]] = {}
    for name, text in wanted.items():
        if text is None:
            continue
        needle = text.strip().lower()
        for column in columns[name]:
            values = await _distinct(db, world, session, column, _MOST_DISTINCT)
            if len(values) > _MOST_DISTINCT:
                break
            if column == "action":
                labelled = set(matching_actions(text))
                exact[column] = [v for v in values if needle in v.lower() or v in labelled]
            else:
                exact[column] = [v for v in values if needle in v.lower()]
        else:
            continue
        for column in columns[name]:  # too many to list: this filter scans
            exact.pop(column, None)
    return exact


def _in(column: str, values: list[str], params: list[object]) -> str:
    params += values
    return f"{column} IN ({', '.join('?' * len(values))})" if values else "1 = 0"


def _query_sql(
    world: str,
    session: str | None,
    filters: RulingFilter,
    after: str | None,
    until: str | None = None,
    exact: dict[str, list[str]] | None = None,
) -> tuple[str, list[object]]:
    """The query's SQL; ``exact`` holds partial filters already resolved to the values they match (by
    index), the others match with ``LIKE`` (partial and case-insensitive: SQLite's lower() is made
    Unicode-aware, as PostgreSQL's is)."""
    exact = exact or {}
    clauses = ["world = ?"]
    params: list[object] = [world]
    if session is not None:
        clauses.append("session = ?")
        params.append(session)
    for name in ("actor", "target"):
        text = getattr(filters, name)
        if text is None:
            continue
        if f"{name}_id" in exact:
            # Only the columns with a match: one IN alone walks its index in id order (a page stops early).
            either = [_in(column, exact[column], params) for column in (f"{name}_id", f"{name}_name") if exact[column]]
            clauses.append(f"({' OR '.join(either)})" if either else "1 = 0")
        else:
            clauses.append(f"(lower({name}_id) LIKE ? ESCAPE '\\' OR lower({name}_name) LIKE ? ESCAPE '\\')")
            params += [_contains(text)] * 2
    if filters.action is not None:
        if "action" in exact:
            clauses.append(_in("action", exact["action"], params))
        else:
            actions = matching_actions(filters.action)
            pattern = "lower(action) LIKE ? ESCAPE '\\'"
            clauses.append(f"(action IN ({', '.join('?' * len(actions))}) OR {pattern})" if actions else f"({pattern})")
            params += [*actions, _contains(filters.action)]
    if filters.allowed is not None:
        clauses.append("allowed = ?")
        params.append(filters.allowed)
    if filters.since is not None:
        clauses.append("time >= ?")
        params.append(format_time(filters.since))
    if filters.until is not None:
        clauses.append("time <= ?")
        params.append(format_time(filters.until))
    if after is not None:
        clauses.append("id > ?")
        params.append(after)
    if until is not None:
        clauses.append("id < ?")
        params.append(until)
    return "SELECT id, body, snapshot FROM rulings WHERE " + " AND ".join(clauses), params


@dataclass(frozen=True)
class _Page:
    """What a page of :meth:`SqlLogStore.query` asks for: its order, the cursor it starts from and its size."""

    #: The order's sort expression (:data:`_SORT_EXPRESSIONS`); ``None`` for time order (the id alone).
    expression: str | None
    descending: bool
    #: ``(sort value, id)`` of the row the page follows (``cursor``) or precedes (``before``).
    after: tuple[str | int, str] | None
    until: tuple[str | int, str] | None
    limit: int

    @classmethod
    def of(cls, order: str, cursor: str | None, before: str | None, limit: int) -> _Page:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if cursor and before:
            raise ValueError("give cursor or before, not both")
        check_order(order)
        expression = _SORT_EXPRESSIONS[order.lstrip("-")]
        after: tuple[str | int, str] | None
        until: tuple[str | int, str] | None
        if expression is None:
            after = ("", decode_cursor(cursor)) if cursor else None
            until = ("", decode_cursor(before)) if before else None
        else:
            after = decode_sorted_cursor(cursor, order) if cursor else None
            until = decode_sorted_cursor(before, order) if before else None
        return cls(expression, order.startswith("-"), after, until, limit)

    @property
    def backwards(self) -> bool:
        """Read towards the page before (going before a cursor): the rows nearest it first."""
        return self.until is not None

    @property
    def last_page(self) -> bool:
        return self.until is not None and self.until[1] == END_ID

    async def sql(
        self, db: Executor, world: str, session: str | None, filters: RulingFilter
    ) -> tuple[str, list[object]]:
        """The page's query (``limit`` + 1 rows: one more tells whether there is a next page)."""
        expression = self.expression
        reverse = self.descending != self.backwards
        exact = await _resolve(db, world, session, filters) if session is not None else {}
        sql, params = _query_sql(world, session, filters, None, None, exact)
        sorted_by = expression
        # A filter's own index finds its few rulings: sort them, rather than walk the order's index past every
        # ruling the filter refuses (an actor's rulings may all lie at one end of the MOD order).
        if expression is not None and await _few_match(db, session, filters, exact):
            sorted_by = _UNINDEXED[expression]
        if expression is not None:
            sql = sql.replace("SELECT id, body, snapshot FROM", f"SELECT id, body, snapshot, {expression} FROM", 1)
        mark = self.after or self.until
        if mark is not None and not self.last_page:
            sign = "<" if reverse else ">"
            if expression is None:
                sql += f" AND id {sign} ?"
                params.append(mark[1])
            else:
                sql += f" AND ({sorted_by}, id) {sign} (?, ?)"
                params += [mark[0], mark[1]]
        way = " DESC" if reverse else ""
        sql += (f" ORDER BY {sorted_by}{way}, id{way}" if expression else f" ORDER BY id{way}") + " LIMIT ?"
        params.append(self.limit + 1)
        return sql, params
