"""bridge.core.rules.notes: another ruleset's vocabulary noted by name in en/es, and the scenes' lists by id."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from bridge.core.rules import RULESETS
from bridge.core.rules.base import REQUEST_FIELDS
from bridge.core.rules.data_files import vocabulary
from bridge.core.rules.notes import (
    OPTION_NOTES,
    foreign_vocabulary_notes,
    forget_lists,
    option_notes,
    region_name,
    regions_by_id,
    tokens_by_id,
)
from bridge.core.scene import Scene
from bridge.core.sight import Crossing, CrossingKind
from tests.core.rules.scenes import rect_zone, rule, scene, situation, token, wall


def texts_of(ruleset_id: str) -> Callable[..., str]:
    """The ruleset's own texts, looked up as its rulings look them up: ``text(key, locale, **values)``."""
    data: Any = RULESETS[ruleset_id].data  # type: ignore[attr-defined]
    return lambda key, locale, **values: data.texts[key].get(locale, **values)


def dark_cellar(name: str = "Cellar", region_id: str = "r-dark", x: float = 400) -> dict[str, Any]:
    """A GURPS total-darkness region 200 px wide from ``x`` across the row, named ``name``."""
    return {**rect_zone(region_id, x, 0, 200, 600, "darkness", total=True), "name": name}


def row(ruleset: str, *, locale: str = "en", lines: str = "center", **parts: Any) -> Scene:
    """Actor ``a`` at x 25 and target ``t`` at x 1025 on one row, with ``parts`` (regions, tokens' traits)."""
    tokens = [
        token("a", 25, 300, name="Alpha", traits=parts.pop("actor", [])),
        token("t", 1025, 300, name="Tango", traits=parts.pop("target", [])),
    ]
    return scene(ruleset, tokens=tokens, locale=locale, lines=lines, **parts)


def test_a_zone_of_another_ruleset_is_noted_by_its_regions_name_its_label_and_the_rulesets_title() -> None:
    """A GURPS darkness crossed in an Infinity scene: one note naming region, zone and ruleset as people know them.

    Contract: 'a zone type or trait of another ruleset than the scene's is ignored with a note on the rulings it
    touches — never a silent zero.'
    """
    built = row("infinity-n4", regions=[dark_cellar(), rect_zone("r-low", 700, 0, 100, 600, "low")])
    notes = foreign_vocabulary_notes(situation(built, "a", "t", "bs-attack"), texts_of("infinity-n4"))
    assert notes == ("Region Cellar is a zone of another ruleset (Darkness): ignored by Infinity N4.",)


def test_the_note_on_a_foreign_zone_speaks_spanish_in_a_spanish_scene() -> None:
    """A Spanish GURPS scene notes an Infinity Low zone with the Spanish text, label and title, no id."""
    built = row("gurps-4e", locale="es", regions=[{**rect_zone("r-low", 400, 0, 200, 600, "low"), "name": "Niebla"}])
    notes = foreign_vocabulary_notes(situation(built, "a", "t", "attack"), texts_of("gurps-4e"))
    assert notes == (
        "La región Niebla es una zona de otro reglamento (Zona de Baja Visibilidad): GURPS 4.ª ed. la ignora.",
    )


def test_each_foreign_region_is_noted_once_whatever_the_lines_that_cross_it() -> None:
    """Many lines through one region give one note; two regions of the same foreign type give two, in line order."""
    regions = [dark_cellar("Cellar"), dark_cellar("Crypt", "r-crypt", x=700)]
    built = row("infinity-n4", lines="best", regions=regions)
    found = situation(built, "a", "t", "bs-attack")
    assert len(found.lines) > 1
    notes = foreign_vocabulary_notes(found, texts_of("infinity-n4"))
    assert [note.split(" is a zone")[0] for note in notes] == ["Region Cellar", "Region Crypt"]


