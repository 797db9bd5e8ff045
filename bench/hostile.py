"""A hostile world against a real bridge: what its costliest messages cost, and what another world waits.

``python -m bench.hostile [--seconds 5] [--only NAME ...] [--repeat N]``

A real ``sightline serve`` child process runs with its default limits. For each kind of message, the
hostile world (holding a valid secret) builds the costliest one those limits let through — frames at
the frame limit, polygons at the vertex limits, curves of radius 10⁸, a watch of the most segment tests, a
``"best"`` scene at the most line tests, frames at four times the frame limit (read, then refused), logged
rulings whose records or snapshots are the largest a small message can make — and sends it again and
again, one after another, for the given time (a new scene version each time where the bridge would
otherwise answer from its cache).
Meanwhile another process, holding another world, pings the bridge every 20 ms.

Printed per kind: the bridge process's CPU time per hostile message (from ``/proc``), the answer it
got (``ok`` or the error code), and the quiet world's ping round trip p50 / p99 / max over the run and how many
of its pings took over 10 ms.
The first row is the quiet world alone. Loopback only; the client and the bridge share the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from bench.visibility_bench import make_scene
from bridge.config import BridgeConfig

SIGHTLINE = str(Path(sys.executable).parent / "sightline")
DEFAULTS = BridgeConfig()
FRAME = DEFAULTS.max_frame_bytes
PING_EVERY = 0.02
#: A ping slower than this (seconds) is counted: a quiet world alone answers in 1-3 ms.
SLOW = 0.010


# --- The bridge and the quiet world ---------------------------------------------------------------


class Bridge:
    """``sightline serve`` with its defaults on a free loopback port, in a temporary data directory or over
    ``data_dir``; the installed command, or ``python -m bridge`` from the checkout ``source`` when given."""

    def __init__(self, data_dir: Path | None = None, source: Path | None = None) -> None:
        self.secret = "s" + secrets.token_urlsafe(12)  # never starting with "-" (an option to argparse)
        self.tmp = tempfile.TemporaryDirectory() if data_dir is None else None
        env = {**os.environ, "SIGHTLINE_DATA_DIR": str(data_dir) if self.tmp is None else self.tmp.name}
        serve = ["serve", "--port", "0", f"--secret={self.secret}"]
        if source is None:
            command = [SIGHTLINE, *serve]
        else:
            env["PYTHONPATH"] = str(source)
            command = [sys.executable, "-m", "bridge", *serve]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=source)
        assert self.process.stdout is not None
        line = ""
        while "ws://" not in line:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the bridge did not start")
        self.url = line.split()[-1]
        self.http = "http://" + urlsplit(self.url).netloc

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        if self.tmp is not None:
            self.tmp.cleanup()


async def hello(ws: ClientConnection, world: str, secret: str) -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": secret}))
    answer = json.loads(await ws.recv())
    if answer["type"] != "welcome":
        raise RuntimeError(f"hello refused: {answer}")


async def ping_for(url: str, secret: str, seconds: float) -> list[float]:
    """The quiet world: one ping every 20 ms for ``seconds``; round trips in seconds."""
    rtts: list[float] = []
    async with connect(url) as ws:
        await hello(ws, "w-quiet", secret)
        end = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < end:
            n += 1
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "ping", "id": f"p{n}"}))
            await ws.recv()
            rtts.append(time.perf_counter() - sent)
            await asyncio.sleep(max(0.0, PING_EVERY - (time.perf_counter() - sent)))
    return rtts


def start_pinger(bridge: Bridge, seconds: float) -> subprocess.Popen[str]:
    """The quiet world in a process of its own: its timing never waits for this script's parsing."""
    command = [sys.executable, "-m", "bench.hostile", "--pinger", bridge.url, bridge.secret, str(seconds)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


# --- The hostile messages ---------------------------------------------------------------------------


def base_scene(scene_id: str, **extra: Any) -> dict[str, Any]:
    scene: dict[str, Any] = {
        "id": scene_id,
        "grid": {"size": 100, "distance": 1},
        "rules": {"ruleset": "infinity-n4", "edition": "current", "locale": "en"},
        "regions": [],
        "tokens": [
            {"id": "a", "x": 0, "y": 5000, "width": 1, "height": 1},
            {"id": "t", "x": 9900, "y": 5000, "width": 1, "height": 1},
        ],
        "walls": [],
    }
    scene.update(extra)
    return scene


def fill_frame(make: Callable[[int], dict[str, Any]], most: int, room: int = FRAME - 64 * 1024) -> int:
    """The largest ``n`` ≤ ``most`` whose message ``make(n)`` fits in ``room`` bytes."""
    low, high = 1, most
    while low < high:
        middle = (low + high + 1) // 2
        if len(json.dumps(make(middle))) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def star(cx: float, cy: float, vertices: int, radius: float) -> list[float]:
    """A simple (never self-crossing) polygon of ``vertices`` points: radii alternating 1 and 0.8."""
    points: list[float] = []
    for k in range(vertices):
        angle = 2 * math.pi * k / vertices
        r = radius * (1.0 if k % 2 == 0 else 0.8)
        points += [round(cx + r * math.cos(angle), 1), round(cy + r * math.sin(angle), 1)]
    return points


def zigzag(cx: float, cy: float, vertices: int, size: float) -> list[float]:
    """A polygon whose edges cross each other (the issue's attack): points alternate across a line."""
    points: list[float] = []
    for k in range(vertices):
        points += [round(cx - size + 2 * size * k / vertices, 1), round(cy + (size if k % 2 else -size), 1)]
    return points


def zone(region_id: str, shape: dict[str, Any], kind: str = "poor") -> dict[str, Any]:
    return {"id": region_id, "shapes": [{**shape, "hole": False}], "zone": {"type": kind}}


def watch_scene() -> tuple[dict[str, Any], int, str]:
    """The costliest watch the default limits let through: tokens on both sides of a row of star zones that
    every line between the two sides crosses, with as many zone vertices as pairs × (vertices + walls)
    allows. Returns the scene, its token count and what it holds."""
    ring = DEFAULTS.max_ring_vertices
    watch_tokens = int((1 + math.sqrt(1 + 4 * DEFAULTS.max_watch_pairs)) / 2)
    segments = DEFAULTS.max_watch_tests // (watch_tokens * (watch_tokens - 1)) - 4 * watch_tokens
    watch_zones = -(-segments // ring)
    watch_zone_vertices = segments // watch_zones
    watched_scene = base_scene(
        "watched",
        regions=[
            zone(
                f"z{i}",
                {"type": "polygon", "points": star(3000 + 4000 * i / watch_zones, 5050, watch_zone_vertices, 1500.0)},
            )
            for i in range(watch_zones)
        ],
        tokens=[
            {"id": f"t{i}", "x": 0 if i % 2 else 9900, "y": 3000 + 40 * (i // 2), "width": 1, "height": 1}
            for i in range(watch_tokens)
        ],
    )
    pairs = watch_tokens * (watch_tokens - 1)
    tests = pairs * (watch_zones * watch_zone_vertices + 4 * watch_tokens)
    held = f"{watch_tokens} tokens ({pairs:,} pairs) across {watch_zones} zones × {watch_zone_vertices:,} vertices"
    return watched_scene, watch_tokens, f"{held} ({tests:,} segment tests)"


@dataclass
class Attack:
    name: str
    limits: str
    setup: list[dict[str, Any]]
    step: Callable[[int], list[dict[str, Any] | str]]  # the messages of the n-th repetition (a str: as it is)


def attacks() -> list[Attack]:
    ring = DEFAULTS.max_ring_vertices

    def polygons(n: int, version: int = 0) -> dict[str, Any]:
        regions = [
            zone(f"z{i}", {"type": "polygon", "points": star(200 + 9600 * i / n, 5050, ring, 150.0)}) for i in range(n)
        ]
        return base_scene("polygons", regions=regions, name=f"v{version}")

    n_polygons = fill_frame(polygons, DEFAULTS.max_vertices // ring)

    def crossing(n: int) -> dict[str, Any]:
        regions = [
            zone(f"z{i}", {"type": "polygon", "points": zigzag(200 + 9600 * i / n, 5050, ring, 150.0)})
            for i in range(n)
        ]
        return base_scene("crossing", regions=regions)

    n_crossing = fill_frame(crossing, DEFAULTS.max_regions)

    def circles(n: int) -> dict[str, Any]:
        regions = [zone(f"c{i}", {"type": "circle", "x": 5000 + i, "y": 5050, "radius": 1e8}) for i in range(n)]
        return base_scene("circles", regions=regions)

    n_circles = DEFAULTS.max_vertices // 4096  # curves are drawn with at most 4,096 vertices

    def walls_and_tokens(n: int) -> dict[str, Any]:
        tokens = [
            {"id": f"t{i}", "x": (i * 37) % 9900, "y": (i * 91) % 9900, "width": 1, "height": 1}
            for i in range(min(n, DEFAULTS.max_tokens))
        ]
        walls = [
            {"id": f"w{i}", "c": [(i * 13) % 9900, (i * 29) % 9900, (i * 13) % 9900 + 150, (i * 29) % 9900 + 90]}
            for i in range(n)
        ]
        return base_scene("flat", tokens=tokens, walls=walls)

    n_flat = fill_frame(walls_and_tokens, DEFAULTS.max_walls)

    table_scene = make_scene(50, 100, seed=1).model_dump(mode="json", exclude_none=True)
    table_tokens = table_scene["tokens"]

    def table_move(n: int) -> dict[str, Any]:
        token = {**table_tokens[n % len(table_tokens)], "x": (n * 397) % 9000, "y": (n * 631) % 9000}
        return {"type": "scene.patch", "id": f"m{n}", "scene": table_scene["id"], "upsert": {"tokens": [token]}}

    watched_scene, watch_tokens, watched = watch_scene()
    # As many full watches as one world may hold open (its connections' watches share --max-world-watch-pairs).
    full_watches = min(
        DEFAULTS.max_watches_per_connection, DEFAULTS.max_world_watch_pairs // (watch_tokens * (watch_tokens - 1))
    )

    # "best" lines: one pair, 81 sampled lines, as many zones and walls as the line tests allow.
    against = DEFAULTS.max_best_line_tests // 81
    best_regions = [
        zone(f"z{i}", {"type": "polygon", "points": star(200 + 9600 * i / against, 5050, 64, 40.0)})
        for i in range(against // 2)
    ]
    best_walls = [
        {"id": f"w{i}", "c": [200 + i * 7, 4000, 200 + i * 7, 4400], "sight": 10} for i in range(against - against // 2)
    ]
    best = base_scene("best", regions=best_regions, walls=best_walls)
    best["rules"] = {**best["rules"], "lines": "best"}

    def move(scene: str, n: int, token: str = "a") -> dict[str, Any]:
        return {
            "type": "scene.patch",
            "id": f"m{n}",
            "scene": scene,
            "upsert": {"tokens": [{"id": token, "x": n % 50, "y": 5000, "width": 1, "height": 1}]},
        }

    def adjudicate(scene: str, n: int) -> dict[str, Any]:
        return {
            "type": "adjudicate",
            "id": f"a{n}",
            "scene": scene,
            "actor": "a",
            "target": "t",
            "action": "bs-attack",
            "log": False,
        }

    def walls_only(n: int) -> dict[str, Any]:
        walls = [
            {"id": f"w{i}", "c": [(i * 13) % 9900, (i * 29) % 9900, (i * 13) % 9900 + 150, (i * 29) % 9900 + 90]}
            for i in range(n)
        ]
        return base_scene("walled", walls=walls)

    n_walls = min(fill_frame(walls_only, DEFAULTS.max_walls), DEFAULTS.max_walls)

    def logged(scene: str, n: int, **extra: Any) -> dict[str, Any]:
        return {**adjudicate(scene, n), "log": True, **extra}

    # A string option: every key of ``options`` is kept in the logged record (unknown keys only noted).
    big_option = "x" * (FRAME - 64 * 1024)

    def many_keys(n: int) -> dict[str, Any]:
        return {
            "type": "adjudicate",
            "id": "a",
            "scene": "small",
            "actor": "a",
            "target": "t",
            "action": "bs-attack",
            "options": {f"k{i}": i for i in range(n)},
        }

    n_keys = (FRAME - 64 * 1024) // len(' "k100000": 100000,')  # about what fills the frame

    # Every token lights the whole scene: each logged ruling's record keeps every one of them (names fill the frame).
    lit_scene = base_scene("lit")
    lit_scene["tokens"] += [
        {"id": f"l{i}", "name": "n" * 600, "x": (i * 37) % 9900, "y": (i * 91) % 9900, "light": {"radius": 1e6}}
        for i in range(DEFAULTS.max_tokens - 2)
    ]

    # The largest frame the bridge reads before refusing it (4 × the limit), of 3-byte characters.
    over = '{"type": "adjudicate", "id": "big", "options": {"note": "' + "\u20ac" * ((4 * FRAME - 1024) // 3) + '"}}'

    return [
        Attack(
            "polygon zones at the vertex limits",
            f"{n_polygons} zones × {ring:,} vertices (a frame of {FRAME >> 20} MiB), sync + adjudicate",
            [],
            lambda n: [
                {"type": "scene.sync", "id": f"s{n}", "scene": polygons(n_polygons, n)},
                adjudicate("polygons", n),
            ],
        ),
        Attack(
            "self-crossing polygons",
            f"{n_crossing} zigzag zones × {ring:,} vertices, sync",
            [],
            lambda n: [{"type": "scene.sync", "id": f"s{n}", "scene": crossing(n_crossing)}],
        ),
        Attack(
            "circles of radius 10⁸",
            f"{n_circles} circles (4,096 vertices each, {DEFAULTS.max_vertices:,} in all), sync + adjudicate",
            [],
            lambda n: [{"type": "scene.sync", "id": f"s{n}", "scene": circles(n_circles)}, adjudicate("circles", n)],
        ),
        Attack(
            "scene.sync at the frame limit",
            f"{min(n_flat, DEFAULTS.max_tokens):,} tokens + {n_flat:,} walls in one frame",
            [],
            lambda n: [{"type": "scene.sync", "id": f"s{n}", "scene": walls_and_tokens(n_flat)}],
        ),
        Attack(
            "watch at the most segment tests",
            f"{watched}; watch + unwatch",
            [{"type": "scene.sync", "id": "setup", "scene": watched_scene}],
            lambda n: [
                {"type": "watch", "id": f"w{n}", "scene": "watched", "action": "bs-attack"},
                {"type": "unwatch", "id": f"u{n}", "watch": f"w{n}"},
            ],
        ),
        Attack(
            "token moves under the most full watches",
            f"the scene above, {full_watches} watches open (the world's limit of pairs); one token moved per patch",
            [{"type": "scene.sync", "id": "setup", "scene": watched_scene}]
            + [
                {"type": "watch", "id": f"w{k}", "scene": "watched", "action": "bs-attack"} for k in range(full_watches)
            ],
            lambda n: [move("watched", n, token=f"t{n % watch_tokens}")],
        ),
        Attack(
            '"best" lines at the most line tests',
            f"1 pair × 81 lines × ({against // 2} zones + {against - against // 2} walls); move + adjudicate",
            [{"type": "scene.sync", "id": "setup", "scene": best}],
            lambda n: [move("best", n), adjudicate("best", n)],
        ),
        Attack(
            "frames at 4 × the frame limit",
            f"{len(over.encode()) / 2**20:.1f} MiB of 3-byte characters, refused (too-large)",
            [],
            lambda n: [over],
        ),
        Attack(
            "logged rulings, one wall moved each time",
            f"{n_walls:,} walls (a frame of {FRAME >> 20} MiB); a wall moved + a logged adjudicate",
            [{"type": "scene.sync", "id": "setup", "scene": walls_only(n_walls)}],
            lambda n: [
                {
                    "type": "scene.patch",
                    "id": f"m{n}",
                    "scene": "walled",
                    "upsert": {"walls": [{"id": "w0", "c": [n % 50, 0, 150, 90]}]},
                },
                logged("walled", n),
            ],
        ),
        Attack(
            "logged rulings with a 4 MiB option",
            f"adjudicate log: true, options holding one string of {len(big_option):,} characters",
            [{"type": "scene.sync", "id": "setup", "scene": base_scene("small")}],
            lambda n: [logged("small", n, options={"note": big_option})],
        ),
        Attack(
            "logged rulings with the most option keys",
            f"adjudicate log: true, options of {n_keys:,} keys (a frame of {FRAME >> 20} MiB)",
            [{"type": "scene.sync", "id": "setup", "scene": base_scene("small")}],
            lambda n: [{**many_keys(n_keys), "id": f"a{n}", "log": True}],
        ),
        Attack(
            "unlogged rulings with the most option keys",
            f"adjudicate log: false, options of {n_keys:,} keys (a frame of {FRAME >> 20} MiB)",
            [{"type": "scene.sync", "id": "setup", "scene": base_scene("small")}],
            lambda n: [{**many_keys(n_keys), "id": f"a{n}", "log": False}],
        ),
        Attack(
            "cheap token moves, back to back",
            "a 50 × 100 scene watched whole (brief); one token moved per patch — moves the bridge rules on its event "
            "loop once they have proved cheap (--inline-ms)",
            [
                {"type": "scene.sync", "id": "setup", "scene": table_scene},
                {"type": "watch", "id": "w", "scene": table_scene["id"], "action": "bs-attack", "detail": "brief"},
            ],
            lambda n: [table_move(n)],
        ),
        Attack(
            "logged rulings reading 5,000 lit tokens",
            f"{len(lit_scene['tokens']):,} tokens whose light reaches the target; a logged adjudicate",
            [{"type": "scene.sync", "id": "setup", "scene": lit_scene}],
            lambda n: [logged("lit", n)],
        ),
    ]


# --- Running ----------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    limits: str
    messages: int
    cpu_ms: float
    answers: str
    p50: float
    p99: float
    worst: float
    #: The quiet world's pings slower than :data:`SLOW` (how often it waited, where p99 and max say how long), of all.
    slow: int = 0
    pings: int = 0


async def drain_until_pong(ws: ClientConnection, pong_id: str, answers: dict[str, int]) -> None:
    """Read answers (counting them) until the pong of ``pong_id``. A ping the bridge dropped for the
    message rate (its ``rate-limited`` error carries the ping's id) is sent again a moment later: a
    fast attack spends its burst, and its ping may be the message that finds the bucket empty."""
    while True:
        frame = json.loads(await ws.recv())
        if frame.get("type") == "pong" and frame.get("id") == pong_id:
            return
        if frame.get("type") == "error" and frame.get("id") == pong_id and frame.get("code") == "rate-limited":
            answers["rate-limited"] = answers.get("rate-limited", 0) + 1
            await asyncio.sleep(0.05)
            await ws.send(json.dumps({"type": "ping", "id": pong_id}))
            continue
        kind = frame.get("code", "ok") if frame.get("type") == "error" else "ok"
        if frame.get("type") != "annotations" or not frame.get("more"):
            answers[kind] = answers.get(kind, 0) + 1


async def run_attack(bridge: Bridge, attack: Attack | None, seconds: float) -> Row:
    answers: dict[str, int] = {}
    messages = 0
    # No keepalive: aiohttp answers a WebSocket ping only when the handler reads its next frame, so a
    # computation longer than websockets' 20 s keepalive would have the client close itself.
    async with connect(bridge.url, max_size=None, ping_interval=None) as ws:
        await hello(ws, "w-hostile", bridge.secret)
        for message in attack.setup if attack else []:
            await ws.send(json.dumps(message))
        await ws.send(json.dumps({"type": "ping", "id": "setup"}))
        await drain_until_pong(ws, "setup", {})
        pinger = start_pinger(bridge, seconds)
        await asyncio.sleep(0.3)  # the pinger is connected
        cpu = bridge.cpu_seconds()
        end = time.perf_counter() + seconds - 0.5
        n = 0
        while attack is not None and time.perf_counter() < end:
            step = attack.step(n)
            try:
                for message in step:
                    await ws.send(message if isinstance(message, str) else json.dumps(message))
                messages += len(step)
                await ws.send(json.dumps({"type": "ping", "id": f"done{n}"}))
                await drain_until_pong(ws, f"done{n}", answers)
            except ConnectionClosed as closed:  # the bridge closed the hostile client: say so, go on
                code = closed.rcvd.code if closed.rcvd else "no close frame"
                answers[f"closed {code}"] = 1
                break
            n += 1
        used = bridge.cpu_seconds() - cpu
        out, _ = await asyncio.to_thread(pinger.communicate)
    rtts = sorted(json.loads(out))
    answered = ", ".join(f"{k} {v}" for k, v in sorted(answers.items())) or "—"
    return Row(
        attack.name if attack else "(the quiet world alone)",
        attack.limits if attack else "",
        messages,
        1000 * used / messages if messages else 0.0,
        answered,
        1000 * statistics.median(rtts),
        1000 * rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))],
        1000 * rtts[-1],
        sum(rtt > SLOW for rtt in rtts),
        len(rtts),
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| hostile message (default limits) | what it holds | messages | bridge CPU per message | answers "
        f"| other world's ping p50 / p99 / max | pings over {SLOW * 1000:.0f} ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu = f"{r.cpu_ms:,.0f} ms" if r.messages else "—"
        pings = f"{r.p50:.1f} / {r.p99:.1f} / {r.worst:.1f} ms"
        lines.append(
            f"| {r.name} | {r.limits} | {r.messages} | {cpu} | {r.answers} | {pings} | {r.slow} of {r.pings} |"
        )
    return "\n".join(lines)


async def main_async(seconds: float, only: list[str] | None, repeat: int = 1, source: Path | None = None) -> list[Row]:
    chosen = [attack for attack in attacks() if not only or any(name in attack.name for name in only)]
    bridge = Bridge(source=source)
    rows = []
    try:
        for _ in range(repeat):
            rows.append(await run_attack(bridge, None, seconds))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
            for attack in chosen:
                rows.append(await run_attack(bridge, attack, seconds))
                print(table(rows[-1:]).splitlines()[-1], f"(bridge RSS {bridge.rss_mib():.0f} MiB)", flush=True)
    finally:
        bridge.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.hostile", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each kind of message is sent")
    parser.add_argument(
        "--only", action="append", help="run only the kinds whose name contains this (may be given again)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="run the chosen rows this many times (one build)")
    parser.add_argument("--source", type=Path, help="run the bridge from this checkout (e.g. an older commit's)")
    parser.add_argument("--pinger", nargs=3, metavar=("URL", "SECRET", "SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pinger:
        url, secret, seconds = args.pinger
        print(json.dumps(asyncio.run(ping_for(url, secret, float(seconds)))))
        return 0
    rows = asyncio.run(main_async(args.seconds, args.only, args.repeat, args.source))
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
