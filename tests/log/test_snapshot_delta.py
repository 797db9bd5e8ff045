"""Scene snapshots stored by content and as deltas (issue 12): a patch storm stores about its patches,
and every record reads back with exactly the snapshot it was logged with, on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from typing import Any

import pytest

from bridge.log import sql
from bridge.log.records import RulingRecord, SceneSnapshot
from bridge.log.snapshot_delta import delta, restore
from bridge.log.sql import SqlLogStore

from .conftest import append_as_before_world_names, make_store
from .sample import ruling


def snapshot(regions: list[dict[str, Any]], walls: list[dict[str, Any]], **whole: Any) -> SceneSnapshot:
    """A snapshot keyed by the hash of its content, as ``capture.snapshot_of`` keys them."""
    content = {"scene": "s-storm", "regions": regions, "walls": walls, "grid": {"size": 100}, **whole}
    key = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:32]
    return SceneSnapshot(key=key, **content)


def wall(n: int, door_open: int = 0) -> dict[str, Any]:
    return {"id": f"w{n}", "c": [n, 0, n, 400], "sight": 20, "door": 1, "ds": door_open}


def region(n: int, x: float = 0) -> dict[str, Any]:
    return {
        "id": f"r{n}",
        "shapes": [{"type": "circle", "x": x + 300 * n, "y": 0, "radius": 90}],
        "zone": {"type": "low"},
    }


def storm(versions: int, rng: random.Random) -> list[SceneSnapshot]:
    """A big scene, then one door toggled or one zone moved per version."""
    walls = [wall(n) for n in range(200)]
    regions = [region(n) for n in range(20)]
    out = [snapshot(regions, walls)]
    for step in range(versions - 1):
        if step % 2:
            n = rng.randrange(200)
            walls = [*walls[:n], wall(n, 1 - walls[n]["ds"]), *walls[n + 1 :]]
        else:
            n = rng.randrange(20)
            regions = [*regions[:n], region(n, step + 1), *regions[n + 1 :]]
        out.append(snapshot(regions, walls))
    return out


def test_a_delta_restores_the_new_snapshot_exactly_whatever_the_edit() -> None:
    """base + delta == new whatever the edit, also after a JSON round trip (what the store keeps).

    The edits: changed, added, removed and reordered regions and walls, a new grid.
    """
    rng = random.Random(12)
    for _ in range(300):
        base = [wall(n) for n in range(rng.randint(0, 12))]
        new = [wall(n, rng.randint(0, 1)) for n in rng.sample(range(16), rng.randint(0, 12))]
        if rng.random() < 0.3:
            rng.shuffle(new)
        regions = [region(n) for n in range(rng.randint(0, 4))]
        old_snapshot = snapshot(regions, base)
        new_snapshot = snapshot(
            regions[::-1] if rng.random() < 0.3 else regions, new, grid={"size": rng.choice([100, 50])}
        )
        change = delta(old_snapshot, new_snapshot)
        assert change is not None
        assert restore(old_snapshot, json.loads(json.dumps(change))) == new_snapshot


async def test_a_patch_storm_stores_its_changes_not_the_scene_again(store: SqlLogStore, store_url: str) -> None:
    """A patch storm stores the scene once or a few times plus its changes, and every record reads back exactly.

    300 versions of a 200-wall scene, one change each: the snapshots take the scene once or a few times plus about the
    changes (whole, they would take 300 scenes); a fresh process reads every record back with exactly its snapshot.
    """
    versions = storm(300, random.Random(7))
    stored: list[RulingRecord] = []
    for n, version in enumerate(versions):
        stored.append(await store.append(ruling(n, snapshot=version)))
    whole = len(versions[0].model_dump_json())
    async with store._read() as db:
        rows = await db.fetch("SELECT COUNT(*), SUM(LENGTH(body)), MAX(depth) FROM snapshots")
    count, size, deepest = rows[0]
    assert count == len({v.key for v in versions})
    changes = sum(len(json.dumps(delta(a, b))) for a, b in itertools.pairwise(versions))
    assert size <= 2 * whole + 1.5 * changes
    assert size < 300 * whole / 20
    assert 0 < deepest <= sql.MAX_SNAPSHOT_DEPTH
    fresh = make_store(store_url)  # no cache: every snapshot rebuilt from the rows
    await fresh.connect()
    try:
        page = await fresh.query("w-ashes", stored[0].session, limit=1000)
        assert [r.snapshot for r in page.records] == versions
        assert page.snapshot_keys == {r.id: v.key for r, v in zip(stored, versions, strict=True)}
        middle = stored[150]
        assert middle.id is not None
        assert (await fresh.get_record("w-ashes", middle.id)) == middle
        assert await fresh.get_snapshot("w-ashes", versions[299].key) == versions[299]
        assert await fresh.get_snapshot("w-other", versions[299].key) is None
        keys_only = await fresh.query("w-ashes", stored[0].session, limit=10, snapshots=False)
        assert all(r.snapshot is None for r in keys_only.records) and len(keys_only.snapshot_keys) == 10
    finally:
        await fresh.close()


async def test_chains_of_deltas_stay_short_and_revisited_content_is_stored_once(
    store: SqlLogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chains of deltas stay short (a whole snapshot every 5 versions) and revisited content is stored once.

    With at most 4 deltas per chain a whole snapshot is written every 5 versions; a door opened and closed again goes
    back to a stored key (no new row); every record still reads back exactly.
    """
    monkeypatch.setattr(sql, "MAX_SNAPSHOT_DEPTH", 4)
    versions = storm(23, random.Random(3))
    versions += [versions[-2], versions[-1], versions[-2]]  # back and forth: nothing new to store
    stored = [await store.append(ruling(n, snapshot=v)) for n, v in enumerate(versions)]
    async with store._read() as db:
        rows = await db.fetch("SELECT depth FROM snapshots")
    depths = sorted(int(row[0]) for row in rows)
    distinct = len({v.key for v in versions})
    assert len(depths) == distinct and max(depths) == 4 and depths.count(0) >= distinct // 5
    fresh = await store.query("w-ashes", stored[0].session, limit=100)
    assert [r.snapshot for r in fresh.records] == versions


