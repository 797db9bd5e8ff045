"""The log store's contract, run against SQLite (a file in tmp_path) and a real PostgreSQL server."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bridge.log import sql
from bridge.log.ids import new_id
from bridge.log.records import Party, RulingRecord, SceneSnapshot
from bridge.log.snapshot_delta import delta
from bridge.log.sql import SqlLogStore, load_migrations
from bridge.log.sqlite import SqliteLogStore
from bridge.log.store import (
    LAST_PAGE,
    ORDERS,
    LogOpenError,
    RulingFilter,
    decode_cursor,
    encode_cursor,
    format_time,
    open_store,
    parse_time,
)
from tests.postgres import new_postgres_database

from .conftest import append_as_before_world_names, make_store
from .sample import DOCKS, T0, ruling


async def test_append_assigns_id_session_and_normalised_time(store: SqlLogStore) -> None:
    """An appended ruling comes back with an id, a session and the log's UTC time format."""
    stored = await store.append(ruling(0))
    assert stored.id is not None and len(stored.id) == 26
    assert stored.session is not None
    assert stored.time == "2025-03-01T19:00:00.000000Z"
    again = await store.get_record("w-ashes", stored.id)
    assert again == stored
    assert again is not None and again.snapshot == DOCKS


async def test_first_ruling_opens_a_session_and_later_ones_join_it(store: SqlLogStore) -> None:
    """A world's first ruling opens its session; the next rulings join the same one."""
    first = await store.append(ruling(0))
    second = await store.append(ruling(1))
    assert first.session == second.session
    sessions = await store.list_sessions("w-ashes")
    assert [(s.id, s.rulings, s.ended) for s in sessions] == [(first.session, 2, None)]
    assert sessions[0].last_activity == "2025-03-01T19:01:00.000000Z"


async def test_idle_session_is_closed_and_a_new_one_opened(store_url: str) -> None:
    """A ruling after the idle timeout closes the old session at its last ruling and opens another."""
    store = make_store(store_url, idle_timeout=timedelta(minutes=30))
    await store.connect()
    try:
        first = await store.append(ruling(0))
        still = await store.append(ruling(30))
        later = await store.append(ruling(61))
        assert still.session == first.session
        assert later.session != first.session
        old = await store.get_session(str(first.session))
        assert old is not None and old.ended == "2025-03-01T19:30:00.000000Z" and old.rulings == 2
        current = await store.current_or_new_session("w-ashes", T0 + timedelta(minutes=62))
        assert current.id == later.session
    finally:
        await store.close()


async def test_start_and_end_session_by_name(store: SqlLogStore) -> None:
    """start_session closes the open session and names a new one; end_session closes it."""
    await store.append(ruling(0))
    named = await store.start_session("w-ashes", "Night raid", T0 + timedelta(minutes=5))
    record = await store.append(ruling(6))
    assert record.session == named.id
    ended = await store.end_session("w-ashes", T0 + timedelta(minutes=9))
    assert ended is not None and ended.id == named.id and ended.ended == "2025-03-01T19:09:00.000000Z"
    assert ended.wire().name == "Night raid"
    assert await store.end_session("w-ashes", T0 + timedelta(minutes=10)) is None
    sessions = await store.list_sessions("w-ashes")
    assert [s.name for s in sessions] == ["Night raid", ""]
    assert all(s.ended is not None for s in sessions)


async def test_ending_an_idle_session_ends_it_at_its_last_ruling(store_url: str) -> None:
    """Ending a session idle past the timeout stamps its last ruling's time, as the next ruling would; else now."""
    store = make_store(store_url, idle_timeout=timedelta(minutes=30))
    await store.connect()
    try:
        await store.append(ruling(0))
        await store.append(ruling(20))
        # The GM ends it the next morning: the game was over at 19:20, not at 09:00.
        ended = await store.end_session("w-ashes", T0 + timedelta(hours=14))
        assert ended is not None and ended.ended == "2025-03-01T19:20:00.000000Z"
        await store.append(ruling(60 * 15))
        ended = await store.end_session("w-ashes", T0 + timedelta(hours=15, minutes=10))
        assert ended is not None and ended.ended == "2025-03-02T10:10:00.000000Z"  # within the timeout: now
    finally:
        await store.close()


