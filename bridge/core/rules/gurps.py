"""GURPS 4e visibility for attacks and defences, applied from ``data/gurps-4e.toml``.

An attack (003, rules-notes "GURPS 4e"): every reason the attacker cannot see the foe is a candidate —
blindness, darkness where the target stands (after lights within the attacker's line of sight and the
attacker's own vision), an invisible foe, smoke on the line — and only the worst single one applies,
never beyond −10. A sight-blocking wall makes the attack impossible; the candidates are still listed,
none applied, each saying the wall withholds it.

A defence (the actor defends against the target's attack): −4 when the defender cannot see the weapon
coming (invisible attacker, blind defender, defender in smoke or in total darkness its vision does not
pierce); Parry and Block only after a Hearing−2 roll; no defence at all when unaware.

Sign: modifiers are added to skill; negative is harder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import model_validator

from ..geometry import LightSource
from ..scene import Region, Scene, Token, Zone
from ..sight import Crossing, LineEvidence
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
from .effects import (
    LineInputs,
    SceneInputs,
    Verdicts,
    lights_on,
    lights_seen,
    no_verdicts,
    reduce_crossings,
    zone_classes,
)
from .notes import foreign_vocabulary_notes, region_name, regions_by_id, tokens_by_id

__all__ = ["GurpsData", "GurpsRuleset", "load_gurps"]

_NIGHT_VISION = re.compile(r"night-vision-(\d+)")


# --- Data ------------------------------------------------------------------------------------------


class VisionRules(DataModel):
    cap: int
    cite: tuple[str, ...]


class ConditionRules(DataModel):
    label: Text
    value: int | None = None
    accustomed: int | None = None
    hearing: bool
    random_hit: bool
    cite: tuple[str, ...]


class HearingRules(DataModel):
    penalty: int


class DarknessRules(DataModel):
    total: int
    light_floor: int
    scene_label: Text
    cite: tuple[str, ...]


class ZoneRules(DataModel):
    label: Text
    lights_help: bool = True
    night_vision_helps: bool = True
    cite: tuple[str, ...]


class TraitRules(DataModel):
    label: Text
    night_vision: bool = False
    ignores_darkness: bool = False
    warm_only: bool = False
    cite: tuple[str, ...]


class ActionRules(DataModel):
    label: Text
    kind: Literal["attack", "defence"]
    needs_hearing: bool = False
    cite: tuple[str, ...]


class DefenceRules(DataModel):
    unseen: int
    label: Text
    cite: tuple[str, ...]


class GurpsData(_HasPassages):
    id: str
    editions: tuple[str, ...]
    vision: VisionRules
    conditions: dict[str, ConditionRules]
    hearing: HearingRules
    darkness: DarknessRules
    zones: dict[str, ZoneRules]
    traits: dict[str, TraitRules]
    actions: dict[str, ActionRules]
    defence: DefenceRules
    options: dict[str, OptionRules]
    texts: dict[str, Text]
    passages: dict[str, Passage]

    @model_validator(mode="after")
    def _consistent(self) -> GurpsData:
        check_vocabulary(
            self.id,
            zones=self.zones,
            actions=self.actions,
            traits=self.traits,
            options=self.options,
            editions=self.editions,
        )
        if set(self.conditions) != {"blind", "total-darkness", "partial-darkness", "invisible", "smoke"}:
            raise ValueError("conditions must be exactly blind, total-darkness, partial-darkness, invisible, smoke")
        for key in ("blind", "total-darkness", "invisible", "smoke"):
            if self.conditions[key].value is None:
                raise ValueError(f"condition {key!r} needs a value")
        return self


def load_gurps(name: str = "gurps-4e") -> GurpsData:
    """Load and validate ``data/<name>.toml``."""
    return GurpsData.model_validate(load_toml(name))


# --- Evaluation ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Darkness:
    """The darkness where a token stands: its penalty, and the zone it comes from (None: the scene)."""

    value: int
    region: str | None
    zone: str | None


@dataclass
class _Candidate:
    """One reason the attacker cannot see the foe, with its penalty for this attacker."""

    key: str
    value: int
    label: str
    reasons: list[str] = field(default_factory=list)
    region: str | None = None
    zone: str | None = None
    cite: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Vision:
    """What a token's own eyes do about darkness."""

    night_vision: int
    night_vision_label: str
    piercing: tuple[TraitRules, ...]  # Dark Vision / Infravision, Dark Vision first


