"""SceneVisibility against the plain path (SceneGeometry.evidence + the ruleset, per pair) on random scenes.

Example counts stay small for CI; ``VISIBILITY_EXAMPLES=2000`` (say) runs many more.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bridge.core.geometry import CrossingRing, WallIndex, ring_polygon
from bridge.core.rules import RULESETS, Ruling, Situation
from bridge.core.scene import Region, Scene, Token, Wall, Zone
from bridge.core.sight import Point3
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneState

from .shapes import circle, ellipse, polygon, rect, region, token, wall

EXAMPLES = int(os.environ.get("VISIBILITY_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ACTIONS = ("bs-attack", "dodge", "discover", "combat-jump", "speculative-attack")
ZONE_TYPES = ("low", "poor", "zero", "white-noise", "smoke", "eclipse")
NAMES = ("", "", "Smoke stack", "r0", 'The "{fog}"')
TRAITS = ("multispectral-visor-1", "multispectral-visor-2", "multispectral-visor-3", "marksmanship", "sixth-sense")

# The rulesets that read positions (distances, lights): their zones with parameters (and one zone type
# of another ruleset, ignored), traits (one foreign), environments, actions.
POSITIONAL_ZONES: dict[str, tuple[dict[str, Any], ...]] = {
    "traveller": (
        {"type": "smoke", "density": 1},
        {"type": "smoke", "density": 3},
        {"type": "woods"},
        {"type": "illuminated", "by": "white-spotlight"},
        {"type": "illuminated", "by": "ir-spotlight"},
        {"type": "illuminated", "by": "illumination-round"},
        {"type": "low"},
    ),
    "gurps-4e": (
        {"type": "darkness", "penalty": -2},
        {"type": "darkness", "penalty": -7},
        {"type": "darkness", "total": True},
        {"type": "darkness"},
        {"type": "unnatural-darkness"},
        {"type": "smoke"},
        {"type": "poor"},
    ),
}
POSITIONAL_TRAITS: dict[str, tuple[str, ...]] = {
    "traveller": (
        "binoculars",
        "image-intensifier",
        "color-enhancement",
        "la-goggles",
        "ir-goggles",
        "thermal-viewer",
        "wide-spectrum-visual",
        "radar",
        "ladar",
        "sixth-sense",
    ),
    "gurps-4e": (
        "blind",
        "accustomed-to-blindness",
        "invisible",
        "night-vision-2",
        "night-vision-5",
        "dark-vision",
        "infravision",
        "marksmanship",
    ),
}
POSITIONAL_ENVIRONMENTS: dict[str, tuple[dict[str, Any], ...]] = {
    "traveller": (
        {},
        {"light": 1},
        {"light": 3},
        {"weather": "poor"},
        {"light": 2, "weather": "very-poor"},
        {"light": "day", "weather": "poor"},
    ),
    "gurps-4e": ({}, {"darkness": -5}, {"darkness": -10}, {"darkness": -2}),
}
POSITIONAL_ACTIONS = {"traveller": ("observation", "sensors"), "gurps-4e": ("attack", "dodge", "parry", "block")}
#: Grid scales (distance per square, units): ranges from a few metres to kilometres, an unknown unit.
GRIDS = (
    {"distance": 1},
    {"distance": 5, "units": "m"},
    {"distance": 50, "units": "ft"},
    {"distance": 2, "units": "hex"},
)

# Small integer coordinates make the degenerate cases common: lines through vertices, along edges,
# tokens on zone boundaries, shared edges, walls ending on lines. Halves add non-integer points.
coord = st.integers(min_value=0, max_value=12).map(lambda v: v * 50.0) | st.floats(0, 600).map(round)
length = st.integers(min_value=0, max_value=8).map(lambda v: v * 50.0)
height = st.none() | st.integers(min_value=-2, max_value=6)
#: V14 scene levels: none (V13), or floors whose bounds fall on token and region heights.
LEVEL_SETS: tuple[tuple[dict[str, Any], ...], ...] = (
    (),
    ({"id": "l0", "bottom": -2, "top": 1}, {"id": "l1", "bottom": 1, "top": 4}),
    (
        {"id": "l0", "bottom": None, "top": 0},
        {"id": "l1", "bottom": 1, "top": 3},
        {"id": "l2", "bottom": 3, "top": None},
    ),
)


def on_levels(draw: st.DrawFn, levels: tuple[dict[str, Any], ...]) -> list[str]:
    """A region's or wall's ``levels``: often none (every level), else one or two of the scene's."""
    if not levels or draw(st.booleans()):
        return []
    return draw(st.lists(st.sampled_from([level["id"] for level in levels]), min_size=1, max_size=2, unique=True))


