"""check_scene: scene-wide conditions are read by some ruleset, or refused by name; patched states take over
the geometry they leave unchanged."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from bridge.core.scene import Region, Scene, Token, Wall
from bridge.core.world import SceneRejected, World, check_scene


def _scene(ruleset: str, environment: dict[str, Any]) -> Scene:
    return Scene.model_validate({"id": "s", "rules": {"ruleset": ruleset}, "environment": environment})


def test_a_condition_no_ruleset_reads_is_refused_by_name() -> None:
    """A misspelt key ('wether') must not pass for good weather: it is refused, naming the key."""
    with pytest.raises(SceneRejected) as refused:
        check_scene(_scene("traveller", {"wether": "very-poor"}))
    assert refused.value.field == "scene.environment.wether"
    assert "'wether'" in str(refused.value) and "weather" in str(refused.value)


@pytest.mark.parametrize(
    ("ruleset", "environment"),
    [("infinity-n4", {"light": 7}), ("traveller", {"darkness": -99}), ("gurps-4e", {"weather": "foggy"})],
)
def test_another_rulesets_condition_is_checked_by_its_owner(ruleset: str, environment: dict[str, Any]) -> None:
    """Contract: Traveller `light` is "day" or 1…3 and `weather` good, poor or very-poor; GURPS
    `darkness` is 0…-10 — whatever the scene's ruleset, a value outside these is refused."""
    with pytest.raises(SceneRejected):
        check_scene(_scene(ruleset, environment))


@pytest.mark.parametrize(
    ("ruleset", "environment"),
    [
        ("infinity-n4", {"light": 2, "weather": "poor", "darkness": -3}),
        ("traveller", {"light": "day", "darkness": -10}),
        ("gurps-4e", {"darkness": -4, "weather": "very-poor"}),
    ],
)
def test_well_formed_conditions_of_any_ruleset_are_accepted(ruleset: str, environment: dict[str, Any]) -> None:
    """A scene may carry every system's conditions (a module that sends them all); the scene's own are
    read, the others ignored."""
    ruleset_checked, _ = check_scene(_scene(ruleset, environment))
    assert ruleset_checked.id == ruleset


def _docks() -> Scene:
    return Scene.model_validate(
        {
            "id": "s",
            "rules": {"ruleset": "infinity-n4"},
            "regions": [
                {
                    "id": "r-poor",
                    "shapes": [{"type": "circle", "x": 500, "y": 500, "radius": 150}],
                    "zone": {"type": "poor"},
                }
            ],
            "tokens": [
                {"id": "t-a", "x": 0, "y": 450},
                {"id": "t-b", "x": 900, "y": 450},
            ],
            "walls": [{"id": "w", "c": [700, 0, 700, 300]}],
        }
    )


def test_a_token_move_takes_over_the_zones_and_walls_it_leaves_unchanged() -> None:
    """After a patch that moves a token, the new state's geometry reuses the compiled zones and walls of
    the state it replaces (the same objects, nothing compiled again) and answers for the moved token."""
    world = World("w")
    first = world.sync(_docks())
    before = first.geometry
    moved = Token(id="t-b", x=900, y=0)
    second = world.patch("s", upsert={"tokens": [moved]}, remove={}, replace={}).state
    after = second.geometry
    assert after._zone_tree is before._zone_tree and after._walls is before._walls
    assert second.seed is None  # handed over once built: no chain of states kept alive
    assert (after.center("t-b").x, after.center("t-b").y) == (950.0, 50.0)
    assert (before.center("t-b").x, before.center("t-b").y) == (950.0, 500.0)
    assert after.inside("t-a", "r-poor") is False and after.inside("t-b", "r-poor") is False
    wall = Wall(id="w", c=[0, 0, 10, 10])
    third = world.patch("s", upsert={"walls": [wall]}, remove={}, replace={}).state
    assert third.geometry._walls is not after._walls and third.geometry._zone_tree is after._zone_tree
    region = Region.model_validate(
        {"id": "r-poor", "shapes": [{"type": "circle", "x": 0, "y": 0, "radius": 10}], "zone": {"type": "poor"}}
    )
    fourth = world.patch("s", upsert={"regions": [region]}, remove={}, replace={}).state
    assert fourth.geometry._zone_tree is not third.geometry._zone_tree


def test_a_state_never_built_hands_on_what_it_was_given() -> None:
    """Two patches in a row with no ruling between: the third state still takes over the first's zones,
    and no state keeps its predecessor alive."""
    world = World("w")
    first = world.sync(_docks())
    compiled = first.geometry
    world.patch("s", upsert={"tokens": [Token(id="t-a", x=10, y=450)]}, remove={}, replace={})
    third = world.patch("s", upsert={"tokens": [Token(id="t-a", x=20, y=450)]}, remove={}, replace={}).state
    assert third.geometry._zone_tree is compiled._zone_tree
    probe = weakref.ref(first)
    del first
    gc.collect()
    assert probe() is None
