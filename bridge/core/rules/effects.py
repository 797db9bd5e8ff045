"""Rules over arrays: what each crossing does to each kind of observer, as a table, and a line's verdict
as a reduction over its crossings.

A ruleset compiles, from its TOML data, an :class:`EffectTable`: for every observer (a set of traits,
numbered by the caller), zone type and crossing kind — the action, reaction and edition being fixed —
the *effect* of that crossing: whether it counts towards the most restrictive candidate, whether it
blocks the line, and its MOD. :meth:`EffectTable.reduce` then rules many lines at once, a labelled
group reduction in NumPy (each line's crossings are one group, CSR): the counted crossing of lowest
rank (a block before any MOD, then the lowest MOD, the first among equals) applies; the line is
allowed unless it blocks or a wall does; the modifier is its MOD plus the action's own.

The verdict (allowed, modifier, which crossing applied) is all a whole-scene pass computes per line;
the :class:`~bridge.core.rules.base.Ruling` — entries, reasons, notes, citations — is built from the
ruleset's own code only for a line someone reads (``bridge.core.visibility``), and the property tests
hold the two equal.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from .. import _loops
from ..scene import Region, Scene, Token
from ..sight import CrossingKind, Point3

if TYPE_CHECKING:
    from ..geometry import LightSource, SceneGeometry

__all__ = [
    "KINDS",
    "EffectTable",
    "LineInputs",
    "LineRules",
    "SceneInputs",
    "Verdicts",
    "centre_distances",
    "lights_on",
    "lights_seen",
    "no_verdicts",
    "reduce_crossings",
    "zone_classes",
]

IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

#: A block's rank: below any MOD a zone can give.
_BLOCK_RANK = -(1 << 40)
#: The rank of a crossing that does not count (a foreign zone type, harmless White Noise): never applied.
_IGNORED_RANK = 1 << 40


class Verdicts(NamedTuple):
    """The verdict of every line: allowed, its modifier (0 where not allowed) and the position, within
    the line's crossings, of the one that applied (−1: none)."""

    allowed: BoolArray
    modifier: npt.NDArray[np.int64]
    applied: IntArray


class EffectTable(NamedTuple):
    """Effects by ``[observer, zone type, crossing kind]`` (kinds: from, into, within, through).

    ``zone_types`` numbers the zone types the ruleset knows (a zone of another type has no effect);
    ``own_mod`` is the action's own MOD; ``needs_lof`` false means every line is allowed, walls and
    zones notwithstanding. ``ranks`` is each effect's rank in the reduction, by observer and column
    ``4 × zone type + kind`` (four more columns, never applied, for zones of types it does not know);
    ``memo`` keeps :meth:`zone_columns`. Made by :meth:`of`.
    """

    zone_types: dict[str, int]
    counts: BoolArray
    blocks: BoolArray
    value: npt.NDArray[np.int64]
    own_mod: int
    needs_lof: bool
    ranks: npt.NDArray[np.int64]
    memo: dict[int, tuple[Any, IntArray, IntArray, BoolArray | None]]

    @classmethod
    def of(
        cls,
        zone_types: dict[str, int],
        counts: BoolArray,
        blocks: BoolArray,
        value: npt.NDArray[np.int64],
        own_mod: int,
        needs_lof: bool,
    ) -> EffectTable:
        """The table of these effects: a crossing that counts ranks as a block (below any MOD) or its MOD,
        one that does not count is never applied."""
        rank = np.where(counts, np.where(blocks, _BLOCK_RANK, value), _IGNORED_RANK).astype(np.int64)
        observers = counts.shape[0]
        ranks = np.full((observers, 4 * (len(zone_types) + 1)), _IGNORED_RANK, dtype=np.int64)
        ranks[:, : 4 * len(zone_types)] = rank.reshape(observers, -1)
        return cls(zone_types, counts, blocks, value, own_mod, needs_lof, ranks, {})

    def type_codes(self, zone_types: list[str]) -> IntArray:
        """The table's number for each zone's type (−1: a type the ruleset does not know)."""
        return np.array([self.zone_types.get(t, -1) for t in zone_types], dtype=np.intp)

    def zone_columns(self, zones: Sequence[Any], zone_type: Callable[[Any], str]) -> tuple[IntArray, IntArray]:
        """:meth:`type_codes` of ``zones`` (``zone_type`` of each), and each crossing code's column of
        :attr:`ranks` (``4 × zone + kind`` → ``4 × its type + kind``, the unknown columns for a type the
        table does not know): kept while ``zones`` is the same object."""
        found = self._zone_entry(zones, zone_type)
        return found[1], found[2]

    def known_zones(self, zones: Sequence[Any], zone_type: Callable[[Any], str]) -> BoolArray | None:
        """Per zone of ``zones``, whether the table knows its type (``None``: it knows every one), kept with
        :meth:`zone_columns`."""
        return self._zone_entry(zones, zone_type)[3]

    def _zone_entry(
        self, zones: Sequence[Any], zone_type: Callable[[Any], str]
    ) -> tuple[Any, IntArray, IntArray, BoolArray | None]:
        memo = self.memo
        found = memo.get(id(zones))
        if found is not None and found[0] is zones:
            return found
        codes = self.type_codes([zone_type(zone) for zone in zones])
        known = np.where(codes >= 0, codes, len(self.zone_types))
        columns = (4 * known[:, None] + np.arange(4, dtype=np.intp)).ravel()
        if len(memo) >= 4:  # zones of scenes long changed: the oldest goes
            del memo[next(iter(memo))]
        mask = codes >= 0
        found = memo[id(zones)] = (zones, codes, columns, None if bool(mask.all()) else mask)
        return found

    def reduce(
        self,
        starts: IntArray,
        codes: IntArray,
        observers: IntArray,
        columns: IntArray,
        walled: BoolArray,
    ) -> Verdicts:
        """The verdict of each line ``k``, whose crossings are ``codes[starts[k]:starts[k + 1]]`` (each
        ``4 × zone + kind``), seen by observer ``observers[k]``, blocked by a wall where ``walled[k]``;
        ``columns`` is :meth:`zone_columns`' of the zones. The counted crossing of lowest rank applies
        (a block, then the lowest MOD; the first among equals), in one compiled loop."""
        lines = observers.size
        own = np.int64(self.own_mod)
        if not self.needs_lof:
            return Verdicts(np.ones(lines, dtype=bool), np.full(lines, own), np.full(lines, -1, dtype=np.intp))
        allowed, modifier, applied = _loops.first_lowest(
            np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(codes, dtype=np.int64),
            np.ascontiguousarray(observers, dtype=np.int64),
            columns,
            self.ranks,
            np.ascontiguousarray(walled, dtype=bool).view(np.uint8),
            self.own_mod,
            _BLOCK_RANK,
            _IGNORED_RANK,
        )
        return Verdicts(allowed, modifier, applied)