@st.composite
def shapes(draw: st.DrawFn, *, hole: bool = False) -> dict[str, Any]:
    kind = draw(st.sampled_from(["rectangle", "circle", "ellipse", "polygon"]))
    x, y = draw(coord), draw(coord)
    if kind == "rectangle":
        rotation = draw(st.sampled_from([0, 0, 30, 45, 90]))
        return rect(x, y, draw(length), draw(length), rotation=rotation, hole=hole)
    if kind == "circle":
        return circle(x, y, draw(length), hole=hole)
    if kind == "ellipse":
        return ellipse(x, y, draw(length), draw(length), rotation=draw(st.sampled_from([0, 30])), hole=hole)
    points = draw(st.lists(coord, min_size=6, max_size=10).filter(lambda p: len(p) % 2 == 0 and _drawable(p)))
    return polygon(*points, hole=hole)


def _drawable(points: list[float]) -> bool:
    """Rings the bridge holds: not those whose edges cross (refused at sync, docs/geometry.md)."""
    try:
        ring_polygon(points)
    except CrossingRing:
        return False
    return True


@st.composite
def regions(
    draw: st.DrawFn, region_id: str, levels: tuple[dict[str, Any], ...] = (), ruleset: str = "infinity-n4"
) -> Region:
    parts = draw(st.lists(shapes(), min_size=1, max_size=2))
    parts += draw(st.lists(shapes(hole=True), max_size=1))
    bottom, top = draw(height), draw(height)
    if bottom is not None and top is not None and bottom > top:
        bottom, top = top, bottom
    update: dict[str, Any] = {}
    if ruleset in POSITIONAL_ZONES:
        zone = draw(st.sampled_from(POSITIONAL_ZONES[ruleset]) | st.none())
        update["zone"] = None if zone is None else Zone.model_validate(zone)
        made = region(region_id, *parts, zone=None, bottom=bottom, top=top)
    else:
        made = region(region_id, *parts, zone=draw(st.sampled_from(ZONE_TYPES) | st.none()), bottom=bottom, top=top)
    # Rulings name the applied zone in their texts: by its name, or its id when it has none.
    update |= {"name": draw(st.sampled_from(NAMES)), "levels": on_levels(draw, levels)}
    return made.model_copy(update=update)


@st.composite
def tokens(
    draw: st.DrawFn, token_id: str, levels: tuple[dict[str, Any], ...] = (), ruleset: str = "infinity-n4"
) -> Token:
    trait_names = POSITIONAL_TRAITS.get(ruleset, TRAITS)
    light = None
    if ruleset in POSITIONAL_TRAITS and draw(st.integers(0, 4)) == 0:  # now and then a carried light
        light = {"radius": draw(st.sampled_from([0.5, 1, 3])), "kind": draw(st.sampled_from(["white", "ir"]))}
    made = token(
        token_id,
        draw(coord),
        draw(coord),
        width=draw(st.sampled_from([0, 0.5, 1, 2])),
        height=draw(st.sampled_from([0.5, 1, 2])),
        shape=draw(st.sampled_from(["rectangle", "ellipse"])),
        elevation=draw(st.sampled_from([0, 0, 1, 3, -1, 5])),
        traits=draw(st.lists(st.sampled_from(trait_names), max_size=3, unique=True)),
        name=draw(st.sampled_from(["", "Fusilier"])),
        light=light,
    )
    if levels and draw(st.booleans()):  # its level (whatever its elevation: only overlays and logs read it)
        return made.model_copy(update={"level": draw(st.sampled_from([level["id"] for level in levels]))})
    return made


@st.composite
def walls(draw: st.DrawFn, wall_id: str, levels: tuple[dict[str, Any], ...] = ()) -> Wall:
    fields: dict[str, Any] = {
        "sight": draw(st.sampled_from([0, 10, 10, 20, 30, 40])),
        "dir": draw(st.sampled_from([0, 0, 1, 2])),
        "door": draw(st.sampled_from([0, 0, 1, 2])),
        "ds": draw(st.sampled_from([0, 1, 2])),
    }
    if fields["sight"] in (30, 40):
        fields["threshold"] = {"sight": draw(st.sampled_from([0, 1, 2, 4]))}
    light = draw(st.sampled_from([None, None, 0, 20, 30]))  # absent: the wall's sight stops light
    if light is not None:
        fields["light"] = light
        if light == 30:
            fields["threshold"] = {**fields.get("threshold", {}), "light": draw(st.sampled_from([0, 1, 3]))}
    fields["levels"] = on_levels(draw, levels)
    return wall(wall_id, draw(coord), draw(coord), draw(coord), draw(coord), **fields)