def test_an_unnamed_region_is_named_by_its_id_and_the_zones_of_a_placement_count() -> None:
    """``crossings`` (a placement's zones) are noted like a line's; a region the GM left unnamed reads as its id."""
    built = row("traveller", regions=[dark_cellar(name="")])
    placed = situation(built, "a", None, "observation")
    assert foreign_vocabulary_notes(placed, texts_of("traveller")) == ()
    standing = (Crossing(region="r-dark", zone="darkness", kind=CrossingKind.WITHIN),)
    notes = foreign_vocabulary_notes(placed, texts_of("traveller"), crossings=standing)
    assert notes == ("Region r-dark is a zone of another ruleset (Darkness): ignored by Traveller.",)


def test_the_scenes_own_zones_and_traits_give_no_note() -> None:
    """Zones and traits of the scene's ruleset (a numbered one included) are ruled, not noted."""
    regions = [
        rect_zone("r-dark", 400, 0, 200, 600, "darkness", total=True),
        rect_zone("r-s", 700, 0, 50, 600, "smoke"),
    ]
    built = row("gurps-4e", regions=regions, actor=["night-vision-3", "infravision"], target=["invisible"])
    assert foreign_vocabulary_notes(situation(built, "a", "t", "attack"), texts_of("gurps-4e")) == ()


def test_each_tokens_foreign_trait_is_noted_with_its_name_and_label_in_both_locales() -> None:
    """Actor's then target's foreign traits are noted by token name and trait label (numbered ones too), en and es."""
    parts = {"actor": ["multispectral-visor-2", "infravision"], "target": ["ir-goggles", "night-vision-3"]}
    english = foreign_vocabulary_notes(
        situation(row("infinity-n4", **parts), "a", "t", "bs-attack"), texts_of("infinity-n4")
    )
    assert english == (
        "Alpha has a trait of another ruleset (Infravision): ignored by Infinity N4.",
        "Tango has a trait of another ruleset (IR goggles): ignored by Infinity N4.",
        "Tango has a trait of another ruleset (Night Vision 3): ignored by Infinity N4.",
    )
    spanish = foreign_vocabulary_notes(
        situation(row("infinity-n4", locale="es", **parts), "a", "t", "bs-attack"), texts_of("infinity-n4")
    )
    assert spanish == (
        "Alpha tiene un rasgo de otro reglamento (Infravisión): Infinity N4 lo ignora.",
        "Tango tiene un rasgo de otro reglamento (Gafas infrarrojas): Infinity N4 lo ignora.",
        "Tango tiene un rasgo de otro reglamento (Visión Nocturna 3): Infinity N4 lo ignora.",
    )


def test_a_token_without_a_name_is_named_by_its_id_and_no_target_is_fine() -> None:
    """A trait of an unnamed token names the token's id; a ruling with no target notes the actor's traits only."""
    built = scene("traveller", tokens=[token("a", 25, 300, name="", traits=["sixth-sense"]), token("t", 525, 300)])
    notes = foreign_vocabulary_notes(situation(built, "a", None, "observation"), texts_of("traveller"))
    assert notes == ("a has a trait of another ruleset (Sixth Sense): ignored by Traveller.",)


def test_a_region_is_named_as_the_gm_named_it_else_by_its_id() -> None:
    """``region_name``: the region's name; its id when it has none or no region of the scene has that id."""
    built = row("gurps-4e", regions=[dark_cellar("Cellar"), dark_cellar("", "r-2", x=700)])
    assert region_name(built, "r-dark") == "Cellar"
    assert region_name(built, "r-2") == "r-2"
    assert region_name(built, "r-gone") == "r-gone"


def test_the_lists_by_id_are_made_once_per_list_and_never_taken_for_another_lists() -> None:
    """The same list gives the same dictionary; another list of equal items gets its own, holding its own items."""
    built = row("gurps-4e", regions=[dark_cellar()])
    regions, tokens = regions_by_id(built), tokens_by_id(built)
    assert regions_by_id(built) is regions and tokens_by_id(built) is tokens
    assert regions["r-dark"] is built.regions[0] and list(tokens) == ["a", "t"]
    copy = built.model_copy(update={"regions": [r.model_copy() for r in built.regions], "tokens": list(built.tokens)})
    assert regions_by_id(copy) is not regions and regions_by_id(copy)["r-dark"] is copy.regions[0]
    assert tokens_by_id(copy) is not tokens and tokens_by_id(copy) == tokens


