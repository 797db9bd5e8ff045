"""What the log keeps: the ruling record, its parties and its scene snapshot, as models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from bridge.log.records import Party, RulingRecord, SceneSnapshot

from .sample import DOCKS, ruling


def _fields_named(error: ValidationError) -> set[str]:
    return {".".join(str(part) for part in e["loc"]) for e in error.errors()}


def test_a_record_keeps_every_field_through_json() -> None:
    """A ruling with its parties, line, situation and snapshot comes back equal from its JSON."""
    record = ruling(3, situation={"aware": True, "tokens": [{"id": "t-fus", "x": 250}]}, reason=None)
    again = RulingRecord.model_validate_json(record.model_dump_json())
    assert again == record
    assert again.snapshot == DOCKS and again.actor == Party(id="t-fus", name="Fusilier")
    assert again.situation == {"aware": True, "tokens": [{"id": "t-fus", "x": 250}]}


def test_a_new_record_is_a_ruling_not_yet_stored() -> None:
    """Left out, a record is a ruling (not an override) with no id, session or reason, no reaction and empty lists."""
    record = RulingRecord(
        time="2025-03-01T19:00:00Z",
        world="w",
        scene="s",
        actor=Party(id="t1"),
        action="look",
        ruleset="gurps-4e",
        edition="current",
        allowed=False,
        modifier=None,
    )
    assert (record.id, record.kind, record.overrides, record.session, record.reason) == (
        None,
        "ruling",
        None,
        None,
        None,
    )
    assert record.reaction is False and record.world_name == "" and record.details == {}
    assert (record.crossings, record.modifiers, record.notes, record.citations) == ([], [], [], [])
    assert record.actor.name == "" and record.target is None and record.snapshot is None


def test_the_modifier_must_be_given_even_when_it_is_null() -> None:
    """A record without ``modifier`` is refused naming it: null (not allowed) must be said, not left out."""
    data = json.loads(ruling(0).model_dump_json())
    del data["modifier"]
    with pytest.raises(ValidationError) as caught:
        RulingRecord.model_validate(data)
    assert _fields_named(caught.value) == {"modifier"}


@pytest.mark.parametrize("kind", ["ruling", "override"])
def test_a_record_is_a_ruling_or_an_override(kind: str) -> None:
    """``kind`` takes exactly ``ruling`` and ``override``."""
    assert ruling(0, kind=kind).kind == kind


def test_any_other_kind_is_refused_by_name() -> None:
    """A kind other than ruling or override is refused, naming ``kind``."""
    with pytest.raises(ValidationError) as caught:
        ruling(0, kind="note")
    assert _fields_named(caught.value) == {"kind"}


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (Party, {"id": "u1", "nmae": "Gamemaster"}, "nmae"),
        (SceneSnapshot, {**DOCKS.model_dump(), "tokens": []}, "tokens"),
        (RulingRecord, {**ruling(0).model_dump(), "world_title": "Ashes"}, "world_title"),
    ],
)
def test_a_misspelt_or_unknown_field_is_refused_by_name(model: Any, data: dict[str, Any], field: str) -> None:
    """Each model refuses a field it does not know, naming it, rather than silently dropping it."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    assert _fields_named(caught.value) == {field}


def test_records_parties_and_snapshots_cannot_be_changed_in_place() -> None:
    """All three models are frozen (a logged record is never edited); a changed copy leaves the original as it was."""
    record = ruling(0)
    for model, field, value in ((record, "allowed", False), (record.actor, "name", "X"), (DOCKS, "name", "Y")):
        with pytest.raises(ValidationError):
            setattr(model, field, value)
    changed = record.model_copy(update={"kind": "override", "reason": "cover"})
    assert changed.kind == "override" and record.kind == "ruling" and record.reason is None
    assert hash(Party(id="u1", name="A")) == hash(Party(id="u1", name="A"))


def test_a_snapshot_written_before_the_setting_loads_with_it_empty() -> None:
    """A snapshot stored before ``setting`` existed (no such key) loads, with ``setting`` empty."""
    old = DOCKS.model_dump()
    del old["setting"]
    loaded = SceneSnapshot.model_validate(old)
    assert loaded.setting == {} and loaded.regions == DOCKS.regions and loaded.name == "Docks"


def test_a_snapshot_needs_its_grid_zones_and_walls() -> None:
    """A snapshot without its grid, regions or walls is refused naming each missing one."""
    with pytest.raises(ValidationError) as caught:
        SceneSnapshot.model_validate({"key": "k", "scene": "s"})
    assert _fields_named(caught.value) == {"grid", "regions", "walls"}


def test_a_record_written_before_world_names_and_situations_loads() -> None:
    """An older record (no ``world_name``, ``situation``, ``reaction`` or ``details``) loads with their defaults."""
    old = json.loads(ruling(0).model_dump_json())
    for later in ("world_name", "situation", "reaction", "details"):
        del old[later]
    loaded = RulingRecord.model_validate(old)
    assert (loaded.world_name, loaded.situation, loaded.reaction, loaded.details) == ("", None, False, {})
