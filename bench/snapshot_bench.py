"""Bytes the log stores for a patch storm: 1,000 patches of a 200-token scene, each followed by a logged ruling.

    .venv/bin/python -m bench.snapshot_bench [--patches 1000] [--tokens 200] [--database postgresql://…] [--json]

One offline :class:`~bridge.session.Session` (the server's logic) syncs a scene of ``--tokens`` tokens,
40 zones and 400 walls (40 of them doors), then sends ``--patches`` ``scene.patch`` messages — in turn
a door opened or closed, a smoke zone moved, a token moved — each followed by a logged ``adjudicate``,
carried out on a real store (an SQLite file, WAL and ``synchronous=FULL`` as the bridge runs it, or
PostgreSQL with ``--database``).

It reports the bytes the patches themselves took on the wire, and what the log grew by: the snapshot
tables, the ruling rows, and the database on disk (SQLite: the file after a checkpoint; PostgreSQL:
``pg_total_relation_size`` of the log's tables). The figures are sizes, not times; the baseline is the
patches' own size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bridge.log.effects import perform
from bridge.log.postgres import PostgresLogStore
from bridge.log.sql import SqlLogStore
from bridge.log.sqlite import SqliteLogStore
from bridge.session import Send, Session, StoreThenSend, Worlds

WORLD = "offline"  # the offline session's world
REGIONS = 40
WALLS = 400
DOORS = 40


def scene(tokens: int, rng: random.Random) -> dict[str, Any]:
    """A big battle map: tokens on a grid, zones as rectangles and polygons, walls with doors."""
    return {
        "id": "s-storm",
        "name": "Storm",
        "grid": {"size": 100, "distance": 1, "units": "in"},
        "rules": {"ruleset": "infinity-n4", "edition": "current"},
        "regions": [
            {
                "id": f"r{n}",
                "name": f"Zone {n}",
                "shapes": [
                    {"type": "rectangle", "x": 400 * (n % 10), "y": 400 * (n // 10), "width": 300, "height": 200}
                    if n % 2
                    else {"type": "polygon", "points": [c + 400 * (n % 10) for c in (0, 0, 300, 20, 280, 260, 10, 240)]}
                ],
                "zone": {"type": rng.choice(["low", "poor", "zero", "smoke"])},
            }
            for n in range(REGIONS)
        ],
        "tokens": [
            {"id": f"t{n}", "name": f"Trooper {n}", "x": 100 * (n % 40), "y": 100 * (n // 40)} for n in range(tokens)
        ],
        "walls": [
            {
                "id": f"w{n}",
                "c": [rng.uniform(0, 4000), rng.uniform(0, 4000), rng.uniform(0, 4000), rng.uniform(0, 4000)],
                "sight": 20,
                "door": 1 if n < DOORS else 0,
            }
            for n in range(WALLS)
        ],
    }


def patches(count: int, tokens: int, rng: random.Random) -> list[dict[str, Any]]:
    """Door toggles, a smoke zone dragged, tokens moved, in turn."""
    out: list[dict[str, Any]] = []
    doors = [0] * DOORS
    for n in range(count):
        upsert: dict[str, Any]
        if n % 3 == 0:
            door = rng.randrange(DOORS)
            doors[door] ^= 1
            wall = {"id": f"w{door}", "c": [4000 + door, 0, 4000 + door, 400], "sight": 20, "door": 1,
                    "ds": doors[door]}  # fmt: skip
            upsert = {"walls": [wall]}
        elif n % 3 == 1:
            smoke = {"id": "r0", "name": "Smoke", "zone": {"type": "zero"},
                     "shapes": [{"type": "circle", "x": 1000 + n, "y": 1000, "radius": 150}]}  # fmt: skip
            upsert = {"regions": [smoke]}
        else:
            token = rng.randrange(tokens)
            upsert = {"tokens": [{"id": f"t{token}", "name": f"Trooper {token}", "x": rng.uniform(0, 4000), "y": 50}]}
        out.append({"type": "scene.patch", "id": f"p{n}", "scene": "s-storm", "upsert": upsert})
    return out


async def stored_bytes(store: SqlLogStore) -> dict[str, int]:
    """Bytes of the snapshot bodies, of the ruling bodies, and of the database on disk."""
    async with store._read() as db:
        snapshots = int((await db.fetch("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM snapshots"))[0][0])
        rulings = int((await db.fetch("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM rulings"))[0][0])
        if isinstance(store, SqliteLogStore):
            await db.fetch("PRAGMA wal_checkpoint(TRUNCATE)")
            disk = store.path.stat().st_size
        else:
            names = ["sessions", "rulings", "snapshots"]
            sizes = " + ".join(f"pg_total_relation_size('{name}')" for name in names)
            disk = int((await db.fetch(f"SELECT {sizes}"))[0][0])
    return {"snapshots": snapshots, "rulings": rulings, "disk": disk}


async def run(store: SqlLogStore, *, patch_count: int, tokens: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    session = Session(Worlds(), offline=True)

    async def send(message: dict[str, Any]) -> dict[str, Any]:
        answers = []
        for effect in session.receive(json.dumps(message)):
            if isinstance(effect, Send):
                answers.append(effect.message)
            elif isinstance(effect, StoreThenSend):
                answers.append(await perform(effect, store))
        answer = answers[0].model_dump()
        assert answer["type"] != "error", answer
        return answer

    await send({"type": "scene.sync", "id": "q", "scene": scene(tokens, rng)})
    first = await send({"type": "adjudicate", "id": "a", "scene": "s-storm", "actor": "t0", "target": "t1",
                        "action": "bs-attack"})  # fmt: skip
    assert first["logged"], first
    record = await store.get_record(WORLD, first["record"])
    assert record is not None and record.session is not None
    session_id = record.session
    before = await stored_bytes(store)
    wire = 0
    for n, patch in enumerate(patches(patch_count, tokens, rng)):
        text = json.dumps(patch)
        wire += len(text.encode())
        await send(patch)
        actor, target = rng.sample(range(tokens), 2)
        ruling = {"type": "adjudicate", "id": f"a{n}", "scene": "s-storm", "actor": f"t{actor}",
                  "target": f"t{target}", "action": "bs-attack"}  # fmt: skip
        assert (await send(ruling))["logged"]
    after = await stored_bytes(store)
    grown = {key: after[key] - before[key] for key in after}
    stalls = await read_stalls(store, session_id)
    sizes = {f"{key}_bytes": value for key, value in grown.items()}
    return {"patches": patch_count, "tokens": tokens, "patch_bytes": wire, **sizes, **stalls}


async def read_stalls(store: SqlLogStore, session: str) -> dict[str, float]:
    """The longest the event loop went without turning (what every other world would wait) while this
    session is read: a page of 1,000 rulings as the API and the session page read it (snapshot keys),
    and the whole session exported with every record's snapshot. Baseline: the loop left alone."""

    async def longest_stall(work: Any) -> float:
        worst, done = 0.0, asyncio.Event()

        async def tick() -> None:
            nonlocal worst
            while not done.is_set():
                started = time.perf_counter()
                await asyncio.sleep(0.001)
                worst = max(worst, time.perf_counter() - started - 0.001)

        ticker = asyncio.create_task(tick())
        try:
            await work()
        finally:
            done.set()
            await ticker
        return worst * 1000

    async def page() -> None:
        await store.query(WORLD, session, limit=1000, snapshots=False)

    async def export() -> None:
        async for _ in store.export(WORLD, session):
            pass

    return {
        "stall_idle_ms": await longest_stall(lambda: asyncio.sleep(0.5)),
        "stall_page_ms": await longest_stall(page),
        "stall_export_ms": await longest_stall(export),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    store: SqlLogStore
    with tempfile.TemporaryDirectory() as tmp:
        store = PostgresLogStore(args.database) if args.database else SqliteLogStore(Path(tmp) / "sightline.db")
        await store.connect()
        try:
            result = await run(store, patch_count=args.patches, tokens=args.tokens, seed=args.seed)
        finally:
            await store.close()
    result["database"] = "postgresql" if args.database else "sqlite"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patches", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--database", help="postgresql://… (default: an SQLite file in a temporary directory)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result))
        return
    per = 1000 / result["patches"]
    scene = f"{result['patches']:,} patches of a {result['tokens']}-token scene"
    print(f"{result['database']}: {scene}, each followed by a logged ruling")
    print(f"  the patches themselves (wire JSON)   {result['patch_bytes'] * per:>14,.0f} bytes per 1,000 patches")
    print(f"  snapshots stored                     {result['snapshots_bytes'] * per:>14,.0f} bytes per 1,000 patches")
    print(f"  ruling rows stored                   {result['rulings_bytes'] * per:>14,.0f} bytes per 1,000 patches")
    print(f"  database on disk grew by             {result['disk_bytes'] * per:>14,.0f} bytes per 1,000 patches")
    print(f"  ratio snapshots / patches: {result['snapshots_bytes'] / result['patch_bytes']:.2f}x")
    print(
        f"  longest event-loop stall reading the session: a 1,000-ruling page {result['stall_page_ms']:.1f} ms,"
        f" the whole session exported {result['stall_export_ms']:.1f} ms (loop alone: {result['stall_idle_ms']:.1f} ms)"
    )


if __name__ == "__main__":
    main()
