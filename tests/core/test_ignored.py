"""bridge.core.ignored through World: what a scene holds but will not use, found per object, and the scene the
rulings see (zones missing a parameter taken out, the held scene kept as sent)."""

from __future__ import annotations

from typing import Any

from bridge.core.scene import Region, Scene, Token
from bridge.core.world import World
from tests.scenes import rect_region, scene, token


def traveller(*regions: dict[str, Any]) -> Scene:
    return Scene.model_validate(scene(ruleset="traveller", regions=list(regions), tokens=[token("a", 0, 0)]))


def test_a_scene_with_nothing_missing_is_ruled_as_held() -> None:
    """No zone lacks a parameter: the rulings see the very scene held (no copy)."""
    state = World("w").sync(traveller(rect_region("r", "woods", 0, 0, 10, 10)))
    assert state.held is None and state.held_scene is state.scene and not state.ignored


def test_a_zone_missing_a_parameter_is_a_plain_region_to_the_rulings_only() -> None:
    """The held scene keeps the zone as sent; the ruled one has the region without its zone."""
    state = World("w").sync(traveller(rect_region("r", "smoke", 0, 0, 10, 10)))
    assert state.held_scene.regions[0].zone is not None and state.scene.regions[0].zone is None
    assert [entry.cause for entry in state.ignored.values()] == ["missing-parameter"]


def test_a_patch_that_leaves_regions_alone_keeps_the_ruled_regions() -> None:
    """A token's move keeps the same ruled regions list, so the geometry of the zones is taken over, not rebuilt."""
    world = World("w")
    before = world.sync(traveller(rect_region("r", "smoke", 0, 0, 10, 10)))
    moved = Token.model_validate(token("a", 50, 0))
    after = world.patch("s1", upsert={"tokens": [moved]}, remove={}, replace={}).state
    assert after.scene.regions is before.scene.regions and after.held_scene.regions is before.held_scene.regions


def test_a_patch_that_gives_the_parameter_brings_the_zone_into_the_rulings() -> None:
    """Upserting the region with its density: nothing ignored, the zone ruled, and the result names it used."""
    world = World("w")
    world.sync(traveller(rect_region("r", "smoke", 0, 0, 10, 10)))
    fixed = Region.model_validate(rect_region("r", "smoke", 0, 0, 10, 10, density=1))
    result = world.patch("s1", upsert={"regions": [fixed]}, remove={}, replace={})
    assert result.ignored == [] and result.used == [("region", "r")]
    assert result.state.held is None and result.state.scene.regions[0].zone is not None