@st.composite
def scenes(draw: st.DrawFn) -> Scene:
    levels = draw(st.sampled_from(LEVEL_SETS))
    zone_list = [draw(regions(f"r{i}", levels)) for i in range(draw(st.integers(0, 5)))]
    token_list = [draw(tokens(f"t{i}", levels)) for i in range(draw(st.integers(2, 5)))]
    wall_list = [draw(walls(f"w{i}", levels)) for i in range(draw(st.integers(0, 5)))]
    lines = draw(st.sampled_from(["center", "center", "best"]))
    ruleset = draw(st.sampled_from(["infinity-n4", "infinity-n4", "infinity-codeone"]))
    locale = draw(st.sampled_from(["en", "en", "es"]))
    return _scene(zone_list, token_list, wall_list, lines=lines, ruleset=ruleset, locale=locale, levels=levels)


@st.composite
def lights(draw: st.DrawFn, light_id: str, levels: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    """A scene light: white or IR, radius in grid units, on some levels or all."""
    return {
        "id": light_id,
        "x": draw(coord),
        "y": draw(coord),
        "radius": draw(st.sampled_from([0.5, 1, 2, 4])),
        "kind": draw(st.sampled_from(["white", "white", "ir"])),
        "levels": on_levels(draw, levels),
    }


@st.composite
def positional_scenes(draw: st.DrawFn) -> Scene:
    """Traveller and GURPS scenes: their zones (with parameters), traits, environment and lights, on
    grids of several scales."""
    ruleset = draw(st.sampled_from(sorted(POSITIONAL_ZONES)))
    levels = draw(st.sampled_from(LEVEL_SETS))
    zone_list = [draw(regions(f"r{i}", levels, ruleset)) for i in range(draw(st.integers(0, 5)))]
    token_list = [draw(tokens(f"t{i}", levels, ruleset)) for i in range(draw(st.integers(2, 5)))]
    wall_list = [draw(walls(f"w{i}", levels)) for i in range(draw(st.integers(0, 5)))]
    light_list = [draw(lights(f"l{i}", levels)) for i in range(draw(st.integers(0, 3)))]
    return _scene(
        zone_list,
        token_list,
        wall_list,
        lines=draw(st.sampled_from(["center", "center", "center", "best"])),
        ruleset=ruleset,
        locale=draw(st.sampled_from(["en", "en", "es"])),
        levels=levels,
        lights=light_list,
        environment=draw(st.sampled_from(POSITIONAL_ENVIRONMENTS[ruleset])),
        grid=draw(st.sampled_from(GRIDS)),
    )


def _scene(
    regions: list[Region],
    tokens: list[Token],
    walls: list[Wall],
    *,
    lines: str = "center",
    ruleset: str = "infinity-n4",
    locale: str = "en",
    levels: Sequence[Any] = (),
    lights: Sequence[Any] = (),
    environment: dict[str, Any] | None = None,
    grid: dict[str, Any] | None = None,
) -> Scene:
    return Scene.model_validate(
        {
            "id": "s-prop",
            "grid": {"size": 100, "distance": 1, **(grid or {})},
            "rules": {"ruleset": ruleset, "lines": lines, "locale": locale},
            "regions": regions,
            "tokens": tokens,
            "walls": walls,
            "levels": list(levels),
            "lights": list(lights),
            "environment": environment or {},
        }
    )


def _state(scene: Scene, version: int = 0) -> SceneState:
    return SceneState(scene, RULESETS[scene.rules.ruleset], version=version)


def plain_rulings(state: SceneState, action: str, reaction: bool) -> dict[tuple[str, str], Ruling]:
    """Every pair, as ``Session.rule`` builds it: SceneGeometry evidence per line, then the ruleset."""
    scene, geometry = state.scene, state.geometry
    result = {}
    for actor in scene.tokens:
        for target in scene.tokens:
            if actor.id == target.id:
                continue
            lines = geometry.sight_lines(actor.id, target.id, scene.rules.lines)
            situation = Situation(
                scene=scene,
                geometry=geometry,
                actor=actor,
                target=target,
                action=action,
                reaction=reaction,
                lines=tuple(geometry.evidence(actor.id, target.id, line) for line in lines),
                options={"aware": True},
            )
            result[(actor.id, target.id)] = state.ruleset.adjudicate(situation)
    return result


@given(scenes(), st.sampled_from(ACTIONS), st.booleans())
@SETTINGS
def test_all_pairs_equal_the_plain_path(scene: Scene, action: str, reaction: bool) -> None:
    """On random scenes every verdict and every ruling of the engine equals the plain path's.

    The scenes have holes, elevation spans, walls of every kind, V14 levels on walls and zones.
    """
    state = _state(scene)
    engine = SceneVisibility(state, action=action, reaction=reaction)
    plain = plain_rulings(state, action, reaction)
    # The verdicts the pass reduced over arrays (read before any ruling is built), then the rulings.
    assert {pair: engine.verdict(*pair) for pair in plain} == {p: (r.allowed, r.modifier) for p, r in plain.items()}
    assert dict(engine.rulings()) == plain


@given(st.data(), positional_scenes(), st.booleans())
@SETTINGS
def test_traveller_and_gurps_pairs_equal_the_plain_path(data: st.DataObject, scene: Scene, reaction: bool) -> None:
    """On random Traveller and GURPS scenes every verdict reduced over arrays and every ruling equals the plain one.

    The scenes have zone parameters, devices and vision traits, night, weather and darkness, scene and carried lights,
    walls that stop light or not, levels, grid scales.
    """
    action = data.draw(st.sampled_from(POSITIONAL_ACTIONS[scene.rules.ruleset]))
    state = _state(scene)
    engine = SceneVisibility(state, action=action, reaction=reaction)
    plain = plain_rulings(state, action, reaction)
    assert {pair: engine.verdict(*pair) for pair in plain} == {p: (r.allowed, r.modifier) for p, r in plain.items()}
    assert dict(engine.rulings()) == plain


@given(positional_scenes())
@SETTINGS
def test_lights_reaching_many_equals_one_by_one(scene: Scene) -> None:
    """``SceneGeometry.lights_reaching_many`` answers what ``lights_reaching`` answers token by token.

    It makes one vectorised distance call; the random scenes have lights, light-stopping walls, levels.
    """
    geometry = _state(scene).geometry
    ids = [token.id for token in scene.tokens]
    assert geometry.lights_reaching_many(ids) == [geometry.lights_reaching(token_id) for token_id in ids]


def _sight_lines_alike(geometry: Any, scene: Scene) -> None:
    centres = [geometry.center(token.id) for token in scene.tokens]
    lamps = [Point3(light.x, light.y, 0.0) for light in scene.lights] + [Point3(300.0, 300.0, 2.0)]
    starts = [a for a in centres for _ in (*centres, *lamps)]
    ends = [b for _ in centres for b in (*centres, *lamps)]
    many = geometry.sight_blocked_many(starts, ends)
    assert many == [bool(geometry.wall_blocked(a, b)) for a, b in zip(starts, ends, strict=True)]


@given(positional_scenes())
@SETTINGS
def test_sight_blocked_many_equals_one_by_one(scene: Scene) -> None:
    """``SceneGeometry.sight_blocked_many`` answers, line by line, whether ``wall_blocked`` names a wall.

    It takes every (line, wall) at once; the lines run token to token (on one spot too) and token to light, past walls
    of every kind.
    """
    _sight_lines_alike(_state(scene).geometry, scene)


@given(positional_scenes(), st.lists(st.integers(0, 12), min_size=65, max_size=90))
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_sight_blocked_many_with_a_wall_tree_equals_one_by_one(scene: Scene, ends: list[int]) -> None:
    """The same with more walls than ``WallIndex.TREE_ABOVE`` (only walls whose box meets the line's count)."""
    more = [
        wall(f"m{k}", ends[k] * 50.0, ends[k - 1] * 50.0, ends[k - 2] * 50.0, ends[k - 3] * 50.0, sight=20)
        for k in range(len(ends))
    ]
    crowded = scene.model_copy(update={"walls": [*scene.walls, *more]})
    _sight_lines_alike(_state(crowded).geometry, crowded)


@given(scenes(), st.lists(st.integers(0, 12), min_size=70, max_size=80), st.data())
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_all_pairs_with_a_wall_tree_equal_the_plain_path(scene: Scene, ends: list[int], data: st.DataObject) -> None:
    """With more walls than ``WallIndex.TREE_ABOVE``, every verdict and ruling still equals the plain one.

    The engine then tests each line against the walls the tree finds, not every wall.
    """
    more = [
        wall(f"m{k}", ends[k] * 50.0, ends[k - 1] * 50.0, ends[k - 2] * 50.0, ends[k - 3] * 50.0, sight=20)
        for k in range(len(ends))
    ]
    crowded = scene.model_copy(update={"walls": [*scene.walls, *more]})
    assume(len(WallIndex(crowded.walls, units_per_px=1.0)) > WallIndex.TREE_ABOVE)
    action, reaction = data.draw(st.sampled_from(ACTIONS)), data.draw(st.booleans())
    state = _state(crowded)
    engine = SceneVisibility(state, action=action, reaction=reaction)
    plain = plain_rulings(state, action, reaction)
    assert {pair: engine.verdict(*pair) for pair in plain} == {p: (r.allowed, r.modifier) for p, r in plain.items()}
    assert dict(engine.rulings()) == plain


# Patches.


@st.composite
def patches(draw: st.DrawFn, scene: Scene, serial: int) -> Scene:
    """One change as a ``scene.patch`` would make it: a move, or a region or wall added, changed, removed."""
    regions_, tokens_, walls_ = list(scene.regions), list(scene.tokens), list(scene.walls)
    lights_ = [light.model_dump() for light in scene.lights]
    levels = tuple(level.model_dump() for level in scene.levels)
    ruleset = scene.rules.ruleset
    kinds = ["move", "move", "token+", "token-", "region+", "region~", "region-", "wall+", "wall~", "wall-"]
    if ruleset in POSITIONAL_ZONES:
        kinds += ["light+", "light-"]
    kind = draw(st.sampled_from(kinds))
    if kind == "move" and tokens_:
        k = draw(st.integers(0, len(tokens_) - 1))
        update = {"x": draw(coord), "y": draw(coord)}
        if draw(st.booleans()):
            update["elevation"] = draw(st.sampled_from([0, 1, 3, -1]))
        tokens_[k] = tokens_[k].model_copy(update=update)
    elif kind == "token+":
        tokens_.append(draw(tokens(f"t-new{serial}", levels, ruleset)))
    elif kind == "token-" and len(tokens_) > 2:
        tokens_.pop(draw(st.integers(0, len(tokens_) - 1)))
    elif kind == "region+":
        regions_.insert(draw(st.integers(0, len(regions_))), draw(regions(f"r-new{serial}", levels, ruleset)))
    elif kind == "region~" and regions_:
        k = draw(st.integers(0, len(regions_) - 1))
        regions_[k] = draw(regions(regions_[k].id, levels, ruleset))
    elif kind == "region-" and regions_:
        regions_.pop(draw(st.integers(0, len(regions_) - 1)))
    elif kind == "wall+":
        walls_.append(draw(walls(f"w-new{serial}", levels)))
    elif kind == "wall~" and walls_:  # moved, opened, made another kind: in place, as a patch's upsert leaves it
        k = draw(st.integers(0, len(walls_) - 1))
        walls_[k] = draw(walls(walls_[k].id, levels))
    elif kind == "wall-" and walls_:
        walls_.pop(draw(st.integers(0, len(walls_) - 1)))
    elif kind == "light+":
        lights_.append(draw(lights(f"l-new{serial}", levels)))
    elif kind == "light-" and lights_:
        lights_.pop(draw(st.integers(0, len(lights_) - 1)))
    rules = scene.rules
    return _scene(
        regions_,
        tokens_,
        walls_,
        lines=rules.lines,
        ruleset=rules.ruleset,
        locale=rules.locale,
        levels=scene.levels,
        lights=lights_,
        environment=dict(scene.environment),
        grid=scene.grid.model_dump(),
    )


@given(st.data(), scenes(), st.sampled_from(ACTIONS), st.booleans())
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_updates_return_exactly_the_changed_pairs(data: st.DataObject, scene: Scene, action: str, watch: bool) -> None:
    """After random patches, ``update`` returns exactly the pairs whose ruling differs.

    The engine then holds what a fresh engine (and the plain path) would.
    """
    state = _state(scene)
    watched = {scene.tokens[0].id} if watch else None
    engine = SceneVisibility(state, action=action, tokens=watched)
    before = _watched(plain_rulings(state, action, False), watched)
    for serial in range(data.draw(st.integers(1, 4))):
        state = _state(data.draw(patches(state.scene, serial)), version=serial + 1)
        after = _watched(plain_rulings(state, action, False), watched)
        expected = {pair: ruling for pair, ruling in after.items() if before.get(pair) != ruling}
        expected |= {pair: None for pair in before if pair not in after}
        changes = engine.update(state)
        assert {pair: engine.verdict(*pair) for pair in after} == {p: (r.allowed, r.modifier) for p, r in after.items()}
        assert changes == expected
        assert dict(engine.rulings()) == after
        assert dict(SceneVisibility(state, action=action, tokens=watched).rulings()) == after
        before = after


@given(st.data(), scenes(), st.lists(st.integers(0, 12), min_size=70, max_size=80))
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_wall_patches_with_a_wall_tree_return_exactly_the_changed_pairs(
    data: st.DataObject, scene: Scene, ends: list[int]
) -> None:
    """Over more walls than ``WallIndex.TREE_ABOVE``, patches (the wall index updated, its tree kept) rule exactly."""
    more = [
        wall(f"m{k}", ends[k] * 50.0, ends[k - 1] * 50.0, ends[k - 2] * 50.0, ends[k - 3] * 50.0, sight=20)
        for k in range(len(ends))
    ]
    state = _state(scene.model_copy(update={"walls": [*scene.walls, *more]}))
    action = data.draw(st.sampled_from(ACTIONS))
    engine = SceneVisibility(state, action=action)
    before = plain_rulings(state, action, False)
    for serial in range(data.draw(st.integers(1, 4))):
        state = _state(data.draw(patches(state.scene, serial)), version=serial + 1)
        after = plain_rulings(state, action, False)
        expected = {pair: ruling for pair, ruling in after.items() if before.get(pair) != ruling}
        expected |= {pair: None for pair in before if pair not in after}
        assert engine.update(state) == expected
        assert dict(engine.rulings()) == after
        before = after


@given(st.data(), st.one_of(scenes(), positional_scenes()), st.booleans())
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_advanced_engines_rule_what_is_read_under_either_reaction(
    data: st.DataObject, scene: Scene, reaction: bool
) -> None:
    """All three rulesets: after ``advance``, pairs read in a random order under either flag equal the plain path's.

    Random patches are taken in with ``advance`` (stale pairs ruled when read, one or a token's at a time; the engine
    built ``lazy`` or not); all pairs equal the plain path's at the end too.
    """
    action = data.draw(st.sampled_from(POSITIONAL_ACTIONS.get(scene.rules.ruleset, ACTIONS)))
    state = _state(scene)
    engine = SceneVisibility(state, action=action, reaction=reaction, lazy=data.draw(st.booleans()))
    for serial in range(data.draw(st.integers(1, 3))):
        state = _state(data.draw(patches(state.scene, serial)), version=serial + 1)
        engine.advance(state)
        flag = data.draw(st.booleans())
        plain = plain_rulings(state, action, flag)
        assert set(engine.rulings(flag)) == set(plain)
        order = data.draw(st.permutations(sorted(plain)))
        for pair in order[: data.draw(st.integers(0, len(order)))]:
            assert engine.rulings(flag)[pair] == plain[pair], pair
    assert dict(engine.rulings(not reaction)) == plain_rulings(state, action, not reaction)
    assert dict(engine.rulings()) == plain_rulings(state, action, reaction)


@given(st.data(), st.one_of(scenes(), positional_scenes()), st.booleans(), st.booleans())
@SETTINGS
def test_a_pair_read_alone_equals_the_plain_path(
    data: st.DataObject, scene: Scene, reaction: bool, crowded: bool
) -> None:
    """All three rulesets: a pair read first from a lazy engine is ruled alone and equals the plain path's.

    The one-line path (``_compute_line``: the zones its box meets, the compiled walk, the two tokens' rows, the walls
    asked only when one meets it — few walls in Python floats, or more than 64 over arrays) rules it, equal to the plain
    path both ways and under either flag, verdicts included; so do the pairs after a move.
    """
    if crowded:  # more walls than the Python test takes: the NumPy one (and the wall tree of ``blocked``)
        ends = data.draw(st.lists(st.integers(0, 12), min_size=65, max_size=80))
        more = [
            wall(f"m{k}", ends[k] * 50.0, ends[k - 1] * 50.0, ends[k - 2] * 50.0, ends[k - 3] * 50.0, sight=20)
            for k in range(len(ends))
        ]
        scene = scene.model_copy(update={"walls": [*scene.walls, *more]})
    action = data.draw(st.sampled_from(POSITIONAL_ACTIONS.get(scene.rules.ruleset, ACTIONS)))
    taken: list[bool] = []  # per call of the one-line path: whether it ruled the pair (not: one spot)
    line = SceneVisibility._compute_line

    def spy(engine: SceneVisibility, i: int, j: int) -> Any:
        batch = line(engine, i, j)
        taken.append(batch is not None)
        return batch

    state = _state(scene)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SceneVisibility, "_compute_line", spy)
        for serial in range(2):
            plain = {flag: plain_rulings(state, action, flag) for flag in (False, True)}
            ids = [token.id for token in state.scene.tokens]
            for k, a in enumerate(ids):
                for b in ids[k + 1 :]:
                    engine = SceneVisibility(state, action=action, reaction=reaction, lazy=True)
                    del taken[:]
                    ruling = plain[reaction][(a, b)]
                    assert engine.verdict(a, b) == (ruling.allowed, ruling.modifier), (a, b)
                    ca, cb = state.geometry.center(a), state.geometry.center(b)
                    one_spot = (ca.x, ca.y) == (cb.x, cb.y)
                    assert taken == ([] if state.scene.rules.lines == "best" else [not one_spot])
                    assert engine.rulings()[(a, b)] == ruling, (a, b)
                    assert engine.rulings()[(b, a)] == plain[reaction][(b, a)], (b, a)
                    assert engine.rulings(not reaction)[(a, b)] == plain[not reaction][(a, b)], (a, b)
                    assert engine.rulings(not reaction)[(b, a)] == plain[not reaction][(b, a)], (b, a)
            if serial == 0:
                moved = data.draw(st.integers(0, len(ids) - 1))
                tokens_ = list(state.scene.tokens)
                tokens_[moved] = tokens_[moved].model_copy(update={"x": data.draw(coord), "y": data.draw(coord)})
                state = _state(state.scene.model_copy(update={"tokens": tokens_}), version=1)


