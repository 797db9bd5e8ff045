"""A picture of a scene and its rulings, as SVG text: zones as the bridge judges them, walls, tokens, lines.

:func:`scene_svg` is pure — a :class:`~bridge.core.scene.Scene` and the ``adjudication`` answers in, SVG
text out. Zones are drawn from :meth:`SceneGeometry.zone_area` (holes, rotations, curves and Foundry's
resolved polygons included), so the picture shows exactly the areas the rulings were made on. Each sight
line is coloured by its result — blocked red, penalised amber, clear green — and labelled with its
number in the list and its MOD. Every text that comes from the scene is escaped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from shapely.geometry import LineString, box
from shapely.geometry.base import BaseGeometry

from .core.geometry import SceneGeometry
from .core.rules.labels import label
from .core.scene import Scene, Wall
from .palette import VERDICTS, zone_colour

__all__ = ["RESULT_COLOURS", "Result", "result_of", "scene_svg"]

Result = Literal["clear", "penalised", "blocked"]

#: Line colour per result (from the one palette, ``bridge/palette.json``): blocked red, penalised amber, clear green.
RESULT_COLOURS: Final[Mapping[Result, str]] = {
    "clear": VERDICTS["clear"],
    "penalised": VERDICTS["penalised"],
    "blocked": VERDICTS["blocked"],
}

_TEXTS: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "zones": "Visibility zones",
        "lines": "Sight lines",
        "clear": "clear",
        "penalised": "penalised (MOD)",
        "blocked": "blocked",
        "blocked_short": "no LoF",
        "refused": "refused",
        "allowed": "allowed",
        "wall": "wall",
        "token": "token",
        "scale": "1 square = {distance} {units}",
    },
    "es": {
        "zones": "Zonas de visibilidad",
        "lines": "Líneas de tiro",
        "clear": "despejada",
        "penalised": "penalizada (MOD)",
        "blocked": "bloqueada",
        "blocked_short": "sin LDT",
        "refused": "denegado",
        "allowed": "permitido",
        "wall": "muro",
        "token": "miniatura",
        "scale": "1 casilla = {distance} {units}",
    },
}

_MARGIN: Final = 60.0
_TITLE_HEIGHT: Final = 70.0
_LEGEND_WIDTH: Final = 420.0
#: Distance between parallel lines drawn for the same pair of tokens (both directions, or two actions).
_PARALLEL_GAP: Final = 16.0
#: Characters XML 1.0 cannot carry at all; dropped from scene texts.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def result_of(ruling: Mapping[str, Any]) -> Result:
    """``blocked`` when not allowed, ``penalised`` when the MOD makes the roll harder, else ``clear``."""
    if not ruling.get("allowed", False):
        return "blocked"
    modifier = ruling.get("modifier")
    return "penalised" if isinstance(modifier, int | float) and modifier < 0 else "clear"


def scene_svg(scene: Scene, rulings: Sequence[Mapping[str, Any]], *, locale: str = "en") -> str:
    """The scene and its rulings as a standalone SVG document (text).

    ``rulings`` are ``adjudication`` answers as dicts; each one with a ``line`` becomes a sight line,
    each one without (a Combat Jump) a ring around its actor. Numbers in labels are 1-based positions
    in ``rulings``.
    """
    texts = _TEXTS.get(locale, _TEXTS["en"])
    geometry = SceneGeometry(scene)
    areas = {region.id: geometry.zone_area(region.id) for region in scene.regions if region.zone is not None}
    x0, y0, x1, y1 = _extent(scene, geometry, areas.values(), rulings)
    width = x1 - x0 + 2 * _MARGIN + _LEGEND_WIDTH
    height = y1 - y0 + _MARGIN + _TITLE_HEIGHT
    left, top = x0 - _MARGIN, y0 - _TITLE_HEIGHT
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{_n(left)} {_n(top)} {_n(width)} {_n(height)}" '
        'width="100%" preserveAspectRatio="xMidYMid meet" font-family="sans-serif">',
        _defs(),
        f'<rect class="background" x="{_n(left)}" y="{_n(top)}" width="{_n(width)}" height="{_n(height)}" '
        'fill="#ffffff"/>',
        f'<rect class="board" x="{_n(x0)}" y="{_n(y0)}" width="{_n(x1 - x0)}" height="{_n(y1 - y0)}" '
        'fill="#f4f1ea" stroke="#888888"/>',
        _grid(scene, x0, y0, x1, y1),
        _title(scene, texts, x0, y0, locale),
    ]

    labels = _LabelSpace()
    for token in scene.tokens:  # no label covers a token
        footprint = geometry.footprint(token.id)
        if not footprint.is_empty:
            labels.taken.append(footprint.bounds)
    out.append('<g id="zones">')
    for region in scene.regions:
        if region.zone is None:
            continue
        zone_type = region.zone.type
        label = _zone_label(scene, zone_type, locale)
        name = region.name or label
        area = areas[region.id]
        out.append(
            f'<path class="zone zone-{_attr_token(zone_type)}" data-region={_attr(region.id)} '
            f'data-zone={_attr(zone_type)} d="{_path(area)}" fill="{zone_colour(zone_type)}" fill-opacity="0.55" '
            f'fill-rule="evenodd" stroke="{zone_colour(zone_type)}" stroke-width="2">'
            f"<title>{_text(f'{name} — {label}' if name != label else label)}</title></path>"
        )
    out.append("</g>")

    out.append('<g id="walls">')
    out.extend(_wall(wall) for wall in scene.walls)
    out.append("</g>")

    out.append('<g id="tokens">')
    for token in scene.tokens:
        centre = geometry.center(token.id)
        footprint = geometry.footprint(token.id)
        size = max(token.width, token.height) * scene.grid.size
        traits = ", ".join(_trait_label(scene, trait, locale) for trait in token.traits)
        out.append(f'<g class="token" data-token={_attr(token.id)}>')
        if footprint.is_empty or footprint.area == 0:
            out.append(f'<circle cx="{_n(centre.x)}" cy="{_n(centre.y)}" r="8" fill="#ffffff" stroke="#1f1f1f"/>')
        else:
            out.append(
                f'<path d="{_path(footprint)}" fill="#ffffff" fill-opacity="0.85" stroke="#1f1f1f" stroke-width="3"/>'
            )
        name = token.name or token.id
        above, below = centre.y - size / 2 - 18, centre.y + size / 2 + 18
        nx, ny = labels.place([(centre.x, above), (centre.x, below)], name, 22, bold=True)
        out.append(
            f'<text class="token-name" x="{_n(nx)}" y="{_n(ny)}" text-anchor="middle" dominant-baseline="central" '
            f'font-size="22" font-weight="bold" fill="#111111" {_HALO}>{_text(name)}</text>'
        )
        if traits:
            tx, ty = labels.place([(centre.x, below), (centre.x, below + 20), (centre.x, above - 22)], traits, 15)
            out.append(
                f'<text class="token-traits" x="{_n(tx)}" y="{_n(ty)}" text-anchor="middle" '
                f'dominant-baseline="central" font-size="15" fill="#333333" {_HALO}>{_text(traits)}</text>'
            )
        out.append("</g>")
    out.append("</g>")

    out.append('<g id="rulings">')
    out.extend(_rulings(geometry, rulings, texts, labels))
    out.append("</g>")

    out.append('<g id="zone-names">')
    for region in scene.regions:
        area = areas.get(region.id)
        if region.zone is None or area is None or area.is_empty:
            continue
        name = region.name or _zone_label(scene, region.zone.type, locale)
        spot = area.representative_point()
        centre = area.centroid
        zx, zy = labels.place([(centre.x, centre.y), (spot.x, spot.y)], name, 20)
        out.append(
            f'<text class="zone-name" data-region={_attr(region.id)} x="{_n(zx)}" y="{_n(zy)}" text-anchor="middle" '
            f'dominant-baseline="central" font-size="20" font-style="italic" fill="#1f1f1f" {_HALO}>'
            f"{_text(name)}</text>"
        )
    out.append("</g>")

    out.append(_legend(scene, texts, locale, x1 + _MARGIN * 1.5, y0))
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --- Parts ----------------------------------------------------------------------------------------

_HALO: Final = 'stroke="#ffffff" stroke-width="4" stroke-linejoin="round" paint-order="stroke"'


def _defs() -> str:
    markers = "".join(
        f'<marker id="arrow-{result}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="4" markerHeight="4" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        for result, colour in RESULT_COLOURS.items()
    )
    return f"<defs>{markers}</defs>"


def _title(scene: Scene, texts: Mapping[str, str], x0: float, y0: float, locale: str) -> str:
    rules = scene.rules
    ruleset = label(rules.ruleset, "ruleset", rules.ruleset, locale)
    heading = f"{scene.name or scene.id} — {ruleset} ({label(rules.ruleset, 'edition', rules.edition, locale)})"
    scale = texts["scale"].format(distance=_n(scene.grid.distance), units=scene.grid.units).strip()
    return (
        f'<text class="title" x="{_n(x0)}" y="{_n(y0 - 38)}" font-size="28" font-weight="bold" fill="#111111">'
        f"{_text(heading)}</text>"
        f'<text class="scale" x="{_n(x0)}" y="{_n(y0 - 12)}" font-size="18" fill="#444444">{_text(scale)}</text>'
    )


def _grid(scene: Scene, x0: float, y0: float, x1: float, y1: float) -> str:
    size = scene.grid.size
    parts: list[str] = []
    x = math.ceil(x0 / size) * size
    while x <= x1:
        parts.append(f"M{_n(x)},{_n(y0)}V{_n(y1)}")
        x += size
    y = math.ceil(y0 / size) * size
    while y <= y1:
        parts.append(f"M{_n(x0)},{_n(y)}H{_n(x1)}")
        y += size
    return f'<path class="grid" d="{"".join(parts)}" stroke="#d8d2c4" stroke-width="1" fill="none"/>'


def _wall(wall: Wall) -> str:
    ax, ay, bx, by = wall.c
    stops_sight = wall.sight != 0 and not (wall.door and wall.ds == 1)
    style = (
        'stroke="#3b2a1a" stroke-width="8"'
        if stops_sight
        else 'stroke="#8a7a6a" stroke-width="4" stroke-dasharray="10 8"'
    )
    if wall.sight == 10 and stops_sight:
        style = 'stroke="#3b2a1a" stroke-width="6" stroke-dasharray="18 6"'
    return (
        f'<line class="wall" data-wall={_attr(wall.id)} x1="{_n(ax)}" y1="{_n(ay)}" x2="{_n(bx)}" y2="{_n(by)}" '
        f'{style} stroke-linecap="round"/>'
    )


def _rulings(
    geometry: SceneGeometry, rulings: Sequence[Mapping[str, Any]], texts: Mapping[str, str], labels: _LabelSpace
) -> list[str]:
    """One ``sight-line`` group per ruling with a line, one ``placement`` group per ruling without."""
    out: list[str] = []
    seen_pairs: dict[tuple[tuple[float, float], tuple[float, float]], int] = {}
    for number, ruling in enumerate(rulings, start=1):
        result = result_of(ruling)
        colour = RESULT_COLOURS[result]
        line = ruling.get("line")
        if isinstance(line, Mapping):
            ax, ay = float(line["start"]["x"]), float(line["start"]["y"])
            bx, by = float(line["end"]["x"]), float(line["end"]["y"])
            # Lines between the same two points (both directions, several actions) are drawn side by side.
            key = (min((ax, ay), (bx, by)), max((ax, ay), (bx, by)))
            index = seen_pairs.get(key, 0)
            seen_pairs[key] = index + 1
            ox, oy = _offset(ax, ay, bx, by, index)
            ax, ay, bx, by = ax + ox, ay + oy, bx + ox, by + oy
            label = f"{number}: {_mod_text(ruling, texts)}"
            lx, ly = labels.place_along(ax, ay, bx, by, label, 20)
            dash = ' stroke-dasharray="14 8"' if result == "blocked" else ""
            out.append(
                f'<g class="sight-line result-{result}" data-ruling="{number}" data-actor={_attr(ruling.get("actor"))} '
                f"data-target={_attr(ruling.get('target'))} data-action={_attr(ruling.get('action'))}>"
                f'<line x1="{_n(ax)}" y1="{_n(ay)}" x2="{_n(bx)}" y2="{_n(by)}" stroke="{colour}" stroke-width="4"'
                f'{dash} marker-end="url(#arrow-{result})"/>'
                f'<text x="{_n(lx)}" y="{_n(ly)}" text-anchor="middle" dominant-baseline="central" font-size="20" '
                f'font-weight="bold" fill="{colour}" {_HALO}>{_text(label)}</text></g>'
            )
            continue
        actor = ruling.get("actor")
        try:
            centre = geometry.center(str(actor))
            footprint = geometry.footprint(str(actor))
        except KeyError:
            continue
        bx0, by0, bx1, by1 = footprint.bounds if not footprint.is_empty else (centre.x, centre.y, centre.x, centre.y)
        radius = max(bx1 - bx0, by1 - by0) / 2 * math.sqrt(2) + 10
        verdict = texts["refused"] if result == "blocked" else texts["allowed"]
        label = f"{number}: {verdict}"
        px, py = labels.place(
            [(centre.x, centre.y + radius + 16), (centre.x, centre.y - radius - 16)], label, 18, bold=True
        )
        out.append(
            f'<g class="placement result-{result}" data-ruling="{number}" data-actor={_attr(actor)} '
            f"data-action={_attr(ruling.get('action'))}>"
            f'<circle cx="{_n(centre.x)}" cy="{_n(centre.y)}" r="{_n(radius)}" fill="none" stroke="{colour}" '
            f'stroke-width="4" stroke-dasharray="6 6"/>'
            f'<text x="{_n(px)}" y="{_n(py)}" text-anchor="middle" dominant-baseline="central" font-size="18" '
            f'font-weight="bold" fill="{colour}" {_HALO}>{_text(label)}</text></g>'
        )
    return out


class _LabelSpace:
    """Where labels already sit (boxes) and what they must not cover (token footprints, sight lines), so that
    each new label goes to the first candidate spot that is free — else to the nearest free spot around it.

    Boxes are estimated generously (0.62 em per character, 0.68 em bold, 1.3 em tall), so labels placed
    apart here stay apart as a browser draws them (``tests/test_svg_browser.py`` measures them).
    """

    #: Fractions of a line tried for its label, middle first.
    SPOTS: Final = (0.5, 0.38, 0.62, 0.27, 0.73, 0.18, 0.82)
    #: Rings searched around a spot when every candidate is taken (each one ``size`` farther out).
    RINGS: Final = 12

    def __init__(self) -> None:
        self.taken: list[tuple[float, float, float, float]] = []
        self.labels: list[tuple[float, float, float, float]] = []
        self.lines: list[LineString] = []

    @staticmethod
    def box(x: float, y: float, text: str, size: float, bold: bool = False) -> tuple[float, float, float, float]:
        """The box of text centred on ``(x, y)`` (``text-anchor="middle"``, ``dominant-baseline="central"``)."""
        half = len(text) * size * (0.34 if bold else 0.31) + 4
        return (x - half, y - size * 0.65, x + half, y + size * 0.65)

    def free(self, spot: tuple[float, float, float, float], *, lines: bool) -> bool:
        if any(_overlap(spot, other) > 0 for other in self.taken):
            return False
        return not (lines and any(line.intersects(box(*spot)) for line in self.lines))

    def place(
        self, candidates: Sequence[tuple[float, float]], text: str, size: float, *, bold: bool = False
    ) -> tuple[float, float]:
        """The first candidate whose box is free of labels, footprints and sight lines; else the first free of
        labels and footprints; else the nearest free spot on rings around the first candidate."""
        boxes = [(x, y, self.box(x, y, text, size, bold)) for x, y in candidates]
        chosen = next(((x, y) for x, y, b in boxes if self.free(b, lines=True)), None)
        if chosen is None:
            chosen = next(((x, y) for x, y, b in boxes if self.free(b, lines=False)), None)
        if chosen is None:
            cx, cy = candidates[0]
            for ring in range(1, self.RINGS + 1):
                steps = 8 * ring
                for k in range(steps):
                    angle = 2 * math.pi * k / steps + math.pi / 2  # below first, then around
                    x, y = cx + math.cos(angle) * ring * size, cy + math.sin(angle) * ring * size * 0.8
                    if self.free(self.box(x, y, text, size, bold), lines=False):
                        chosen = (x, y)
                        break
                if chosen is not None:
                    break
        x, y = chosen if chosen is not None else candidates[0]
        placed = self.box(x, y, text, size, bold)
        self.taken.append(placed)
        self.labels.append(placed)
        return x, y

    def place_along(self, ax: float, ay: float, bx: float, by: float, text: str, size: float) -> tuple[float, float]:
        """A spot along ``a→b`` for the line's label (the middle if free), then the line is an obstacle."""
        spots = [(ax + (bx - ax) * t, ay + (by - ay) * t) for t in self.SPOTS]
        x, y = self.place(spots, text, size, bold=True)
        self.lines.append(LineString([(ax, ay), (bx, by)]))
        return x, y


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _legend(scene: Scene, texts: Mapping[str, str], locale: str, x: float, y: float) -> str:
    out = [f'<g class="legend" transform="translate({_n(x)},{_n(y)})">']
    row = 0.0
    out.append(f'<text y="{_n(row + 20)}" font-size="22" font-weight="bold">{_text(texts["zones"])}</text>')
    row += 40
    zone_types = list(dict.fromkeys(region.zone.type for region in scene.regions if region.zone is not None))
    for zone_type in zone_types:
        fill = zone_colour(zone_type)
        out.append(
            f'<rect class="legend-swatch" y="{_n(row)}" width="36" height="24" fill="{fill}" fill-opacity="0.55" '
            f'stroke="{fill}" stroke-width="2"/>'
            f'<text x="48" y="{_n(row + 18)}" font-size="18">{_text(_zone_label(scene, zone_type, locale))}</text>'
        )
        row += 34
    row += 20
    out.append(f'<text y="{_n(row + 20)}" font-size="22" font-weight="bold">{_text(texts["lines"])}</text>')
    row += 40
    for result, colour in RESULT_COLOURS.items():
        dash = ' stroke-dasharray="14 8"' if result == "blocked" else ""
        out.append(
            f'<line x1="0" y1="{_n(row + 12)}" x2="36" y2="{_n(row + 12)}" stroke="{colour}" stroke-width="4"{dash}/>'
            f'<text x="48" y="{_n(row + 18)}" font-size="18">{_text(texts[result])}</text>'
        )
        row += 34
    out.append(
        f'<line x1="0" y1="{_n(row + 12)}" x2="36" y2="{_n(row + 12)}" stroke="#3b2a1a" stroke-width="8"/>'
        f'<text x="48" y="{_n(row + 18)}" font-size="18">{_text(texts["wall"])}</text>'
    )
    out.append("</g>")
    return "".join(out)


