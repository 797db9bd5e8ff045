"""Issue 12's benchmarks run end to end (smoke runs: their figures are reported, never asserted as times)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_fuzz_bench_counts_no_escape_and_replays_to_the_same_state() -> None:
    """``python -m bench.fuzz_bench`` on 400 messages: every mutation class met, 0 escapes, replay equal."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.fuzz_bench", "--messages", "400", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout)
    assert result["escapes"] == 0 and result["replay_equal"] is True
    assert all(sum(counts.values()) > 0 for counts in result["by_class"].values())


def test_the_snapshot_bench_measures_what_a_patch_storm_stores() -> None:
    """``python -m bench.snapshot_bench`` on 12 patches: the snapshots stored stay near the patches' size."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.snapshot_bench", "--patches", "12", "--tokens", "20", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout)
    assert result["patches"] == 12 and result["rulings_bytes"] > 0
    assert result["snapshots_bytes"] < 4 * result["patch_bytes"]


def test_the_export_bench_reads_the_session_every_way_while_another_world_pings() -> None:
    """``python -m bench.export_bench`` reads a 12-patch session every way while another world pings.

    Against a real bridge: every reading is answered (the JSONL export one line per ruling), and the other world's pings
    are measured throughout.
    """
    done = subprocess.run(
        [sys.executable, "-m", "bench.export_bench", "--patches", "12", "--tokens", "20", "--seconds", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout)
    quiet, *readings = result["rows"]
    assert quiet["reads"] == 0 and len(readings) == 5
    assert all(row["reads"] > 0 and row["size"] > 0 for row in readings)
    assert all(row["worst"] >= row["p99"] >= row["p50"] > 0 for row in result["rows"])
    jsonl = next(row for row in readings if row["name"].startswith("export.jsonl"))
    assert jsonl["lines"] == result["rulings"] == 13