@given(st.data(), positional_scenes(), st.booleans())
@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_traveller_and_gurps_updates_return_exactly_the_changed_pairs(
    data: st.DataObject, scene: Scene, watch: bool
) -> None:
    """Traveller and GURPS: after random patches, ``update`` returns exactly the pairs whose ruling differs.

    Lights are added and removed too; every verdict equals the plain one, and the engine holds what a fresh engine (and
    the plain path) would.
    """
    action = data.draw(st.sampled_from(POSITIONAL_ACTIONS[scene.rules.ruleset]))
    state = _state(scene)
    watched = {scene.tokens[0].id} if watch else None
    engine = SceneVisibility(state, action=action, tokens=watched)
    before = _watched(plain_rulings(state, action, False), watched)
    for serial in range(data.draw(st.integers(1, 4))):
        state = _state(data.draw(patches(state.scene, serial)), version=serial + 1)
        after = _watched(plain_rulings(state, action, False), watched)
        expected = {pair: ruling for pair, ruling in after.items() if before.get(pair) != ruling}
        expected |= {pair: None for pair in before if pair not in after}
        changes = engine.update(state)
        assert {pair: engine.verdict(*pair) for pair in after} == {p: (r.allowed, r.modifier) for p, r in after.items()}
        assert changes == expected
        assert dict(engine.rulings()) == after
        assert dict(SceneVisibility(state, action=action, tokens=watched).rulings()) == after
        before = after


