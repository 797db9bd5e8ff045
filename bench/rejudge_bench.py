"""Re-judging a long logged session: speed and memory of ``sightline log rejudge``.

Builds an SQLite log holding one game session of N rulings — the demo's 13 rulings (played through a
real bridge, logged) repeated with their tokens shifted, so every record is its own situation, over a
new scene snapshot every 500 rulings — then judges it again under edition 1.3 in a fresh process per
size, streaming the session as the command does, and reports for each size the time, rulings per
second and the process's peak RSS. Peak RSS that stays flat from 10,000 to 100,000 rulings is the
bounded-memory claim.

Baseline, in the same process: the naive way — a fresh ``Session`` and a ``scene.sync`` per ruling —
on the first 2,000 rulings, against the command's way (one scene held, consecutive rulings of one
snapshot moved with a ``scene.patch``).

    python -m bench.rejudge_bench [--rulings 100000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bridge.demo import play
from bridge.log.records import RulingRecord
from bridge.log.rejudge import Rejudge
from bridge.log.sqlite import SqliteLogStore

SNAPSHOT_EVERY = 500
BATCH = 2_000


async def _demo_records(scratch: Path) -> list[RulingRecord]:
    await play("en", log_dir=scratch)
    store = SqliteLogStore(scratch / "sightline.db")
    await store.connect()
    try:
        (session,) = await store.list_sessions()
        return [r async for r in store.export(session.world, session.id)]
    finally:
        await store.close()


def _variant(base: RulingRecord, index: int, start: datetime) -> RulingRecord:
    """The demo ruling ``base`` as the ``index``-th ruling: tokens shifted, its snapshot every 500."""
    assert base.snapshot is not None and base.situation is not None
    round_ = index // 13
    dx, dy = (round_ % 9) * 7, (round_ % 5) * 5
    tokens = [{**t, "x": t["x"] + dx, "y": t["y"] + dy} for t in base.situation["tokens"]]
    era = index // SNAPSHOT_EVERY
    snapshot = base.snapshot.model_copy(update={"key": f"{base.snapshot.key[:24]}{era:08d}", "name": f"Docks {era}"})
    return base.model_copy(
        update={
            "id": None,
            "session": None,
            "time": (start + timedelta(milliseconds=index)).isoformat(),
            "situation": {**base.situation, "tokens": tokens},
            "snapshot": snapshot,
        }
    )


async def build(path: Path, rulings: int) -> None:
    """An SQLite log at ``path`` with one session of ``rulings`` rulings."""
    with tempfile.TemporaryDirectory() as scratch:
        demo = await _demo_records(Path(scratch))
    store = SqliteLogStore(path)
    await store.connect()
    start = datetime.now(UTC) - timedelta(hours=1)
    try:
        for first in range(0, rulings, BATCH):
            batch = [_variant(demo[i % len(demo)], i, start) for i in range(first, min(first + BATCH, rulings))]
            await store.append_many(batch)
    finally:
        await store.close()


async def judge(path: Path, limit: int) -> dict[str, Any]:
    """Stream the first ``limit`` rulings of the log's session through :class:`Rejudge` (as the command)."""
    store = SqliteLogStore(path)
    await store.connect()
    judged = changed = 0
    try:
        (session,) = await store.list_sessions()
        rejudge = Rejudge(edition="1.3")
        began = time.perf_counter()
        async for outcome in rejudge.outcomes(store.export(session.world, session.id)):
            judged += 1
            changed += outcome.status == "changed"
            if judged >= limit:
                break
        seconds = time.perf_counter() - began
    finally:
        await store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "rulings": judged,
        "changed": changed,
        "seconds": round(seconds, 2),
        "per_s": round(judged / seconds),
        "peak_rss_mib": round(peak, 1),
    }


async def baseline(path: Path, limit: int) -> dict[str, float]:
    """The command's way against a fresh session and ``scene.sync`` per ruling, on ``limit`` rulings."""
    store = SqliteLogStore(path)
    await store.connect()
    try:
        (session,) = await store.list_sessions()
        records: list[RulingRecord] = []
        async for record in store.export(session.world, session.id):
            records.append(record)
            if len(records) >= limit:
                break
    finally:
        await store.close()
    began = time.perf_counter()
    for record in records:
        (outcome,) = Rejudge(edition="1.3").judge_all([record])
    naive = time.perf_counter() - began
    began = time.perf_counter()
    for outcome in Rejudge(edition="1.3").judge_all(records):
        assert outcome.status != "untranslatable"
    held = time.perf_counter() - began
    return {
        "rulings": len(records),
        "naive_s": round(naive, 2),
        "held_s": round(held, 2),
        "ratio": round(naive / held, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rulings", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--judge", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.judge is not None:  # the child process: one size, its own peak RSS
        print(json.dumps(asyncio.run(judge(args.judge, args.limit))))
        return
    with tempfile.TemporaryDirectory(prefix="sightline-rejudge-bench-") as scratch:
        db = Path(scratch) / "sightline.db"
        began = time.perf_counter()
        asyncio.run(build(db, args.rulings))
        built = time.perf_counter() - began
        sizes = sorted({min(args.rulings, n) for n in (1_000, 10_000, args.rulings)})
        rows = []
        for size in sizes:
            done = subprocess.run(
                [sys.executable, "-m", "bench.rejudge_bench", "--judge", str(db), "--limit", str(size)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(done.stdout))
        base = asyncio.run(baseline(db, min(2_000, args.rulings)))
        size_mib = db.stat().st_size / 2**20
    if args.json:
        print(json.dumps({"built_s": round(built, 1), "log_mib": round(size_mib, 1), "runs": rows, "baseline": base}))
        return
    print(f"log of {args.rulings} rulings built in {built:.1f} s ({size_mib:.1f} MiB)")
    print(f"{'rulings':>9} {'seconds':>8} {'per s':>7} {'changed':>8} {'peak RSS MiB':>13}")
    for row in rows:
        print(
            f"{row['rulings']:>9} {row['seconds']:>8} {row['per_s']:>7} {row['changed']:>8} {row['peak_rss_mib']:>13}"
        )
    print(
        f"baseline ({base['rulings']} rulings): a fresh session and sync per ruling {base['naive_s']} s, "
        f"one scene held {base['held_s']} s: {base['ratio']}x"
    )


if __name__ == "__main__":
    main()
