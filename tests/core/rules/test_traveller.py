"""Traveller-family tactical visibility (seed 000): range ladder, conditions, devices, lights, sensors."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest

from bridge.core.rules import RULESETS, RulingError
from bridge.core.rules.traveller import TravellerRuleset, encounter_range, explain_encounter_range
from bridge.core.scene import Zone
from bridge.core.world import SceneRejected
from bridge.protocol import dump_message
from bridge.session import Session, Worlds

from .scenes import light, rect_zone, rule, scene, token, wall

RULESET = RULESETS["traveller"]
assert isinstance(RULESET, TravellerRuleset)
DATA = RULESET.data


def observe(
    distance: float = 100,
    *,
    traits: tuple[str, ...] = (),
    environment: dict[str, Any] | None = None,
    regions: list[dict[str, Any]] | None = None,
    action: str = "observation",
    target_fields: dict[str, Any] | None = None,
    walls: list[dict[str, Any]] | None = None,
    locale: str = "en",
    **options: Any,
) -> Any:
    """An observer at the origin looking at a target ``distance`` metres east (1 px = 1 m)."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0, traits=list(traits)), token("tgt", distance, 0, **(target_fields or {}))],
        regions=regions,
        walls=walls,
        environment=environment,
        locale=locale,
    )
    return rule(built, "obs", "tgt", action, **options)


def entry(ruling: Any, source: str) -> Any:
    """The one modifier entry of ``source``."""
    found = [e for e in ruling.modifiers if e.source == source]
    assert len(found) == 1, found
    return found[0]


NIGHT_3 = {"light": 3}
SMOKE = rect_zone("r-smoke", 40, -100, 10, 200, "smoke", density=2)


# --- Range ladder ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("distance", "value", "level"),
    [(50, -1, "easy"), (25, -2, "easy"), (12.5, -3, "easy")],
)
def test_range_halvings_of_short_range(distance: float, value: int, level: str) -> None:
    """Seed 000: 'within ½ the device's short range is at -1 Diff Mod, within ¼ … -2, within 1/8 … -3' (+ = harder)."""
    ruling = observe(distance, traits=("la-goggles",), device="la-goggles")
    assert entry(ruling, "range").value == value
    assert ruling.modifier == value
    assert ruling.extra["difficulty"] == level


def test_range_band_bound_is_inclusive_and_just_beyond_is_not() -> None:
    """Seed 000: 'a target within ½ the device's short range' — exactly half counts, a metre more does not."""
    assert observe(50, traits=("la-goggles",), device="la-goggles").modifier == -1
    beyond = observe(51, traits=("la-goggles",), device="la-goggles")
    assert beyond.modifier == 0 and beyond.extra["difficulty"] == "average"


@pytest.mark.parametrize(
    ("distance", "value", "level"),
    [(100, 0, "average"), (101, 1, "difficult"), (200, 1, "difficult"), (400, 2, "formidable"), (800, 3, "impossible")],
)
def test_range_doublings_beyond_short_range(distance: float, value: int, level: str) -> None:
    """Rules-notes (TNE bands): beyond short range 'each doubling is one level harder (+1)'."""
    ruling = observe(distance, traits=("la-goggles",), device="la-goggles")
    assert ruling.allowed and ruling.modifier == value and ruling.extra["difficulty"] == level


def test_beyond_impossible_cannot_be_done() -> None:
    """Rules-notes: 'above Impossible cannot be done' — 16× short range with LA goggles is +4."""
    ruling = observe(1600, traits=("la-goggles",), device="la-goggles")
    assert not ruling.allowed and ruling.modifier is None
    assert ruling.extra["diff_mods"] == 4 and ruling.extra["difficulty"] is None
    assert any("beyond Impossible" in note for note in ruling.notes)


@pytest.mark.parametrize(("distance", "value"), [(100 / 512, -9), (100 / 1024, -10), (0.01, -10), (0, -10)])
def test_halvings_stop_at_one_1024th_of_short_range(distance: float, value: int) -> None:
    """Rules-notes: halvings stop at 1/1024 of short range (−10), and anything nearer counts −10 too.

    'Halvings are counted down to 1/1024 of short range (−10); anything nearer, stacked tokens at distance 0 included,
    counts −10.'
    """
    ruling = observe(distance, traits=("la-goggles",), device="la-goggles")
    assert entry(ruling, "range").value == value and ruling.modifier == value
    assert ruling.extra["difficulty"] == "easy"


def test_below_easy_stays_easy_and_modifier_is_raw() -> None:
    """Rules-notes: 'Below Easy stays Easy'; `modifier` is the raw sum, never clamped (1/8 range: -3)."""
    ruling = observe(12.5, traits=("la-goggles",), device="la-goggles")
    assert ruling.modifier == -3 and ruling.extra["difficulty"] == "easy"
    assert any("stays Easy" in note for note in ruling.notes)