def _watched(rulings: dict[tuple[str, str], Ruling], watched: set[str] | None) -> dict[tuple[str, str], Ruling]:
    if watched is None:
        return rulings
    return {pair: r for pair, r in rulings.items() if pair[0] in watched or pair[1] in watched}


def test_a_hole_exactly_on_a_solid_curve_is_judged_alike() -> None:
    """The engine and the plain path agree when a hole is the very circle of an ellipse beside a rectangle.

    The hole, the ellipse and the rectangle share one region (found by Hypothesis: the plain path counted the zero-area
    rim).
    """
    scene = Scene.model_validate(
        {
            "id": "s",
            "rules": {"ruleset": "infinity-n4"},
            "regions": [
                {
                    "id": "r0",
                    "shapes": [
                        {"type": "rectangle", "x": 0, "y": 0, "width": 50, "height": 50},
                        {"type": "ellipse", "x": 50, "y": 51, "radiusX": 50, "radiusY": 50},
                        {"type": "circle", "x": 50, "y": 51, "radius": 50, "hole": True},
                    ],
                    "zone": {"type": "low"},
                }
            ],
            "tokens": [
                {"id": "t0", "x": 0, "y": 100, "width": 0, "height": 0.5},
                {"id": "t1", "x": 50, "y": 50, "width": 0, "height": 0.5},
            ],
        }
    )
    state = _state(scene)
    engine = SceneVisibility(state, action="bs-attack", reaction=False)
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


