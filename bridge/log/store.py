"""The log store: what the bridge, the HTTP pages and the command line ask of a persistent log.

:class:`LogStore` is the interface; :func:`open_store` picks the implementation from the
``--database`` value: nothing → an SQLite file ``sightline.db`` in the data directory,
``sqlite:///path`` → that SQLite file, ``postgresql://…`` → a PostgreSQL database shared by any number
of bridge processes. Both implementations run the same migrations (``migrations/*.sql``) and the same
test-suite.

Every read takes the world: worlds never see each other's records. A record is committed before
:meth:`LogStore.append` returns, so a bridge may say ``logged: true`` as soon as it has the answer.
"""

from __future__ import annotations

import abc
import base64
import binascii
import contextlib
import json
import unicodedata
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict

from ..protocol import GameSession
from .ids import ID_PATTERN
from .records import Party, RulingRecord, SceneSnapshot

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "END_ID",
    "LAST_PAGE",
    "ORDERS",
    "LogOpenError",
    "LogStore",
    "LoggedSession",
    "RulingFilter",
    "RulingPage",
    "SessionChoices",
    "decode_cursor",
    "describe_database",
    "encode_cursor",
    "format_time",
    "name_sort_key",
    "open_store",
    "parse_time",
]

#: A session left without a ruling this long is closed, and the next ruling opens a new one.
DEFAULT_IDLE_TIMEOUT = timedelta(hours=4)


# --- Values the store hands out -------------------------------------------------------------------


class LoggedSession(BaseModel):
    """A game session as the log keeps it: the wire fields plus activity and a ruling count.

    ``world_name`` (as :meth:`LogStore.list_sessions` and :meth:`LogStore.get_session` give it) is the
    world's newest name (:meth:`LogStore.world_names`); ``""`` when its clients never sent one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    world: str
    world_name: str = ""
    name: str = ""
    started: str
    ended: str | None = None
    last_activity: str
    rulings: int = 0

    def state(self, now: datetime, idle_timeout: timedelta) -> str:
        """``ended`` (closed), ``idle`` or ``open``.

        ``idle``: not closed, but no ruling for longer than ``idle_timeout`` — the game is over in all but
        name. The store closes a session lazily (the world's next ruling closes it at its last ruling's time,
        :attr:`last_activity`, and opens a new one), so until then it reads as not ended; ``idle`` says what
        it will be. Reading never closes it: the log's readers do not write."""
        if self.ended is not None:
            return "ended"
        return "idle" if now - parse_time(self.last_activity) > idle_timeout else "open"

    def wire(self) -> GameSession:
        """The session as ``session.started`` / ``session.ended`` carry it."""
        return GameSession(id=self.id, world=self.world, name=self.name, started=self.started, ended=self.ended)


@dataclass(frozen=True, kw_only=True)
class RulingFilter:
    """What narrows a query; every field left ``None`` matches everything.

    ``actor`` and ``target`` match when a token's id or name contains the text, whatever its case
    ("sni" finds "Sniper"); ``action`` when the action's id or its label in any language contains it
    ("bs att" and "ataque" find ``bs-attack``); ``since``/``until`` bound the ruling's time, both inclusive.
    """

    actor: str | None = None
    target: str | None = None
    action: str | None = None
    allowed: bool | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class RulingPage:
    """One page of a query, in its order (oldest first by default); pass ``next_cursor`` back to get the
    next (``None``: last).

    ``snapshot_keys``: each record's snapshot key by record id (also when the snapshots were not read).
    """

    records: list[RulingRecord]
    next_cursor: str | None
    snapshot_keys: dict[str, str] = field(default_factory=dict)
    #: The cursor of the page before this one (pass it as ``before``); ``None`` on the first page.
    previous_cursor: str | None = None


@dataclass(frozen=True)
class SessionChoices:
    """What a session's filters can be given: the names of its actors and targets, its action ids and
    the names of its scenes by id (from each scene's latest snapshot), each sorted; and, from the same
    snapshots, the names of each scene's regions by id (``regions[scene][region]``), with which a page
    names the zones a ruling crossed without loading every ruling's snapshot."""

    actors: list[str]
    targets: list[str]
    actions: list[str]
    scenes: dict[str, str]
    regions: dict[str, dict[str, str]] = field(default_factory=dict)


