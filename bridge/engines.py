"""Whole-scene engines kept for ``adjudicate``: a chat card costs a look-up, not a geometry pass.

When a ``watch`` of the scene (an overlay's) holds the question's action and is at the scene's current
version, the session reads the ruling from the watch's engine instead (``Session._watched_ruling``): it
was updated by the patch already. Otherwise, one world's :class:`SceneEngines` holds, per (scene,
action), a :class:`~bridge.core.visibility.SceneVisibility` over every ordered pair of the scene, which
answers both reaction flags (``rulings(reaction)``: the same crossings and walls, ruled under either
flag). It is built the first time the action is asked about, moved to the scene's current version with
``advance()`` the next time one is asked after the scene changed — which rules nothing yet: the pairs
the changes touch are ruled when asked about (one pair, then the rest of its tokens' stale pairs in
one pass) — and answers from its rulings. Patches that nobody asks about cost nothing here.

Memory stays bounded: at most :data:`ENGINES_PER_WORLD` engines a world, holding at most
:data:`PAIRS_PER_WORLD` rulings between them (an engine costs about 2 KiB a pair: ~6 MiB at 50 × 100,
~75 MiB at 200 × 400; the least recently asked goes first, the newest always stays), an engine not asked
for :data:`IDLE_SECONDS` is dropped at the world's next message that reads or changes a scene, and
engines of scenes the world no longer holds go with them.

Which questions the engine answers (the others take the per-pair path, ``Session.rule``, unchanged):

- the engine is loaded (:func:`bridge.warmup.loaded`): while ``sightline serve`` imports it in the
  background (a few tenths of a second), or in a process that never loads it (``sightline demo``), no
  engine is built, so no chat card waits for an import;
- a target is named (Combat Jump without a target reads no sight line);
- the request's options are the defaults (``aware: true``, no ``options``): the engine rules every pair
  with exactly those (``SceneVisibility`` takes no per-request options);
- the scene's ``rules.lines`` is ``"center"``: under ``"best"`` the engine runs the same exact per-line
  code as the per-pair path, for every pair, so a whole-scene pass would cost up to 81 lines × every
  pair for one question (the per-pair path is bounded by ``Limits.best_line_tests``);
- the scene has at most ``Limits.engine_pairs`` ordered pairs (a first question on a larger one would
  cost a whole-scene pass);
- a new engine may be built: an engine is built compiled but unruled (``lazy``: its first question
  rules one pair), and its second stale question rules the whole scene in one pass (up to ~1 s at
  200 × 400 on a quiet machine); after a build or such a pass of ``T`` seconds the world builds no other
  engine for ``T / BUILD_SHARE − T`` (whole-scene passes take at most a fifth of its time, whatever a
  client asks; updates, bounded by the change, are not held back);
- the engine could be built or updated: if it raises (a ruling error on some other pair), it is dropped
  and the question takes the per-pair path, which answers or raises exactly as before.

The answer is the engine's ruling for the pair, which equals the per-pair one (``tests/test_engines.py``
compares them on random scenes of the three rulesets).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import warmup
from .core.rules.base import Ruling
from .core.world import SceneState

if TYPE_CHECKING:  # the engine's module (shapely, its compiled loops): imported when first needed
    from .core.visibility import SceneVisibility

__all__ = ["BUILD_SHARE", "ENGINES_PER_WORLD", "IDLE_SECONDS", "PAIRS_PER_WORLD", "EngineKey", "SceneEngines"]

_log = logging.getLogger(__name__)

#: Engines one world keeps at once (scenes × actions asked about).
ENGINES_PER_WORLD = 4
#: The most of a world's time whole-scene builds may take (a client alternating questions that each
#: need a new engine gets per-pair answers meanwhile, not a pass per message).
BUILD_SHARE = 0.2
#: Ordered pairs (rulings) the engines of one world hold between them.
PAIRS_PER_WORLD = 80_000
#: An engine not asked for this long (seconds) is dropped.
IDLE_SECONDS = 600.0

#: (scene id, action): one engine answers both reaction flags (``SceneVisibility.rulings(reaction)``)
EngineKey = tuple[str, str]


@dataclass
class _Kept:
    engine: SceneVisibility
    state: SceneState  # the version its rulings are for
    asked: float  # monotonic time of the last question
    pairs: int  # ordered pairs of its version: what it holds


@dataclass
class SceneEngines:
    """The engines one world keeps for ``adjudicate``. Not thread-safe: one world's thread uses it."""

    limit: int = ENGINES_PER_WORLD
    pair_budget: int = PAIRS_PER_WORLD
    build_share: float = BUILD_SHARE
    #: Monotonic time before which no new engine is built (see :data:`BUILD_SHARE`).
    next_build: float = float("-inf")
    idle_seconds: float = IDLE_SECONDS
    _kept: OrderedDict[EngineKey, _Kept] = field(default_factory=OrderedDict)
    #: Whole-scene passes made (engines built) and incremental updates, for tests and benchmarks.
    builds: int = 0
    updates: int = 0

    def __len__(self) -> int:
        return len(self._kept)

    def ruling(
        self, state: SceneState, actor: str, target: str, action: str, reaction: bool, now: float
    ) -> Ruling | None:
        """The engine's ruling of ``actor`` → ``target`` on ``state``, or ``None`` when the engine could not
        rule the scene (the caller then takes the per-pair path)."""
        key = (state.scene.id, action)
        kept = self._kept.get(key)
        try:
            if kept is None:
                if now < self.next_build or not warmup.loaded():
                    return None
                from .core.visibility import SceneVisibility

                # Another engine of the scene (another action): its compiled zones are reused.
                sibling = next((k.engine for key_, k in self._kept.items() if key_[0] == key[0]), None)
                began = time.perf_counter()
                # Compiled, nothing ruled: the first pair is ruled alone, the next question rules the scene.
                engine = SceneVisibility(state, action=action, reaction=reaction, sharing=sibling, lazy=True)
                took = time.perf_counter() - began
                self.next_build = now + took / self.build_share
                kept = _Kept(engine, state, now, _pairs(state))
                self.builds += 1
                self._kept[key] = kept
            elif kept.state is not state:
                kept.engine.advance(state)  # the pairs the change touches are ruled when asked about
                kept.state, kept.pairs = state, _pairs(state)
                self.updates += 1
            passes = kept.engine.pass_seconds
            ruling = kept.engine.ruling_of((actor, target), reaction)
            if kept.engine.pass_seconds > passes:  # a whole-scene pass: as much pause as after a build of it
                self.next_build = max(self.next_build, now + (kept.engine.pass_seconds - passes) / self.build_share)
        except Exception as exc:  # a ruling error on another pair, or a bug: the per-pair path answers
            _log.debug("adjudicate engine for %s dropped (%s: %s)", key, type(exc).__name__, exc)
            self._kept.pop(key, None)
            return None
        kept.asked = now
        self._kept.move_to_end(key)
        while len(self._kept) > 1 and (
            len(self._kept) > self.limit or sum(k.pairs for k in self._kept.values()) > self.pair_budget
        ):
            self._kept.popitem(last=False)
        return ruling

    def tidy(self, scenes: Mapping[str, Any], now: float) -> None:
        """Drop engines of scenes the world no longer holds and engines not asked for a while."""
        for key in [
            key for key, kept in self._kept.items() if key[0] not in scenes or now - kept.asked > self.idle_seconds
        ]:
            del self._kept[key]

    def clear(self) -> None:
        self._kept.clear()


def _pairs(state: SceneState) -> int:
    n = len(state.scene.tokens)
    return n * (n - 1)