@pytest.mark.parametrize("second", [False, True], ids=["alone", "beside-a-rectangle"])
@pytest.mark.parametrize(
    "solid",
    [
        ellipse(300, 300, 100, 100),
        ellipse(300, 300, 150, 100, rotation=30),
        circle(300, 300, 100),
    ],
    ids=["ellipse", "rotated-ellipse", "circle"],
)
def test_a_solid_curve_cancelled_by_its_hole_leaves_nothing_on_both_paths(solid: dict[str, Any], second: bool) -> None:
    """Decision (docs/geometry.md): a solid curve holed by the very same curve leaves no rim, on both paths alike.

    Tokens on it and lines along or through it meet no zone — on the engine and the plain path alike, with or without a
    rectangle in the same region.
    """
    hole = {**solid, "hole": True}
    if solid["type"] == "ellipse" and solid["radiusX"] == solid["radiusY"]:
        hole = circle(300, 300, 100, hole=True)  # the same curve, sent as a circle
    others = [rect(0, 0, 50, 50)] if second else []
    tokens_ = [
        token("east", 400, 300, width=0, height=0),  # on the circles' rim (and the rotated ellipse's inside)
        token("south", 300, 400, width=0, height=0),
        token("far", 600, 300, width=0, height=0),
        token("below", 300, 600, width=0, height=0),
        token("corner", 0, 50, width=0, height=0),  # on the rectangle's corner
    ]
    scene = _scene([region("r0", *others, solid, hole, zone="low")], tokens_, [])
    state = _state(scene)
    plain = plain_rulings(state, "bs-attack", False)
    assert dict(SceneVisibility(state, action="bs-attack", reaction=False).rulings()) == plain
    geo = state.geometry
    assert not any(geo.inside(t.id, "r0") for t in scene.tokens if t.id != "corner")
    for actor, target in [("far", "east"), ("below", "south"), ("east", "south")]:
        line = geo.sight_lines(actor, target, "center")[0]
        assert geo.evidence(actor, target, line).crossings == ()
    # Through the cancelled curve to the rectangle's corner: only the rectangle counts, when there is one.
    line = geo.sight_lines("far", "corner", "center")[0]
    kinds = [(c.region, c.kind.value) for c in geo.evidence("far", "corner", line).crossings]
    assert kinds == ([("r0", "into")] if second else [])


