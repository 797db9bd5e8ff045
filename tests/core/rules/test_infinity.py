"""Infinity N4 and CodeOne visibility zones, rule by rule, each test quoting the seed situation.

Layout used throughout: the actor A stands at x 0–100, the target T at x 1000–1100, both y 400–500,
so the centre line runs along y = 450; zones are placed on or off that line.
"""

from __future__ import annotations

import pytest

from tests.scenes import applied, by_region, rect_region, rule, scene, token, wall

A = token("a", 0, 400)
T = token("t", 1000, 400)


def on_line(region_id: str, zone: str, x: float = 300, **kw: object) -> dict[str, object]:
    """A 200×200 zone across the centre line, starting at ``x``."""
    return rect_region(region_id, zone, x, 350, 200, 200, **kw)  # type: ignore[arg-type]


def around(region_id: str, zone: str, x: float) -> dict[str, object]:
    """A zone that holds the token standing at ``x`` (and nothing else on the line)."""
    return rect_region(region_id, zone, x - 50, 350, 200, 200)


def with_traits(base: dict[str, object], *traits: str) -> dict[str, object]:
    return {**base, "traits": list(traits)}


#: Every edition of infinity-n4, oldest first (rules-notes "Editions").
EDITIONS = ["original", "1.2", "1.3", "2.1", "current"]

#: How each source is named to people (rules-notes "How sources are named"); seed file names never show.
SEED_001 = "Infinity N4 Core Rules — Visibility Conditions: "
SEED_004 = "Infinity N4 Reglamento — Condiciones de Visibilidad: "
SEED_002_ORIGINAL = "Infinity N4 Core Rules, original text — Visibility Conditions: "
SEED_002_U12 = "Infinity N4 rules update 1.2 (Jan 2022) — Visibility Conditions: "
SEED_002_U21 = "Infinity N4 rules, PDF 2.1 (July 2023) — Visibility Conditions: "
NOTES = "Sightline rules notes — "

#: The Zero Visibility passage each edition's ruling stands on.
ZERO_TEXT = {
    "original": SEED_002_ORIGINAL + "Troopers cannot draw LoF through a Zero Visibility Zone.",
    "1.2": SEED_002_U12 + "Troopers cannot draw LoF into, through, or out of a Zero Visibility Zone.",
    "1.3": SEED_002_U12 + "Troopers cannot draw LoF into, through, or out of a Zero Visibility Zone.",
    "2.1": SEED_002_U12 + "Troopers cannot draw LoF into, through, or out of a Zero Visibility Zone.",
    "current": SEED_001 + "LoF cannot be drawn into, through, or out of a Zero Visibility Zone.",
}

#: The non-stacking passage each edition's ruling stands on (002's Original text until 2.1 replaced it).
NOT_STACKING_TEXT = {
    "original": SEED_002_ORIGINAL + "Visibility Zone MODs never stack with other Visibility Zone MODs.",
    "1.2": SEED_002_ORIGINAL + "Visibility Zone MODs never stack with other Visibility Zone MODs.",
    "1.3": SEED_002_ORIGINAL + "Visibility Zone MODs never stack with other Visibility Zone MODs.",
    "2.1": SEED_002_U21 + "Visibility Zone MODs never stack with other Visibility Zone MODs.",
    "current": SEED_001 + "Visibility Zone MODs never stack with other Visibility Zone MODs.",
}


# --- Low, Poor, Zero ---------------------------------------------------------------------------------


def test_low_visibility_zone_applies_minus_3() -> None:
    """001: 'Low Visibility Zones apply a MOD of -3.' — a BS Attack through one takes -3."""
    answer = rule(scene(regions=[on_line("r-low", "low")], tokens=[A, T]), "a", "t")
    assert answer["allowed"] is True
    assert answer["modifier"] == -3
    assert answer["crossings"] == [{"region": "r-low", "zone": "low", "kind": "through"}]
    assert any("Low Visibility Zones apply a MOD of -3." in c for c in answer["citations"])


def test_poor_visibility_zone_applies_minus_6() -> None:
    """001: 'Poor Visibility Zones apply a MOD of -6.'"""
    answer = rule(scene(regions=[on_line("r-poor", "poor")], tokens=[A, T]), "a", "t")
    assert answer["modifier"] == -6
    assert by_region(answer, "r-poor") == {
        "source": "zone",
        "value": -6,
        "applied": True,
        "label": "Poor Visibility Zone",
        "region": "r-poor",
        "zone": "poor",
    }


@pytest.mark.parametrize(
    ("zone_x", "kind"),
    [(300, "through"), (-50, "from"), (950, "into")],
)
def test_zero_visibility_blocks_lof_into_through_and_out_of(zone_x: float, kind: str) -> None:
    """001: 'LoF cannot be drawn into, through, or out of a Zero Visibility Zone.'"""
    answer = rule(scene(regions=[on_line("r-zero", "zero", x=zone_x)], tokens=[A, T]), "a", "t")
    assert answer["crossings"][0]["kind"] == kind
    assert answer["allowed"] is False
    assert answer["modifier"] is None
    assert by_region(answer, "r-zero")["applied"] is True


