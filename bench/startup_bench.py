"""``sightline serve``: time to listen, time to the engine being ready, and idle memory with a watched scene.

Run ``python -m bench.startup_bench [--runs N] [--json]``. Each run starts a real bridge on a free
loopback port and measures, from the moment the process is started:

- **listen**: the "listening on" line is printed (the port accepts connections then);
- **healthz**: the first ``GET /healthz`` answer (and the ``app`` and ``engine`` fields it carried);
- **cpu**: the bridge's own CPU time (user + system, ``time.process_time()`` in the bridge) when it
  printed the line: on this shared 2-core machine wall-clock start-up stretches with the load, CPU time
  much less;
- **app**: the bridge is imported and built behind the port (``/healthz`` says ``"app": "ready"``; a
  WebSocket or a log page is answered from then on, before it waits): when it prints its "Log:" line,
  and its CPU time then;
- **ready**: ``/healthz`` reports ``"engine": "ready"`` (the engine imported, its compiled loops with it);
- **slowest /healthz**: the longest round trip of the ``/healthz`` requests (the first at once, then
  every 100 ms) while the app loads, and while the engine loads (a thread's import holding the
  interpreter delays the loop);
- **idle RSS**: after one client synced a 50 × 100 scene and watched all its pairs (the overlay's
  ``detail: "brief"``), then stayed idle for 3 s.

Every bridge is ``sightline serve``'s own ``main`` in a fresh interpreter (what the console script
runs), with a hook on standard output that adds the process's CPU time to the "listening on" line.
Against a baseline run alternately in the same benchmark: the same bridge started the way it started
before ``bridge/startup.py`` (the bridge's modules — aiohttp, the protocol, the rules, the log store —
imported before the port opens; the engine after). A run with ``--cold`` points numba's cache at an
empty directory: until issue 15 the loops were numba's and were compiled afresh then (about a minute);
since they are Cython's, compiled when the package is built, nothing reads it and a cold start is like
any other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from .visibility_bench import make_scene
from .ws_bench import sync_and_watch

__all__ = ["main", "start_once"]

_HOOK = """
import sys, time
{first}
from bridge.cli import main

class _Out:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        if "listening on" in text:
            text += f"\\ncpu at listen {{time.process_time():.4f}}"
        elif text.startswith("Log: "):  # printed once the application is ready
            text += f"\\ncpu at app {{time.process_time():.4f}}"
        return self.out.write(text)
    def flush(self):
        self.out.flush()

sys.stdout = _Out(sys.stdout)
sys.exit(main())
"""
#: Today's start: ``sightline serve`` (the port opens first, the bridge is built behind it).
NOW = [sys.executable, "-c", _HOOK.format(first="")]
#: The start before ``bridge/startup.py``: everything imported and built (the log store opened, the
#: application set up) before the port opens, the engine loaded after.
_OLD_SERVE = """
import asyncio, signal
import bridge.server, bridge.startup, bridge.warmup
from bridge.collector import IdleCollector

async def _old_serve(config, *, announce):
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    collector = IdleCollector()
    collector.start()
    try:
        async with bridge.server.run_bridge(config, collector=collector) as (host, port):
            bridge.warmup.start()
            announce(f"Sightline bridge listening on ws://{host}:{port}/ws")
            announce("Log: ready")
            await stop.wait()
    finally:
        collector.stop()

bridge.startup.serve = _old_serve
"""
BEFORE = [sys.executable, "-c", _HOOK.format(first=_OLD_SERVE)]
#: Seconds between ``/healthz`` polls. Each poll takes the interpreter from the thread that is importing
#: (on a loaded machine that thread may then wait for a core): polling every 20 ms stretched the
#: app's loading by most of a second of wall time; a monitor polls every few seconds.
POLL = 0.1


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
            name, value = line.split(":")
            fields[name] = int(value.split()[0])
    return fields


def _cpu_line(lines: queue.Queue[tuple[float, str]], name: str) -> tuple[float, float]:
    """When the bridge's hook printed ``name`` (``perf_counter``) and the CPU time it printed (waiting for it)."""
    while not (line := lines.get(timeout=120))[1].startswith(name):
        pass
    return line[0], float(line[1].split()[-1])


def _healthz(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
        return dict(json.loads(response.read()))


async def _watch_scene(port: int, secret: str) -> None:
    scene = make_scene(50, 100, seed=1)
    async with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "bench", "secret": secret}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await sync_and_watch(ws, scene)
        await asyncio.sleep(3.0)  # idle, the watch held
        _watch_scene.rss = _status(_watch_scene.pid)  # type: ignore[attr-defined]