def test_the_lists_held_are_bounded_and_let_go_when_forgotten() -> None:
    """After 16 other lists, or ``forget_lists``, a list's dictionary is made again rather than held forever."""
    built = row("gurps-4e")
    first = tokens_by_id(built)
    for _ in range(16):
        tokens_by_id(built.model_copy(update={"tokens": list(built.tokens)}))
    again = tokens_by_id(built)
    assert again is not first and again == first
    assert tokens_by_id(built) is again
    forget_lists()
    assert tokens_by_id(built) is not again


# --- Options the scene's ruleset does not read ------------------------------------------------------

#: A valid value of every option some ruleset reads (a test fails when a ruleset declares a new one).
OPTION_VALUES: dict[str, Any] = {"size": 2, "other": -1, "device": "unaided-eyes", "tech_level": 13, "warm": False}
#: An action of each ruleset, with a target.
ACTIONS = {
    "infinity-n4": "bs-attack",
    "infinity-codeone": "bs-attack",
    "gurps-4e": "attack",
    "traveller": "observation",
}


def option_free(notes: tuple[str, ...]) -> tuple[str, ...]:
    """``notes`` without the option notes (English or Spanish)."""
    return tuple(n for n in notes if not n.startswith(("Option “", "La opción «")))


def test_an_option_traveller_does_not_read_is_noted_by_its_key_and_changes_nothing_else() -> None:
    """A typo ``szie`` in a Traveller request: one note naming the key and Traveller, the ruling otherwise unchanged.

    Contract: 'Inputs only one ruleset reads go in `options`: Traveller `size` and `other` (whole numbers of diff
    mods: the target's size, anything else the table adds).' A key no ruleset reads is never a silent zero.
    """
    built = row("traveller", regions=[rect_zone("r-s", 400, 0, 200, 600, "smoke", density=2)])
    plain = rule(built, "a", "t", "observation")
    typo = rule(built, "a", "t", "observation", szie=2)
    assert typo.notes == ("Option “szie” is not an input of Traveller: ignored.", *plain.notes)
    assert dataclasses.replace(typo, notes=plain.notes) == plain
    sized = rule(built, "a", "t", "observation", size=-1)
    assert (plain.modifier, sized.modifier) == (2, 1) and sized.notes == plain.notes


@pytest.mark.parametrize(
    ("ruleset", "title"),
    [("infinity-n4", "Infinity N4"), ("infinity-codeone", "Infinity CodeOne"), ("gurps-4e", "GURPS 4e")],
)
def test_a_traveller_option_sent_to_another_rulesets_scene_names_traveller(ruleset: str, title: str) -> None:
    """Traveller's ``size`` in an Infinity or GURPS scene: noted as Traveller's, ignored by the scene's ruleset."""
    built = row(ruleset)
    plain = rule(built, "a", "t", ACTIONS[ruleset])
    sized = rule(built, "a", "t", ACTIONS[ruleset], size=3)
    note = f"Option “size” is an input of another ruleset (Traveller): ignored by {title}."
    assert sized.notes == (note, *plain.notes)
    assert (sized.allowed, sized.modifier, sized.modifiers) == (plain.allowed, plain.modifier, plain.modifiers)


def test_a_gurps_option_in_a_traveller_scene_names_gurps_by_its_title() -> None:
    """GURPS's ``warm`` in a Traveller scene: noted with GURPS's title, never its id."""
    notes = rule(row("traveller"), "a", "t", "observation", warm=False).notes
    assert notes[0] == "Option “warm” is an input of another ruleset (GURPS 4e): ignored by Traveller."


def test_option_notes_speak_spanish_in_a_spanish_scene_in_key_order() -> None:
    """A Spanish GURPS scene notes a Traveller key and a typo in Spanish, by key whatever the request's order."""
    built = row("gurps-4e", locale="es")
    notes = rule(built, "a", "t", "attack", szie=1, size=2).notes
    assert option_free(notes) == rule(built, "a", "t", "attack").notes
    assert notes[:2] == (
        "La opción «size» es un dato de otro reglamento (Traveller): GURPS 4.ª ed. la ignora.",
        "La opción «szie» no es un dato que lea GURPS 4.ª ed.: se ignora.",
    )
    assert rule(built, "a", "t", "attack", size=2, szie=1).notes == notes