def test_zero_visibility_blocks_lof_within() -> None:
    """001: no LoF out of a Zero zone — both troopers inside one zone ('within') cannot see each other."""
    big = rect_region("r-zero", "zero", -100, 300, 1400, 400)
    answer = rule(scene(regions=[big], tokens=[A, T]), "a", "t")
    assert answer["crossings"] == [{"region": "r-zero", "zone": "zero", "kind": "within"}]
    assert answer["allowed"] is False


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("zone", ["zero", "smoke", "eclipse"])
@pytest.mark.parametrize(
    ("zone_x", "kind", "kind_text"),
    [(300, "through", "through"), (-50, "from", "out of"), (950, "into", "into")],
)
def test_zero_visibility_blocks_lof_into_through_and_out_of_in_every_edition(
    edition: str, zone: str, zone_x: float, kind: str, kind_text: str
) -> None:
    """Every edition: a Zero zone (Smoke and Eclipse too) blocks a BS Attack's LoF into, out of and through it.

    1.2 and 001: 'Troopers cannot draw LoF into, through, or out of a Zero Visibility Zone.'; 002 Original says
    only 'through', and rules-notes decides: 'original: LoF into or out of Zero is blocked as well as through it'.
    """
    answer = rule(scene(regions=[on_line("r-zero", zone, x=zone_x)], tokens=[A, T], edition=edition), "a", "t")
    assert answer["crossings"] == [{"region": "r-zero", "zone": zone, "kind": kind}]
    assert answer["allowed"] is False
    assert answer["modifier"] is None
    entry = by_region(answer, "r-zero")
    assert entry["applied"] is True and entry["value"] is None
    assert entry["reason"] == f"No LoF can be drawn {kind_text} a Zero Visibility Zone."
    assert [m["region"] for m in applied(answer)] == ["r-zero"]
    assert any(c.startswith(ZERO_TEXT[edition]) for c in answer["citations"])


@pytest.mark.parametrize("edition", EDITIONS)
def test_zero_visibility_blocks_lof_within_in_every_edition(edition: str) -> None:
    """Every edition: two troopers inside one Zero zone have no LoF to each other, on any line they may draw.

    002 Original: 'Inside a Zero Visibility Zone, Troopers can only declare Skills that do not require LoF or that
    require them to be in base to base contact with their target.'; 1.2 and 001: no LoF 'out of' a Zero zone.
    """
    big = rect_region("r-zero", "zero", -100, 300, 1400, 400)
    answer = rule(scene(regions=[big], tokens=[A, T], edition=edition, lines="best"), "a", "t")
    assert answer["crossings"] == [{"region": "r-zero", "zone": "zero", "kind": "within"}]
    assert answer["allowed"] is False
    assert answer["modifier"] is None
    assert by_region(answer, "r-zero")["applied"] is True


def test_inside_means_the_footprint_touches_the_zone_not_its_centre() -> None:
    """rules-notes: a trooper is inside a zone its silhouette touches: a Low zone off the line still gives -3.

    rules-notes: a trooper is inside when its silhouette touches the zone — a Low zone whose edge touches the actor's
    base, off the line, still gives -3 'from' it.
    """
    touching = rect_region("r-low", "low", 100, 200, 100, 200)  # touches A's corner (100, 400)
    answer = rule(scene(regions=[touching], tokens=[A, T]), "a", "t")
    assert answer["crossings"] == [{"region": "r-low", "zone": "low", "kind": "from"}]
    assert answer["modifier"] == -3


def test_zone_below_the_line_is_not_crossed() -> None:
    """Elevation: a Low zone of top 2 under a line between troopers at elevation 5 is not crossed."""
    low = on_line("r-low", "low", top=2)
    tokens = [{**A, "elevation": 5}, {**T, "elevation": 5}]
    answer = rule(scene(regions=[low], tokens=tokens), "a", "t")
    assert answer["crossings"] == []
    assert answer["modifier"] == 0


# --- Zone MODs never stack -------------------------------------------------------------------------


def test_low_and_poor_do_not_stack_only_minus_6_applies() -> None:
    """001: a line through a Low and a Poor zone takes only the single -6 MOD; Low's -3 is listed as never stacking.

    001: 'if a BS Attack's LoF passes through a Low Visibility Zone (-3 MOD) and a Poor Visibility Zone (-6 MOD), apply
    only one single -6 MOD.'
    """
    regions = [on_line("r-low", "low", x=250), on_line("r-poor", "poor", x=600)]
    answer = rule(scene(regions=regions, tokens=[A, T]), "a", "t")
    assert answer["modifier"] == -6
    assert [m["region"] for m in applied(answer)] == ["r-poor"]
    low = by_region(answer, "r-low")
    assert low["applied"] is False and low["value"] == -3
    assert "never stack" in low["reason"]
    assert any("never stack" in c for c in answer["citations"])


