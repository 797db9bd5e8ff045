"""scene_svg: zones drawn as the bridge judges them, results coloured, texts escaped."""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
import shapely
from shapely.geometry import Polygon

from bridge.core.geometry import SceneGeometry
from bridge.core.scene import Scene
from bridge.svg import RESULT_COLOURS, result_of, scene_svg

SVG = "{http://www.w3.org/2000/svg}"


def _scene(**changes: Any) -> Scene:
    data: dict[str, Any] = {
        "id": "s-test",
        "name": "Test",
        "grid": {"size": 100, "distance": 1, "units": "in"},
        "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": "en"},
        "regions": [
            {
                "id": "r-ring",
                "name": "Ring",
                "shapes": [
                    {"type": "rectangle", "x": 100, "y": 100, "width": 400, "height": 400},
                    {"type": "rectangle", "x": 200, "y": 200, "width": 200, "height": 200, "hole": True},
                ],
                "zone": {"type": "low"},
            },
            {
                "id": "r-tilt",
                "name": "Tilt",
                "shapes": [{"type": "rectangle", "x": 700, "y": 100, "width": 300, "height": 100, "rotation": 45}],
                "zone": {"type": "zero"},
            },
            {
                "id": "r-oval",
                "name": "Oval",
                "shapes": [{"type": "ellipse", "x": 900, "y": 600, "radiusX": 150, "radiusY": 60, "rotation": 30}],
                "zone": {"type": "white-noise"},
            },
            {"id": "r-plain", "name": "Not a zone", "shapes": [{"type": "circle", "x": 50, "y": 50, "radius": 20}]},
        ],
        "tokens": [
            {"id": "t-a", "name": "Alpha", "x": 0, "y": 600},
            {"id": "t-b", "name": "Bravo", "x": 1100, "y": 600, "traits": ["multispectral-visor-1"]},
        ],
        "walls": [{"id": "w1", "c": [600, 500, 600, 900]}],
    }
    data.update(changes)
    return Scene.model_validate(data)


def _ruling(number: int, allowed: bool, modifier: int | None, *, line: bool = True) -> dict[str, Any]:
    ruling: dict[str, Any] = {
        "type": "adjudication",
        "id": f"a{number}",
        "actor": "t-a",
        "target": "t-b" if line else None,
        "action": "bs-attack" if line else "combat-jump",
        "allowed": allowed,
        "modifier": modifier,
    }
    if line:
        ruling["line"] = {"start": {"x": 50, "y": 650, "z": 0}, "end": {"x": 1150, "y": 650, "z": 0}}
    return ruling


def _parse(text: str) -> ET.Element:
    return ET.fromstring(text.encode("utf-8"))


def _classes(element: ET.Element) -> set[str]:
    return set(element.get("class", "").split())


def _by_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [element for element in root.iter() if name in _classes(element)]


def _rings(d: str) -> list[Polygon]:
    """The rings of SVG path data written as ``M x,y L x,y … Z``."""
    rings = []
    for part in d.split("M")[1:]:
        points = [tuple(map(float, pair.split(","))) for pair in re.split("L", part.rstrip("Z"))]
        rings.append(Polygon(points))
    return rings


def test_result_of_names_blocked_penalised_and_clear() -> None:
    """A ruling is blocked when not allowed, penalised with a negative MOD, clear otherwise."""
    assert result_of({"allowed": False, "modifier": None}) == "blocked"
    assert result_of({"allowed": True, "modifier": -3}) == "penalised"
    assert result_of({"allowed": True, "modifier": 0}) == "clear"


def test_sight_lines_are_coloured_and_labelled_by_result() -> None:
    """Each ruling with a line becomes one sight-line group in its result's colour, labelled with its MOD."""
    rulings = [_ruling(1, True, 0), _ruling(2, True, -6), _ruling(3, False, None)]
    root = _parse(scene_svg(_scene(), rulings, locale="en"))
    groups = _by_class(root, "sight-line")
    assert [g.get("data-ruling") for g in groups] == ["1", "2", "3"]
    expected = [("clear", "1: 0"), ("penalised", "2: -6"), ("blocked", "3: no LoF")]
    for group, (result, label) in zip(groups, expected, strict=True):
        assert f"result-{result}" in _classes(group)
        line = group.find(f"{SVG}line")
        text = group.find(f"{SVG}text")
        assert line is not None and text is not None
        assert line.get("stroke") == RESULT_COLOURS[result]
        assert text.text == label


