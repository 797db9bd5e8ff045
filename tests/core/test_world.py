"""check_scene: scene-wide conditions are read by some ruleset, or refused by name; patched states take over
the geometry they leave unchanged."""

from __future__ import annotations

import gc
import math
import sys
import weakref
from typing import Any

import pytest

from bridge.core import world as world_module
from bridge.core.scene import Region, Scene, Token, Wall
from bridge.core.world import SceneRejected, SceneState, World, check_scene


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
    """Contract: a condition of another ruleset outside its values is refused, whatever the scene's ruleset.

    Traveller `light` is "day" or 1…3 and `weather` good, poor or very-poor; GURPS `darkness` is 0…-10.
    """
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
    """A scene may carry every system's conditions (a module sends them all): its own are read, the others ignored."""
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
    """After a patch that moves a token, the new state reuses the compiled zones and walls of the one it replaces.

    The new state's geometry holds the same objects (nothing compiled again) and answers for the moved token.
    """
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
    """After two patches in a row with no ruling between, the third state still takes over the first's zones.

    No state keeps its predecessor alive.
    """
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


# --- What the vertex limits count (issue 11) ------------------------------------------------------


def _limited_world(**limits: int) -> World:
    from bridge.core.world import SceneLimits

    return World("w", limits=SceneLimits(**limits))


def _full_count(scene: Scene) -> int:
    from bridge.core.world import region_vertices, token_vertices

    return sum(map(region_vertices, scene.regions)) + sum(token_vertices(t, scene.grid.size) for t in scene.tokens)


def test_patched_vertex_counts_equal_a_full_recount() -> None:
    """Patching regions and round-based tokens keeps the held vertex count equal to a full recount.

    Upserting, replacing and removing keep the held count exact, and a new grid size (round bases drawn anew) is counted
    again from scratch.
    """
    world = World("w")
    ring = [0, 0, 100, 0, 100, 100]
    world.sync(
        Scene.model_validate(
            {
                "id": "s",
                "rules": {"ruleset": "infinity-n4"},
                "regions": [{"id": "r", "shapes": [{"type": "circle", "x": 0, "y": 0, "radius": 500}]}],
                "tokens": [{"id": "t", "x": 0, "y": 0, "shape": "ellipse", "width": 3, "height": 3}],
            }
        )
    )
    steps: list[dict[str, Any]] = [
        {"upsert": {"regions": [Region.model_validate({"id": "p", "polygons": [{"points": ring}]})]}},
        {
            "upsert": {
                "regions": [
                    Region.model_validate(
                        {"id": "r", "shapes": [{"type": "rectangle", "x": 0, "y": 0, "width": 5, "height": 5}]}
                    )
                ]
            }
        },
        {
            "upsert": {
                "tokens": [
                    Token.model_validate({"id": "t", "x": 0, "y": 0, "shape": "ellipse", "width": 40, "height": 2})
                ]
            }
        },
        {"upsert": {"tokens": [Token.model_validate({"id": "u", "x": 9, "y": 9})]}, "remove": {"regions": ["p"]}},
        {"remove": {"tokens": ["t"]}},
    ]
    for step in steps:
        state = world.patch("s", upsert=step.get("upsert", {}), remove=step.get("remove", {}), replace={})
        assert state.state.vertices == _full_count(state.state.scene)
    grid = Scene.model_validate({"id": "x", "rules": {"ruleset": "infinity-n4"}, "grid": {"size": 400}}).grid
    world.patch(
        "s",
        upsert={
            "tokens": [Token.model_validate({"id": "t", "x": 0, "y": 0, "shape": "ellipse", "width": 3, "height": 3})]
        },
        remove={},
        replace={},
    )
    state = world.patch("s", upsert={}, remove={}, replace={"grid": grid}).state
    assert state.vertices == _full_count(state.scene)