def test_two_poor_zones_give_a_single_minus_6() -> None:
    """004: two Poor zones on one line give a single -6 MOD, labelled and cited in Spanish.

    004: 'En caso de que fueran dos Zonas de Mala Visibilidad las que coincidieran, sólo se aplicaría un único MOD de
    -6.'
    """
    regions = [on_line("r-p1", "poor", x=250), on_line("r-p2", "poor", x=600)]
    answer = rule(scene(regions=regions, tokens=[A, T], locale="es"), "a", "t")
    assert answer["modifier"] == -6
    assert len(applied(answer)) == 1
    assert by_region(answer, "r-p2")["label"] == "Zona de Mala Visibilidad"
    assert any(c.startswith(SEED_004 + "Los MOD de Zona de Visibilidad") for c in answer["citations"])


def test_zero_beats_any_mod_when_zones_combine() -> None:
    """rules-notes: 'a blocked line beats any MOD' — Poor then Zero on one line is no LoF at all."""
    regions = [on_line("r-poor", "poor", x=250), on_line("r-zero", "zero", x=600)]
    answer = rule(scene(regions=regions, tokens=[A, T]), "a", "t")
    assert answer["allowed"] is False
    assert [m["region"] for m in applied(answer)] == ["r-zero"]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize(
    ("near", "far", "expected", "winner", "loser", "loser_value", "winner_label"),
    [
        ("low", "poor", -6, "r-far", "r-near", -3, "Poor"),  # the most restrictive zone is the farther one
        ("poor", "low", -6, "r-near", "r-far", -3, "Poor"),  # … or the nearer one
        ("poor", "poor", -6, "r-near", "r-far", -6, "Poor"),  # two Poor: one -6, not -12 (the nearer applies)
        ("low", "low", -3, "r-near", "r-far", -3, "Low"),  # two Low: one -3, not -6
    ],
)
def test_zone_mods_never_stack_in_every_edition(
    edition: str, near: str, far: str, expected: int, winner: str, loser: str, loser_value: int, winner_label: str
) -> None:
    """Every edition: two zones on one line give only the single most restrictive MOD, never their sum.

    002 Original: 'Visibility Zone MODs never stack with other Visibility Zone MODs. If any Roll would be affected
    by two or more Visibility Zones of whatever type, apply only the most obscuring.' (2.1 and 001: 'the most
    restrictive one'); rules-notes: 'Non-stacking holds in every edition (002's original text already says it)'.
    """
    regions = [on_line("r-near", near, x=250), on_line("r-far", far, x=600)]
    answer = rule(scene(regions=regions, tokens=[A, T], edition=edition), "a", "t")
    assert answer["allowed"] is True
    assert answer["modifier"] == expected
    assert [m["region"] for m in applied(answer)] == [winner]
    assert by_region(answer, winner)["value"] == expected
    other = by_region(answer, loser)
    assert other["applied"] is False and other["value"] == loser_value
    assert f'only the most restrictive one ({winner_label} Visibility Zone "{winner}": {expected})' in other["reason"]
    stacking = [c for c in answer["citations"] if "never stack" in c]
    assert len(stacking) == 1 and stacking[0].startswith(NOT_STACKING_TEXT[edition])


# --- White Noise and Marksmanship ------------------------------------------------------------------


def test_white_noise_does_not_affect_a_trooper_without_msv() -> None:
    """001: a trooper with neither Marksmanship nor a Multispectral Visor sees through White Noise at no MOD.

    001: 'A White Noise Zone acts as a Zero Visibility Zone, but only for Troopers with the Marksmanship Special Skill
    or equipped with a Multispectral Visor' — others see through it.
    """
    answer = rule(scene(regions=[on_line("r-wn", "white-noise")], tokens=[A, T]), "a", "t")
    assert answer["allowed"] is True and answer["modifier"] == 0
    assert by_region(answer, "r-wn")["applied"] is False


@pytest.mark.parametrize("visor", ["multispectral-visor-1", "multispectral-visor-2", "multispectral-visor-3"])
def test_white_noise_is_zero_for_msv_of_any_level(visor: str) -> None:
    """001: White Noise is Zero for 'a Multispectral Visor of any Level' — even L2/L3 cannot see through.

    Their visors see through Zero; that this does not help in White Noise is the wiki's (rules-notes: 'White Noise
    is Zero for MSV users of every level; their see-through-Zero does not help there'), so the ruling cites it.
    """
    answer = rule(scene(regions=[on_line("r-wn", "white-noise")], tokens=[with_traits(A, visor), T]), "a", "t")
    assert answer["allowed"] is False
    assert (
        "Infinity Wiki — White Noise Zone (http://wiki.infinitythegame.com/en/White_Noise_Zone): White Noise is Zero "
        "for MSV users of every level; their see-through-Zero does not help there"
    ) in answer["citations"]


