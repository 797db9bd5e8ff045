"""The scenes one world holds, and how ``scene.sync`` and ``scene.patch`` change them.

A change is built on a copy, validated whole (models, ruleset, vocabulary), and only then replaces the
held scene: a rejected message leaves the world exactly as it was.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .geometry import SceneGeometry
from .rules import RULESETS, Ruleset, Ruling
from .rules.data_files import vocabulary
from .scene import Grid, PolygonShape, Region, Rules, Scene, Token

__all__ = [
    "PatchResult",
    "SceneLimits",
    "SceneRejected",
    "SceneState",
    "World",
    "check_levels",
    "check_scene",
    "region_vertices",
]


class SceneRejected(ValueError):
    """A scene the bridge will not hold. ``unknown_ruleset`` tells the two contract codes apart."""

    def __init__(self, message: str, *, field: str, unknown_ruleset: bool = False, too_large: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.unknown_ruleset = unknown_ruleset
        self.too_large = too_large


@dataclass(frozen=True, slots=True)
class SceneLimits:
    """The most one scene may hold; a scene over any of them is refused as ``too-large``."""

    regions: int = 5_000
    tokens: int = 5_000
    walls: int = 50_000
    lights: int = 5_000
    vertices: int = 500_000  # polygon and resolved-ring vertices over the whole scene

    def check(self, scene: Scene, *, vertices: int | None = None) -> int:
        """Raise :class:`SceneRejected` (too large) or return the scene's vertex count (``vertices`` if known)."""
        for kind in ("regions", "tokens", "walls", "lights"):
            count, limit = len(getattr(scene, kind)), getattr(self, kind)
            if count > limit:
                raise SceneRejected(
                    f"scene.{kind}: {count} is over the limit of {limit}", field=f"scene.{kind}", too_large=True
                )
        if vertices is None:
            vertices = sum(region_vertices(region) for region in scene.regions)
        if vertices > self.vertices:
            raise SceneRejected(
                f"scene.regions: {vertices} polygon vertices are over the limit of {self.vertices}",
                field="scene.regions",
                too_large=True,
            )
        return vertices


