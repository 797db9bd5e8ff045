"""The scene as the bridge holds it: regions, tokens, walls and lights in Foundry's own terms.

These are plain, validated data — no geometry is computed here. Coordinates are Foundry's pixels,
token ``width``/``height`` are grid spaces, elevations are grid distance units (``None`` = unbounded).
The wire messages in :mod:`bridge.protocol` embed these models unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    WithJsonSchema,
    field_validator,
    model_validator,
)

__all__ = [
    "COORD_LIMIT",
    "CircleShape",
    "Elevation",
    "EllipseShape",
    "Grid",
    "Level",
    "Light",
    "PolygonRing",
    "PolygonShape",
    "RectangleShape",
    "Region",
    "RegionShape",
    "Rules",
    "Scene",
    "SceneModel",
    "Token",
    "TokenLight",
    "UnknownShape",
    "Wall",
    "WallThreshold",
    "Zone",
]

#: The largest absolute coordinate or length accepted (pixels or grid units). Foundry scenes are far
#: smaller; the bound keeps arithmetic exact enough and rejects garbage early.
COORD_LIMIT = 1e8

Coord = Annotated[float, Field(ge=-COORD_LIMIT, le=COORD_LIMIT)]
#: The smallest non-zero length accepted: a smaller one (1e-300) squares to zero in the curve equations
#: and divides by it (found by bench/fuzz_bench.py, issue 12). Zero itself stays a valid, empty length.
MIN_LENGTH = 1e-6


def _no_vanishing_length(value: float) -> float:
    if 0 < value < MIN_LENGTH:
        raise ValueError(f"a length must be 0 or at least {MIN_LENGTH:g}")
    return value


Length = Annotated[float, Field(ge=0, le=COORD_LIMIT), AfterValidator(_no_vanishing_length)]
Identifier = Annotated[str, Field(min_length=1, max_length=256)]


def _each_once(level_ids: list[str]) -> list[str]:
    """The ids in order, each once: a level named twice is read once (Foundry's ``levels`` is a set; a
    client that repeats one was accepted before ``--max-levels``, and stays so)."""
    return list(dict.fromkeys(level_ids))


#: Foundry V14's ``levels`` set of a region, wall or light: the ids of the scene's levels it stands on
#: (empty = every level), read as a set: each id once, however often it is named. Each must also be one of
#: the scene's levels (``check_levels``), so the list read is never longer than the scene's ``levels``,
#: which ``SceneLimits.levels`` bounds: no bound of its own here, which a higher ``--max-levels`` would
#: contradict (what a frame can hold bounds the ids named).
LevelIds = Annotated[list[Identifier], AfterValidator(_each_once)]
#: The largest absolute rotation accepted, in degrees (Foundry keeps 0-360; a client that adds turns up
#: stays far inside this, and ``rotation % 360`` is exact here).
ANGLE_LIMIT = 1e6
Angle = Annotated[float, Field(ge=-ANGLE_LIMIT, le=ANGLE_LIMIT)]


class SceneModel(BaseModel):
    """Base of every scene object: strict about unknown fields, finite numbers, immutable."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True, populate_by_name=True)


# --- Region shapes, as Foundry stores them -------------------------------------------------------


class RectangleShape(SceneModel):
    """``x``, ``y`` top-left; rotated by ``rotation`` degrees clockwise (on screen) about its centre."""

    type: Literal["rectangle"] = "rectangle"
    x: Coord
    y: Coord
    width: Length
    height: Length
    rotation: Angle = 0.0
    hole: bool = False


class CircleShape(SceneModel):
    """``x``, ``y`` centre."""

    type: Literal["circle"] = "circle"
    x: Coord
    y: Coord
    radius: Length
    hole: bool = False


class EllipseShape(SceneModel):
    """``x``, ``y`` centre; rotated by ``rotation`` degrees clockwise (on screen) about its centre."""

    type: Literal["ellipse"] = "ellipse"
    x: Coord
    y: Coord
    radiusX: Length
    radiusY: Length
    rotation: Angle = 0.0
    hole: bool = False


