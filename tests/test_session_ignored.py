"""Nothing ignored in silence: scene.synced and scene.patched list what the bridge holds but will not use, once,
with a reason in the scene's locale; a zone missing a parameter is held but kept out of the rulings."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from bridge.schema import SCHEMA_PATH
from tests.scenes import OfflineClient, rect_region, scene, token, wall

VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def everything_ignored(locale: str = "en") -> dict[str, Any]:
    """An Infinity scene holding one of each thing it cannot use, beside a zone and a token it uses."""
    no_area = {"id": "r-v14", "name": "Star", "shapes": [], "zone": {"type": "low"}}  # its V14 shape not sent
    return scene(
        regions=[
            rect_region("r-low", "low", 250, 350, 200, 200),
            {**rect_region("r-dark", "darkness", 600, 350, 200, 200, penalty=-4), "name": "Cellar"},
            {**rect_region("r-nameless", "woods", 600, 0, 100, 100), "name": ""},
            no_area,
        ],
        tokens=[token("a", 0, 400, "night-vision-3", "multispectral-visor-1", "radar"), token("t", 1000, 400)],
        walls=[wall("w-dot", 500, 500, 500, 500), wall("w-real", 900, 0, 900, 100)],
        environment={"darkness": -3},
        locale=locale,
    )


def sync(client: OfflineClient, data: dict[str, Any]) -> dict[str, Any]:
    answer = client.sync(data)
    VALIDATOR.validate(answer)
    return answer


def patch(client: OfflineClient, **fields: Any) -> dict[str, Any]:
    answer = client.one({"type": "scene.patch", "id": "p", "scene": "s1", **fields})
    assert answer["type"] == "scene.patched", answer
    VALIDATOR.validate(answer)
    return answer


def test_sync_lists_each_thing_it_will_not_use_once_with_its_reason() -> None:
    """Contract: sync lists each thing it will not use once, named by label (never by id) in the reason.

    A zone type and traits of another ruleset, a zone with no readable shape, a wall of no length and a condition of
    another ruleset are each listed once.
    """
    answer = sync(OfflineClient(), everything_ignored())
    assert answer["ignored"] == [
        {
            "region": "r-dark",
            "cause": "foreign-zone",
            "reason": "Cellar: Darkness is a zone type of GURPS 4e, not of Infinity N4; it is not used in rulings.",
        },
        {
            "region": "r-nameless",
            "cause": "foreign-zone",
            "reason": "Unnamed region: Woods is a zone type of Traveller, not of Infinity N4; it is not used in "
            "rulings.",
        },
        {
            "region": "r-v14",
            "cause": "no-area",
            "reason": "Star: the zone has no shape the bridge can read and no resolved polygons; it covers nothing.",
        },
        {
            "token": "a",
            "cause": "foreign-traits",
            "reason": "A: the traits Night Vision 3, Radar belong to GURPS 4e, Traveller, not to Infinity N4; "
            "they are not used in rulings.",
        },
        {
            "wall": "w-dot",
            "cause": "no-length",
            "reason": "A wall with both ends at the same point has no length; it blocks nothing.",
        },
        {
            "environment": "darkness",
            "cause": "foreign-condition",
            "reason": "Scene condition Darkness: read by GURPS 4e, not by Infinity N4; it is not used in rulings.",
        },
    ]


def test_reasons_are_in_the_scenes_locale() -> None:
    """Contract: 'the reason in the scene's locale' — a Spanish scene reads Spanish reasons."""
    answer = sync(OfflineClient(), everything_ignored("es"))
    reasons = {next(k for k in entry if k not in ("cause", "reason")): entry["reason"] for entry in answer["ignored"]}
    assert answer["ignored"][0]["reason"] == (
        "Cellar: Oscuridad es un tipo de zona de GURPS 4.ª ed., no de Infinity N4; no se usa en las resoluciones."
    )
    assert reasons["wall"] == "Un muro con ambos extremos en el mismo punto no tiene longitud; no bloquea nada."
    assert "Región sin nombre" in answer["ignored"][1]["reason"]
    assert "rasgos" in reasons["token"] and "Condición de la escena Oscuridad" in reasons["environment"]