def region_vertices(region: Region) -> int:
    """Polygon and resolved-ring vertices of one region (what the scene's vertex limit counts)."""
    shapes = sum(len(shape.points) // 2 for shape in region.shapes if isinstance(shape, PolygonShape))
    return shapes + sum(len(ring.points) // 2 for ring in region.polygons or ())


def check_levels(scene: Scene, objects: Mapping[str, Sequence[Any]] | None = None, *, where: str = "scene") -> None:
    """Every level a token, region, wall or light names must be one of the scene's ``levels``.

    ``objects`` (by kind) are the ones to look at — a patch's upserts, named ``upsert.<kind>[i]`` —
    or, when ``None``, every object of the scene. Raises :class:`SceneRejected` naming the first
    unknown id and the levels the scene has.
    """
    known = {level.id for level in scene.levels}
    parts: Mapping[str, Sequence[Any]] = (
        objects
        if objects is not None
        else {
            "tokens": scene.tokens,
            "regions": scene.regions,
            "walls": scene.walls,
            "lights": scene.lights,
        }
    )
    for kind, items in parts.items():
        for index, item in enumerate(items):
            names = (item.level,) if kind == "tokens" else item.levels
            for level in names:
                if level is not None and level not in known:
                    field = f"{where}.{kind}[{index}].{'level' if kind == 'tokens' else 'levels'}"
                    have = ", ".join(sorted(known)) if known else "none (a V13 scene, or one without levels)"
                    raise SceneRejected(f"{field}: the scene has no level {level!r}; its levels: {have}", field=field)


def check_scene(
    scene: Scene,
    limits: SceneLimits | None = None,
    *,
    checked: frozenset[int] = frozenset(),
    vertices: int | None = None,
) -> tuple[Ruleset, int]:
    """Validate what the models cannot: size, ruleset, edition, zone types, traits, environment.

    Returns the scene's ruleset and vertex count. A zone type or trait that no ruleset knows is rejected;
    one of another ruleset is kept (the rulings it touches carry a note). An environment key that no
    ruleset reads is rejected; one of another ruleset is checked by that ruleset and ignored.
    ``checked`` holds the ``id()`` of regions and tokens already checked under the same rules (a
    patch's unchanged objects).
    """
    vertices = (limits or SceneLimits()).check(scene, vertices=vertices)
    rules = scene.rules
    ruleset = RULESETS.get(rules.ruleset)
    if ruleset is None:
        raise SceneRejected(
            f"unknown ruleset {rules.ruleset!r}; known: {', '.join(sorted(RULESETS))}",
            field="scene.rules.ruleset",
            unknown_ruleset=True,
        )
    if rules.edition not in ruleset.editions:
        raise SceneRejected(
            f"unknown edition {rules.edition!r} of {ruleset.id}; known: {', '.join(ruleset.editions)}",
            field="scene.rules.edition",
            unknown_ruleset=True,
        )
    vocab = vocabulary()
    for index, region in enumerate(scene.regions):
        if region.zone is None or id(region) in checked:
            continue
        where = f"scene.regions[{index}].zone"
        zone_type = region.zone.type
        if zone_type in ruleset.zone_types:
            try:
                ruleset.validate_zone(region.zone)
            except ValueError as exc:
                raise SceneRejected(f"{where}: {exc}", field=where) from exc
        elif not vocab.owner_of_zone(zone_type):
            raise SceneRejected(f"{where}.type: no ruleset knows the zone type {zone_type!r}", field=f"{where}.type")
    for index, token in enumerate(scene.tokens):
        if id(token) in checked:
            continue
        for trait in token.traits:
            if not vocab.owner_of_trait(trait):
                where = f"scene.tokens[{index}].traits"
                raise SceneRejected(f"{where}: no ruleset knows the trait {trait!r}", field=where)
    for key, value in scene.environment.items():
        owners = vocab.owner_of_environment(key)
        if not owners:
            known = sorted({k for row in vocab.rulesets.values() for k in row.environment})
            where = f"scene.environment.{key}"
            raise SceneRejected(
                f"{where}: no ruleset reads the condition {key!r}; known: {', '.join(known)}", field=where
            )
        if ruleset.id not in owners:  # another ruleset's condition: checked by its owner, ignored here
            try:
                RULESETS[owners[0]].validate_environment({key: value})
            except ValueError as exc:
                raise SceneRejected(f"scene.environment: {exc}", field="scene.environment") from exc
    try:
        ruleset.validate_environment(scene.environment)
    except ValueError as exc:
        raise SceneRejected(f"scene.environment: {exc}", field="scene.environment") from exc
    return ruleset, vertices


#: Most rulings one scene version remembers before it starts over.
RULING_MEMORY = 20_000


@dataclass
class SceneState:
    """One held scene, with its geometry computed once per version."""

    scene: Scene
    ruleset: Ruleset
    version: int = 0
    vertices: int = 0
    #: Rulings already made on this version, by request (actor, target, action, reaction, options): a
    #: preview and the roll that follows ask the same question. A new version starts empty.
    rulings: dict[Hashable, Ruling] = field(default_factory=dict, repr=False)
    #: The geometry of the state this one replaced (or the one it would have taken over), until this
    #: state's own is built from it: one geometry, never a chain of states, is kept alive by it.
    seed: SceneGeometry | None = field(default=None, repr=False)

    @cached_property
    def geometry(self) -> SceneGeometry:
        geometry = SceneGeometry(self.scene, previous=self.seed)
        self.seed = None
        return geometry

    def handed_on(self) -> SceneGeometry | None:
        """What a state replacing this one may take over: its geometry if built, else its own seed."""
        built = self.__dict__.get("geometry")
        return built if built is not None else self.seed

    def remember(self, key: Hashable, ruling: Ruling) -> Ruling:
        if len(self.rulings) >= RULING_MEMORY:
            self.rulings.clear()
        self.rulings[key] = ruling
        return ruling

    def token(self, token_id: str) -> Token | None:
        return self._tokens.get(token_id)

    @cached_property
    def _tokens(self) -> dict[str, Token]:
        return {t.id: t for t in self.scene.tokens}


@dataclass(frozen=True, slots=True)
class PatchResult:
    state: SceneState
    ignored: dict[str, list[str]]


@dataclass
class World:
    """The scenes of one Foundry world; no other world can reach them."""

    id: str
    scenes: dict[str, SceneState] = field(default_factory=dict)
    limits: SceneLimits = field(default_factory=SceneLimits)

    def sync(self, scene: Scene) -> SceneState:
        """Replace (or create) the scene; raises :class:`SceneRejected` leaving the world unchanged."""
        ruleset, vertices = check_scene(scene, self.limits)
        check_levels(scene)
        previous = self.scenes.get(scene.id)
        state = SceneState(scene, ruleset, version=previous.version + 1 if previous else 0, vertices=vertices)
        self.scenes[scene.id] = state
        return state

    def patch(
        self,
        scene_id: str,
        *,
        upsert: dict[str, list[Any]],
        remove: dict[str, list[str]],
        replace: dict[str, Grid | Rules | dict[str, Any] | str],
    ) -> PatchResult:
        """Apply upserts (whole objects), removals (ids) and scene-level replacements, atomically.

        Removing an id the scene does not hold is not an error — a create and delete that Foundry made
        between two patches arrive as a bare removal — but it is reported in ``ignored``.
        Raises ``KeyError`` for an unknown scene and :class:`SceneRejected` for an invalid result.
        """
        state = self.scenes[scene_id]
        scene = state.scene
        held: dict[str, list[Any]] = {
            "regions": scene.regions,
            "tokens": scene.tokens,
            "walls": scene.walls,
            "lights": scene.lights,
        }
        touched = {kind for kind in held if upsert.get(kind) or remove.get(kind)}
        # Only the kinds the patch touches are rebuilt; the others keep the very same list.
        collections: dict[str, dict[str, Any]] = {kind: {item.id: item for item in held[kind]} for kind in touched}
        old_regions = dict(collections["regions"]) if "regions" in touched else {}
        ignored: dict[str, list[str]] = {}
        for kind, ids in remove.items():
            for item_id in ids:
                if collections[kind].pop(item_id, None) is None:
                    ignored.setdefault(kind, []).append(item_id)
        for kind, items in upsert.items():
            for item in items:
                collections[kind][item.id] = item
        data: dict[str, Any] = {
            "id": scene.id,
            "name": scene.name,
            "grid": scene.grid,
            "rules": scene.rules,
            "environment": scene.environment,
            "levels": scene.levels,
            **{kind: list(collections[kind].values()) if kind in touched else items for kind, items in held.items()},
        }
        data.update(replace)
        # Every part was validated already (the held scene, the patch message); ids are unique by
        # construction (one dict per kind, keyed by id): nothing is left for validation to check.
        new_scene = Scene.model_construct(**data)
        # Objects the patch did not touch were checked under the same rules already: only the new ones are.
        same_rules = "rules" not in replace and "environment" not in replace
        checked = frozenset(map(id, (*scene.regions, *scene.tokens))) if same_rules else frozenset()
        vertices = state.vertices
        for region_id in (*remove.get("regions", ()), *(r.id for r in upsert.get("regions", ()))):
            old = old_regions.get(region_id)
            if old is not None:
                vertices -= region_vertices(old)
                old_regions.pop(region_id)
        vertices += sum(region_vertices(region) for region in upsert.get("regions", ()))
        ruleset, vertices = check_scene(new_scene, self.limits, checked=checked, vertices=vertices)
        # The scene's levels come only with scene.sync: only the new objects can name an unknown one.
        check_levels(new_scene, {kind: items for kind, items in upsert.items() if items}, where="upsert")
        new_state = SceneState(new_scene, ruleset, version=state.version + 1, vertices=vertices, seed=state.handed_on())
        self.scenes[scene_id] = new_state
        return PatchResult(new_state, ignored)