@pytest.mark.parametrize("second", [False, True], ids=["alone", "beside-a-rectangle"])
def test_a_point_a_hole_leaves_bare_is_judged_alike(second: bool) -> None:
    """Decision (docs/geometry.md): a circle's point left bare by a rectangle hole is outside it on both paths alike.

    A circle whose top only touches the edge of a rectangle hole over its upper half leaves that point bare — the engine
    and the plain path agree that a line along the hole's edge meets nothing and a token there is not inside, with or
    without another shape in the region.
    """
    others = [rect(0, 0, 50, 50)] if second else []
    hole = rect(200, 200, 200, 100, hole=True)
    tokens_ = [
        token("top", 300, 200, width=0, height=0),
        token("west", 100, 200, width=0, height=0),
        token("east", 500, 200, width=0, height=0),
        token("south", 300, 400, width=0, height=0),  # the circle's lowest point
    ]
    scene = _scene([region("r0", *others, circle(300, 300, 100), hole, zone="low")], tokens_, [])
    state = _state(scene)
    plain = plain_rulings(state, "bs-attack", False)
    assert dict(SceneVisibility(state, action="bs-attack", reaction=False).rulings()) == plain
    geo = state.geometry
    assert not geo.inside("top", "r0")
    line = geo.sight_lines("west", "east", "center")[0]
    assert geo.evidence("west", "east", line).crossings == ()
    line = geo.sight_lines("top", "south", "center")[0]
    assert [c.kind.value for c in geo.evidence("top", "south", line).crossings] == ["into"]