def test_a_scene_with_nothing_ignored_answers_as_the_contract_shows() -> None:
    """The contract's answer, unchanged, when everything is used: no ``ignored`` field."""
    answer = sync(
        OfflineClient(), scene(regions=[rect_region("r-low", "low", 0, 0, 10, 10)], tokens=[token("a", 0, 0)])
    )
    assert answer == {"type": "scene.synced", "id": "m1", "scene": "s1", "regions": 1, "tokens": 1, "walls": 0}


def traveller_smoke(**params: Any) -> dict[str, Any]:
    """A Traveller scene: observer ``a``, target ``t`` 10 spaces east, a smoke zone on the line."""
    return scene(
        ruleset="traveller",
        regions=[{**rect_region("r-smoke", "smoke", 450, 350, 100, 200, **params), "name": "Smoke screen"}],
        tokens=[token("a", 0, 400), token("t", 1000, 400)],
    )


def test_a_zone_missing_a_parameter_is_held_listed_and_kept_out_of_the_rulings() -> None:
    """Contract: 'a zone missing a parameter its ruleset needs' is listed, not refused; the rulings do not see it.

    A patch that gives the parameter brings it into the rulings and names it in ``used``.
    """
    client = OfflineClient()
    answer = sync(client, traveller_smoke())
    assert answer["ignored"] == [
        {
            "region": "r-smoke",
            "cause": "missing-parameter",
            "reason": "Smoke screen: a Smoke zone needs a smoke density under Traveller; it is not used in rulings "
            "until it has it.",
        }
    ]
    assert client.adjudicate("a", "t", "observation")["crossings"] == []
    fixed = traveller_smoke(density=2)["regions"]
    answer = patch(client, upsert={"regions": fixed})
    assert "ignored" not in answer and answer["used"] == [{"region": "r-smoke"}]
    assert [c["region"] for c in client.adjudicate("a", "t", "observation")["crossings"]] == ["r-smoke"]


def test_a_held_zone_comes_back_when_the_rules_no_longer_need_the_parameter() -> None:
    """A held zone is used once the rules no longer need its parameter: the bridge keeps the zone as sent.

    Switched to Infinity by a patch, the bare smoke is an Infinity Smoke zone (it takes no parameter) and is used —
    nothing was lost by holding it out of Traveller's rulings.
    """
    client = OfflineClient()
    sync(client, traveller_smoke())
    answer = patch(client, rules={"ruleset": "infinity-n4"})
    assert answer["used"] == [{"region": "r-smoke"}] and "ignored" not in answer
    assert [c["zone"] for c in client.adjudicate("a", "t")["crossings"]] == ["smoke"]


def test_a_malformed_parameter_is_still_refused() -> None:
    """Only a missing parameter is held: a wrong one (density 0) is bad input, refused by name."""
    answer = OfflineClient().one({"type": "scene.sync", "id": "q", "scene": traveller_smoke(density=0)})
    assert answer["code"] == "invalid-message" and "density" in answer["message"]


def test_a_patch_lists_only_what_it_newly_makes_ignored() -> None:
    """'Listed once': a patch lists only what it newly makes ignored; a locale change lists everything again.

    Moving a token whose traits are already listed lists nothing; a new foreign zone is listed; removing an id the scene
    never held is listed as not held; a locale change lists everything again, in Spanish.
    """
    client = OfflineClient()
    data = everything_ignored()
    sync(client, data)
    moved = {**data["tokens"][0], "x": 10}
    assert patch(client, upsert={"tokens": [moved]}) == {"type": "scene.patched", "id": "p", "scene": "s1"}
    fog = rect_region("r-fog", "illuminated", 0, 0, 50, 50, by="white-spotlight")
    answer = patch(client, upsert={"regions": [fog]}, remove={"walls": ["w-ghost", "w-dot"]})
    assert answer["ignored"] == [
        {"wall": "w-ghost", "cause": "not-held", "reason": "Not in this scene: there was nothing to remove."},
        {
            "region": "r-fog",
            "cause": "foreign-zone",
            "reason": "r-fog: Illuminated area is a zone type of Traveller, not of Infinity N4; it is not used in "
            "rulings.",
        },
    ]
    assert "used" not in answer  # the removed wall is gone, not used
    answer = patch(client, rules={"ruleset": "infinity-n4", "locale": "es"})
    assert len(answer["ignored"]) == 6 and all("no " in entry["reason"] for entry in answer["ignored"])