# --- Helpers --------------------------------------------------------------------------------------


def _extent(
    scene: Scene,
    geometry: SceneGeometry,
    areas: Iterable[BaseGeometry | None],
    rulings: Sequence[Mapping[str, Any]],
) -> tuple[float, float, float, float]:
    """The board: the origin and everything drawn, out to whole grid squares."""
    xs: list[float] = [0.0]
    ys: list[float] = [0.0]
    for area in areas:
        if area is not None:
            bx0, by0, bx1, by1 = area.bounds
            xs += [bx0, bx1]
            ys += [by0, by1]
    for token in scene.tokens:
        footprint = geometry.footprint(token.id)
        if not footprint.is_empty:
            bx0, by0, bx1, by1 = footprint.bounds
            xs += [bx0, bx1]
            ys += [by0, by1]
    for wall in scene.walls:
        xs += [wall.c[0], wall.c[2]]
        ys += [wall.c[1], wall.c[3]]
    for ruling in rulings:
        line = ruling.get("line")
        if isinstance(line, Mapping):
            for end in ("start", "end"):
                xs.append(float(line[end]["x"]))
                ys.append(float(line[end]["y"]))
    size = scene.grid.size
    return (
        math.floor(min(xs) / size) * size,
        math.floor(min(ys) / size) * size,
        math.ceil(max(xs) / size) * size,
        math.ceil(max(ys) / size) * size,
    )


