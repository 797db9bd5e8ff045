"""Judging a logged game session again under another edition or ruleset ("what if").

Every logged ruling keeps its scene snapshot (zones, walls, grid and the scene's setting: rules,
environment, lights) and its situation (the actor's and target's tokens, the tokens whose light may
reach the target, ``aware`` and ``options``). :class:`Rejudge` rebuilds that scene under the chosen
ruleset and edition and asks the very :class:`~bridge.session.Session` the live bridge uses — offline,
nothing logged — so a re-judged ruling is what the bridge would have answered at the table.

Nothing stored changes: a re-judgement is computed, never written over the log. A ruling that cannot
carry over — an action, a trait or a crossed zone type the other ruleset lacks, or a record written
before the log kept the whole situation — is reported as such, never dropped.

Memory stays bounded whatever the session's size: one scene at a time is held (a patch moves the
tokens between rulings of the same snapshot), its remembered rulings are dropped with it, and the
summary keeps counts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..core.rules import RULESETS
from ..core.rules.data_files import vocabulary
from ..core.rules.labels import readable_citation
from ..protocol import dump_message
from ..session import Send, Session, StoreThenSend, Worlds
from .records import RulingRecord

__all__ = ["Lack", "Outcome", "Rejudge", "RejudgeError", "Summary", "WhyCode"]

Status = Literal["same", "changed", "untranslatable"]
#: How a changed ruling moved, for the actor: allowed now, blocked now, easier, harder, or on another
#: scale (the two rulesets' modifiers cannot be compared).
Direction = Literal["now-allowed", "now-blocked", "easier", "harder", "other-scale"]
#: Why a ruling could not carry over, as a fixed code: the rules judged under lack something it needs
#: (``lacks``), the record was written before the log kept each ruling's situation (``unrecorded``), or
#: the bridge refused the scene or the ruling (``refused``; ``why`` is then the bridge's own message).
WhyCode = Literal["lacks", "unrecorded", "refused"]
#: Something a ruling needs that the rules judged under lack: an edition, an action, a trait or a zone
#: type, with its id (people read its label: ``bridge.log.rejudge_output.why_text``).
Lack = tuple[Literal["edition", "action", "trait", "zone"], str]

#: How ``why`` (English, ids as they are: data for programs, as in the JSONL) names each kind of lack.
_LACK_WORDS = {"edition": "edition", "action": "action", "trait": "trait", "zone": "zone type"}
_UNRECORDED = "recorded before the log kept each ruling's whole situation"

_SCENE_ID = "rejudge"
_WORLD_ID = "rejudge"


class RejudgeError(ValueError):
    """The ruleset or edition asked for does not exist."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One logged ruling judged again.

    ``after`` is the new adjudication's wire form (``None`` when untranslatable); ``why`` says why a
    ruling could not carry over (in English, with ids), ``why_code`` and ``lacks`` the same as data, for
    writing it in the reader's language; ``added``/``dropped`` are the citations the new ruling has that
    the original lacked, and the reverse — the rules that made the difference.
    """

    record: RulingRecord
    status: Status
    after: dict[str, Any] | None = None
    why: str | None = None
    direction: Direction | None = None
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    why_code: WhyCode | None = None
    lacks: tuple[Lack, ...] = ()


@dataclass
class Summary:
    """Counts over a whole re-judgement (constant memory)."""

    total: int = 0
    same: int = 0
    changed: int = 0
    untranslatable: int = 0
    directions: Counter[str] = field(default_factory=Counter)
    causes: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.total += 1
        if outcome.status == "same":
            self.same += 1
        elif outcome.status == "untranslatable":
            self.untranslatable += 1
        else:
            self.changed += 1
            if outcome.direction is not None:
                self.directions[outcome.direction] += 1
            for citation in outcome.added:
                self.causes["+ " + citation] += 1
            for citation in outcome.dropped:
                self.causes["− " + citation] += 1

    def wire(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "same": self.same,
            "changed": self.changed,
            "untranslatable": self.untranslatable,
            "directions": dict(self.directions),
            "causes": [{"citation": cause, "rulings": count} for cause, count in self.causes.most_common()],
        }


class Rejudge:
    """Judges logged rulings again under ``ruleset`` (default: each ruling's own) and ``edition``
    (default ``current`` when the ruleset changes, else each ruling's own)."""

    def __init__(self, *, ruleset: str | None = None, edition: str | None = None) -> None:
        if ruleset is None and edition is None:
            raise RejudgeError("name an edition, a ruleset, or both")
        if ruleset is not None and ruleset not in RULESETS:
            raise RejudgeError(f"unknown ruleset {ruleset!r}; known: {', '.join(sorted(RULESETS))}")
        if edition is not None:
            owners = [RULESETS[ruleset]] if ruleset is not None else list(RULESETS.values())
            if not any(edition in owner.editions for owner in owners):
                known = sorted({e for owner in owners for e in owner.editions})
                raise RejudgeError(f"unknown edition {edition!r}; known: {', '.join(known)}")
        self.ruleset = ruleset
        self.edition = edition
        self._session = Session(Worlds(), offline=True)
        self._scene_key: tuple[str, str, str] | None = None
        self._tokens: set[str] = set()
        self._count = 0

    def rules_for(self, record: RulingRecord) -> tuple[str, str]:
        """The ruleset and edition ``record`` is judged under."""
        ruleset = self.ruleset or record.ruleset
        if self.edition is not None:
            return ruleset, self.edition
        return ruleset, record.edition if ruleset == record.ruleset else "current"

    def judge(self, record: RulingRecord) -> Outcome:
        """``record`` judged again (``record`` must be a ruling, not an override)."""
        ruleset, edition = self.rules_for(record)
        if edition not in RULESETS[ruleset].editions:
            return _lacking(record, ruleset, [("edition", edition)])
        missing = _untranslatable(record, ruleset)
        if missing is not None:
            return missing
        snapshot, situation = record.snapshot, record.situation
        assert snapshot is not None and situation is not None
        error = self._place(record, ruleset, edition)
        if error is not None:
            return Outcome(record, "untranslatable", why=error, why_code="refused")
        self._count += 1
        answer = self._ask(
            {
                "type": "adjudicate",
                "id": f"r{self._count}",
                "scene": _SCENE_ID,
                "actor": record.actor.id,
                "target": record.target.id if record.target else None,
                "action": record.action,
                "reaction": record.reaction,
                "aware": situation.get("aware", True),
                "options": situation.get("options", {}),
                "log": False,
            }
        )
        if answer.get("type") != "adjudication":
            why = str(answer.get("message", "the bridge refused the ruling"))
            return Outcome(record, "untranslatable", why=why, why_code="refused")
        if answer["allowed"] == record.allowed and answer["modifier"] == record.modifier:
            return Outcome(record, "same", after=answer)
        # Records logged before sources were named by title cite seed file names: compare like with like.
        logged = [readable_citation(c) for c in record.citations]
        before, after = set(logged), list(answer.get("citations", []))
        return Outcome(
            record,
            "changed",
            after=answer,
            direction=_direction(record, ruleset, answer),
            added=tuple(c for c in after if c not in before),
            dropped=tuple(c for c in logged if c not in set(after)),
        )

    def judge_all(self, records: Iterable[RulingRecord]) -> Iterable[Outcome]:
        """Every ruling of ``records`` judged again (overrides are the GM's word, not rulings: skipped)."""
        for record in records:
            if record.kind == "ruling":
                yield self.judge(record)

    async def outcomes(self, records: AsyncIterable[RulingRecord]) -> AsyncIterator[Outcome]:
        """:meth:`judge_all` over a stream (``LogStore.export``)."""
        async for record in records:
            if record.kind == "ruling":
                yield self.judge(record)

    # --- The scene ---------------------------------------------------------------------------------

    def _place(self, record: RulingRecord, ruleset: str, edition: str) -> str | None:
        """Make the session's one scene that of ``record``: a sync when the snapshot or rules differ
        from the last ruling's, else a patch moving its tokens. An error's text, or ``None``."""
        snapshot, situation = record.snapshot, record.situation
        assert snapshot is not None and situation is not None
        tokens: list[dict[str, Any]] = list(situation.get("tokens", []))
        key = (snapshot.key, ruleset, edition)
        if key != self._scene_key:
            setting = dict(snapshot.setting)
            rules = {**setting.pop("rules", {}), "ruleset": ruleset, "edition": edition}
            scene = {
                **setting,
                "id": _SCENE_ID,
                "name": snapshot.name,
                "grid": snapshot.grid,
                "rules": rules,
                "regions": snapshot.regions,
                "walls": snapshot.walls,
                "tokens": tokens,
            }
            self._scene_key = None
            answer = self._ask({"type": "scene.sync", "id": "sync", "scene": scene})
        else:
            ids = {token["id"] for token in tokens}
            answer = self._ask(
                {
                    "type": "scene.patch",
                    "id": "move",
                    "scene": _SCENE_ID,
                    "upsert": {"tokens": tokens},
                    "remove": {"tokens": sorted(self._tokens - ids)},
                }
            )
        if answer.get("type") not in ("scene.synced", "scene.patched"):
            return str(answer.get("message", "the bridge refused the scene"))
        self._scene_key = key
        self._tokens = {token["id"] for token in tokens}
        return None

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        for effect in self._session.receive(orjson.dumps(message)):
            if isinstance(effect, Send):  # an unlogged answer may come already in wire form (Prebuilt)
                return dump_message(effect.message)
            if isinstance(effect, StoreThenSend) and effect.answer is not None:
                return dump_message(effect.answer)
        return {"type": "error", "message": "no answer"}


def _untranslatable(record: RulingRecord, ruleset: str) -> Outcome | None:
    """``record`` as not carried over to ``ruleset`` (saying why), or ``None`` when it can be judged."""
    if record.snapshot is None or record.situation is None or not record.snapshot.setting:
        return Outcome(record, "untranslatable", why=_UNRECORDED, why_code="unrecorded")
    row = vocabulary().rulesets[ruleset]
    lacks: list[Lack] = []
    if record.action not in row.actions:
        lacks.append(("action", record.action))
    ids = {record.actor.id, record.target.id if record.target else None}
    for token in record.situation.get("tokens", []):
        if token.get("id") in ids:
            lacks.extend(("trait", str(trait)) for trait in token.get("traits", []) if not row.knows_trait(trait))
    zones = sorted({c.get("zone", "") for c in record.crossings if c.get("zone") not in row.zones})
    lacks.extend(("zone", zone) for zone in zones)
    return _lacking(record, ruleset, lacks) if lacks else None


def _lacking(record: RulingRecord, ruleset: str, lacks: list[Lack]) -> Outcome:
    """``record`` as not carried over because ``ruleset`` lacks ``lacks`` (each named once)."""
    unique = tuple(dict.fromkeys(lacks))
    words = ", ".join(f"{_LACK_WORDS[kind]} {value!r}" for kind, value in unique)
    return Outcome(record, "untranslatable", why=f"{ruleset} has no {words}", why_code="lacks", lacks=unique)


def _direction(record: RulingRecord, ruleset: str, answer: dict[str, Any]) -> Direction:
    if record.allowed != answer["allowed"]:
        return "now-allowed" if answer["allowed"] else "now-blocked"
    rows = vocabulary().rulesets
    harder = rows[ruleset].harder
    if record.modifier is None or answer["modifier"] is None or rows[record.ruleset].harder != harder:
        return "other-scale"
    raised = answer["modifier"] > record.modifier
    return "harder" if raised == (harder == "positive") else "easier"