class PolygonShape(SceneModel):
    """Flat list of vertices ``[x0, y0, x1, y1, …]``."""

    type: Literal["polygon"] = "polygon"
    points: list[Coord]
    hole: bool = False

    @field_validator("points")
    @classmethod
    def _even(cls, points: list[float]) -> list[float]:
        if len(points) % 2:
            raise ValueError("points must hold x, y pairs (an even count)")
        return points


class UnknownShape(BaseModel):
    """A shape type the bridge does not know (V14's newer ones); usable only beside ``polygons``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: Annotated[str, Field(json_schema_extra={"not": {"enum": ["rectangle", "circle", "ellipse", "polygon"]}})]
    hole: bool = False


def _shape_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in {"rectangle", "circle", "ellipse", "polygon"} else "unknown"


RegionShape = Annotated[
    Annotated[RectangleShape, Tag("rectangle")]
    | Annotated[CircleShape, Tag("circle")]
    | Annotated[EllipseShape, Tag("ellipse")]
    | Annotated[PolygonShape, Tag("polygon")]
    | Annotated[UnknownShape, Tag("unknown")],
    Discriminator(_shape_tag),
]


class PolygonRing(SceneModel):
    """One ring of a region's resolved polygon tree, as Foundry computes it."""

    points: list[Coord]
    hole: bool = False

    @field_validator("points")
    @classmethod
    def _even(cls, points: list[float]) -> list[float]:
        if len(points) % 2:
            raise ValueError("points must hold x, y pairs (an even count)")
        return points


class Elevation(SceneModel):
    """Inclusive vertical span in grid distance units; ``None`` is unbounded."""

    bottom: Coord | None = None
    top: Coord | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Elevation:
        if self.bottom is not None and self.top is not None and self.bottom > self.top:
            raise ValueError("elevation bottom must not be above top")
        return self


class Zone(BaseModel):
    """A visibility zone: a ``type`` from the scene ruleset's vocabulary plus its parameters."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)
    type: Identifier

    @property
    def params(self) -> dict[str, Any]:
        """The zone's parameters (everything but ``type``)."""
        return dict(self.model_extra or {})


class Region(SceneModel):
    """A Foundry scene region: its ``shapes`` (or the ``polygons`` Foundry resolved them to), its elevation
    and, when it is a visibility zone, the ``zone`` (type and the ruleset's parameters)."""

    id: Identifier
    name: str = ""
    elevation: Elevation = Elevation()
    shapes: list[RegionShape] = []
    polygons: list[PolygonRing] | None = None
    zone: Zone | None = None
    levels: LevelIds = []

    @model_validator(mode="after")
    def _known_shapes(self) -> Region:
        if not self.polygons:
            for index, shape in enumerate(self.shapes):
                if isinstance(shape, UnknownShape):
                    raise ValueError(
                        f"shapes[{index}] has type {shape.type!r}, which the bridge cannot draw; "
                        "send the region's resolved 'polygons' with it"
                    )
        return self


# --- Tokens, walls, lights -----------------------------------------------------------------------


class TokenLight(SceneModel):
    """A light carried by a token; ``radius`` in grid distance units."""

    radius: Length
    kind: Literal["white", "ir"] = "white"


class Token(SceneModel):
    """``x``, ``y`` top-left corner in pixels; ``width``/``height`` in grid spaces."""

    id: Identifier
    name: str = ""
    x: Coord
    y: Coord
    width: Annotated[float, Field(ge=0, le=1000)] = 1.0
    height: Annotated[float, Field(ge=0, le=1000)] = 1.0
    elevation: Coord = 0.0
    shape: Literal["rectangle", "ellipse"] = "rectangle"
    traits: list[Identifier] = []
    light: TokenLight | None = None
    actor: str | None = Field(default=None, description="Foundry actor id, for the log")
    level: Identifier | None = Field(default=None, description="V14: the id of the scene level the token is on")


class WallThreshold(SceneModel):
    """Foundry's wall thresholds (grid distance units); ``sight`` and ``light`` are read."""

    sight: Length | None = None
    light: Length | None = None
    sound: Length | None = None
    attenuation: bool = False


