"""The WebSocket benchmark's latency run works end to end against a real ``sightline serve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_the_latency_run_times_every_move_against_a_real_bridge() -> None:
    """``python -m bench.ws_bench --latency 20x30`` syncs, watches and times its moves against a real bridge.

    A smoke run: its figures are reported, never asserted.
    """
    done = subprocess.run(
        [sys.executable, "-m", "bench.ws_bench", "--latency", "20x30", "--moves", "12", "--runs", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    *rows, summary = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["scene"] for row in rows] == ["20x30", "20x30"]
    assert all(row["moves"] == 12 and 0 < row["p50_ms"] <= row["p99_ms"] for row in rows)
    assert summary["pooled"] and (summary["runs"], summary["moves"]) == (2, 24)  # both runs' moves taken together
    assert summary["run_p99_ms"] == [min(row["p99_ms"] for row in rows), max(row["p99_ms"] for row in rows)]
    assert min(row["p50_ms"] for row in rows) <= summary["p50_ms"] <= summary["p99_ms"] <= summary["run_p99_ms"][1]