def test_white_noise_blocking_marksmanship_cites_no_visor_page() -> None:
    """001: White Noise blocking a Marksmanship trooper cites no page on visors: it has none.

    001: 'A White Noise Zone acts as a Zero Visibility Zone, but only for Troopers with the Marksmanship Special Skill'.
    """
    answer = rule(scene(regions=[on_line("r-wn", "white-noise")], tokens=[with_traits(A, "marksmanship"), T]), "a", "t")
    assert answer["allowed"] is False
    assert not any("White Noise Zone (http" in citation for citation in answer["citations"])


@pytest.mark.parametrize(("edition", "blocked"), [("current", True), ("2.1", False), ("original", False)])
def test_marksmanship_sees_white_noise_as_zero_only_in_the_current_text(edition: str, blocked: bool) -> None:
    """001/004 add 'Troopers with the Marksmanship Special Skill'; 002 (up to 2.1) names only the MSV."""
    data = scene(regions=[on_line("r-wn", "white-noise")], tokens=[with_traits(A, "marksmanship"), T], edition=edition)
    answer = rule(data, "a", "t")
    assert answer["allowed"] is (not blocked)


# --- Multispectral Visor ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("visor", "zone", "expected"),
    [
        ("multispectral-visor-1", "low", 0),
        ("multispectral-visor-1", "poor", -3),
        ("multispectral-visor-1", "zero", -6),
        ("multispectral-visor-1", "smoke", -6),
        ("multispectral-visor-2", "poor", 0),
        ("multispectral-visor-2", "zero", 0),
        ("multispectral-visor-3", "smoke", 0),
        ("multispectral-visor-2", "eclipse", None),
        ("multispectral-visor-3", "eclipse", None),
    ],
)
def test_multispectral_visor_levels(visor: str, zone: str, expected: int | None) -> None:
    """rules-notes: each Multispectral Visor level reduces each zone's MOD as listed; Eclipse blocks every level.

    rules-notes: 'MSV L1: Low → 0, Poor → −3; may draw LoF through Zero at −6. MSV L2: every zone MOD → 0 and LoF
    through Zero'; Eclipse 'blocks LoF for MSV users of every level'.
    """
    answer = rule(scene(regions=[on_line("r", zone)], tokens=[with_traits(A, visor), T]), "a", "t")
    assert answer["modifier"] == expected
    assert answer["allowed"] is (expected is not None)


def test_msv_reduces_each_zone_before_the_most_restrictive_is_chosen() -> None:
    """rules-notes: MSV reduces each zone's MOD before the most restrictive is taken: L1 through Poor and Zero is -6.

    rules-notes order of operations: 'apply each observer's MSV reduction per zone, then take the single most
    restrictive zone MOD' — MSV L1 through Poor (-3) and Zero (-6) takes -6 from the Zero zone.
    """
    regions = [on_line("r-poor", "poor", x=250), on_line("r-zero", "zero", x=600)]
    answer = rule(scene(regions=regions, tokens=[with_traits(A, "multispectral-visor-1"), T]), "a", "t")
    assert answer["modifier"] == -6
    assert [m["region"] for m in applied(answer)] == ["r-zero"]
    assert by_region(answer, "r-poor")["value"] == -3


# --- The target of a BS Attack through Zero answers -------------------------------------------------


def test_answer_through_zero_counts_as_poor() -> None:
    """001: the target of a BS Attack through Zero answers as through Poor: allowed, at -6.

    001: 'Any Trooper who is the target of a BS Attack into, through, or out of a Zero Visibility Zone treats the Zero
    Visibility Zone as a Poor Visibility Zone when drawing LoF to the attacker.'
    """
    answer = rule(scene(regions=[on_line("r-zero", "zero")], tokens=[A, T]), "a", "t", reaction=True)
    assert answer["allowed"] is True and answer["modifier"] == -6
    assert "Poor Visibility Zone" in by_region(answer, "r-zero")["reason"]


def test_answer_through_smoke_with_discover_also_counts_as_poor() -> None:
    """rules-notes: a Discover answering through Smoke counts it as Poor too, and takes -6.

    rules-notes: the answer rule 'covers every LoF skill in that answer, and every zone that is Zero for that trooper:
    Smoke, Eclipse…' — a Discover answering through Smoke takes -6.
    """
    answer = rule(scene(regions=[on_line("r", "smoke")], tokens=[A, T]), "a", "t", "discover", reaction=True)
    assert answer["modifier"] == -6


def test_original_answer_through_zero_is_a_bs_attack_at_minus_6_if_facing() -> None:
    """002 Original: an ARO through Zero may be a BS Attack at -6 (if facing) or a Dodge at 0, but not a Discover.

    002 Original: 'the Skills the target can declare in ARO … are limited to BS Attack with a -6 MOD, Dodge without the
    MOD, or any Skill that doesn't require LoF.'
    """
    data = scene(regions=[on_line("r-zero", "zero")], tokens=[A, T], edition="original")
    bs = rule(data, "a", "t", reaction=True)
    assert bs["modifier"] == -6
    assert any("faces the attacker" in note for note in bs["notes"])
    discover = rule(data, "a", "t", "discover", reaction=True)
    assert discover["allowed"] is False
    dodge = rule(data, "a", "t", "dodge", reaction=True)
    assert dodge["allowed"] is True and dodge["modifier"] == 0