def test_a_round_base_counts_by_the_polygon_it_is_drawn_with() -> None:
    """A huge round token (4096 vertices) is over a limit of 4000 vertices; a square one (4) is not."""
    world = _limited_world(vertices=4000)
    big = {"id": "t", "x": 0, "y": 0, "shape": "ellipse", "width": 1000, "height": 1000}  # radius 200,000 px
    with pytest.raises(SceneRejected) as refused:
        world.sync(
            Scene.model_validate(
                {"id": "s", "rules": {"ruleset": "infinity-n4"}, "grid": {"size": 400}, "tokens": [big]}
            )
        )
    assert (refused.value.limit, refused.value.value, refused.value.most) == ("vertices", 4096 + 0, 4000)
    world.sync(
        Scene.model_validate(
            {"id": "s", "rules": {"ruleset": "infinity-n4"}, "tokens": [{**big, "shape": "rectangle"}]}
        )
    )


def test_one_ring_over_the_ring_limit_is_refused_naming_it() -> None:
    """A resolved ring of 11 vertices over a ring limit of 10: too-large naming the ring's field."""
    world = _limited_world(ring_vertices=10)
    ring = [
        c for i in range(11) for c in (1000 * math.cos(i / 11 * 2 * math.pi), 1000 * math.sin(i / 11 * 2 * math.pi))
    ]
    region = {"id": "r", "name": "Fog bank", "polygons": [{"points": [0, 0, 10, 0, 0, 10]}, {"points": ring}]}
    with pytest.raises(SceneRejected) as refused:
        world.sync(Scene.model_validate({"id": "s", "rules": {"ruleset": "infinity-n4"}, "regions": [region]}))
    assert refused.value.field == "scene.regions[0].polygons[1]" and "'Fog bank'" in str(refused.value)
    assert (refused.value.limit, refused.value.value, refused.value.most) == ("ring-vertices", 11, 10)


def _walled(n: int, name: str) -> Scene:
    walls = [{"id": f"w{i}", "c": [i, 0, i, 10]} for i in range(n)]
    return Scene.model_validate({"id": "s", "name": name, "rules": {"ruleset": "infinity-n4"}, "walls": walls})


def test_a_replaced_scene_is_freed_slice_by_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """scene.sync over a held scene frees the old state through free_in_slices, by reference counting alone.

    With collection off, free_in_slices gets the old state first and each of its walls after it.
    """
    handed: list[list[Any]] = []
    real = world_module.free_in_slices

    def spy(found: list[Any]) -> None:
        handed.append(list(found))
        real(found)

    monkeypatch.setattr(world_module, "free_in_slices", spy)
    world = World("w")
    old = world.sync(_walled(3000, "old"))
    probe = weakref.ref(old)
    old_walls = list(old.scene.walls)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del old
        world.sync(_walled(3000, "new"))
        (found,) = [parts for parts in handed if parts]
        assert found[0] is probe()
        held = {id(part) for part in found}
        assert all(id(old_walls[i]) in held for i in range(0, 3000, 500))
        handed.clear()
        del found
        assert probe() is None
        references = sys.getrefcount(old_walls[0])
        assert references == 2  # this test's list and the call's argument: nothing else
    finally:
        if enabled:
            gc.enable()


def test_a_dropped_world_frees_its_scenes_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """World.release empties the world and frees every state through free_in_slices, by reference counting alone.

    It is called on a world nobody is connected to; collection is off.
    """
    handed: list[int] = []
    real = world_module.free_in_slices

    def spy(found: list[Any]) -> None:
        handed.append(len(found))
        real(found)

    world = World("w")
    probes = [weakref.ref(world.sync(_walled(2000, "x").model_copy(update={"id": scene_id}))) for scene_id in "ab"]
    monkeypatch.setattr(world_module, "free_in_slices", spy)
    enabled = gc.isenabled()
    gc.disable()
    try:
        world.release()
        assert world.scenes == {}
        assert handed and handed[0] > 4000  # two states, their scenes and each of their 4,000 walls
        assert all(probe() is None for probe in probes)
    finally:
        if enabled:
            gc.enable()


# --- A patch checks only what it brings (issue 15) -----------------------------------------------


def _patched_scene(scene: Scene, upsert: dict[str, list[Any]], remove: dict[str, list[str]]) -> Scene:
    """The scene a patch makes, built by hand: removals first, then upserts (in place, or appended)."""
    parts: dict[str, Any] = {}
    for kind in ("regions", "tokens"):
        held = {item.id: item for item in getattr(scene, kind)}
        for item_id in remove.get(kind, []):
            held.pop(item_id, None)
        for item in upsert.get(kind, []):
            held[item.id] = item
        parts[kind] = list(held.values())
    return scene.model_copy(update=parts)