def test_distance_is_three_dimensional() -> None:
    """Rules-notes: 'Distance is 3D (elevation included)' — 30 m east and 40 m up is 50 m: ½ range."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0, traits=["la-goggles"]), token("tgt", 30, 0, elevation=40)],
    )
    ruling = rule(built, "obs", "tgt", "observation", device="la-goggles")
    assert ruling.extra["distance_m"] == 50 and ruling.modifier == -1


def test_grid_units_in_feet_are_converted_to_metres() -> None:
    """Seed 000 ranges are metres: a scene measured in feet is converted (328.084 ft ≈ 100 m: short range)."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0, traits=["la-goggles"]), token("tgt", 150, 0)],
        units="ft",
    )
    ruling = rule(built, "obs", "tgt", "observation", device="la-goggles")
    assert ruling.extra["distance_m"] == pytest.approx(45.72)
    assert ruling.modifier == -1


def test_unknown_units_are_taken_as_metres_with_a_note() -> None:
    """An unknown grid unit is not silently trusted: metres are assumed and the ruling says so."""
    built = scene("traveller", tokens=[token("obs", 0, 0), token("tgt", 100, 0)], units="parsecs")
    ruling = rule(built, "obs", "tgt", "observation")
    assert any("parsecs" in note for note in ruling.notes)


def test_unaided_eyes_have_no_range_diff_mod() -> None:
    """Rules-notes: 'A sight with no short range in the seed (unaided eyes, …) gets no range diff mod'."""
    ruling = observe(5000)
    assert ruling.extra["device"] == "unaided-eyes"
    assert entry(ruling, "range").value == 0 and ruling.modifier == 0


# --- Visibility conditions ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_night_adds_background_light_level(level: int) -> None:
    """Seed 000: 'The background light level equals the number of + diff mods applied to the task.'"""
    ruling = observe(environment={"light": level})
    assert entry(ruling, "night").value == level and ruling.modifier == level


@pytest.mark.parametrize(("weather", "value"), [("good", 0), ("poor", 1), ("very-poor", 2)])
def test_weather_diff_mods(weather: str, value: int) -> None:
    """Seed 000: 'Weather is characterized as poor (+1 diff mod) and very poor (+2 diff mods)'."""
    ruling = observe(environment={"weather": weather})
    assert ruling.modifier == value


def test_smoke_density_adds_its_diff_mods() -> None:
    """Seed 000: 'Smoke … imposes difficulty modifiers starting with +1 for light smoke' — density 2 is +2."""
    ruling = observe(regions=[SMOKE])
    smoke = entry(ruling, "zone")
    assert smoke.value == 2 and smoke.region == "r-smoke" and ruling.modifier == 2


def test_several_smoke_zones_add_up() -> None:
    """Seed 000: 'All modifiers, from visibility conditions as well as other modifiers, are cumulative.'"""
    regions = [SMOKE, rect_zone("r-smoke2", 60, -100, 10, 200, "smoke", density=1)]
    assert observe(regions=regions).modifier == 3


def test_conditions_are_cumulative_with_range_size_and_other() -> None:
    """Seed 000: 'All modifiers … are cumulative' — night 2, poor weather, smoke 2, size +1, other -1."""
    ruling = observe(environment={"light": 2, "weather": "poor"}, regions=[SMOKE], size=1, other=-1)
    assert ruling.extra["diff_mods"] == 2 + 1 + 2 + 1 - 1
    assert ruling.extra["difficulty"] is None and not ruling.allowed and ruling.modifier is None


def test_woods_carry_no_diff_mod_but_night_still_applies() -> None:
    """Rules-notes: 'Woods carry no diff mod of their own …; night and weather still apply to Observation there.'"""
    woods = rect_zone("r-woods", 40, -100, 10, 200, "woods")
    ruling = observe(environment={"light": 1}, regions=[woods])
    assert ruling.modifier == 1
    assert [e.value for e in ruling.modifiers if e.source == "zone"] == [0]


# --- Vision devices ---------------------------------------------------------------------------------------


def test_binoculars_add_one_to_observation_in_daylight() -> None:
    """Seed 000: 'Characters equipped with binoculars … have their Observation asset increased by 1.'"""
    ruling = observe(traits=("binoculars",))
    assert ruling.extra["device"] == "binoculars" and ruling.extra["asset"] == 1


