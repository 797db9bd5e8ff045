"""Benchmark of the adjudication log: write and query a large log (default 1,000,000 records).

    .venv/bin/python bench/log_bench.py [--records N] [--batch B] [--naive K] [--database postgresql://…]

Without ``--database`` it runs on an SQLite file in a temporary directory (WAL, synchronous=FULL, as
the bridge runs it). Each figure is printed beside a baseline measured in the same process:

- writes: one commit per record (``append``, what a live bridge does per ruling) against batched
  commits (``append_many``);
- reads: keyset pages (what the API does) against ``OFFSET`` pages at the same depth; an actor filter
  through its index against the same filter with the index disabled (SQLite only: ``+actor_id``);
- sorted orders: a page of 100 (first, middle by cursor, last) by actor, -target and MOD against the same
  pages in time order, each with its query plan (does the page walk an index, or read and sort the session?);
- export: records per second streamed through the CSV writer, and the process's peak memory
  before and after, to show the export never holds the log.

A benchmark, not a test: it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bridge.log.export import csv_chunks
from bridge.log.postgres import PostgresLogStore
from bridge.log.records import Party, RulingRecord, SceneSnapshot
from bridge.log.sql import _SORT_EXPRESSIONS, SqlLogStore
from bridge.log.sqlite import SqliteLogStore
from bridge.log.store import LAST_PAGE, RulingFilter, encode_cursor, encode_sorted_cursor

WORLD = "w-bench"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
ACTIONS = ("bs-attack", "dodge", "discover", "speculative-attack", "hacking")
SNAPSHOTS = [
    SceneSnapshot(
        key=f"bench-snapshot-{n}",
        scene="s-bench",
        name="Bench",
        grid={"size": 100, "distance": 1, "units": "in"},
        regions=[
            {
                "id": f"r-{k}",
                "name": f"Zone {k}",
                "shapes": [{"type": "circle", "x": 300 * k, "y": 400, "radius": 120, "hole": False}],
                "zone": {"type": "poor"},
            }
            for k in range(6)
        ],
        walls=[{"id": "w1", "c": [1000, 0, 1000, 600 + n], "sight": 20}],
    )
    for n in range(20)
]


def make_record(n: int) -> RulingRecord:
    """Record ``n`` of the benchmark's log: 50 actors, 50 targets, one second apart."""
    allowed = n % 5 != 0
    return RulingRecord(
        time=(T0 + timedelta(seconds=n)).isoformat(),
        world=WORLD,
        scene="s-bench",
        request=f"a{n}",
        user=Party(id="u1", name="Gamemaster"),
        actor=Party(id=f"t-actor-{n % 50}", name=f"Actor {n % 50}"),
        target=Party(id=f"t-target-{n % 47}", name=f"Target {n % 47}"),
        action=ACTIONS[n % len(ACTIONS)],
        ruleset="infinity-n4",
        edition="current",
        allowed=allowed,
        modifier=-3 * (n % 3) if allowed else None,
        crossings=[{"region": "r-1", "zone": "poor", "kind": "through"}],
        modifiers=[
            {
                "source": "zone",
                "region": "r-1",
                "zone": "poor",
                "value": -6,
                "applied": True,
                "label": "Poor",
            },
            {"source": "zone", "region": "r-2", "zone": "low", "value": -3, "applied": False, "label": "Low"},
        ],
        notes=["Visibility Zone MODs never stack"],
        citations=["002_38ee4d299a054ffc.txt: Visibility Zone MODs never stack"],
        line={"start": {"x": 100, "y": 200, "z": 0}, "end": {"x": 1800, "y": 400 + n % 100, "z": 1}},
        snapshot=SNAPSHOTS[n // 5000 % len(SNAPSHOTS)],
    )


def batches(start: int, stop: int, size: int) -> Iterator[list[RulingRecord]]:
    for first in range(start, stop, size):
        yield [make_record(n) for n in range(first, min(first + size, stop))]


async def timed(label: str, action: Callable[[], Awaitable[object]], repeat: int = 5) -> float:
    """Best of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        await action()
        best = min(best, time.perf_counter() - started)
    print(f"  {label:<58} {best * 1000:10.2f} ms")
    return best


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def bench(store: SqlLogStore, *, records: int, batch: int, naive: int, dialect: str) -> None:
    print(f"\n== {dialect}: {records:,} records")
    print("writes")
    started = time.perf_counter()
    for record in (make_record(n) for n in range(naive)):
        await store.append(record)
    naive_rate = naive / (time.perf_counter() - started)
    print(f"  one commit per record (append) x{naive:,}: {naive_rate:12,.0f} records/s (durable commit each)")
    started = time.perf_counter()
    written = naive
    for chunk in batches(naive, records, batch):
        await store.append_many(chunk)
        written += len(chunk)
        if sys.stderr.isatty():
            print(f"\r  writing {written:,}/{records:,}", end="", file=sys.stderr)
    batched = time.perf_counter() - started
    if sys.stderr.isatty():
        print(file=sys.stderr)
    batched_rate = (records - naive) / batched
    print(f"  batched commits (append_many, {batch}/commit) x{records - naive:,}: {batched_rate:12,.0f} records/s")
    print(f"  ratio batched / one-per-commit: {batched_rate / naive_rate:.1f}x  (total {batched:.1f} s)")

    session = (await store.list_sessions(WORLD))[0]
    print(f"reads (session of {session.rulings:,} rulings; best of 5)")
    depth = records * 9 // 10
    async with store._read() as db:
        rows = await db.fetch(
            "SELECT id FROM rulings WHERE session = ? ORDER BY id LIMIT 1 OFFSET ?", session.id, depth - 1
        )
    cursor = encode_cursor(str(rows[0][0]))

    first = await timed("first page, 100 (keyset)", lambda: store.query(WORLD, session.id, limit=100))
    deep = await timed(
        f"page at record {depth:,}, 100 (keyset cursor)",
        lambda: store.query(WORLD, session.id, limit=100, cursor=cursor),
    )

    async def offset_page() -> object:
        async with store._read() as db:
            return await db.fetch(
                "SELECT id, body, snapshot FROM rulings WHERE world = ? AND session = ? ORDER BY id LIMIT 100 OFFSET ?",
                WORLD,
                session.id,
                depth,
            )

    offset = await timed(f"page at record {depth:,}, 100 (OFFSET, baseline)", offset_page, repeat=3)
    print(f"  ratio OFFSET / keyset at depth: {offset / deep:.0f}x  (first page {first * 1000:.1f} ms)")

    actor = RulingFilter(actor="t-actor-7")
    filtered = await timed(
        "actor, first 100 (indexed)",
        lambda: store.query(WORLD, session.id, filters=actor, limit=100),
    )
    # Partial filters resolve to exact values through the session's indexes (one seek per distinct value):
    # a text matching nothing answers as fast as one matching many.
    nobody = RulingFilter(actor="nobody at all")
    await timed("actor matching nothing (partial filter)", lambda: store.query(WORLD, session.id, filters=nobody))
    await timed("the page's filter choices and scene names", lambda: store.choices(WORLD, session.id))
    timed_filter = RulingFilter(since=T0 + timedelta(seconds=depth), until=T0 + timedelta(seconds=depth + 3600))
    await timed("one hour at 90% depth (time range)", lambda: store.query(WORLD, session.id, filters=timed_filter))
    if dialect == "sqlite":

        async def unindexed() -> object:
            async with store._read() as db:
                return await db.fetch(
                    "SELECT id, body, snapshot FROM rulings NOT INDEXED WHERE world = ? AND session = ? "
                    "AND (+actor_id = ? OR +actor_name = ?) ORDER BY id LIMIT 100",
                    WORLD,
                    session.id,
                    "t-actor-7",
                    "t-actor-7",
                )

        scan = await timed("actor, first 100 (no index, baseline)", unindexed, repeat=3)
        print(f"  ratio unindexed / indexed: {scan / filtered:.0f}x")

    await sorted_orders(store, session.id, session.rulings)

    print("export (CSV writer over export(), batches of 500)")
    before = peak_rss_mb()
    started = time.perf_counter()
    count = 0
    size = 0

    async def counted(records: AsyncIterator[RulingRecord]) -> AsyncIterator[RulingRecord]:
        """The records as they go into the writer, counted (its chunks hold many rows each)."""
        nonlocal count
        async for record in records:
            count += 1
            yield record

    async for chunk in csv_chunks(counted(store.export(WORLD, session.id))):
        size += len(chunk)
    took = time.perf_counter() - started
    print(f"  {count:,} records, {size / 1e6:,.0f} MB of CSV in {took:.1f} s: {count / took:,.0f} records/s")
    print(f"  peak RSS before export {before:,.0f} MB, after {peak_rss_mb():,.0f} MB")


#: The sorted orders measured, against time order.
SORTED_ORDERS = ("time", "actor", "-target", "mod")


async def middle_cursor(store: SqlLogStore, session: str, order: str, rulings: int) -> str:
    """The cursor of the ruling halfway through the session in ``order`` (found with OFFSET, untimed)."""
    expression = _SORT_EXPRESSIONS[order.lstrip("-")]
    way = " DESC" if order.startswith("-") else ""
    sort = f"{expression}{way}, id{way}" if expression else f"id{way}"
    async with store._read() as db:
        rows = await db.fetch(
            f"SELECT id, {expression or 'id'} FROM rulings WHERE world = ? AND session = ? ORDER BY {sort}"
            " LIMIT 1 OFFSET ?",
            WORLD,
            session,
            rulings // 2,
        )
    record_id, value = str(rows[0][0]), rows[0][1]
    return encode_cursor(record_id) if expression is None else encode_sorted_cursor(value, record_id)


async def sorted_orders(store: SqlLogStore, session: str, rulings: int) -> None:
    """A page of 100 in each sorted order (first, middle by cursor, last), against time order, and its plan."""
    print(f"sorted orders (a page of 100 of {rulings:,} rulings; best of 5)")
    times: dict[str, list[float]] = {}
    for order in SORTED_ORDERS:
        middle = await middle_cursor(store, session, order, rulings)
        pages = {"first": {}, "middle": {"cursor": middle}, "last": {"before": LAST_PAGE}}
        times[order] = []
        for name, where in pages.items():

            async def page(where: dict[str, str] = where, order: str = order) -> object:
                return await store.query(WORLD, session, limit=100, snapshots=False, order=order, **where)

            times[order].append(await timed(f"{order:>8}: {name} page", page))
        plan = await store.page_plan(WORLD, session, limit=100, cursor=middle, order=order)
        print("           plan of the middle page: " + " | ".join(line.strip() for line in plan))
    # A filter and an order together: the planner picks the filter's index (then sorts the few rows it finds) or
    # the order's (then skips the rows the filter refuses); either should stay far below reading the session.
    hour = T0 + timedelta(seconds=rulings * 9 // 10)
    cases = {
        "one actor in 50": RulingFilter(actor="t-actor-7"),
        "one hour at 90% depth": RulingFilter(since=hour, until=hour + timedelta(hours=1)),
    }
    for label, wanted in cases.items():

        async def filtered(wanted: RulingFilter = wanted) -> object:
            return await store.query(WORLD, session, filters=wanted, limit=100, snapshots=False, order="-target")

        await timed(f"{label}, by -target: first page", filtered)
        plan = await store.page_plan(WORLD, session, filters=wanted, limit=100, order="-target")
        print("           plan: " + " | ".join(line.strip() for line in plan))
    base = times["time"]
    for order in SORTED_ORDERS[1:]:
        ratios = ", ".join(f"{t / b:.1f}x" for t, b in zip(times[order], base, strict=True))
        print(f"  {order} / time (first, middle, last): {ratios}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=1000, help="records per commit in the batched run")
    parser.add_argument("--naive", type=int, default=2000, help="records written one commit each (baseline)")
    parser.add_argument("--database", help="postgresql://… to run against PostgreSQL as well (an empty database)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sightline-bench-") as tmp:
        store: SqlLogStore = SqliteLogStore(Path(tmp) / "bench.db")
        await store.connect()
        try:
            await bench(store, records=args.records, batch=args.batch, naive=args.naive, dialect="sqlite")
            size = sum(p.stat().st_size for p in Path(tmp).iterdir())
            print(f"  database files: {size / 1e6:,.0f} MB")
        finally:
            await store.close()
    if args.database:
        store = PostgresLogStore(args.database)
        await store.connect()
        try:
            await bench(store, records=args.records, batch=args.batch, naive=args.naive, dialect="postgresql")
        finally:
            await store.close()


if __name__ == "__main__":
    asyncio.run(main())
