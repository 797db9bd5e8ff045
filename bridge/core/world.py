"""The scenes one world holds, and how ``scene.sync`` and ``scene.patch`` change them.

A change is built on a copy, validated whole (models, ruleset, vocabulary), and only then replaces the
held scene: a rejected message leaves the world exactly as it was.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import attrgetter
from typing import Any, ClassVar

from .geometry import CrossingRing, SceneGeometry, curve_vertex_count, ring_polygon, shape_vertices
from .ignored import Ignored, IgnoredKey, Kind, diff_ignored, ignored_after_patch, ignored_in, not_held, ruled_scene
from .release import free_in_slices, with_items
from .rules import RULESETS, Ruleset, Ruling
from .rules.base import MissingParameter
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
    "token_vertices",
]


class SceneRejected(ValueError):
    """A scene the bridge will not hold. ``unknown_ruleset`` tells the two contract codes apart.

    ``limit`` (with ``value`` and ``most``) names the limit a too-large scene is over.
    """

    def __init__(
        self,
        message: str,
        *,
        field: str,
        unknown_ruleset: bool = False,
        limit: str | None = None,
        value: float = 0,
        most: float = 0,
    ) -> None:
        super().__init__(message)
        self.field = field
        self.unknown_ruleset = unknown_ruleset
        self.limit = limit
        self.value = value
        self.most = most

    @property
    def too_large(self) -> bool:
        return self.limit is not None


@dataclass(frozen=True, slots=True)
class SceneLimits:
    """The most one scene (and one world) may hold; a scene over any of them is refused as ``too-large``."""

    regions: int = 5_000
    tokens: int = 5_000
    walls: int = 50_000
    lights: int = 5_000
    #: Levels of the scene: every zone, wall and light on levels is judged within the spans of its levels.
    #: An object's own ``levels`` names each once, and only the scene's, so this bounds them too.
    levels: int = 100
    #: Vertices the scene's areas are drawn with: polygon points, resolved rings, rectangles' 4 corners,
    #: curves by the polygon standing for them (regions' circles and ellipses, tokens' round bases).
    vertices: int = 500_000
    #: Vertices of one polygon or resolved ring (checking a ring for crossings costs up to their square).
    ring_vertices: int = 10_000
    #: Scenes one world holds at once; syncing one more forgets the least recently used unwatched one.
    scenes: int = 8

    def check(self, scene: Scene, *, vertices: int | None = None) -> int:
        """Raise :class:`SceneRejected` (too large) or return the scene's vertex count (``vertices`` if known)."""
        for kind in ("regions", "tokens", "walls", "lights", "levels"):
            count, limit = len(getattr(scene, kind)), getattr(self, kind)
            if count > limit:
                raise SceneRejected(
                    f"scene.{kind}: {count} is over the limit of {limit}",
                    field=f"scene.{kind}",
                    limit=kind,
                    value=count,
                    most=limit,
                )
        if vertices is None:
            size = scene.grid.size
            vertices = sum(map(region_vertices, scene.regions)) + sum(token_vertices(t, size) for t in scene.tokens)
        if vertices > self.vertices:
            raise SceneRejected(
                f"scene.regions: the scene is drawn with {vertices} vertices (curves counted by the polygons "
                f"standing for them), over the limit of {self.vertices}",
                field="scene.regions",
                limit="vertices",
                value=vertices,
                most=self.vertices,
            )
        return vertices