def start_once(command: list[str], *, cold: bool = False, watch: bool = True) -> dict[str, Any]:
    """Start one bridge with ``command`` (``serve`` is appended), measure it, stop it."""
    secret = secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ)
        if cold:
            env["NUMBA_CACHE_DIR"] = cache
        began = time.perf_counter()
        process = subprocess.Popen(
            [*command, "serve", "--port", "0", "--data-dir", data, f"--secret={secret}"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert process.stdout is not None
            port = 0
            while not port:
                line = process.stdout.readline()
                if not line:
                    raise RuntimeError("the bridge exited before listening")
                if "listening on" in line:
                    port = int(line.rsplit(":", 1)[1].split("/")[0])
            listen = time.perf_counter() - began
            first = _healthz(port)
            healthz = time.perf_counter() - began
            lines: queue.Queue[tuple[float, str]] = queue.Queue()
            reader = threading.Thread(
                target=lambda: [lines.put((time.perf_counter(), line)) for line in process.stdout or ()], daemon=True
            )
            reader.start()
            _, cpu = _cpu_line(lines, "cpu at listen")
            health = first
            answered: dict[str, list[float]] = {"loading": [], "engine": []}  # /healthz round trips, by phase
            answered["loading" if first.get("app") == "loading" else "engine"].append(healthz - listen)
            while health.get("engine") not in ("ready", "failed", None):
                time.sleep(POLL)
                asked = time.perf_counter()
                health = _healthz(port)
                phase = "loading" if health.get("app") == "loading" else "engine"
                answered[phase].append(time.perf_counter() - asked)
            ready = time.perf_counter() - began
            app, cpu_app = _cpu_line(lines, "cpu at app")
            row: dict[str, Any] = {
                "listen_s": listen,
                "healthz_s": healthz,
                "cpu_at_listen_s": cpu,
                "cpu_at_app_s": cpu_app,
                "first_app": first.get("app", "(no field)"),
                "first_engine": first.get("engine", "(no field)"),
                "app_s": app - began,
                "ready_s": ready,
                "healthz_loading_max_ms": 1000 * max(answered["loading"], default=0.0),
                "healthz_engine_max_ms": 1000 * max(answered["engine"], default=0.0),
            }
            if watch:
                _watch_scene.pid = process.pid  # type: ignore[attr-defined]
                asyncio.run(_watch_scene(port, secret))
                rss = _watch_scene.rss  # type: ignore[attr-defined]
                row.update(rss_mib=rss["VmRSS"] / 1024, anon_mib=rss["RssAnon"] / 1024, file_mib=rss["RssFile"] / 1024)
            return row
        finally:
            process.terminate()
            process.wait(timeout=30)
            if process.stdout:
                process.stdout.close()


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(row[key] for row in rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup_bench")
    parser.add_argument("--runs", type=int, default=5, help="starts of each kind (medians reported)")
    parser.add_argument("--cold", action="store_true", help="also one start with an empty (numba) cache")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    start_once(NOW, watch=False)  # files in the page cache: a warm machine
    now_rows, before_rows = [], []
    for _ in range(args.runs):
        now_rows.append(start_once(NOW))
        before_rows.append(start_once(BEFORE))
    summary: dict[str, Any] = {"runs": args.runs}
    for name, rows in (("now", now_rows), ("before", before_rows)):
        keys = (
            "listen_s",
            "healthz_s",
            "cpu_at_listen_s",
            "cpu_at_app_s",
            "app_s",
            "ready_s",
            "rss_mib",
            "anon_mib",
            "file_mib",
        )
        for key in (*keys, "healthz_loading_max_ms", "healthz_engine_max_ms"):
            summary[f"{name}_{key}"] = round(_median(rows, key), 3)
            summary[f"{name}_{key}_range"] = [round(min(r[key] for r in rows), 3), round(max(r[key] for r in rows), 3)]
        summary[f"{name}_first_app"] = sorted({row["first_app"] for row in rows})
        summary[f"{name}_first_engine"] = sorted({row["first_engine"] for row in rows})
    summary["listen_ratio"] = round(summary["before_healthz_s"] / summary["now_healthz_s"], 2)
    rows_out = [summary]
    if args.cold:
        cold = start_once(NOW, cold=True, watch=False)
        rows_out.append({"cold": True, **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in cold.items()}})
    for row in rows_out:
        if args.json:
            print(json.dumps(row), flush=True)
        elif "cold" in row:
            print(
                f"cold (empty numba cache): /healthz at {row['healthz_s']:.2f} s answering app={row['first_app']!r}, "
                f"engine={row['first_engine']!r}; app ready at {row['app_s']:.2f} s, "
                f"engine ready at {row['ready_s']:.2f} s"
            )
        else:
            for name in ("now", "before"):
                low, high = row[f"{name}_cpu_at_listen_s_range"]
                print(
                    f"{name:6}: listen {row[f'{name}_listen_s']:.2f} s, /healthz {row[f'{name}_healthz_s']:.2f} s "
                    f"(CPU at listen {row[f'{name}_cpu_at_listen_s']:.2f} s, {low:.2f}-{high:.2f}; "
                    f"app {row[f'{name}_first_app']}, engine {row[f'{name}_first_engine']}), "
                    f"app ready {row[f'{name}_app_s']:.2f} s (CPU {row[f'{name}_cpu_at_app_s']:.2f} s), "
                    f"engine ready {row[f'{name}_ready_s']:.2f} s; "
                    f"slowest /healthz (polled every {POLL * 1000:.0f} ms) while "
                    f"the app loads {row[f'{name}_healthz_loading_max_ms']:.0f} ms, while the engine loads "
                    f"{row[f'{name}_healthz_engine_max_ms']:.0f} ms; idle RSS with a 50 x 100 scene watched "
                    f"{row[f'{name}_rss_mib']:.0f} MiB (anon {row[f'{name}_anon_mib']:.0f}, "
                    f"files {row[f'{name}_file_mib']:.0f})"
                )
            print(f"/healthz {row['listen_ratio']:.1f}x sooner (medians of {row['runs']} starts each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