@pytest.mark.parametrize(("edition", "expected"), [("1.2", -3), ("1.3", -6), ("current", -6)])
def test_msv_answering_through_white_noise(edition: str, expected: int) -> None:
    """002 Update 1.3: an MSV L1 answering through White Noise takes -6; before 1.3 its visor made that -3.

    002 Update 1.3: 'If a Trooper with a Multispectral Visor is the target of a BS Attack into, through, or out of a
    White Noise Zone, their Multispectral Visor cannot reduce the MODs of the resulting Poor Visibility Zone.' — before
    1.3 an MSV L1 reduced that Poor to -3.
    """
    data = scene(
        regions=[on_line("r-wn", "white-noise")],
        tokens=[with_traits(A, "multispectral-visor-1"), T],
        edition=edition,
    )
    answer = rule(data, "a", "t", reaction=True)
    assert answer["modifier"] == expected


def test_msv_l1_answering_through_zero_takes_its_own_minus_6() -> None:
    """rules-notes: 'MSV L1 answering through Zero: -6 (its own see-through-Zero MOD)'."""
    data = scene(regions=[on_line("r", "zero")], tokens=[with_traits(A, "multispectral-visor-1"), T])
    assert rule(data, "a", "t", reaction=True)["modifier"] == -6


@pytest.mark.parametrize(
    ("edition", "traits", "expected"),
    [
        ("current", ["sixth-sense"], 0),
        ("1.3", ["sixth-sense"], 0),
        ("1.2", ["sixth-sense"], -6),
        ("1.2", ["sixth-sense", "multispectral-visor-1"], 0),
        ("current", [], -6),
    ],
)
def test_sixth_sense_cancels_the_answer_penalty(edition: str, traits: list[str], expected: int) -> None:
    """rules-notes: Sixth Sense cancels the -6 of an answer through Zero; before 1.3 only together with MSV L1.

    rules-notes: 'a trooper with MSV L1 and Sixth Sense, target of a BS Attack through Zero, ignores the −6; from 1.3
    the Sixth Sense trooper ignores the −6 of the resulting Poor zone on its own'.
    """
    data = scene(regions=[on_line("r", "zero")], tokens=[with_traits(A, *traits), T], edition=edition)
    assert rule(data, "a", "t", reaction=True)["modifier"] == expected


def test_eclipse_answer_cannot_be_reduced_by_msv() -> None:
    """rules-notes: 'MSV cannot reduce that Poor for White Noise (from 1.3) or for Eclipse.'"""
    data = scene(regions=[on_line("r", "eclipse")], tokens=[with_traits(A, "multispectral-visor-2"), T])
    answer = rule(data, "a", "t", reaction=True)
    assert answer["modifier"] == -6
    assert "cannot reduce" in by_region(answer, "r")["reason"]


# --- Actions that need no LoF -------------------------------------------------------------------------


def test_dodge_is_exempt_from_zone_mods() -> None:
    """001: 'Any Skill … that requires LoF, except Dodge, … suffers a MOD' — Dodge through Poor: 0."""
    answer = rule(scene(regions=[on_line("r", "poor")], tokens=[A, T]), "a", "t", "dodge")
    assert answer["allowed"] is True and answer["modifier"] == 0
    assert by_region(answer, "r")["applied"] is False


def test_speculative_attack_takes_only_its_own_minus_6() -> None:
    """001: a Speculative Attack takes only its own -6 MOD, even through Zero and a wall.

    001: 'Speculative Attacks do not require LoF, so do not apply any negative MODs for Visibility Zones, only the -6
    MOD for Speculative Attack.'
    """
    data = scene(regions=[on_line("r", "zero")], tokens=[A, T], walls=[wall("w", 700, 0, 700, 1000)])
    answer = rule(data, "a", "t", "speculative-attack")
    assert answer["allowed"] is True and answer["modifier"] == -6
    assert [m["source"] for m in applied(answer)] == ["action"]


def test_hacking_needs_no_lof() -> None:
    """rules-notes: 'Hacking programs need no LoF: no zone MOD.'"""
    answer = rule(scene(regions=[on_line("r", "poor")], tokens=[A, T]), "a", "t", "hacking")
    assert answer["modifier"] == 0


def test_discover_takes_the_same_mods_as_a_bs_attack() -> None:
    """rules-notes: 'Discover needs LoF and takes the same MODs as a BS Attack.'"""
    answer = rule(scene(regions=[on_line("r", "low")], tokens=[A, T]), "a", "t", "discover")
    assert answer["modifier"] == -3


# --- Walls --------------------------------------------------------------------------------------------


