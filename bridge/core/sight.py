"""What the geometry tells the rules: sight lines, the zones they cross and the walls that stop them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Crossing", "CrossingKind", "LineEvidence", "Point3", "SightLine"]


class CrossingKind(StrEnum):
    """How a sight line meets a zone, seen from the actor (contract: ``crossings[].kind``)."""

    FROM = "from"  # only the actor is inside the zone
    INTO = "into"  # only the target is inside
    WITHIN = "within"  # both are inside
    THROUGH = "through"  # neither is inside and the line crosses the zone


@dataclass(frozen=True, slots=True)
class Point3:
    """A point in scene pixels (``x``, ``y``) at an elevation ``z`` in grid distance units."""

    x: float
    y: float
    z: float


@dataclass(frozen=True, slots=True)
class SightLine:
    """A straight line from a point of the actor's footprint to a point of the target's."""

    start: Point3
    end: Point3


@dataclass(frozen=True, slots=True)
class Crossing:
    """One zone met by a sight line: the region, its zone type and how the line meets it."""

    region: str
    zone: str
    kind: CrossingKind


@dataclass(frozen=True, slots=True)
class LineEvidence:
    """Everything the geometry found along one sight line.

    ``crossings`` are ordered by where the line first meets each zone (from the actor outwards);
    ``blocking_walls`` are the ids of the walls that stop sight along it, in the same order.
    """

    line: SightLine
    crossings: tuple[Crossing, ...]
    blocking_walls: tuple[str, ...]