@pytest.mark.parametrize("environment", [{"light": 1}, {"weather": "poor"}], ids=["night", "poor-weather"])
def test_binoculars_useless_outside_daylight_and_good_weather(environment: dict[str, Any]) -> None:
    """Seed 000: 'Binoculars are useful only during periods of good visibility (daylight and good weather).'"""
    ruling = observe(traits=("binoculars",), environment=environment)
    assert ruling.extra["device"] == "unaided-eyes" and ruling.extra["asset"] == 0
    binoculars = next(d for d in ruling.extra["devices"] if d["device"] == "binoculars")
    assert not binoculars["usable"]


@pytest.mark.parametrize("device", ["binoculars", "image-intensifier", "la-goggles", "ir-goggles"])
def test_devices_with_no_effect_in_smoke_fall_back_to_unaided_eyes(device: str) -> None:
    """Seed 000: binoculars, image intensifiers, LA goggles, IR goggles 'have no effect in … smoke'."""
    ruling = observe(traits=(device,), regions=[SMOKE])
    assert ruling.extra["device"] == "unaided-eyes" and ruling.modifier == 2


@pytest.mark.parametrize(
    "device",
    ["binoculars", "image-intensifier", "la-goggles", "ir-goggles", "thermal-viewer", "wide-spectrum-visual"],
)
def test_devices_with_no_effect_in_woods_fall_back(device: str) -> None:
    """Seed 000: each of these devices 'has no effect in woods' — unaided eyes are used."""
    woods = rect_zone("r-woods", 40, -100, 10, 200, "woods")
    ruling = observe(traits=(device,), regions=[woods], environment={"light": 2})
    assert ruling.extra["device"] == "unaided-eyes" and ruling.modifier == 2


def test_image_intensifier_at_light_level_3_takes_plus_one() -> None:
    """Seed 000: 'in background light level 3, only takes a -1 difficulty modifier rather than -3' (sign slip: +1)."""
    ruling = observe(250, traits=("image-intensifier",), environment=NIGHT_3)
    assert entry(ruling, "night").value == 1
    assert ruling.modifier == 1 and ruling.extra["asset"] == 2 and ruling.extra["device"] == "image-intensifier"


def test_image_intensifier_fully_affected_by_weather() -> None:
    """Seed 000: image intensifiers 'are fully affected by weather diff mods'."""
    ruling = observe(250, traits=("image-intensifier",), environment={"light": 1, "weather": "very-poor"})
    assert ruling.extra["device"] == "image-intensifier" and ruling.modifier == 0 + 2


def test_la_goggles_disregard_two_night_mods() -> None:
    """Seed 000: 'LA goggles allow characters to disregard up to 2 night + diff mods' (short range 100 m)."""
    ruling = observe(100, traits=("la-goggles",), environment={"light": 2})
    assert entry(ruling, "night").value == 0 and ruling.modifier == 0 and ruling.extra["device"] == "la-goggles"


def test_ir_goggles_ignore_night() -> None:
    """Seed 000: 'IR goggles are not affected by night diff mods'."""
    ruling = observe(100, traits=("ir-goggles",), environment=NIGHT_3)
    assert ruling.extra["device"] == "ir-goggles" and ruling.modifier == 0


@pytest.mark.parametrize("weather", ["poor", "very-poor"])
def test_ir_goggles_no_effect_in_poor_weather(weather: str) -> None:
    """Seed 000: IR goggles 'have no effect in woods, smoke or poor or very poor weather'."""
    ruling = observe(100, traits=("ir-goggles",), environment={"light": 3, "weather": weather})
    assert ruling.extra["device"] == "unaided-eyes"


@pytest.mark.parametrize(("weather", "value"), [("poor", 0), ("very-poor", 1)])
def test_thermal_viewer_disregards_one_weather_mod(weather: str, value: int) -> None:
    """Seed 000: 'poor weather has no effect and very poor weather only applies a +1 diff mod'."""
    ruling = observe(400, traits=("thermal-viewer",), environment={"light": 3, "weather": weather})
    assert ruling.extra["device"] == "thermal-viewer" and ruling.modifier == value


def test_thermal_viewer_disregards_one_smoke_mod() -> None:
    """Seed 000: the thermal viewer disregards 'up to 1 + diff mod due to smoke' — density 2 leaves +1."""
    ruling = observe(400, traits=("thermal-viewer",), regions=[SMOKE], environment=NIGHT_3)
    assert ruling.extra["device"] == "thermal-viewer" and entry(ruling, "zone").value == 1 and ruling.modifier == 1


def test_thermal_viewer_disregards_one_smoke_mod_in_all() -> None:
    """Seed 000: 'up to 1 + diff mod due to smoke' — two smoke zones (2 + 1) leave +2, not +1."""
    regions = [SMOKE, rect_zone("r-smoke2", 60, -100, 10, 200, "smoke", density=1)]
    ruling = observe(400, traits=("thermal-viewer",), regions=regions, environment=NIGHT_3)
    assert ruling.modifier == 2


