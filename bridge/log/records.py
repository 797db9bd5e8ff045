"""What the log keeps: one record per logged ruling, and one per GM override beside it.

A record holds enough to redraw the ruling later: the sight line's endpoints and elevations, and a
reference to a snapshot of the scene's zones (regions) and walls at the time, stored once per distinct
content.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic_core import to_json

__all__ = ["Party", "RulingRecord", "SceneSnapshot", "snapshot_json"]


class Party(BaseModel):
    """A user or token as the log names it: id and display name."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str = ""


class SceneSnapshot(BaseModel):
    """The zones and walls of a scene when a ruling was made; ``key`` is a hash of the content.

    ``setting`` holds the rest of the scene that is not tokens — its ``rules``, ``environment``,
    ``lights`` (and whatever scene-wide field the protocol adds) — so that a ruling can be judged again
    (``sightline log rejudge``). Snapshots written before it existed have it empty.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    scene: str
    name: str = ""
    grid: dict[str, Any]
    regions: list[dict[str, Any]]
    walls: list[dict[str, Any]]
    setting: dict[str, Any] = {}


def snapshot_json(snapshot: SceneSnapshot) -> str:
    """``snapshot.model_dump_json()``, byte for byte, written one item of its lists at a time: made in one call,
    the JSON of a scene of 50,000 walls held the interpreter — every other world's answers — 85 ms (more on a
    loaded machine), in a thread or not; between two items other threads run."""
    parts: list[bytes] = []
    for index, name in enumerate(SceneSnapshot.model_fields):
        value = getattr(snapshot, name)
        parts.append(b"{" if index == 0 else b",")
        parts.append(to_json(name) + b":")
        if isinstance(value, list):
            parts.append(b"[" + b",".join([to_json(item) for item in value]) + b"]")
        else:
            parts.append(to_json(value))
    parts.append(b"}")
    return b"".join(parts).decode()


class RulingRecord(BaseModel):
    """One logged ruling (``kind == "ruling"``) or a GM override of one (``kind == "override"``).

    ``id`` and ``session`` are given by the store when the record is appended; ``time`` is UTC ISO 8601.
    ``crossings``, ``modifiers``, ``notes``, ``citations`` and ``line`` are exactly the adjudication's
    wire fields; ``details`` holds the ruleset's own fields (Traveller difficulty, …).
    ``world_name`` is the world's name its client's ``hello`` gave (``""``: none); an export carries the
    world's newest name there, as the pages show it.
    ``situation`` is what the ruling read beyond the snapshot: the actor's and target's tokens (and
    tokens whose light may reach the target) as the scene held them, ``aware`` and ``options`` — with
    the snapshot, enough to judge the ruling again under another edition or ruleset.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str | None = None
    kind: Literal["ruling", "override"] = "ruling"
    overrides: str | None = None
    time: str
    world: str
    #: The world's name as its client's ``hello`` gave it when the ruling was made ("": unknown).
    world_name: str = ""
    scene: str
    session: str | None = None
    request: str | None = None
    user: Party | None = None
    actor: Party
    target: Party | None = None
    action: str
    reaction: bool = False
    ruleset: str
    edition: str
    allowed: bool
    modifier: int | None
    crossings: list[dict[str, Any]] = []
    modifiers: list[dict[str, Any]] = []
    notes: list[str] = []
    citations: list[str] = []
    line: dict[str, Any] | None = None
    details: dict[str, Any] = {}
    reason: str | None = None
    situation: dict[str, Any] | None = None
    snapshot: SceneSnapshot | None = None
