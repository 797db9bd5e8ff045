"""GURPS 4e visibility (seed 003): attacks in darkness, blindness, invisibility, smoke, lights; defences."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

import pytest

from bridge.core.rules import RULESETS, RulingError
from bridge.core.rules.gurps import GurpsRuleset
from bridge.core.scene import Zone
from bridge.core.world import SceneRejected

from .scenes import light, rect_zone, rule, scene, token, wall

RULESET = RULESETS["gurps-4e"]
assert isinstance(RULESET, GurpsRuleset)
DATA = RULESET.data

# A 50 px hex-free grid of 1 yard per space: tokens are 1 yd wide, 50 px = 1 yd.
YD = 50


def fight(
    *,
    attacker: tuple[str, ...] = (),
    defender: tuple[str, ...] = (),
    action: str = "attack",
    environment: dict[str, Any] | None = None,
    regions: list[dict[str, Any]] | None = None,
    lights: list[dict[str, Any]] | None = None,
    walls: list[dict[str, Any]] | None = None,
    attacker_fields: dict[str, Any] | None = None,
    locale: str = "en",
    **options: Any,
) -> Any:
    """`a` at the origin and `b` 10 yd east; the actor is `a` (attacking `b`, or defending against it)."""
    built = scene(
        "gurps-4e",
        tokens=[
            token("a", 0, 0, traits=list(attacker), **(attacker_fields or {})),
            token("b", 10 * YD, 0, traits=list(defender)),
        ],
        regions=regions,
        lights=lights,
        walls=walls,
        environment=environment,
        locale=locale,
        grid_distance=1,
        units="yd",
    )
    return rule(built, "a", "b", action, **options)


def applied(ruling: Any) -> list[Any]:
    return [e for e in ruling.modifiers if e.applied and e.value is not None]


def has_note(ruling: Any, text: str) -> bool:
    return any(text in note for note in ruling.notes)


TOTAL_DARK = {"darkness": -10}
AROUND_B = (9 * YD, -YD, 2 * YD, 2 * YD)  # a box around the target
AROUND_A = (-YD, -YD, 2 * YD, 2 * YD)  # a box around the attacker
SMOKE_BETWEEN = rect_zone("r-smoke", 5 * YD, -YD, YD // 2, 2 * YD, "smoke")


# --- Attacks ---------------------------------------------------------------------------------------


def test_clear_attack_has_no_penalty() -> None:
    """Nothing hides the foe: the attack is at 0 with no notes about hearing."""
    ruling = fight()
    assert ruling.allowed and ruling.modifier == 0 and not ruling.notes


def test_blind_attacker_attacks_at_minus_10() -> None:
    """Seed 003: 'If the attacker is blind … He attacks at -10 … Roll hit location randomly.'"""
    ruling = fight(attacker=("blind",))
    assert ruling.modifier == -10
    assert has_note(ruling, "Hearing-2") and has_note(ruling, "hit location randomly")
    assert ruling.extra["hearing_roll"] == -2 and ruling.extra["random_hit_location"] is True


def test_blind_attacker_accustomed_attacks_at_minus_6() -> None:
    """Seed 003: 'He attacks at -10 (-6 if he is accustomed to being blind).'"""
    assert fight(attacker=("blind", "accustomed-to-blindness")).modifier == -6


def test_total_darkness_is_minus_10() -> None:
    """Seed 003: 'If the attacker is … in total darkness, he can make a Hearing-2 roll … He attacks at -10'."""
    ruling = fight(environment=TOTAL_DARK)
    assert ruling.modifier == -10 and has_note(ruling, "Hearing-2")


def test_total_darkness_accustomed_to_blindness_is_minus_6() -> None:
    """Rules-notes: 'Attacker sees nothing (blind, total darkness): −10, or −6 if accustomed to blindness'."""
    assert fight(environment=TOTAL_DARK, attacker=("accustomed-to-blindness",)).modifier == -6


def test_invisible_foe_is_minus_6() -> None:
    """Seed 003: 'If only the attacker's foe is invisible, use the rules above, but the attack penalty is only -6.'"""
    ruling = fight(defender=("invisible",))
    assert ruling.modifier == -6 and has_note(ruling, "Hearing-2") and has_note(ruling, "randomly")