async def test_override_is_a_new_record_beside_the_original(store: SqlLogStore) -> None:
    """An override adds a record pointing at the original, in its session, and leaves the original intact."""
    original = await store.append(ruling(0))
    gm = Party(id="u1", name="Gamemaster")
    override = await store.override(
        "w-ashes", str(original.id), -3, True, "Smoke had cleared", gm, T0 + timedelta(minutes=2)
    )
    assert override.kind == "override" and override.overrides == original.id
    assert override.modifier == -3 and override.reason == "Smoke had cleared"
    assert override.session == original.session and override.line == original.line
    assert await store.get_record("w-ashes", str(original.id)) == original
    page = await store.query("w-ashes", original.session)
    assert [r.id for r in page.records] == [original.id, override.id]
    denied = await store.override("w-ashes", str(original.id), -3, False, "No line", gm, T0)
    assert denied.modifier is None and not denied.allowed


async def test_override_of_unknown_or_foreign_record_is_a_key_error(store: SqlLogStore) -> None:
    """Overriding a record that does not exist, or exists in another world, raises KeyError."""
    other = await store.append(ruling(0, world="w-other"))
    with pytest.raises(KeyError):
        await store.override("w-ashes", str(other.id), 0, True, "x", None, T0)
    with pytest.raises(KeyError):
        await store.override("w-ashes", "01JAAAAAAAAAAAAAAAAAAAAAAA", 0, True, "x", None, T0)


async def test_worlds_are_isolated(store: SqlLogStore) -> None:
    """Each world has its own sessions and records; one world's query never returns another's."""
    a = await store.append(ruling(0, world="w-a"))
    b = await store.append(ruling(0, world="w-b"))
    assert a.session != b.session
    assert await store.list_worlds() == ["w-a", "w-b"]
    assert [r.id for r in (await store.query("w-a", None)).records] == [a.id]
    assert (await store.query("w-a", b.session)).records == []
    assert await store.get_record("w-a", str(b.id)) is None
    assert await store.get_session(str(b.session), world="w-a") is None
    assert sorted(s.world for s in await store.list_sessions()) == ["w-a", "w-b"]


async def test_filters_narrow_the_query(store: SqlLogStore) -> None:
    """Actor (id or name), target, action, allowed and the time range each narrow a session's rulings."""
    records = await store.append_many(
        [
            ruling(0),
            ruling(1, actor="t-sniper", actor_name="Sniper"),
            ruling(2, action="dodge", target="t-other"),
            ruling(3, allowed=False),
            ruling(4, actor="t-sniper", actor_name="Sniper", action="discover"),
        ]
    )
    session = records[0].session

    async def ids(**kw: object) -> list[int]:
        page = await store.query("w-ashes", session, filters=RulingFilter(**kw))  # type: ignore[arg-type]
        return [records.index(next(r for r in records if r.id == got.id)) for got in page.records]

    assert await ids(actor="t-sniper") == [1, 4]
    assert await ids(actor="Sniper") == [1, 4]
    assert await ids(target="t-other") == [2]
    assert await ids(action="dodge") == [2]
    assert await ids(allowed=False) == [3]
    assert await ids(since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=3)) == [1, 2, 3]
    assert await ids(actor="t-sniper", action="discover") == [4]