# --- Times and cursors ----------------------------------------------------------------------------


def parse_time(text: str) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a time without offset is taken as UTC)."""
    value = datetime.fromisoformat(text.strip())
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_time(value: datetime) -> str:
    """The log's one time format: UTC, microseconds, ``Z`` — so text order is time order."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def encode_cursor(record_id: str) -> str:
    """An opaque pagination cursor for the page after ``record_id``."""
    return base64.urlsafe_b64encode(record_id.encode()).decode().rstrip("=")


#: An id after every record's (no record id starts with "Z": the first character holds the top of the time).
END_ID: Final = "Z" * 26
#: ``before=LAST_PAGE`` gives a session's (or a filter's) last page: the ``limit`` newest records.
LAST_PAGE: Final = base64.urlsafe_b64encode(END_ID.encode()).decode().rstrip("=")


#: The orders a session's rulings can be read in: by time (the record's id, which sorts by creation), by
#: actor or target (name, else id, whatever its case and accents: :func:`name_sort_key`) or by MOD (a ruling
#: with none sorts below every MOD); a leading "-" reverses one ("-time": the newest first). Ties keep time
#: order (the id).
ORDERS: Final = ("time", "-time", "actor", "-actor", "target", "-target", "mod", "-mod")


def name_sort_key(name: str) -> str:
    """Where a token's name (else its id) sorts in the ``actor`` and ``target`` orders, the same in every
    store: casefolded and without its accents ("Élodie" beside "elodie", before "Emma"), then the name itself
    so that names equal but for case and accents keep one order ("Elodie", "elodie", "Élodie": by code point).

    Computed here, in Python, and compared by code point (byte order of UTF-8: SQLite's ``BINARY``,
    PostgreSQL's ``"C"``), so neither database's collation — SQLite knows no accents, a PostgreSQL server
    sorts by its locale — decides it. ``""`` for no name (a ruling without a target)."""
    if not name:
        return ""
    folded = unicodedata.normalize("NFKD", name.casefold())
    base = "".join(c for c in folded if not unicodedata.combining(c))
    return f"{unicodedata.normalize('NFC', base)}\x01{name}"  # \x01 sorts below any character of a name