def region_vertices(region: Region) -> int:
    """The vertices one region is drawn with (what the scene's vertex limit counts).

    Its resolved ``polygons`` when it has them (they win), else its shapes — curves counted by the
    polygon standing for them (:func:`~bridge.core.geometry.curve_vertex_count`), rectangles as 4.
    """
    if region.polygons:
        return sum(len(ring.points) // 2 for ring in region.polygons)
    return sum(map(shape_vertices, region.shapes))


def token_vertices(token: Token, grid_size: float) -> int:
    """The vertices a token's footprint is drawn with: its round base's polygon, or 4 for a box."""
    if token.shape == "ellipse":
        return curve_vertex_count(max(token.width, token.height) * grid_size / 2)
    return 4


def _check_rings(region: Region, index: int, limits: SceneLimits) -> None:
    """Refuse a ring over the per-ring limit, or one whose edges cross (see docs/geometry.md)."""
    where = f"scene.regions[{index}]"
    rings: list[tuple[str, list[float]]]
    if region.polygons:
        rings = [(f"{where}.polygons[{k}]", ring.points) for k, ring in enumerate(region.polygons)]
    else:
        rings = [
            (f"{where}.shapes[{k}]", shape.points)
            for k, shape in enumerate(region.shapes)
            if isinstance(shape, PolygonShape)
        ]
    for field_path, points in rings:
        count = len(points) // 2
        if count > limits.ring_vertices:
            raise SceneRejected(
                f"{field_path}: region {region.name or region.id!r} has a ring of {count} vertices, over the "
                f"limit of {limits.ring_vertices}",
                field=field_path,
                limit="ring-vertices",
                value=count,
                most=limits.ring_vertices,
            )
        try:
            ring_polygon(points)
        except CrossingRing as exc:
            raise SceneRejected(f"{field_path}: region {region.name or region.id!r}: {exc}", field=field_path) from exc


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
    only: Mapping[str, Sequence[int]] | None = None,
    vertices: int | None = None,
) -> tuple[Ruleset, int]:
    """Validate what the models cannot: size, ruleset, edition, zone types, traits, environment.

    Returns the scene's ruleset and vertex count. A zone type or trait that no ruleset knows is rejected;
    one of another ruleset is kept (the rulings it touches carry a note). A zone of the scene's ruleset that
    only lacks a parameter is kept too: :mod:`bridge.core.ignored` lists it and takes it out of the rulings.
    An environment key that no ruleset reads is rejected; one of another ruleset is checked by that ruleset
    and ignored.
    ``only`` gives, for ``"regions"`` and ``"tokens"``, the positions (ascending) of the only ones to
    check: the others were checked under the same rules already (a patch's unchanged objects).
    """
    limits = limits or SceneLimits()
    vertices = limits.check(scene, vertices=vertices)
    regions, tokens = scene.regions, scene.tokens
    region_rows = range(len(regions)) if only is None else only.get("regions", range(len(regions)))
    token_rows = range(len(tokens)) if only is None else only.get("tokens", range(len(tokens)))
    for index in region_rows:
        _check_rings(regions[index], index, limits)
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
    for index in region_rows:
        region = regions[index]
        if region.zone is None:
            continue
        where = f"scene.regions[{index}].zone"
        zone_type = region.zone.type
        if zone_type in ruleset.zone_types:
            try:
                ruleset.validate_zone(region.zone)
            except MissingParameter:
                pass  # held and listed as ignored (bridge.core.ignored), never a reason to refuse the scene
            except ValueError as exc:
                raise SceneRejected(f"{where}: {exc}", field=where) from exc
        elif not vocab.owner_of_zone(zone_type):
            raise SceneRejected(f"{where}.type: no ruleset knows the zone type {zone_type!r}", field=f"{where}.type")
    for index in token_rows:
        for trait in tokens[index].traits:
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
    """One held scene, with its geometry computed once per version.

    ``scene`` is what the rulings see; ``held`` the scene as the client sent it when the two differ (a zone
    missing a parameter is held but taken out of the rulings); ``ignored`` what the bridge holds but does not
    use, and why (:mod:`bridge.core.ignored`), by (kind, id).
    """

    scene: Scene
    ruleset: Ruleset
    version: int = 0
    vertices: int = 0
    held: Scene | None = field(default=None, repr=False)
    ignored: Mapping[IgnoredKey, Ignored] = field(default_factory=dict, repr=False)
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

    @property
    def held_scene(self) -> Scene:
        """The scene as the client sent it (patches apply to this one)."""
        return self.held if self.held is not None else self.scene

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

    def wall_positions(self) -> _Positions:
        """Each held wall's position in ``held_scene.walls`` by id: made once, then handed on patch after patch
        (:class:`_ListEdits`)."""
        walls = self.held_scene.walls
        kept = self.__dict__.get("_wall_positions")
        if kept is not None and kept[0] is walls:
            positions: _Positions = kept[1]
            return positions
        positions = _Positions(walls)
        self.__dict__["_wall_positions"] = (walls, positions)
        return positions

    @cached_property
    def _tokens(self) -> dict[str, Token]:
        return {t.id: t for t in self.scene.tokens}


