"""``sightline serve``: time to listen, time to the engine being ready, and idle memory with a watched scene.

Run ``python -m bench.startup_bench [--runs N] [--json]``. Each run starts a real bridge on a free
loopback port and measures, from the moment the process is started:

- **listen**: the "listening on" line is printed (the port accepts connections then);
- **healthz**: the first ``GET /healthz`` answer (and the ``engine`` field it carried);
- **cpu**: the bridge's own CPU time (user + system) when it printed the line: on this shared 2-core
  machine wall-clock start-up stretches with the load, CPU time much less;
- **ready**: ``/healthz`` reports ``"engine": "ready"`` (the engine imported, its compiled loops with it);
- **idle RSS**: after one client synced a 50 × 100 scene and watched all its pairs (the overlay's
  ``detail: "brief"``), then stayed idle for 3 s.

Against a baseline run alternately in the same benchmark: the same bridge started the way it started
before (the engine's module, and with it the compiled loops, imported before the port opens).
A run with ``--cold`` also starts one bridge with an empty ``NUMBA_CACHE_DIR``: until issue 15 the loops
were numba's and were compiled afresh then (about a minute); since they are Cython's, compiled when the
package is built, nothing reads that cache and a cold start is like any other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from .visibility_bench import make_scene

__all__ = ["main", "start_once"]

SIGHTLINE = str(Path(sys.executable).parent / "sightline")
#: The start before the background import: the engine (its compiled loops) imported before the bridge listens.
BEFORE = [sys.executable, "-c", "import sys, bridge.core.visibility, bridge.cli; sys.exit(bridge.cli.main())"]


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
            name, value = line.split(":")
            fields[name] = int(value.split()[0])
    return fields


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _healthz(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
        return dict(json.loads(response.read()))


async def _watch_scene(port: int, secret: str) -> None:
    scene = make_scene(50, 100, seed=1)
    async with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "world": "bench", "secret": secret}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        await ws.send(json.dumps({"type": "scene.sync", "id": "s", "scene": scene.model_dump(mode="json")}))
        assert json.loads(await ws.recv())["type"] == "scene.synced"
        watch = {"type": "watch", "id": "w", "scene": scene.id, "action": "bs-attack", "detail": "brief"}
        await ws.send(json.dumps(watch))
        assert json.loads(await ws.recv())["type"] == "watching"
        assert json.loads(await ws.recv())["full"] is True
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
            cpu = _cpu(process.pid)
            first = _healthz(port)
            healthz = time.perf_counter() - began
            health = first
            while health.get("engine") not in ("ready", "failed", None):
                time.sleep(0.02)
                health = _healthz(port)
            ready = time.perf_counter() - began
            row: dict[str, Any] = {
                "listen_s": listen,
                "healthz_s": healthz,
                "cpu_at_listen_s": cpu,
                "first_engine": first.get("engine", "(no field)"),
                "ready_s": ready,
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
    start_once([SIGHTLINE], watch=False)  # numba's cache filled, files in the page cache: a warm machine
    now_rows, before_rows = [], []
    for _ in range(args.runs):
        now_rows.append(start_once([SIGHTLINE]))
        before_rows.append(start_once(BEFORE))
    summary: dict[str, Any] = {"runs": args.runs}
    for name, rows in (("now", now_rows), ("before", before_rows)):
        for key in ("listen_s", "healthz_s", "cpu_at_listen_s", "ready_s", "rss_mib", "anon_mib", "file_mib"):
            summary[f"{name}_{key}"] = round(_median(rows, key), 3)
        summary[f"{name}_first_engine"] = sorted({row["first_engine"] for row in rows})
    summary["listen_ratio"] = round(summary["before_healthz_s"] / summary["now_healthz_s"], 2)
    rows_out = [summary]
    if args.cold:
        cold = start_once([SIGHTLINE], cold=True, watch=False)
        rows_out.append({"cold": True, **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in cold.items()}})
    for row in rows_out:
        if args.json:
            print(json.dumps(row), flush=True)
        elif "cold" in row:
            print(
                f"cold (empty cache): /healthz at {row['healthz_s']:.2f} s answering engine={row['first_engine']!r}; "
                f"engine ready at {row['ready_s']:.2f} s"
            )
        else:
            for name in ("now", "before"):
                print(
                    f"{name:6}: listen {row[f'{name}_listen_s']:.2f} s, /healthz {row[f'{name}_healthz_s']:.2f} s "
                    f"(CPU {row[f'{name}_cpu_at_listen_s']:.2f} s; engine {row[f'{name}_first_engine']}), "
                    f"engine ready {row[f'{name}_ready_s']:.2f} s, idle RSS with a 50 x 100 scene watched "
                    f"{row[f'{name}_rss_mib']:.0f} MiB (anon {row[f'{name}_anon_mib']:.0f}, "
                    f"files {row[f'{name}_file_mib']:.0f})"
                )
            print(f"/healthz {row['listen_ratio']:.1f}x sooner (medians of {row['runs']} starts each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
