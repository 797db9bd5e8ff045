"""The ignored-list benchmark runs end to end on a small scene (its figures are reported, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUN = ("--runs", "1", "--json")


def test_the_ignored_bench_lists_what_its_scene_cannot_use() -> None:
    """``python -m bench.ignored_bench`` lists the 6 things its scene cannot use and reports both ratios.

    The scene: 2,000 walls (2 of no length), 200 tokens (2 with a Traveller trait), 200 zones (2 of GURPS darkness).
    """
    done = subprocess.run(
        [sys.executable, "-m", "bench.ignored_bench", "--walls", "2000", "--tokens", "200", "--regions", "200", *RUN],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["listed"] == 6 and row["ignored_in_of_sync"] > 0 and row["patch_of_sync"] > 0
