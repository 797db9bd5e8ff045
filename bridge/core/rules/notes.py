"""Notes every ruleset adds the same way: vocabulary of another ruleset met on a ruling."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from ..sight import Crossing
from .base import Situation
from .data_files import vocabulary

__all__ = ["foreign_vocabulary_notes"]

TextLookup = Callable[..., str]


def foreign_vocabulary_notes(
    situation: Situation, text: TextLookup, *, crossings: Iterable[Crossing] = ()
) -> tuple[str, ...]:
    """One note per zone type or trait of another ruleset that this ruling touches — never a silent zero.

    The zones touched are those the situation's sight lines cross and ``crossings`` (a placement's:
    the zones the actor stands in). ``text(key, locale, **values)`` must know ``foreign_zone`` and
    ``foreign_trait``.
    """
    ruleset = situation.scene.rules.ruleset
    row = vocabulary().rulesets[ruleset]
    locale = situation.locale
    notes: dict[str, None] = {}
    seen_regions: set[str] = set()
    for crossing in chain((c for evidence in situation.lines for c in evidence.crossings), crossings):
        if crossing.zone not in row.zones and crossing.region not in seen_regions:
            seen_regions.add(crossing.region)
            notes[text("foreign_zone", locale, region=crossing.region, zone=crossing.zone, ruleset=ruleset)] = None
    for token in (situation.actor, situation.target):
        if token is None:
            continue
        for trait in token.traits:
            if not row.knows_trait(trait):
                values: dict[str, Any] = {"token": token.name or token.id, "trait": trait, "ruleset": ruleset}
                notes[text("foreign_trait", locale, **values)] = None
    return tuple(notes)
