"""Bounded load test on loopback: many connections across many worlds, a table-like mix of traffic.

``python -m bench.load [--seconds 60] [--connections 200] [--worlds 50] [--rate 2.0] [--database URL]``

Starts ``sightline serve --port 0`` as a child process with a fresh data directory, opens the
connections (spread evenly over the worlds; the first of each world syncs its scene), then for the
given time each connection sends, at ``rate`` messages per second with jitter, a mix of token moves
(``scene.patch``, 30 %), logged rulings (``adjudicate`` with ``log: true``, 40 %), previews (``log:
false``, 25 %) and pings (5 %). It checks that every request is answered, with no error, and samples the
bridge's resident memory every second. Everything stays on 127.0.0.1 and stops by itself.

Printed: requests, errors, unanswered, latency p50/p99/max, throughput, and the bridge's memory in the
measured window's middle third against its last third (flat = within 5 %; the first third is warm-up),
with a sample every 5 s. The same numbers as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

SIGHTLINE = str(Path(sys.executable).parent / "sightline")


def scene(world: int) -> dict[str, Any]:
    """A small Infinity scene: 12 tokens, 8 zones, 6 walls."""
    rng = random.Random(world)
    zones = ["low", "poor", "zero", "white-noise", "smoke", "low", "poor", "eclipse"]
    regions = [
        {
            "id": f"r{i}",
            "shapes": [
                {"type": "rectangle", "x": rng.uniform(0, 2500), "y": rng.uniform(0, 2500), "width": 300, "height": 200}
            ],
            "zone": {"type": zones[i]},
        }
        for i in range(8)
    ]
    tokens = [
        {"id": f"t{i}", "name": f"T{i}", "x": rng.uniform(0, 2900), "y": rng.uniform(0, 2900), "traits": []}
        for i in range(12)
    ]
    walls = [{"id": f"w{i}", "c": [rng.uniform(0, 3000) for _ in range(4)], "sight": 20} for i in range(6)]
    return {
        "id": "s",
        "name": f"World {world}",
        "grid": {"size": 100, "distance": 1, "units": "in"},
        "rules": {"ruleset": "infinity-n4"},
        "regions": regions,
        "tokens": tokens,
        "walls": walls,
    }


@dataclass
class Stats:
    sent: int = 0
    answered: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    logged: int = 0


class Client:
    """One connection: sends requests, matches answers by id, times them."""

    def __init__(self, ws: ClientConnection, name: str, stats: Stats) -> None:
        self.ws, self.name, self.stats = ws, name, stats
        self.pending: dict[str, float] = {}
        self.counter = 0

    async def request(self, message: dict[str, Any]) -> None:
        self.counter += 1
        message["id"] = f"{self.name}-{self.counter}"
        self.pending[message["id"]] = time.perf_counter()
        self.stats.sent += 1
        await self.ws.send(json.dumps(message))

    async def read(self) -> None:
        async for frame in self.ws:
            answer = json.loads(frame)
            started = self.pending.pop(answer.get("id"), None)
            if started is None:
                continue
            self.stats.answered += 1
            self.stats.latencies.append(time.perf_counter() - started)
            if answer["type"] == "error":
                self.stats.errors.append(answer)
            elif answer.get("logged"):
                self.stats.logged += 1


async def open_client(url: str, world: int, index: int, secret: str, stats: Stats) -> Client:
    ws = await connect(url, max_size=None)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": f"w{world}", "secret": secret}))
    welcome = json.loads(await ws.recv())
    if welcome["type"] != "welcome":
        raise RuntimeError(f"hello refused: {welcome}")
    return Client(ws, f"c{index}", stats)


async def drive(client: Client, world: int, until: float, rate: float, rng: random.Random) -> None:
    while time.perf_counter() < until:
        await asyncio.sleep(rng.expovariate(rate))
        roll = rng.random()
        a, b = rng.sample(range(12), 2)
        if roll < 0.30:
            token = {"id": f"t{a}", "name": f"T{a}", "x": rng.uniform(0, 2900), "y": rng.uniform(0, 2900)}
            await client.request({"type": "scene.patch", "scene": "s", "upsert": {"tokens": [token]}})
        elif roll < 0.95:
            action = rng.choice(["bs-attack", "bs-attack", "discover", "dodge", "speculative-attack"])
            await client.request(
                {
                    "type": "adjudicate",
                    "scene": "s",
                    "actor": f"t{a}",
                    "target": f"t{b}",
                    "action": action,
                    "log": roll < 0.70,
                }
            )
        else:
            await client.request({"type": "ping"})


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def run(seconds: float, connections: int, worlds: int, rate: float, database: str | None) -> dict[str, Any]:
    secret = secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory() as data_dir:
        command = [
            SIGHTLINE,
            "serve",
            "--port",
            "0",
            "--data-dir",
            data_dir,
            f"--secret={secret}",  # (a random secret may start with "-")
            "--max-connections-per-world",
            str(connections),
        ]
        if database:
            command += ["--database", database]
        bridge = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={**os.environ})
        try:
            assert bridge.stdout is not None
            url = ""
            while not url:
                line = bridge.stdout.readline()
                if not line:
                    raise RuntimeError("the bridge exited before listening")
                if "ws://" in line:
                    url = line.split()[-1]
            stats = Stats()
            clients = [await open_client(url, i % worlds, i, secret, stats) for i in range(connections)]
            readers = [asyncio.create_task(c.read()) for c in clients]
            for world in range(worlds):
                await clients[world].request({"type": "scene.sync", "scene": scene(world)})
            while stats.answered < worlds:
                await asyncio.sleep(0.05)
            stats.latencies.clear()
            memory: list[int] = []
            start = time.perf_counter()
            until = start + seconds

            async def sample() -> None:
                while time.perf_counter() < until:
                    memory.append(rss_kib(bridge.pid))
                    await asyncio.sleep(1.0)

            rng = random.Random(7)
            await asyncio.gather(
                sample(),
                *(drive(c, i % worlds, until, rate, random.Random(rng.random())) for i, c in enumerate(clients)),
            )
            deadline = time.perf_counter() + 10
            while any(c.pending for c in clients) and time.perf_counter() < deadline:
                await asyncio.sleep(0.05)
            elapsed = time.perf_counter() - start
            unanswered = sum(len(c.pending) for c in clients)
            for c in clients:
                await c.ws.close()
            for r in readers:
                r.cancel()
        finally:
            bridge.terminate()
            bridge.wait(timeout=15)
            if bridge.stdout is not None:
                bridge.stdout.close()
    lat = sorted(stats.latencies)
    third = max(1, len(memory) // 3)  # the first third is warm-up (caches, allocator arenas)
    early, late = statistics.mean(memory[third : 2 * third] or memory), statistics.mean(memory[-third:])
    return {
        "seconds": seconds,
        "connections": connections,
        "worlds": worlds,
        "requests": stats.sent - worlds,
        "answered": stats.answered - worlds,
        "unanswered": unanswered,
        "errors": len(stats.errors),
        "error_samples": stats.errors[:3],
        "logged": stats.logged,
        "throughput_per_s": round((stats.answered - worlds) / elapsed, 1),
        "latency_ms": {
            "p50": round(1000 * lat[len(lat) // 2], 2) if lat else None,
            "p99": round(1000 * lat[int(len(lat) * 0.99)], 2) if lat else None,
            "max": round(1000 * lat[-1], 2) if lat else None,
        },
        "rss_mib": {
            "middle_third": round(early / 1024, 1),
            "last_third": round(late / 1024, 1),
            "every_5s": [round(m / 1024, 1) for m in memory[::5]],
        },
        "memory_flat": late <= early * 1.05,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--worlds", type=int, default=50)
    parser.add_argument("--rate", type=float, default=2.0, help="messages per second per connection")
    parser.add_argument("--database", help="postgresql://… to log to PostgreSQL instead of SQLite")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.seconds, args.connections, args.worlds, args.rate, args.database))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")
    ok = result["errors"] == 0 and result["unanswered"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