class GurpsRuleset(DataRuleset[GurpsData]):
    """GURPS 4e Visibility, driven by its data."""

    reads_positions = True  # lights reaching the target and seen by the attacker

    def __init__(self, data: GurpsData) -> None:
        super().__init__(data)
        self._darkness_memo: tuple[list[Region], dict[str, _Darkness]] | None = None
        self._visions: dict[tuple[tuple[str, ...], str], _Vision] = {}  # per traits and locale (frozen data)

    # --- The Ruleset interface (the rest comes from DataRuleset) ---

    def validate_zone(self, zone: Zone) -> None:
        params = zone.params
        if zone.type != "darkness":
            if params:
                raise ValueError(f"zone type {zone.type!r} takes no parameters (got {', '.join(sorted(params))})")
            return
        if set(params) == {"penalty"}:
            penalty = params["penalty"]
            total = self.data.darkness.total
            if type(penalty) is not int or not total < penalty <= -1:
                raise ValueError(f"penalty: a darkness zone's penalty is a whole number from -1 to {total + 1}")
        elif set(params) == {"total"}:
            if params["total"] is not True:
                raise ValueError("total: a total-darkness zone says total: true")
        elif params:  # no level at all is total darkness (the module's hint: "leave blank for total darkness")
            raise ValueError("a darkness zone takes either penalty (-1…-9) or total: true, or nothing (total)")

    def validate_environment(self, environment: Mapping[str, Any]) -> None:
        """``darkness``: 0 to -10; other rulesets' keys are left alone."""
        if "darkness" in environment:
            darkness = environment["darkness"]
            if type(darkness) is not int or not self.data.darkness.total <= darkness <= 0:
                raise ValueError(f"darkness: a whole number from 0 to {self.data.darkness.total} (got {darkness!r})")

    def adjudicate(self, situation: Situation) -> Ruling:
        action = self._action(situation)
        for key in ("aware", "warm"):
            value = situation.options.get(key, True)
            if not isinstance(value, bool):
                raise RulingError(f"options.{key} must be true or false (got {value!r})", field=f"options.{key}")
        notes = foreign_vocabulary_notes(situation, self._text)
        if action.kind == "defence":
            return self._defence(situation, action, notes)
        rulings = [self._attack(situation, action, evidence, notes) for evidence in situation.lines]
        # The attacker takes the most favourable line: allowed first, then the mildest penalty.
        return max(rulings, key=lambda r: (r.allowed, r.modifier if r.modifier is not None else 0))

    def line_rules(self, action: str, reaction: bool, scene: Scene) -> GurpsLines:
        """This ruleset's verdicts over arrays for ``action`` in ``scene`` (its environment)."""
        return GurpsLines(self, action, scene)

    # --- Attacks ---

    def _attack(self, s: Situation, action: ActionRules, evidence: LineEvidence, notes: tuple[str, ...]) -> Ruling:
        locale = s.locale
        assert s.target is not None
        attacker, target = s.actor, s.target
        crossings = tuple(c for c in evidence.crossings if c.zone in self.data.zones)
        cite_keys = list(action.cite)

        # Every reason the attacker cannot see the foe, evaluated whether or not a wall blocks the line:
        # a blocked answer still explains each candidate (contract: `modifiers` explains every candidate).
        candidates: list[_Candidate] = []
        light_entries: list[ModifierEntry] = []
        accustomed = "accustomed-to-blindness" in attacker.traits
        if "blind" in attacker.traits:
            candidates.append(self._sees_nothing("blind", accustomed, locale))
        darkness = self._darkness_at(s, target.id)
        if darkness.value:
            candidate = self._darkness_candidate(s, attacker, target, darkness, accustomed, light_entries)
            candidates.append(candidate)
        if "invisible" in target.traits:
            candidates.append(self._plain("invisible", locale))
        for crossing in crossings:
            if crossing.zone == "smoke":
                candidate = self._plain("smoke", locale, crossing)
                candidate.reasons.append(self._text("smoke_location", locale))
                candidates.append(candidate)

        if evidence.blocking_walls:
            withheld = self._text("wall_not_applied", locale)
            blocked = [
                *(self._vision_entry(c, c.value, False, c.reasons).not_applied(withheld) for c in candidates),
                *(entry.not_applied(withheld) for entry in light_entries),
            ]
            walls = wall_entries(evidence.blocking_walls, self._text, locale)
            cite_keys += [key for candidate in candidates for key in candidate.cite]
            cite_keys += ["defence-notes"]
            return self._ruling(s, False, None, crossings, [*blocked, *walls], notes, cite_keys, evidence)

        entries: list[ModifierEntry] = []
        extra_notes: list[str] = []
        worst = min(candidates, key=lambda c: c.value, default=None)
        modifier = 0
        if worst is not None and worst.value < 0:
            cap = self.data.vision.cap
            modifier = max(worst.value, cap)
            applied_text = f"{worst.label}: {worst.value:+d}"
            for candidate in candidates:
                reasons = list(candidate.reasons)
                if candidate is not worst and candidate.value < 0:
                    reasons.append(self._text("worst_only", locale, applied=applied_text))
                if candidate is worst and worst.value < cap:
                    reasons.append(self._text("capped", locale, cap=cap))
                value = modifier if candidate is worst else candidate.value
                entries.append(self._vision_entry(candidate, value, candidate is worst, reasons))
                cite_keys += candidate.cite
            if sum(1 for c in candidates if c.value < 0) > 1:
                cite_keys += self.data.vision.cite
            rules = self.data.conditions[worst.key]
            if rules.hearing:
                extra_notes.append(self._text("hearing_attack", locale, penalty=f"{self.data.hearing.penalty:+d}"))
            elif worst.key == "smoke":
                extra_notes.append(self._text("no_hearing", locale))
            if rules.random_hit:
                extra_notes.append(self._text("random_hit", locale))
            hearing = rules.hearing
            random_hit = rules.random_hit
        else:
            for candidate in candidates:
                entries.append(self._vision_entry(candidate, 0, False, candidate.reasons))
                cite_keys += candidate.cite
            hearing = random_hit = False
        extra = {
            "hearing_roll": self.data.hearing.penalty if hearing else None,
            "random_hit_location": random_hit,
            "darkness": darkness.value,
        }
        return self._ruling(
            s,
            True,
            modifier,
            crossings,
            [*entries, *light_entries],
            (*notes, *extra_notes),
            cite_keys,
            evidence,
            extra,
        )

    @staticmethod
    def _vision_entry(candidate: _Candidate, value: int, applied: bool, reasons: list[str]) -> ModifierEntry:
        return ModifierEntry(
            source="vision",
            value=value,
            applied=applied,
            label=candidate.label,
            reason=" ".join(reasons) or None,
            region=candidate.region,
            zone=candidate.zone,
        )

    def _sees_nothing(self, key: Literal["blind", "total-darkness"], accustomed: bool, locale: str) -> _Candidate:
        rules = self.data.conditions[key]
        assert rules.value is not None
        candidate = _Candidate(key, rules.value, rules.label.get(locale), cite=list(rules.cite))
        if accustomed and rules.accustomed is not None:
            candidate.value = rules.accustomed
            candidate.reasons.append(self._text("accustomed", locale, value=rules.accustomed, base=rules.value))
        return candidate

    def _plain(self, key: Literal["invisible", "smoke"], locale: str, crossing: Crossing | None = None) -> _Candidate:
        rules = self.data.conditions[key]
        assert rules.value is not None
        return _Candidate(
            key,
            rules.value,
            rules.label.get(locale),
            region=crossing.region if crossing else None,
            zone=crossing.zone if crossing else None,
            cite=list(rules.cite),
        )

    def _darkness_candidate(
        self,
        s: Situation,
        viewer: Token,
        target: Token,
        darkness: _Darkness,
        accustomed: bool,
        light_entries: list[ModifierEntry],
    ) -> _Candidate:
        """The darkness penalty where ``target`` stands, for ``viewer``'s eyes, after lights."""
        locale = s.locale
        total = self.data.darkness.total
        floor = self.data.darkness.light_floor
        zone_rules = self.data.zones.get(darkness.zone or "")
        lights_help = zone_rules.lights_help if zone_rules else True
        night_vision_helps = zone_rules.night_vision_helps if zone_rules else True
        reasons: list[str] = []
        cite_keys = list(self.data.darkness.cite)
        if darkness.region is not None:
            reasons.append(self._text("zone_overrides", locale, region=region_name(s.scene, darkness.region)))

        vision = self._vision(viewer, locale)
        warm = bool(s.options.get("warm", True))
        for rules in vision.piercing:
            label = rules.label.get(locale)
            if rules.warm_only and not warm:
                reasons.append(self._text("infravision_cold", locale, trait=label))
                continue
            text_key = "infravision" if rules.warm_only else "dark_vision"
            reasons.append(self._text(text_key, locale, trait=label))
            cite_keys += rules.cite
            return self._darkness_result(darkness, 0, reasons, cite_keys, locale)

        value = darkness.value
        for lamp in self._lights_on(s, target.id, viewer.id, light_entries, lights_help, value):
            if value < floor:
                reasons.append(
                    self._text("light_reduces", locale, light=self._lamp_label(s, lamp), value=value, floor=floor)
                )
                value = floor
                cite_keys.append("torch-003")
        if value <= total:
            candidate = self._sees_nothing("total-darkness", accustomed, locale)
            if vision.night_vision:
                reasons.append(self._text("night_vision_total", locale, trait=vision.night_vision_label))
            candidate.reasons[:0] = reasons
            candidate.region, candidate.zone = darkness.region, darkness.zone
            candidate.cite += cite_keys
            return candidate
        if vision.night_vision:
            if night_vision_helps:
                value = min(0, value + vision.night_vision)
                reasons.append(
                    self._text(
                        "night_vision", locale, trait=vision.night_vision_label, n=vision.night_vision, value=value
                    )
                )
                cite_keys.append("night-vision-notes")
            else:
                reasons.append(self._text("night_vision_unnatural", locale))
        return self._darkness_result(darkness, value, reasons, cite_keys, locale)

    def _darkness_result(
        self, darkness: _Darkness, value: int, reasons: list[str], cite_keys: list[str], locale: str
    ) -> _Candidate:
        rules = self.data.conditions["partial-darkness"]
        if darkness.zone is not None:
            label = self.data.zones[darkness.zone].label.get(locale)
            if darkness.value > self.data.darkness.total:
                label = f"{label} {darkness.value}"
        elif darkness.value <= self.data.darkness.total:
            label = self.data.conditions["total-darkness"].label.get(locale)
        else:
            label = rules.label.get(locale, penalty=darkness.value)
        return _Candidate(
            "partial-darkness",
            value,
            label,
            reasons=reasons,
            region=darkness.region,
            zone=darkness.zone,
            cite=[*cite_keys, *rules.cite],
        )

    # --- Defences ---

    def _defence(self, s: Situation, action: ActionRules, notes: tuple[str, ...]) -> Ruling:
        locale = s.locale
        assert s.target is not None
        defender, attacker = s.actor, s.target
        evidence = s.lines[0] if s.lines else None
        crossings = tuple(c for c in evidence.crossings if c.zone in self.data.zones) if evidence else ()
        cite_keys = [*action.cite, *self.data.defence.cite]
        if not s.options.get("aware", True):
            unaware = self._text("unaware", locale)
            entry = ModifierEntry(
                source="defence", value=None, applied=True, label=self._text("unaware_label", locale), reason=unaware
            )
            return self._ruling(s, False, None, crossings, [entry], (*notes, unaware), cite_keys, evidence)

        causes: list[tuple[str, str | None, str | None]] = []  # (reason, region, zone)
        if "invisible" in attacker.traits:
            causes.append((self._text("defence_cause_invisible", locale), None, None))
        if "blind" in defender.traits:
            causes.append((self._text("defence_cause_blind", locale), None, None))
        regions = regions_by_id(s.scene)
        defender_zones = set()
        for region_id in s.geometry.zones_containing(defender.id):
            zone = regions[region_id].zone
            if zone is None or zone.type not in self.data.zones:
                continue
            defender_zones.add(zone.type)
            if zone.type == "smoke":
                cause = self._text("defence_cause_smoke", locale, region=region_name(s.scene, region_id))
                causes.append((cause, region_id, "smoke"))
        light_entries: list[ModifierEntry] = []
        darkness = self._darkness_at(s, defender.id)
        if darkness.value <= self.data.darkness.total:
            seen = self._darkness_candidate(s, defender, defender, darkness, False, light_entries)
            if seen.key == "total-darkness":
                causes.append((self._text("defence_cause_darkness", locale), darkness.region, darkness.zone))

        entries: list[ModifierEntry] = []
        extra_notes: list[str] = []
        label = self.data.defence.label.get(locale)
        value = self.data.defence.unseen
        for index, (reason, region, zone_type) in enumerate(causes):
            if index:
                reason = f"{reason} {self._text('defence_not_adding', locale)}"
            entries.append(
                ModifierEntry(
                    source="defence",
                    value=value,
                    applied=index == 0,
                    label=label,
                    reason=reason,
                    region=region,
                    zone=zone_type,
                )
            )
        for region_id in s.geometry.zones_containing(attacker.id):
            zone = regions[region_id].zone
            if zone is None or zone.type not in ("smoke", "unnatural-darkness") or zone.type in defender_zones:
                continue
            zone_label = self.data.zones[zone.type].label.get(locale)
            entries.append(
                ModifierEntry(
                    source="defence",
                    value=0,
                    applied=False,
                    label=zone_label,
                    reason=self._text("defence_normal", locale, zone=zone_label),
                    region=region_id,
                    zone=zone.type,
                )
            )
        modifier = value if causes else 0
        if causes and action.needs_hearing:
            penalty = f"{self.data.hearing.penalty:+d}"
            extra_notes.append(
                self._text("defence_hearing", locale, action=action.label.get(locale), penalty=penalty, value=value)
            )
        extra = {"hearing_roll": self.data.hearing.penalty if causes and action.needs_hearing else None}
        return self._ruling(
            s,
            True,
            modifier,
            crossings,
            [*entries, *light_entries],
            (*notes, *extra_notes),
            cite_keys,
            evidence,
            extra,
        )

    # --- Darkness and lights ---

    def _darkness_at(self, s: Situation, token_id: str) -> _Darkness:
        """Darkness zones containing the token override the scene's darkness; the worst of them wins."""
        darkness = self._darkness_zones(s.scene)
        found = [darkness[region_id] for region_id in s.geometry.inside_of(token_id, darkness)]
        if found:
            # Worst first; at equal value, unnatural darkness (which lights cannot lift) wins.
            return min(found, key=lambda d: (d.value, d.zone != "unnatural-darkness"))
        return _Darkness(int(s.scene.environment.get("darkness", 0)), None, None)

    def _darkness_zones(self, scene: Scene) -> dict[str, _Darkness]:
        """The scene's darkness zones by region id, in scene order, with their darkness; made once per
        regions list."""
        regions = scene.regions
        memo = self._darkness_memo
        if memo is not None and memo[0] is regions:
            return memo[1]
        total = self.data.darkness.total
        found: dict[str, _Darkness] = {}
        for region in regions:
            zone = region.zone
            if zone is None or zone.type not in ("darkness", "unnatural-darkness"):
                continue
            if zone.type == "unnatural-darkness" or "penalty" not in zone.params:
                value = total  # total: true, or no level given (blank is total darkness)
            else:
                value = int(zone.params["penalty"])
            found[region.id] = _Darkness(value, region.id, zone.type)
        self._darkness_memo = (regions, found)
        return found

    def _lights_on(
        self,
        s: Situation,
        lit_id: str,
        viewer_id: str,
        entries: list[ModifierEntry],
        lights_help: bool,
        value: int,
    ) -> list[LightSource]:
        """White lights whose radius reaches ``lit_id`` (walls honoured) and that ``viewer_id`` can see."""
        locale = s.locale
        geometry = s.geometry
        usable: list[LightSource] = []
        floor = self.data.darkness.light_floor
        lamps = [lamp for lamp in geometry.lights_reaching(lit_id) if lamp.kind == "white"]
        for lamp, seen in zip(lamps, geometry.lights_seen(viewer_id, lamps), strict=True):
            label = self._lamp_label(s, lamp)
            if not lights_help:
                reason, applied = self._text("light_unnatural", locale), False
            elif not seen:
                reason, applied = self._text("light_not_seen", locale, light=label), False
            elif value >= floor:
                reason, applied = self._text("light_not_needed", locale, light=label, floor=floor), False
            else:
                key = "light_reduces" if lit_id != viewer_id else "light_defender"
                reason, applied = self._text(key, locale, light=label, value=value, floor=floor), True
            entries.append(
                ModifierEntry(source="light", value=None, applied=applied, label=label, reason=reason, region=lamp.id)
            )
            if applied:
                usable.append(lamp)
        return usable[:1]

    def _lamp_label(self, s: Situation, lamp: LightSource) -> str:
        """A token's light by its bearer's name ("Light carried by Ana"); a scene light has no name to show."""
        bearer = tokens_by_id(s.scene).get(lamp.id)
        if bearer is not None and bearer.name:
            return self._text("light_carried", s.locale, name=bearer.name)
        return self._text("light_label", s.locale)

    def _vision(self, token: Token, locale: str) -> _Vision:
        key = (tuple(token.traits), locale)
        vision = self._visions.get(key)
        if vision is None:
            if len(self._visions) >= 4096:
                self._visions.clear()
            vision = self._visions[key] = self._vision_of(token.traits, locale)
        return vision

    def _vision_of(self, traits: Sequence[str], locale: str) -> _Vision:
        night_vision, nv_label = 0, ""
        piercing: list[TraitRules] = []
        for trait in traits:
            match = _NIGHT_VISION.fullmatch(trait)
            if match:
                level = int(match.group(1))
                if level > night_vision:
                    night_vision = level
                    nv_label = self.data.traits["night-vision-N"].label.get(locale, n=level)
            elif trait in self.data.traits and self.data.traits[trait].ignores_darkness:
                piercing.append(self.data.traits[trait])
        # Dark Vision (any target) before Infravision (warm targets only).
        piercing.sort(key=lambda rules: rules.warm_only)
        return _Vision(night_vision, nv_label, tuple(piercing))

    # --- Helpers ---

    def _ruling(
        self,
        s: Situation,
        allowed: bool,
        modifier: int | None,
        crossings: tuple[Crossing, ...],
        entries: list[ModifierEntry],
        notes: tuple[str, ...],
        cite_keys: list[str],
        evidence: LineEvidence | None,
        extra: dict[str, Any] | None = None,
    ) -> Ruling:
        return Ruling(
            allowed=allowed,
            modifier=modifier,
            crossings=crossings,
            modifiers=tuple(entries),
            notes=tuple(dict.fromkeys(notes)),
            citations=cite(self.data.passages, tuple(dict.fromkeys(cite_keys)), edition=s.edition, locale=s.locale),
            line=evidence.line if evidence else None,
            extra=extra or {},
        )

    def _text(self, key: str, locale: str, /, **values: Any) -> str:
        return self.data.texts[key].get(locale, **values)