def test_a_patch_is_refused_as_checking_the_whole_patched_scene_refuses_it() -> None:
    """World.patch, checking only what it brings, refuses and holds what a check of the whole patched scene would.

    Random patches (bad zone parameters, unknown zone types and traits, rings over the limit, among good objects,
    upserted in place or appended, with removals) are each refused with the message and field of a check of the whole
    patched scene; what that check accepts is held (the world unchanged after a refusal).
    """
    import random

    from bridge.core.world import SceneLimits

    limits = SceneLimits(ring_vertices=6)
    rng = random.Random(15)
    square = [0, 0, 100, 0, 100, 100, 0, 100]
    octagon = [0, 0, 50, -20, 100, 0, 120, 50, 100, 100, 50, 120, 0, 100, -20, 50]

    def region(region_id: str) -> Region:
        kind = rng.choice(("good", "good", "woods", "density", "type", "ring", "none"))
        zone: dict[str, Any] | None = {"type": "smoke", "density": rng.randint(1, 3)}
        points = square
        if kind == "woods":
            zone = {"type": "woods"}
        elif kind == "density":
            zone = {"type": "smoke", "density": 0}
        elif kind == "type":
            zone = {"type": "bogus-zone"}
        elif kind == "ring":
            points = octagon
        elif kind == "none":
            zone = None
        shape = {"type": "polygon", "points": [p + rng.randint(0, 500) for p in points]}
        return Region.model_validate({"id": region_id, "name": region_id, "shapes": [shape], "zone": zone})

    def token(token_id: str) -> Token:
        traits = rng.choice(([], ["radar"], ["bogus-trait"], ["radar", "bogus-trait"]))
        return Token.model_validate(
            {"id": token_id, "x": rng.randint(0, 900), "y": rng.randint(0, 900), "traits": traits}
        )

    refused = accepted = 0
    for _ in range(40):
        world = World("w", limits=limits)
        base = Scene.model_validate(
            {
                "id": "s",
                "rules": {"ruleset": "traveller"},
                "regions": [
                    {"id": f"r{k}", "shapes": [{"type": "polygon", "points": square}], "zone": {"type": "woods"}}
                    for k in range(5)
                ],
                "tokens": [{"id": f"t{k}", "x": 10 * k, "y": 0} for k in range(5)],
            }
        )
        state = world.sync(base)
        for _ in range(6):
            ids = {kind: [item.id for item in getattr(state.held_scene, kind)] for kind in ("regions", "tokens")}
            upsert: dict[str, list[Any]] = {
                "regions": [
                    region(rng.choice([*ids["regions"], "r-new", "r-other"])) for _ in range(rng.randint(0, 3))
                ],
                "tokens": [token(rng.choice([*ids["tokens"], "t-new"])) for _ in range(rng.randint(0, 3))],
            }
            remove = {kind: rng.sample(ids[kind], min(len(ids[kind]), rng.randint(0, 1))) for kind in ids}
            expected = _patched_scene(state.held_scene, upsert, remove)
            try:
                check_scene(expected, limits)
                error = None
            except SceneRejected as exc:
                error = (str(exc), exc.field)
            try:
                result = world.patch("s", upsert=upsert, remove=remove, replace={})
            except SceneRejected as exc:
                assert (str(exc), exc.field) == error
                assert world.scenes["s"] is state
                refused += 1
                continue
            assert error is None
            state = result.state
            for kind in ("regions", "tokens"):
                assert list(map(id, getattr(state.held_scene, kind))) == list(map(id, getattr(expected, kind)))
            accepted += 1
    assert refused > 20 and accepted > 20