@dataclass(frozen=True, slots=True)
class PatchResult:
    """A patched scene; ``ignored``: what the patch newly makes ignored (and removals of ids the scene did
    not hold), in order; ``used``: what was ignored before the patch and is used now (still held)."""

    state: SceneState
    ignored: list[Ignored]
    used: list[IgnoredKey] = field(default_factory=list)


class _Positions:
    """Each object's position by id in a list of objects: a slot per id, in the list's order, and the slots of
    the objects removed since (sorted), so that a removal or an addition costs what it changes — not a read of
    every object after it (reading ``id`` from 50,000 walls takes ~15 ms) nor a copy of the dictionary.

    Held by one scene state at a time: a patch that succeeds takes it over and edits it (:meth:`edit`); a
    patch refused leaves it as it was.
    """

    __slots__ = ("gone", "slots")

    #: Slots removed before the slots are numbered again (one renumbering, ~8 ms for 50,000 ids, per as many).
    MOST_GONE: ClassVar[int] = 4096

    def __init__(self, items: Sequence[Any]) -> None:
        self.slots = _numbered(map(attrgetter("id"), items), len(items))
        self.gone: list[int] = []

    def get(self, key: str) -> int | None:
        slot = self.slots.get(key)
        if slot is None or not self.gone:
            return slot
        return slot - bisect_left(self.gone, slot)

    def edit(self, removed: Sequence[str], added: Sequence[str]) -> None:
        """Take the held ids ``removed`` out and put ``added`` at the end, in order."""
        for key in removed:
            insort(self.gone, self.slots.pop(key))
        end = len(self.slots) + len(self.gone)
        self.slots.update(zip(added, range(end, end + len(added)), strict=True))
        if len(self.gone) > self.MOST_GONE:  # the slots' order is the list's: the ids numbered again from 0
            self.slots, self.gone = _numbered(iter(self.slots), len(self.slots)), []


#: Ids :func:`_numbered` numbers in one C call (about a millisecond's work).
_NUMBERED_AT_ONCE = 4096


def _numbered(ids: Iterator[str], count: int) -> dict[str, int]:
    """The ``count`` ids of ``ids`` by their order, numbered a slice at a time: one C call over 50,000 walls held the
    interpreter ~15 ms, while between two slices it may pass to another world's thread."""
    slots: dict[str, int] = {}
    for start in range(0, count, _NUMBERED_AT_ONCE):
        slots.update(
            zip(islice(ids, _NUMBERED_AT_ONCE), range(start, min(count, start + _NUMBERED_AT_ONCE)), strict=True)
        )
    return slots