def test_a_sight_wall_blocks_a_bs_attack() -> None:
    """Contract: 'walls with sight block the line' — allowed false, the wall named as the reason."""
    answer = rule(scene(tokens=[A, T], walls=[wall("w1", 700, 0, 700, 1000)]), "a", "t")
    assert answer["allowed"] is False
    assert [m["region"] for m in applied(answer)] == ["w1"]


@pytest.mark.parametrize("locale", ["en", "es"])
def test_a_wall_withholds_the_zone_mod_but_still_explains_it(locale: str) -> None:
    """Contract: behind a wall the zone MODs are listed as not applied, and the wall is the one applied entry.

    Contract: '`modifiers` explains every candidate and whether it applied' — behind a wall there is no roll: Poor's
    -6 is listed as not applied (a wall stops the line), Low's as never stacking with it, and the wall is the one
    applied entry. A Zero zone would itself block, so it stays applied.
    """
    regions = [on_line("r-poor", "poor"), on_line("r-low", "low", x=850)]
    answer = rule(scene(regions=regions, tokens=[A, T], walls=[wall("w", 700, 0, 700, 1000)], locale=locale), "a", "t")
    assert answer["allowed"] is False and answer["modifier"] is None
    assert [m["region"] for m in applied(answer)] == ["w"]
    poor = by_region(answer, "r-poor")
    assert poor["value"] == -6 and poor["applied"] is False
    assert ("a wall blocks the line of fire" if locale == "en" else "un muro bloquea la línea de tiro") in poor[
        "reason"
    ]
    zero = rule(scene(regions=[on_line("r", "zero")], tokens=[A, T], walls=[wall("w", 700, 0, 700, 1000)]), "a", "t")
    assert by_region(zero, "r")["applied"] is True


def test_best_line_finds_the_lof_around_a_zone() -> None:
    """Contract: with rules.lines 'best', a Zero zone covering only the centre line no longer blocks the LoF.

    Contract: rules.lines 'best' lets the ruleset take the line most favourable to the actor (any LoF the player can
    draw).
    """
    thin = rect_region("r-zero", "zero", 500, 420, 100, 60)
    centre = rule(scene(regions=[thin], tokens=[A, T]), "a", "t")
    best = rule(scene(regions=[thin], tokens=[A, T], lines="best"), "a", "t")
    assert centre["allowed"] is False
    assert best["allowed"] is True and best["modifier"] == 0
    assert best["line"]["start"] != centre["line"]["start"] or best["line"]["end"] != centre["line"]["end"]


# --- Combat Jump ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "allowed"),
    [("low", False), ("poor", False), ("zero", False), ("smoke", False), ("eclipse", False), ("white-noise", True)],
)
def test_combat_jump_is_forbidden_inside_low_poor_or_zero(zone: str, allowed: bool) -> None:
    """001: Combat Jump is forbidden inside Low, Poor or Zero (Smoke and Eclipse too), not inside White Noise.

    001: 'You cannot use Combat Jump inside of, or in contact with, an area with Low, Poor, or Zero Visibility
    Conditions.' — White Noise is not listed (rules-notes).
    """
    answer = rule(scene(regions=[around("r", zone, 0)], tokens=[A, T]), "a", None, "combat-jump")
    assert answer["allowed"] is allowed


def test_combat_jump_in_contact_with_a_zone_is_forbidden() -> None:
    """004: a Combat Jump is forbidden to a trooper whose base only touches a zone's edge.

    004: 'No se permite efectuar un Salto de Combate en el interior o en contacto con una Zona…' — a base touching the
    zone's edge counts.
    """
    touching = rect_region("r", "low", 100, 0, 300, 400)  # touches A at its corner (100, 400)
    answer = rule(scene(regions=[touching], tokens=[A, T], locale="es"), "a", None, "combat-jump")
    assert answer["allowed"] is False
    assert answer["modifier"] is None
    assert any("Salto de Combate" in note for note in answer["notes"])


