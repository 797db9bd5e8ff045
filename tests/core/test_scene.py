"""The scene's pydantic models: the contract's shapes accepted, their defaults, and bad input refused by name."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from bridge.core.scene import (
    COORD_LIMIT,
    CircleShape,
    Elevation,
    Grid,
    Light,
    PolygonRing,
    PolygonShape,
    RectangleShape,
    Region,
    Scene,
    Token,
    UnknownShape,
    Wall,
    Zone,
)

#: The scene of the contract's ``scene.sync`` example, verbatim (protocol-v1.md).
CONTRACT_SCENE: dict[str, Any] = {
    "id": "s-docks",
    "name": "Docks",
    "grid": {"size": 100, "distance": 1, "units": "in"},
    "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": "en"},
    "environment": {},
    "regions": [
        {
            "id": "r-smoke",
            "name": "Smoke",
            "elevation": {"bottom": None, "top": None},
            "shapes": [{"type": "circle", "x": 1500, "y": 900, "radius": 150, "hole": False}],
            "zone": {"type": "zero"},
        }
    ],
    "tokens": [
        {
            "id": "t-fus",
            "name": "Fusilier",
            "x": 200,
            "y": 800,
            "width": 1,
            "height": 1,
            "elevation": 0,
            "traits": ["multispectral-visor-1"],
        }
    ],
    "walls": [{"id": "w1", "c": [1000, 0, 1000, 600], "sight": True}],
}


def refusal(model: Any, data: Any) -> tuple[tuple[Any, ...], str]:
    """The place (``loc``) and message of the one error ``model`` raises for ``data``."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    errors = caught.value.errors()
    assert len(errors) == 1, errors
    return errors[0]["loc"], errors[0]["msg"]


def test_the_contracts_scene_sync_example_is_read_as_written() -> None:
    """The contract's scene.sync example validates, each field read as the contract says (``sight: true`` = 20)."""
    scene = Scene.model_validate(CONTRACT_SCENE)
    (smoke,) = scene.regions
    assert isinstance(smoke.shapes[0], CircleShape) and smoke.shapes[0].radius == 150
    assert smoke.zone is not None and smoke.zone.type == "zero" and smoke.elevation == Elevation()
    assert scene.tokens[0].traits == ["multispectral-visor-1"] and scene.tokens[0].x == 200
    assert scene.walls[0].sight == 20
    assert (scene.grid.size, scene.grid.distance, scene.grid.units) == (100, 1, "in")
    assert scene.rules.ruleset == "infinity-n4"


def test_what_a_client_leaves_out_takes_the_documented_defaults() -> None:
    """Left out: a 100 px 1-unit grid, edition current, locale en, centre lines, 1×1 rectangular tokens at 0."""
    scene = Scene.model_validate(
        {
            "id": "s",
            "rules": {"ruleset": "gurps-4e"},
            "tokens": [{"id": "t", "x": 0, "y": 0}],
            "walls": [{"id": "w", "c": [0, 0, 1, 1]}],
        }
    )
    assert (scene.grid.size, scene.grid.distance, scene.grid.units, scene.grid.type) == (100.0, 1.0, "", None)
    assert (scene.rules.edition, scene.rules.locale, scene.rules.lines) == ("current", "en", "center")
    assert scene.regions == [] and scene.lights == [] and scene.levels == [] and scene.environment == {}
    token = scene.tokens[0]
    assert (token.width, token.height, token.elevation, token.shape) == (1.0, 1.0, 0.0, "rectangle")
    assert token.light is None and token.level is None and token.traits == []
    wall = scene.walls[0]
    assert (wall.sight, wall.light, wall.door, wall.ds, wall.dir, wall.threshold) == (20, None, 0, 0, 0, None)
    assert Light.model_validate({"id": "l", "x": 0, "y": 0, "radius": 3}).kind == "white"