class _ListEdits:
    """A held list of objects edited by id as a dictionary of them would be — ``get``, ``pop``, ``[id] = …``, a
    new id (or one removed, then upserted) going at the end — without making that dictionary: a scene of 50,000
    walls made one of every wall for each patch (15-20 ms of Python: every other world's thread waited for the
    interpreter meanwhile, given it every 5 ms). The edits are kept apart; :meth:`result` copies the list (in C)
    and applies them."""

    def __init__(self, items: list[Any], positions: _Positions) -> None:
        self._items, self._positions = items, positions
        self._changed: dict[int, Any] = {}
        self._removed: set[int] = set()
        self._added: dict[str, Any] = {}

    def _held(self, key: str) -> int | None:
        position = self._positions.get(key)
        return None if position is None or position in self._removed else position

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._added:
            return self._added[key]
        position = self._held(key)
        return default if position is None else self._changed.get(position, self._items[position])

    def pop(self, key: str, default: Any = None) -> Any:
        if key in self._added:
            return self._added.pop(key)
        position = self._held(key)
        if position is None:
            return default
        self._removed.add(position)
        return self._changed.pop(position, self._items[position])

    def __setitem__(self, key: str, value: Any) -> None:
        position = None if key in self._added else self._held(key)
        if position is None:
            self._added[key] = value
        else:
            self._changed[position] = value

    def result(self) -> list[Any]:
        """The edited list, in a dictionary's order."""
        items = list(self._items)
        for position, value in self._changed.items():
            items[position] = value
        if self._removed:
            gone = sorted(self._removed)
            kept = items[: gone[0]]
            for start, end in zip(gone, [*gone[1:], len(items)], strict=True):
                kept.extend(items[start + 1 : end])
            items = kept
        items.extend(self._added.values())
        return items

    def commit(self) -> _Positions:
        """The positions, edited in place to index :meth:`result`'s list (once the patch is accepted)."""
        if self._removed or self._added:
            self._positions.edit([self._items[position].id for position in sorted(self._removed)], list(self._added))
        return self._positions


_SINGULAR: dict[str, Kind] = {"regions": "region", "tokens": "token", "walls": "wall", "lights": "light"}


def _state(
    scene: Scene,
    ruleset: Ruleset,
    ignored: Mapping[IgnoredKey, Ignored],
    *,
    version: int,
    vertices: int,
    seed: SceneGeometry | None = None,
    previous: SceneState | None = None,
) -> SceneState:
    before = (previous.held_scene, previous.scene) if previous is not None else None
    ruled = ruled_scene(scene, ignored, before)
    held = scene if ruled is not scene else None
    return SceneState(ruled, ruleset, version=version, vertices=vertices, seed=seed, held=held, ignored=ignored)


def _parts(states: list[SceneState]) -> list[Any]:
    """The states (emptying ``states``), each followed by its scenes and their large containers' items, for
    :func:`bridge.core.release.free_in_slices`."""
    found: list[Any] = []
    for state in states:
        found.append(state)
        for scene in (state.scene, state.held):
            if scene is not None:
                found.append(scene)
                with_items(found, (scene.regions, scene.tokens, scene.walls, scene.lights))
        positions = state.__dict__.get("_wall_positions")
        with_items(found, (state.rulings, state.__dict__.get("_tokens", {}), positions[1].slots if positions else {}))
    states.clear()
    return found