def _offset(ax: float, ay: float, bx: float, by: float, index: int) -> tuple[float, float]:
    """Sideways shift of the ``index``-th line drawn between the same two points: 0, +1, −1, +2, … gaps."""
    if index == 0:
        return 0.0, 0.0
    length = math.hypot(bx - ax, by - ay)
    if length == 0:
        return 0.0, 0.0
    # Normal of the segment taken in a fixed direction, so both directions of a pair shift apart.
    if (bx, by) < (ax, ay):
        ax, ay, bx, by = bx, by, ax, ay
    nx, ny = -(by - ay) / length, (bx - ax) / length
    step = (index + 1) // 2 * (1 if index % 2 else -1) * _PARALLEL_GAP
    return nx * step, ny * step


def _mod_text(ruling: Mapping[str, Any], texts: Mapping[str, str]) -> str:
    modifier = ruling.get("modifier")
    if not ruling.get("allowed", False) or not isinstance(modifier, int | float):
        return texts["blocked_short"]
    return f"{int(modifier):+d}" if modifier else "0"


def _zone_label(scene: Scene, zone_type: str, locale: str) -> str:
    """The ruleset's own name for a zone type, in ``locale``; the type itself when no ruleset has one."""
    return label(scene.rules.ruleset, "zone", zone_type, locale)