@pytest.mark.parametrize(("given", "read"), [(True, 20), (False, 0), (10, 10), (40, 40)])
def test_wall_sight_and_light_accept_foundrys_numbers_and_booleans(given: Any, read: int) -> None:
    """Contract: '`true`/`false` are accepted as 20/0' for ``sight``, and for ``light`` (the same values)."""
    wall = Wall.model_validate({"id": "w", "c": [0, 0, 10, 0], "sight": given, "light": given})
    assert (wall.sight, wall.light) == (read, read)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"id": "w", "c": [0, 0, 10, 0], "sight": 15}, "sight"),
        ({"id": "w", "c": [0, 0, 10, 0], "door": 3}, "door"),
        ({"id": "w", "c": [0, 0, 10]}, "c"),
        ({"id": "w", "c": [0, 0, 10, 0, 5]}, "c"),
        ({"id": "", "c": [0, 0, 10, 0]}, "id"),
        ({"id": "w" * 257, "c": [0, 0, 10, 0]}, "id"),
    ],
    ids=["sight-15", "door-3", "c-three", "c-five", "empty-id", "long-id"],
)
def test_a_wall_outside_foundrys_values_is_refused_naming_the_field(data: dict[str, Any], field: str) -> None:
    """A wall's sight or door outside Foundry's values, a ``c`` not of four numbers, or a bad id names that field."""
    loc, _ = refusal(Wall, data)
    assert loc[0] == field


def test_an_unknown_field_is_refused_by_its_name() -> None:
    """Scene objects are strict: a misspelt field (``radious``) is refused with its name, not ignored."""
    loc, message = refusal(CircleShape, {"x": 0, "y": 0, "radius": 5, "radious": 5})
    assert loc == ("radious",) and "Extra inputs are not permitted" in message
    loc, _ = refusal(
        Scene, {"id": "s", "rules": {"ruleset": "gurps-4e"}, "tokens": [{"id": "t", "x": 0, "y": 0, "z": 1}]}
    )
    assert loc == ("tokens", 0, "z")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, COORD_LIMIT * 1.0001, -COORD_LIMIT * 1.0001])
def test_coordinates_must_be_finite_and_within_the_limit(bad: float) -> None:
    """A token coordinate that is NaN, infinite or beyond COORD_LIMIT is refused naming it; the limit itself is fine."""
    loc, _ = refusal(Token, {"id": "t", "x": 0, "y": bad})
    assert loc == ("y",)
    assert Token.model_validate({"id": "t", "x": -COORD_LIMIT, "y": COORD_LIMIT}).y == COORD_LIMIT


def test_a_length_is_zero_or_at_least_a_millionth() -> None:
    """A radius of 0 or 1e-6 is a length; 1e-7 (it squares to nothing in the curve equations) and -1 are refused."""
    assert CircleShape.model_validate({"x": 0, "y": 0, "radius": 0}).radius == 0
    assert CircleShape.model_validate({"x": 0, "y": 0, "radius": 1e-6}).radius == 1e-6
    loc, message = refusal(CircleShape, {"x": 0, "y": 0, "radius": 1e-7})
    assert loc == ("radius",) and "a length must be 0 or at least 1e-06" in message
    loc, _ = refusal(RectangleShape, {"x": 0, "y": 0, "width": -1, "height": 1})
    assert loc == ("width",)


@pytest.mark.parametrize("model", [PolygonShape, PolygonRing])
def test_polygon_points_come_in_pairs(model: Any) -> None:
    """A polygon shape or resolved ring with an odd count of numbers is refused saying they must be x, y pairs."""
    loc, message = refusal(model, {"points": [0, 0, 10, 0, 10]})
    assert loc == ("points",) and "points must hold x, y pairs (an even count)" in message
    assert model.model_validate({"points": [0, 0, 10, 0, 10, 10]}).points == [0, 0, 10, 0, 10, 10]