def test_many_ignored_options_are_noted_one_by_one_only_up_to_a_bound_then_counted() -> None:
    """Twenty unknown keys give eight notes by key and one counting the other twelve, in English and Spanish."""
    keys = {f"k{n:02d}": n for n in range(20)}
    english = rule(row("traveller"), "a", "t", "observation", **keys).notes
    assert english[:OPTION_NOTES] == tuple(
        f"Option “k{n:02d}” is not an input of Traveller: ignored." for n in range(OPTION_NOTES)
    )
    assert english[OPTION_NOTES] == "Other options Traveller does not read: 12 more, ignored."
    assert option_free(english[OPTION_NOTES + 1 :]) == english[OPTION_NOTES + 1 :]
    spanish = rule(row("gurps-4e", locale="es"), "a", "t", "attack", **keys).notes
    assert spanish[OPTION_NOTES] == "Otras opciones que GURPS 4.ª ed. no lee: 12 más, se ignoran."
    nine = rule(row("traveller"), "a", "t", "observation", **dict(list(keys.items())[:9])).notes
    assert nine[OPTION_NOTES] == "Other options Traveller does not read: 1 more, ignored."


@pytest.mark.parametrize("ruleset", sorted(ACTIONS))
def test_the_options_a_ruleset_reads_and_aware_give_no_note(ruleset: str) -> None:
    """Every option the ruleset's data declares, given a valid value, and ``aware`` (its own field) are not noted."""
    declared = RULESETS[ruleset].data.options  # type: ignore[attr-defined]
    assert set(declared) == set(vocabulary().rulesets[ruleset].options)
    options = {key: OPTION_VALUES[key] for key in declared}
    found = situation(row(ruleset), "a", "t", ACTIONS[ruleset], aware=False, **options)
    assert option_notes(found, texts_of(ruleset)) == ()
    assert option_free(RULESETS[ruleset].adjudicate(found).notes) == RULESETS[ruleset].adjudicate(found).notes
    aware_inside = dataclasses.replace(found, options={"aware": True, **options})
    assert option_notes(aware_inside, texts_of(ruleset)) == ()


class _Asked(dict[str, Any]):
    """Request options that remember every key a ruling looks up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


@pytest.mark.parametrize("ruleset", sorted(ACTIONS))
def test_a_ruleset_reads_only_the_options_its_data_declares(ruleset: str) -> None:
    """Every ruling looks up no option beyond its data's ``[options.*]`` and ``aware``: the data is the list."""
    declared = set(RULESETS[ruleset].data.options) | REQUEST_FIELDS  # type: ignore[attr-defined]
    built = row(ruleset, actor=[], target=[])
    asked: set[str] = set()
    for action in RULESETS[ruleset].actions:
        for reaction in (False, True):
            options = _Asked({"aware": True})
            found = dataclasses.replace(situation(built, "a", "t", action, reaction=reaction), options=options)
            RULESETS[ruleset].adjudicate(found)
            asked |= options.asked
    assert asked <= declared
    assert ruleset.startswith("infinity") or asked & set(RULESETS[ruleset].data.options)  # type: ignore[attr-defined]


@pytest.mark.parametrize("ruleset", sorted(ACTIONS))
def test_every_action_notes_an_option_its_ruleset_does_not_read_on_open_and_walled_lines(ruleset: str) -> None:
    """Attacks, defences, placements, reactions, walled lines: each ruling carries the note, otherwise unchanged."""
    for walls in ([], [wall("w", 500, 0, 500, 600)]):
        built = row(ruleset, walls=walls)
        for action in sorted(RULESETS[ruleset].actions):
            for reaction in (False, True):
                plain = rule(built, "a", "t", action, reaction=reaction)
                typo = rule(built, "a", "t", action, reaction=reaction, szie=1)
                assert typo.notes[0].startswith("Option “szie” is not an input of "), (action, reaction)
                assert dataclasses.replace(typo, notes=plain.notes) == plain