def test_wide_spectrum_visual_ignores_night_and_one_smoke_but_not_weather() -> None:
    """Seed 000: WSV 'is not affected by night diff mods, … 1 + diff mod due to smoke … affected by weather mods'."""
    ruling = observe(
        400, traits=("wide-spectrum-visual",), regions=[SMOKE], environment={"light": 3, "weather": "poor"}
    )
    assert ruling.extra["device"] == "wide-spectrum-visual" and ruling.extra["asset"] == 2
    assert ruling.modifier == 1 + 1


def test_color_enhancement_adds_one_by_day_only() -> None:
    """Seed 000: 'Color enhancement devices add 1 to the Observation asset, but are useless in other than daylight'."""
    assert observe(traits=("color-enhancement",)).extra["asset"] == 1
    assert observe(traits=("color-enhancement",), environment={"light": 1}).extra["device"] == "unaided-eyes"


def test_best_of_several_devices_with_the_others_shown() -> None:
    """Rules-notes: 'An observer carrying several devices uses the one giving the best result; the others' … shown'."""
    traits = ("binoculars", "la-goggles", "thermal-viewer")
    ruling = observe(100, traits=traits, environment=NIGHT_3)
    assert ruling.extra["device"] == "thermal-viewer" and ruling.modifier == -2
    shown = {d["device"]: d for d in ruling.extra["devices"]}
    assert set(shown) == {"unaided-eyes", *traits}
    assert shown["la-goggles"]["modifier"] == 1 and shown["unaided-eyes"]["modifier"] == 3
    assert not shown["binoculars"]["usable"]
    assert any(note.startswith("Other devices:") for note in ruling.notes)


def test_ties_go_to_the_higher_asset() -> None:
    """Rules-notes: best = lowest resulting difficulty, then highest asset — by day binoculars beat eyes."""
    ruling = observe(traits=("color-enhancement", "binoculars"))
    assert ruling.modifier == 0 and ruling.extra["asset"] == 1 and ruling.extra["device"] == "binoculars"


def test_among_devices_reaching_easy_the_highest_asset_wins_over_the_lowest_sum() -> None:
    """Rules-notes: among devices that all reach Easy, the highest asset bonus wins over the lowest raw sum.

    'the easiest difficulty level, then (among equal levels, e.g. several that reach Easy) the highest asset bonus, then
    the lowest raw sum' — a thermal viewer at −3 (Easy, asset 0) loses to an image intensifier at −2 (Easy, asset +2).
    """
    ruling = observe(50, traits=("thermal-viewer", "image-intensifier"))
    shown = {d["device"]: d for d in ruling.extra["devices"]}
    assert shown["thermal-viewer"]["modifier"] == -3 and shown["thermal-viewer"]["difficulty"] == "easy"
    assert ruling.extra["device"] == "image-intensifier"
    assert ruling.modifier == -2 and ruling.extra["difficulty"] == "easy" and ruling.extra["asset"] == 2


def test_the_easiest_level_comes_before_the_asset() -> None:
    """Rules-notes: among devices, the easiest difficulty level wins before the highest asset bonus.

    'the easiest difficulty level, then … the highest asset bonus' — LA goggles at Easy (−1, asset 0) beat binoculars at
    Average (asset +1).
    """
    ruling = observe(50, traits=("binoculars", "la-goggles"))
    assert ruling.extra["device"] == "la-goggles" and ruling.extra["difficulty"] == "easy"


def test_equal_level_and_asset_go_to_the_lowest_raw_sum() -> None:
    """Rules-notes: among devices of equal level and asset, the lowest raw sum wins.

    '… then the lowest raw sum' — at 12.5 m both reach Easy with asset 0; the thermal viewer's −5 (1/32 of 400 m) beats
    the LA goggles' −3 (1/8 of 100 m).
    """
    ruling = observe(12.5, traits=("la-goggles", "thermal-viewer"))
    assert ruling.extra["device"] == "thermal-viewer" and ruling.modifier == -5


def test_full_ties_go_by_the_order_of_the_vocabulary_table() -> None:
    """Rules-notes: devices tied on level, asset and raw sum go by the order of the vocabulary table.

    '… then the order of the vocabulary table' — IR and LA goggles tie by day at 50 m (−1, asset 0); `la-goggles` comes
    first in the table, whatever order the token lists them in.
    """
    for traits in (("ir-goggles", "la-goggles"), ("la-goggles", "ir-goggles")):
        ruling = observe(50, traits=traits)
        assert ruling.extra["device"] == "la-goggles" and ruling.modifier == -1