def test_foe_in_smoke_is_minus_4_without_hearing_roll() -> None:
    """Seed 003: 'in a single smoke-filled hex …, no Hearing roll is required and the attack penalty is only -4.'"""
    ruling = fight(regions=[rect_zone("r-smoke", *AROUND_B, "smoke")])
    assert ruling.modifier == -4
    assert has_note(ruling, "no Hearing roll") and not has_note(ruling, "Hearing-2 roll")
    assert ruling.extra["hearing_roll"] is None and ruling.extra["random_hit_location"] is True


def test_smoke_anywhere_on_the_line_counts() -> None:
    """Rules-notes: 'Smoke anywhere on the line: the attacker cannot see the foe; −4 with the location known.'"""
    ruling = fight(regions=[SMOKE_BETWEEN])
    assert ruling.modifier == -4 and applied(ruling)[0].region == "r-smoke"


@pytest.mark.parametrize("penalty", [-1, -5, -9])
def test_partial_darkness_from_the_scene(penalty: int) -> None:
    """Rules-notes: 'Partial darkness is −1…−9' — the scene's `darkness` applies as is, no Hearing roll."""
    ruling = fight(environment={"darkness": penalty})
    assert ruling.modifier == penalty and not ruling.notes


def test_darkness_zone_overrides_the_scene() -> None:
    """Rules-notes: 'a `darkness` zone containing the target overrides the scene's `darkness` (a lit room …)'."""
    ruling = fight(environment={"darkness": -8}, regions=[rect_zone("r-room", *AROUND_B, "darkness", penalty=-2)])
    assert ruling.modifier == -2 and applied(ruling)[0].region == "r-room"


def test_several_darkness_zones_take_the_worst() -> None:
    """Rules-notes: darkness zones containing the target — 'several zones: the worst'."""
    regions = [
        rect_zone("r-dim", *AROUND_B, "darkness", penalty=-2),
        rect_zone("r-black", *AROUND_B, "darkness", total=True),
    ]
    assert fight(regions=regions).modifier == -10


def test_darkness_zone_with_no_level_is_total_darkness() -> None:
    """Seed 003: a darkness zone left blank is total darkness (-10), and a torch the attacker sees makes it -3.

    Seed 003: 'reduces the penalty from -10 (total darkness) to -3'. A zone with no level follows the zone sheet's hint
    (foundry-module/lang/en.json): '−1 to −9. Leave blank for total darkness.'
    """
    blank = rect_zone("r-black", *AROUND_B, "darkness")
    ruling = fight(regions=[blank])
    assert ruling.modifier == -10 and applied(ruling)[0].region == "r-black" and has_note(ruling, "Hearing-2")
    assert fight(regions=[blank], lights=[light("torch", 11 * YD, 0, 2)]).modifier == -3
    total = rect_zone("r-black", *AROUND_B, "darkness", total=True)
    assert fight(regions=[blank]).modifiers == fight(regions=[total]).modifiers


def test_darkness_zone_around_the_attacker_only_does_not_count() -> None:
    """Rules-notes: 'Darkness is the light where the target stands' — dark round the attacker alone: no penalty."""
    assert fight(regions=[rect_zone("r-dark", *AROUND_A, "darkness", penalty=-6)]).modifier == 0


def test_night_vision_ignores_n_points_of_partial_darkness() -> None:
    """Rules-notes: 'Night Vision N ignores N points of partial darkness' — Night Vision 3 in -5 leaves -2."""
    assert fight(environment={"darkness": -5}, attacker=("night-vision-3",)).modifier == -2
    assert fight(environment={"darkness": -2}, attacker=("night-vision-5",)).modifier == 0


def test_night_vision_never_total_darkness() -> None:
    """Rules-notes: Night Vision ignores partial darkness, 'never total darkness'."""
    ruling = fight(environment=TOTAL_DARK, attacker=("night-vision-9",))
    assert ruling.modifier == -10


@pytest.mark.parametrize("trait", ["dark-vision", "infravision"])
def test_dark_vision_and_infravision_see_in_total_darkness(trait: str) -> None:
    """Rules-notes: 'Dark Vision ignores all darkness; Infravision sees warm targets in total darkness …'."""
    ruling = fight(environment=TOTAL_DARK, attacker=(trait,))
    assert ruling.modifier == 0 and not has_note(ruling, "Hearing")


