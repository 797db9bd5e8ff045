"""Traveller-family tactical visibility (Observation and Sensors tasks), applied from ``data/traveller.toml``.

The order of operations (000, rules-notes "Traveller family"): the range from the device's short range
sets the base level (Average, one level easier per halving, one harder per doubling beyond); then every
visibility condition on the line adds its + diff mods — night, weather, each smoke zone — less what the
device ignores or disregards, then target size and other modifiers. All diff mods are cumulative. A
device that has no effect in the conditions falls back to unaided eyes; an observer with several devices
uses the best one (the easiest level, then the highest asset, then the lowest raw sum, then the order of
the vocabulary table) and the others' results are shown. A wall on
the line makes the task impossible: that device's candidates are still listed, none applied; ``sensors``
without a radar or ladar lists a ``device`` entry saying so.

Sign: ``+`` is one level harder. ``modifier`` is the raw sum, never clamped; ``difficulty`` the level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, model_validator

from ..scene import Region, Scene, Zone
from ..sight import Crossing, CrossingKind, LineEvidence
from .base import MissingParameter, ModifierEntry, Ruling, RulingError, Situation, wall_entries
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
    KINDS,
    LineInputs,
    SceneInputs,
    Verdicts,
    centre_distances,
    lights_on,
    no_verdicts,
    reduce_crossings,
    zone_classes,
)
from .notes import foreign_vocabulary_notes, regions_by_id

__all__ = [
    "EncounterRange",
    "TravellerData",
    "TravellerRuleset",
    "encounter_range",
    "explain_encounter_range",
    "load_traveller",
]

Condition = Literal["night", "weather", "smoke"]
Obstacle = Literal["woods", "smoke", "poor-weather"]
Need = Literal["daylight", "good-weather"]
AssetKind = Literal["observation", "sensors"]
Light = Literal["day"] | int


# --- Data ------------------------------------------------------------------------------------------


class Level(DataModel):
    id: str
    label: Text


class Ladder(DataModel):
    base: str
    levels: tuple[Level, ...]
    cite: tuple[str, ...]

    def index(self, level_id: str) -> int:
        return [level.id for level in self.levels].index(level_id)


class RangeRules(DataModel):
    halving: int
    doubling: int
    max_halvings: int
    label: Text
    cite: tuple[str, ...]


class NightRules(DataModel):
    levels: tuple[int, ...]
    mod_per_level: int
    label: Text
    cite: tuple[str, ...]


class WeatherRules(DataModel):
    mod: int
    label: Text
    cite: tuple[str, ...]


class ZoneRules(DataModel):
    label: Text
    by: tuple[str, ...] = ()
    cite: tuple[str, ...]


class LightRules(DataModel):
    label: Text
    spectrum: Literal["white", "ir"]
    no_effect_in: tuple[Obstacle, ...]
    cite: tuple[str, ...]


class DeviceRules(DataModel):
    label: Text
    asset_kind: AssetKind
    asset: int = 0
    short_range: float | None = None
    ignores: tuple[Condition, ...] = ()
    disregards: dict[Condition, int] = Field(default_factory=dict)
    no_effect_in: tuple[Obstacle, ...] = ()
    needs: tuple[Need, ...] = ()
    sees_ir_light: bool = False
    notes: tuple[str, ...] = ()
    smoke_notes: tuple[str, ...] = ()
    low_tech_degraded_by: tuple[Obstacle, ...] = ()
    low_tech_below: int | None = None
    cite: tuple[str, ...]


class ActionRules(DataModel):
    label: Text
    asset_kind: AssetKind
    cite: tuple[str, ...]


class EncounterRules(DataModel):
    night_factor: int
    weather_divisors: dict[str, int]
    woods_exempt: bool
    cite: tuple[str, ...]


class TravellerData(_HasPassages):
    id: str
    editions: tuple[str, ...]
    fallback: str
    ladder: Ladder
    range: RangeRules
    units: dict[str, float]
    night: NightRules
    weather: dict[str, WeatherRules]
    zones: dict[str, ZoneRules]
    lights: dict[str, LightRules]
    devices: dict[str, DeviceRules]
    actions: dict[str, ActionRules]
    encounter: EncounterRules
    options: dict[str, OptionRules]
    texts: dict[str, Text]
    passages: dict[str, Passage]

    @model_validator(mode="after")
    def _consistent(self) -> TravellerData:
        # Traveller's traits are its vision devices (all but the unaided-eyes fallback).
        devices = set(self.devices) - {self.fallback}
        check_vocabulary(
            self.id,
            zones=self.zones,
            actions=self.actions,
            traits=devices,
            options=self.options,
            editions=self.editions,
        )
        if self.fallback not in self.devices:
            raise ValueError(f"fallback device {self.fallback!r} is not defined")
        self.ladder.index(self.ladder.base)
        if "good" not in self.weather or set(self.encounter.weather_divisors) != set(self.weather):
            raise ValueError("weather needs 'good', and encounter divisors for exactly the weather kinds")
        for by in self.zones["illuminated"].by:
            if by not in self.lights:
                raise ValueError(f"illuminated zones name an unknown light {by!r}")
        for kind in ("white", "ir"):
            if kind not in self.lights:
                raise ValueError(f"lights must define the scene light kind {kind!r}")
        for device in self.devices.values():
            for key in (*device.notes, *device.smoke_notes):
                if key not in self.texts:
                    raise ValueError(f"device note {key!r} is not a text")
        return self


def load_traveller(name: str = "traveller") -> TravellerData:
    """Load and validate ``data/<name>.toml``."""
    return TravellerData.model_validate(load_toml(name))


@cache
def _default_data() -> TravellerData:
    return load_traveller()


# --- Encounter ranges -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EncounterRange:
    """An encounter range with the steps that led to it (texts in one locale) and their citations."""

    range: float
    steps: tuple[str, ...]
    citations: tuple[str, ...]


def encounter_range(base: float, *, light: Light, weather: str, woods: bool) -> float:
    """The encounter range after night and weather (000): poor ½, very poor ¼, night ÷ (3 × light level).

    Night divides first, then the weather; woods are exempt from both. Fractions are kept.
    """
    return explain_encounter_range(base, light=light, weather=weather, woods=woods).range


def explain_encounter_range(
    base: float, *, light: Light, weather: str, woods: bool, locale: str = "en", data: TravellerData | None = None
) -> EncounterRange:
    """:func:`encounter_range` with the steps explained in ``locale``; raises ``ValueError`` on bad input."""
    rules = data or _default_data()
    enc = rules.encounter
    _check_light(light, rules)
    if weather not in rules.weather:
        raise ValueError(f"weather must be one of {', '.join(rules.weather)}, not {weather!r}")
    if not math.isfinite(base):
        raise ValueError(f"the base encounter range must be a finite number of metres, not {base}")
    if base < 0:
        raise ValueError("the base encounter range cannot be negative")
    value = Fraction(base)
    steps = [rules.texts["encounter_base"].get(locale, range=_fmt(value))]
    if woods and enc.woods_exempt:
        steps.append(rules.texts["encounter_woods"].get(locale))
    else:
        if light != "day":
            divisor = enc.night_factor * int(light)
            value /= divisor
            steps.append(rules.texts["encounter_night"].get(locale, level=light, divisor=divisor, range=_fmt(value)))
        divisor = enc.weather_divisors[weather]
        if divisor != 1:
            value /= divisor
            label = rules.weather[weather].label.get(locale)
            steps.append(
                rules.texts["encounter_weather"].get(locale, weather=label, divisor=divisor, range=_fmt(value))
            )
    steps.append(rules.texts["encounter_result"].get(locale, range=_fmt(value)))
    citations = cite(rules.passages, enc.cite, edition="current", locale=locale)
    return EncounterRange(float(value), tuple(steps), citations)


def _check_light(light: Any, rules: TravellerData) -> None:
    if light == "day" and isinstance(light, str):
        return
    if type(light) is not int or light not in rules.night.levels:
        levels = ", ".join(str(level) for level in rules.night.levels)
        raise ValueError(f"light must be 'day' or a background light level ({levels}), not {light!r}")


# --- Evaluation -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Source:
    """A light covering the target: an ``illuminated`` zone or a scene/token light."""

    key: str  # the light rules' key
    where: str  # region or light id
    zone: str | None
    blocked_by: Obstacle | None  # the first condition in which it has no effect, if any


@dataclass(frozen=True, slots=True)
class _Conditions:
    """What one sight line meets, for every device alike."""

    light: int  # 0 by day, else the background light level
    weather: str
    smoke: tuple[tuple[Crossing, int], ...]
    woods: tuple[Crossing, ...]
    sources: tuple[_Source, ...]
    obstacles: frozenset[Obstacle]
    distance: float  # metres


@dataclass
class _Result:
    """One device's result along one line."""

    device: str
    rules: DeviceRules
    usable: bool
    reasons: list[str] = field(default_factory=list)
    entries: list[ModifierEntry] = field(default_factory=list)
    total: int = 0
    level: int | None = None  # ladder index; None beyond the last level
    lit_by: tuple[_Source, ...] = ()
    notes: list[str] = field(default_factory=list)
    cite: list[str] = field(default_factory=list)

    @property
    def reachable(self) -> bool:
        return self.usable and self.level is not None