def test_a_patch_checks_exactly_the_positions_of_the_objects_it_brings(monkeypatch: pytest.MonkeyPatch) -> None:
    """World.patch hands check_scene the positions of exactly the new objects of the patched lists.

    New objects upserted in place or appended, an id upserted twice, a held object upserted again, removed and brought
    back, many.
    """
    import random

    rng = random.Random(16)
    seen: list[dict[str, Any] | None] = []
    real = world_module.check_scene

    def spy(scene: Scene, *args: Any, only: Any = None, **kwargs: Any) -> Any:
        seen.append(None if only is None else {kind: list(rows) for kind, rows in only.items()})
        return real(scene, *args, only=only, **kwargs)

    monkeypatch.setattr(world_module, "check_scene", spy)
    world, state = _squares_world(6)
    for step in range(300):
        held = state.held_scene
        upsert: dict[str, list[Any]] = {}
        for kind in ("regions", "tokens"):
            items = []
            for _ in range(rng.choice((0, 1, 1, 2, 3, 9, 12))):
                old = rng.choice(getattr(held, kind))
                if rng.random() < 0.2:
                    items.append(old)  # the very same held object
                else:
                    item_id = rng.choice((old.id, old.id, f"{kind[0]}-new{step % 4}"))
                    items.append(old.model_copy(update={"id": item_id}))
            upsert[kind] = items
        remove = {
            kind: rng.sample(ids, min(rng.choice((0, 0, 1, 2)), len(ids) - 3))
            for kind in ("regions", "tokens")
            for ids in [[item.id for item in getattr(held, kind)]]
        }
        seen.clear()
        state = world.patch("s", upsert=upsert, remove=remove, replace={}).state
        (only,) = seen
        assert only is not None
        for kind in ("regions", "tokens"):
            before = set(map(id, getattr(held, kind)))
            expected = [k for k, item in enumerate(getattr(state.held_scene, kind)) if id(item) not in before]
            assert only[kind] == expected


def test_a_patched_version_holds_the_same_tokens_by_id_as_its_scene() -> None:
    """After random patches, ``SceneState.token``'s map is the scene's tokens by id, in order, the very objects.

    The patches upsert tokens twice or again, remove them, bring foreign traits, or touch regions only; the scene's
    tokens are the hand-made patch's, whether a patch started from the last version's map or built its own.
    """
    import random

    rng = random.Random(15)
    world, state = _squares_world(4)
    handed = 0
    for step in range(200):
        held = state.held_scene
        if rng.random() < 0.5:
            state.token("t0")  # the previous version's map built (a region-only patch may hand it on)
        upsert: dict[str, list[Any]] = {}
        kind = rng.choice(("regions", "tokens", "tokens"))
        items = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            old = rng.choice(getattr(held, kind))
            if rng.random() < 0.2:
                items.append(old)
            else:
                update: dict[str, Any] = {"id": rng.choice((old.id, f"{kind[0]}-new{step % 3}"))}
                if kind == "tokens":
                    update["x"] = rng.uniform(0, 500)
                    update["traits"] = ["multispectral-visor-2"] if rng.random() < 0.2 else []
                items.append(old.model_copy(update=update))
        upsert[kind] = items
        ids = [token.id for token in held.tokens]
        remove = {"tokens": rng.sample(ids, min(rng.choice((0, 0, 1)), len(ids) - 3))}
        before, state = state, world.patch("s", upsert=upsert, remove=remove, replace={}).state
        assert [before.token(token.id) for token in before.scene.tokens] == before.scene.tokens  # (left as it was)
        assert len(before.__dict__["_tokens"]) == len(before.scene.tokens)
        handed += "_tokens" in state.__dict__
        tokens = state.scene.tokens
        expected = _patched_scene(held, upsert, remove).tokens
        assert len(tokens) == len(expected) and all(a is b for a, b in zip(tokens, expected, strict=True))
        assert [state.token(token.id) for token in tokens] == tokens
        assert list(state.__dict__["_tokens"]) == [token.id for token in tokens]
        assert all(state.token(token.id) is token for token in tokens)
    assert 50 < handed < 200  # both ways taken: handed over by the patch, and built on first use


def _squares_world(regions: int) -> tuple[World, SceneState]:
    """A world holding scene ``s`` (Traveller): ``regions`` unit squares ``r0…`` and six tokens ``t0``–``t5``."""
    square = [0, 0, 100, 0, 100, 100, 0, 100]
    world = World("w")
    state = world.sync(
        Scene.model_validate(
            {
                "id": "s",
                "rules": {"ruleset": "traveller"},
                "regions": [{"id": f"r{k}", "shapes": [{"type": "polygon", "points": square}]} for k in range(regions)],
                "tokens": [{"id": f"t{k}", "x": 10 * k, "y": 0} for k in range(6)],
            }
        )
    )
    return world, state