def test_infravision_does_not_see_a_cold_target() -> None:
    """Rules-notes: Infravision sees 'warm targets' — `options.warm: false` leaves total darkness."""
    assert fight(environment=TOTAL_DARK, attacker=("infravision",), warm=False).modifier == -10


def test_torch_turns_minus_10_into_minus_3() -> None:
    """Seed 003: 'any such light within line of sight reduces the penalty from -10 (total darkness) to -3'."""
    ruling = fight(environment=TOTAL_DARK, lights=[light("torch", 11 * YD, 0, 2)])
    assert ruling.modifier == -3 and not has_note(ruling, "Hearing")
    lamp = next(e for e in ruling.modifiers if e.source == "light")
    assert lamp.applied and lamp.region == "torch"


def test_carried_flashlight_lights_the_target_within_its_radius() -> None:
    """Rules-notes: 'light radius is the light's own (… heavy 10 yd)' — a 10 yd flashlight reaches a foe 10 yd off."""
    ruling = fight(environment=TOTAL_DARK, attacker_fields={"light": {"radius": 10}})
    assert ruling.modifier == -3


def test_light_out_of_radius_does_not_help() -> None:
    """Seed 003: 'Almost every light source has a limited range or radius' — a 5 yd flashlight 10 yd away: none."""
    ruling = fight(environment=TOTAL_DARK, attacker_fields={"light": {"radius": 5}})
    assert ruling.modifier == -10


def test_light_out_of_the_attackers_line_of_sight_does_not_help() -> None:
    """Rules-notes: 'A light helps when … the light is within the attacker's line of sight'."""
    walls = [wall("w1", 10 * YD, -3 * YD, 12 * YD, -3 * YD), wall("w2", 8 * YD, -5 * YD, 8 * YD, -3 * YD)]
    ruling = fight(environment=TOTAL_DARK, lights=[light("torch", 10 * YD, -4 * YD, 5)], walls=walls[1:])
    assert ruling.modifier == -10
    lamp = next(e for e in ruling.modifiers if e.source == "light")
    assert not lamp.applied and "line of sight" in (lamp.reason or "")


@pytest.mark.parametrize(("sight", "light_", "modifier"), [(20, 0, -3), (0, 20, -10), (0, None, -3), (20, None, -10)])
def test_the_walls_light_restriction_decides_whether_a_torch_reaches_the_foe(
    sight: int, light_: int | None, modifier: int
) -> None:
    """Contract: a wall's `light` (absent: its `sight`) decides whether it stops a torch from lighting the foe.

    Contract (walls' `light`): 'it decides whether the wall stops a light from reaching a token …; `sight` alone decides
    whether it blocks a sight line' (absent: the wall's `sight` value) — a wall between the torch (2 yd north of the
    foe) and the foe, off the attacker's lines to both.
    """
    stops: dict[str, Any] = {"id": "w1", "c": [10 * YD, -1 * YD, 11 * YD, -1 * YD], "sight": sight}
    if light_ is not None:
        stops["light"] = light_
    ruling = fight(environment=TOTAL_DARK, lights=[light("torch", 10.5 * YD, -2 * YD, 3)], walls=[stops])
    assert ruling.allowed and ruling.modifier == modifier


def test_light_lifts_partial_darkness_worse_than_minus_3() -> None:
    """Rules-notes: a light 'turns any darkness worse than −3 into −3' — -6 becomes -3, -2 stays -2."""
    torch = [light("torch", 11 * YD, 0, 2)]
    assert fight(environment={"darkness": -6}, lights=torch).modifier == -3
    assert fight(environment={"darkness": -2}, lights=torch).modifier == -2


def test_light_then_night_vision() -> None:
    """Decision: the light makes the darkness partial (-3), then Night Vision 2 ignores 2 points of it: -1."""
    ruling = fight(environment=TOTAL_DARK, lights=[light("torch", 11 * YD, 0, 2)], attacker=("night-vision-2",))
    assert ruling.modifier == -1


