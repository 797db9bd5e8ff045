"""check_scene: scene-wide conditions (``environment``) are read by some ruleset, or refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.core.scene import Scene
from bridge.core.world import SceneRejected, check_scene


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