@dataclass(frozen=True, slots=True)
class _Options:
    size: int | None
    other: int | None
    device: str | None
    tech_level: int | None


class TravellerRuleset(DataRuleset[TravellerData]):
    """The Traveller family's Observation and Sensors tasks, driven by its data."""

    reads_positions = True  # range from the distance, lights reaching the target

    def __init__(self, data: TravellerData) -> None:
        super().__init__(data)
        #: Devices in the order of the vocabulary table, the last tie-break between them.
        self._device_order = {data.fallback: -1, **{trait: index for index, trait in enumerate(self._row.traits)}}

    # --- The Ruleset interface (the rest comes from DataRuleset) ---

    def validate_zone(self, zone: Zone) -> None:
        params = zone.params
        expected = {"smoke": {"density"}, "woods": set(), "illuminated": {"by"}}[zone.type]
        if set(params) < expected:  # only a parameter missing: held, and listed as ignored
            parameter = sorted(expected - set(params))[0]
            raise MissingParameter(f"zone type {zone.type!r} needs {parameter}", parameter=parameter)
        if set(params) != expected:
            wanted = ", ".join(sorted(expected)) or "no parameters"
            raise ValueError(f"zone type {zone.type!r} takes {wanted} (got {', '.join(sorted(params)) or 'none'})")
        if zone.type == "smoke":
            density = params["density"]
            if type(density) is not int or density < 1:
                raise ValueError(f"density: a smoke zone's density is a whole number from 1 (got {density!r})")
        elif zone.type == "illuminated":
            by = params["by"]
            allowed = self.data.zones["illuminated"].by
            if by not in allowed:
                raise ValueError(f"by: must be one of {', '.join(allowed)} (got {by!r})")

    def validate_environment(self, environment: Mapping[str, Any]) -> None:
        """``light`` ("day" or 1…3) and ``weather``; other rulesets' keys are left alone."""
        if "light" in environment:
            try:
                _check_light(environment["light"], self.data)
            except ValueError as exc:
                raise ValueError(f"light: {exc}") from exc
        weather = environment.get("weather", "good")
        if weather not in self.data.weather:
            raise ValueError(f"weather: must be one of {', '.join(self.data.weather)} (got {weather!r})")

    def adjudicate(self, situation: Situation) -> Ruling:
        action = self._action(situation)
        options = self._options(situation.options)
        notes = foreign_vocabulary_notes(situation, self._text)
        rulings = [self._rule_line(situation, action, evidence, options, notes) for evidence in situation.lines]
        # The observer may use whichever line the geometry offers, the best as between devices: allowed
        # first, then the easiest level, the highest asset, the lowest raw sum (ties: the first line).
        levels = {level.id: index for index, level in enumerate(self.data.ladder.levels)}
        return min(
            rulings,
            key=lambda r: (
                not r.allowed,
                levels.get(r.extra.get("difficulty") or "", len(levels)),
                -int(r.extra.get("asset") or 0),
                r.modifier if r.modifier is not None else 0,
            ),
        )

    def line_rules(self, action: str, reaction: bool, scene: Scene) -> TravellerLines:
        """This ruleset's verdicts over arrays for ``action`` in ``scene`` (its environment and grid)."""
        return TravellerLines(self, action, scene)

    # --- One sight line ---

    def _rule_line(
        self, s: Situation, action: ActionRules, evidence: LineEvidence, options: _Options, notes: tuple[str, ...]
    ) -> Ruling:
        locale = s.locale
        crossings = tuple(c for c in evidence.crossings if c.zone in self.data.zones)
        extra_notes: list[str] = []
        cite_keys: list[str] = [*action.cite, *self.data.ladder.cite]

        # A wall blocks the task, but every candidate is still evaluated and listed, none applied
        # (contract: `modifiers` explains every candidate), with the wall entries after them.
        walls = wall_entries(evidence.blocking_walls, self._text, locale)
        conditions = self._conditions(s, evidence, crossings, extra_notes)
        carried = self._devices(s, action, options)
        if not carried:
            no_sensor = self._text("no_sensor", locale, token=s.actor.name or s.actor.id)
            extra_notes.append(no_sensor)
            missing = ModifierEntry(
                source="device",
                value=None,
                applied=True,
                label=self._text("no_sensor_label", locale),
                reason=no_sensor,
            )
            withheld = self._text("no_sensor_not_applied", locale)
            options_given = [e.not_applied(withheld) for e in self._option_entries(options, locale, cite_keys)]
            entries = [missing, *options_given, *walls]
            return self._ruling(s, False, None, crossings, entries, (*notes, *extra_notes), cite_keys, evidence, {})

        results = [self._evaluate(s, name, conditions, options) for name in carried]
        reachable = [r for r in results if r.reachable]
        pool = reachable or [r for r in results if r.usable] or results
        best = min(pool, key=self._preference)

        if walls:
            # The candidates of the device the observer would have used had the line been clear.
            withheld = self._text("wall_not_applied", locale)
            candidates = [*best.entries, *self._light_entries(best, conditions, locale)]
            entries = [*(entry.not_applied(withheld) for entry in candidates), *walls]
            cite_keys += best.cite
            if not best.usable:
                extra_notes += best.reasons
            return self._ruling(s, False, None, crossings, entries, (*notes, *extra_notes), cite_keys, evidence, {})

        allowed = best.reachable
        extra_notes += best.notes
        cite_keys += best.cite
        label = best.rules.label.get(locale)
        if not best.usable:
            extra_notes += best.reasons
        elif best.level is None:
            extra_notes.append(self._text("cannot_be_done", locale, modifier=_signed(best.total)))
        elif self.data.ladder.index(self.data.ladder.base) + best.total < 0:
            extra_notes.append(self._text("below_easy", locale, modifier=_signed(best.total)))
        if len(results) > 1:
            extra_notes.append(self._text("best_device", locale, device=label))
            others = [self._summary(r, locale) for r in results if r is not best]
            extra_notes.append(self._text("other_devices", locale, results=" ".join(others)))
        entries = [*best.entries, *self._light_entries(best, conditions, locale)]
        level = self.data.ladder.levels[best.level] if best.level is not None and best.usable else None
        extra: dict[str, Any] = {
            "difficulty": level.id if level and allowed else None,
            "asset": best.rules.asset,
            "device": best.device,
            "difficulty_label": level.label.get(locale) if level and allowed else None,
            "asset_kind": best.rules.asset_kind,
            "diff_mods": best.total,
            "distance_m": round(conditions.distance, 3),
            "short_range_m": best.rules.short_range,
            "devices": [self._detail(r, locale) for r in results],
        }
        return self._ruling(
            s,
            allowed,
            best.total if allowed else None,
            crossings,
            entries,
            (*notes, *dict.fromkeys(extra_notes)),
            cite_keys,
            evidence,
            extra,
        )

    def _conditions(
        self, s: Situation, evidence: LineEvidence, crossings: tuple[Crossing, ...], notes: list[str]
    ) -> _Conditions:
        env = s.scene.environment
        raw_light = env.get("light", "day")
        light = 0 if raw_light == "day" else int(raw_light)
        weather = str(env.get("weather", "good"))
        regions = regions_by_id(s.scene)
        smoke: list[tuple[Crossing, int]] = []
        woods: list[Crossing] = []
        for crossing in crossings:
            zone = regions[crossing.region].zone
            if crossing.zone == "smoke" and zone is not None:
                smoke.append((crossing, int(zone.params["density"])))
            elif crossing.zone == "woods":
                woods.append(crossing)
        obstacles: set[Obstacle] = set()
        if woods:
            obstacles.add("woods")
        if smoke:
            obstacles.add("smoke")
        if weather != "good":
            obstacles.add("poor-weather")

        sources: list[_Source] = []
        for crossing in crossings:
            zone = regions[crossing.region].zone
            if crossing.zone == "illuminated" and zone is not None and crossing.kind in _TARGET_INSIDE:
                key = str(zone.params["by"])
                sources.append(self._source(key, crossing.region, "illuminated", obstacles))
        assert s.target is not None
        for light_id, kind in ((light.id, light.kind) for light in s.geometry.lights_reaching(s.target.id)):
            sources.append(self._source(kind, light_id, None, obstacles))

        units = s.scene.grid.units.strip().lower()
        per_unit = self.data.units.get(units)
        if per_unit is None:
            notes.append(self._text("unknown_units", s.locale, units=s.scene.grid.units))
            per_unit = 1.0
        distance = s.geometry.distance(evidence.line.start, evidence.line.end) * per_unit
        return _Conditions(
            light=light,
            weather=weather,
            smoke=tuple(smoke),
            woods=tuple(woods),
            sources=tuple(sources),
            obstacles=frozenset(obstacles),
            distance=distance,
        )

    def _source(self, key: str, where: str, zone: str | None, obstacles: set[Obstacle]) -> _Source:
        rules = self.data.lights[key]
        blocked = next((o for o in rules.no_effect_in if o in obstacles), None)
        return _Source(key, where, zone, blocked)

    def _devices(self, s: Situation, action: ActionRules, options: _Options) -> list[str]:
        """The sights the actor may use for this action: the fallback first, then its devices."""
        devices = self.data.devices
        names = [self.data.fallback] + [t for t in dict.fromkeys(s.actor.traits) if t in devices]
        names = [name for name in names if devices[name].asset_kind == action.asset_kind]
        if options.device is not None:
            if options.device not in names:
                carried = ", ".join(names) or "none"
                raise RulingError(
                    f"{s.actor.name or s.actor.id} cannot use {options.device!r} for {s.action}; usable: {carried}",
                    field="options.device",
                )
            names = [options.device]
        return names

    def _evaluate(self, s: Situation, name: str, cond: _Conditions, options: _Options) -> _Result:
        """One device's diff mods along the line, or why it has no effect."""
        locale = s.locale
        rules = self.data.devices[name]
        label = rules.label.get(locale)
        result = _Result(device=name, rules=rules, usable=True, cite=list(rules.cite))

        for obstacle in rules.no_effect_in:
            if obstacle in cond.obstacles:
                result.reasons.append(self._text(f"no_effect_{obstacle.replace('-', '_')}", locale, device=label))
        lit = tuple(
            src
            for src in cond.sources
            if src.blocked_by is None and (self.data.lights[src.key].spectrum == "white" or rules.sees_ir_light)
        )
        result.lit_by = lit
        if "daylight" in rules.needs and cond.light and not lit:
            result.reasons.append(self._text("needs_daylight", locale, device=label))
        if "good-weather" in rules.needs and cond.weather != "good":
            result.reasons.append(self._text("needs_good_weather", locale, device=label))
        if result.reasons:
            result.usable = False
            return result

        # Ladar below TL 13 (seed 000): "degraded by smoke and bad weather", by an amount the rules do not state.
        low_tech = rules.low_tech_below is not None and (
            options.tech_level is None or options.tech_level < rules.low_tech_below
        )
        degraded = [o for o in rules.low_tech_degraded_by if o in cond.obstacles] if low_tech else []
        entries = result.entries
        entries.append(self._range_entry(rules, label, cond.distance, locale))
        result.cite += self.data.range.cite

        if cond.light:
            raw = cond.light * self.data.night.mod_per_level
            night_label = self.data.night.label.get(locale, level=cond.light)
            if lit:
                light_label = self.data.lights[lit[0].key].label.get(locale)
                entries.append(
                    _entry("night", 0, False, night_label, self._text("lit_as_day", locale, light=light_label))
                )
                result.cite += self.data.lights[lit[0].key].cite
            else:
                entries.append(self._condition_entry("night", raw, rules, label, night_label, locale))
            result.cite += self.data.night.cite
        weather = self.data.weather[cond.weather]
        if weather.mod:
            entries.append(
                self._condition_entry(
                    "weather", weather.mod, rules, label, weather.label.get(locale), locale, "poor-weather" in degraded
                )
            )
            result.cite += weather.cite
        entries += self._smoke_entries(cond, rules, label, locale, "smoke" in degraded)
        if cond.smoke:
            result.cite += self.data.zones["smoke"].cite
            result.notes += [self._text(key, locale) for key in rules.smoke_notes]
        for crossing in cond.woods:
            entries.append(
                _entry(
                    "zone",
                    0,
                    False,
                    self.data.zones["woods"].label.get(locale),
                    self._text("woods_no_mod", locale),
                    crossing,
                )
            )
            result.cite += self.data.zones["woods"].cite
        entries += self._option_entries(options, locale, result.cite)

        result.notes += [self._text(key, locale) for key in rules.notes]
        if degraded:
            result.notes.append(self._text("ladar_degraded", locale))

        result.total = sum(entry.value or 0 for entry in entries if entry.applied)
        index = self.data.ladder.index(self.data.ladder.base) + result.total
        result.level = max(index, 0) if index < len(self.data.ladder.levels) else None
        return result

    def _option_entries(self, options: _Options, locale: str, cite_keys: list[str]) -> list[ModifierEntry]:
        """Target size and other diff mods as given in the request; their citations go to ``cite_keys``."""
        entries: list[ModifierEntry] = []
        for key, value in (("size", options.size), ("other", options.other)):
            if value is not None:
                option = self.data.options[key]
                entries.append(_entry(key, value, True, option.label.get(locale), self._text("option_value", locale)))
                cite_keys += option.cite
        return entries

    def _range_entry(self, rules: DeviceRules, label: str, distance: float, locale: str) -> ModifierEntry:
        range_label = self.data.range.label.get(locale)
        short = rules.short_range
        if short is None:
            return _entry("range", 0, False, range_label, self._text("range_none", locale, device=label))
        shown = {"distance": _fmt(distance), "device": label, "short": _fmt(short)}
        if distance <= short:
            halvings = 0
            while halvings < self.data.range.max_halvings and distance <= short / 2 ** (halvings + 1):
                halvings += 1
            if not halvings:
                return _entry("range", 0, True, range_label, self._text("range_short", locale, **shown))
            value = halvings * self.data.range.halving
            reason = self._text("range_halvings", locale, fraction=2**halvings, value=_signed(value), **shown)
            return _entry("range", value, True, range_label, reason)
        doublings = 1
        while distance > short * 2**doublings:
            doublings += 1
        value = doublings * self.data.range.doubling
        reason = self._text("range_doublings", locale, times=2**doublings, value=_signed(value), **shown)
        return _entry("range", value, True, range_label, reason)

    def _condition_entry(
        self,
        source: Condition,
        raw: int,
        rules: DeviceRules,
        device: str,
        label: str,
        locale: str,
        degraded: bool = False,
    ) -> ModifierEntry:
        """A night or weather entry for ``device``; ``degraded``: a condition the device ignores but is degraded
        by at this tech level, by an amount the rules do not state (no diff mod, and the reason says so)."""
        if source in rules.ignores:
            return _entry(source, 0, False, label, self._ignores_text(device, locale, degraded))
        count = rules.disregards.get(source, 0)
        if count:
            value = max(raw - count, 0)
            reason = self._text("disregards", locale, device=device, count=count, value=_signed(value))
            return _entry(source, value, value > 0, label, reason)
        return _entry(source, raw, True, label)

    def _ignores_text(self, device: str, locale: str, degraded: bool) -> str:
        return self._text("degraded_unstated" if degraded else "ignores", locale, device=device)

    def _smoke_entries(
        self, cond: _Conditions, rules: DeviceRules, device: str, locale: str, degraded: bool = False
    ) -> list[ModifierEntry]:
        label = self.data.zones["smoke"].label.get(locale)
        entries: list[ModifierEntry] = []
        left = rules.disregards.get("smoke", 0)
        for crossing, density in cond.smoke:
            if "smoke" in rules.ignores:
                entries.append(_entry("zone", 0, False, label, self._ignores_text(device, locale, degraded), crossing))
                continue
            taken = min(left, density)
            left -= taken
            value = density - taken
            reason = None
            if taken:
                reason = self._text("disregards", locale, device=device, count=taken, value=_signed(value))
                if len(cond.smoke) > 1:
                    count = rules.disregards["smoke"]
                    reason = f"{reason} {self._text('smoke_shared', locale, device=device, count=count)}"
            entries.append(_entry("zone", value, value > 0 or not taken, label, reason, crossing))
        return entries

    def _light_entries(self, best: _Result, cond: _Conditions, locale: str) -> list[ModifierEntry]:
        entries: list[ModifierEntry] = []
        for src in cond.sources:
            rules = self.data.lights[src.key]
            label = rules.label.get(locale)
            used = src in best.lit_by and best.usable
            if src.blocked_by is not None:
                reason = self._text(f"light_no_effect_{src.blocked_by.replace('-', '_')}", locale, light=label)
            elif rules.spectrum == "ir" and not best.rules.sees_ir_light:
                reason = self._text("light_ir_only", locale, light=label)
            elif not cond.light:
                reason = self._text("light_not_needed", locale, light=label)
            else:
                reason = self._text("light_used", locale, light=label)
            entries.append(
                ModifierEntry(
                    source="light",
                    value=None,
                    applied=used and bool(cond.light),
                    label=label,
                    reason=reason,
                    region=src.where,
                    zone=src.zone,
                )
            )
        return entries

    # --- Helpers ---

    def _preference(self, result: _Result) -> tuple[int, int, int, int]:
        """How good a device's result is, smaller first (rules-notes, "several devices"): the easiest
        difficulty level (beyond Impossible last), then the highest asset bonus, then the lowest raw sum,
        then the order of the vocabulary table (unaided eyes, the fallback, before it)."""
        level = len(self.data.ladder.levels) if result.level is None else result.level
        return (level, -result.rules.asset, result.total, self._device_order[result.device])

    def _summary(self, result: _Result, locale: str) -> str:
        label = result.rules.label.get(locale)
        if not result.usable:
            return self._text("device_unusable", locale, device=label, reason=" ".join(result.reasons))
        if result.level is None:
            return self._text("device_impossible", locale, device=label, modifier=_signed(result.total))
        return self._text(
            "device_chosen",
            locale,
            device=label,
            difficulty=self.data.ladder.levels[result.level].label.get(locale),
            modifier=_signed(result.total),
            asset_kind=self._text(f"asset_{result.rules.asset_kind}", locale),
            asset=_signed(result.rules.asset),
        )

    def _detail(self, result: _Result, locale: str) -> dict[str, Any]:
        level = self.data.ladder.levels[result.level] if result.usable and result.level is not None else None
        return {
            "device": result.device,
            "label": result.rules.label.get(locale),
            "usable": result.usable,
            "allowed": result.reachable,
            "modifier": result.total if result.usable else None,
            "difficulty": level.id if level else None,
            "asset": result.rules.asset,
            "reasons": list(result.reasons),
        }

    def _ruling(
        self,
        s: Situation,
        allowed: bool,
        modifier: int | None,
        crossings: tuple[Crossing, ...],
        entries: list[ModifierEntry],
        notes: tuple[str, ...],
        cite_keys: list[str],
        evidence: LineEvidence,
        extra: dict[str, Any],
    ) -> Ruling:
        return Ruling(
            allowed=allowed,
            modifier=modifier,
            crossings=crossings,
            modifiers=tuple(entries),
            notes=notes,
            citations=cite(self.data.passages, tuple(dict.fromkeys(cite_keys)), edition=s.edition, locale=s.locale),
            line=evidence.line,
            extra=extra,
        )

    def _options(self, options: Mapping[str, Any]) -> _Options:
        values: dict[str, int | None] = {}
        for key in ("size", "other", "tech_level"):
            value = options.get(key)
            if value is not None and type(value) is not int:
                raise RulingError(f"options.{key} must be a whole number (got {value!r})", field=f"options.{key}")
            values[key] = value
        device = options.get("device")
        if device is not None and not isinstance(device, str):
            raise RulingError(f"options.device must be a device name (got {device!r})", field="options.device")
        return _Options(size=values["size"], other=values["other"], device=device, tech_level=values["tech_level"])

    def _text(self, key: str, locale: str, /, **values: Any) -> str:
        return self.data.texts[key].get(locale, **values)


