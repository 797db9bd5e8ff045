"""What every ruleset receives and returns.

A ruleset is read-only data (a TOML file under ``data/``, validated at load) plus the generic code that
applies it. The session hands it a :class:`Situation` — the scene, the tokens, the action and what the
geometry found along every candidate sight line — and gets back a :class:`Ruling`, which the session
turns into the contract's ``adjudication`` message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..scene import Scene, Token, Zone
from ..sight import Crossing, LineEvidence, SightLine

if TYPE_CHECKING:
    from ..geometry import SceneGeometry

__all__ = [
    "REQUEST_FIELDS",
    "LocalText",
    "Locale",
    "MissingParameter",
    "ModifierEntry",
    "Ruleset",
    "Ruling",
    "RulingError",
    "Situation",
    "wall_entries",
]

Locale = Literal["en", "es"]

#: ``adjudicate``'s own fields that reach a ruleset in :attr:`Situation.options` beside the request's
#: ``options`` (the session puts them there: GURPS reads ``aware``). No ruleset declares them as options,
#: and an option note never names them.
REQUEST_FIELDS: frozenset[str] = frozenset({"aware"})


@dataclass(frozen=True, slots=True)
class LocalText:
    """A text in every locale the bridge speaks; ``format`` fills ``{placeholders}``."""

    en: str
    es: str

    def get(self, locale: str, /, **values: Any) -> str:
        text = self.es if locale == "es" else self.en
        return text.format(**values) if values else text


@dataclass(frozen=True, slots=True)
class Situation:
    """One action from one token at another, with the geometry already worked out.

    ``lines`` holds one :class:`LineEvidence` per candidate sight line, the centre-to-centre line first
    (only that one unless the scene's ``rules.lines`` is ``"best"``); it is empty when there is no
    target (Combat Jump). ``options`` carries the request's ``aware`` (:data:`REQUEST_FIELDS`) and its
    ``options`` (GURPS ``warm``, Traveller target size, …: the keys each ruleset's data declares).
    """

    scene: Scene
    geometry: SceneGeometry
    actor: Token
    target: Token | None
    action: str
    reaction: bool
    lines: tuple[LineEvidence, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def locale(self) -> Locale:
        return self.scene.rules.locale

    @property
    def edition(self) -> str:
        return self.scene.rules.edition


@dataclass(frozen=True, slots=True)
class ModifierEntry:
    """One candidate modifier with whether it applied and why (contract: ``modifiers[]``)."""

    source: str
    value: int | None
    applied: bool
    label: str
    reason: str | None = None
    region: str | None = None
    zone: str | None = None
    citation: str | None = None

    def not_applied(self, reason: str) -> ModifierEntry:
        """This candidate withheld because the action is not allowed: ``reason`` follows its own reason.

        The value stays what the candidate would have been worth, so a blocked answer still explains it.
        """
        return replace(self, applied=False, reason=f"{self.reason} {reason}" if self.reason else reason)

    def to_wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "source": self.source,
            "value": self.value,
            "applied": self.applied,
            "label": self.label,
        }
        # region, zone, reason, citation: in this order, when set (one test each, no loop: a hot path)
        if self.region is not None:
            data["region"] = self.region
        if self.zone is not None:
            data["zone"] = self.zone
        if self.reason is not None:
            data["reason"] = self.reason
        if self.citation is not None:
            data["citation"] = self.citation
        return data


def wall_entries(walls: Iterable[str], text: Callable[..., str], locale: str) -> list[ModifierEntry]:
    """One applied entry per wall that blocks the line, as every ruleset lists them: ``text(key, locale)``
    must know ``wall`` (the label) and ``wall_blocks`` (the reason). Foundry's walls have no names, so people
    read "Wall"; the wall's id stays in ``region`` for the overlay. (Each entry is the same whatever the
    other walls: the whole-scene engine builds them one wall at a time.)"""
    label, reason = text("wall", locale), text("wall_blocks", locale)
    return [
        ModifierEntry(source="wall", value=None, applied=True, label=label, reason=reason, region=wall)
        for wall in walls
    ]


@dataclass(frozen=True, slots=True)
class Ruling:
    """A ruleset's answer. ``modifier`` is ``None`` exactly when ``allowed`` is false."""

    allowed: bool
    modifier: int | None
    crossings: tuple[Crossing, ...]
    modifiers: tuple[ModifierEntry, ...]
    notes: tuple[str, ...]
    citations: tuple[str, ...]
    line: SightLine | None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.allowed == (self.modifier is None):
            raise ValueError("a ruling has a modifier exactly when the action is allowed")


class MissingParameter(ValueError):
    """A zone lacks a parameter its ruleset needs (``validate_zone``): the bridge holds the zone and lists it
    as ignored (``bridge.core.ignored``) instead of refusing the scene; any other zone problem refuses it."""

    def __init__(self, message: str, *, parameter: str) -> None:
        super().__init__(message)
        self.parameter = parameter


class RulingError(ValueError):
    """A request the ruleset cannot answer (an unknown action, a bad option); names the field."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class Ruleset(Protocol):
    """The interface every ruleset implements; instances are immutable and shared by all worlds."""

    @property
    def id(self) -> str: ...

    @property
    def editions(self) -> tuple[str, ...]:
        """Edition names, oldest first; ``"current"`` is always the last."""
        ...

    @property
    def actions(self) -> frozenset[str]: ...

    @property
    def zone_types(self) -> frozenset[str]: ...

    @property
    def reads_positions(self) -> bool:
        """Whether a ruling reads where things stand beyond its line's crossings and walls — a distance, a
        light reaching the target — so that two lines with the same traits, crossings and walls may differ."""
        ...

    def knows_trait(self, trait: str) -> bool:
        """Whether ``trait`` belongs to this ruleset's vocabulary (patterns such as ``night-vision-N``)."""
        ...

    def validate_zone(self, zone: Zone) -> None:
        """Raise ``ValueError`` naming the parameter when a zone of this ruleset is malformed, and
        :class:`MissingParameter` when it only lacks a parameter the ruleset needs."""
        ...

    def validate_environment(self, environment: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the key when the scene environment is malformed."""
        ...

    def adjudicate(self, situation: Situation) -> Ruling: ...