def test_forced_device_must_be_carried() -> None:
    """`options.device` names a device the observer does not carry: an error naming the field."""
    with pytest.raises(RulingError) as excinfo:
        observe(device="radar")
    assert excinfo.value.field == "options.device"


# --- Light --------------------------------------------------------------------------------------------


WHITE_SPOT = rect_zone("r-lit", 90, -20, 20, 40, "illuminated", by="white-spotlight")


def test_white_spotlight_lets_unaided_eyes_see_as_in_daylight() -> None:
    """Seed 000: a white spotlight allows 'Observation rolls against targets within the illuminated area as if …'."""
    ruling = observe(environment=NIGHT_3, regions=[WHITE_SPOT])
    assert entry(ruling, "night").value == 0 and ruling.modifier == 0
    assert entry(ruling, "light").applied


def test_illumination_makes_binoculars_work_at_night() -> None:
    """Rules-notes: illumination covers the target 'as daylight, so daylight-only devices work again'."""
    ruling = observe(environment=NIGHT_3, regions=[WHITE_SPOT], traits=("binoculars",))
    assert ruling.extra["device"] == "binoculars" and ruling.modifier == 0


def test_spotlight_outside_the_target_does_nothing() -> None:
    """Seed 000: only 'targets within the illuminated area' are seen as in daylight."""
    elsewhere = rect_zone("r-lit", 90, 200, 20, 40, "illuminated", by="white-spotlight")
    assert observe(environment=NIGHT_3, regions=[elsewhere]).modifier == 3


@pytest.mark.parametrize("by", ["white-spotlight", "illumination-round", "ir-spotlight"])
def test_lights_have_no_effect_in_smoke(by: str) -> None:
    """Seed 000: spotlights and Illum rounds 'have no effect in woods, smoke, or poor or very poor weather'."""
    lit = rect_zone("r-lit", 90, -20, 20, 40, "illuminated", by=by)
    ruling = observe(environment={"light": 1}, regions=[lit, SMOKE], traits=("ir-goggles",))
    assert ruling.modifier == 1 + 2
    assert not entry(ruling, "light").applied


def test_illumination_round_no_effect_in_poor_weather() -> None:
    """Seed 000: 'Illum rounds have no effect in woods, smoke, or poor or very poor weather.'"""
    lit = rect_zone("r-lit", 90, -20, 20, 40, "illuminated", by="illumination-round")
    ruling = observe(environment={"light": 2, "weather": "poor"}, regions=[lit])
    assert ruling.modifier == 2 + 1


def test_ir_spotlight_only_for_ir_goggles() -> None:
    """Seed 000: 'Only characters wearing IR goggles can see the light' of an IR spotlight."""
    lit = rect_zone("r-lit", 90, -20, 20, 40, "illuminated", by="ir-spotlight")
    bare = observe(environment=NIGHT_3, regions=[lit])
    assert bare.modifier == 3 and "IR goggles" in entry(bare, "light").reason
    goggles = observe(environment=NIGHT_3, regions=[lit], traits=("ir-goggles",))
    assert goggles.extra["device"] == "ir-goggles" and entry(goggles, "light").applied


def test_scene_light_whose_radius_touches_the_target() -> None:
    """Contract: 'a light reaches a token its radius touches' — a white light 60 m from the target's edge, radius 60."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0), token("tgt", 100, 0)],
        lights=[light("l1", 185, 0, 60)],
        environment=NIGHT_3,
    )
    assert rule(built, "obs", "tgt", "observation").modifier == 0
    far = scene(
        "traveller",
        tokens=[token("obs", 0, 0), token("tgt", 100, 0)],
        lights=[light("l1", 186, 0, 60)],
        environment=NIGHT_3,
    )
    assert rule(far, "obs", "tgt", "observation").modifier == 3


def test_a_wall_between_light_and_target_stops_it() -> None:
    """Lights honour walls: a wall between the lamp and the target leaves the night diff mods."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0), token("tgt", 100, 0)],
        lights=[light("l1", 160, 0, 60)],
        walls=[wall("w1", 140, -100, 140, 100)],
        environment=NIGHT_3,
    )
    assert rule(built, "obs", "tgt", "observation").modifier == 3