async def test_filters_match_any_part_of_a_name_or_label_in_any_case(store: SqlLogStore) -> None:
    """The filters match any part of a name or label in any case, in SQLite as in PostgreSQL.

    Actor and target match part of an id or name whatever its case (accents too); action matches part of its id or its
    English or Spanish label; % and _ are plain text; within a session (resolved through the indexes) and across a
    world's sessions (LIKE) alike.
    """
    records = await store.append_many(
        [
            ruling(0, actor="t-alv", actor_name="Álvaro Núñez"),
            ruling(1, actor="t-sniper", actor_name="Sniper 100%"),
            ruling(2, action="dodge", target="t-other"),
            ruling(3, action="speculative-attack"),
        ]
    )
    session = records[0].session

    async def ids(**kw: object) -> list[int]:
        page = await store.query("w-ashes", session, filters=RulingFilter(**kw))  # type: ignore[arg-type]
        return [records.index(next(r for r in records if r.id == got.id)) for got in page.records]

    assert await ids(actor="álvaro") == [0]
    assert await ids(actor="NÚÑ") == [0]
    assert await ids(actor="SNI") == [1]
    assert await ids(actor="100%") == [1]
    assert await ids(actor="1_0") == []
    assert await ids(target="OTHER") == [2]
    assert await ids(action="bs att") == [0, 1]  # "BS Attack"
    assert await ids(action="ataque") == [0, 1, 3]  # "Ataque CD", "Ataque Especulativo"
    assert await ids(action="esquiva") == [2]  # "Esquivar"
    assert await ids(action="DODGE") == [2]
    assert await ids(action="nothing-like-it") == []
    # Across a world's sessions the filters scan with LIKE instead of resolving through the indexes: same answers.
    across = await store.query("w-ashes", None, filters=RulingFilter(actor="NÚÑ"))
    assert [r.id for r in across.records] == [records[0].id]
    across = await store.query("w-ashes", None, filters=RulingFilter(actor="1_0"))
    assert across.records == []
    across = await store.query("w-ashes", None, filters=RulingFilter(action="esquiva"))
    assert [r.id for r in across.records] == [records[2].id]


async def test_choices_are_the_sessions_names_actions_and_scenes(store: SqlLogStore) -> None:
    """A session's choices are its actor and target names and actions, sorted and distinct, and its scenes.

    Its scenes go by the name their latest snapshot gives.
    """
    records = await store.append_many(
        [ruling(0), ruling(1, actor="t-sniper", actor_name="Sniper", action="dodge"), ruling(2)]
    )
    choices = await store.choices("w-ashes", str(records[0].session))
    assert choices.actors == ["Fusilier", "Sniper"]
    assert choices.targets == ["Target t-tgt"]
    assert choices.actions == ["bs-attack", "dodge"]
    assert choices.scenes == {"s-docks": "Docks"}
    assert (await store.choices("w-other", str(records[0].session))).actors == []  # worlds stay apart


async def test_pages_go_back_with_before(store: SqlLogStore) -> None:
    """``before`` (a page's ``previous_cursor``) gives the page just before, oldest first.

    The first page has no previous one and the last no next one.
    """
    records = await store.append_many([ruling(n) for n in range(7)])
    session = records[0].session
    first = await store.query("w-ashes", session, limit=3)
    assert first.previous_cursor is None and first.next_cursor is not None
    second = await store.query("w-ashes", session, limit=3, cursor=first.next_cursor)
    third = await store.query("w-ashes", session, limit=3, cursor=second.next_cursor)
    assert [r.id for r in third.records] == [records[6].id] and third.next_cursor is None
    back = await store.query("w-ashes", session, limit=3, before=third.previous_cursor)
    assert [r.id for r in back.records] == [r.id for r in second.records]
    again = await store.query("w-ashes", session, limit=3, before=back.previous_cursor)
    assert [r.id for r in again.records] == [r.id for r in first.records]
    assert again.previous_cursor is None and again.next_cursor == first.next_cursor


