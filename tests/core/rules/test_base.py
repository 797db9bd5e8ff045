"""bridge.core.rules.base: the texts, entries, rulings and errors every ruleset shares, checked directly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bridge.core.rules import RULESETS
from bridge.core.rules.base import LocalText, MissingParameter, ModifierEntry, Ruling, RulingError, wall_entries
from bridge.core.scene import Zone
from bridge.core.sight import Crossing, CrossingKind, Point3, SightLine
from tests.core.rules.scenes import scene, situation, token

LINE = SightLine(Point3(0.0, 0.0, 0.0), Point3(100.0, 0.0, 0.0))


def texts_of(ruleset_id: str) -> Callable[..., str]:
    """The ruleset's own texts, looked up as its rulings look them up: ``text(key, locale, **values)``."""
    data: Any = RULESETS[ruleset_id].data  # type: ignore[attr-defined]
    return lambda key, locale, **values: data.texts[key].get(locale, **values)


def test_a_local_text_speaks_spanish_for_es_and_english_otherwise() -> None:
    """``LocalText.get`` gives the Spanish text for ``es`` and the English one for ``en`` or any other locale."""
    text = LocalText(en="Wall", es="Muro")
    assert text.get("es") == "Muro"
    assert text.get("en") == "Wall"
    assert text.get("fr") == "Wall"


def test_a_local_text_fills_its_placeholders_only_when_given_values() -> None:
    """Values fill ``{placeholders}`` in either locale; without values the text comes back as written, braces kept."""
    text = LocalText(en="Night Vision {n}", es="Visión Nocturna {n}")
    assert text.get("en", n=3) == "Night Vision 3"
    assert text.get("es", n=3) == "Visión Nocturna 3"
    assert text.get("es") == "Visión Nocturna {n}"
    with pytest.raises(KeyError, match="'n'"):
        text.get("en", level=3)


def test_a_situation_reads_its_locale_and_edition_from_the_scenes_rules() -> None:
    """``Situation.locale`` and ``.edition`` are the scene's ``rules.locale`` and ``rules.edition``."""
    built = scene("infinity-n4", tokens=[token("a", 25, 25), token("t", 525, 25)], locale="es")
    built = built.model_copy(update={"rules": built.rules.model_copy(update={"edition": "1.2"})})
    found = situation(built, "a", "t", "bs-attack")
    assert (found.locale, found.edition) == ("es", "1.2")
    english = situation(scene("gurps-4e", tokens=[token("a", 25, 25)]), "a", None, "attack")
    assert (english.locale, english.edition) == ("en", "current")


def test_a_withheld_entry_keeps_its_value_and_says_why_after_its_own_reason() -> None:
    """``not_applied`` clears ``applied``, keeps value, label and region, and puts the new reason after its own."""
    entry = ModifierEntry(
        source="zone", value=-3, applied=True, label="Low Visibility Zone", reason="Line through Low.", region="r1"
    )
    withheld = entry.not_applied("Not applied: a wall blocks the line of fire.")
    assert withheld == ModifierEntry(
        source="zone",
        value=-3,
        applied=False,
        label="Low Visibility Zone",
        reason="Line through Low. Not applied: a wall blocks the line of fire.",
        region="r1",
    )
    assert entry.applied is True and entry.reason == "Line through Low."  # the candidate itself is unchanged
    bare = ModifierEntry(source="option", value=2, applied=True, label="Target size")
    assert bare.not_applied("Not applied.").reason == "Not applied."


def test_an_entry_on_the_wire_carries_its_optional_fields_only_when_set_in_the_contracts_order() -> None:
    """``to_wire``: source, value, applied, label always (``None`` too); then region, zone, reason, citation if set."""
    bare = ModifierEntry(source="wall", value=None, applied=True, label="Muro")
    assert bare.to_wire() == {"source": "wall", "value": None, "applied": True, "label": "Muro"}
    assert list(bare.to_wire()) == ["source", "value", "applied", "label"]
    full = ModifierEntry(
        source="zone", value=0, applied=False, label="L", reason="why", region="r", zone="low", citation="C: q"
    )
    wire = full.to_wire()
    assert list(wire) == ["source", "value", "applied", "label", "region", "zone", "reason", "citation"]
    assert wire == {
        "source": "zone",
        "value": 0,
        "applied": False,
        "label": "L",
        "region": "r",
        "zone": "low",
        "reason": "why",
        "citation": "C: q",
    }
    for field, value in (("region", "r"), ("zone", "low"), ("reason", "why"), ("citation", "C: q")):
        alone = ModifierEntry(source="zone", value=-3, applied=True, label="L", **{field: value}).to_wire()
        assert list(alone) == ["source", "value", "applied", "label", field] and alone[field] == value


