"""V14 Scene Levels through the session, as the module sends them: rulings by floor, unknown level ids
refused by name with the scene kept, the log keeping which floor a ruling happened on, and the limit
on a scene's levels answered like the other scene limits."""

from __future__ import annotations

from typing import Any

from bridge.core.world import SceneLimits
from bridge.session import StoreThenSend, Worlds
from tests.test_session import one, online, send


def _house(wall_levels: list[str]) -> dict[str, Any]:
    """A scene.sync of a two-storey house: two tokens on each floor, a wall between them on ``wall_levels``."""
    return {
        "type": "scene.sync",
        "id": "q1",
        "scene": {
            "id": "s-house",
            "grid": {"size": 100, "distance": 1},
            "rules": {"ruleset": "infinity-n4"},
            "levels": [
                {"id": "l-ground", "name": "Downstairs", "bottom": 0, "top": 10},
                {"id": "l-upper", "name": "Upstairs", "bottom": 10, "top": 20},
            ],
            "tokens": [
                {"id": "a", "x": 0, "y": 0, "level": "l-ground"},
                {"id": "b", "x": 800, "y": 0, "level": "l-ground"},
                {"id": "c", "x": 0, "y": 0, "elevation": 10, "level": "l-upper"},
                {"id": "d", "x": 800, "y": 0, "elevation": 10, "level": "l-upper"},
            ],
            "walls": [{"id": "w-up", "c": [450, -500, 450, 500], "levels": wall_levels}],
        },
    }


def _adjudicate(actor: str, target: str, *, log: bool = False) -> dict[str, Any]:
    return {
        "type": "adjudicate",
        "id": f"{actor}{target}",
        "scene": "s-house",
        "actor": actor,
        "target": target,
        "action": "bs-attack",
        "log": log,
    }


def test_an_upstairs_wall_blocks_upstairs_only() -> None:
    """Synced as the module sends a V14 scene: the ground-floor pair sees past the upstairs wall."""
    session = online()
    assert one(session, _house(["l-upper"]))["type"] == "scene.synced"
    assert one(session, _adjudicate("a", "b"))["allowed"] is True
    assert one(session, _adjudicate("c", "d"))["allowed"] is False


def test_an_unknown_level_is_an_error_naming_it_and_the_scene_stays() -> None:
    """A wall on a level the scene lacks: invalid-message naming the field; the held scene still rules."""
    session = online()
    one(session, _house(["l-upper"]))
    error = one(session, _house(["l-attic"]))
    assert error["code"] == "invalid-message"
    assert error["details"]["field"] == "scene.walls[0].levels"
    assert "l-attic" in error["message"]
    patch = {
        "type": "scene.patch",
        "id": "q2",
        "scene": "s-house",
        "upsert": {"tokens": [{"id": "a", "x": 100, "y": 0, "level": "l-cellar"}]},
    }
    error = one(session, patch)
    assert error["code"] == "invalid-message" and error["details"]["field"] == "upsert.tokens[0].level"
    assert one(session, _adjudicate("c", "d"))["allowed"] is False


def test_the_log_keeps_the_floor_of_a_ruling() -> None:
    """The logged record holds the tokens' levels and the scene's levels (rejudge reads them back)."""
    session = online()
    one(session, _house(["l-upper"]))
    (store,) = [e for e in send(session, _adjudicate("c", "d", log=True)) if isinstance(e, StoreThenSend)]
    assert store.record is not None and store.record.situation is not None and store.record.snapshot is not None
    assert [t["level"] for t in store.record.situation["tokens"]] == ["l-upper", "l-upper"]
    assert [level["id"] for level in store.record.snapshot.setting["levels"]] == ["l-ground", "l-upper"]
    assert store.record.snapshot.walls[0]["levels"] == ["l-upper"]


def _storeys(count: int, **wall: Any) -> dict[str, Any]:
    """A scene.sync of a tower of ``count`` levels, 10 units each, with one wall (``wall`` fields added)."""
    return {
        "type": "scene.sync",
        "id": "q1",
        "scene": {
            "id": "s-tower",
            "rules": {"ruleset": "infinity-n4"},
            "levels": [{"id": f"l{i}", "bottom": 10 * i, "top": 10 * i + 10} for i in range(count)],
            "walls": [{"id": "w", "c": [450, -500, 450, 500], **wall}],
        },
    }


def test_101_levels_are_too_large_naming_the_levels_limit_and_the_connection_answers_on() -> None:
    """By default 101 levels are too-large with field, limit, value and max and the request id; 100 are synced."""
    session = online()
    answer = one(session, _storeys(101))
    assert (answer["type"], answer["id"], answer["code"]) == ("error", "q1", "too-large")
    assert answer["details"] == {"field": "scene.levels", "limit": "levels", "value": 101, "max": 100}
    assert one(session, _storeys(100))["type"] == "scene.synced"


def test_a_level_limit_of_2_refuses_3_levels_and_accepts_2() -> None:
    """SceneLimits(levels=2) (what --max-levels 2 sets) refuses 3 levels as too-large and syncs 2."""
    session = online(Worlds(scene_limits=SceneLimits(levels=2)))
    answer = one(session, _storeys(3))
    assert answer["code"] == "too-large"
    assert answer["details"] == {"field": "scene.levels", "limit": "levels", "value": 3, "max": 2}
    assert one(session, _storeys(2))["type"] == "scene.synced"


def test_an_objects_levels_follow_the_scene_limit_not_a_bound_of_their_own() -> None:
    """Under a limit of 150 levels, a wall on all 150 is synced: nothing caps an object's levels below the limit."""
    session = online(Worlds(scene_limits=SceneLimits(levels=150)))
    assert one(session, _storeys(150, levels=[f"l{i}" for i in range(150)]))["type"] == "scene.synced"


def test_an_object_naming_a_level_twice_reads_it_once() -> None:
    """A wall's levels is a set: a level named twice, by sync or patch, is held once, and the scene is accepted."""
    session = online()
    assert one(session, _storeys(2, levels=["l1", "l0", "l1"]))["type"] == "scene.synced"
    assert session._worlds.get("w1").scenes["s-tower"].scene.walls[0].levels == ["l1", "l0"]
    wall = {"id": "w2", "c": [0, 0, 0, 100], "levels": ["l0", "l0"]}
    patch = {"type": "scene.patch", "id": "q2", "scene": "s-tower", "upsert": {"walls": [wall]}}
    assert one(session, patch)["type"] == "scene.patched"
    walls = session._worlds.get("w1").scenes["s-tower"].scene.walls
    assert [w.levels for w in walls if w.id == "w2"] == [["l0"]]