def check_order(order: str) -> str:
    """``order`` when it is one of :data:`ORDERS`; :class:`ValueError` naming the choices otherwise."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}")
    return order


def encode_sorted_cursor(value: str | int, record_id: str) -> str:
    """A cursor of an order other than time: the sort value and the id of the row it follows or precedes."""
    text = json.dumps([value, record_id], separators=(",", ":"), ensure_ascii=False)
    return "s" + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_sorted_cursor(cursor: str, order: str) -> tuple[str | int, str]:
    """``(value, id)`` of a cursor :func:`encode_sorted_cursor` made for ``order``; ``LAST_PAGE`` gives
    ``("", END_ID)``; :class:`ValueError` otherwise (a cursor of another order included)."""
    if cursor == LAST_PAGE:
        return "", END_ID
    try:
        if not cursor.startswith("s"):
            raise ValueError("not a sorted cursor")
        body = cursor[1:]
        value, record_id = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError) as exc:
        raise ValueError("invalid cursor") from exc
    wanted = int if order.lstrip("-") == "mod" else str
    if not isinstance(record_id, str) or not ID_PATTERN.match(record_id) or type(value) is not wanted:
        raise ValueError("invalid cursor")
    return value, record_id


def decode_cursor(cursor: str) -> str:
    """The record id inside a cursor; :class:`ValueError` when it is not one this store made."""
    try:
        record_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("invalid cursor") from exc
    if not ID_PATTERN.match(record_id):
        raise ValueError("invalid cursor")
    return record_id


# --- The interface --------------------------------------------------------------------------------


class LogStore(abc.ABC):
    """A persistent, append-only log of rulings grouped by world and game session."""

    idle_timeout: timedelta

    # Writing.

    @abc.abstractmethod
    async def append(self, record: RulingRecord) -> RulingRecord:
        """Store one ruling; returns it with ``id`` and ``session`` set, after the commit.

        The session is ``record.session`` when that names an open or closed session of the world,
        otherwise the world's open session (opened now when there is none or it has been idle longer
        than :attr:`idle_timeout`). The record's time is normalised by :func:`format_time`.
        """

    @abc.abstractmethod
    async def append_many(self, records: Sequence[RulingRecord]) -> list[RulingRecord]:
        """Store several rulings in one transaction (imports, benchmarks); same rules as :meth:`append`."""

    @abc.abstractmethod
    async def start_session(self, world: str, name: str, at: datetime, *, world_name: str = "") -> LoggedSession:
        """Close the world's open session (if any) at ``at`` and open a new one named ``name``; ``world_name``
        is the world's name as its client's ``hello`` gave it (``""``: unknown)."""

    @abc.abstractmethod
    async def end_session(self, world: str, at: datetime) -> LoggedSession | None:
        """Close the world's open session at ``at``; returns it, or ``None`` when none was open."""

    @abc.abstractmethod
    async def current_or_new_session(self, world: str, at: datetime) -> LoggedSession:
        """The world's open session at ``at``: the open one unless idle too long, else a new one."""

    @abc.abstractmethod
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
        """Record a GM's override of ``record_id`` as a new ``kind="override"`` record beside it.

        The new record copies what the original saw (scene, parties, line, snapshot), carries the new
        ``allowed``/``modifier`` (``modifier`` is dropped when not allowed) and ``reason``, points at the
        original through ``overrides`` and joins the original's session. The original is untouched.
        :class:`KeyError` when the record does not exist in ``world``.
        """

    # Reading.

    @abc.abstractmethod
    async def get_record(self, world: str, record_id: str) -> RulingRecord | None:
        """One record of ``world`` by id, with its snapshot; ``None`` when unknown there."""

    @abc.abstractmethod
    async def get_session(self, session_id: str, *, world: str | None = None) -> LoggedSession | None:
        """One session by id (only in ``world`` when given); ``None`` when unknown."""

    @abc.abstractmethod
    async def list_worlds(self) -> list[str]:
        """Every world with at least one session, sorted."""

    @abc.abstractmethod
    async def world_names(self, worlds: Sequence[str] | None = None) -> dict[str, str]:
        """Each world's name as people know it (of ``worlds``, or of every world): the newest name its
        clients sent (the name kept with its most recently active session that has one). A world that
        never sent one is left out: show its id."""

    @abc.abstractmethod
    async def list_sessions(self, world: str | None = None) -> list[LoggedSession]:
        """Sessions, newest first; only ``world``'s when given."""

    @abc.abstractmethod
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
        """One page of ``world``'s records (of ``session``, or all its sessions), oldest first — or in
        ``order`` (one of :data:`ORDERS`: ``-time`` is the newest first).

        ``cursor`` (a page's ``next_cursor``) gives the page after it; ``before`` (a page's
        ``previous_cursor``) the page before it — the ``limit`` records just before, in the same order.
        A cursor holds the order's sort value and the id: pages of any order never repeat or skip a record.

        ``snapshots=False`` leaves each record's ``snapshot`` out (``None``; the keys are in
        ``snapshot_keys``): what a page of the log shows, fetching a snapshot when it is drawn.

        Keyset pagination on the record id: a page never repeats or skips a record however many are
        appended meanwhile. :class:`ValueError` for a cursor this store did not make.
        """

    @abc.abstractmethod
    async def choices(self, world: str, session: str, *, most: int = 200) -> SessionChoices:
        """The distinct actor and target names, actions and scenes of a session (at most ``most`` of each):
        what a page offers as its filters' choices and how it names the scenes."""

    @abc.abstractmethod
    async def get_snapshot(self, world: str, key: str) -> SceneSnapshot | None:
        """The snapshot ``key``, when a record of ``world`` refers to it; ``None`` otherwise."""

    @abc.abstractmethod
    async def refers_to_snapshot(self, world: str, key: str) -> bool:
        """Whether a record of ``world`` refers to the snapshot ``key`` (without reading the snapshot)."""

    @abc.abstractmethod
    def export(
        self, world: str, session: str | None, *, batch_size: int = 500, order: str = "time"
    ) -> AsyncIterator[RulingRecord]:
        """Every record of a session (or world), oldest first, read ``batch_size`` at a time; each carries the
        world's newest name (:meth:`world_names`) in ``world_name`` when the world ever sent one."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections; the store is unusable afterwards."""