@pytest.mark.parametrize(
    ("sight", "light_", "lit"), [(0, 20, False), (20, 0, True), (20, None, False), (0, None, True)]
)
def test_the_walls_light_restriction_decides_whether_a_light_reaches_the_target(
    sight: int, light_: int | None, lit: bool
) -> None:
    """Contract (walls' `light`): a wall's `light` restriction decides whether a light reaches the target.

    'it decides whether the wall stops a light from reaching a token …; `sight` alone decides whether it blocks a sight
    line' (absent: the wall's `sight` value) — rules-notes: a light covers a target when 'no wall that stops light
    stands between the light and the target's centre'.
    """
    stops = {"id": "w1", "c": [140, -100, 140, 100], "sight": sight}
    if light_ is not None:
        stops["light"] = light_
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0), token("tgt", 100, 0)],
        lights=[light("l1", 160, 0, 60)],
        walls=[stops],
        environment=NIGHT_3,
    )
    ruling = rule(built, "obs", "tgt", "observation")
    assert ruling.allowed  # the wall stands between the lamp and the target, not on the sight line
    assert ruling.modifier == (0 if lit else 3)


def test_a_wall_stopping_light_only_leaves_the_sight_line_clear() -> None:
    """Contract (walls' `light`): a wall that stops only light leaves the sight line clear.

    '`sight` alone decides whether it blocks a sight line' — a wall of light 20 and sight 0 between observer and target
    blocks nothing.
    """
    ruling = observe(100, walls=[{"id": "w1", "c": [50, -100, 50, 100], "sight": 0, "light": 20}])
    assert ruling.allowed and ruling.modifier == 0


def test_token_light_on_the_target() -> None:
    """A target carrying a white light (token `light`) is lit: seen as in daylight."""
    ruling = observe(environment=NIGHT_3, target_fields={"light": {"radius": 5}})
    assert ruling.modifier == 0
    assert entry(ruling, "light").region == "tgt"


# --- Sensors -------------------------------------------------------------------------------------------


def test_radar_unaffected_by_atmospheric_conditions() -> None:
    """Seed 000: radar users 'do not have their visibility … affected by any atmospheric conditions'."""
    ruling = observe(
        traits=("radar",), action="sensors", regions=[SMOKE], environment={"light": 3, "weather": "very-poor"}
    )
    assert ruling.allowed and ruling.modifier == 0
    assert ruling.extra["device"] == "radar" and ruling.extra["asset_kind"] == "sensors"
    assert any("jammed" in note for note in ruling.notes)


def test_radar_uses_other_modifiers() -> None:
    """Seed 000: radars 'use all of the modifiers from the "Other Modifiers" section' — taken as numbers."""
    ruling = observe(traits=("radar",), action="sensors", size=-1, other=2)
    assert ruling.modifier == 1


def test_sensors_without_radar_or_ladar_is_not_allowed() -> None:
    """Rules-notes: '`sensors` without radar or ladar is not allowed'."""
    ruling = observe(traits=("binoculars",), action="sensors")
    assert not ruling.allowed and ruling.modifier is None
    assert any("radar or a ladar" in note for note in ruling.notes)


def test_ladar_degraded_below_tl13_as_a_note() -> None:
    """Seed 000: ladar 'is degraded by smoke and bad weather at tech levels below 13': a note and reasons, no MOD."""
    ruling = observe(traits=("ladar",), action="sensors", environment={"weather": "poor"})
    assert ruling.modifier == 0 and any("TL 13" in note for note in ruling.notes)
    high = observe(traits=("ladar",), action="sensors", environment={"weather": "poor"}, tech_level=13)
    assert not any("TL 13" in note for note in high.notes)
    assert any("cannot be jammed" in note for note in high.notes)
    # The weather's own entry says the same, not "not affected" (which holds from TL 13 only).
    weather = next(m for m in ruling.modifiers if m.source == "weather")
    assert weather.value == 0 and not weather.applied and "degraded by this below TL 13" in (weather.reason or "")
    assert next(m for m in high.modifiers if m.source == "weather").reason == "Ladar is not affected by this."
    smoky = entry(observe(traits=("ladar",), action="sensors", regions=[SMOKE]), "zone")
    assert smoky.value == 0 and "degraded by this below TL 13" in (smoky.reason or "")


def test_radar_does_not_see_through_walls() -> None:
    """Seed 000: radar works 'within the radar's range and line of sight' — a wall stops it."""
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0, traits=["radar"]), token("tgt", 100, 0)],
        walls=[wall("w1", 50, -100, 50, 100)],
    )
    ruling = rule(built, "obs", "tgt", "sensors")
    assert not ruling.allowed and entry(ruling, "wall").region == "w1"


def test_sensors_without_radar_or_ladar_says_why_in_modifiers() -> None:
    """Rules-notes: `sensors` without radar or ladar lists a `device` entry saying why, not an empty `modifiers`.

    '`sensors` without radar or ladar is not allowed' — a `device` entry says why, and the request's other diff mods are
    listed, not applied, instead of an empty `modifiers`.
    """
    ruling = observe(traits=("binoculars",), action="sensors", other=2)
    assert not ruling.allowed and ruling.modifier is None
    missing = entry(ruling, "device")
    assert missing.applied and missing.value is None and missing.label == "No radar or ladar"
    assert "radar or a ladar" in (missing.reason or "")
    other = entry(ruling, "other")
    assert other.value == 2 and not other.applied and "Not applied" in (other.reason or "")
    spanish = observe(action="sensors", locale="es")
    assert [e.label for e in spanish.modifiers] == ["Sin radar ni ladar"]