# --- Rulesets that read positions: line rules ------------------------------------------------------


class SceneInputs(NamedTuple):
    """What a ruleset's :class:`LineRules` may read of the scene of a whole-scene pass, besides the lines.

    ``zones`` are the regions of the pass's zones, in the order of the crossing codes (``4 × zone +
    kind``); ``inside[token, zone]`` whether the token's footprint is in the zone (as ``SceneGeometry.
    inside``); ``x``, ``y``, ``z`` the tokens' centres (pixels; ``z`` in grid units), as
    ``SceneGeometry.center``; ``geometry`` gives the scene's ``SceneGeometry`` (built when first asked:
    only lights need it). ``cache`` lives as long as where lights reach and what walls stand stays the
    same (the engine replaces it when either changes): a ruleset keeps per-token results in it, keyed by
    the token object.
    """

    scene: Scene
    geometry: Callable[[], SceneGeometry]
    tokens: Sequence[Token]
    x: npt.NDArray[np.float64]
    y: npt.NDArray[np.float64]
    z: npt.NDArray[np.float64]
    zones: Sequence[Region]
    inside: BoolArray
    cache: dict[Any, Any]


class LineInputs(NamedTuple):
    """A batch of directed lines: actor ``src[k]`` to target ``dst[k]`` (token numbers), crossings
    ``codes[starts[k]:starts[k + 1]]`` (each ``4 × zone + kind``, kinds in the order of :data:`KINDS`),
    ``walled[k]`` whether a wall blocks the line."""

    src: IntArray
    dst: IntArray
    starts: IntArray
    codes: IntArray
    walled: BoolArray


class LineRules(Protocol):
    """A ruleset's rules compiled for one action, reaction and scene (edition, environment, grid), ruling
    many lines at once: each line's verdict — what the ruleset's ``adjudicate`` answers as ``allowed``
    and ``modifier`` on that line, under the request's default options."""

    def verdicts(self, scene: SceneInputs, lines: LineInputs) -> Verdicts: ...


#: The crossing kinds in the order of the codes' ``kind`` (``code % 4``).
KINDS = (CrossingKind.FROM, CrossingKind.INTO, CrossingKind.WITHIN, CrossingKind.THROUGH)