def test_a_shape_type_the_bridge_cannot_draw_needs_the_resolved_polygons() -> None:
    """Contract: ``polygons`` are 'for shape types the bridge does not know'; without them the shape is named."""
    shapes = [{"type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 10}, {"type": "token", "hole": False}]
    _, message = refusal(Region, {"id": "r", "shapes": shapes})
    assert "shapes[1] has type 'token', which the bridge cannot draw" in message
    assert "send the region's resolved 'polygons' with it" in message
    _, message = refusal(Region, {"id": "r", "shapes": shapes, "polygons": []})  # empty: nothing resolved
    assert "shapes[1] has type 'token'" in message
    region = Region.model_validate({"id": "r", "shapes": shapes, "polygons": [{"points": [0, 0, 10, 0, 10, 10]}]})
    assert isinstance(region.shapes[0], RectangleShape) and isinstance(region.shapes[1], UnknownShape)
    assert region.shapes[1].type == "token"


def test_a_span_may_be_flat_but_not_upside_down() -> None:
    """Elevations are inclusive spans: bottom equal to top is one height; bottom above top is refused saying so."""
    assert Elevation.model_validate({"bottom": 3, "top": 3}) == Elevation(bottom=3, top=3)
    assert Elevation.model_validate({"bottom": 3, "top": None}).top is None
    _, message = refusal(Elevation, {"bottom": 4, "top": 3})
    assert "elevation bottom must not be above top" in message


@pytest.mark.parametrize("field", ["regions", "tokens", "walls", "lights"])
def test_two_objects_of_one_kind_with_one_id_are_refused(field: str) -> None:
    """A scene holding one id twice among its regions, tokens, walls or lights is refused naming the list and the id."""
    one = {
        "regions": {"id": "x"},
        "tokens": {"id": "x", "x": 0, "y": 0},
        "walls": {"id": "x", "c": [0, 0, 1, 1]},
        "lights": {"id": "x", "x": 0, "y": 0, "radius": 1},
    }[field]
    _, message = refusal(Scene, {"id": "s", "rules": {"ruleset": "gurps-4e"}, field: [one, one]})
    assert f"{field} has the id 'x' twice" in message


def test_one_id_may_name_objects_of_different_kinds() -> None:
    """Ids are unique per kind only: a region, a token, a wall and a light may all be called ``x``."""
    scene = Scene.model_validate(
        {
            "id": "s",
            "rules": {"ruleset": "gurps-4e"},
            "regions": [{"id": "x"}],
            "tokens": [{"id": "x", "x": 0, "y": 0}],
            "walls": [{"id": "x", "c": [0, 0, 1, 1]}],
            "lights": [{"id": "x", "x": 0, "y": 0, "radius": 1}],
        }
    )
    assert [scene.regions[0].id, scene.tokens[0].id, scene.walls[0].id, scene.lights[0].id] == ["x"] * 4


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"size": 0}, "size"),
        ({"distance": 5e-324}, "distance"),
        ({"distance": 0}, "distance"),
        ({"size": 100001}, "size"),
    ],
    ids=["size-0", "distance-subnormal", "distance-0", "size-huge"],
)
def test_a_grid_is_bounded_away_from_zero(data: dict[str, float], field: str) -> None:
    """A grid of no pixels or a subnormal distance (issue 12: it divided by zero) is refused naming the field."""
    loc, _ = refusal(Grid, data)
    assert loc == (field,)
    assert Grid.model_validate({"size": 1, "distance": 1e-6}).distance == 1e-6


def test_rules_take_only_the_contracts_locales_and_line_modes() -> None:
    """Rules take the contract's locales (``en``, ``es``) and line modes (``center``, ``best``); others are refused."""
    assert (
        Scene.model_validate({"id": "s", "rules": {"ruleset": "r", "locale": "es", "lines": "best"}}).rules.locale
        == "es"
    )
    loc, _ = refusal(Scene, {"id": "s", "rules": {"ruleset": "r", "locale": "fr"}})
    assert loc == ("rules", "locale")
    loc, _ = refusal(Scene, {"id": "s", "rules": {"ruleset": "r", "lines": "all"}})
    assert loc == ("rules", "lines")


def test_a_zone_keeps_its_parameters_beside_its_type() -> None:
    """A zone's parameters (GURPS ``{"penalty": -3}``) are everything but its ``type``; a zone needs a type."""
    zone = Zone.model_validate({"type": "darkness", "penalty": -3})
    assert zone.type == "darkness" and zone.params == {"penalty": -3}
    assert Zone.model_validate({"type": "zero"}).params == {}
    loc, _ = refusal(Zone, {"penalty": -3})
    assert loc == ("type",)


def test_scene_objects_are_immutable() -> None:
    """A held token cannot be changed in place (a patch replaces it): assigning a field raises."""
    token = Token.model_validate({"id": "t", "x": 0, "y": 0})
    with pytest.raises(ValidationError, match="frozen"):
        token.x = 5  # type: ignore[misc]
    assert token.x == 0
