"""Rulesets: read-only data validated at load, and the generic code that applies them."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from .base import ModifierEntry, Ruleset, Ruling, RulingError, Situation
from .infinity import InfinityRuleset, load_infinity

__all__ = ["RULESETS", "ModifierEntry", "Ruleset", "Ruling", "RulingError", "Situation"]


def _load_all() -> dict[str, Ruleset]:
    rulesets: list[Ruleset] = [
        InfinityRuleset(load_infinity("infinity-n4")),
        InfinityRuleset(load_infinity("infinity-codeone")),
    ]
    return {ruleset.id: ruleset for ruleset in rulesets}


#: Every ruleset the bridge knows, by id; loaded and validated once at import.
RULESETS: Final = MappingProxyType(_load_all())
