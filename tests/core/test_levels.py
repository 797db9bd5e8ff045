"""V14 Scene Levels: walls, zones and lights judged in 3D by their levels' spans (contract, "Levels").

The scene is a two-storey building: ``Ground`` from 0 to 10, ``Upper`` from 10 to 20 (grid units, as
Foundry's ``LevelData.elevation``). Two tokens stand on each floor, 8 squares apart; between them a wall
and a Zero Visibility zone that belong to one floor.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from bridge.core.geometry import SceneGeometry, level_spans, spans_of
from bridge.core.rules import RULESETS
from bridge.core.scene import Level, Scene, TokenLight
from bridge.core.sight import CrossingKind
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneRejected, SceneState, World

from .test_visibility_properties import plain_rulings

GROUND = {"id": "l-ground", "name": "Ground", "bottom": 0, "top": 10}
UPPER = {"id": "l-upper", "name": "Upper", "bottom": 10, "top": 20}
CELLAR = {"id": "l-cellar", "name": "Cellar", "bottom": -10, "top": 0}
THROUGH = CrossingKind.THROUGH


def building(
    *, wall_levels: list[str], zone_levels: list[str], levels: list[dict[str, Any]] | None = None, **extra: Any
) -> Scene:
    """Tokens a, b on the ground floor (elevation 0), c, d upstairs (10); a wall at x = 450 and a zone
    around it, on ``wall_levels`` and ``zone_levels``. ``levels=[]`` and no levels named is V13's form."""
    levels = [GROUND, UPPER] if levels is None else levels
    on = bool(levels)

    def tok(token_id: str, x: float, elevation: float, level: str) -> dict[str, Any]:
        data: dict[str, Any] = {"id": token_id, "x": x, "y": 0, "elevation": elevation}
        return data | ({"level": level} if on else {})

    data: dict[str, Any] = {
        "id": "s-house",
        "grid": {"size": 100, "distance": 1},
        "rules": {"ruleset": "infinity-n4"},
        "levels": levels,
        "tokens": [
            tok("a", 0, 0, "l-ground"),
            tok("b", 800, 0, "l-ground"),
            tok("c", 0, 10, "l-upper"),
            tok("d", 800, 10, "l-upper"),
        ],
        "walls": [{"id": "w", "c": [450, -500, 450, 500], "levels": wall_levels}],
        "regions": [
            {
                "id": "r-dark",
                "name": "Dark loft",
                "shapes": [{"type": "rectangle", "x": 300, "y": -200, "width": 100, "height": 500}],
                "zone": {"type": "zero"},
                "levels": zone_levels,
            }
        ],
    }
    data.update(extra)
    return Scene.model_validate(data)


def centre(geo: SceneGeometry, actor: str, target: str) -> tuple[list[tuple[str, CrossingKind]], tuple[str, ...]]:
    """The zones (region, kind) and the walls of the centre line from ``actor`` to ``target``."""
    line = geo.sight_lines(actor, target, "center")[0]
    evidence = geo.evidence(actor, target, line)
    return [(c.region, c.kind) for c in evidence.crossings], evidence.blocking_walls


def test_an_upper_floor_wall_and_zone_leave_a_ground_floor_line_alone() -> None:
    """Contract: an upper-floor wall and zone leave a ground-floor line alone; upstairs they block and count.

    A wall blocks only where the line's height lies in its levels' spans; a zone counts only within them. Upstairs the
    same wall blocks and the same zone is crossed.
    """
    geo = SceneGeometry(building(wall_levels=["l-upper"], zone_levels=["l-upper"]))
    assert centre(geo, "a", "b") == ([], ())
    assert centre(geo, "c", "d") == ([("r-dark", THROUGH)], ("w",))


def test_a_ground_floor_wall_does_not_reach_the_floor_above() -> None:
    """A ground-floor wall (0 to 10) blocks ground-floor lines, and not a line standing on the floor above at 10.

    The level above begins at 10 (Foundry puts a token changing level at its bottom).
    """
    geo = SceneGeometry(building(wall_levels=["l-ground"], zone_levels=["l-ground"]))
    assert centre(geo, "a", "b") == ([("r-dark", THROUGH)], ("w",))
    assert centre(geo, "c", "d") == ([], ())
    assert level_spans([Level.model_validate(GROUND), Level.model_validate(UPPER)])["l-ground"][1] < 10