class Wall(SceneModel):
    """``c`` = ``[x0, y0, x1, y1]``; ``sight``: 0 none, 10 limited, 20 normal, 30 proximity, 40 distance.

    ``light`` is Foundry's light restriction, the same values, read with ``threshold.light``; absent
    (``None``), the wall's ``sight`` value and sight threshold stand for it.
    """

    id: Identifier
    c: Annotated[list[Coord], Field(min_length=4, max_length=4)]
    sight: Annotated[
        Literal[0, 10, 20, 30, 40],
        WithJsonSchema({"anyOf": [{"enum": [0, 10, 20, 30, 40]}, {"type": "boolean"}], "default": 20}),
    ] = 20
    light: Annotated[
        Literal[0, 10, 20, 30, 40] | None,
        WithJsonSchema(
            {
                "anyOf": [{"enum": [0, 10, 20, 30, 40]}, {"type": "boolean"}, {"type": "null"}],
                "default": None,
                "description": "Foundry's light restriction (as sight); absent: the wall's sight value and "
                "sight threshold stand",
            }
        ),
    ] = None
    door: Literal[0, 1, 2] = 0
    ds: Literal[0, 1, 2] = 0
    dir: Literal[0, 1, 2] = 0
    threshold: WallThreshold | None = None
    levels: LevelIds = []

    @field_validator("sight", "light", mode="before")
    @classmethod
    def _bool_sight(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return 20 if value else 0
        return value


class Light(SceneModel):
    """A light on the scene; ``radius`` in grid distance units."""

    id: Identifier
    x: Coord
    y: Coord
    radius: Length
    kind: Literal["white", "ir"] = "white"
    levels: LevelIds = []


# --- The scene -----------------------------------------------------------------------------------


class Grid(SceneModel):
    """``size`` pixels per grid space; ``distance`` grid units per space.

    Both bounded away from zero (a pixel; a millionth of a unit): a subnormal distance such as 5e-324
    made the pixels-per-unit ratio divide by zero (issue 12)."""

    size: Annotated[float, Field(ge=1, le=100000)] = 100.0
    distance: Annotated[float, Field(ge=1e-6, le=100000)] = 1.0
    units: str = ""
    type: int | None = None


class Level(SceneModel):
    """A V14 scene level (Foundry's ``LevelData``): ``bottom``/``top`` from its ``elevation``, in grid
    distance units; ``None`` is unbounded (Foundry: ``null`` is −∞ below, +∞ above)."""

    id: Identifier
    name: str = ""
    bottom: Coord | None = None
    top: Coord | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Level:
        if self.bottom is not None and self.top is not None and self.bottom > self.top:
            raise ValueError("level bottom must not be above top")
        return self


class Rules(SceneModel):
    """How the scene is ruled: the ruleset and its edition, the locale of the reasons, and whether lines
    of sight run centre to centre (``center``) or from the best of sampled footprint points (``best``)."""

    ruleset: Identifier
    edition: Identifier = "current"
    locale: Literal["en", "es"] = "en"
    lines: Literal["center", "best"] = "center"


class Scene(SceneModel):
    """A whole scene as ``scene.sync`` sends it: grid, rules, environment, regions, tokens, walls, lights and
    levels; ids are unique within each kind."""

    id: Identifier
    name: str = ""
    grid: Grid = Grid()
    rules: Rules
    environment: dict[str, Any] = {}
    regions: list[Region] = []
    tokens: list[Token] = []
    walls: list[Wall] = []
    lights: list[Light] = []
    #: How many is a limit (``SceneLimits.levels``, ``--max-levels``), checked after validation: up to
    #: then a level costs what its bytes do, which the frame limit bounds.
    levels: list[Level] = []

    @model_validator(mode="after")
    def _unique_ids(self) -> Scene:
        for field in ("regions", "tokens", "walls", "lights", "levels"):
            seen: set[str] = set()
            for item in getattr(self, field):
                if item.id in seen:
                    raise ValueError(f"{field} has the id {item.id!r} twice")
                seen.add(item.id)
        return self