def test_unnatural_darkness_ignores_lights_and_night_vision() -> None:
    """Rules-notes: 'Unnatural darkness: lights and Night Vision do not help; Dark Vision and Infravision do.'"""
    regions = [rect_zone("r-un", *AROUND_B, "unnatural-darkness")]
    torch = [light("torch", 11 * YD, 0, 2)]
    assert fight(regions=regions, lights=torch, attacker=("night-vision-5",)).modifier == -10
    assert fight(regions=regions, attacker=("dark-vision",)).modifier == 0
    assert fight(regions=regions, attacker=("infravision",)).modifier == 0


def test_vision_penalties_do_not_add_up() -> None:
    """Rules-notes: 'Several vision penalties do not add up: take the worst single one, never beyond −10.'"""
    ruling = fight(defender=("invisible",), regions=[SMOKE_BETWEEN], environment={"darkness": -3})
    assert ruling.modifier == -6 and len(applied(ruling)) == 1
    worst = fight(attacker=("blind",), defender=("invisible",), environment=TOTAL_DARK, regions=[SMOKE_BETWEEN])
    assert worst.modifier == -10
    assert sum(1 for e in worst.modifiers if e.source == "vision") == 4


def test_sight_blocking_wall_makes_the_attack_impossible() -> None:
    """Rules-notes: 'A sight-blocking wall makes a ranged attack impossible.'"""
    ruling = fight(walls=[wall("w1", 5 * YD, -YD, 5 * YD, YD)])
    assert not ruling.allowed and ruling.modifier is None