async def test_a_log_from_before_deltas_is_migrated_and_reads_back(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema-2 log (whole snapshots only) migrates to schema 3 and its records read back unchanged.

    New versions of its scenes are stored as deltas from then on.
    """
    versions = storm(6, random.Random(5))
    first_two = [m for m in sql.load_migrations() if m[0] <= 2]
    with monkeypatch.context() as patched:
        patched.setattr(sql, "load_migrations", lambda: first_two)
        old = make_store(store_url)
        await old.connect()
        try:
            assert await old.schema_version() == 2
            async with old._write(["w-ashes"]) as db:  # what a schema-2 bridge wrote: whole bodies
                for version in versions[:3]:
                    await db.execute(
                        "INSERT INTO snapshots (key, scene, body) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
                        version.key,
                        version.scene,
                        version.model_dump_json(),
                    )
            before = [[await append_as_before_world_names(old, ruling(n, snapshot=None))] for n in range(1)]
        finally:
            await old.close()
    new = make_store(store_url)
    await new.connect()
    try:
        assert await new.schema_version() == sql.load_migrations()[-1][0]  # migrated to the newest
        stored = [await new.append(ruling(n, snapshot=v)) for n, v in enumerate(versions)]
        page = await new.query("w-ashes", stored[0].session, limit=100)
        assert [r.snapshot for r in page.records if r.snapshot is not None] == versions
        assert page.records[0].id == before[0][0].id
        async with new._read() as db:
            rows = await db.fetch("SELECT key, depth FROM snapshots ORDER BY depth")
        assert {str(key) for key, depth in rows if depth > 0} >= {v.key for v in versions[4:]}
    finally:
        await new.close()