_TARGET_INSIDE = (CrossingKind.INTO, CrossingKind.WITHIN)


# --- Rules over arrays ------------------------------------------------------------------------------

#: Obstacle bits of a line (the low bits of its crossings' OR); light keys' bits follow them.
_OBSTACLE_BITS: dict[Obstacle, int] = {"woods": 1, "smoke": 2, "poor-weather": 4}
_LIGHT_SHIFT = 3


class TravellerLines:
    """:meth:`TravellerRuleset._rule_line`'s ``allowed`` and ``modifier`` for many lines at once, compiled
    from the data for one action and scene (:class:`~bridge.core.rules.effects.LineRules`).

    Per crossing, from a table by (zone type and parameters, kind): the obstacles it puts on the line
    (woods, smoke), the light it casts on the target (an ``illuminated`` zone the target is in) and its
    smoke density — reduced per line by OR and sum. Per line: its length (range), the lights reaching
    the target (``SceneGeometry.lights_reaching``, per token). Per device the observer may use, over all
    lines at once: whether it has an effect, its diff mods (range, night, weather, smoke, each as
    ``_evaluate`` sums them), its level; the best reachable device as ``_preference`` orders them.
    """

    def __init__(self, ruleset: TravellerRuleset, action: str, scene: Scene) -> None:
        data = ruleset.data
        self._ruleset = ruleset
        self._data = data
        kind = data.actions[action].asset_kind
        self._devices = [name for name, rules in data.devices.items() if rules.asset_kind == kind]
        self._device_bit = {name: 1 << k for k, name in enumerate(self._devices)}
        self._order = [ruleset._device_order[name] for name in self._devices]
        self._lights = list(data.lights)
        env = scene.environment
        raw_light = env.get("light", "day")
        self._light = 0 if raw_light == "day" else int(raw_light)
        self._weather = str(env.get("weather", "good"))
        self._per_unit = data.units.get(scene.grid.units.strip().lower(), 1.0)
        self._carried: dict[tuple[str, ...], int] = {}

    def _light_bit(self, key: str) -> int:
        return 1 << (_LIGHT_SHIFT + self._lights.index(key))

    def _class_key(self, region: Region) -> tuple[Any, ...]:
        zone = region.zone
        assert zone is not None
        return (zone.type, zone.params.get("density"), zone.params.get("by"))

    def _tables(self, classes: list[Region]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Per (zone class, kind): the bits it sets (obstacles, lights on the target), its smoke density."""
        bits = np.zeros((len(classes), 4), dtype=np.int64)
        density = np.zeros((len(classes), 4), dtype=np.int64)
        for c, region in enumerate(classes):
            zone = region.zone
            assert zone is not None
            for k, kind in enumerate(KINDS):
                if zone.type == "smoke":
                    bits[c, k] = _OBSTACLE_BITS["smoke"]
                    density[c, k] = int(zone.params["density"])
                elif zone.type == "woods":
                    bits[c, k] = _OBSTACLE_BITS["woods"]
                elif zone.type == "illuminated" and kind in _TARGET_INSIDE:
                    bits[c, k] = self._light_bit(str(zone.params["by"]))
        return bits, density

    def _carried_by(self, traits: tuple[str, ...]) -> int:
        """The devices (bits) an observer with ``traits`` may use: the fallback and its own, of the kind."""
        found = self._carried.get(traits)
        if found is None:
            names = [self._data.fallback, *traits]
            found = self._carried[traits] = sum({self._device_bit[n] for n in names if n in self._device_bit})
        return found

    def verdicts(self, scene: SceneInputs, lines: LineInputs) -> Verdicts:
        data = self._data
        count = lines.src.size
        result = no_verdicts(count)
        if not count:
            return result
        zone_class, classes = zone_classes(scene.zones, self._class_key, scene.cache)
        bits_table, density_table = self._tables(classes)
        bits = reduce_crossings(lines, zone_class, bits_table, np.bitwise_or, 0)
        density = reduce_crossings(lines, zone_class, density_table, np.add, 0)
        obstacles = bits & ((1 << _LIGHT_SHIFT) - 1)
        if self._weather != "good":
            obstacles |= _OBSTACLE_BITS["poor-weather"]
        sources = bits >> _LIGHT_SHIFT
        if scene.scene.lights or any(token.light is not None for token in scene.tokens):
            targets = np.unique(lines.dst)
            lit_of = np.zeros(len(scene.tokens), dtype=np.int64)
            lit_of[targets] = [
                sum({self._light_bit(lamp.kind) for lamp in lamps}) for lamps in lights_on(scene, targets.tolist())
            ]
            sources |= lit_of[lines.dst] >> _LIGHT_SHIFT
        # Which lights cast on the target have an effect (none in the obstacles they fail in), by spectrum.
        lit_white = np.zeros(count, dtype=bool)
        lit_ir = np.zeros(count, dtype=bool)
        for k, key in enumerate(self._lights):
            light = data.lights[key]
            fails = sum(_OBSTACLE_BITS[o] for o in set(light.no_effect_in))
            works = ((sources >> k) & 1).astype(bool) & ((obstacles & fails) == 0)
            if light.spectrum == "white":
                lit_white |= works
            else:
                lit_ir |= works
        distance = centre_distances(scene, lines) * self._per_unit
        carried = np.array([self._carried_by(tuple(token.traits)) for token in scene.tokens], dtype=np.int64)
        carried_line = carried[lines.src]
        levels = len(data.ladder.levels)
        base = data.ladder.index(data.ladder.base)
        weather = data.weather[self._weather]
        best_key = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
        best_total = np.zeros(count, dtype=np.int64)
        max_asset = max((data.devices[name].asset for name in self._devices), default=0)
        for d, name in enumerate(self._devices):
            # Only the lines whose observer may use the device (all for the fallback).
            rows = np.flatnonzero((carried_line >> d) & 1)
            if not rows.size:
                continue
            rules = data.devices[name]
            fails = sum(_OBSTACLE_BITS[o] for o in set(rules.no_effect_in))
            lit = (lit_white | lit_ir)[rows] if rules.sees_ir_light else lit_white[rows]
            usable = (obstacles[rows] & fails) == 0
            if "daylight" in rules.needs and self._light:
                usable &= lit
            if "good-weather" in rules.needs and self._weather != "good":
                usable[:] = False
            total = self._range(rules, distance[rows])
            if self._light:
                night = self._condition("night", self._light * data.night.mod_per_level, rules)
                total += np.where(lit, 0, night)
            if weather.mod:
                total += self._condition("weather", weather.mod, rules)
            if "smoke" not in rules.ignores:
                smoke = density[rows]
                total += smoke - np.minimum(rules.disregards.get("smoke", 0), smoke)
            index = base + total
            reachable = usable & (index < levels)
            # _preference: the easiest level, the highest asset, the lowest raw sum, the table's order.
            level = np.clip(index, 0, levels)
            rank = (level * 1024 + (max_asset - rules.asset)) << 24
            rank = (rank + np.clip(total + (1 << 23), 0, (1 << 24) - 1)) * 64 + (self._order[d] + 1)
            better = reachable & (rank < best_key[rows])
            best_key[rows[better]] = rank[better]
            best_total[rows[better]] = total[better]
        allowed = (best_key != np.iinfo(np.int64).max) & ~lines.walled
        result.allowed[:] = allowed
        result.modifier[:] = np.where(allowed, best_total, 0)
        return result

    def _range(self, rules: DeviceRules, distance: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """``_range_entry``'s value (0 where it does not apply), the same comparisons over arrays."""
        short = rules.short_range
        if short is None:
            return np.zeros(distance.size, dtype=np.int64)
        halvings = np.zeros(distance.size, dtype=np.int64)
        for step in range(1, self._data.range.max_halvings + 1):
            halvings[(halvings == step - 1) & (distance <= short / 2**step)] = step
        doublings = np.ones(distance.size, dtype=np.int64)
        beyond = distance > short * 2
        step = 1
        while beyond.any():
            step += 1
            doublings[beyond] = step
            beyond &= distance > short * 2**step
        inside = distance <= short
        value: npt.NDArray[np.int64] = np.where(
            inside, halvings * self._data.range.halving, doublings * self._data.range.doubling
        )
        return value

    @staticmethod
    def _condition(source: Condition, raw: int, rules: DeviceRules) -> int:
        """What ``_condition_entry`` adds to the sum: 0 when ignored, less what the device disregards."""
        if source in rules.ignores:
            return 0
        count = rules.disregards.get(source, 0)
        return max(raw - count, 0) if count else raw


def _entry(
    source: str,
    value: int,
    applied: bool,
    label: str,
    reason: str | None = None,
    crossing: Crossing | None = None,
) -> ModifierEntry:
    return ModifierEntry(
        source=source,
        value=value,
        applied=applied,
        label=label,
        reason=reason,
        region=crossing.region if crossing else None,
        zone=crossing.zone if crossing else None,
    )


def _signed(value: int) -> str:
    return f"{value:+d}" if value else "0"


def _fmt(value: float | Fraction) -> str:
    """A distance for display: at most two decimals, trailing zeros dropped."""
    text = f"{float(value):.2f}".rstrip("0").rstrip(".")
    return text or "0"
