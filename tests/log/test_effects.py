"""The session's log operations carried out on a real SQLite log, and the answer each one gives."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bridge.config import BridgeConfig
from bridge.log.effects import LOG_WAIT, log_outage, perform, unlogged_answer
from bridge.log.records import Party
from bridge.log.sqlite import SqliteLogStore
from bridge.protocol import (
    Adjudication,
    ErrorMessage,
    RulingOverridden,
    RulingOverride,
    SessionEnded,
    SessionStarted,
    UserInfo,
)
from bridge.session import StoreThenSend

from .sample import T0, ruling

_ANSWER = Adjudication(
    id="a0",
    scene="s-docks",
    actor="t-fus",
    target="t-tgt",
    action="bs-attack",
    ruleset="infinity-n4",
    edition="current",
    allowed=True,
    modifier=-6,
    crossings=[],
    modifiers=[],
    notes=["ruling 0"],
    citations=[],
)


def _append() -> StoreThenSend:
    return StoreThenSend("append", "a0", "w-ashes", T0, record=ruling(0), answer=_ANSWER)


def _session_op(operation: Any, **fields: Any) -> StoreThenSend:
    return StoreThenSend(operation, "q1", "w-ashes", T0 + timedelta(minutes=5), **fields)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteLogStore]:
    """A connected, empty SQLite log in a file of this test's own."""
    opened = SqliteLogStore(tmp_path / "log.db")
    await opened.connect()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def broken(tmp_path: Path) -> SqliteLogStore:
    """A real SQLite store whose database is not open: every operation on it fails."""
    return SqliteLogStore(tmp_path / "never-opened.db")


async def test_a_ruling_is_committed_then_answered_as_logged_with_its_record(store: SqliteLogStore) -> None:
    """An appended ruling is in the log when its answer comes: logged, naming the record, the ruling unchanged."""
    answer = await perform(_append(), store)
    assert isinstance(answer, Adjudication) and answer.logged is True and answer.record is not None
    assert answer.model_copy(update={"logged": False, "record": None}) == _ANSWER
    saved = await store.get_record("w-ashes", answer.record)
    assert saved is not None and saved.request == "a0" and saved.notes == ["ruling 0"]


async def test_a_ruling_the_store_cannot_keep_is_still_answered(
    broken: SqliteLogStore, caplog: pytest.LogCaptureFixture
) -> None:
    """When the store fails the ruling stands, answered with logged false and no record; the failure is logged."""
    with caplog.at_level(logging.ERROR, logger="bridge.log.effects"):
        answer = await perform(_append(), broken)
    assert answer == _ANSWER.model_copy(update={"logged": False, "record": None})
    assert [r.getMessage() for r in caplog.records] == [
        "could not log ruling a0 of world w-ashes: log store is not connected"
        " (answered with logged: false, as every ruling until the log works again)"
    ]


async def test_when_the_log_works_again_the_bridge_says_how_many_rulings_it_could_not_keep(
    broken: SqliteLogStore, caplog: pytest.LogCaptureFixture
) -> None:
    """A run of failures is reported ruling by ruling, then summed up once the store keeps a ruling again."""
    with caplog.at_level(logging.WARNING, logger="bridge.log.effects"):
        for _ in range(3):
            assert (await perform(_append(), broken)).logged is False
        assert (log_outage(broken).since is not None, log_outage(broken).unlogged) == (True, 3)
        await broken.connect()  # the database is back
        try:
            assert (await perform(_append(), broken)).logged is True
        finally:
            await broken.close()
    said = [r.getMessage() for r in caplog.records]
    assert [line.split(":")[0] for line in said[:3]] == ["could not log ruling a0 of world w-ashes"] * 3
    assert caplog.records[0].exc_info and not caplog.records[1].exc_info  # one traceback per run, not per ruling
    assert said[3].startswith("the log works again: 3 ruling(s) answered between ")
    assert said[3].endswith(" with logged: false are not in it (but any named since as committed afterwards)")
    assert len(said) == 4
    assert (log_outage(broken).since, log_outage(broken).total) == (None, 3)


async def test_without_a_store_rulings_are_answered_unlogged() -> None:
    """No store (``sightline replay``): the ruling is answered as it was, with logged false and no record."""
    assert await perform(_append(), None) == _ANSWER
    assert unlogged_answer(_append()) == _ANSWER and _ANSWER.logged is False and _ANSWER.record is None


@pytest.mark.parametrize(
    "effect",
    [
        _session_op("start", name="Night raid"),
        _session_op("end"),
        _session_op("override", override=RulingOverride(id="q1", record="X", modifier=0, reason="cover")),
    ],
    ids=["start", "end", "override"],
)
async def test_without_a_store_log_operations_are_refused_saying_why(effect: StoreThenSend) -> None:
    """No store: session.start, session.end and ruling.override get log-unavailable, for that request."""
    for answer in (unlogged_answer(effect), await perform(effect, None)):
        assert answer == ErrorMessage(id="q1", code="log-unavailable", message="no log is kept here (sightline replay)")