# --- Walls ---------------------------------------------------------------------------------------------


WALL = wall("w1", 70, -100, 70, 100)


def test_wall_blocked_observation_at_night_still_lists_the_night() -> None:
    """Seed 000: behind a wall at night the task cannot be attempted, yet the night's +3 is listed, not applied.

    'The background light level equals the number of + diff mods' — at level 3 behind a wall the task cannot be
    attempted, yet the night +3 is listed (not applied, the wall named) with the wall.
    """
    ruling = observe(environment=NIGHT_3, walls=[WALL])
    assert not ruling.allowed and ruling.modifier is None
    night = entry(ruling, "night")
    assert night.value == 3 and not night.applied and night.reason == "Not applied: a wall blocks the line of sight."
    assert not entry(ruling, "range").applied
    wall_entry = entry(ruling, "wall")
    assert wall_entry.applied and wall_entry.region == "w1"
    spanish = observe(environment=NIGHT_3, walls=[WALL], locale="es")
    assert entry(spanish, "night").reason == "No se aplica: un muro bloquea la línea de visión."


def test_wall_blocked_observation_lists_every_condition_of_the_device() -> None:
    """Seed 000: behind a wall, every condition of the observer's device is listed, none applied.

    'All modifiers, from visibility conditions as well as other modifiers, are cumulative' — a thermal viewer behind a
    wall: range, night, weather, smoke and size all listed, none applied.
    """
    ruling = observe(
        100,
        traits=("thermal-viewer",),
        environment={"light": 3, "weather": "very-poor"},
        regions=[SMOKE],
        walls=[WALL],
        size=1,
    )
    assert not ruling.allowed and ruling.modifier is None
    listed = [(e.source, e.value, e.applied) for e in ruling.modifiers]
    assert listed == [
        ("range", -2, False),
        ("night", 0, False),
        ("weather", 1, False),
        ("zone", 1, False),
        ("size", 1, False),
        ("wall", None, True),
    ]
    night = entry(ruling, "night").reason or ""
    assert night.startswith("Thermal viewer is not affected") and night.endswith("a wall blocks the line of sight.")
    assert entry(ruling, "zone").region == "r-smoke"


def test_wall_blocked_observation_lists_the_light_on_the_target() -> None:
    """Seed 000: behind a wall, the light covering the target is still listed, not applied.

    A white light lets Observation go 'as if it were daylight'.
    """
    ruling = observe(environment=NIGHT_3, target_fields={"light": {"radius": 5}}, walls=[WALL])
    assert not ruling.allowed
    lamp = entry(ruling, "light")
    assert lamp.region == "tgt" and not lamp.applied and "Not applied" in (lamp.reason or "")


def test_other_options_must_be_numbers() -> None:
    """Target size and other modifiers are whole numbers; anything else names the option at fault."""
    with pytest.raises(RulingError) as excinfo:
        observe(size="large")
    assert excinfo.value.field == "options.size"


# --- Encounter ranges ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("light_level", "weather", "woods", "expected"),
    [
        ("day", "good", False, 1200),
        ("day", "poor", False, 600),
        ("day", "very-poor", False, 300),
        (1, "good", False, 400),
        (2, "good", False, 200),
        (3, "good", False, 1200 / 9),
        (3, "poor", False, 1200 / 18),
        (2, "very-poor", False, 50),
        (3, "very-poor", True, 1200),
    ],
)
def test_encounter_ranges(light_level: Any, weather: str, woods: bool, expected: float) -> None:
    """Seed 000: 'halve … quarter … At night, divide … by 3× the background light level, then modify for … weather'."""
    assert encounter_range(1200, light=light_level, weather=weather, woods=woods) == pytest.approx(expected)


def test_encounter_range_keeps_fractions_and_explains() -> None:
    """Rules-notes: 'Keep fractions; round only for display' — 100 m at light 3 in poor weather is 100/18 m."""
    explained = explain_encounter_range(100, light=3, weather="poor", woods=False, locale="es")
    assert explained.range == 100 / 18
    assert explained.steps[-1] == "Distancia de encuentro: 5.56 m."
    assert explained.citations and explained.citations[0].startswith(
        "Traveller tactical visibility rules (2011-03-17) — "
    )