async def test_keyset_pagination_is_stable_while_appending(store: SqlLogStore) -> None:
    """Paging with cursors visits every record once, in order, even when records are appended meanwhile."""
    first = await store.append_many([ruling(n) for n in range(25)])
    seen: list[str] = []
    cursor = None
    appended = False
    while True:
        page = await store.query("w-ashes", first[0].session, limit=7, cursor=cursor)
        seen += [str(r.id) for r in page.records]
        if not appended:
            await store.append_many([ruling(n) for n in range(25, 30)])
            appended = True
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == 30 and seen == sorted(seen) and len(set(seen)) == 30
    with pytest.raises(ValueError):
        await store.query("w-ashes", None, cursor="not-a-cursor")


async def test_export_streams_every_record_in_batches(store: SqlLogStore) -> None:
    """export() yields a session's records oldest first, batch by batch."""
    stored = await store.append_many([ruling(n) for n in range(23)])
    await store.append(ruling(0, world="w-other"))
    got = [r async for r in store.export("w-ashes", stored[0].session, batch_size=5)]
    assert got == stored


async def test_snapshots_are_stored_once_per_content_key(store: SqlLogStore) -> None:
    """Many rulings over one scene state keep one snapshot row."""
    await store.append_many([ruling(n) for n in range(10)])
    await store.append(ruling(11))
    async with store._read() as db:
        rows = await db.fetch("SELECT COUNT(*) FROM snapshots")
    assert rows[0][0] == 1


async def test_schema_is_versioned_and_migrations_run_once(store_url: str) -> None:
    """A store records its schema version, and reopening the same database migrates nothing twice."""
    newest = load_migrations()[-1][0]
    for _ in range(2):
        store = make_store(store_url)
        await store.connect()
        try:
            assert await store.schema_version() == newest
            async with store._read() as db:
                rows = await db.fetch("SELECT COUNT(*) FROM schema_version")
            assert rows[0][0] == len(load_migrations())
        finally:
            await store.close()


async def test_concurrent_writers_open_one_session(store_url: str) -> None:
    """Two stores (as two bridge processes) appending to a new world at once share one open session."""
    stores = [make_store(store_url), make_store(store_url)]
    for s in stores:
        await s.connect()
    try:
        results = await asyncio.gather(*(stores[n % 2].append(ruling(n, world="w-race")) for n in range(20)))
        assert len({r.session for r in results}) == 1
        sessions = await stores[0].list_sessions("w-race")
        assert len(sessions) == 1 and sessions[0].rulings == 20
    finally:
        for s in stores:
            await s.close()


