"""Reading the largest session against a real bridge: what another world's pings wait meanwhile.

    .venv/bin/python -m bench.export_bench [--patches 1000] [--tokens 200] [--seconds 6] [--source DIR]

The session is the patch storm of :mod:`bench.snapshot_bench` (``--patches`` ``scene.patch`` messages of a
``--tokens``-token scene with 40 zones and 400 walls, each followed by a logged ruling), written into the
SQLite log of a temporary data directory. Then a real bridge (``python -m bridge serve``, its defaults;
``--source`` runs another checkout's bridge on the same log, for a before/after) serves that directory,
and for each way of reading the session — the JSONL, CSV and Markdown exports, a 1,000-ruling API page
and the session page of 1,000 rulings — an HTTP client reads it again and again for ``--seconds``, while
another world, in a process of its own, pings the bridge over its WebSocket every 20 ms.

Printed per reading: how many times it was read and how many bytes one reading is, and the other world's
ping round trip p50 / p99 / max. The first row is the quiet world alone (the baseline, same run). Loopback
only; client, pinger and bridge share the machine, so the figures move with its load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.hostile import Bridge
from bench.snapshot_bench import WORLD
from bench.snapshot_bench import run as storm
from bridge.log.sqlite import SqliteLogStore

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Row:
    name: str
    reads: int
    size: int
    lines: int  # line breaks in one reading (JSONL: one per record)
    p50: float
    p99: float
    worst: float


def start_pinger(bridge: Bridge, seconds: float) -> subprocess.Popen[str]:
    """The other world in a process of its own (the same pinger as ``bench.hostile``)."""
    command = [sys.executable, "-m", "bench.hostile", "--pinger", bridge.url, bridge.secret, str(seconds)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)


async def read_while_pinged(bridge: Bridge, name: str, path: str | None, seconds: float) -> Row:
    """``path`` read again and again (nothing: the quiet world alone) while the other world pings."""
    pinger = start_pinger(bridge, seconds)
    await asyncio.sleep(0.5)  # the pinger is connected
    end = time.perf_counter() + seconds - 1.0
    reads = size = lines = 0
    headers = {"Authorization": f"Bearer {bridge.secret}"}
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as client:
        while path is not None and time.perf_counter() < end:
            size = lines = 0
            async with client.get(bridge.http + path) as response:
                response.raise_for_status()
                async for chunk in response.content.iter_chunked(1 << 16):
                    size += len(chunk)
                    lines += chunk.count(b"\n")
            reads += 1
    out, _ = await asyncio.to_thread(pinger.communicate)
    rtts = sorted(json.loads(out))
    return Row(
        name,
        reads,
        size,
        lines,
        1000 * statistics.median(rtts),
        1000 * rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))],
        1000 * rtts[-1],
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| reading the largest session | reads | bytes per read | other world's ping p50 / p99 / max |",
        "|---|---|---|---|",
    ]
    for r in rows:
        size = f"{r.size:,}" if r.reads else "—"
        lines.append(f"| {r.name} | {r.reads} | {size} | {r.p50:.1f} / {r.p99:.1f} / {r.worst:.1f} ms |")
    return "\n".join(lines)


async def fill(data_dir: Path, patches: int, tokens: int, seed: int) -> tuple[str, int]:
    """The patch storm logged into ``data_dir``'s SQLite log; the session's id and its rulings."""
    store = SqliteLogStore(data_dir / "sightline.db")
    await store.connect()
    try:
        await storm(store, patch_count=patches, tokens=tokens, seed=seed)
        sessions = await store.list_sessions(WORLD)
    finally:
        await store.close()
    biggest = max(sessions, key=lambda s: s.rulings)
    return biggest.id, biggest.rulings


async def main_async(args: argparse.Namespace) -> tuple[int, list[Row]]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        session, rulings = await fill(data_dir, args.patches, args.tokens, args.seed)
        bridge = Bridge(data_dir, Path(args.source).resolve())
        base = f"/api/worlds/{WORLD}/sessions/{session}"
        readings: list[tuple[str, str | None]] = [
            ("(the quiet world alone)", None),
            ("export.jsonl (every record with its snapshot)", f"{base}/export.jsonl"),
            ("export.csv", f"{base}/export.csv"),
            ("export.md", f"{base}/export.md"),
            ("API page of 1,000 rulings", f"{base}/rulings?limit=1000"),
            ("session page of 1,000 rulings", f"/log/{WORLD}/{session}?limit=1000"),
        ]
        rows = []
        try:
            for name, path in readings:
                if args.only and path is not None and args.only not in name:
                    continue
                rows.append(await read_while_pinged(bridge, name, path, args.seconds))
                if not args.json:
                    print(table(rows[-1:]).splitlines()[-1], flush=True)
        finally:
            bridge.stop()
    return rulings, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.export_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--patches", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=6.0, help="how long each reading is repeated")
    parser.add_argument("--only", help="run only the readings whose name contains this (and the baseline)")
    parser.add_argument("--source", default=str(ROOT), help="the checkout whose bridge serves (default: this one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rulings, rows = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps({"rulings": rulings, "rows": [vars(row) for row in rows]}))
        return 0
    print()
    print(f"{rulings:,} rulings in the session")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
