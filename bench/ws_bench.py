"""The bridge over a real WebSocket: patch-to-annotations latency, rulings per second, idle-world memory.

``python -m bench.ws_bench [--quick]``

1. Latency: a real ``sightline serve`` child process; one client syncs a seeded scene (tokens × zones),
   ``watch``es every pair, then sends one-token ``scene.patch`` moves one at a time and times each from
   the send to the ``annotations`` push that answers it (p50, p99); the watch is the overlay's (``detail:
   "brief"``). The client reads answers as a browser would, with a native JSON parser (orjson), and
   runs its own garbage collection between moves, not inside a timed one: the figures are the
   bridge's, not the measuring script's. Baseline, in this process: the
   per-pair shapely implementation recomputing the moved token's pairs (bench/baseline.py) of the first
   moves, timed after the moves (not between them, where its CPU slowed the next move's arrival).
2. Throughput: 50 worlds, one connection each, every connection keeping 8 ``adjudicate`` requests in
   flight for a fixed time; rulings answered per second. Baseline: per-pair shapely rulings per second
   in this process (one core).
3. Memory: 1,000 idle worlds, each holding one synced scene of 50 tokens × 50 zones, in this process;
   resident memory added, against the same scenes kept as parsed JSON (the least any server must hold).

Every figure is printed beside its baseline as a ratio. Loopback only; it stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect

from bench.baseline import BaselineVisibility
from bench.visibility_bench import make_scene, move_token, state_of
from bridge.core.scene import Scene
from bridge.session import Session, Worlds

SIGHTLINE = str(Path(sys.executable).parent / "sightline")


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Bridge:
    """``sightline serve`` on a free loopback port, logging off the hot path's way (a temp data dir).

    ``stages``: the bridge stamps each frame's stages (:mod:`bridge.stages`) into ``stages_path``.
    """

    def __init__(self, *, stages: bool = False, code: str | None = None) -> None:
        self.secret = secrets.token_urlsafe(12)
        self.tmp = tempfile.TemporaryDirectory()
        self.stages_path = Path(self.tmp.name) / "stages.jsonl"
        #: Another checkout whose ``bridge`` package this bridge runs (``PYTHONPATH``), or ``None``: this one.
        self.code = code
        env = dict(os.environ)
        env.pop("SIGHTLINE_STAGES", None)
        if code is not None:
            env["PYTHONPATH"] = os.pathsep.join([code, *filter(None, [env.get("PYTHONPATH")])])
        if stages:
            env["SIGHTLINE_STAGES"] = str(self.stages_path)
        self.process = subprocess.Popen(
            [
                SIGHTLINE,
                "serve",
                "--port",
                "0",
                "--data-dir",
                self.tmp.name,
                f"--secret={self.secret}",  # (a random secret may start with "-")
                "--messages-per-second",
                "100000",
                "--message-burst",
                "100000",
                "--send-queue",
                "100000",
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        self.url = ""
        while not self.url:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the bridge exited before listening")
            if "ws://" in line:
                self.url = line.split()[-1]

    async def client(self, world: str) -> ClientConnection:
        ws = await connect(self.url, max_size=None)
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": self.secret}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        return ws

    def traces(self, prefix: str) -> dict[str, dict[str, Any]]:
        """The stage records (marks, collector seconds) of the frames whose id starts with ``prefix``, by id."""
        if not self.stages_path.exists():
            return {}
        found = {}
        for line in self.stages_path.read_bytes().splitlines():
            record = orjson.loads(line)
            if isinstance(record["id"], str) and record["id"].startswith(prefix):
                found[record["id"]] = record
        return found

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        if self.process.stdout:
            self.process.stdout.close()
        self.tmp.cleanup()


#: The page's side of :class:`BrowserClient`: a WebSocket, a queue of parsed messages, and ``move(text)``, which
#: waits 5 ms (the DevTools round trip that started it is over by then), then times one patch from ``send``
#: to both its answers parsed (``performance.now()``, in ms).
BROWSER_JS = """
async ([url, hello, sync, watch]) => {
  const ws = new WebSocket(url);
  const queue = [];
  let waiter = null;
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (waiter) { const wake = waiter; waiter = null; wake(message); } else queue.push(message);
  };
  const next = () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((wake) => (waiter = wake)));
  await new Promise((opened) => (ws.onopen = opened));
  for (const [text, answers] of [[hello, 1], [sync, 1], [watch, 2]]) {
    ws.send(text);
    for (let i = 0; i < answers; i++) await next();
  }
  window.move = async (text) => {
    // the DevTools call that asked for this move has its own work in the browser's processes: let it end
    await new Promise((settled) => setTimeout(settled, 5));
    const started = performance.now();
    ws.send(text);
    let patched = false, annotations = false;
    while (!(patched && annotations)) {
      const message = await next();
      patched ||= message.type === "scene.patched";
      annotations ||= message.type === "annotations";
    }
    return performance.now() - started;
  };
}
"""


class BrowserClient:
    """A headless Chromium page as a client (Playwright, Debian's ``/usr/bin/chromium`` if there): the
    browser's own WebSocket and ``JSON.parse``, timed in the page — what the module's users run."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None

    async def open(self, bridge: Bridge, world: str, sync: str, watch: str) -> None:
        import shutil

        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        executable = shutil.which("chromium")
        self._browser = await self._playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        self._page = await self._browser.new_page()
        hello = json.dumps({"type": "hello", "protocol": 1, "world": world, "secret": bridge.secret})
        await self._page.evaluate(BROWSER_JS, [bridge.url, hello, sync, watch])

    async def move(self, text: str) -> float:
        """Seconds from sending ``text`` (a patch) to both its answers parsed, as the page measured them."""
        return float(await self._page.evaluate("(text) => window.move(text)", text)) / 1000

    async def close(self) -> None:
        if self._browser is not None:
            await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: The moves whose pairs the per-pair baseline recomputes (timed after the moves: :func:`latency_side_by_side`).
BASELINE_MOVES = 20


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


#: The stages of a patch's path through the bridge (bridge.stages marks): (label, from, to).
STAGES = (
    ("loop: frame read, handed to the world's worker", "read", "submitted"),
    ("wait for the worker thread", "submitted", "worker"),
    ("parse JSON", "worker", "parsed"),
    ("loop: frame read, taken for a cheap move, run here", "read", "inline"),
    ("parse JSON", "inline", "parsed"),
    ("validate (pydantic)", "parsed", "validated"),
    ("World.patch", "validated", "patched"),
    ("engine update()", "patched", "updated"),
    ("build the push", "updated", "built"),
    ("rest of receive", "built", "answered"),
    ("encode (orjson)", "answered", "encoded"),
    ("wait for the loop", "encoded", "loop"),
    ("queue the frames", "loop", "queued"),
    ("queue the frames", "encoded", "queued"),
    ("write the frames", "queued", "written"),
)


#: The hand-offs between threads: (label, stage stamped as it is handed over, stage stamped on arrival). At
#: both, the bridge reads the receiving thread's scheduler counters (``bridge.stages.sched``); and the
#: loop's own counters from the answer's arrival to its last frame written.
HANDOFFS = (
    ("wait for the worker thread", "submitted", "worker"),
    ("wait for the loop", "encoded", "loop"),
    ("back on the loop, until the last frame is written", "loop", "written"),
)


def handoff_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per hand-off, what the receiving thread did while it was awaited: time runnable but waiting for a
    core (the kernel's run queue), CPU time spent (on something else), and in how many frames it was put
    on a core more than once (it slept again — on the GIL, say — or was preempted). The run-queue time is
    counted when the thread gets a core, so a wait that began before the hand-off (the thread preempted
    earlier, still queued) is clipped to the hand-off's wall time."""
    rows = []
    for label, start, end in HANDOFFS:
        queued: list[float] = []
        busy: list[float] = []
        again = 0
        for record in records:
            counters = record.get("sched") or {}
            before, after = counters.get(start), counters.get(end)
            at = {mark[0]: mark[1] for mark in record["marks"]}
            if not before or not after or start not in at or end not in at:
                continue
            wall = at[end] - at[start]
            busy.append((after[0] - before[0]) / 1e9)
            queued.append(min(wall, (after[1] - before[1]) / 1e9))
            again += after[2] - before[2] > 1
        if queued:
            rows.append(
                {
                    "handoff": label,
                    "frames": len(queued),
                    "run_queue_p50_ms": round(1000 * percentile(queued, 0.5), 3),
                    "run_queue_p99_ms": round(1000 * percentile(queued, 0.99), 3),
                    "cpu_p50_ms": round(1000 * percentile(busy, 0.5), 3),
                    "cpu_p99_ms": round(1000 * percentile(busy, 0.99), 3),
                    "on_a_core_again": again,
                }
            )
    return rows


def stage_rows(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per stage, p50/p99 of wall time and (when one thread did it) CPU time, in ms; per frame, the
    bridge's wall time from read to written and its CPU time (the stages one thread did, summed); the
    garbage collector's time on the loop between one traced frame's read and the next's; and what the
    receiving thread did at each hand-off (:func:`handoff_rows`)."""
    rows: dict[str, Any] = {}
    walls: list[float] = []
    cpus: list[float] = []
    per_stage: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label, _, _ in STAGES}
    in_order = sorted(records, key=lambda r: r["marks"][0][1])
    collected = [r["collector"] for r in in_order if r.get("collector") is not None]
    gc_between = [b - a for a, b in itertools.pairwise(collected)]
    for record in records:
        marks = record["marks"]
        at = {name: (wall, cpu, thread) for name, wall, cpu, thread in marks}
        if "read" not in at or "written" not in at:
            continue
        walls.append(at["written"][0] - at["read"][0])
        total_cpu = 0.0
        for label, start, end in STAGES:
            if start not in at or end not in at or ((start, end) == ("encoded", "queued") and "loop" in at):
                continue  # (a frame run on the loop is queued straight after it is encoded; one from the worker not)
            (w0, c0, t0), (w1, c1, t1) = at[start], at[end]
            per_stage[label][0].append(w1 - w0)
            if t0 == t1:
                per_stage[label][1].append(c1 - c0)
                total_cpu += c1 - c0
        cpus.append(total_cpu)
    if not walls:
        return rows

    def ms(values: list[float], q: float) -> float | None:
        return round(1000 * percentile(values, q), 3) if values else None

    rows["frames"] = len(walls)
    rows["server_wall_p50_ms"], rows["server_wall_p99_ms"] = ms(walls, 0.5), ms(walls, 0.99)
    rows["server_cpu_p50_ms"], rows["server_cpu_p99_ms"] = ms(cpus, 0.5), ms(cpus, 0.99)
    if gc_between:
        rows["collector_between_p50_ms"], rows["collector_between_p99_ms"] = ms(gc_between, 0.5), ms(gc_between, 0.99)
        rows["collector_between_max_ms"] = ms(gc_between, 1.0)
    rows["stages"] = [
        {
            "stage": label,
            "wall_p50_ms": ms(wall, 0.5),
            "wall_p99_ms": ms(wall, 0.99),
            "cpu_p50_ms": ms(cpu, 0.5),
            "cpu_p99_ms": ms(cpu, 0.99),
            "frames": len(wall),
        }
        for label, (wall, cpu) in per_stage.items()
        if wall
    ]
    rows["handoffs"] = handoff_rows(records)
    return rows


async def sync_and_watch(ws: ClientConnection, scene: Scene) -> None:
    """Sync ``scene`` on ``ws`` and watch it for a BS Attack in brief; returns once the first, full push
    (every pair) has arrived."""
    await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": scene.model_dump(mode="json")}))
    assert json.loads(await ws.recv())["type"] == "scene.synced"
    watch = {"type": "watch", "id": "w", "scene": scene.id, "action": "bs-attack", "detail": "brief"}
    await ws.send(json.dumps(watch))
    assert json.loads(await ws.recv())["type"] == "watching"
    assert json.loads(await ws.recv())["full"] is True


async def latency(bridge: Bridge, tokens: int, zones: int, moves: int, tag: str = "") -> dict[str, Any]:
    return (await latency_side_by_side([bridge], tokens, zones, moves, tag))[0]


async def latency_side_by_side(
    bridges: list[Bridge], tokens: int, zones: int, moves: int, tag: str = "", browser: bool = False
) -> list[dict[str, Any]]:
    """One latency row per bridge: each gets its own client, the same scene, watch and moves; every move is
    sent to each bridge in turn (the order alternating from one move to the next), so several bridges (the
    code before and after a change) are measured in the same seconds of a shared machine. With ``browser``,
    a headless Chromium page (:class:`BrowserClient`) is one more client of the first bridge (another world,
    the same moves, in turn with the others): one more row."""
    scene = make_scene(tokens, zones, seed=1)
    load_before = os.getloadavg()
    clients = []
    page: BrowserClient | None = None
    if browser:
        page = BrowserClient()
        await page.open(
            bridges[0],
            f"lat-{tokens}x{zones}-browser",
            json.dumps({"type": "scene.sync", "id": "q", "scene": scene.model_dump(mode="json")}),
            json.dumps({"type": "watch", "id": "w", "scene": scene.id, "action": "bs-attack", "detail": "brief"}),
        )
    for bridge in bridges:
        ws = await bridge.client(f"lat-{tokens}x{zones}")
        await sync_and_watch(ws, scene)
        clients.append(ws)
    rng = random.Random(2)
    timings: list[list[float]] = [[] for _ in bridges]
    in_browser: list[float] = []
    baseline: list[float] = []
    baseline_moves: list[tuple[Scene, str]] = []
    current = scene
    for i in range(moves):
        token_id = rng.choice(current.tokens).id
        current = move_token(current, token_id, seed=i)
        moved = next(t for t in current.tokens if t.id == token_id)
        patch = {
            "type": "scene.patch",
            "id": f"{tag}p{i}",
            "scene": scene.id,
            "upsert": {"tokens": [moved.model_dump(mode="json")]},
        }
        text = json.dumps(patch)
        order = list(range(len(bridges) + (page is not None)))
        if i % 2:
            order.reverse()
        for side in order:
            if side == len(bridges):
                assert page is not None
                in_browser.append(await page.move(text.replace(f'"{tag}p{i}"', f'"{tag}b{i}"')))
                continue
            ws = clients[side]
            gc.collect(0)  # the client's own young garbage, before the clock starts
            gc.disable()
            started = time.perf_counter()
            await ws.send(text)
            got_patched = got_annotations = False
            while not (got_patched and got_annotations):
                answer = orjson.loads(await ws.recv())
                got_patched |= answer["type"] == "scene.patched"
                got_annotations |= answer["type"] == "annotations"
            timings[side].append(time.perf_counter() - started)
            gc.enable()
        if i < BASELINE_MOVES:
            baseline_moves.append((current, token_id))
    for ws in clients:
        await ws.close()
    if page is not None:
        await page.close()
    load_after = os.getloadavg()
    # The baseline recomputes the first moves' pairs, per pair, with plain shapely — after the timed moves, not
    # between them: ~0.1 s of this process's CPU before a move left that move slower to arrive (the client
    # woken later, caches cold), the first 20 moves most of a run's slowest (docs/performance.md).
    for current, token_id in baseline_moves:
        plain = BaselineVisibility(state_of(current), action="bs-attack")
        pairs = [(token_id, t.id) for t in current.tokens if t.id != token_id]
        pairs += [(b, a) for a, b in pairs]
        begun = time.perf_counter()
        plain.rulings(pairs)
        baseline.append(time.perf_counter() - begun)
    base = statistics.median(baseline)
    await asyncio.sleep(0.2)  # the last trace is written once its frames are
    rows = []
    for bridge, times in zip(bridges, timings, strict=True):
        p50, p99 = percentile(times, 0.5), percentile(times, 0.99)
        row = {
            "scene": f"{tokens}x{zones}",
            "moves": moves,
            "p50_ms": round(p50 * 1000, 2),
            "p99_ms": round(p99 * 1000, 2),
            "baseline_update_ms": round(base * 1000, 2),
            "ratio_p50": round(base / p50, 1),
            "load_average": [round(load_before[0], 2), round(load_after[0], 2)],
            "times_ms": [t * 1000 for t in times],
        }
        if bridge.code is not None:
            row["code"] = bridge.code
        traces = bridge.traces(f"{tag}p")
        row |= stage_rows(list(traces.values()))
        rows.append(row)
    if page is not None:
        p50, p99 = percentile(in_browser, 0.5), percentile(in_browser, 0.99)
        row = {
            "scene": f"{tokens}x{zones}",
            "moves": moves,
            "client": "chromium",
            "p50_ms": round(p50 * 1000, 2),
            "p99_ms": round(p99 * 1000, 2),
            "baseline_update_ms": round(base * 1000, 2),
            "ratio_p50": round(base / p50, 1),
            "load_average": [round(load_before[0], 2), round(load_after[0], 2)],
            "times_ms": [t * 1000 for t in in_browser],
        }
        row |= stage_rows(list(bridges[0].traces(f"{tag}b").values()))
        rows.append(row)
    return rows


async def throughput(bridge: Bridge, worlds: int, seconds: float) -> dict[str, Any]:
    scene = make_scene(20, 30, seed=3)
    data = scene.model_dump(mode="json")
    clients = [await bridge.client(f"tp-{i}") for i in range(worlds)]
    for ws in clients:
        await ws.send(json.dumps({"type": "scene.sync", "id": "q", "scene": data}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
    ids = [t.id for t in scene.tokens]
    answered = 0
    until = time.perf_counter() + seconds

    async def pump(ws: ClientConnection, seed: int) -> None:
        nonlocal answered
        rng = random.Random(seed)

        def request(n: int) -> str:
            actor, target = rng.sample(ids, 2)
            return json.dumps(
                {
                    "type": "adjudicate",
                    "id": str(n),
                    "scene": scene.id,
                    "actor": actor,
                    "target": target,
                    "action": "bs-attack",
                    "log": False,
                }
            )

        for n in range(8):
            await ws.send(request(n))
        n = 8
        while time.perf_counter() < until:
            answer = json.loads(await ws.recv())
            assert answer["type"] == "adjudication", answer
            answered += 1
            await ws.send(request(n))
            n += 1
        for _ in range(8):
            await ws.recv()

    started, cpu_before = time.perf_counter(), cpu_seconds(bridge.process.pid)
    await asyncio.gather(*(pump(ws, i) for i, ws in enumerate(clients)))
    elapsed, cpu = time.perf_counter() - started, cpu_seconds(bridge.process.pid) - cpu_before
    for ws in clients:
        await ws.close()
    plain = BaselineVisibility(state_of(scene), action="bs-attack")
    rng = random.Random(4)
    pairs = [tuple(rng.sample(ids, 2)) for _ in range(300)]
    begun = time.perf_counter()
    plain.rulings(pairs)  # type: ignore[arg-type]
    base_rate = len(pairs) / (time.perf_counter() - begun)
    rate = answered / elapsed
    per_cpu = answered / cpu if cpu > 0 else 0.0
    return {
        "worlds": worlds,
        "seconds": seconds,
        "rulings_per_s": round(rate),
        "rulings_per_bridge_cpu_s": round(per_cpu),
        "bridge_cpu_share": round(cpu / elapsed, 2),
        "baseline_per_s": round(base_rate),
        "ratio": round(rate / base_rate, 1),
        "ratio_per_cpu": round(per_cpu / base_rate, 1),
    }


def memory(worlds: int) -> dict[str, Any]:
    scenes = [make_scene(50, 50, seed=1000 + i).model_dump(mode="json") for i in range(worlds)]
    texts = [json.dumps({"type": "scene.sync", "id": "q", "scene": s}) for s in scenes]
    del scenes
    gc.collect()
    before = rss_kib()
    parsed = [json.loads(t) for t in texts]
    gc.collect()
    plain_kib = rss_kib() - before
    del parsed
    gc.collect()
    registry = Worlds()
    before = rss_kib()
    for i, text in enumerate(texts):
        session = Session(registry, authenticate=lambda w, s: True)
        session.receive(json.dumps({"type": "hello", "protocol": 1, "world": f"w{i}", "secret": "x"}))
        session.receive(text)
    gc.collect()
    ours_kib = rss_kib() - before
    return {
        "worlds": worlds,
        "scene": "50x50",
        "bridge_mib": round(ours_kib / 1024, 1),
        "plain_json_mib": round(plain_kib / 1024, 1),
        "ratio": round(ours_kib / max(plain_kib, 1), 2),
        "per_world_kib": round(ours_kib / worlds, 1),
    }


async def run(quick: bool) -> dict[str, Any]:
    bridge = Bridge()
    try:
        sizes = [(20, 30), (50, 100)] if quick else [(20, 30), (50, 100), (100, 200)]
        lat = [await latency(bridge, t, z, 50 if quick else 200) for t, z in sizes]
        tp = await throughput(bridge, 50, 3.0 if quick else 10.0)
    finally:
        bridge.close()
    mem = memory(100 if quick else 1000)
    return {"latency": lat, "throughput": tp, "memory": mem}


async def latency_runs(
    tokens: int, zones: int, moves: int, runs: int, base: str | None = None, browser: bool = False
) -> list[dict[str, Any]]:
    """Only the latency figure, ``runs`` times on one bridge (to see how much it moves between runs), with
    the bridge's own stage timings (``bridge.stages``) of every move. With ``browser``, a headless Chromium
    page is one more client of this checkout's bridge (one more row).

    With ``base`` (another checkout), a second bridge runs that code and every move goes to both, in turn:
    one row per bridge and run. Each run starts both bridges afresh (the first one started alternating):
    on a loaded machine one process can sit on the busier core for a whole run, which alternating the moves
    does not even out — compare several runs."""
    if base is None:
        bridge = Bridge(stages=True)
        try:
            return [
                row
                for run in range(runs)
                for row in await latency_side_by_side([bridge], tokens, zones, moves, f"r{run}-", browser)
            ]
        finally:
            bridge.close()
    rows = []
    for run in range(runs):
        bridges: list[Bridge] = []
        try:
            for code in (None, str(Path(base).resolve()))[:: 1 if run % 2 == 0 else -1]:
                bridges.append(Bridge(stages=True, code=code))
            bridges.sort(key=lambda bridge: bridge.code is not None)  # this checkout's row first
            for bridge in bridges:
                await engine_ready(bridge)
            rows += await latency_side_by_side(bridges, tokens, zones, moves, f"r{run}-", browser)
        finally:
            for bridge in bridges:
                bridge.close()
    return rows


async def engine_ready(bridge: Bridge) -> None:
    """Wait until the bridge has loaded its engine (in the background); say so if its loops are not compiled
    (a checkout whose extension was never built runs them as plain Python: not a fair comparison)."""
    import aiohttp

    url = bridge.url.replace("ws://", "http://").removesuffix("/ws") + "/healthz"
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            async with http.get(url) as response:
                health = await response.json()
            if health.get("engine") in ("ready", "failed"):
                break
            await asyncio.sleep(0.1)
    if health.get("engine_compiled") is not True:
        where = bridge.code or "this checkout"
        print(f"warning: the bridge from {where} runs its loops as plain Python ({health})", file=sys.stderr)


def pooled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every run's moves taken together, per bridge and client: the p50 and p99 of all of them, beside the
    range of the runs' own p99s (a run of 300 moves has its p99 in its third-slowest move)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row.get("code", "this checkout"), row.get("client", "python")), []).append(row)
    summaries = []
    for (code, client), runs in groups.items():
        times = [t for row in runs for t in row["times_ms"]]
        summaries.append(
            {
                "pooled": True,
                "scene": runs[0]["scene"],
                "code": code,
                "client": client,
                "runs": len(runs),
                "moves": len(times),
                "p50_ms": round(percentile(times, 0.5), 2),
                "p99_ms": round(percentile(times, 0.99), 2),
                "run_p99_ms": [min(row["p99_ms"] for row in runs), max(row["p99_ms"] for row in runs)],
            }
        )
    return summaries


def print_latency(row: dict[str, Any]) -> None:
    """One latency run: the client's figure, the bridge's wall and CPU time, and the stages."""
    load = row["load_average"]
    if "code" in row:
        print(f"  bridge from {row['code']}:")
    if row.get("client") == "chromium":
        print("  client: headless Chromium (WebSocket and JSON.parse in the page; performance.now() may be coarsened):")
    print(
        f"  {row['scene']:>8}: p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms  (client: send → annotations; "
        f"load average {load[0]:.2f} → {load[1]:.2f})"
    )
    if "server_wall_p50_ms" not in row:
        return
    traced = row.get("frames", 0)
    print(
        f"            bridge, frame read → last frame written: wall p50 {row['server_wall_p50_ms']:.3f} ms "
        f"p99 {row['server_wall_p99_ms']:.3f} ms; CPU p50 {row['server_cpu_p50_ms']:.3f} ms "
        f"p99 {row['server_cpu_p99_ms']:.3f} ms"
    )
    if "collector_between_p50_ms" in row:
        print(
            f"            garbage collector on the loop between two moves: p50 {row['collector_between_p50_ms']:.3f} "
            f"p99 {row['collector_between_p99_ms']:.3f} max {row['collector_between_max_ms']:.3f} ms"
        )
    for stage in row["stages"]:
        cpu = (
            f"CPU p50 {stage['cpu_p50_ms']:.3f} p99 {stage['cpu_p99_ms']:.3f}"
            if stage["cpu_p50_ms"] is not None
            else "(two threads: waiting)"
        )
        wall = f"wall p50 {stage['wall_p50_ms']:.3f} p99 {stage['wall_p99_ms']:.3f}"
        frames = f"  ({stage['frames']} of {traced} frames)" if stage.get("frames", traced) < traced else ""
        print(f"            {stage['stage']:<48} {wall}  {cpu}{frames}")
    for handoff in row.get("handoffs", []):
        print(
            f"            {handoff['handoff']}, the receiving thread meanwhile: waiting for a core "
            f"p50 {handoff['run_queue_p50_ms']:.3f} p99 {handoff['run_queue_p99_ms']:.3f} ms; "
            f"its CPU p50 {handoff['cpu_p50_ms']:.3f} p99 {handoff['cpu_p99_ms']:.3f} ms; put on a core "
            f"more than once (slept again, e.g. on the GIL, or was preempted) in {handoff['on_a_core_again']} "
            f"of {handoff['frames']} frames"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ws_bench")
    parser.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--latency", metavar="TxZ", help="only the patch → annotations latency of this scene (e.g. 50x100)"
    )
    parser.add_argument("--moves", type=int, default=300, help="moves per latency run (with --latency)")
    parser.add_argument("--runs", type=int, default=5, help="latency runs (with --latency)")
    parser.add_argument(
        "--base",
        metavar="DIR",
        help="with --latency: also run a bridge from the checkout DIR (its compiled loops built) and send every "
        "move to both, alternately (before/after in the same seconds)",
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="with --latency: also time every move from a headless Chromium page (its own WebSocket and "
        "JSON.parse), in turn with the Python client",
    )
    args = parser.parse_args(argv)
    if args.latency:
        tokens, zones = (int(part) for part in args.latency.split("x"))
        rows = asyncio.run(latency_runs(tokens, zones, args.moves, args.runs, args.base, args.browser))
        for row in rows:
            if args.json:
                print(json.dumps({key: value for key, value in row.items() if key != "times_ms"}))
            else:
                print_latency(row)
        for summary in pooled(rows):
            if args.json:
                print(json.dumps(summary))
            else:
                low, high = summary["run_p99_ms"]
                print(
                    f"  all {summary['runs']} runs pooled ({summary['code']}, {summary['client']} client): "
                    f"p50 {summary['p50_ms']:.2f} ms  p99 {summary['p99_ms']:.2f} ms over {summary['moves']} moves "
                    f"(the runs' own p99 {low:.2f}–{high:.2f} ms)"
                )
        return 0
    result = asyncio.run(run(args.quick))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print("patch → annotations over WebSocket (watch all pairs; one-token moves)")
    for row in result["latency"]:
        print(
            f"  {row['scene']:>8}: p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms   "
            f"baseline recompute {row['baseline_update_ms']:8.2f} ms  ratio(p50) {row['ratio_p50']}x"
        )
    tp = result["throughput"]
    print(
        f"rulings over WebSocket, {tp['worlds']} worlds: {tp['rulings_per_s']}/s "
        f"({tp['rulings_per_bridge_cpu_s']} per bridge CPU-second; bridge busy {tp['bridge_cpu_share']:.0%})   "
        f"baseline {tp['baseline_per_s']}/s   ratio {tp['ratio']}x ({tp['ratio_per_cpu']}x per CPU-second)"
    )
    mem = result["memory"]
    print(
        f"{mem['worlds']} idle worlds of {mem['scene']}: {mem['bridge_mib']} MiB ({mem['per_world_kib']} KiB each)   "
        f"as parsed JSON {mem['plain_json_mib']} MiB   ratio {mem['ratio']}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