WALL_BETWEEN = wall("w1", 5 * YD, -YD // 2, 5 * YD, YD // 2)  # across the line, clear of anything 1 yd off it


def test_wall_blocked_attack_in_total_darkness_still_lists_the_darkness() -> None:
    """Seed 003: a wall-blocked attack in total darkness still lists the darkness, not applied, beside the wall.

    Seed 003: 'in total darkness … He attacks at -10' — behind a sight-blocking wall the attack cannot be made, yet the
    answer still lists the darkness candidate (not applied, the wall named) and the wall, in English and in Spanish.
    """
    ruling = fight(environment=TOTAL_DARK, walls=[WALL_BETWEEN])
    assert not ruling.allowed and ruling.modifier is None
    darkness = next(e for e in ruling.modifiers if e.source == "vision")
    assert darkness.label == "Total darkness" and darkness.value == -10 and not darkness.applied
    assert darkness.reason is not None and darkness.reason.startswith("Not applied: a wall blocks")
    walls = [e for e in ruling.modifiers if e.applied]
    assert [(e.source, e.region) for e in walls] == [("wall", "w1")]
    assert not has_note(ruling, "Hearing") and not has_note(ruling, "randomly")
    spanish = fight(environment=TOTAL_DARK, walls=[WALL_BETWEEN], locale="es")
    assert spanish.modifiers[0].label == "Oscuridad total"
    assert (spanish.modifiers[0].reason or "").startswith("No se aplica: un muro bloquea")


def test_wall_blocked_attack_lists_every_vision_candidate_and_light() -> None:
    """Rules-notes: a wall-blocked attack lists every vision candidate and the light, none of them applied.

    Rules-notes: 'A sight-blocking wall makes a ranged attack impossible' — a blind attacker, an invisible foe in total
    darkness lit by a torch the attacker sees, smoke on the line: all listed, none applied.
    """
    torch = light("torch", 10 * YD, 3 * YD, 3.5)  # reaches the foe; the attacker sees it past the wall's end
    ruling = fight(
        attacker=("blind",),
        defender=("invisible",),
        environment=TOTAL_DARK,
        regions=[SMOKE_BETWEEN],
        lights=[torch],
        walls=[WALL_BETWEEN],
    )
    assert not ruling.allowed and ruling.modifier is None
    vision = {e.label: e.value for e in ruling.modifiers if e.source == "vision"}
    smoke = "Foe in smoke, location known"
    assert vision == {"Attacker blind": -10, "Total darkness": -3, "Foe invisible": -6, smoke: -4}
    lamp = next(e for e in ruling.modifiers if e.source == "light")
    assert lamp.region == "torch" and "-10 becomes -3" in (lamp.reason or "")
    assert all("Not applied" in (e.reason or "") for e in ruling.modifiers if e.source != "wall")
    assert [e.source for e in ruling.modifiers if e.applied] == ["wall"]


# --- Defences --------------------------------------------------------------------------------------


def test_dodge_an_invisible_attacker_at_minus_4() -> None:
    """Seed 003: 'If the attacker (including his weapon) is invisible but the defender is aware …, he may dodge'."""
    ruling = fight(action="dodge", defender=("invisible",))
    assert ruling.allowed and ruling.modifier == -4 and not has_note(ruling, "Hearing")


@pytest.mark.parametrize("action", ["parry", "block"])
def test_parry_and_block_need_hearing_roll(action: str) -> None:
    """Seed 003: 'If the defender makes a Hearing-2 roll, he may also parry or block – still at -4.'"""
    ruling = fight(action=action, defender=("invisible",))
    assert ruling.modifier == -4 and has_note(ruling, "Hearing-2") and ruling.extra["hearing_roll"] == -2


@pytest.mark.parametrize("action", ["dodge", "parry", "block"])
def test_unaware_defender_gets_no_defence(action: str) -> None:
    """Seed 003: 'If he is completely unaware of his attacker, he gets no defense at all!'"""
    ruling = fight(action=action, defender=("invisible",), aware=False)
    assert not ruling.allowed and ruling.modifier is None and has_note(ruling, "no defence")
    # Contract: 'modifiers explains every candidate' — the one that decides is listed, not left empty.
    [entry] = ruling.modifiers
    assert entry.applied and entry.value is None and "no defence" in (entry.reason or "")


def test_blind_defender_dodges_at_minus_4() -> None:
    """Rules-notes: −4 when 'the defender is blind'."""
    assert fight(action="dodge", attacker=("blind",)).modifier == -4


def test_defender_in_smoke_defends_at_minus_4() -> None:
    """Rules-notes: −4 when 'the defender stands in smoke'."""
    ruling = fight(action="dodge", regions=[rect_zone("r-smoke", *AROUND_A, "smoke")])
    assert ruling.modifier == -4 and applied(ruling)[0].region == "r-smoke"


@pytest.mark.parametrize("zone", ["smoke", "unnatural-darkness"])
def test_attacker_in_smoke_or_unnatural_darkness_defended_normally(zone: str) -> None:
    """Seed 003: 'If the attacker is in smoke or unnatural darkness, but the defender is not, he defends normally'."""
    ruling = fight(action="parry", regions=[rect_zone("r-z", *AROUND_B, zone)])
    assert ruling.modifier == 0 and not has_note(ruling, "Hearing")
    assert any("defends normally" in (e.reason or "") for e in ruling.modifiers)


def test_defender_in_total_darkness_defends_at_minus_4() -> None:
    """Rules-notes: −4 when the defender stands 'in total darkness its vision does not pierce'."""
    assert fight(action="dodge", environment=TOTAL_DARK).modifier == -4
    assert fight(action="dodge", environment=TOTAL_DARK, attacker=("dark-vision",)).modifier == 0


def test_defender_lit_by_a_torch_defends_normally() -> None:
    """Seed 003: a torch turns total darkness into -3 — no longer total, so the defender sees the weapon coming."""
    ruling = fight(action="dodge", environment=TOTAL_DARK, attacker_fields={"light": {"radius": 3}})
    assert ruling.modifier == 0


def test_partial_darkness_does_not_penalise_a_defence() -> None:
    """Rules-notes: 'Partial darkness alone does not penalise a defence'."""
    assert fight(action="block", environment={"darkness": -9}).modifier == 0


def test_several_defence_causes_still_minus_4() -> None:
    """Rules-notes: −4 when the defender cannot see the weapon coming — once, whatever the causes."""
    ruling = fight(action="dodge", attacker=("blind",), defender=("invisible",), environment=TOTAL_DARK)
    assert ruling.modifier == -4 and len(applied(ruling)) == 1
    assert sum(1 for e in ruling.modifiers if e.source == "defence") == 3


# --- Validation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zone",
    [
        {"type": "darkness", "penalty": 0},
        {"type": "darkness", "penalty": -10},
        {"type": "darkness", "penalty": -2.5},
        {"type": "darkness", "total": False},
        {"type": "darkness", "penalty": -2, "total": True},
        {"type": "smoke", "density": 2},
        {"type": "unnatural-darkness", "penalty": -3},
    ],
)
def test_malformed_zones_are_rejected(zone: dict[str, Any]) -> None:
    """Zone parameters: darkness takes penalty -1…-9, total: true or nothing; smoke and unnatural darkness none."""
    with pytest.raises(ValueError):
        RULESET.validate_zone(Zone.model_validate(zone))


