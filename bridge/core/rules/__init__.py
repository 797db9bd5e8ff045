"""Rulesets: read-only data validated at load, and the generic code that applies them.

:data:`RULESETS` knows every ruleset's id from the start and loads one (its module, its TOML data and the
data's validation) the first time it is read: a game uses one, and each costs tenths of a second of
start-up (``sightline replay``). A ruleset whose data is bad fails when it is loaded, as it did at import;
:func:`load_all` loads and validates every one (``sightline serve`` calls it before it is ready, the
tests read every ruleset).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from .base import ModifierEntry, Ruleset, Ruling, RulingError, Situation

__all__ = [
    "RULESETS",
    "ModifierEntry",
    "Ruleset",
    "RulesetLoadError",
    "Ruling",
    "RulingError",
    "Situation",
    "forget_scene_memos",
    "load_all",
]


def forget_scene_memos() -> None:
    """Empty the memos of scene contents (a world was dropped; the next ruling fills them again).

    Rulings are the same with or without them; what they hold would otherwise outlive the world, and the
    allocator's pages with it (``docs/performance.md``, "A dropped world's memory")."""
    from .. import geometry
    from . import data_files, notes

    data_files.forget_scene_answers()
    notes.forget_lists()
    geometry.forget_unit_circles()


class RulesetLoadError(RuntimeError):
    """A ruleset's data or code could not be loaded (a broken install, never a client's mistake); the
    message names the ruleset, the cause is chained. Not a ``ValueError``: no scene check mistakes it for
    a bad scene."""


def _infinity(name: str) -> Ruleset:
    from .infinity import InfinityRuleset, load_infinity

    return InfinityRuleset(load_infinity(name))


def _gurps() -> Ruleset:
    from .gurps import GurpsRuleset, load_gurps

    return GurpsRuleset(load_gurps())


def _traveller() -> Ruleset:
    from .traveller import TravellerRuleset, load_traveller

    return TravellerRuleset(load_traveller())


#: How each ruleset is loaded, by id, in the order the bridge lists them.
_LOADERS: Final[Mapping[str, Callable[[], Ruleset]]] = {
    "infinity-n4": lambda: _infinity("infinity-n4"),
    "infinity-codeone": lambda: _infinity("infinity-codeone"),
    "gurps-4e": _gurps,
    "traveller": _traveller,
}


class _Rulesets(Mapping[str, Ruleset]):
    """A read-only mapping of every ruleset by id; each one loaded and validated on its first read."""

    def __init__(self, loaders: Mapping[str, Callable[[], Ruleset]]) -> None:
        self._loaders = dict(loaders)
        self._loaded: dict[str, Ruleset] = {}
        self._lock = threading.Lock()  # the server's threads may read a ruleset first at the same time

    def __getitem__(self, ruleset_id: str) -> Ruleset:
        found = self._loaded.get(ruleset_id)
        if found is not None:
            return found
        load = self._loaders[ruleset_id]  # KeyError for an unknown id, as a dict
        with self._lock:
            found = self._loaded.get(ruleset_id)
            if found is None:
                try:
                    found = load()
                except Exception as exc:
                    raise RulesetLoadError(f"ruleset {ruleset_id!r} could not be loaded: {exc}") from exc
                if found.id != ruleset_id:
                    raise RulesetLoadError(f"the ruleset loaded as {ruleset_id!r} calls itself {found.id!r}")
                self._loaded[ruleset_id] = found
        return found

    def get(self, ruleset_id: str, default: Ruleset | None = None) -> Ruleset | None:  # type: ignore[override]
        """The ruleset, loaded if need be, or ``default`` for an unknown id (a ruleset that fails to load
        raises, never reads as unknown)."""
        return self[ruleset_id] if ruleset_id in self._loaders else default

    def __contains__(self, ruleset_id: object) -> bool:
        return ruleset_id in self._loaders  # without loading it

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)

    def __repr__(self) -> str:
        loaded = ", ".join(ruleset_id for ruleset_id in self._loaders if ruleset_id in self._loaded)
        return f"RULESETS({', '.join(self._loaders)}; loaded: {loaded or 'none'})"


#: Every ruleset the bridge knows, by id; each loaded and validated on first read (:func:`load_all`: all).
RULESETS: Final[Mapping[str, Ruleset]] = _Rulesets(_LOADERS)


def load_all() -> None:
    """Load and validate every ruleset now; raises what a bad one raises."""
    for ruleset_id in RULESETS:
        RULESETS[ruleset_id]