def test_encounter_range_rejects_bad_input() -> None:
    """A light level of 4 or an unknown weather is a ValueError, not a guess."""
    with pytest.raises(ValueError, match="light"):
        encounter_range(100, light=4, weather="good", woods=False)
    with pytest.raises(ValueError, match="weather"):
        encounter_range(100, light="day", weather="fog", woods=False)


# --- Validation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zone",
    [
        {"type": "smoke"},
        {"type": "smoke", "density": 0},
        {"type": "smoke", "density": 1.5},
        {"type": "smoke", "density": True},
        {"type": "woods", "density": 1},
        {"type": "illuminated"},
        {"type": "illuminated", "by": "torch"},
    ],
)
def test_malformed_zones_are_rejected(zone: dict[str, Any]) -> None:
    """Zone parameters: smoke density a whole number from 1, woods none, illuminated `by` from the list."""
    with pytest.raises(ValueError):
        RULESET.validate_zone(Zone.model_validate(zone))


@pytest.mark.parametrize(
    "environment", [{"light": 0}, {"light": 4}, {"light": "night"}, {"light": True}, {"weather": "fog"}]
)
def test_malformed_environment_is_rejected_by_the_scene(environment: dict[str, Any]) -> None:
    """Environment: light 'day' or 1…3, weather good/poor/very-poor; a scene with anything else is rejected."""
    with pytest.raises(SceneRejected):
        scene("traveller", tokens=[token("obs", 0, 0)], environment=environment)


# --- Texts, locales and the wire --------------------------------------------------------------------------


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_exists_in_both_locales_with_the_same_placeholders() -> None:
    """Every label, note and reason has an English and a Spanish text taking the same values."""
    texts: list[Any] = list(DATA.texts.values())
    texts += [level.label for level in DATA.ladder.levels]
    texts += [DATA.range.label, DATA.night.label]
    for table in (DATA.weather, DATA.zones, DATA.lights, DATA.devices, DATA.actions, DATA.options):
        texts += [item.label for item in table.values()]
    for text in texts:
        assert text.en.strip() and text.es.strip()
        assert _placeholders(text.en) == _placeholders(text.es), text


def test_every_text_key_the_code_uses_exists() -> None:
    """Each `_text("key")` in traveller.py, and each key built from a prefix, names a text in the data."""
    source = (Path(__file__).parents[3] / "bridge" / "core" / "rules" / "traveller.py").read_text()
    keys = set(re.findall(r'_text\(\s*"(\w+)"', source)) | set(re.findall(r"texts\[\"(\w+)\"\]", source))
    keys |= {f"no_effect_{o}" for o in ("woods", "smoke", "poor_weather")}
    keys |= {f"light_no_effect_{o}" for o in ("woods", "smoke", "poor_weather")}
    keys |= {"asset_observation", "asset_sensors", "foreign_zone", "foreign_trait"}
    assert keys and keys <= set(DATA.texts)


def test_spanish_scene_gets_spanish_labels() -> None:
    """Texts are in the scene's locale: a Spanish scene reads 'Noche' and 'Humo'."""
    ruling = observe(environment={"light": 2}, regions=[SMOKE], locale="es")
    labels = {e.label for e in ruling.modifiers}
    assert "Noche (nivel de luz de fondo 2)" in labels and "Humo" in labels


def test_other_rulesets_zone_gets_a_note() -> None:
    """Contract: a zone type of another ruleset is ignored with a note — never a silent zero."""
    ruling = observe(regions=[rect_zone("r-dark", 40, -100, 10, 200, "darkness", penalty=-3)])
    assert ruling.modifier == 0 and any("r-dark" in note for note in ruling.notes)


def test_adjudication_carries_difficulty_asset_and_device_at_top_level() -> None:
    """Through the session: `difficulty`, `asset`, `device` at the answer's top level, the rest in `details`."""
    session = Session(Worlds(), offline=True)
    built = scene(
        "traveller",
        tokens=[token("obs", 0, 0, traits=["image-intensifier"]), token("tgt", 250, 0)],
        environment=NIGHT_3,
    )
    session.receive(json.dumps({"type": "scene.sync", "id": "q1", "scene": built.model_dump(mode="json")}))
    effects = session.receive(
        json.dumps(
            {
                "type": "adjudicate",
                "id": "a1",
                "scene": "s-test",
                "actor": "obs",
                "target": "tgt",
                "action": "observation",
                "log": False,
            }
        )
    )
    answer = dump_message(effects[0].message)  # type: ignore[union-attr]
    assert answer["modifier"] == 1 and answer["difficulty"] == "difficult"
    assert answer["asset"] == 2 and answer["device"] == "image-intensifier"
    assert answer["details"]["diff_mods"] == 1 and "difficulty" not in answer["details"]