def test_combat_jump_away_from_zones_is_allowed() -> None:
    """001: the prohibition is only 'inside of, or in contact with' a zone — elsewhere the jump stands."""
    answer = rule(scene(regions=[on_line("r", "poor", x=600)], tokens=[A, T]), "a", None, "combat-jump")
    assert answer["allowed"] is True and answer["modifier"] == 0


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize(
    ("zone", "forbidden"),
    [("low", True), ("poor", True), ("zero", True), ("smoke", True), ("eclipse", True), ("white-noise", False)],
)
@pytest.mark.parametrize("place", ["inside", "in contact"])
def test_combat_jump_is_forbidden_by_low_poor_or_zero_in_every_edition(
    edition: str, zone: str, forbidden: bool, place: str
) -> None:
    """Every edition: Low, Poor and Zero (Smoke, Eclipse) forbid a Combat Jump inside or in contact; White Noise not.

    001: 'You cannot use Combat Jump inside of, or in contact with, an area with Low, Poor, or Zero Visibility
    Conditions.'; rules-notes: '002 is silent, not contrary: apply it in every edition. White Noise is not listed'.
    """
    # "in contact": the zone only touches A at its corner (100, 400)
    region = around("r", zone, 0) if place == "inside" else rect_region("r", zone, 100, 0, 300, 400)
    answer = rule(scene(regions=[region], tokens=[A, T], edition=edition), "a", None, "combat-jump")
    assert answer["crossings"] == [{"region": "r", "zone": zone, "kind": "from"}]
    assert answer["allowed"] is (not forbidden)
    assert answer["modifier"] == (None if forbidden else 0)
    entry = by_region(answer, "r")
    assert entry["applied"] is forbidden
    if forbidden:
        assert entry["reason"].startswith("Combat Jump cannot be used inside of, or in contact with")
        assert any(note.startswith("Combat Jump cannot be used") for note in answer["notes"])
    else:
        assert entry["reason"] == "White Noise does not forbid a Combat Jump."
        assert any("Combat Jump is allowed" in note for note in answer["notes"])
    assert any(c.startswith(SEED_001 + "You cannot use Combat Jump inside of") for c in answer["citations"])
    from_notes = any(c.startswith(NOTES + "Combat Jump: Combat Jump (001, 004)") for c in answer["citations"])
    assert from_notes is (edition != "current")  # 002's editions stand on the decision; current on 001 itself


@pytest.mark.parametrize("edition", EDITIONS)
def test_combat_jump_next_to_white_noise_and_low_is_still_forbidden_in_every_edition(edition: str) -> None:
    """Every edition: White Noise does not lift the ban a Low zone touching the same trooper puts on Combat Jump.

    004: 'No se permite efectuar un Salto de Combate en el interior o en contacto con una Zona con Condiciones de
    Visibilidad Baja, Mala o Nula.'
    """
    regions = [around("r-wn", "white-noise", 0), rect_region("r-low", "low", 100, 0, 300, 400)]
    answer = rule(scene(regions=regions, tokens=[A, T], edition=edition, locale="es"), "a", None, "combat-jump")
    assert answer["allowed"] is False
    assert answer["modifier"] is None
    assert [m["region"] for m in applied(answer)] == ["r-low"]
    assert by_region(answer, "r-wn")["applied"] is False
    seed_004 = SEED_004 + "No se permite efectuar un Salto de Combate en el interior o en contacto"
    assert any(c.startswith(seed_004) for c in answer["citations"])


# --- Editions, locales, CodeOne, foreign vocabulary -------------------------------------------------


def test_each_edition_cites_its_own_text() -> None:
    """002 carries dated texts: an 'original' ruling cites the Original wording, '1.2' the Jan 2022 update."""
    base = {"regions": [on_line("r", "zero")], "tokens": [A, T]}
    original = rule(scene(**base, edition="original"), "a", "t")  # type: ignore[arg-type]
    update = rule(scene(**base, edition="1.2"), "a", "t")  # type: ignore[arg-type]
    assert any(c.startswith(SEED_002_ORIGINAL + "Troopers cannot draw LoF through") for c in original["citations"])
    assert any(c.startswith(SEED_002_U12 + "Troopers cannot draw LoF") for c in update["citations"])
    assert not any(c.startswith(SEED_001) for c in update["citations"])
    assert not any(
        ".txt" in c.split(":", 1)[0] or "rules-notes.md" in c for c in original["citations"] + update["citations"]
    )


def test_spanish_scene_speaks_spanish() -> None:
    """004's wording: a Spanish scene labels 'Zona de Baja Visibilidad' and cites 004."""
    answer = rule(scene(regions=[on_line("r", "low")], tokens=[A, T], locale="es"), "a", "t")
    assert by_region(answer, "r")["label"] == "Zona de Baja Visibilidad"
    assert any(c.startswith(SEED_004 + "Zona de Baja Visibilidad aplicará") for c in answer["citations"])


@pytest.mark.parametrize(
    ("edition", "answer_rule"),
    [
        ("current", "Any Trooper who is the target of a BS Attack into, through, or out of a Zero Visibility Zone"),
        ("1.2", "Troopers cannot draw LoF into, through, or out of a Zero"),
        ("original", "Troopers cannot draw LoF through a Zero Visibility Zone."),
    ],
)
def test_an_answer_through_white_noise_cites_the_zero_answer_rule_it_follows(edition: str, answer_rule: str) -> None:
    """001: 'A White Noise Zone acts as a Zero Visibility Zone' for a visor: answering through it cites Zero's rule."""
    visor = with_traits(A, "multispectral-visor-1")
    data = scene(regions=[on_line("r", "white-noise")], tokens=[visor, T], edition=edition)
    answer = rule(data, "a", "t", reaction=True)
    assert any(answer_rule in c for c in answer["citations"]), answer["citations"]
    active = rule(data, "a", "t")
    assert not any(answer_rule in c for c in active["citations"]), "not answering: blocked, White Noise's own passages"


