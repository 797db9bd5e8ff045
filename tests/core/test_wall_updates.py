"""A wall patch costs what it changes: ``WallIndex.updated`` reads only the walls changed or added, keeps the wall
tree, and gives the very rows, candidates and blocking walls a new index of the same walls gives."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
import shapely

from bridge.core import world as world_module
from bridge.core.geometry import WallIndex, level_spans
from bridge.core.scene import Level, Scene, Wall
from bridge.core.sight import Point3
from bridge.core.world import SceneLimits, SceneRejected, World
from bridge.protocol import encode
from bridge.session import Deliver, Send, Session, Worlds
from tests.scenes import scene, token

_LEVELS = level_spans(
    [
        Level.model_validate(v)
        for v in (
            {"id": "l0", "bottom": None, "top": 0},
            {"id": "l1", "bottom": 1, "top": 3},
            {"id": "l2", "bottom": 3},
        )
    ]
)


def random_wall(rng: random.Random, wall_id: str) -> Wall:
    x, y = rng.randrange(0, 20) * 50.0, rng.randrange(0, 20) * 50.0
    dx, dy = rng.choice([(0.0, 0.0), (150.0, 0.0), (0.0, 100.0), (120.0, 90.0), (-100.0, 50.0)])
    data: dict[str, Any] = {
        "id": wall_id,
        "c": [x, y, x + dx, y + dy],
        "sight": rng.choice([0, 10, 20, 20, 20, 30, 40]),
        "door": rng.choice([0, 0, 1]),
        "ds": rng.choice([0, 1]),
        "dir": rng.choice([0, 0, 1, 2]),
    }
    if rng.random() < 0.3:
        data["threshold"] = {"sight": rng.choice([0, 1, 5]), "light": rng.choice([0, 2, 5])}
    if rng.random() < 0.2:
        data["light"] = rng.choice([0, 10, 20])
    if rng.random() < 0.2:
        data["levels"] = rng.sample(["l0", "l1", "l2"], rng.randint(1, 2))
    return Wall.model_validate(data)


def patched(rng: random.Random, walls: list[Wall], serial: list[int]) -> list[Wall]:
    """``walls`` after a patch as ``World.patch`` makes one: moved or changed in place, removed, added at the end."""
    by_id = {wall.id: wall for wall in walls}
    for _ in range(rng.randint(1, 4)):
        action = rng.random()
        if action < 0.5 and by_id:
            wall_id = rng.choice(list(by_id))
            by_id[wall_id] = random_wall(rng, wall_id)
        elif action < 0.7 and by_id:
            by_id.pop(rng.choice(list(by_id)))
        else:
            serial[0] += 1
            wall_id = f"n{serial[0]}"
            by_id[wall_id] = random_wall(rng, wall_id)
    return list(by_id.values())


def assert_same_index(got: WallIndex, fresh: WallIndex) -> None:
    assert got.ids == fresh.ids and got.spans == fresh.spans and len(got) == len(fresh)
    for name in ("ax", "ay", "bx", "by", "limited", "direction", "kind", "threshold", "leveled"):
        mine, theirs = getattr(got, name), getattr(fresh, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs, equal_nan=True), name


@pytest.mark.parametrize("sense", ["sight", "light"])
@pytest.mark.parametrize("seed", range(6))
def test_an_updated_wall_index_equals_one_built_anew_patch_after_patch(sense: Any, seed: int) -> None:
    """Patch after patch (moves, doors, removals, additions, levels): the same rows, candidates and blocking walls."""
    rng = random.Random(seed)
    walls = [random_wall(rng, f"w{i}") for i in range(rng.choice([40, 300]))]
    index = WallIndex(walls, units_per_px=0.02, sense=sense, levels=_LEVELS)
    serial = [0]

    def point() -> Point3:
        return Point3(rng.uniform(-50, 1050), rng.uniform(-50, 1050), rng.uniform(-1, 4))

    lines = [(point(), point()) for _ in range(60)]
    kept_tree = 0
    for _ in range(25):
        walls = patched(rng, walls, serial)
        previous, index = index, index.updated(walls)
        kept_tree += index.tree is previous.tree and index.tree is not None
        fresh = WallIndex(walls, units_per_px=0.02, sense=sense, levels=_LEVELS)
        assert_same_index(index, fresh)
        for a, b in lines:
            assert index.candidates(a, b).tolist() == fresh.candidates(a, b).tolist()
            assert index.blocked(a, b, external_radius=20.0) == fresh.blocked(a, b, external_radius=20.0)
        if len(fresh) > WallIndex.TREE_ABOVE:
            segs = shapely.linestrings([[(a.x, a.y), (b.x, b.y)] for a, b in lines])
            assert fresh.tree is not None
            expected = sorted(zip(*(part.tolist() for part in fresh.tree.query(segs)), strict=True))
            assert list(zip(*(part.tolist() for part in index.query(segs)), strict=True)) == expected
    assert kept_tree > 0, "no update kept the wall tree"


def test_an_index_emptied_then_given_walls_again_equals_one_built_anew() -> None:
    """Every wall removed (or opened), then walls again: each updated index equals one built anew."""
    rng = random.Random(7)
    walls = [random_wall(rng, f"w{i}") for i in range(100)]
    index = WallIndex(walls, units_per_px=0.02, levels=_LEVELS)
    opened = [wall.model_copy(update={"door": 1, "ds": 1}) for wall in walls]
    for step in ([], [walls[0]], walls[:3], opened[:3], [*opened[:3], walls[50]], walls[:3] + walls[90:]):
        index = index.updated(step)
        assert_same_index(index, WallIndex(step, units_per_px=0.02, levels=_LEVELS))
        a, b = Point3(0, 0, 0), Point3(1000, 1000, 1)
        assert index.blocked(a, b) == WallIndex(step, units_per_px=0.02, levels=_LEVELS).blocked(a, b)


def test_a_wall_moved_is_the_only_wall_read_and_the_tree_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """One wall moved among 5,000: one wall read (not 5,000), the tree kept; a reordered list is built anew."""
    walls = [Wall.model_validate({"id": f"w{i}", "c": [i, 0, i, 100]}) for i in range(5_000)]
    index = WallIndex(walls, units_per_px=0.02)
    read: list[str] = []
    kept = WallIndex._kept
    monkeypatch.setattr(WallIndex, "_kept", lambda self, wall: read.append(wall.id) or kept(self, wall))
    moved = list(walls)
    moved[1234] = Wall.model_validate({"id": "w1234", "c": [0, 0, 300, 300]})
    updated = index.updated(moved)
    assert read == ["w1234"] and updated.tree is index.tree
    assert index.updated(moved) is not index and updated.updated(moved) is updated
    read.clear()
    index.updated(list(reversed(walls)))  # not a patch of the list: every wall read again
    assert len(read) == 5_000


def test_a_patched_wall_on_a_large_scene_does_not_rebuild_the_engines_wall_indexes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over a real session: after a wall moved among 3,000, rulings (engine, per pair) and a watch read it alone."""
    worlds = Worlds()
    session = Session(worlds, authenticate=lambda world, secret: True)
    session.receive(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": "s"}))
    walls = [
        {"id": f"w{i}", "c": [(i * 13) % 900, (i * 29) % 900, (i * 13) % 900 + 15, (i * 29) % 900 + 9]}
        for i in range(3_000)
    ]
    data = scene(tokens=[token("a", 0, 450), token("t", 950, 450), token("u", 450, 0)], walls=walls)
    session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": data}))
    ask = {"type": "adjudicate", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack", "log": False}
    per_pair = {**ask, "options": {"note": 1}}  # options of its own: the per-pair path (the scene's geometry)
    session.receive(json.dumps({**ask, "id": "before"}))
    session.receive(json.dumps({**per_pair, "id": "before-2"}))
    session.receive(json.dumps({"type": "watch", "id": "w1", "scene": "s1", "action": "bs-attack"}))
    read: list[str] = []
    kept = WallIndex._kept
    monkeypatch.setattr(WallIndex, "_kept", lambda self, wall: read.append(wall.id) or kept(self, wall))
    move = {
        "type": "scene.patch",
        "id": "m",
        "scene": "s1",
        "upsert": {"walls": [{"id": "w7", "c": [0, 440, 960, 470]}]},
    }
    effects = session.receive(json.dumps(move))
    answer = session.receive(json.dumps({**ask, "id": "after"}))
    answer += session.receive(json.dumps({**per_pair, "id": "after-2"}))
    assert read and set(read) == {"w7"}, f"{len(read)} walls read again"
    texts = [json.loads(encode(effect.message)) for effect in effects + answer if isinstance(effect, Send | Deliver)]
    assert any(text.get("type") == "annotations" for text in texts), "the watch was not updated"
    for request in ("after", "after-2"):
        ruling = next(text for text in texts if text.get("id") == request)
        assert ruling["allowed"] is False and any("w7" in str(item) for item in ruling.values()), ruling


def reference_patch(walls: list[Wall], upsert: list[Wall], remove: list[str]) -> tuple[list[Wall], list[str]]:
    """``walls`` patched through a dictionary of every wall, as ``World.patch`` did; and the ids not held."""
    by_id = {wall.id: wall for wall in walls}
    unheld = [wall_id for wall_id in remove if by_id.pop(wall_id, None) is None]
    for wall in upsert:
        by_id[wall.id] = wall
    return list(by_id.values()), unheld


@pytest.mark.parametrize("seed", range(4))
def test_world_patch_edits_the_walls_as_a_dictionary_of_them_would(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moves, removals (twice, unheld), re-adds, refused patches, renumbering: the very walls in the same order."""
    monkeypatch.setattr(world_module._Positions, "MOST_GONE", 5)  # numbered again often
    monkeypatch.setattr(world_module, "_NUMBERED_AT_ONCE", 7)  # in many slices
    rng = random.Random(seed)
    world = World("w", limits=SceneLimits(walls=60))
    walls = [random_wall(rng, f"w{i}") for i in range(40)]
    levels = [{"id": "l0", "bottom": None, "top": 0}, {"id": "l1", "bottom": 1, "top": 3}, {"id": "l2", "bottom": 3}]
    world.sync(
        Scene.model_validate({**scene(walls=[w.model_dump(exclude_none=True) for w in walls]), "levels": levels})
    )
    walls = world.scenes["s1"].held_scene.walls
    serial = [0]
    for _ in range(150):
        held = [wall.id for wall in walls]
        remove = rng.sample(held, min(len(held), rng.choice([0, 0, 1, 2]))) + rng.choice([[], ["nowhere"]])
        if remove and rng.random() < 0.2:
            remove.append(remove[0])  # removed twice: the second is not held
        upsert = []
        for _ in range(rng.choice([0, 1, 1, 2, 3, 12])):
            if held and rng.random() < 0.6:
                upsert.append(random_wall(rng, rng.choice(held)))  # moved, or removed above and put back
            else:
                serial[0] += 1
                upsert.append(random_wall(rng, f"n{serial[0]}"))
        if upsert and rng.random() < 0.1:
            upsert.append(random_wall(rng, upsert[0].id))  # the last upsert of an id wins, in its first place
        expected, unheld = reference_patch(walls, upsert, remove)
        try:
            result = world.patch("s1", upsert={"walls": upsert}, remove={"walls": remove}, replace={})
        except SceneRejected as refused:
            assert len(expected) > 60 and refused.limit == "walls"  # the world keeps the walls it had
            assert world.scenes["s1"].held_scene.walls == walls
            continue
        got = result.state.held_scene.walls
        assert [w.id for w in got] == [w.id for w in expected] and all(
            a is b for a, b in zip(got, expected, strict=True)
        )
        assert [entry.id for entry in result.ignored if entry.cause == "not-held"] == unheld
        walls = expected


def test_a_wall_patch_reads_only_the_walls_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wall moved, added or removed among 5,000: World.patch reads no other wall's id (it made a dict of all)."""
    world = World("w")
    data = [{"id": f"w{i}", "c": [i, 0, i, 100]} for i in range(5_000)]
    world.sync(Scene.model_validate(scene(walls=data)))
    move = Wall.model_validate({"id": "w7", "c": [0, 0, 300, 300]})
    world.patch("s1", upsert={"walls": [move]}, remove={}, replace={})  # the walls' positions made once
    read: list[str] = []
    plain = Wall.__getattribute__

    def counting(self: Wall, name: str) -> Any:
        if name == "id":
            read.append(object.__getattribute__(self, "__dict__")["id"])
        return plain(self, name)

    monkeypatch.setattr(Wall, "__getattribute__", counting)
    for upsert, remove in (([move], []), ([Wall.model_validate({"id": "new", "c": [1, 2, 3, 4]})], []), ([], ["w9"])):
        read.clear()
        state = world.patch("s1", upsert={"walls": upsert}, remove={"walls": remove}, replace={}).state
        assert len(read) <= 10, f"{len(read)} walls' ids read"
    monkeypatch.undo()
    assert [w.id for w in state.held_scene.walls] == [f"w{i}" for i in range(5_000) if i != 9] + ["new"]