@pytest.mark.parametrize("environment", [{"darkness": 1}, {"darkness": -11}, {"darkness": "dark"}, {"darkness": -2.5}])
def test_malformed_environment_is_rejected_by_the_scene(environment: dict[str, Any]) -> None:
    """Environment: `darkness` a whole number from 0 to -10; a scene with anything else is rejected."""
    with pytest.raises(SceneRejected):
        scene("gurps-4e", tokens=[token("a", 0, 0)], environment=environment)


def test_options_aware_must_be_a_boolean() -> None:
    """`aware` and `warm` are true or false; anything else names the option at fault."""
    with pytest.raises(RulingError) as excinfo:
        fight(warm="yes")
    assert excinfo.value.field == "options.warm"


# --- Texts and locales -------------------------------------------------------------------------------


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_exists_in_both_locales_with_the_same_placeholders() -> None:
    """Every label, note and reason has an English and a Spanish text taking the same values."""
    texts: list[Any] = list(DATA.texts.values())
    texts += [DATA.darkness.scene_label, DATA.defence.label]
    for table in (DATA.conditions, DATA.zones, DATA.traits, DATA.actions):
        texts += [item.label for item in table.values()]
    for text in texts:
        assert text.en.strip() and text.es.strip()
        assert _placeholders(text.en) == _placeholders(text.es), text


def test_every_text_key_the_code_uses_exists() -> None:
    """Each `_text("key")` in gurps.py names a text in the data."""
    source = (Path(__file__).parents[3] / "bridge" / "core" / "rules" / "gurps.py").read_text()
    keys = set(re.findall(r'_text\(\s*"(\w+)"', source)) | {"infravision", "dark_vision", "light_defender"}
    keys |= {"foreign_zone", "foreign_trait"}
    assert keys and keys <= set(DATA.texts)


def test_spanish_scene_gets_spanish_notes() -> None:
    """Texts are in the scene's locale: a Spanish blind attacker reads 'Oído-2' and 'Atacante ciego'."""
    ruling = fight(attacker=("blind",), locale="es")
    assert has_note(ruling, "Oído-2") and applied(ruling)[0].label == "Atacante ciego"


def test_other_rulesets_trait_gets_a_note() -> None:
    """Contract: another ruleset's trait is ignored with a note naming it and the ruleset by label, never by id.

    Never a silent zero; the note names the trait by its label ("Binoculars") and the ruleset by its title ("GURPS 4e"),
    never by their ids.
    """
    ruling = fight(attacker=("binoculars",))
    assert ruling.modifier == 0 and has_note(ruling, "Binoculars") and has_note(ruling, "GURPS 4e")
    assert not has_note(ruling, "binoculars") and not has_note(ruling, "gurps-4e")


@pytest.mark.parametrize(("radius", "modifier"), [(250, -10), (249, 0)])
def test_a_foe_whose_corner_lies_on_a_round_pool_of_darkness_stands_in_it(radius: float, modifier: int) -> None:
    """Contract and rules-notes: a foe whose corner lies on a round pool of total darkness stands in it (-10).

    Contract ('a token whose footprint touches a zone is inside it … exactly, circles and ellipses included (a tangent
    or a corner on the curve counts)') with rules-notes ('a `darkness` zone containing the target overrides the scene's
    `darkness`'): the foe's corner (475, −25) lies at (150, 200) from the centre of a radius-250 pool of total darkness
    — between the vertices it is drawn with — so it stands in it; a radius of 249 leaves it out (0).
    """
    pool = {
        "id": "r-dark",
        "shapes": [{"type": "circle", "x": 325, "y": -225, "radius": radius}],
        "zone": {"type": "darkness", "total": True},
    }
    assert fight(regions=[pool]).modifier == modifier