@pytest.mark.parametrize(
    ("ruleset", "locale", "label", "reason"),
    [
        ("infinity-n4", "en", "Wall", "A wall blocks the line of fire."),
        ("infinity-n4", "es", "Muro", "Un muro bloquea la línea de tiro."),
        ("gurps-4e", "es", "Muro", "Un muro bloquea la línea de visión: no se puede atacar."),
        ("traveller", "en", "Wall", "A wall blocks the line of sight."),
    ],
)
def test_each_blocking_wall_is_one_applied_entry_read_as_wall_with_its_id_kept_for_the_overlay(
    ruleset: str, locale: str, label: str, reason: str
) -> None:
    """``wall_entries``: one applied entry per wall, in order, in the scene's locale; the wall id only in ``region``."""
    entries = wall_entries(("w-north", "w-2"), texts_of(ruleset), locale)
    assert [entry.region for entry in entries] == ["w-north", "w-2"]
    for entry in entries:
        assert (entry.source, entry.value, entry.applied) == ("wall", None, True)
        assert (entry.label, entry.reason) == (label, reason)
        assert "w-" not in entry.label + (entry.reason or "")
    assert wall_entries((), texts_of(ruleset), locale) == []


def test_a_ruling_has_a_modifier_exactly_when_the_action_is_allowed() -> None:
    """``Ruling`` refuses an allowed answer without a modifier and a refused one with one; 0 is a modifier."""
    fields: dict[str, Any] = {"crossings": (), "modifiers": (), "notes": (), "citations": (), "line": LINE}
    assert Ruling(allowed=True, modifier=0, **fields).modifier == 0
    assert Ruling(allowed=False, modifier=None, **fields).extra == {}
    for allowed, modifier in ((True, None), (False, 0), (False, -3)):
        with pytest.raises(ValueError, match="a ruling has a modifier exactly when the action is allowed"):
            Ruling(allowed=allowed, modifier=modifier, **fields)


def test_a_ruling_is_immutable() -> None:
    """A ruling, shared between lines and worlds, cannot be changed once made."""
    crossing = Crossing(region="r", zone="low", kind=CrossingKind.THROUGH)
    ruling = Ruling(
        allowed=True, modifier=-3, crossings=(crossing,), modifiers=(), notes=("n",), citations=("c",), line=LINE
    )
    with pytest.raises(AttributeError):
        ruling.modifier = 0  # type: ignore[misc]


def test_the_errors_name_what_is_wrong_and_are_value_errors() -> None:
    """``MissingParameter`` keeps the parameter, ``RulingError`` the field; both are ``ValueError`` with the message."""
    missing = MissingParameter("zone type 'smoke' needs density", parameter="density")
    refused = RulingError("options.device must be a device name (got 3)", field="options.device")
    assert isinstance(missing, ValueError) and isinstance(refused, ValueError)
    assert (missing.parameter, str(missing)) == ("density", "zone type 'smoke' needs density")
    assert (refused.field, str(refused)) == ("options.device", "options.device must be a device name (got 3)")
    assert not isinstance(refused, MissingParameter)


def test_a_real_ruleset_answers_a_bad_request_with_a_ruling_error_naming_the_field() -> None:
    """An action the ruleset does not know is a ``RulingError`` whose ``field`` is ``action`` and message names it."""
    built = scene("gurps-4e", tokens=[token("a", 25, 25), token("t", 525, 25)])
    with pytest.raises(RulingError, match="unknown action 'bs-attack' for gurps-4e") as caught:
        RULESETS["gurps-4e"].adjudicate(situation(built, "a", "t", "bs-attack"))
    assert caught.value.field == "action"


def test_a_zone_only_lacking_a_parameter_is_missing_parameter_and_any_other_fault_a_plain_value_error() -> None:
    """``validate_zone``: ``MissingParameter`` naming a parameter only missing; any other fault a ``ValueError``."""
    traveller = RULESETS["traveller"]
    for zone_type, parameter in (("smoke", "density"), ("illuminated", "by")):
        with pytest.raises(MissingParameter, match=f"zone type '{zone_type}' needs {parameter}") as caught:
            traveller.validate_zone(Zone(type=zone_type))
        assert caught.value.parameter == parameter
    for zone in (Zone(type="smoke", density=0), Zone(type="woods", density=1)):
        with pytest.raises(ValueError, match="density") as refused:
            traveller.validate_zone(zone)
        assert not isinstance(refused.value, MissingParameter)