@pytest.mark.parametrize("second", [False, True], ids=["alone", "beside-a-rectangle"])
def test_a_point_a_curved_hole_leaves_bare_is_judged_alike(second: bool) -> None:
    """Decision (docs/geometry.md): an ellipse's point left bare by a circular hole is outside it on both paths alike.

    An ellipse lying in a circular hole whose rim it touches at its top leaves that point bare — the engine (whose
    compiled loop judges zones with curved holes from their equations) and the plain path agree that a line tangent
    there meets nothing, with or without another shape in the region.
    """
    others = [rect(0, 0, 50, 50)] if second else []
    shapes_ = [*others, ellipse(500, 500, 200, 100), circle(500, 900, 500, hole=True)]
    tokens_ = [
        token("top", 500, 400, width=0, height=0),
        token("west", 300, 400, width=0, height=0),
        token("east", 700, 400, width=0, height=0),
        token("corner", 0, 50, width=0, height=0),
    ]
    scene = _scene([region("r0", *shapes_, zone="low")], tokens_, [])
    state = _state(scene)
    plain = plain_rulings(state, "bs-attack", False)
    assert dict(SceneVisibility(state, action="bs-attack", reaction=False).rulings()) == plain
    geo = state.geometry
    assert not geo.inside("top", "r0")
    for actor, target in [("west", "east"), ("west", "top")]:
        line = geo.sight_lines(actor, target, "center")[0]
        assert geo.evidence(actor, target, line).crossings == ()