def zone_classes(
    zones: Sequence[Region], key: Callable[[Region], Hashable], cache: dict[Any, Any] | None = None
) -> tuple[IntArray, list[Region]]:
    """Each zone's class (zones with the same ``key`` — type and the parameters a ruleset reads — share
    one row of an effect table) and one region of each class, in class order; kept in ``cache`` (a
    :class:`SceneInputs` cache) while ``zones`` is the same object."""
    if cache is not None:
        found = cache.get(("zone-classes", key))
        if found is not None and found[0] is zones:
            return found[1]  # type: ignore[no-any-return]
        made = zone_classes(zones, key)
        cache[("zone-classes", key)] = (zones, made)
        return made
    classes: dict[Hashable, int] = {}
    first: list[Region] = []
    numbers = np.empty(len(zones), dtype=np.intp)
    for k, region in enumerate(zones):
        found = key(region)
        number = classes.get(found)
        if number is None:
            number = classes[found] = len(first)
            first.append(region)
        numbers[k] = number
    return numbers, first


def reduce_crossings(
    lines: LineInputs, zone_class: IntArray, table: npt.NDArray[np.int64], ufunc: np.ufunc, identity: int
) -> npt.NDArray[np.int64]:
    """``ufunc`` (``np.minimum``, ``np.add``, ``np.bitwise_or``) over each line's crossings of
    ``table[zone class, kind]``; ``identity`` for a line with none."""
    sizes = np.diff(lines.starts)
    out = np.full(sizes.size, identity, dtype=np.int64)
    if lines.codes.size == 0:
        return out
    values = table[zone_class[lines.codes // 4], lines.codes % 4]
    some = np.flatnonzero(sizes > 0)
    if some.size:
        out[some] = ufunc.reduceat(values, lines.starts[some])
    return out


def centre_distances(scene: SceneInputs, lines: LineInputs) -> npt.NDArray[np.float64]:
    """Each line's 3D length in grid distance units, as ``SceneGeometry.distance`` computes it (the same
    operations in the same order)."""
    per_px = scene.scene.grid.distance / scene.scene.grid.size
    dx = (scene.x[lines.dst] - scene.x[lines.src]) * per_px
    dy = (scene.y[lines.dst] - scene.y[lines.src]) * per_px
    dz = scene.z[lines.dst] - scene.z[lines.src]
    result: npt.NDArray[np.float64] = np.sqrt(dx * dx + dy * dy + dz**2)
    return result


def no_verdicts(lines: int) -> Verdicts:
    """Every line allowed at 0, no crossing applied: filled in by a ruleset's :class:`LineRules`."""
    return Verdicts(np.ones(lines, dtype=bool), np.zeros(lines, dtype=np.int64), np.full(lines, -1, dtype=np.intp))


def lights_on(scene: SceneInputs, targets: Sequence[int]) -> list[tuple[LightSource, ...]]:
    """``SceneGeometry.lights_reaching`` of each token number in ``targets``, kept in ``scene.cache`` per
    token object; the missing ones asked of the geometry at once (``lights_reaching_many``)."""
    cache, tokens = scene.cache, scene.tokens
    missing = []
    for t in targets:
        found = cache.get(("lights", tokens[t].id))
        if found is None or found[0] is not tokens[t]:
            missing.append(t)
    if missing:
        reached = scene.geometry().lights_reaching_many([tokens[t].id for t in missing])
        for t, lamps in zip(missing, reached, strict=True):
            cache[("lights", tokens[t].id)] = (tokens[t], lamps)
    return [cache[("lights", tokens[t].id)][1] for t in targets]


def lights_seen(scene: SceneInputs, asked: Sequence[tuple[int, LightSource]]) -> list[bool]:
    """``SceneGeometry.light_seen`` of each (viewer token number, lamp): whether no wall stops the viewer's
    sight of the lamp (at the viewer's height); kept in ``scene.cache`` per viewer token object, the missing
    ones asked of the geometry at once (``sight_blocked_many``)."""
    cache, tokens = scene.cache, scene.tokens
    missing = []
    for viewer, lamp in asked:
        found = cache.get(("seen", tokens[viewer].id, lamp.id))
        if found is None or found[0] is not tokens[viewer]:
            missing.append((viewer, lamp))
    if missing:
        geometry = scene.geometry()
        centres = [geometry.center(tokens[viewer].id) for viewer, _ in missing]
        lamps = [Point3(lamp.x, lamp.y, centre.z) for (_, lamp), centre in zip(missing, centres, strict=True)]
        blocked = geometry.sight_blocked_many(centres, lamps)
        for (viewer, lamp), stopped in zip(missing, blocked, strict=True):
            cache[("seen", tokens[viewer].id, lamp.id)] = (tokens[viewer], not stopped)
    return [bool(cache[("seen", tokens[viewer].id, lamp.id)][1]) for viewer, lamp in asked]