async def test_open_store_picks_the_backend_from_the_url(tmp_path: Path) -> None:
    """open_store picks the backend from the URL and refuses what it cannot use.

    No database means sightline.db in the data directory (made if new); sqlite:/// names a file in a directory that must
    exist (a typo is refused, not grown into a new tree); others are refused.
    """
    store = await open_store(None, tmp_path / "data")
    try:
        await store.append(ruling(0))
    finally:
        await store.close()
    assert (tmp_path / "data" / "sightline.db").exists()
    with sqlite3.connect(tmp_path / "data" / "sightline.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    named = await open_store(f"sqlite://{tmp_path / 'other.db'}", tmp_path)
    await named.close()
    assert (tmp_path / "other.db").exists()
    with pytest.raises(LogOpenError, match="no directory"):
        await open_store(f"sqlite://{tmp_path / 'typo' / 'x.db'}", tmp_path)
    assert not (tmp_path / "typo").exists()
    with pytest.raises(LogOpenError, match="unsupported"):
        await open_store("mysql://x", tmp_path)


async def test_append_is_committed_before_it_returns(store: SqlLogStore, store_url: str) -> None:
    """A record is visible to a separate connection as soon as append returns (nothing left uncommitted)."""
    stored = await store.append(ruling(0))
    other = make_store(store_url)
    await other.connect()
    try:
        assert await other.get_record("w-ashes", str(stored.id)) == stored
    finally:
        await other.close()


async def test_sqlite_writes_with_wal_and_full_sync(tmp_path: Path) -> None:
    """The SQLite writer runs in WAL mode with synchronous=FULL, so a commit is on disk when it returns."""
    store = make_store(f"sqlite://{tmp_path / 'log.db'}")
    await store.connect()
    try:
        async with store._write([]) as db:
            assert (await db.fetch("PRAGMA journal_mode"))[0][0] == "wal"
            assert (await db.fetch("PRAGMA synchronous"))[0][0] == 2  # FULL
    finally:
        await store.close()


async def test_the_world_is_named_by_the_newest_name_its_clients_sent(store: SqlLogStore) -> None:
    """A world is named by the newest name its clients sent, on every session and in exports.

    The name is kept with its sessions; a ruling from a client that sends none changes nothing; a world never named has
    none.
    """
    first = await store.append(ruling(0, world_name="Ashes"))
    named = await store.start_session("w-ashes", "Night raid", T0 + timedelta(minutes=5), world_name="Ashes of Kaldor")
    assert named.world_name == "Ashes of Kaldor"
    later = await store.append(ruling(6, world_name=""))
    await store.append(ruling(7, world="w-other"))
    assert later.session == named.id
    assert await store.world_names() == {"w-ashes": "Ashes of Kaldor"}
    assert await store.world_names(["w-other"]) == {}
    sessions = await store.list_sessions("w-ashes")
    assert [(s.id, s.world_name) for s in sessions] == [
        (named.id, "Ashes of Kaldor"),
        (first.session, "Ashes of Kaldor"),
    ]
    old = await store.get_session(str(first.session), world="w-ashes")
    assert old is not None and old.world_name == "Ashes of Kaldor"
    other = await store.list_sessions("w-other")
    assert [s.world_name for s in other] == [""]
    exported = [r async for r in store.export("w-ashes", first.session)]
    assert [r.world_name for r in exported] == ["Ashes of Kaldor"]
    stored = await store.get_record("w-ashes", str(first.id))
    assert stored is not None and stored.world_name == "Ashes"  # the record keeps what its client sent


async def test_a_rename_within_an_open_session_names_the_world_anew(store: SqlLogStore) -> None:
    """A world renamed while its session is open (the GM's client reconnects) is named by its new name."""
    await store.append(ruling(0, world_name="Ashes"))
    await store.append_many([ruling(1, world_name="Ashes"), ruling(2, world_name="Ashes: the Second Fall")])
    assert await store.world_names(["w-ashes"]) == {"w-ashes": "Ashes: the Second Fall"}


async def test_a_log_from_before_world_names_migrates_and_reads_back(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema-4 log (no world names) migrates to schema 5 and its sessions read back unnamed.

    The pages show the id; the next ruling with a name names the world from then on, in the same open session.
    """
    first_four = [m for m in sql.load_migrations() if m[0] <= 4]
    with monkeypatch.context() as patched:
        patched.setattr(sql, "load_migrations", lambda: first_four)
        old = make_store(store_url)
        await old.connect()
        try:
            assert await old.schema_version() == 4
            before = await append_as_before_world_names(old, ruling(0, snapshot=None))
        finally:
            await old.close()
    new = make_store(store_url)
    await new.connect()
    try:
        assert await new.schema_version() == load_migrations()[-1][0]
        (session,) = await new.list_sessions("w-ashes")
        assert (session.id, session.world_name, session.rulings) == (before.session, "", 1)
        assert await new.world_names() == {}
        assert await new.get_record("w-ashes", str(before.id)) == before
        later = await new.append(ruling(1, world_name="Ashes"))
        assert later.session == before.session
        assert await new.world_names() == {"w-ashes": "Ashes"}
    finally:
        await new.close()


def test_a_cursor_is_only_an_id_the_store_made() -> None:
    """A cursor decodes to its record id; one holding anything else (a trailing newline too) is refused."""
    record_id = new_id()
    assert decode_cursor(encode_cursor(record_id)) == record_id
    for forged in (record_id + "\n", record_id[:-1], "not base64!"):
        with pytest.raises(ValueError, match="invalid cursor"):
            decode_cursor(encode_cursor(forged) if forged != "not base64!" else forged)


async def test_a_changed_scenes_snapshot_is_compared_and_written_out_off_the_event_loop(store: SqlLogStore) -> None:
    """Storing a changed scene's snapshot (its delta from the last one) runs in a thread, never on the event loop.

    For a scene of 50,000 walls that work took 0.4 s, and on the event loop every world's messages waited for it.
    """
    moved = DOCKS.model_copy(update={"key": "snap-docks-2", "walls": [{"id": "w1", "c": [1100, 0, 1000, 600]}]})
    await store.append(ruling(1))
    on_loop: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code is delta.__code__ or (
            code is SceneSnapshot.model_dump_json.__code__ and isinstance(frame.f_locals.get("self"), SceneSnapshot)
        ):
            on_loop.append(code.co_name)

    sys.setprofile(profile)  # this thread only: the event loop's
    try:
        await store.append(ruling(2, snapshot=moved))
    finally:
        sys.setprofile(None)
    assert on_loop == []
    async with store._read() as db:
        rows = await db.fetch("SELECT base FROM snapshots WHERE key = 'snap-docks-2'")
    assert [tuple(row) for row in rows] == [("snap-docks-1",)]  # stored as a delta, as before
    assert (await store.get_snapshot("w-ashes", "snap-docks-2")) == moved


async def test_a_world_with_many_writes_waiting_does_not_hold_up_another_worlds(tmp_path: Path) -> None:
    """Ten session starts of one world queued on SQLite's one writer: another world's, queued after them, is third.

    First come, first served, it waited for all ten transactions (an fsync each): 80-150 ms behind such a flood.
    """
    store = make_store(f"sqlite://{tmp_path / 'log.db'}")
    await store.connect()
    done: list[str] = []

    async def start(world: str, n: int) -> None:
        await store.start_session(world, f"Game {n}", T0)
        done.append(world)

    try:
        flood = [asyncio.create_task(start("w-flood", n)) for n in range(10)]
        await asyncio.sleep(0)  # one writing, nine waiting
        await asyncio.gather(*flood, start("w-quiet", 0))
    finally:
        await store.close()
    assert len(done) == 11 and done.index("w-quiet") <= 2


async def test_a_replaced_sqlite_log_file_is_kept_beside_the_new_one(tmp_path: Path) -> None:
    """The SQLite file replaced under a running store: what it had logged is kept beside it; logging goes on in the new.

    Before, SQLite went on writing the replaced (unlinked) file: every later ruling was lost at the next start.
    The names' sort keys are stored in the new file too (a name seen before the replacement still sorts by its letter).
    """
    path = tmp_path / "log.db"
    store = SqliteLogStore(path)
    await store.connect()
    try:
        first = await store.append(ruling(0, actor_name="Élodie"))
        other = SqliteLogStore(tmp_path / "other.db")  # e.g. a backup put back while the bridge ran
        await other.connect()
        await other.close()
        (tmp_path / "other.db").replace(path)
        second = await store.append(ruling(1, actor_name="Élodie"))
        assert await store.get_record("w-ashes", str(first.id)) is None
        assert await store.get_record("w-ashes", str(second.id)) == second  # its snapshot stored in the new file
        await store.append(ruling(2, actor_name="Alba"))
        by_actor = await store.query("w-ashes", str(second.session), order="actor")
        assert [r.actor.name for r in by_actor.records] == ["Alba", "Élodie"]
    finally:
        await store.close()
    (kept,) = tmp_path.glob("log.db.replaced-*")
    old = SqliteLogStore(kept)
    await old.connect()
    try:
        assert await old.get_record("w-ashes", str(first.id)) == first
    finally:
        await old.close()


async def test_a_sqlite_log_file_deleted_before_the_store_closes_is_written_again(tmp_path: Path) -> None:
    """The SQLite file deleted after the last ruling, before the store closes (the bridge stopping): kept, not lost."""
    path = tmp_path / "log.db"
    store = SqliteLogStore(path)
    await store.connect()
    stored = await store.append(ruling(0))
    for file in tmp_path.glob("log.db*"):
        file.unlink()
    await store.close()
    again = SqliteLogStore(path)
    await again.connect()
    try:
        assert await again.get_record("w-ashes", str(stored.id)) == stored
    finally:
        await again.close()


@pytest.mark.parametrize("order", ORDERS)
async def test_every_order_pages_forwards_and_backwards_without_repeating_or_skipping(
    store: SqlLogStore, order: str
) -> None:
    """Each order (time, actor, target, MOD, each either way) pages both ways over every record once, sorted.

    Names sort whatever their case, a token without a name by its id, a ruling without a MOD below every MOD,
    and ties in time order; the last page (LAST_PAGE) is that order's last.
    """
    names = ["bob", "Alba", "carla", "", "Bob", "alba", "Dan"]
    stored = await store.append_many(
        [
            ruling(
                n,
                actor=f"t-{n % 5}",
                actor_name=names[n % len(names)],
                target=None if n % 6 == 5 else f"t{n % 4}",
                allowed=n % 4 != 1,
            ).model_copy(update={"modifier": None if n % 4 == 1 else (n * 7) % 11 - 5})
            for n in range(17)
        ]
    )

    def value(record: RulingRecord) -> tuple[str, str] | int:
        key = order.lstrip("-")
        if key == "actor":
            return (record.actor.name or record.actor.id).lower(), record.actor.name or record.actor.id
        if key == "target":
            shown = (record.target.name or record.target.id) if record.target else ""
            return shown.lower(), shown  # names equal but for case: by the name itself ("Bob" before "bob")
        if key == "mod":
            return -1000 if record.modifier is None else record.modifier
        return 0

    expected = [str(r.id) for r in sorted(stored, key=lambda r: (value(r), str(r.id)), reverse=order.startswith("-"))]
    session = stored[0].session
    seen: list[str] = []
    cursor = None
    while True:
        page = await store.query("w-ashes", session, limit=4, cursor=cursor, order=order)
        seen += [str(r.id) for r in page.records]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == expected
    back: list[str] = []
    before: str | None = LAST_PAGE
    while before is not None:
        page = await store.query("w-ashes", session, limit=4, before=before, order=order)
        back = [str(r.id) for r in page.records] + back
        before = page.previous_cursor
    assert back == expected
    last = await store.query("w-ashes", session, limit=4, before=LAST_PAGE, order=order)
    assert [str(r.id) for r in last.records] == expected[-4:] and last.next_cursor is None
    if order != "time":  # a cursor of one order is refused by another (it holds another sort value)
        first = await store.query("w-ashes", session, limit=4, order=order)
        other = "time" if order.lstrip("-") != "time" else "mod"
        with pytest.raises(ValueError, match="invalid cursor"):
            await store.query("w-ashes", session, limit=4, cursor=first.next_cursor, order=other)
    with pytest.raises(ValueError, match="order must be one of"):
        await store.query("w-ashes", session, order="name")


#: Names a table of Spanish and French players gives its tokens, and the order a GM reads them in, A to Z:
#: accents and case never move a name away from its letter; names equal but for them keep one order.
ACCENTED = ["Élodie", "emma", "Zoë", "álvaro", "Alba", "elodie", "Óscar", "oscar", "Bob", "Elodie", "zoe", "Ñandú"]
A_TO_Z = ["Alba", "álvaro", "Bob", "Elodie", "elodie", "Élodie", "emma", "Ñandú", "oscar", "Óscar", "Zoë", "zoe"]


async def _url_where(where: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty log: SQLite, PostgreSQL (C.UTF-8), or PostgreSQL whose database sorts text in Spanish (ICU)."""
    if where == "sqlite":
        return f"sqlite://{tmp_path / 'log.db'}"
    server = request.getfixturevalue("postgres_server")
    return await new_postgres_database(server, icu_locale="es" if where == "postgres-es" else None)


async def _actor_pages(store: SqlLogStore, session: str, order: str) -> list[str]:
    """The session's actors in ``order``, read 5 rulings a page forwards, checked equal to the pages backwards."""
    names: list[str] = []
    cursor = None
    while True:
        page = await store.query("w-ashes", session, limit=5, cursor=cursor, order=order)
        names += [r.actor.name for r in page.records]
        if (cursor := page.next_cursor) is None:
            break
    back: list[str] = []
    before: str | None = LAST_PAGE
    while before is not None:
        page = await store.query("w-ashes", session, limit=5, before=before, order=order)
        back = [r.actor.name for r in page.records] + back
        before = page.previous_cursor
    assert back == names
    return names


@pytest.mark.parametrize("where", ["sqlite", "postgres", "postgres-es"])
async def test_accented_names_sort_alike_in_every_store_whatever_its_collation(
    where: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Names with accents and case differences sort A to Z the same in SQLite and PostgreSQL (a Spanish one too).

    Before, SQLite put "álvaro", "Élodie" and "Óscar" after "zoe" (code points after lower()), while a PostgreSQL
    server sorting in Spanish put them beside their letters: a log moved from one to the other read in another order.
    The actor and target orders page both ways over the stored sort key, reversed by "-".
    """
    store = make_store(await _url_where(where, request, tmp_path))
    await store.connect()
    try:
        stored = await store.append_many(
            [
                ruling(n, actor=f"t-{n}", actor_name=name, target=f"t-{n}").model_copy(
                    update={"target": Party(id=f"t-{n}", name=name)}
                )
                for n, name in enumerate(ACCENTED)
            ]
        )
        session = str(stored[0].session)
        assert await _actor_pages(store, session, "actor") == A_TO_Z
        assert await _actor_pages(store, session, "-actor") == A_TO_Z[::-1]
        targets = await store.query("w-ashes", session, limit=100, order="target")
        assert [r.target.name for r in targets.records if r.target] == A_TO_Z
    finally:
        await store.close()


@pytest.mark.parametrize("where", ["sqlite", "postgres-es"])
async def test_a_log_from_before_sort_keys_migrates_and_sorts_its_names_alike(
    where: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema-5 log's rulings, written before names had sort keys, sort A to Z once migrated to schema 6.

    The migration computes the key of every name and id of every session; a later ruling adds its own.
    """
    first_five = [m for m in sql.load_migrations() if m[0] <= 5]
    url = await _url_where(where, request, tmp_path)
    old = make_store(url)
    with monkeypatch.context() as patched:
        patched.setattr(sql, "load_migrations", lambda: first_five)
        await old.connect()
        try:
            assert await old.schema_version() == 5
            earliest = ruling(0, actor="t-0", actor_name=ACCENTED[0], snapshot=None)
            first = await append_as_before_world_names(old, earliest)
            async with old._write(["w-ashes"]) as db:  # what a schema-5 bridge wrote: no sort keys
                for n, name in enumerate(ACCENTED[1:-1], start=1):
                    record = ruling(n, actor=f"t-{n}", actor_name=name, snapshot=None)
                    at = format_time(parse_time(record.time))
                    row = record.model_copy(update={"id": new_id(), "session": first.session, "time": at})
                    await db.execute(sql._INSERT_RULING, *sql._ruling_row(row))
        finally:
            await old.close()
    new = make_store(url)
    await new.connect()
    try:
        assert await new.schema_version() == load_migrations()[-1][0]
        await new.append(ruling(99, actor="t-99", actor_name=ACCENTED[-1], session=first.session))
        assert await _actor_pages(new, str(first.session), "actor") == A_TO_Z
    finally:
        await new.close()
