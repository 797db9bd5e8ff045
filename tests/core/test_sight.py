"""What the geometry hands the rules: the contract's crossing kinds, and immutable points, lines and evidence."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bridge.core.sight import Crossing, CrossingKind, LineEvidence, Point3, SightLine


def evidence(*regions: str, walls: tuple[str, ...] = ()) -> LineEvidence:
    """Evidence along one line from (0, 0, 0) to (100, 0, 0) crossing the given regions, each a ``low`` zone."""
    line = SightLine(Point3(0.0, 0.0, 0.0), Point3(100.0, 0.0, 0.0))
    return LineEvidence(line, tuple(Crossing(r, "low", CrossingKind.THROUGH) for r in regions), walls)


def test_crossing_kinds_are_exactly_the_contracts_four() -> None:
    """The kinds are the contract's ``crossings[].kind`` strings, no more and no fewer.

    Contract: '`kind` is `from` (only the actor is inside the zone), `into` (only the target is inside),
    `within` (both are inside) or `through` (neither is inside and the line crosses the zone).'
    """
    assert [kind.value for kind in CrossingKind] == ["from", "into", "within", "through"]
    assert (CrossingKind.FROM, CrossingKind.INTO) == ("from", "into")
    assert (CrossingKind.WITHIN, CrossingKind.THROUGH) == ("within", "through")


def test_a_crossing_kind_is_written_as_its_contract_string() -> None:
    """A kind is a string: formatted and dumped to JSON it is the bare contract word, not ``CrossingKind.INTO``."""
    crossing = Crossing("r-poor", "poor", CrossingKind.INTO)
    assert str(crossing.kind) == "into" and f"{crossing.kind}" == "into"
    wire = {"region": crossing.region, "zone": crossing.zone, "kind": crossing.kind}
    assert json.loads(json.dumps(wire)) == {"region": "r-poor", "zone": "poor", "kind": "into"}


def test_a_crossing_kind_is_read_back_from_its_string_and_nothing_else() -> None:
    """``CrossingKind("within")`` is WITHIN; a word the contract lacks (``across``, ``From``) is refused."""
    assert CrossingKind("within") is CrossingKind.WITHIN
    for word in ("across", "From", ""):
        with pytest.raises(ValueError, match="is not a valid CrossingKind"):
            CrossingKind(word)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (Point3(1.0, 2.0, 3.0), "z"),
        (SightLine(Point3(0.0, 0.0, 0.0), Point3(1.0, 1.0, 0.0)), "end"),
        (Crossing("r", "zero", CrossingKind.FROM), "kind"),
        (evidence("r"), "blocking_walls"),
    ],
    ids=["Point3", "SightLine", "Crossing", "LineEvidence"],
)
def test_evidence_cannot_be_changed_once_made(value: object, field: str) -> None:
    """Points, lines, crossings and evidence are frozen and slotted: no field is reassigned, none is added."""
    before = dataclasses.replace(value)  # type: ignore[type-var]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)
    with pytest.raises((AttributeError, TypeError)):
        value.note = "added"  # type: ignore[attr-defined]
    assert value == before and not hasattr(value, "__dict__")


def test_points_and_lines_are_equal_and_hash_alike_by_value() -> None:
    """Two points (or lines) with the same coordinates are one key; a different height makes a different one."""
    assert Point3(1.0, 2.0, 3.0) == Point3(1.0, 2.0, 3.0)
    assert hash(Point3(1.0, 2.0, 3.0)) == hash(Point3(1.0, 2.0, 3.0))
    assert Point3(1.0, 2.0, 3.0) != Point3(1.0, 2.0, 4.0)
    lines = {SightLine(Point3(0.0, 0.0, 0.0), Point3(1.0, 0.0, 0.0)): "a"}
    assert lines[SightLine(Point3(0.0, 0.0, 0.0), Point3(1.0, 0.0, 0.0))] == "a"
    assert SightLine(Point3(1.0, 0.0, 0.0), Point3(0.0, 0.0, 0.0)) not in lines  # the reverse line is another


def test_evidence_keeps_the_order_of_its_crossings_and_walls() -> None:
    """Evidence holds its crossings and walls in the order given (along the line): the same zones reordered differ."""
    first = evidence("r-near", "r-far", walls=("w1", "w2"))
    assert [c.region for c in first.crossings] == ["r-near", "r-far"] and first.blocking_walls == ("w1", "w2")
    assert first == evidence("r-near", "r-far", walls=("w1", "w2"))
    assert first != evidence("r-far", "r-near", walls=("w1", "w2"))
    assert first != evidence("r-near", "r-far", walls=("w2", "w1"))
