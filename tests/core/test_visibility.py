"""SceneVisibility: the whole-scene engine's API, its incremental updates and what they recompute."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from bridge.core.rules import RULESETS, Ruling
from bridge.core.scene import Region, Scene, Token, Wall
from bridge.core.sight import CrossingKind
from bridge.core.visibility import Pair, SceneVisibility, VerdictRun
from bridge.core.world import SceneState

from .shapes import circle, ellipse, rect, region, token, wall
from .test_geometry import rotated_tangent
from .test_visibility_properties import plain_rulings


def _state(
    regions: list[Region] = (),  # type: ignore[assignment]
    tokens: list[Token] = (),  # type: ignore[assignment]
    walls: list[Wall] = (),  # type: ignore[assignment]
    *,
    version: int = 0,
    **rules: Any,
) -> SceneState:
    scene = Scene.model_validate(
        {
            "id": "s-vis",
            "rules": {"ruleset": "infinity-n4", **rules},
            "regions": list(regions),
            "tokens": list(tokens),
            "walls": list(walls),
        }
    )
    return SceneState(scene, RULESETS["infinity-n4"], version=version)


ROW = [token("a", 0, 400), token("b", 1000, 400), token("c", 0, 1400)]
POOR = region("poor", rect(450, 300, 100, 300), zone="poor")


class Recorder(SceneVisibility):
    """Remembers which unordered pairs each computation covered."""

    computed: list[set[tuple[str, str]]]

    def _compute(self, pairs: Any, keys: Any = None) -> Any:
        if not hasattr(self, "computed"):
            self.computed = []
        ids = [t.id for t in self._tokens.tokens]
        self.computed.append({tuple(sorted((ids[i], ids[j]))) for i, j in pairs})  # type: ignore[misc]
        return super()._compute(pairs, keys)


def test_rulings_cover_every_ordered_pair_once() -> None:
    """All ordered pairs of distinct tokens are ruled, and each equals the plain path's ruling."""
    state = _state([POOR], ROW)
    engine = SceneVisibility(state, action="bs-attack")
    assert set(engine.rulings()) == {(x, y) for x in "abc" for y in "abc" if x != y}
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)
    ruling = engine.rulings()[("a", "b")]
    assert [(c.region, c.kind) for c in ruling.crossings] == [("poor", CrossingKind.THROUGH)]
    assert ruling.modifier == -6