async def test_a_named_session_starts_and_ends(store: SqliteLogStore) -> None:
    """session.start opens a session of that name (kept with the world's name); session.end closes it."""
    started = await perform(_session_op("start", name="Night raid", world_name="Ashes of Paradiso"), store)
    assert isinstance(started, SessionStarted) and started.id == "q1"
    assert (started.session.name, started.session.world, started.session.ended) == ("Night raid", "w-ashes", None)
    [kept] = await store.list_sessions("w-ashes")
    assert kept.id == started.session.id and kept.world_name == "Ashes of Paradiso"
    ended = await perform(_session_op("end"), store)
    assert isinstance(ended, SessionEnded) and ended.session is not None
    assert ended.session.id == started.session.id and ended.session.ended is not None


async def test_ending_when_no_session_is_open_answers_with_none(store: SqliteLogStore) -> None:
    """session.end with no open session is no error: session.ended carries null."""
    assert await perform(_session_op("end"), store) == SessionEnded(id="q1", session=None)


async def test_an_override_is_kept_beside_the_original_with_the_gm_who_made_it(store: SqliteLogStore) -> None:
    """ruling.override stores a new record overriding the original, naming the GM; the original stays."""
    original = await perform(_append(), store)
    assert isinstance(original, Adjudication) and original.record is not None
    request = RulingOverride(id="q1", record=original.record, modifier=-3, reason="half cover")
    answer = await perform(_session_op("override", override=request, user=UserInfo(id="u1", name="Ana")), store)
    assert isinstance(answer, RulingOverridden) and answer.original == original.record
    kept = await store.get_record("w-ashes", answer.record)
    assert kept is not None and (kept.kind, kept.overrides, kept.modifier, kept.reason) == (
        "override",
        original.record,
        -3,
        "half cover",
    )
    assert kept.user == Party(id="u1", name="Ana")
    first = await store.get_record("w-ashes", original.record)
    assert first is not None and first.kind == "ruling" and first.modifier == -6


async def test_an_override_by_a_user_with_no_id_or_name_names_no_one(store: SqliteLogStore) -> None:
    """A user with neither id nor name is not recorded as an empty party: the override's user is null."""
    original = await perform(_append(), store)
    assert isinstance(original, Adjudication) and original.record is not None
    request = RulingOverride(id="q1", record=original.record, modifier=None, allowed=False, reason="no line")
    answer = await perform(_session_op("override", override=request, user=UserInfo()), store)
    assert isinstance(answer, RulingOverridden)
    kept = await store.get_record("w-ashes", answer.record)
    assert kept is not None and kept.user is None and kept.allowed is False and kept.modifier is None


async def test_overriding_a_record_the_log_does_not_have_is_refused_naming_it(store: SqliteLogStore) -> None:
    """An override of an unknown record: invalid-message naming the field and the record, for that request."""
    missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    request = RulingOverride(id="q1", record=missing, modifier=0, reason="cover")
    answer = await perform(_session_op("override", override=request), store)
    assert answer == ErrorMessage(
        id="q1", code="invalid-message", message=f"record: {missing}", details={"field": "record"}
    )


@pytest.mark.parametrize("operation", ["start", "end", "override"])
async def test_a_failing_store_answers_log_unavailable_and_says_try_again(
    broken: SqliteLogStore, operation: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that fails mid-operation: log-unavailable for that request (no traceback to the client), logged here."""
    request = RulingOverride(id="q1", record="01ARZ3NDEKTSV4RRFFQ69G5FAV", modifier=0, reason="cover")
    effect = _session_op(operation, name="x", override=request)
    with caplog.at_level(logging.ERROR, logger="bridge.log.effects"):
        answer = await perform(effect, broken)
    assert answer == ErrorMessage(id="q1", code="log-unavailable", message="the log store failed; try again")
    assert [r.getMessage() for r in caplog.records] == [f"log operation {operation} failed"]


def test_the_default_log_wait_answers_before_the_module_gives_up() -> None:
    """A ruling held for a hanging log is answered (unlogged) well before the module's request timeout shows instead."""
    source = (Path(__file__).parents[2] / "foundry-module" / "scripts" / "connection.js").read_text(encoding="utf-8")
    found = re.search(r"requestTimeoutMs = ([0-9_]+),", source)
    assert found is not None, "connection.js no longer declares requestTimeoutMs's default"
    module_timeout = int(found.group(1).replace("_", "")) / 1000
    assert module_timeout / 2 >= LOG_WAIT  # the answer's own trip, the worker's queue and a busy loop fit in the rest
    assert BridgeConfig.__dataclass_fields__["log_wait"].default == LOG_WAIT  # what `sightline serve` starts with