def _trait_label(scene: Scene, trait: str, locale: str) -> str:
    return label(scene.rules.ruleset, "trait", trait, locale)


def _path(geometry: BaseGeometry | None) -> str:
    """SVG path data for a Polygon or MultiPolygon: every ring, holes included (draw with evenodd)."""
    if geometry is None or geometry.is_empty:
        return ""
    polygons = list(getattr(geometry, "geoms", [geometry]))
    parts: list[str] = []
    for polygon in polygons:
        if polygon.geom_type != "Polygon" or polygon.is_empty:
            continue
        for ring in (polygon.exterior, *polygon.interiors):
            coords = list(ring.coords)[:-1]
            if coords:
                head, *rest = coords
                parts.append(f"M{_n(head[0])},{_n(head[1])}" + "".join(f"L{_n(x)},{_n(y)}" for x, y in rest) + "Z")
    return "".join(parts)


def _n(value: float) -> str:
    """A coordinate, two decimals at most, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _clean(value: object) -> str:
    return _NOT_XML.sub("", "" if value is None else str(value))


def _text(value: object) -> str:
    """Escaped element text."""
    return _clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: object) -> str:
    """A quoted, escaped attribute value (quotes included)."""
    return '"' + _text(value).replace('"', "&quot;") + '"'


def _attr_token(value: str) -> str:
    """A class-name-safe form of ``value``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", value) or "_"