class LogOpenError(Exception):
    """The log cannot be opened: a bad ``--database`` value, a database that refuses or cannot be reached, a
    directory that is missing or not writable. The message is one line naming the database (never its
    password) and the reason."""


def describe_database(database: str | None, data_dir: Path) -> str:
    """The ``--database`` value as it may be shown: a PostgreSQL password is replaced by ``…``."""
    if database and "://" in database and "@" in database:
        scheme, rest = database.split("://", 1)
        return f"{scheme}://…@{rest.rsplit('@', 1)[1]}"
    return database or str(data_dir / "sightline.db")


def _reason(exc: BaseException, database: str | None) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": {exc.filename}" if exc.filename else "")
    else:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if database and database in text:
        text = text.replace(database, describe_database(database, Path(".")))
    return text


def _sqlite_file(database: str | None, data_dir: Path) -> Path | None:
    """The SQLite file a ``--database`` value names (the data directory's own without one); ``None`` for
    PostgreSQL, or a value :func:`open_store` refuses by name."""
    if not database:
        return data_dir / "sightline.db"
    path = database.removeprefix("sqlite://") if database.startswith("sqlite://") else ""
    return Path(path) if path and path != "/" else None


async def open_store(
    database: str | None,
    data_dir: Path,
    *,
    idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
    create: bool = True,
) -> LogStore:
    """The store a ``--database`` value names (see the module docstring), connected and migrated.

    The caller owns it: ``await store.close()`` when done. :class:`LogOpenError` (one line) when it cannot
    be opened, whatever the reason: an unknown scheme, a missing directory, a database that refuses. With
    ``create=False`` (a command that only reads a log) an SQLite log that is not there is refused by name
    rather than made empty: a mistyped ``--data-dir`` would otherwise list nothing.
    """
    if not create:
        path = _sqlite_file(database, data_dir)
        if path is not None and not path.is_file():
            raise LogOpenError(f"no log at {path}; check {'--database' if database else '--data-dir'}")
    try:
        return await _open_store(database, data_dir, idle_timeout=idle_timeout)
    except LogOpenError:
        raise
    except Exception as exc:
        where = describe_database(database, data_dir)
        raise LogOpenError(f"cannot open the log at {where}: {_reason(exc, database)}") from exc


async def _open_store(database: str | None, data_dir: Path, *, idle_timeout: timedelta) -> LogStore:
    from .postgres import PostgresLogStore
    from .sqlite import SqliteLogStore

    store: SqliteLogStore | PostgresLogStore
    if database is None or database == "":
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # the bridge's own, unlike one named in a URL
        store = SqliteLogStore(data_dir / "sightline.db", idle_timeout=idle_timeout)
    elif database.startswith(("postgresql://", "postgres://")):
        store = PostgresLogStore(database, idle_timeout=idle_timeout)
    elif database.startswith("sqlite://"):
        path = _sqlite_file(database, data_dir)
        if path is None:
            raise LogOpenError(f"no file in --database {database!r}; write sqlite:///path/to/file.db")
        store = SqliteLogStore(path, idle_timeout=idle_timeout)
    else:
        raise LogOpenError(
            f"unsupported --database {describe_database(database, data_dir)!r}: use sqlite:///path or postgresql://…"
        )
    try:
        await store.connect()
    except BaseException:
        with contextlib.suppress(Exception):
            await store.close()
        raise
    return store