# --- Rules over arrays ------------------------------------------------------------------------------


class GurpsLines:
    """:meth:`GurpsRuleset.adjudicate`'s ``allowed`` and ``modifier`` for many lines at once, compiled from
    the data for one action and scene (:class:`~bridge.core.rules.effects.LineRules`), under the request's
    default options (aware; a warm foe).

    An attack: the worst of the observer's own penalty (blind), the target's (invisible), the darkness
    where the target stands for the observer's eyes — after a light reaching the target that the observer
    sees (per pair, asked of the geometry only where it could change the answer) — and, from a table by
    (zone type, kind) reduced by minimum over the line's crossings, smoke; never beyond the cap; a wall
    forbids it. A defence reads the two tokens alone: whether the defender cannot see the blow coming.
    """

    def __init__(self, ruleset: GurpsRuleset, action: str, scene: Scene) -> None:
        self._ruleset = ruleset
        self._data = data = ruleset.data
        self._defence = data.actions[action].kind == "defence"
        self._scene_darkness = int(scene.environment.get("darkness", 0))
        self._eyes: dict[tuple[str, ...], tuple[int, bool, int, int]] = {}
        self._defender_darkness: list[int] = []

    def _eyes_of(self, traits: tuple[str, ...]) -> tuple[int, bool, int, int]:
        """What a token's traits give a ruling: (its blindness penalty or 0, whether its vision pierces any
        darkness (with a warm foe), its Night Vision level, the penalty total darkness gives it)."""
        found = self._eyes.get(traits)
        if found is None:
            conditions = self._data.conditions
            accustomed = "accustomed-to-blindness" in traits
            blind = 0
            if "blind" in traits:
                rules = conditions["blind"]
                assert rules.value is not None
                blind = rules.accustomed if accustomed and rules.accustomed is not None else rules.value
            dark = conditions["total-darkness"]
            assert dark.value is not None
            total = dark.accustomed if accustomed and dark.accustomed is not None else dark.value
            vision = self._ruleset._vision_of(traits, "en")
            found = self._eyes[traits] = (blind, bool(vision.piercing), vision.night_vision, total)
        return found

    def _darkness(
        self, scene: SceneInputs
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Per token, as ``_darkness_at``: the darkness where it stands, and whether lights and Night Vision
        help there (the zone's rules; the scene's darkness: both)."""
        data = self._data
        total = data.darkness.total
        n = len(scene.tokens)
        value = np.full(n, self._scene_darkness, dtype=np.int64)
        lights_help = np.ones(n, dtype=bool)
        night_vision_helps = np.ones(n, dtype=bool)
        # (value, not unnatural) per zone: the smallest wins, as min(found, key=...) picks it.
        rank = np.full(len(scene.zones), np.iinfo(np.int64).max, dtype=np.int64)
        for z, region in enumerate(scene.zones):
            zone = region.zone
            if zone is None or zone.type not in ("darkness", "unnatural-darkness"):
                continue
            level = (
                total
                if zone.type == "unnatural-darkness" or "penalty" not in zone.params
                else int(zone.params["penalty"])
            )
            rank[z] = 2 * level + (zone.type != "unnatural-darkness")
        if scene.inside.size and (rank != np.iinfo(np.int64).max).any():
            ranks = np.where(scene.inside, rank[None, :], np.iinfo(np.int64).max)
            first = ranks.argmin(axis=1)
            found = ranks[np.arange(n), first] != np.iinfo(np.int64).max
            for t in np.flatnonzero(found).tolist():
                zone = scene.zones[int(first[t])].zone
                assert zone is not None
                value[t] = rank[first[t]] // 2
                rules = data.zones[zone.type]
                lights_help[t], night_vision_helps[t] = rules.lights_help, rules.night_vision_helps
        return value, lights_help, night_vision_helps

    def _lit(
        self, scene: SceneInputs, targets: npt.NDArray[np.intp], viewers: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        """Per (target, viewer): whether a white light reaching the target is seen by the viewer
        (``_lights_on``'s test); each (viewer, light) asked of the geometry once, kept in the cache."""
        lit = np.zeros(targets.size, dtype=bool)
        chosen = np.unique(targets)
        reaching = [
            tuple(lamp for lamp in lamps if lamp.kind == "white") for lamps in lights_on(scene, chosen.tolist())
        ]
        lamps: dict[str, int] = {}
        for found in reaching:
            for lamp in found:
                lamps.setdefault(lamp.id, len(lamps))
        if not lamps:
            return lit
        everyone = [lamp for found in reaching for lamp in found]
        by_number = {lamps[lamp.id]: lamp for lamp in everyone}
        reach = np.zeros((chosen.size, len(lamps)), dtype=bool)
        for row, found in enumerate(reaching):
            reach[row, [lamps[lamp.id] for lamp in found]] = True
        rows, lamp_of = np.nonzero(reach[np.searchsorted(chosen, targets)])
        if not rows.size:
            return lit
        wanted, which = np.unique(viewers[rows] * len(lamps) + lamp_of, return_inverse=True)
        asked = [(int(v), by_number[int(j)]) for v, j in zip(*np.divmod(wanted, len(lamps)), strict=True)]
        seen = np.array(lights_seen(scene, asked), dtype=bool)
        lit[rows[seen[which]]] = True
        return lit

    def _seen_darkness(
        self,
        scene: SceneInputs,
        viewers: npt.NDArray[np.intp],
        lit_tokens: npt.NDArray[np.intp],
        eyes: npt.NDArray[np.int64],
        darkness: tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """``_darkness_candidate``'s value for each (viewer, token where the darkness is), and whether it
        is total darkness (the candidate's key); 0 where there is no darkness."""
        data = self._data
        total, floor = data.darkness.total, data.darkness.light_floor
        value = darkness[0][lit_tokens].copy()
        pierced = eyes[viewers, 1].astype(bool)
        dark = value != 0
        # A light seen by the viewer lifts darkness worse than the floor (where lights help).
        ask = np.flatnonzero(dark & ~pierced & darkness[1][lit_tokens] & (value < floor))
        if ask.size:
            value[ask[self._lit(scene, lit_tokens[ask], viewers[ask])]] = floor
        is_total = dark & ~pierced & (value <= total)
        night_vision = eyes[viewers, 2]
        helped = dark & ~pierced & ~is_total & (night_vision > 0) & darkness[2][lit_tokens]
        value = np.where(helped, np.minimum(0, value + night_vision), value)
        value = np.where(is_total, eyes[viewers, 3], value)
        value = np.where(pierced | ~dark, 0, value)
        return value, is_total

    def verdicts(self, scene: SceneInputs, lines: LineInputs) -> Verdicts:
        data = self._data
        count = lines.src.size
        result = no_verdicts(count)
        if not count:
            return result
        traits = [tuple(token.traits) for token in scene.tokens]
        eyes = np.array([self._eyes_of(t) for t in traits], dtype=np.int64).reshape(-1, 4)
        invisible = np.array(["invisible" in t for t in traits], dtype=bool)
        darkness = self._darkness(scene)
        if self._defence:
            return self._defences(scene, lines, eyes, invisible, darkness, result)
        smoke_value = data.conditions["smoke"].value
        invisible_value = data.conditions["invisible"].value
        assert smoke_value is not None and invisible_value is not None
        zone_class, classes = zone_classes(scene.zones, self._class_key, scene.cache)
        table = np.array(
            [[smoke_value if region.zone is not None and region.zone.type == "smoke" else 0] * 4 for region in classes],
            dtype=np.int64,
        ).reshape(-1, 4)
        worst = reduce_crossings(lines, zone_class, table, np.minimum, 0)
        worst = np.minimum(worst, eyes[lines.src, 0])
        worst = np.minimum(worst, np.where(invisible[lines.dst], invisible_value, 0))
        seen, _ = self._seen_darkness(scene, lines.src, lines.dst, eyes, darkness)
        worst = np.minimum(worst, seen)
        modifier = np.where(worst < 0, np.maximum(worst, data.vision.cap), 0)
        result.allowed[:] = ~lines.walled
        result.modifier[:] = np.where(lines.walled, 0, modifier)
        return result

    def _defences(
        self,
        scene: SceneInputs,
        lines: LineInputs,
        eyes: npt.NDArray[np.int64],
        invisible: npt.NDArray[np.bool_],
        darkness: tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
        result: Verdicts,
    ) -> Verdicts:
        """``_defence``: −4 when the attacker is invisible, the defender blind, in smoke, or in total darkness
        its eyes do not pierce (a light it sees lifts it); walls play no part."""
        n = len(scene.tokens)
        smoke = np.array(
            [region.zone is not None and region.zone.type == "smoke" for region in scene.zones], dtype=bool
        )
        in_smoke: npt.NDArray[np.bool_] = np.zeros(n, dtype=bool)
        if n and smoke.any():
            in_smoke = np.asarray(scene.inside[:, smoke].any(axis=1), dtype=bool)
        everyone = np.arange(n, dtype=np.intp)
        candidates = darkness[0] <= self._data.darkness.total
        total = np.zeros(n, dtype=bool)
        if candidates.any():
            _, is_total = self._seen_darkness(scene, everyone, everyone, eyes, darkness)
            total = candidates & is_total
        unseen = invisible[lines.dst] | (eyes[lines.src, 0] != 0) | in_smoke[lines.src] | total[lines.src]
        result.modifier[:] = np.where(unseen, self._data.defence.unseen, 0)
        return result

    @staticmethod
    def _class_key(region: Region) -> str:
        zone = region.zone
        return "" if zone is None else zone.type