def test_lines_between_the_same_tokens_are_drawn_apart() -> None:
    """Two rulings on the same pair of tokens are drawn as parallel lines, not on top of each other."""
    rulings = [_ruling(1, True, -6), _ruling(2, False, None)]
    root = _parse(scene_svg(_scene(), rulings, locale="en"))
    lines = [g.find(f"{SVG}line") for g in _by_class(root, "sight-line")]
    assert all(line is not None for line in lines)
    ys = {line.get("y1") for line in lines if line is not None}
    assert len(ys) == 2


def test_placement_rulings_ring_their_actor_instead_of_a_line() -> None:
    """A ruling without a line (Combat Jump) is a ring around its actor, not a sight line."""
    root = _parse(scene_svg(_scene(), [_ruling(1, False, None, line=False)], locale="en"))
    assert _by_class(root, "sight-line") == []
    (ring,) = _by_class(root, "placement")
    circle = ring.find(f"{SVG}circle")
    assert circle is not None and circle.get("stroke") == RESULT_COLOURS["blocked"]
    assert (circle.get("cx"), circle.get("cy")) == ("50", "650")


def test_one_path_per_zone_and_none_for_plain_regions() -> None:
    """Every zone region is one path (a region without a zone is not drawn as a zone)."""
    root = _parse(scene_svg(_scene(), [], locale="en"))
    zones = _by_class(root, "zone")
    assert [z.get("data-region") for z in zones] == ["r-ring", "r-tilt", "r-oval"]
    assert [z.get("data-zone") for z in zones] == ["low", "zero", "white-noise"]


def test_holes_are_drawn_with_evenodd_as_separate_rings() -> None:
    """A zone with a hole is one path with two rings, filled evenodd, so the hole shows as clear."""
    root = _parse(scene_svg(_scene(), [], locale="en"))
    ring = next(z for z in _by_class(root, "zone") if z.get("data-region") == "r-ring")
    assert ring.get("fill-rule") == "evenodd"
    outer, inner = _rings(ring.get("d", ""))
    assert outer.bounds == (100.0, 100.0, 500.0, 500.0)
    assert inner.bounds == (200.0, 200.0, 400.0, 400.0)


@pytest.mark.parametrize("region_id", ["r-ring", "r-tilt", "r-oval"])
def test_zone_paths_are_the_areas_the_bridge_judges(region_id: str) -> None:
    """Rotated rectangles, ellipses and holes are drawn as SceneGeometry.zone_area has them (to 0.01 px)."""
    scene = _scene()
    root = _parse(scene_svg(scene, [], locale="en"))
    path = next(z for z in _by_class(root, "zone") if z.get("data-region") == region_id)
    rings = _rings(path.get("d", ""))
    drawn = functools.reduce(shapely.symmetric_difference, rings)  # what evenodd fills
    judged = SceneGeometry(scene).zone_area(region_id)
    assert judged is not None
    assert shapely.hausdorff_distance(drawn, judged) < 0.01
    assert abs(drawn.area - judged.area) < 0.001 * judged.area


def test_texts_from_the_scene_are_escaped() -> None:
    """Names and ids with markup characters come out as text, and the document stays well-formed XML."""
    scene = _scene(
        name='Docks <script> & "co"',
        tokens=[
            {"id": 't"<x>', "name": "<b>&", "x": 0, "y": 600},
            {"id": "t-b", "name": "B\x01ravo", "x": 900, "y": 0},
        ],
    )
    ruling = {**_ruling(1, True, -3), "actor": 't"<x>', "action": "<i>"}
    text = scene_svg(scene, [ruling], locale="en")
    assert "<b>&" not in text and "&lt;b&gt;&amp;" in text
    root = _parse(text)
    names = [t.text for t in _by_class(root, "token-name")]
    assert names == ["<b>&", "Bravo"]
    tokens = _by_class(root, "token")
    assert tokens[0].get("data-token") == 't"<x>'
    (group,) = _by_class(root, "sight-line")
    assert group.get("data-action") == "<i>"
    title = _by_class(root, "title")[0]
    assert title.text == 'Docks <script> & "co" — Infinity N4 (current rules)'  # ruleset and edition by their titles


def test_legend_lists_zone_types_in_the_locale() -> None:
    """The legend names each zone type present with the ruleset's label in the scene's locale."""
    root = _parse(scene_svg(_scene(), [], locale="es"))
    (legend,) = _by_class(root, "legend")
    texts = [t.text for t in legend.iter(f"{SVG}text")]
    assert "Zona de Baja Visibilidad" in texts
    assert "Zona de Ruido Blanco" in texts
    assert "bloqueada" in texts
