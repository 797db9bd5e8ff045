"""Infinity N4 and CodeOne visibility zones, applied from ``data/infinity-n4.toml``.

The order of operations (rules-notes, "Facts outside the seeds"): for each zone the line meets, work
out what it does to *this* observer — its MOD after the observer's Multispectral Visor, or that it
blocks LoF, or (when answering a BS Attack) the Poor zone a Zero zone becomes — then apply the single
most restrictive candidate (a blocked line beats any MOD) and add the action's own MOD.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from ..scene import Region, Scene, Token, Zone
from ..sight import Crossing, CrossingKind, LineEvidence, SightLine
from .base import ModifierEntry, Ruling, RulingError, Situation, wall_entries
from .data_files import (
    DataModel,
    DataRuleset,
    OptionRules,
    Passage,
    Text,
    _HasPassages,
    check_vocabulary,
    cite,
    load_toml,
)
from .effects import EffectTable
from .notes import foreign_vocabulary_notes

__all__ = ["InfinityData", "InfinityRuleset", "LineComposer", "load_infinity", "with_line"]

Visibility = Literal["low", "poor", "zero", "white-noise"]


class EditionRules(DataModel):
    reaction: Literal["original", "poor"]
    sixth_sense_alone: bool
    msv_reduces_white_noise_answer: bool
    marksmanship_sees_white_noise_as_zero: bool
    inside_zero_limits: bool


class ZoneRules(DataModel):
    label: Text
    visibility: Visibility
    mod: int | None = None
    msv_sees_through: bool = False
    forbids_combat_jump: bool
    cite: tuple[str, ...]
    #: The passages of the rule a trooper answering a BS Attack through this zone follows, when the zone is not a
    #: Zero zone itself but acts as one for it (White Noise: its own passages say "acts as a Zero Visibility Zone").
    cite_answer: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _mod_where_needed(self) -> ZoneRules:
        if (self.visibility in ("low", "poor")) != (self.mod is not None):
            raise ValueError("low and poor zones, and only they, carry a mod")
        return self


class MsvSight(DataModel):
    low: int
    poor: int
    zero: int


class TraitRules(DataModel):
    label: Text
    msv: int = 0
    sees: MsvSight | None = None
    cite: tuple[str, ...]


class ActionRules(DataModel):
    label: Text
    needs_lof: bool
    own_mod: int = 0
    placement: bool = False
    exempt: Text | None = None
    cite: tuple[str, ...]


class InfinityData(_HasPassages):
    id: str
    zones_apply: bool
    cite_when_not_applied: tuple[str, ...] = ()
    editions: dict[str, EditionRules]
    zones: dict[str, ZoneRules]
    traits: dict[str, TraitRules]
    actions: dict[str, ActionRules]
    options: dict[str, OptionRules] = Field(default_factory=dict)
    texts: dict[str, Text]
    passages: dict[str, Passage]

    @model_validator(mode="after")
    def _matches_vocabulary(self) -> InfinityData:
        check_vocabulary(
            self.id,
            zones=self.zones,
            actions=self.actions,
            traits=self.traits,
            options=self.options,
            editions=list(self.editions),
        )
        return self


def load_infinity(name: str) -> InfinityData:
    """Load ``data/<name>.toml``; a file with ``inherits`` takes everything else from its base."""
    raw = load_toml(name)
    base_name = raw.pop("inherits", None)
    if base_name is not None:
        merged = load_toml(str(base_name))
        merged.update(raw)
        raw = merged
    return InfinityData.model_validate(raw)


# --- Evaluation ---------------------------------------------------------------------------------

BLOCKED: None = None
#: Memoised zone candidates kept before the memo is emptied.
_CANDIDATE_MEMO = 100_000


@dataclass(frozen=True, slots=True)
class _Candidate:
    """One zone's effect on this observer: a MOD (``value``) or ``blocks``; ``counts`` if it may apply."""

    crossing: Crossing
    value: int | None
    blocks: bool
    counts: bool
    reason: str | None
    cite: tuple[str, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Observer:
    token: Token
    msv: int
    sees: MsvSight | None
    visor: str
    marksmanship: bool
    sixth_sense: bool


class InfinityRuleset(DataRuleset[InfinityData]):
    """The Infinity family (N4 with its five editions, CodeOne), driven entirely by its data."""

    def __init__(self, data: InfinityData) -> None:
        super().__init__(data)
        # Whole-scene passes rule thousands of lines: texts and labels are looked up, not rebuilt.
        self._texts = {(key, locale): text.get(locale) for key, text in data.texts.items() for locale in ("en", "es")}
        self._zone_labels = {
            (zone, locale): rules.label.get(locale) for zone, rules in data.zones.items() for locale in ("en", "es")
        }
        #: What one zone does to one kind of observer; pure in its key (see :meth:`_candidate`).
        self._candidates: dict[tuple[Any, ...], _Candidate] = {}

    # --- The Ruleset interface (the rest comes from DataRuleset) ---

    def validate_zone(self, zone: Zone) -> None:
        if zone.params:
            raise ValueError(f"zone type {zone.type!r} takes no parameters (got {', '.join(zone.params)})")

    def validate_environment(self, environment: Mapping[str, Any]) -> None:
        """Infinity reads no scene-wide conditions; other rulesets' keys are left alone."""

    def adjudicate(self, situation: Situation) -> Ruling:
        action: ActionRules = self._action(situation, needs_target=False)
        if action.placement:
            return self._placement(situation, action)
        notes = foreign_vocabulary_notes(situation, self._text)
        if situation.target is None:
            raise RulingError(f"{situation.action!r} needs a target", field="target")
        rulings = [self._rule_line(situation, action, evidence, notes) for evidence in situation.lines]
        # Infinity: any LoF the player can draw. max() keeps the first (centre) line among equals.
        return max(rulings, key=lambda r: (r.allowed, r.modifier if r.modifier is not None else 0))

    # --- One sight line ---

    def _rule_line(self, s: Situation, action: ActionRules, evidence: LineEvidence, notes: tuple[str, ...]) -> Ruling:
        locale = s.locale
        observer = self._observer(s.actor, locale)
        crossings = tuple(c for c in evidence.crossings if c.zone in self.data.zones)
        cite_keys: list[str] = []
        entries: list[ModifierEntry] = []
        extra_notes: list[str] = []

        if not action.needs_lof:
            exempt = action.exempt.get(locale) if action.exempt else None
            for crossing in crossings:
                zone = self.data.zones[crossing.zone]
                entries.append(self._entry(crossing, zone.mod, False, exempt, locale))
            cite_keys += action.cite
            return self._finish(s, action, crossings, entries, None, (), cite_keys, notes, evidence)

        candidates = [self._candidate(c, observer, s, action) for c in crossings]
        if not self.data.zones_apply:
            not_used = self._text("rule_not_used", locale)
            entries = [self._entry(c.crossing, 0, False, not_used, locale) for c in candidates]
            cite_keys += self.data.cite_when_not_applied
            return self._finish(
                s, action, crossings, entries, None, evidence.blocking_walls, cite_keys, notes, evidence
            )

        applied = _most_restrictive(candidates)
        stacking = ""
        if applied is not None:
            stacking = self._text("not_stacking", locale, applied=self._describe(applied, s))
        for candidate in candidates:
            is_applied = candidate is applied
            reason = candidate.reason
            if not is_applied and candidate.counts and applied is not None:
                reason = f"{reason} {stacking}" if reason else stacking
            value = None if candidate.blocks else candidate.value
            entry = self._entry(candidate.crossing, value, is_applied, reason, locale)
            if is_applied and evidence.blocking_walls and not candidate.blocks:
                entry = entry.not_applied(self._text("wall_not_applied", locale))  # no roll to modify
            entries.append(entry)
            cite_keys += candidate.cite
            extra_notes += candidate.notes
        if candidates:
            cite_keys += action.cite
        if sum(1 for c in candidates if c.counts) > 1:
            cite_keys += ["not-stacking-001", "not-stacking-002-u21", "not-stacking-002-original"]
            cite_keys += ["not-stacking-004"]
        return self._finish(
            s,
            action,
            crossings,
            entries,
            applied,
            evidence.blocking_walls,
            cite_keys,
            notes + tuple(dict.fromkeys(extra_notes)),
            evidence,
        )

    def _candidate(self, crossing: Crossing, observer: _Observer, s: Situation, action: ActionRules) -> _Candidate:
        """What one zone does to this observer's LoF along this line (memoised: it reads only the key)."""
        key = (
            crossing,
            observer.msv,
            observer.sees,
            observer.visor,
            observer.marksmanship,
            observer.sixth_sense,
            s.edition,
            s.locale,
            s.reaction,
            s.action,
        )
        found = self._candidates.get(key)
        if found is None:
            if len(self._candidates) >= _CANDIDATE_MEMO:
                self._candidates.clear()
            found = self._candidates[key] = self._judge(crossing, observer, s, action)
        return found

    def _judge(self, crossing: Crossing, observer: _Observer, s: Situation, action: ActionRules) -> _Candidate:
        """What one zone does to this observer's LoF along this line."""
        zone = self.data.zones[crossing.zone]
        edition = self.data.editions[s.edition]
        locale = s.locale
        kind = self._text(f"kind_{crossing.kind.value}", locale)
        cite_keys = zone.cite

        if zone.visibility in ("low", "poor"):
            base = zone.mod if zone.mod is not None else 0
            if observer.sees is not None:
                value = getattr(observer.sees, zone.visibility)
                if value != base:
                    reason = self._text("msv_reduces", locale, visor=observer.visor, value=_signed(value))
                    return _Candidate(crossing, value, False, True, reason, (*cite_keys, "msv-notes"))
            return _Candidate(crossing, base, False, True, None, cite_keys)

        zero_for_me = zone.visibility == "zero" or observer.msv > 0
        if zone.visibility == "white-noise" and not zero_for_me:
            if observer.marksmanship and edition.marksmanship_sees_white_noise_as_zero:
                zero_for_me = True
            else:
                extra = self._text("or_marksmanship", locale) if edition.marksmanship_sees_white_noise_as_zero else ""
                reason = self._text("white_noise_harmless", locale, or_marksmanship=extra)
                return _Candidate(crossing, 0, False, False, reason, cite_keys)
        assert zero_for_me

        sees_through = zone.visibility == "zero" and zone.msv_sees_through and observer.sees is not None
        if s.reaction:
            return self._answer_through_zero(crossing, zone, observer, s, action, sees_through, kind)
        if sees_through and observer.sees is not None:
            value = observer.sees.zero
            reason = self._text("msv_sees_through", locale, visor=observer.visor, value=_signed(value))
            return _Candidate(crossing, value, False, True, reason, (*cite_keys, "msv-notes"))
        if zone.visibility == "white-noise":
            who = observer.visor if observer.msv else self.data.traits["marksmanship"].label.get(locale)
            reason = self._text("white_noise_blocks", locale, who=who)
            if observer.msv:  # a visor that sees through Zero does not see through White Noise: the wiki's page
                cite_keys = (*cite_keys, "white-noise-notes")
        elif observer.msv and not zone.msv_sees_through:
            reason = f"{self._text('blocks', locale, kind=kind)} {self._text('eclipse_blocks_msv', locale)}"
        else:
            reason = self._text("blocks", locale, kind=kind)
        notes: tuple[str, ...] = ()
        if edition.inside_zero_limits and crossing.kind in (CrossingKind.FROM, CrossingKind.WITHIN):
            notes = (self._text("inside_zero_original", locale),)  # what the trooper may still declare
        return _Candidate(crossing, None, True, True, reason, cite_keys, notes)

    def _answer_through_zero(
        self,
        crossing: Crossing,
        zone: ZoneRules,
        observer: _Observer,
        s: Situation,
        action: ActionRules,
        sees_through: bool,
        kind: str,
    ) -> _Candidate:
        """The target of a BS Attack into/through/out of a zone that is Zero for it, answering."""
        edition = self.data.editions[s.edition]
        locale = s.locale
        cite_keys: tuple[str, ...] = (*zone.cite, *zone.cite_answer)
        notes: tuple[str, ...] = ()
        if edition.reaction == "original":
            if s.action != "bs-attack":
                reason = self._text("answer_original_forbidden", locale, action=action.label.get(locale))
                return _Candidate(crossing, None, True, True, reason, cite_keys)
            value = -6
            reasons = [self._text("answer_original", locale, kind=kind)]
            notes = (self._text("facing", locale),)
        elif sees_through and observer.sees is not None:
            value = observer.sees.zero
            reasons = [self._text("msv_sees_through", locale, visor=observer.visor, value=_signed(value))]
            cite_keys = (*cite_keys, "msv-notes")
        else:
            value = -6
            reasons = [self._text("answer_as_poor", locale, kind=kind)]
            if observer.sees is not None and zone.visibility == "white-noise":
                if edition.msv_reduces_white_noise_answer:
                    value = observer.sees.poor
                    reasons.append(self._text("msv_reduces", locale, visor=observer.visor, value=_signed(value)))
                    cite_keys = (*cite_keys, "msv-notes")
                else:
                    reasons.append(self._text("answer_msv_cannot_reduce", locale, visor=observer.visor))
            elif observer.sees is not None and not zone.msv_sees_through:
                reasons.append(self._text("answer_msv_cannot_reduce", locale, visor=observer.visor))
        if observer.sixth_sense and value < 0:
            pierced_with_l1 = sees_through and observer.msv == 1
            if edition.sixth_sense_alone or pierced_with_l1:
                value = 0
                reasons.append(self._text("sixth_sense_cancels", locale))
                cite_keys = (*cite_keys, "sixth-sense-notes")
        return _Candidate(crossing, value, False, True, " ".join(reasons), cite_keys, notes)

    # --- Rules over arrays ---

    def compile_effects(
        self, observers: Sequence[_Observer], *, action: str, reaction: bool, scene: Scene
    ) -> EffectTable:
        """What each crossing does to each of ``observers`` (by their position), for ``action`` under the
        scene's edition: the table :meth:`_judge` reads from the data, one zone type and kind at a time
        (:mod:`bridge.core.rules.effects`)."""
        rules = self.data.actions[action]
        situation = _scene_only(scene, action, reaction)
        zone_types = {zone: k for k, zone in enumerate(self.data.zones)}
        shape = (len(observers), len(zone_types), 4)
        counts = np.zeros(shape, dtype=bool)
        blocks = np.zeros(shape, dtype=bool)
        value = np.zeros(shape, dtype=np.int64)
        kinds = (CrossingKind.FROM, CrossingKind.INTO, CrossingKind.WITHIN, CrossingKind.THROUGH)
        for o, observer in enumerate(observers):
            for zone, z in zone_types.items():
                for k, kind in enumerate(kinds):
                    candidate = self._judge(Crossing("", zone, kind), observer, situation, rules)
                    counts[o, z, k] = candidate.counts
                    blocks[o, z, k] = candidate.blocks
                    value[o, z, k] = candidate.value or 0
        return EffectTable.of(zone_types, counts, blocks, value, rules.own_mod, rules.needs_lof)

    # --- Combat Jump ---

    @staticmethod
    def _standing(s: Situation) -> tuple[Crossing, ...]:
        """The zones the actor stands in (or touches), as ``from`` crossings, in scene order."""
        zone_types = {r.id: r.zone.type for r in s.scene.regions if r.zone is not None}
        return tuple(
            Crossing(region_id, zone_types[region_id], CrossingKind.FROM)
            for region_id in s.geometry.zones_containing(s.actor.id)
            if region_id in zone_types
        )

    def _placement(self, s: Situation, action: ActionRules) -> Ruling:
        """Combat Jump: where the actor stands. Zones of another ruleset are ignored, with a note."""
        locale = s.locale
        standing = self._standing(s)
        notes = foreign_vocabulary_notes(s, self._text, crossings=standing)
        entries: list[ModifierEntry] = []
        crossings: list[Crossing] = []
        forbidden = False
        for crossing in standing:
            if crossing.zone not in self.data.zones:
                continue
            zone = self.data.zones[crossing.zone]
            crossings.append(crossing)
            forbids = zone.forbids_combat_jump and self.data.zones_apply
            forbidden |= forbids
            if forbids:
                reason = self._text("combat_jump_forbidden", locale)
            elif not self.data.zones_apply:
                reason = self._text("rule_not_used", locale)
            else:
                reason = self._text("white_noise_no_jump_limit", locale)
            entries.append(self._entry(crossing, None, forbids, reason, locale))
        cite_keys = list(action.cite)
        if not self.data.zones_apply:
            cite_keys += self.data.cite_when_not_applied
        # "No zone touches this position" would be untrue where a zone does and the rule is not used (CodeOne).
        unused = not self.data.zones_apply and any(self.data.zones[c.zone].forbids_combat_jump for c in crossings)
        summary = "combat_jump_allowed_rule_not_used" if unused else "combat_jump_allowed"
        if forbidden:
            summary = "combat_jump_forbidden"
        return Ruling(
            allowed=not forbidden,
            modifier=None if forbidden else 0,
            crossings=tuple(crossings),
            modifiers=tuple(entries),
            notes=(*notes, self._text(summary, locale)),
            citations=cite(self.data.passages, tuple(cite_keys), edition=s.edition, locale=locale),
            line=None,
        )

    # --- Helpers ---

    def _finish(
        self,
        s: Situation,
        action: ActionRules,
        crossings: tuple[Crossing, ...],
        entries: list[ModifierEntry],
        applied: _Candidate | None,
        walls: tuple[str, ...],
        cite_keys: list[str],
        notes: tuple[str, ...],
        evidence: LineEvidence,
    ) -> Ruling:
        locale = s.locale
        walled = wall_entries(walls, self._text, locale)
        zone_value = 0
        blocked = bool(walls)
        if applied is not None:
            blocked |= applied.blocks
            zone_value = applied.value or 0
        if action.own_mod:
            entries.append(
                ModifierEntry(
                    source="action",
                    value=action.own_mod,
                    applied=not blocked,
                    label=self._text("own_mod", locale, action=action.label.get(locale)),
                )
            )
            cite_keys += action.cite
        if not action.needs_lof:
            notes = (*notes, self._text("no_lof_needed", locale, action=action.label.get(locale)))
        return Ruling(
            allowed=not blocked,
            modifier=None if blocked else zone_value + action.own_mod,
            crossings=crossings,
            modifiers=(*entries, *walled),
            notes=notes,
            citations=cite(self.data.passages, tuple(dict.fromkeys(cite_keys)), edition=s.edition, locale=locale),
            line=evidence.line,
        )

    def _entry(
        self, crossing: Crossing, value: int | None, applied: bool, reason: str | None, locale: str
    ) -> ModifierEntry:
        return ModifierEntry(
            source="zone",
            value=value,
            applied=applied,
            label=self._zone_label(crossing.zone, locale),
            reason=reason,
            region=crossing.region,
            zone=crossing.zone,
        )

    def _describe(self, candidate: _Candidate, s: Situation, regions: Mapping[str, Region] | None = None) -> str:
        """``Poor Visibility Zone "Smoke stack": -6`` — the region by its name, its id when it has none.
        ``regions``: the scene's regions by id (the first of an id), when the caller holds them."""
        locale = s.locale
        label = self._zone_label(candidate.crossing.zone, locale)
        if regions is None:
            region = next((r for r in s.scene.regions if r.id == candidate.crossing.region), None)
        else:
            region = regions.get(candidate.crossing.region)
        shown_region = f'"{region.name}"' if region is not None and region.name else candidate.crossing.region
        value = self._text("no_lof", locale) if candidate.blocks else _signed(candidate.value or 0)
        return f"{label} {shown_region}: {value}"

    def _observer(self, token: Token, locale: str) -> _Observer:
        visors = [self.data.traits[t] for t in token.traits if t in self.data.traits and self.data.traits[t].msv > 0]
        best = max(visors, key=lambda t: t.msv, default=None)
        return _Observer(
            token=token,
            msv=best.msv if best else 0,
            sees=best.sees if best else None,
            visor=best.label.get(locale) if best else "",
            marksmanship="marksmanship" in token.traits,
            sixth_sense="sixth-sense" in token.traits,
        )

    def _text(self, key: str, locale: str, /, **values: Any) -> str:
        text = self._texts[(key, "es" if locale == "es" else "en")]
        return text.format(**values) if values else text

    def _zone_label(self, zone: str, locale: str) -> str:
        return self._zone_labels[(zone, "es" if locale == "es" else "en")]


def _most_restrictive(candidates: list[_Candidate]) -> _Candidate | None:
    """A blocked line beats any MOD; otherwise the worst MOD; the first (nearest the actor) among equals."""
    counted = [c for c in candidates if c.counts]
    if not counted:
        return None
    return min(counted, key=lambda c: (0 if c.blocks else 1, c.value if c.value is not None else 0))


def _signed(value: int) -> str:
    return f"{value:+d}" if value else "0"


# --- Many lines of one scene ----------------------------------------------------------------------

_NEW = object.__new__
_RULING_FIELDS = ("allowed", "modifier", "crossings", "modifiers", "notes", "citations", "line", "extra")
if tuple(f.name for f in dataclasses.fields(Ruling)) != _RULING_FIELDS:
    raise RuntimeError("Ruling's fields changed: update _ruling")
_SET_ALLOWED, _SET_MODIFIER, _SET_CROSSINGS, _SET_MODIFIERS, _SET_NOTES, _SET_CITATIONS, _SET_LINE, _SET_EXTRA = (
    Ruling.__dict__[name].__set__ for name in _RULING_FIELDS
)


def _ruling(
    allowed: bool,
    modifier: int | None,
    crossings: tuple[Crossing, ...],
    modifiers: list[ModifierEntry],
    notes: tuple[str, ...],
    citations: tuple[str, ...],
    line: SightLine,
) -> Ruling:
    """``Ruling(...)`` (no ``extra``) at half the cost: the slots are set directly, without the frozen
    ``__init__``; its one check (a modifier exactly when allowed) holds by construction at the caller."""
    new = _NEW(Ruling)
    _SET_ALLOWED(new, allowed)
    _SET_MODIFIER(new, modifier)
    _SET_CROSSINGS(new, crossings)
    _SET_MODIFIERS(new, tuple(modifiers))
    _SET_NOTES(new, notes)
    _SET_CITATIONS(new, citations)
    _SET_LINE(new, line)
    _SET_EXTRA(new, {})
    return new


_ENTRY_FIELDS = ("source", "value", "applied", "label", "reason", "region", "zone", "citation")
if tuple(f.name for f in dataclasses.fields(ModifierEntry)) != _ENTRY_FIELDS:
    raise RuntimeError("ModifierEntry's fields changed: update _zone_entry")
_SET_SOURCE, _SET_VALUE, _SET_APPLIED, _SET_LABEL, _SET_REASON, _SET_REGION, _SET_ZONE, _SET_CITATION = (
    ModifierEntry.__dict__[name].__set__ for name in _ENTRY_FIELDS
)
_CANDIDATE_FIELDS = ("crossing", "value", "blocks", "counts", "reason", "cite", "notes")
if tuple(f.name for f in dataclasses.fields(_Candidate)) != _CANDIDATE_FIELDS:
    raise RuntimeError("_Candidate's fields changed: update _candidate_at")
(
    _SET_CANDIDATE_CROSSING,
    _SET_CANDIDATE_VALUE,
    _SET_CANDIDATE_BLOCKS,
    _SET_CANDIDATE_COUNTS,
    _SET_CANDIDATE_REASON,
    _SET_CANDIDATE_CITE,
    _SET_CANDIDATE_NOTES,
) = (_Candidate.__dict__[name].__set__ for name in _CANDIDATE_FIELDS)


def _zone_entry(
    value: int | None, applied: bool, label: str, reason: str | None, region: str, zone: str
) -> ModifierEntry:
    """What :meth:`InfinityRuleset._entry` builds (``label``: the zone type's, in the scene's locale), with
    the slots set directly instead of through the frozen ``__init__``."""
    new = _NEW(ModifierEntry)
    _SET_SOURCE(new, "zone")
    _SET_VALUE(new, value)
    _SET_APPLIED(new, applied)
    _SET_LABEL(new, label)
    _SET_REASON(new, reason)
    _SET_REGION(new, region)
    _SET_ZONE(new, zone)
    _SET_CITATION(new, None)
    return new


def _candidate_at(template: _Candidate, crossing: Crossing) -> _Candidate:
    """``dataclasses.replace(template, crossing=crossing)``: what :meth:`InfinityRuleset._judge` gives
    ``crossing`` when it gave ``template`` for a crossing of the same zone type and kind (it reads only
    those of a crossing; :meth:`InfinityRuleset.compile_effects` relies on the same)."""
    new = _NEW(_Candidate)
    _SET_CANDIDATE_CROSSING(new, crossing)
    _SET_CANDIDATE_VALUE(new, template.value)
    _SET_CANDIDATE_BLOCKS(new, template.blocks)
    _SET_CANDIDATE_COUNTS(new, template.counts)
    _SET_CANDIDATE_REASON(new, template.reason)
    _SET_CANDIDATE_CITE(new, template.cite)
    _SET_CANDIDATE_NOTES(new, template.notes)
    return new


def with_line(ruling: Ruling, line: SightLine) -> Ruling:
    """``dataclasses.replace(ruling, line=line)`` at a fraction of the cost (every other slot shared)."""
    new = _NEW(Ruling)
    _SET_ALLOWED(new, ruling.allowed)
    _SET_MODIFIER(new, ruling.modifier)
    _SET_CROSSINGS(new, ruling.crossings)
    _SET_MODIFIERS(new, ruling.modifiers)
    _SET_NOTES(new, ruling.notes)
    _SET_CITATIONS(new, ruling.citations)
    _SET_LINE(new, line)
    _SET_EXTRA(new, ruling.extra)
    return new


@dataclass(eq=False, slots=True)
class _Piece:
    """One crossing as seen by one kind of observer, with the modifier entries it can give.

    Compared and hashed by identity (one piece per crossing and observer)."""

    crossing: Crossing
    candidate: _Candidate
    counts: bool  # the candidate's
    cite_group: int  # the candidate's cite keys, as a number
    notes: tuple[str, ...]  # the candidate's
    rank: tuple[int, int]  # _most_restrictive's key
    label: str  # the zone type's, in the scene's locale
    value: int | None  # the entries' (``None`` when it blocks)
    plain: ModifierEntry | None = None  # not applied, with its own reason (built when first needed)
    applied: ModifierEntry | None = None  # the applied one (built when first needed)
    stacking: str | None = None  # the "not stacking" text naming this zone, once it was applied
    walled: ModifierEntry | None = None  # the applied entry withheld because a wall blocks, once needed
    #: When this piece is applied: the entry of each other counted piece (its reason names this zone), by
    #: the ``id`` of that piece's crossing (held beside it). Not by the piece: pieces holding pieces would
    #: form cycles, and a dropped composer would wait for a full collection.
    under: dict[int, tuple[Crossing, ModifierEntry]] = dataclasses.field(default_factory=dict)


#: What :class:`LineComposer` reads of a token: observer id, observer, traits all known, its pieces.
Who = tuple[int, _Observer, bool, dict[int, _Piece]]


class LineComposer:
    """The rulings of many centre lines of one scene for one action, built from memoised pieces.

    ``rule(actor, target, crossings, walls, line)`` returns exactly what :meth:`InfinityRuleset.adjudicate`
    returns for a :class:`Situation` holding that one line (``bridge.core.visibility`` rules whole scenes
    with it; its property tests compare the two). It follows :meth:`InfinityRuleset._rule_line` step by
    step, but what one crossing gives one kind of observer (candidate and modifier entries), the text
    naming each applied zone, the entry a zone takes when another is applied, and each set of
    citations are built once and shared. Valid for the scene it was made with: a change of rules or of
    region names needs a new composer.
    """

    def __init__(self, ruleset: InfinityRuleset, scene: Scene, action: str, reaction: bool) -> None:
        self._ruleset = ruleset
        self._data = ruleset.data
        self._action = ruleset.data.actions[action]
        self._locale = scene.rules.locale
        self._edition = scene.rules.edition
        # What _candidate and _describe read of a situation: the scene, its rules, action and reaction.
        self._scene = scene
        self._situation_made = _scene_only(scene, action, reaction)
        self._observers: dict[tuple[str, ...], Who] = {}
        self._stacked = 0  # stacked entries held by the pieces
        self._cite_groups: dict[tuple[str, ...], int] = {}
        self._cite_group_keys: list[tuple[str, ...]] = []  # by number
        #: What _judge gives an observer (by number) for a zone type and crossing kind: the candidate (of
        #: the first such crossing met), its value, cite group, rank and the zone type's label.
        self._shapes: dict[tuple[int, str, CrossingKind], tuple[_Candidate, int | None, int, tuple[int, int], str]] = {}
        self._regions: dict[str, Region] | None = None  # the scene's regions by id, for _describe
        self._plain: dict[Crossing, ModifierEntry] = {}
        self._walls: dict[str, ModifierEntry] = {}
        self._citations: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self._own: dict[bool, ModifierEntry] = {}
        self._effects: EffectTable | None = None

    def effects(self) -> EffectTable:
        """The effect table of every observer :meth:`who` has met so far (rows by observer number),
        compiled anew only when a new observer has come."""
        observers = [who[1] for who in self._observers.values()]
        table = self._effects
        if table is None or table.counts.shape[0] != len(observers):
            situation = self._situation
            table = self._effects = self._ruleset.compile_effects(
                observers, action=situation.action, reaction=situation.reaction, scene=situation.scene
            )
        return table

    def set_scene(self, scene: Scene) -> None:
        """The same rules and region names in a newer scene (regions may have been added or removed).
        Called at every move; the situation holding the scene is made when next read (rarely: new pieces).
        The regions by id are kept when the scene holds the very same list of regions (a move's patch)."""
        if scene.regions is not self._scene.regions:
            self._regions = None
        self._scene = scene

    @property
    def _situation(self) -> Situation:
        """:func:`_scene_only` of the composer's scene: the one made for an older scene, with this scene
        (``dataclasses.replace``), once it is read after :meth:`set_scene`."""
        situation = self._situation_made
        if situation.scene is not self._scene:
            situation = self._situation_made = dataclasses.replace(situation, scene=self._scene)
        return situation

    @staticmethod
    def applies(ruleset: object, action: str) -> bool:
        """Whether ``ruleset`` is Infinity's and ``action`` a sight-line action the composer rules."""
        if type(ruleset) is not InfinityRuleset:
            return False
        rules = ruleset.data.actions.get(action)
        return rules is not None and not rules.placement and (ruleset.data.zones_apply or not rules.needs_lof)

    def who(self, token: Token) -> Who:
        """What the composer reads of a token as an actor or a target (its traits); pass it to :meth:`rule`."""
        traits = tuple(token.traits)
        found = self._observers.get(traits)
        if found is None:
            found = self._observer(token)
        return found

    def rule(
        self,
        actor: Token,
        target: Token,
        actor_who: Who,
        target_who: Who,
        crossings: tuple[Crossing, ...],
        walls: tuple[str, ...],
        line: SightLine,
    ) -> Ruling:
        """``adjudicate`` of one centre line from ``actor`` to ``target`` (same Ruling); ``actor_who``
        and ``target_who`` come from :meth:`who`."""
        known, table = actor_who[2], actor_who[3]
        zones = self._data.zones
        pieces: list[_Piece] = []
        foreign = not (known and target_who[2])
        best: _Piece | None = None
        counted = 0
        groups: list[int] = []
        extra: list[str] = []
        for c in crossings:
            piece = table.get(id(c))
            if piece is None or piece.crossing is not c:
                if c.zone not in zones:
                    foreign = True
                    continue
                piece = self._piece(c, actor_who)
                table[id(c)] = piece
            pieces.append(piece)
            if piece.counts:
                counted += 1
                if best is None or piece.rank < best.rank:
                    best = piece
            if piece.cite_group not in groups:
                groups.append(piece.cite_group)
            if piece.notes:
                extra += piece.notes
        kept = crossings if len(pieces) == len(crossings) else tuple(p.crossing for p in pieces)
        notes: tuple[str, ...] = ()
        if foreign:
            evidence = LineEvidence(line=line, crossings=crossings, blocking_walls=walls)
            situation = dataclasses.replace(self._situation, actor=actor, target=target, lines=(evidence,))
            notes = foreign_vocabulary_notes(situation, self._ruleset._text)
        action = self._action
        if not action.needs_lof:
            return self._no_lof(kept, notes, line)

        entries: list[ModifierEntry]
        if best is None:
            entries = [piece.plain or self._plain_entry(piece) for piece in pieces]
        else:
            best_entry = best.applied or self._applied_entry(best)
            if walls and not best.candidate.blocks:  # a wall stops the roll: the MOD is withheld
                best_entry = best.walled or self._walled_entry(best)
            entries = [
                best_entry
                if piece is best
                else (self._entry_under(piece, best) if piece.counts else piece.plain or self._plain_entry(piece))
                for piece in pieces
            ]
        cite_key = (tuple(groups), counted > 1)
        citations = self._citations.get(cite_key)
        if citations is None:
            citations = self._cite_lof(cite_key)
        if extra:
            notes = notes + tuple(dict.fromkeys(extra))
        blocked = bool(walls)
        zone_value = 0
        if best is not None:
            blocked |= best.candidate.blocks
            zone_value = best.candidate.value or 0
        if action.own_mod:
            entries.append(self._own_entry(not blocked))
        if walls:
            entries += [self._walls.get(w) or self._wall_entry(w) for w in walls]
        modifier = None if blocked else zone_value + action.own_mod
        return _ruling(not blocked, modifier, kept, entries, notes, citations, line)

    # --- Pieces (each built once) ---

    def _observer(self, actor: Token) -> Who:
        traits = tuple(actor.traits)
        obs = self._ruleset._observer(actor, self._locale)
        known = all(self._ruleset.knows_trait(t) for t in traits)
        # The last item: this observer's pieces by the id of their crossing (checked by identity).
        found = self._observers[traits] = (len(self._observers), obs, known, {})
        return found

    def _piece(self, crossing: Crossing, who: Who) -> _Piece:
        key = (who[0], crossing.zone, crossing.kind)
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shape(crossing, who[1], key)
        template, value, cite_group, rank, label = shape
        candidate = template if template.crossing is crossing else _candidate_at(template, crossing)
        return _Piece(crossing, candidate, candidate.counts, cite_group, candidate.notes, rank, label, value)

    def _plain_entry(self, piece: _Piece) -> ModifierEntry:
        """The piece's entry when it is not applied: its own reason."""
        crossing = piece.crossing
        entry = _zone_entry(piece.value, False, piece.label, piece.candidate.reason, crossing.region, crossing.zone)
        piece.plain = entry
        return entry

    def _applied_entry(self, piece: _Piece) -> ModifierEntry:
        """The piece's entry when it is the one applied."""
        crossing = piece.crossing
        entry = _zone_entry(piece.value, True, piece.label, piece.candidate.reason, crossing.region, crossing.zone)
        piece.applied = entry
        return entry

    def _shape(
        self, crossing: Crossing, observer: _Observer, key: tuple[int, str, CrossingKind]
    ) -> tuple[_Candidate, int | None, int, tuple[int, int], str]:
        """What one observer's crossings of ``crossing``'s zone type and kind share (:attr:`_shapes`)."""
        candidate = self._ruleset._judge(crossing, observer, self._situation, self._action)
        cite_group = self._cite_groups.get(candidate.cite)
        if cite_group is None:
            cite_group = self._cite_groups[candidate.cite] = len(self._cite_group_keys)
            self._cite_group_keys.append(candidate.cite)
        shape = self._shapes[key] = (
            candidate,
            None if candidate.blocks else candidate.value,
            cite_group,
            (0 if candidate.blocks else 1, candidate.value if candidate.value is not None else 0),
            self._ruleset._zone_label(crossing.zone, self._locale),
        )
        return shape

    def _walled_entry(self, piece: _Piece) -> ModifierEntry:
        """The entry of the most restrictive ``piece`` when a wall blocks the line: not applied, and why."""
        applied = piece.applied or self._applied_entry(piece)
        piece.walled = applied.not_applied(self._ruleset._text("wall_not_applied", self._locale))
        return piece.walled

    def _entry_under(self, piece: _Piece, best: _Piece) -> ModifierEntry:
        """The entry of counted ``piece`` when ``best`` applies, built once (:meth:`_stacked_entry`)."""
        held = best.under.get(id(piece.crossing))
        if held is not None and held[0] is piece.crossing:
            return held[1]
        return self._stacked_entry(piece, best)

    def _stacked_entry(self, piece: _Piece, best: _Piece) -> ModifierEntry:
        """The entry of counted ``piece`` when ``best`` applies: its reason says the two do not stack."""
        stacking = best.stacking
        if stacking is None:
            regions = self._regions
            if regions is None:
                regions = self._regions = {}
                for region in self._situation.scene.regions:
                    regions.setdefault(region.id, region)  # the first of an id, as _describe finds it
            text = self._ruleset._describe(best.candidate, self._situation, regions)
            stacking = best.stacking = self._ruleset._text("not_stacking", self._locale, applied=text)
        candidate = piece.candidate
        reason = f"{candidate.reason} {stacking}" if candidate.reason else stacking
        value = None if candidate.blocks else candidate.value
        crossing = candidate.crossing
        entry = _zone_entry(value, False, piece.label, reason, crossing.region, crossing.zone)
        self._stacked += 1
        if self._stacked > _CANDIDATE_MEMO:  # bound the memory: forget every stacked entry
            for who in self._observers.values():
                for held in who[3].values():
                    held.under.clear()
            self._stacked = 0
        best.under[id(piece.crossing)] = (piece.crossing, entry)
        return entry

    def _cite_lof(self, key: tuple[Any, ...]) -> tuple[str, ...]:
        group_ids, many = key
        by_number = self._cite_group_keys
        groups = [by_number[number] for number in group_ids]
        cite_keys: list[str] = [k for group in groups for k in group]
        if groups:
            cite_keys += self._action.cite
        if many:
            cite_keys += ["not-stacking-001", "not-stacking-002-u21", "not-stacking-002-original"]
            cite_keys += ["not-stacking-004"]
        if self._action.own_mod:
            cite_keys += self._action.cite
        found = cite(self._data.passages, tuple(dict.fromkeys(cite_keys)), edition=self._edition, locale=self._locale)
        self._citations[key] = found
        return found

    def _own_entry(self, applied: bool) -> ModifierEntry:
        entry = self._own.get(applied)
        if entry is None:
            action, locale = self._action, self._locale
            entry = self._own[applied] = ModifierEntry(
                source="action",
                value=action.own_mod,
                applied=applied,
                label=self._ruleset._text("own_mod", locale, action=action.label.get(locale)),
            )
        return entry

    def _wall_entry(self, wall: str) -> ModifierEntry:
        (entry,) = wall_entries((wall,), self._ruleset._text, self._locale)
        self._walls[wall] = entry
        return entry

    def _no_lof(self, crossings: tuple[Crossing, ...], notes: tuple[str, ...], line: SightLine) -> Ruling:
        """An action that needs no LoF: every zone listed, none applied, walls ignored."""
        action, locale = self._action, self._locale
        entries: list[ModifierEntry] = []
        for crossing in crossings:
            entry = self._plain.get(crossing)
            if entry is None:
                exempt = action.exempt.get(locale) if action.exempt else None
                mod = self._data.zones[crossing.zone].mod
                entry = self._plain[crossing] = self._ruleset._entry(crossing, mod, False, exempt, locale)
            entries.append(entry)
        if action.own_mod:
            entries.append(self._own_entry(True))
        citations = self._citations.get(("no-lof",))
        if citations is None:
            keys = tuple(dict.fromkeys([*action.cite, *(action.cite if action.own_mod else ())]))
            citations = cite(self._data.passages, keys, edition=self._edition, locale=locale)
            self._citations[("no-lof",)] = citations
        no_lof = self._ruleset._text("no_lof_needed", locale, action=action.label.get(locale))
        return Ruling(
            allowed=True,
            modifier=action.own_mod,
            crossings=crossings,
            modifiers=tuple(entries),
            notes=(*notes, no_lof),
            citations=citations,
            line=line,
        )


def _scene_only(scene: Scene, action: str, reaction: bool) -> Situation:
    """A situation with only what a zone's candidate reads: the scene, its rules, the action and reaction
    (no geometry, tokens or lines) — for tables and texts made once per scene, not per line."""
    return Situation(
        scene=scene,
        geometry=None,  # type: ignore[arg-type]
        actor=None,  # type: ignore[arg-type]
        target=None,
        action=action,
        reaction=reaction,
        lines=(),
        options={"aware": True},
    )