def test_a_line_between_floors_meets_the_wall_at_its_own_height() -> None:
    """A line from the ground (0) to a token at 20 is stopped by an upper-floor wall, not by a ground-floor one.

    The line crosses x = 450 at height ≈ 11.4.
    """
    for levels, blocked in ((["l-upper"], ("w",)), (["l-ground"], ())):
        scene = building(wall_levels=levels, zone_levels=[])
        tokens = [*scene.tokens, scene.tokens[3].model_copy(update={"id": "e", "x": 700.0, "elevation": 20.0})]
        geo = SceneGeometry(scene.model_copy(update={"tokens": tokens}))
        assert centre(geo, "a", "e")[1] == blocked


def test_a_token_inside_an_upper_floor_zone_only_when_upstairs() -> None:
    """A token's footprint in an upstairs zone counts only when its elevation is upstairs."""
    scene = building(wall_levels=[], zone_levels=["l-upper"])
    tokens = [scene.tokens[0].model_copy(update={"x": 300.0}), scene.tokens[2].model_copy(update={"x": 300.0})]
    geo = SceneGeometry(scene.model_copy(update={"tokens": [*tokens, *scene.tokens[1:2], *scene.tokens[3:]]}))
    assert geo.zones_containing("a") == ()
    assert geo.zones_containing("c") == ("r-dark",)


def test_a_scene_without_levels_is_judged_as_before() -> None:
    """V13 (no levels anywhere): the wall blocks and the zone counts on every floor, as they always did."""
    geo = SceneGeometry(building(wall_levels=[], zone_levels=[], levels=[]))
    for actor, target in (("a", "b"), ("c", "d"), ("a", "d")):
        assert centre(geo, actor, target) == ([("r-dark", THROUGH)], ("w",))
    # Objects on no level span every height, in a scene with levels too.
    assert centre(SceneGeometry(building(wall_levels=[], zone_levels=[])), "a", "b") == ([("r-dark", THROUGH)], ("w",))


def test_a_light_of_another_level_lights_nothing_there() -> None:
    """Contract: a light lights only tokens on its levels; a light on no level lights every floor.

    'a light lights only tokens on its levels' — by the token's level, or (no level given) by its elevation.
    """
    light = {"id": "lamp", "x": 100, "y": 50, "radius": 20}
    scene = building(
        wall_levels=[],
        zone_levels=[],
        lights=[light | {"levels": ["l-upper"]}, light | {"id": "sun"}],
    )
    tokens = [*scene.tokens, scene.tokens[0].model_copy(update={"id": "f", "level": None, "elevation": 12.0})]
    geo = SceneGeometry(scene.model_copy(update={"tokens": tokens}))
    assert [source.id for source in geo.lights_reaching("a")] == ["sun"]
    assert [source.id for source in geo.lights_reaching("c")] == ["lamp", "sun"]
    assert [source.id for source in geo.lights_reaching("f")] == ["lamp", "sun"]


def test_a_tokens_light_lights_its_own_floor() -> None:
    """A token's light (Foundry's token light is on the token's level) lights tokens on its carrier's level."""
    scene = building(wall_levels=["l-upper"], zone_levels=[])
    tokens = [scene.tokens[0].model_copy(update={"light": TokenLight(radius=30)}), *scene.tokens[1:]]
    geo = SceneGeometry(scene.model_copy(update={"tokens": tokens}))
    assert [source.id for source in geo.lights_reaching("b")] == ["a"]
    assert [source.id for source in geo.lights_reaching("c")] == []  # right above the lantern


def test_a_zone_on_two_floors_apart_counts_on_both_and_not_between() -> None:
    """A zone on the cellar and the upper floor (two spans) counts there, not on the ground floor between."""
    scene = building(wall_levels=[], zone_levels=["l-cellar", "l-upper"], levels=[CELLAR, GROUND, UPPER])
    geo = SceneGeometry(scene)
    assert centre(geo, "a", "b")[0] == []
    assert centre(geo, "c", "d")[0] == [("r-dark", THROUGH)]
    spans = spans_of(["l-cellar", "l-upper"], level_spans(scene.levels))
    assert len(spans) == 2
    assert spans_of(["l-ground", "l-upper"], level_spans(scene.levels)) == ((0.0, 20.0),)