def test_codeone_does_not_use_the_rule() -> None:
    """002: 'This N4 rule is not used in CodeOne.' — zones give no MOD and block nothing; walls still do."""
    data = scene(regions=[on_line("r", "zero"), on_line("p", "poor", x=600)], tokens=[A, T], ruleset="infinity-codeone")
    answer = rule(data, "a", "t")
    assert answer["allowed"] is True and answer["modifier"] == 0
    assert all(not m["applied"] for m in answer["modifiers"])
    assert any("not used in CodeOne" in c for c in answer["citations"])
    jump = rule(
        scene(regions=[around("r", "zero", 0)], tokens=[A, T], ruleset="infinity-codeone"), "a", None, "combat-jump"
    )
    assert jump["allowed"] is True
    assert jump["notes"][-1] == "Visibility zones do not forbid a Combat Jump in CodeOne: it is allowed."
    assert not any("No Low, Poor or Zero Visibility zone touches" in note for note in jump["notes"])
    walled = rule(scene(tokens=[A, T], walls=[wall("w", 700, 0, 700, 1000)], ruleset="infinity-codeone"), "a", "t")
    assert walled["allowed"] is False


def test_zone_and_trait_of_another_ruleset_are_ignored_with_a_note() -> None:
    """Contract: another ruleset's zone and trait are ignored with notes naming them by label, never a silent zero.

    Contract: 'a zone type or trait of another ruleset than the scene's is ignored with a note on the rulings it touches
    — never a silent zero.'
    """
    darkness = on_line("r-dark", "darkness", total=True)
    answer = rule(scene(regions=[darkness], tokens=[with_traits(A, "infravision"), T]), "a", "t")
    assert answer["modifier"] == 0
    assert any("r-dark" in note and "(Darkness)" in note for note in answer["notes"])
    assert any("(Infravision)" in note for note in answer["notes"])
    assert not any("infravision" in note or "infinity-n4" in note for note in answer["notes"])


def test_a_zone_of_another_ruleset_around_a_jumper_is_ignored_with_a_note() -> None:
    """Contract: a Combat Jump from inside GURPS darkness is allowed, with a note naming the region it ignored.

    Contract: 'ignored with a note on the rulings it touches' — the ruling says which region it ignored (no sight line
    is involved).
    """
    darkness = rect_region("r-dark", "darkness", -50, 350, 200, 200, total=True)  # holds A
    answer = rule(scene(regions=[darkness], tokens=[A, T]), "a", None, "combat-jump")
    assert answer["allowed"] is True and answer["crossings"] == []
    assert any("r-dark" in note and "(Darkness)" in note for note in answer["notes"])


# --- The original text's limits inside Zero, and what a Spanish ruling cites -------------------------


@pytest.mark.parametrize(("edition", "noted"), [("original", True), ("1.2", False), ("current", False)])
def test_inside_zero_the_original_text_says_what_may_still_be_declared(edition: str, noted: bool) -> None:
    """002 Original: a BS Attack blocked inside Zero notes what may still be declared; from 1.2 it does not.

    002 Original: 'Inside a Zero Visibility Zone, Troopers can only declare Skills that do not require LoF or that
    require them to be in base to base contact with their target.' — said on a blocked BS Attack from inside Zero in
    `original`; from 1.2 the blocked LoF is the whole answer.
    """
    answer = rule(scene(regions=[around("r", "zero", 0)], tokens=[A, T], edition=edition), "a", "t")
    assert answer["allowed"] is False
    assert any("only skills needing no LoF" in note for note in answer["notes"]) is noted


def test_the_original_zero_rule_cites_the_decision_that_reads_into_and_out_of() -> None:
    """002 Original: LoF blocked out of Zero cites the rules-notes decision beside the seed's 'through' rule.

    002's Original text says only 'through'; blocking LoF out of Zero in `original` stands on the rules-notes decision
    ('LoF into or out of Zero is blocked as well as through it'), which is cited.
    """
    answer = rule(scene(regions=[around("r", "zero", 0)], tokens=[A, T], edition="original"), "a", "t")
    assert any(
        c.startswith(NOTES + "Zero Visibility in the original text: `original`: LoF into or out of Zero")
        for c in answer["citations"]
    )
    assert any(c.startswith(SEED_002_ORIGINAL + "Troopers cannot draw LoF through") for c in answer["citations"])


def test_a_spanish_ruling_cites_004_instead_of_001_and_keeps_untranslated_sources() -> None:
    """004: a Spanish Combat Jump ruling cites 004, not 001, and still cites the untranslated rules-notes decision.

    004 is 001 in Spanish; the rules-notes decision that applies the ban in 1.2 has no Spanish text, so it is cited as
    it stands.
    """
    answer = rule(
        scene(regions=[around("r", "low", 0)], tokens=[A, T], edition="1.2", locale="es"), "a", None, "combat-jump"
    )
    sources = [c.split(":", 1)[0] for c in answer["citations"]]
    assert SEED_004[:-2] in sources and NOTES + "Combat Jump" in sources
    assert SEED_001[:-2] not in sources
