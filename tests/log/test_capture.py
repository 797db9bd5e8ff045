"""From a scene and an adjudication answer to a log record."""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from datetime import UTC, datetime

from bridge.core.scene import Scene
from bridge.log.capture import SnapshotParts, _content_hash, record_of, snapshot_of
from bridge.log.records import Party, snapshot_json
from bridge.protocol import Adjudication

SCENE = {
    "id": "s-docks",
    "name": "Docks",
    "grid": {"size": 100, "distance": 1, "units": "in"},
    "rules": {"ruleset": "infinity-n4"},
    "regions": [
        {
            "id": "r-smoke",
            "shapes": [{"type": "circle", "x": 1500, "y": 900, "radius": 150}],
            "zone": {"type": "zero"},
        }
    ],
    "tokens": [{"id": "t-fus", "x": 200, "y": 800}],
    "walls": [{"id": "w1", "c": [1000, 0, 1000, 600]}],
}


def test_snapshot_key_follows_zones_and_walls_only() -> None:
    """Equal zones and walls give one key; moving a token keeps it; moving a wall changes it."""
    first = snapshot_of(Scene.model_validate(SCENE))
    moved_token = snapshot_of(Scene.model_validate({**SCENE, "tokens": [{"id": "t-fus", "x": 900, "y": 800}]}))
    moved_wall = snapshot_of(Scene.model_validate({**SCENE, "walls": [{"id": "w1", "c": [1100, 0, 1000, 600]}]}))
    assert first.key == moved_token.key != moved_wall.key
    assert first.regions[0]["zone"]["type"] == "zero" and first.walls[0]["c"] == [1000, 0, 1000, 600]


def test_record_of_an_answer_keeps_every_wire_field() -> None:
    """The record carries the answer's ruling, line and ruleset fields, with the parties the session knows."""
    answer = Adjudication.model_validate(
        {
            "id": "a1",
            "scene": "s-docks",
            "actor": "t-fus",
            "target": "t-tgt",
            "action": "observation",
            "ruleset": "traveller",
            "edition": "current",
            "allowed": True,
            "modifier": -2,
            "crossings": [{"region": "r-smoke", "zone": "smoke", "kind": "through"}],
            "modifiers": [{"source": "zone", "value": -2, "applied": True, "label": "Smoke"}],
            "notes": ["n"],
            "citations": ["c"],
            "line": {"start": {"x": 250, "y": 850, "z": 0}, "end": {"x": 1850, "y": 450, "z": 1}},
            "difficulty": "Difficult",
        }
    )
    at = datetime(2025, 3, 1, 19, 0, tzinfo=UTC)
    record = record_of(
        answer,
        world="w-ashes",
        actor=Party(id="t-fus", name="Fusilier"),
        target=Party(id="t-tgt"),
        user=Party(id="u1", name="GM"),
        at=at,
    )
    assert record.request == "a1" and record.modifier == -2 and record.details == {"difficulty": "Difficult"}
    assert record.line == {
        "start": {"x": 250.0, "y": 850.0, "z": 0.0},
        "end": {"x": 1850.0, "y": 450.0, "z": 1.0},
    }
    assert record.modifiers == [{"source": "zone", "value": -2, "applied": True, "label": "Smoke"}]
    assert record.time == at.isoformat() and record.id is None and record.session is None


def test_a_large_scenes_key_is_the_hash_of_its_json_made_a_piece_at_a_time() -> None:
    """A 50,000-wall scene's key is the SHA-256 of its sorted JSON, as before, never holding that whole text at once.

    One ``json.dumps`` of it held the interpreter, and so every other world's answers, for 0.3-1.2 s.
    """
    walls = [{"id": f"w{i}", "c": [i % 9000, 0, i % 9000 + 50, 90], "sight": 20} for i in range(50_000)]
    content = {"scene": "s", "name": "Docks", "grid": {"size": 100}, "regions": [], "walls": walls, "setting": {}}
    text = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    tracemalloc.start()
    try:
        digest = _content_hash(content)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert digest.hexdigest() == hashlib.sha256(text).hexdigest()
    assert peak < len(text) // 10
    scene = Scene.model_validate({**SCENE, "walls": walls[:3]})
    by_text = json.dumps(
        {
            "scene": scene.id,
            "name": scene.name,
            "grid": scene.grid.model_dump(mode="json"),
            "regions": [r.model_dump(mode="json", exclude_none=True) for r in scene.regions],
            "walls": [w.model_dump(mode="json", exclude_none=True) for w in scene.walls],
            "setting": scene.model_dump(
                mode="json", exclude_none=True, exclude={"id", "name", "grid", "regions", "walls", "tokens"}
            ),
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    assert snapshot_of(scene).key == hashlib.sha256(by_text.encode()).hexdigest()[:32]  # keys already logged stay


def test_a_moved_walls_snapshot_reuses_the_walls_the_scene_still_holds() -> None:
    """After one wall of 2,000 moved, the next snapshot shares the other walls' JSON forms and has the key made afresh.

    Made afresh, a wall moved in a scene of 50,000 walls made and hashed every wall again (0.8 s of CPU) and the log's
    cache of recent snapshots held a copy of every wall for each of them.
    """
    walls = [{"id": f"w{i}", "c": [i, 0, i + 50, 90], "sight": 20} for i in range(2_000)]
    scene = Scene.model_validate({**SCENE, "walls": walls})
    parts = SnapshotParts()
    first = snapshot_of(scene, parts)
    moved = Scene.model_validate({**SCENE, "walls": [{"id": "w0", "c": [7, 7, 60, 90]}]}).walls[0]
    patched = scene.model_copy(update={"walls": [moved, *scene.walls[1:]]})  # as scene.patch does: the rest kept
    second = snapshot_of(patched, parts)
    afresh = snapshot_of(patched)
    assert second.key == afresh.key != first.key and second == afresh
    assert second.walls[0]["c"] == [7, 7, 60, 90] and second.walls[0] is not first.walls[0]
    assert all(second.walls[i] is first.walls[i] for i in range(1, 2_000))
    assert snapshot_of(scene, parts) == first  # back to the first walls: the moved one made again, its key as before


def test_a_snapshots_json_written_a_wall_at_a_time_is_its_model_dump_json() -> None:
    """snapshot_json gives model_dump_json's text exactly (non-ASCII names, floats, nested lists), a wall at a time."""
    walls = [{"id": f"mur-ñ-“é”-\u2028-{i}", "c": [i / 3, 0.1, 1e7 / 7, -0.0]} for i in range(50)]
    scene = Scene.model_validate({**SCENE, "name": "Quai ☂", "walls": walls})
    snapshot = snapshot_of(scene)
    assert snapshot_json(snapshot) == snapshot.model_dump_json()
    assert (
        snapshot_json(snapshot.model_copy(update={"walls": [], "regions": []}))
        == snapshot.model_copy(update={"walls": [], "regions": []}).model_dump_json()
    )