@pytest.mark.parametrize(
    ("wall_levels", "zone_levels", "levels"),
    [
        (["l-upper"], ["l-upper"], None),
        (["l-ground"], ["l-ground", "l-upper"], None),
        ([], ["l-cellar", "l-upper"], [CELLAR, GROUND, UPPER]),
        (["l-cellar", "l-upper"], [], [CELLAR, GROUND, UPPER]),
        ([], [], []),
    ],
)
@pytest.mark.parametrize("action", ["bs-attack", "discover", "combat-jump"])
def test_the_whole_scene_engine_agrees_with_the_per_pair_path(
    wall_levels: list[str], zone_levels: list[str], levels: list[dict[str, Any]] | None, action: str
) -> None:
    """SceneVisibility gives every pair the per-pair ruling on leveled scenes (split zones included)."""
    scene = building(wall_levels=wall_levels, zone_levels=zone_levels, levels=levels)
    state = SceneState(scene, RULESETS["infinity-n4"])
    assert dict(SceneVisibility(state, action=action).rulings()) == plain_rulings(state, action, False)


def test_the_engine_follows_a_change_of_levels() -> None:
    """A new sync that moves the upper floor up (its wall and zone then stand above both pairs) updates the rulings."""
    state = SceneState(building(wall_levels=["l-upper"], zone_levels=["l-upper"]), RULESETS["infinity-n4"])
    engine = SceneVisibility(state, action="bs-attack")
    assert not engine.rulings()[("c", "d")].allowed
    levels = [GROUND | {"top": 12}, UPPER | {"bottom": 12}]
    raised = building(wall_levels=["l-upper"], zone_levels=["l-upper"], levels=levels)
    new_state = SceneState(raised, RULESETS["infinity-n4"], version=1)
    changed = engine.update(new_state)
    assert changed[("c", "d")] is not None and changed[("c", "d")].allowed
    assert dict(engine.rulings()) == plain_rulings(new_state, "bs-attack", False)


# --- Validation ------------------------------------------------------------------------------------


def test_an_unknown_level_is_refused_by_name() -> None:
    """A token, region, wall or light naming a level the scene lacks is refused by name.

    Level ids are checked: the error names the field, the id and the levels the scene has.
    """
    world = World("w")
    with pytest.raises(SceneRejected) as caught:
        world.sync(building(wall_levels=["l-attic"], zone_levels=[]))
    assert caught.value.field == "scene.walls[0].levels"
    assert "'l-attic'" in str(caught.value) and "l-ground, l-upper" in str(caught.value)
    with pytest.raises(SceneRejected) as caught:
        world.sync(building(wall_levels=[], zone_levels=[], levels=[GROUND]))
    assert caught.value.field == "scene.tokens[2].level"
    assert world.scenes == {}


def test_a_patch_naming_an_unknown_level_leaves_the_scene_as_it_was() -> None:
    """A patch upserting an object on an unknown level is refused; the held scene is untouched."""
    world = World("w")
    state = world.sync(building(wall_levels=["l-upper"], zone_levels=[]))
    moved = state.scene.tokens[0].model_copy(update={"x": 100.0})
    wall = state.scene.walls[0].model_copy(update={"levels": ["l-roof"]})
    with pytest.raises(SceneRejected) as caught:
        world.patch("s-house", upsert={"tokens": [moved], "walls": [wall]}, remove={}, replace={})
    assert caught.value.field == "upsert.walls[0].levels"
    assert world.scenes["s-house"] is state
    world.patch("s-house", upsert={"tokens": [moved]}, remove={}, replace={})
    assert world.scenes["s-house"].scene.tokens[0].x == 100.0


def test_levels_are_validated_as_foundry_stores_them() -> None:
    """A level whose bottom is above its top, or two levels with one id, are refused by the model."""
    with pytest.raises(ValidationError, match="bottom must not be above top"):
        Level.model_validate({"id": "l", "bottom": 5, "top": 1})
    with pytest.raises(ValidationError, match="levels has the id 'l-ground' twice"):
        building(wall_levels=[], zone_levels=[], levels=[GROUND, GROUND])
    unbounded = Level.model_validate(json.loads('{"id": "l-sky", "bottom": 20, "top": null}'))
    assert level_spans([unbounded]) == {"l-sky": (20.0, float("inf"))}