@dataclass
class World:
    """The scenes of one Foundry world; no other world can reach them."""

    id: str
    scenes: dict[str, SceneState] = field(default_factory=dict)
    limits: SceneLimits = field(default_factory=SceneLimits)

    def sync(self, scene: Scene, *, watched: Collection[str] = ()) -> SceneState:
        """Replace (or create) the scene; raises :class:`SceneRejected` leaving the world unchanged.

        A new scene beyond the world's limit of scenes forgets the least recently used one that is not
        in ``watched``; when every held scene is watched, the new one is refused (``scenes-per-world``).
        """
        ruleset, vertices = check_scene(scene, self.limits)
        check_levels(scene)
        previous = self.scenes.get(scene.id)
        if previous is None and len(self.scenes) >= self.limits.scenes:
            unwatched = [scene_id for scene_id in self.scenes if scene_id not in watched]
            if len(self.scenes) - len(unwatched) >= self.limits.scenes:
                raise SceneRejected(
                    f"scene.id: this world already holds {len(self.scenes)} scenes, all watched, and the limit is "
                    f"{self.limits.scenes}; unwatch one first",
                    field="scene.id",
                    limit="scenes-per-world",
                    value=len(self.scenes) + 1,
                    most=self.limits.scenes,
                )
            gone = [self.scenes.pop(scene_id) for scene_id in unwatched[: len(self.scenes) - self.limits.scenes + 1]]
        else:
            gone = []
        ignored = ignored_in(scene, ruleset)
        state = _state(scene, ruleset, ignored, version=previous.version + 1 if previous else 0, vertices=vertices)
        self.scenes.pop(scene.id, None)
        self.scenes[scene.id] = state  # the most recently used last
        if previous is not None:
            gone.append(previous)
            del previous
        free_in_slices(_parts(gone))  # freeing a replaced scene of 55,000 objects at once holds the GIL 25-50 ms
        return state

    def release(self) -> None:
        """Forget every held scene, freeing them in slices (the world is being dropped)."""
        gone = list(self.scenes.values())
        self.scenes.clear()
        free_in_slices(_parts(gone))

    def use(self, scene_id: str) -> SceneState | None:
        """The held scene (``None`` if unknown), marked as the most recently used."""
        state = self.scenes.pop(scene_id, None)
        if state is not None:
            self.scenes[scene_id] = state
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
        between two patches arrive as a bare removal — but it is reported in ``ignored`` (cause
        ``not-held``), beside what the patch newly makes ignored.
        Raises ``KeyError`` for an unknown scene and :class:`SceneRejected` for an invalid result.
        """
        state = self.scenes[scene_id]
        scene = state.held_scene
        held: dict[str, list[Any]] = {
            "regions": scene.regions,
            "tokens": scene.tokens,
            "walls": scene.walls,
            "lights": scene.lights,
        }
        touched = {kind for kind in held if upsert.get(kind) or remove.get(kind)}
        # Only the kinds the patch touches are rebuilt; the others keep the very same list.
        # The tokens by id: a copy of the held version's map when it has one of this very list (see below).
        by_id = state.__dict__.get("_tokens") if "tokens" in touched and state.scene.tokens is scene.tokens else None
        collections: dict[str, Any] = {
            kind: dict(by_id) if kind == "tokens" and by_id is not None else {item.id: item for item in held[kind]}
            for kind in touched
            if kind != "walls"
        }
        if "walls" in touched:  # up to 50,000 of them: edited as a list, not made into a dictionary
            collections["walls"] = _ListEdits(scene.walls, state.wall_positions())
        grid = replace.get("grid", scene.grid)
        size = grid.size if isinstance(grid, Grid) else scene.grid.size
        vertices: int | None = state.vertices

        def token_cost(token: Token) -> int:
            return token_vertices(token, size)

        counted: dict[str, Callable[[Any], int]] = {"regions": region_vertices, "tokens": token_cost}
        unheld: list[tuple[Kind, str]] = []
        # The upserted objects that are not held ones (a patch brings new objects; the very same held
        # object upserted again is not new), found before the removals change the dictionaries.
        fresh: dict[str, list[Any]] = {
            kind: [item for item in upsert[kind] if collections[kind].get(item.id) is not item]
            for kind in ("regions", "tokens")
            if kind in touched and upsert.get(kind)
        }
        for kind, ids in remove.items():
            for item_id in ids:
                gone = collections[kind].pop(item_id, None)
                if gone is None:
                    unheld.append((_SINGULAR[kind], item_id))
                elif kind in counted and vertices is not None:
                    vertices -= counted[kind](gone)
        for kind, items in upsert.items():
            for item in items:
                before = collections[kind].get(item.id)
                collections[kind][item.id] = item
                if kind in counted and vertices is not None:
                    vertices += counted[kind](item) - (counted[kind](before) if before is not None else 0)
        data: dict[str, Any] = {
            "id": scene.id,
            "name": scene.name,
            "grid": scene.grid,
            "rules": scene.rules,
            "environment": scene.environment,
            "levels": scene.levels,
            **{
                kind: list(collections[kind].values()) if kind in touched and kind != "walls" else items
                for kind, items in held.items()
            },
        }
        if "walls" in touched:
            data["walls"] = collections["walls"].result()
        data.update(replace)
        # Every part was validated already (the held scene, the patch message); ids are unique by
        # construction (one dict per kind, keyed by id): nothing is left for validation to check.
        new_scene = Scene.model_construct(**data)
        # Objects the patch did not touch were checked under the same rules already: only the new ones are.
        same_rules = "rules" not in replace and "environment" not in replace
        only: dict[str, Sequence[int]] | None = None
        if same_rules:
            only = {}
            for kind in ("regions", "tokens"):
                if kind not in touched:
                    only[kind] = ()  # the very same list
                elif len(brought := fresh.get(kind, [])) <= _FEW_FRESH:
                    # The positions of the new objects that stayed (the last upsert of an id wins), from
                    # the dictionary's order (the new list's): no walk over every object of the kind.
                    kept = collections[kind]
                    keys = list(kept)
                    only[kind] = sorted({keys.index(item.id) for item in brought if kept[item.id] is item})
                else:
                    before_ids = set(map(id, held[kind]))
                    only[kind] = [k for k, item in enumerate(getattr(new_scene, kind)) if id(item) not in before_ids]
        if "grid" in replace:
            vertices = None  # round bases are drawn anew at the new grid size: count everything again
        ruleset, counted_vertices = check_scene(new_scene, self.limits, only=only, vertices=vertices)
        # The scene's levels come only with scene.sync: only the new objects can name an unknown one.
        check_levels(new_scene, {kind: items for kind, items in upsert.items() if items}, where="upsert")
        if same_rules:
            ignored = ignored_after_patch(state.ignored, new_scene, ruleset, upsert=upsert, remove=remove)
        else:
            ignored = ignored_in(new_scene, ruleset)
        new_state = _state(
            new_scene,
            ruleset,
            ignored,
            version=state.version + 1,
            vertices=counted_vertices,
            seed=state.handed_on(),
            previous=state,
        )
        # The tokens by id (SceneState.token), not built again on the new version's first question: the patch's
        # own dictionary when the ruled scene holds the list made of it (its values, in its order), or the last
        # version's when the ruled scene holds the very same list as the last one.
        tokens = new_state.scene.tokens
        if "tokens" in touched:
            if tokens is new_scene.tokens:
                new_state.__dict__["_tokens"] = collections["tokens"]
        elif tokens is state.scene.tokens and "_tokens" in state.__dict__:
            new_state.__dict__["_tokens"] = state.__dict__["_tokens"]
        # The walls' positions handed on with the list they index (a patch without walls keeps the very list).
        walls = new_state.held_scene.walls
        if "walls" in touched:
            if walls is data["walls"]:  # taken over from the state this one replaces
                new_state.__dict__["_wall_positions"] = (walls, collections["walls"].commit())
            state.__dict__.pop("_wall_positions", None)
        elif "_wall_positions" in state.__dict__ and walls is state.__dict__["_wall_positions"][0]:
            new_state.__dict__["_wall_positions"] = state.__dict__["_wall_positions"]
        self.scenes.pop(scene_id, None)
        self.scenes[scene_id] = new_state
        newly, used = diff_ignored(state.ignored, ignored, _held_keys(new_scene, state.ignored, ignored))
        locale = new_scene.rules.locale
        return PatchResult(new_state, [*(not_held(k, i, locale) for k, i in unheld), *newly], used)


#: Up to this many new objects of a kind, :meth:`World.patch` finds their positions by id.
_FEW_FRESH = 8


def _held_keys(
    scene: Scene, before: Mapping[IgnoredKey, Ignored], after: Mapping[IgnoredKey, Ignored]
) -> set[IgnoredKey]:
    """Of the keys ignored before and not after, those whose object the scene still holds."""
    gone = [key for key in before if key not in after]
    if not gone:
        return set()
    held: dict[str, set[str]] = {
        "region": {r.id for r in scene.regions},
        "token": {t.id for t in scene.tokens},
        "wall": {w.id for w in scene.walls},
        "environment": set(scene.environment),
    }
    return {key for key in gone if key[1] in held.get(key[0], set())}