def test_watched_tokens_limit_the_pairs() -> None:
    """With ``tokens``, only the pairs in which one of them takes part are ruled."""
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack", tokens=["c"])
    assert set(engine.rulings()) == {("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}


def test_unknown_action_is_refused() -> None:
    """An engine for an action its scene's ruleset does not know is refused with an error that says so."""
    with pytest.raises(ValueError, match="unknown action"):
        SceneVisibility(_state([], ROW), action="attack")


def test_rulings_view_is_read_only() -> None:
    """The engine's rulings mapping cannot be written to: callers read rulings, only the engine changes them."""
    engine = SceneVisibility(_state([], ROW), action="bs-attack")
    with pytest.raises(TypeError):
        engine.rulings()[("a", "b")] = engine.rulings()[("a", "c")]  # type: ignore[index]


def test_a_move_recomputes_only_the_pairs_of_the_moved_token() -> None:
    """Moving ``c`` recomputes its two pairs only (their sight lines moved, so their rulings did)."""
    engine = Recorder(_state([POOR], ROW), action="bs-attack")
    moved = [ROW[0], ROW[1], token("c", 100, 1400)]
    changes = engine.update(_state([POOR], moved, version=1))
    assert engine.computed[-1] == {("a", "c"), ("b", "c")}
    assert set(changes) == {("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}
    assert all(r is not None and r.line is not None and 150 in (r.line.start.x, r.line.end.x) for r in changes.values())


def test_a_moves_changed_pairs_come_in_bulk_as_their_rulings_say() -> None:
    """After a move, ``verdict_runs`` gives an Infinity engine's changed pairs as one run, as their plain rulings say.

    After a move, ``verdict_runs`` gives the changed pairs of an Infinity engine as one run of columns (no ruling
    built), in ``update()``'s order; each line is its plain ruling's verdict, crossings (a foreign zone's left out) and
    line.
    """
    woods = region("woods", rect(0, 800, 300, 100), zone="woods")  # Traveller's: Infinity leaves it out
    low = region("low", rect(500, 800, 200, 200), zone="low")  # on the b-c line
    engine = SceneVisibility(_state([POOR, woods, low], ROW), action="bs-attack")
    moved = _state([POOR, woods, low], [ROW[0], ROW[1], token("c", 100, 1400)], version=1)
    changes = engine.update(moved)
    runs = list(engine.verdict_runs(changes))
    assert len(runs) == 1 and isinstance(runs[0], VerdictRun)
    found = list(runs[0].items())
    assert [pair for pair, _ in found] == list(changes)
    plain = plain_rulings(moved, "bs-attack", False)
    for pair, line in found:
        ruling = plain[pair]
        assert ruling.line is not None
        assert (line.allowed, line.modifier) == (ruling.allowed, ruling.modifier)
        assert line.crossings == list(ruling.crossings)
        assert (line.start, line.end) == (ruling.line.start, ruling.line.end)
    assert all(bool(line.crossings) == ("b" in pair) for pair, line in found)  # a-c crosses the woods only
    batches = {entry[0] for entry in changes._entries.values() if entry is not None}
    assert len(batches) == 1 and not any(batch.made for batch in batches)


def test_a_moves_changes_are_written_by_pair_only_when_read_by_pair() -> None:
    """A move's changes are counted and read in bulk with no dictionary of them written until they are read by pair.

    Read by pair they are the moved token's pairs, in ``update()``'s order, each its plain ruling; another change then
    keeps them.
    """
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    moved = _state([POOR], [ROW[0], ROW[1], token("c", 100, 1400)], version=1)
    changes = engine.update(moved)
    assert len(changes) == 4 and changes and not changes._by_pair
    (run,) = engine.verdict_runs(changes)
    assert isinstance(run, VerdictRun) and not changes._by_pair
    order = [("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]
    assert [pair for pair, _ in run.items()] == order
    assert list(changes) == order and len(changes._by_pair) == 4
    assert ("a", "c") in changes and ("a", "b") not in changes
    plain = plain_rulings(moved, "bs-attack", False)
    assert dict(changes) == {pair: plain[pair] for pair in order}
    later = engine.update(_state([POOR], [ROW[0], ROW[1], token("c", 100, 1500)], version=2))
    later.removed(("a", "c"))  # (as update() writes a pair gone)
    assert list(later) == order and later[("a", "c")] is None and len(later) == 4


def test_an_unchanged_answer_is_not_returned() -> None:
    """Changing a trait nobody reads for this action, or a wall no line touches, returns nothing."""
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    assert engine.update(_state([POOR], ROW, [wall("w", 5000, 0, 5000, 100)], version=1)) == {}
    assert engine.update(_state([POOR], [*ROW[:2], token("c", 0, 1400, name="C")], version=2)) == {}


def test_a_move_into_a_zone_returns_the_changed_pairs() -> None:
    """``c`` steps into the Poor zone: its pairs change (from/into), the a–b line does not."""
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    moved = [ROW[0], ROW[1], token("c", 450, 1000)]
    changes = engine.update(_state([POOR], moved, version=1))
    assert set(changes) <= {("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}
    assert changes and all(r is not None for r in changes.values())
    assert dict(engine.rulings()) == plain_rulings(_state([POOR], moved), "bs-attack", False)


def test_a_region_change_recomputes_only_lines_that_touch_its_bounds() -> None:
    """Widening the zone touches the a–b line only; the pairs of c, far away, are not recomputed."""
    engine = Recorder(_state([POOR], ROW), action="bs-attack")
    wider = region("poor", rect(400, 300, 200, 300), zone="zero")
    changes = engine.update(_state([wider], ROW, version=1))
    assert engine.computed[-1] == {("a", "b")}
    assert set(changes) == {("a", "b"), ("b", "a")}
    assert changes[("a", "b")] is not None and changes[("a", "b")].allowed is False


def test_a_wall_added_and_removed() -> None:
    """A wall across a–b blocks both directions; removing it restores the old rulings."""
    engine = SceneVisibility(_state([], ROW), action="bs-attack")
    first = dict(engine.rulings())
    blocked = engine.update(_state([], ROW, [wall("w", 700, 0, 700, 800)], version=1))
    assert set(blocked) == {("a", "b"), ("b", "a")}
    assert all(r is not None and not r.allowed for r in blocked.values())
    restored = engine.update(_state([], ROW, version=2))
    assert restored == {pair: first[pair] for pair in blocked}


def test_removed_and_added_tokens() -> None:
    """A removed token's pairs come back as ``None``; an added token's pairs are new."""
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    changes = engine.update(_state([POOR], [ROW[0], ROW[1], token("d", 2000, 400)], version=1))
    assert {pair for pair, r in changes.items() if r is None} == {("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}
    assert {pair for pair, r in changes.items() if r is not None} == {("a", "d"), ("d", "a"), ("b", "d"), ("d", "b")}


def test_rules_change_recomputes_everything() -> None:
    """A new locale recomputes every pair; only those whose texts changed come back."""
    engine = Recorder(_state([POOR], ROW), action="bs-attack")
    changes = engine.update(_state([POOR], ROW, version=1, locale="es"))
    assert engine.computed[-1] == {("a", "b"), ("a", "c"), ("b", "c")}
    assert set(changes) == {("a", "b"), ("b", "a")}


def test_combat_jump_reads_the_zones_around_the_actor() -> None:
    """Placement rulings come from the token × zone matrix, as ``zones_containing`` would give them."""
    state = _state([region("z", rect(0, 300, 300, 300), zone="zero")], ROW)
    engine = SceneVisibility(state, action="combat-jump")
    assert dict(engine.rulings()) == plain_rulings(state, "combat-jump", False)
    assert not engine.rulings()[("a", "b")].allowed
    assert engine.rulings()[("b", "a")].allowed


def test_best_lines_use_the_exact_path() -> None:
    """``rules.lines == "best"`` scenes agree with the plain path too, memo included."""
    state = _state([POOR], [*ROW, token("d", 1000, 1400)], lines="best")
    engine = SceneVisibility(state, action="bs-attack")
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


def test_memo_gives_each_pair_its_own_line() -> None:
    """Pairs with the same signature share one ruleset call but keep their own sight line."""
    tokens = [token(f"t{k}", 200 * k, 0) for k in range(4)]
    engine = SceneVisibility(_state([], tokens), action="bs-attack")
    for (a, b), ruling in engine.rulings().items():
        assert ruling.line is not None
        assert (ruling.line.start.x, ruling.line.end.x) == (200 * int(a[1:]) + 50, 200 * int(b[1:]) + 50)


def test_a_move_reuses_the_compiled_zones_walls_and_other_tokens() -> None:
    """A one-token move recompiles that token only: zone tree, walls and the other footprints stay."""
    walls = [wall("w", 5000, 0, 5000, 100)]
    engine = SceneVisibility(_state([POOR], ROW, walls), action="bs-attack")
    tree, wall_index, probes = engine._zone_tree, engine._walls, list(engine._tokens.probes)
    moved = [ROW[0], ROW[1], token("c", 450, 1000)]
    engine.update(_state([POOR], moved, walls, version=1))
    assert engine._zone_tree is tree and engine._walls is wall_index
    assert engine._tokens.probes[0] is probes[0] and engine._tokens.probes[1] is probes[1]
    assert engine._tokens.probes[2] is not probes[2]
    assert dict(engine.rulings()) == plain_rulings(_state([POOR], moved, walls), "bs-attack", False)


def test_a_token_replaced_by_an_equal_copy_changes_nothing_and_a_changed_one_its_pairs() -> None:
    """``update()`` reports a token's pairs exactly when the token changed, never for an equal copy of it.

    This holds whether its cached shape was made from the old token object (compared once, while compiling) or from an
    older equal copy of it.
    """
    a, b, c = ROW
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    steps: list[tuple[list[Token], set[tuple[str, str]]]] = [
        ([a, b, c.model_copy()], set()),  # equal copy; the cache keeps c's shape (made from c itself)
        ([a, b, c.model_copy()], set()),  # equal copy of a copy: cached from c, compared with the old copy
        ([a, b, token("c", 100, 1400)], {("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")}),  # moved: new shape
        ([a, b, token("c", 100, 1400)], set()),  # equal copy; cached from the old token itself
        (
            [a, b.model_copy(update={"x": 1100.0}), token("c", 100, 1400)],
            {("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")},
        ),
    ]
    for version, (tokens, expected) in enumerate(steps, start=1):
        state = _state([POOR], tokens, version=version)
        assert set(engine.update(state)) == expected, version
        assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


def _named(name: str, x: float = 450) -> Region:
    return region("z", rect(x, 300, 100, 300), zone="poor").model_copy(update={"name": name})


def test_the_not_stacking_text_follows_a_region_name() -> None:
    """A region renamed, or removed and added again under another name, is named anew in the rulings' reasons.

    Rulings name the applied zone; the texts built for the old name are not reused.
    """
    low = region("low", rect(650, 300, 100, 300), zone="low")
    engine = SceneVisibility(_state([_named("Smoke stack"), low], ROW), action="bs-attack")
    assert any('"Smoke stack"' in (m.reason or "") for m in engine.rulings()[("a", "b")].modifiers)
    for version, regions in enumerate(
        ([_named("Fog bank"), low], [low], [_named("Ash cloud"), low], [_named("", x=460), low]), start=1
    ):
        state = _state(regions, ROW, version=version)
        engine.update(state)
        assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)
    reasons = [m.reason or "" for m in engine.rulings()[("a", "b")].modifiers]
    assert any("Poor Visibility Zone z" in reason for reason in reasons), reasons


def test_a_move_keeps_the_composers_regions_by_id() -> None:
    """A move keeps the composer's regions by id; another list of the same regions keeps the composer but not them.

    A move hands over the scene's very same list of regions; the composer's "not stacking" reasons read its regions by
    id. Another list of the same regions keeps the composer but not that dictionary.
    """
    low = region("low", rect(650, 300, 100, 300), zone="low")
    start = _state([_named("Smoke stack"), low], ROW)
    engine = SceneVisibility(start, action="bs-attack")
    assert any('"Smoke stack"' in (m.reason or "") for m in engine.rulings()[("a", "b")].modifiers)
    composer = engine._composer
    assert composer is not None and composer._regions is not None
    regions = composer._regions
    moved = [ROW[0], ROW[1].model_copy(update={"y": 420}), ROW[2]]
    state = SceneState(start.scene.model_copy(update={"tokens": moved}), start.ruleset, version=1)
    assert state.scene.regions is start.scene.regions
    engine.update(state)
    assert any('"Smoke stack"' in (m.reason or "") for m in engine.rulings()[("a", "b")].modifiers)
    assert engine._composer is composer and composer._regions is regions
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)
    copied = SceneState(
        state.scene.model_copy(update={"regions": list(state.scene.regions), "tokens": ROW}), start.ruleset, version=2
    )
    engine.update(copied)
    assert engine._composer is composer and composer._regions is None
    assert dict(engine.rulings()) == plain_rulings(copied, "bs-attack", False)


def test_the_composers_direct_ruling_equals_the_constructed_one() -> None:
    """Infinity's fast ``_ruling`` builds a ``Ruling`` equal to the one its constructor makes, with no extra fields."""
    from bridge.core.rules import Ruling
    from bridge.core.rules.infinity import _ruling
    from bridge.core.sight import Point3, SightLine

    line = SightLine(Point3(0.0, 1.0, 2.0), Point3(3.0, 4.0, 5.0))
    for allowed, modifier in ((True, -3), (False, None)):
        made = _ruling(allowed, modifier, (), [], ("n",), ("c",), line)
        built = Ruling(
            allowed=allowed, modifier=modifier, crossings=(), modifiers=(), notes=("n",), citations=("c",), line=line
        )
        assert type(made) is Ruling and made == built and made.extra == {}


def test_a_zone_changed_in_place_is_not_ruled_from_old_rulings() -> None:
    """A zone changed in place (same id and place, Low instead of Poor) gives −3, not the −6 seen before.

    Rulings reused between lines of the same crossings are forgotten when a zone changes in place.
    """
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    assert engine.rulings()[("a", "b")].modifier == -6
    low = region("poor", rect(450, 300, 100, 300), zone="low")
    state = _state([low], ROW, version=1)
    engine.update(state)
    assert engine.rulings()[("a", "b")].modifier == -3
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


def test_a_foreign_trait_keeps_each_tokens_own_name_in_its_note() -> None:
    """Two troopers with the same trait of another ruleset, through one zone, each get a note naming their own trooper.

    Rulings that name a token are not shared between lines.
    """
    tokens = [
        token("a", 0, 400, name="Alpha", traits=["night-vision-2"]),
        token("b", 0, 800, name="Bravo", traits=["night-vision-2"]),
        token("t", 1000, 600),
    ]
    state = _state([POOR], tokens)
    engine = SceneVisibility(state, action="bs-attack")
    assert any("Alpha" in note for note in engine.rulings()[("a", "t")].notes)
    assert any("Bravo" in note for note in engine.rulings()[("b", "t")].notes)
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


def test_a_ruling_moved_to_another_line_equals_its_replacement() -> None:
    """``with_line`` (a shared ruling given another pair's line) equals ``dataclasses.replace``."""
    import dataclasses

    from bridge.core.rules.infinity import with_line
    from bridge.core.sight import Point3, SightLine

    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    ruling = engine.rulings()[("a", "b")]
    line = SightLine(Point3(1.0, 2.0, 3.0), Point3(4.0, 5.0, 6.0))
    assert with_line(ruling, line) == dataclasses.replace(ruling, line=line)
    assert with_line(ruling, line).line is line


def test_shared_rulings_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo of rulings shared between lines never holds more than its bound, and the rulings stay right.

    Here the bound is 8: the oldest go first.
    """
    import bridge.core.visibility as visibility

    monkeypatch.setattr(visibility, "_line_memo_limit", lambda tokens: 8)
    strips = [region(f"z{k}", rect(100 * k + 60, 0, 30, 1400), zone=("low", "poor")[k % 2]) for k in range(9)]
    tokens = [token("t0", 0, 600), token("t1", 950, 200), token("t2", 950, 1000)]
    engine = SceneVisibility(_state(strips, tokens), action="bs-attack")
    for version in range(1, 10):  # t0 steps across the strips: its lines cross ever fewer of them
        tokens[0] = token("t0", 100 * version, 600)
        state = _state(strips, tokens, version=version)
        engine.update(state)
        assert len(engine._line_memo) <= 8
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


ZERO = region("zero", rect(450, 300, 100, 300), zone="zero")
FOUR = [*ROW, token("d", 1000, 1400, traits=["multispectral-visor-2"])]


def test_the_other_reaction_is_ruled_from_the_same_passes() -> None:
    """``rulings(reaction)`` of the other flag equals the plain path's and its own engine's, before and after a move.

    Here the flag changes a ruling (an ARO through a Zero zone is allowed at -6).
    """
    state = _state([ZERO], FOUR)
    engine = SceneVisibility(state, action="bs-attack", reaction=False)
    aro = plain_rulings(state, "bs-attack", True)
    assert aro[("a", "b")] != plain_rulings(state, "bs-attack", False)[("a", "b")]
    assert (
        dict(engine.rulings(True)) == aro == dict(SceneVisibility(state, action="bs-attack", reaction=True).rulings())
    )
    assert engine.rulings(False) is engine.rulings()
    moved = _state([ZERO], [*FOUR[:2], token("c", 450, 1000), FOUR[3]], version=1)
    engine.update(moved)
    assert dict(engine.rulings(True)) == plain_rulings(moved, "bs-attack", True)
    assert dict(engine.rulings()) == plain_rulings(moved, "bs-attack", False)


def test_ruling_of_is_the_rulings_get_of_either_flag() -> None:
    """``ruling_of(pair, reaction)`` is ``rulings(reaction).get(pair)`` under both flags, ``None`` for a pair not held.

    ``ruling_of`` is ``adjudicate``'s look-up; it gives the same ruling objects, for stale pairs after an ``advance``
    too.
    """
    state = _state([ZERO], FOUR)
    engine = SceneVisibility(state, action="bs-attack", reaction=False, lazy=True)
    twin = SceneVisibility(state, action="bs-attack", reaction=False, lazy=True)
    aro, plain = plain_rulings(state, "bs-attack", True), plain_rulings(state, "bs-attack", False)
    assert aro[("a", "b")] != plain[("a", "b")]
    for pair in plain:
        assert engine.ruling_of(pair, True) == twin.rulings(True).get(pair) == aro[pair]
        assert engine.ruling_of(pair, False) == engine.ruling_of(pair) == plain[pair]
        assert engine.ruling_of(pair, True) is engine.rulings(True)[pair]
        assert engine.ruling_of(pair) is engine.rulings()[pair]
    assert engine.ruling_of(("a", "a")) is None and engine.ruling_of(("a", "nobody"), True) is None
    moved = _state([ZERO], [*FOUR[:2], token("c", 450, 1000), FOUR[3]], version=1)
    engine.advance(moved)
    assert engine.ruling_of(("c", "a"), True) == plain_rulings(moved, "bs-attack", True)[("c", "a")]
    assert engine.ruling_of(("a", "c")) == plain_rulings(moved, "bs-attack", False)[("a", "c")]


def test_advance_rules_a_stale_pair_when_it_is_read() -> None:
    """After ``advance`` nothing is computed until a pair is read; every read equals the plain path's, under both flags.

    The first read rules that pair alone, the next one every stale pair of its tokens in one pass (after the next
    change, the first read does, since several were asked about).
    """
    engine = Recorder(_state([ZERO], FOUR), action="bs-attack")
    moved = _state([ZERO], [*FOUR[:3], token("d", 500, 1000, traits=["multispectral-visor-2"])], version=1)
    passes = len(engine.computed)
    engine.advance(moved)
    assert len(engine.computed) == passes
    plain, aro = plain_rulings(moved, "bs-attack", False), plain_rulings(moved, "bs-attack", True)
    assert engine.rulings()[("a", "d")] == plain[("a", "d")]
    assert engine.computed[passes:] == [{("a", "d")}]
    assert engine.rulings(True)[("d", "b")] == aro[("d", "b")]
    assert engine.computed[passes:] == [{("a", "d")}, {("b", "d"), ("c", "d")}]
    assert dict(engine.rulings()) == plain and dict(engine.rulings(True)) == aro
    assert len(engine.computed) == passes + 2
    # More than one pair was asked about after that change: after the next, the first read rules them all.
    again = _state([ZERO], [*FOUR[:3], token("d", 600, 1000, traits=["multispectral-visor-2"])], version=2)
    engine.advance(again)
    assert engine.rulings()[("c", "d")] == plain_rulings(again, "bs-attack", False)[("c", "d")]
    assert engine.computed[passes + 2 :] == [{("a", "d"), ("b", "d"), ("c", "d")}]
    with pytest.raises(RuntimeError, match="after advance"):
        engine.update(moved)


def test_a_lazy_engine_rules_one_pair_then_the_whole_scene() -> None:
    """Built ``lazy``, an engine rules nothing until read, then that pair alone, then every stale pair in one pass.

    The pass is timed in ``pass_seconds``; all rulings equal the plain path's.
    """
    state = _state([ZERO], FOUR)
    engine = Recorder(state, action="bs-attack", lazy=True)
    assert engine.computed == [set()] and engine.pass_seconds == 0.0
    plain = plain_rulings(state, "bs-attack", False)
    assert engine.rulings()[("b", "d")] == plain[("b", "d")]
    assert engine.computed[1:] == [{("b", "d")}]
    assert engine.rulings()[("a", "c")] == plain[("a", "c")]
    assert len(engine.computed) == 3 and len(engine.computed[2]) == 5 and engine.pass_seconds > 0
    assert dict(engine.rulings()) == plain and len(engine.computed) == 3


def test_an_engine_nobody_holds_is_freed_at_once() -> None:
    """An engine dropped (a watch ended) is freed at once by reference counting, with the pieces of its rulings.

    No reference cycle ties an engine, or the pieces its rulings are built from, to themselves, so nothing is left for a
    full collection — a long-running bridge's memory must not grow with every watch opened and closed.
    """
    import gc
    import weakref

    from bridge.core.rules.infinity import _Piece

    def pieces() -> int:
        return sum(1 for o in gc.get_objects() if type(o) is _Piece)

    # Two Poor zones on one line: each is the one applied from its own side, the other stacked under it.
    other = region("poor-2", rect(650, 300, 100, 300), zone="poor")
    gc.collect()
    before = pieces()
    enabled = gc.isenabled()
    gc.disable()
    try:
        engine = SceneVisibility(_state([POOR, other], ROW, [wall("w", 5000, 0, 5000, 100)]), action="bs-attack")
        engine.update(_state([POOR, other], [ROW[0], ROW[1], token("c", 450, 1000)], version=1))
        assert engine.rulings()[("a", "b")].modifier == -6 and pieces() > before
        held = weakref.ref(engine)
        del engine
        assert held() is None
        assert pieces() == before
        # Nor one moved lazily and read under its other reaction flag.
        engine = SceneVisibility(_state([POOR, other], ROW), action="bs-attack")
        engine.advance(_state([POOR, other], [ROW[0], ROW[1], token("c", 450, 1000)], version=1))
        assert engine.rulings(True)[("c", "a")] is not None and engine.rulings()[("a", "c")] is not None
        held = weakref.ref(engine)
        del engine
        assert held() is None
        assert pieces() == before
    finally:
        if enabled:
            gc.enable()


def _traveller(tokens: list[Token], lights: list[dict[str, Any]], walls: list[Wall] = ()) -> SceneState:  # type: ignore[assignment]
    scene = Scene.model_validate(
        {
            "id": "s-trav",
            "grid": {"size": 1, "distance": 1, "units": "m"},
            "rules": {"ruleset": "traveller"},
            "environment": {"light": 3},
            "tokens": list(tokens),
            "lights": lights,
            "walls": list(walls),
        }
    )
    return SceneState(scene, RULESETS["traveller"])


def test_rulings_that_read_distances_and_lights_are_not_shared_between_lines() -> None:
    """Seed 000: lines alike but for range or a light are ruled apart, as the plain path does, and follow moved lights.

    Traveller's range (seed 000: 'Each halving of short range') and a light on the target set apart lines with the same
    crossings and walls: the engine rules each pair as the plain path does, and a moved light or wall changes the pairs
    it lights, wherever they stand.
    """
    goggles = ["la-goggles"]
    row = [token("obs", 0, 0, traits=goggles), token("near", 50, 0), token("far", 300, 0), token("lit", 0, 200)]
    state = _traveller(row, [{"id": "lamp", "x": 0, "y": 204, "radius": 5}])
    engine = SceneVisibility(state, action="observation")
    assert dict(engine.rulings()) == plain_rulings(state, "observation", False)
    assert engine.rulings()[("obs", "near")].modifier != engine.rulings()[("obs", "far")].modifier
    moved = _traveller(row, [{"id": "lamp", "x": 50, "y": 4, "radius": 5}])
    changed = engine.update(moved)
    assert ("obs", "lit") in changed and ("obs", "near") in changed
    assert dict(engine.rulings()) == plain_rulings(moved, "observation", False)
    walled = _traveller(
        row, [{"id": "lamp", "x": 50, "y": 4, "radius": 5}], [wall("w", 40, 2, 70, 2, sight=0, light=20)]
    )
    assert ("obs", "near") in engine.update(walled)
    assert dict(engine.rulings()) == plain_rulings(walled, "observation", False)


def test_curves_are_judged_exactly_by_the_engine_as_by_the_plain_path() -> None:
    """Contract: the engine judges corners on curves, tangents and a curved hole exactly, as the plain path does.

    Contract ('Touching counts … exactly, circles and ellipses included (a tangent or a corner on the curve counts)'):
    footprints with a corner on a circle, lines tangent to a circle and to a rotated ellipse between the vertices they
    are drawn with, a circular hole — the engine's rulings equal the plain path's, after a token moved onto a curve too.
    """
    ring = region("ring", rect(2000, 0, 1000, 1000), circle(2500, 500, 250, hole=True), zone="poor")
    smoke = region("smoke", circle(1000, 1000, 250), zone="low")
    tilted = region("tilted", ellipse(1000, 2500, 300, 100, rotation=30), zone="low")
    tokens = [
        token("corner", 1150, 1200),  # top-left corner on the circle, at (150, 200) from its centre
        token("t1", 950, 1350, width=0, height=0),  # the ends of a line tangent to it at (150, 200)
        token("t2", 1350, 1050, width=0, height=0),
        token("rim", 2550, 600),  # in the hole but for its bottom-right corner, on the rim at (150, 200)
        token("far", 0, 2000),
        token("hole", 2450, 450, width=0.5, height=0.5),  # in the hole, touching nothing
    ]
    start, end = rotated_tangent(1000, 2500, 300, 100, 30, 1.1)
    tokens += [token("e1", start.x, start.y, width=0, height=0), token("e2", end.x, end.y, width=0, height=0)]
    state = _state([smoke, ring, tilted], tokens)
    engine = SceneVisibility(state, action="bs-attack")
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)

    def kinds(actor: str, target: str) -> list[tuple[str, CrossingKind]]:
        return [(c.region, c.kind) for c in engine.rulings()[(actor, target)].crossings]

    assert kinds("t1", "t2") == [("smoke", CrossingKind.THROUGH)]
    assert kinds("e1", "e2") == [("tilted", CrossingKind.THROUGH)]
    assert kinds("corner", "far")[0] == ("smoke", CrossingKind.FROM)
    assert kinds("rim", "hole") == [("ring", CrossingKind.FROM)]
    # A token moved onto a curve is judged exactly as well (the incremental path).
    moved = _state([smoke, ring, tilted], [*tokens[:-1], token("e2", 850, 800)])
    engine.update(moved)
    assert dict(engine.rulings()) == plain_rulings(moved, "bs-attack", False)
    assert kinds("e2", "far")[0] == ("smoke", CrossingKind.FROM)  # its corner (850, 800) is on the circle


def test_both_directions_of_a_line_share_one_geos_answer_and_keep_their_own_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both directions of a line tangent to a round hole share one GEOS answer; each enters the zones in its own order.

    A line tangent to a zone's round hole asks GEOS once about the zone's square for both directions (when the square's
    edges do not settle it: ``polygon_rows`` made to settle nothing here), and each direction enters the zone where it
    does: one way the ring comes first, the other way the smoke. With the edges settling it, GEOS is not asked at all,
    and the rulings are the same.
    """
    from bridge.core import visibility

    asked: list[int] = []
    both, settle = visibility.polygon_parts_both, visibility.polygon_rows

    def counted(polygons: Any, *ends: Any) -> Any:
        asked.append(len(polygons))
        return both(polygons, *ends)

    def unsettled(*args: Any) -> Any:
        entry, bound, settled = settle(*args)
        return entry, bound, np.zeros_like(settled)

    monkeypatch.setattr(visibility, "polygon_parts_both", counted)
    ring = region("ring", rect(2000, 0, 1000, 1000), circle(2500, 500, 250, hole=True), zone="poor")
    smoke = region("smoke", rect(3100, 200, 100, 100), zone="low")
    # Along y = 250, tangent to the hole's top: into the ring 100 px from a, into the smoke 300 px from b.
    tokens = [token("a", 1900, 250, width=0, height=0), token("b", 3500, 250, width=0, height=0)]
    state = _state([ring, smoke], tokens)
    plain = plain_rulings(state, "bs-attack", False)
    for edges in (False, True):
        asked.clear()
        monkeypatch.setattr(visibility, "polygon_rows", settle if edges else unsettled)
        engine = SceneVisibility(state, action="bs-attack")
        assert asked == ([] if edges else [1])  # one (segment, polygon) row for the two directions
        assert dict(engine.rulings()) == plain
        assert [c.region for c in engine.rulings()[("a", "b")].crossings] == ["ring", "smoke"]
        assert [c.region for c in engine.rulings()[("b", "a")].crossings] == ["smoke", "ring"]


def test_several_blocking_walls_read_as_adjudicate_lists_them() -> None:
    """A line blocked by two walls lists each as 'Wall', in the engine's composed ruling as in the plain path's.

    Walls have no names; the two paths once differed ('Wall' against 'Wall 1', 'Wall 2').
    """
    state = _state([POOR], ROW, [wall("w1", 300, 0, 300, 900), wall("w2", 700, 0, 700, 900)])
    engine = SceneVisibility(state, action="bs-attack")
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)
    labels = [e.label for e in engine.rulings()[("a", "b")].modifiers if e.source == "wall"]
    assert labels == ["Wall", "Wall"]


# Verdicts: the effect table's reduction over each line's crossings.


@pytest.mark.parametrize(
    ("zones", "walls", "traits", "verdict"),
    [
        ((), (), [], (True, 0)),
        (("low",), (), [], (True, -3)),
        (("low", "poor"), (), [], (True, -6)),  # the most restrictive MOD, not the first nor the sum
        (("poor", "low"), (), [], (True, -6)),
        (("low", "zero"), (), [], (False, None)),  # a block beats any MOD
        (("low",), ("w",), [], (False, None)),  # a wall blocks whatever the zones
        (("poor",), (), ["multispectral-visor-2"], (True, 0)),  # the observer's traits read from the table
    ],
)
def test_a_lines_verdict_is_the_most_restrictive_effect_of_its_crossings(
    zones: tuple[str, ...], walls: tuple[str, ...], traits: list[str], verdict: tuple[bool, int | None]
) -> None:
    """The verdict read from the effect table is the plain ruling's: the lowest MOD applies, a block or wall stops it.

    The engine reduces it from its effect table before any ruling is built; it equals the plain ruling's allowed and
    modifier.
    """
    shapes = [rect(100 + 100 * k, 0, 50, 300) for k in range(len(zones))]
    regions = [region(f"z{k}", shape, zone=zone) for k, (zone, shape) in enumerate(zip(zones, shapes, strict=True))]
    tokens = [token("a", 0, 100, traits=traits), token("b", 600, 100)]
    state = _state(regions, tokens, [wall(w, 550, 0, 550, 300) for w in walls])
    engine = SceneVisibility(state, action="bs-attack")
    assert engine.verdict("a", "b") == verdict
    ruling = plain_rulings(state, "bs-attack", False)[("a", "b")]
    assert (ruling.allowed, ruling.modifier) == verdict


def test_the_other_reaction_reads_only_passes_made_since_the_last_light_change() -> None:
    """After a light moves, rulings under the other flag read only passes made under the engine's current ruler.

    A moved light gives the engine a new ruler and its other flag a fresh memo; that is safe because change sets (read
    late, after later update()s) answer under the engine's flag only, from their own passes, and rulings(other flag)
    reach only passes made under the current ruler — an update() or advance() that kept older passes there would let
    them pick up the new scene's rulings.
    """
    row = [token("obs", 0, 0, traits=["la-goggles"]), token("near", 50, 0), token("far", 300, 0), token("lit", 0, 200)]
    lamp = {"id": "lamp", "x": 0, "y": 204, "radius": 5}
    engine = SceneVisibility(_traveller(row, [lamp]), action="observation")
    advanced = SceneVisibility(_traveller(row, [lamp]), action="observation", lazy=True)
    assert engine.rulings(True)[("obs", "lit")] == advanced.rulings(True)[("obs", "lit")]
    held: list[tuple[Mapping[Pair, Ruling | None], dict[Pair, Ruling]]] = []
    for version, (x, y) in enumerate([(50, 4), (300, 4), (0, 204)], start=1):
        # A token moves (the ruler stays), then the light does (a new ruler, the other flag's memo emptied).
        row = [*row[:2], token("far", 300 + version, 0), row[3]]
        for state in (_traveller(row, [lamp]), _traveller(row, [lamp := {**lamp, "x": x, "y": y}])):
            held.append((engine.update(state), plain_rulings(state, "observation", False)))
            advanced.advance(state)
            other = plain_rulings(state, "observation", True)
            for each in (engine, advanced):
                assert each.rulings(True)[("obs", "lit")] == other[("obs", "lit")]
                assert {each._rulings.ref(pair)[0].frame.ruler for pair in each._rulings} == {each._ruler}
                assert dict(each.rulings(True)) == other
        assert other == dict(SceneVisibility(state, action="observation", reaction=True).rulings())
    assert sum(("obs", "lit") in changes for changes, _ in held) == 2  # the lamp left it, then came back
    for changes, plain in held:
        assert {pair: changes[pair] for pair in changes} == {pair: plain[pair] for pair in changes}


def test_a_moved_tokens_rows_of_the_token_zone_matrices_equal_the_matrices_made_anew() -> None:
    """After each one-token move, the moved token's rows made alone leave the token × zone matrices as if made anew.

    The rows are made by ``_inside_row``; the moves cover footprints round and square, zones of every shape, holes,
    elevations.
    """
    import random

    from bench.visibility_bench import make_scene, move_token, state_of

    for seed in (1, 2):
        scene = make_scene(12, 40, seed=seed)
        engine = SceneVisibility(state_of(scene), action="bs-attack")
        rng = random.Random(seed)
        held = 0
        for i in range(60):
            scene = move_token(scene, rng.choice(scene.tokens).id, seed=i)
            engine.update(state_of(scene, i + 1))
            inside, centre_in = engine._inside, engine._centre_in
            engine._compile_inside(None, set())
            assert np.array_equal(inside, engine._inside) and np.array_equal(centre_in, engine._centre_in)
            held += int(inside.sum()) + int(centre_in.sum())
        assert held  # (the moves met zones)


def _cellar(penalty: int, version: int) -> SceneState:
    scene = Scene.model_validate(
        {
            "id": "s-cellar",
            "rules": {"ruleset": "gurps-4e"},
            "tokens": [token("a", 0, 0), token("b", 500, 0)],
            "regions": [
                {
                    "id": "cellar",
                    "name": "Cellar",
                    "shapes": [rect(400, -100, 300, 300)],
                    "zone": {"type": "darkness", "penalty": penalty},
                }
            ],
        }
    )
    return SceneState(scene, RULESETS["gurps-4e"], version=version)


def test_a_gurps_darkness_zone_turned_to_total_darkness_changes_the_pair_that_looks_into_it() -> None:
    """GURPS (003): a darkness zone turned to total darkness makes ``update`` report the pair that looks into it.

    GURPS (003), an attacker in total darkness: "He attacks at -10". The cellar b stands in goes from dim (-2) to total
    darkness: ``update`` says a→b changed, as the per-pair path does (the old ruling, built late to compare, is ruled
    with the old scene, not found in a memo the new one filled).
    """
    dim, dark = _cellar(-2, 0), _cellar(-10, 1)
    engine = SceneVisibility(dim, action="attack")
    before, after = plain_rulings(dim, "attack", False), plain_rulings(dark, "attack", False)
    assert (before["a", "b"].modifier, after["a", "b"].modifier) == (-2, -10)
    changes = engine.update(dark)
    assert dict(changes) == {pair: ruling for pair, ruling in after.items() if before[pair] != ruling}
    assert engine.verdict("a", "b") == (True, -10)


def test_a_moves_lines_are_listed_once_per_token_and_shared_by_its_passes() -> None:
    """A one-token move's ``update`` pass and ``advance`` marks share one list of its pairs, made once for the token.

    Both take that token's pairs and directed pairs from that list, in the order a pass lists its lines; after the token
    ids change, the lists are made again for the new ids. The rulings equal the plain path's throughout.
    """
    engine = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    lazy = SceneVisibility(_state([POOR], ROW), action="bs-attack")
    a, b, c = ROW
    for version, x in enumerate((100, 300, 500), start=1):
        state = _state([POOR], [a, b, token("c", x, 1400)], version=version)
        changes = engine.update(state)
        lazy.advance(state)
        pairs, keys, idx, _ = engine._token_lines(2)
        assert pairs == [(0, 2), (1, 2)] and keys == [("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]
        assert idx.tolist() == [[0, 2], [1, 2]] and engine._rulings.ref(("a", "c"))[0].idx is idx
        assert list(changes) == keys
        assert all(engine._rulings.ref(pair)[0].pairs is keys for pair in keys)
        plain = plain_rulings(state, "bs-attack", False)
        assert dict(engine.rulings()) == plain and dict(lazy.rulings()) == plain
    # Another token order: the lists follow the new ids.
    state = _state([POOR], [c, a, token("b", 1000, 600)], version=9)
    engine.update(state)
    state = _state([POOR], [c, a, token("b", 1000, 700)], version=10)
    assert list(engine.update(state)) == [("c", "b"), ("b", "c"), ("a", "b"), ("b", "a")]
    assert dict(engine.rulings()) == plain_rulings(state, "bs-attack", False)


def test_a_movers_stale_pairs_read_in_one_pass_keep_the_stale_count_and_share_their_rows() -> None:
    """A mover's stale pairs, read in one batched pass, share one array of index rows and leave the stale count right.

    After each move of one token, the first batched read rules the token's marked pairs in one pass that takes their
    index rows from one array made for that token's pairs, and leaves the stale count equal to the stale entries (none);
    the rulings equal the plain path's.
    """
    a, b, c = ROW
    extra = [token("d", 700, 900), token("e", 200, 1000)]
    lazy = SceneVisibility(_state([POOR], [a, b, c, *extra]), action="bs-attack")
    dict(lazy.rulings())
    rows = []
    for version, x in enumerate((100, 300, 500, 700), start=1):
        state = _state([POOR], [a, b, token("c", x, 1400), *extra], version=version)
        lazy.advance(state)
        lazy.rulings()["d", "c"]  # (from the second move: a batched read, every stale pair of c in one pass)
        rulings = lazy._rulings
        assert rulings.stale == sum(1 for pair in rulings if rulings._entries[pair] is None)
        batch = rulings.ref(("d", "c"))[0]
        rows.append(batch.idx)
        if version > 1:
            assert rulings.stale == 0 and len(batch.pairs) == 8 and batch is rulings.ref(("a", "c"))[0]
        assert dict(lazy.rulings()) == plain_rulings(state, "bs-attack", False)
    assert rows[1] is rows[2] is rows[3] and rows[1].tolist() == [[0, 2], [1, 2], [2, 3], [2, 4]]


def test_a_moves_push_columns_follow_the_tokens_traits_ids_and_zones() -> None:
    """A move's brief push reads each token's observer and its lines' ends kept from earlier passes: never stale ones.

    Pushes after moves, a trait gained and lost in place (another observer: the visor sees through Poor Visibility), the
    ids changed (a token added) and a zone retyped to one Infinity does not know equal, byte for byte, the pushes made
    from every changed pair's ruling; the moved token's lines' ends are the very lists its earlier pass used.
    """
    import orjson

    from bridge.protocol import dump_message
    from bridge.session import _annotations

    def push(engine: SceneVisibility, state: SceneState, changes: Any, *, bulk: bool) -> bytes:
        made = _annotations("w", state, changes if bulk else dict(changes), full=False, brief=True, engine=engine)
        return orjson.dumps(dump_message(made))

    poor = region("poor", rect(450, 0, 100, 2000), zone="poor")
    tokens = [token("a", 0, 400), token("b", 1000, 400), token("c", 0, 1400)]
    fast = SceneVisibility(_state([poor], tokens), action="bs-attack")
    plain = SceneVisibility(_state([poor], tokens), action="bs-attack")
    dark = region("poor", rect(450, 0, 100, 2000), zone="darkness")  # (GURPS's: foreign to Infinity)
    visor = {"traits": ["multispectral-visor-2"]}
    steps: list[tuple[list[Region], list[Token]]] = [
        ([poor], [tokens[0].model_copy(update={"y": 500}), *tokens[1:]]),
        ([poor], [tokens[0].model_copy(update={"y": 500, **visor}), *tokens[1:]]),  # the same place, a visor
        ([poor], [tokens[0].model_copy(update={"y": 600, **visor}), *tokens[1:]]),
        ([poor], [tokens[0].model_copy(update={"y": 600}), *tokens[1:]]),  # the visor taken off in place
        ([poor], [tokens[0].model_copy(update={"y": 700}), *tokens[1:], token("d", 1000, 1400)]),
        ([poor], [tokens[0].model_copy(update={"y": 800}), *tokens[1:], token("d", 1000, 1400)]),
        ([dark], [tokens[0].model_copy(update={"y": 800}), *tokens[1:]]),
        ([dark], [tokens[0].model_copy(update={"y": 900}), *tokens[1:]]),
    ]
    seen_mods: set[int | None] = set()
    for version, (regions, moved) in enumerate(steps, start=1):
        state = _state(regions, moved, version=version)
        changes = fast.update(state)
        assert push(fast, state, changes, bulk=True) == push(plain, state, plain.update(state), bulk=False)
        seen_mods |= {ruling.modifier for ruling in dict(fast.rulings()).values() if ruling is not None}
        assert dict(fast.rulings()) == plain_rulings(state, "bs-attack", False)
    assert len(seen_mods) > 1  # the visor and the zone changed what the lines read
    lines = fast._token_lines(0)
    assert fast._rulings.ref(("a", "b"))[0].directed() is lines.directed
    assert lines.directed.src_list == [0, 1, 0, 2] and lines.directed.dst_list == [1, 0, 2, 0]
