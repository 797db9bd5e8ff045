"""A watch's first (full) push: built from every pair's ruling (as before) against built from the verdicts.

``python -m bench.push_bench [--sizes 50x100,200x400] [--rounds 5] [--detail brief|full]``

For each seeded Infinity scene (``bench.visibility_bench.make_scene``, action ``bs-attack``) and each round,
in one process, alternately:

- *before*: a new engine (its compiled zones shared with a warm one, as a second watch of the scene would
  find them), ``dict(rulings())`` — a ``Ruling`` per pair —, the push from those rulings, encoded;
- *after*: a new engine, the push from :meth:`SceneVisibility.verdict_items` (no ruling for a brief
  push on Infinity), encoded.

Both pushes are compared byte for byte. It prints the medians of the engine's pass, of building and encoding
the push, and of the two together, as wall time (``perf_counter``) and as this thread's CPU time
(``thread_time``), with the load average at the start and the end: on a shared machine the CPU time is the
figure to compare. The garbage collector is held during each timed part (as the server's collector does).
A watch of every pair of a 200 × 400 scene (39,800 pairs) is above the bridge's default ``watch_pairs``
limit (10,000): the size shows how the cost grows.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.visibility_bench import make_scene, state_of
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneState
from bridge.protocol import encode_frames
from bridge.session import _annotations

#: A frame limit no push reaches: the push is encoded whole (the split is the same work either way).
_NO_SPLIT = 1 << 40


def _timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """``run()``, its wall and CPU seconds, with the collector held."""
    gc.collect()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.thread_time()
        result = run()
        return result, time.perf_counter() - wall, time.thread_time() - cpu
    finally:
        gc.enable()


def first_push(state: SceneState, warm: SceneVisibility, *, brief: bool, before: bool) -> dict[str, Any]:
    """One first push, the old way (``before``) or from the verdicts: its bytes and the times of its parts."""
    engine, engine_wall, engine_cpu = _timed(lambda: SceneVisibility(state, action="bs-attack", sharing=warm))

    def push() -> list[str]:
        if before:
            message = _annotations("w", state, dict(engine.rulings()), full=True, brief=brief)
        else:
            message = _annotations("w", state, engine.rulings(), full=True, brief=brief, engine=engine)
        return encode_frames(message, _NO_SPLIT)

    frames, push_wall, push_cpu = _timed(push)
    return {"text": frames[0], "engine": (engine_wall, engine_cpu), "push": (push_wall, push_cpu)}


def bench(tokens: int, zones: int, rounds: int, brief: bool) -> dict[str, Any]:
    state = state_of(make_scene(tokens, zones, seed=1))
    warm = SceneVisibility(state, action="bs-attack")
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    same = True
    for _ in range(rounds):
        old = first_push(state, warm, brief=brief, before=True)
        new = first_push(state, warm, brief=brief, before=False)
        same &= old.pop("text") == new.pop("text")
        runs[True].append(old)
        runs[False].append(new)
    row: dict[str, Any] = {"scene": f"{tokens}x{zones}", "pairs": tokens * (tokens - 1), "same_bytes": same}
    for label, before in (("before", True), ("after", False)):
        for part in ("engine", "push"):
            for k, clock in enumerate(("wall", "cpu")):
                row[f"{label}_{part}_{clock}_ms"] = round(1000 * statistics.median(r[part][k] for r in runs[before]), 1)
        for k, clock in enumerate(("wall", "cpu")):
            total = statistics.median(r["engine"][k] + r["push"][k] for r in runs[before])
            row[f"{label}_total_{clock}_ms"] = round(1000 * total, 1)
    row["push_ratio_cpu"] = round(row["before_push_cpu_ms"] / max(row["after_push_cpu_ms"], 1e-9), 1)
    row["total_ratio_cpu"] = round(row["before_total_cpu_ms"] / max(row["after_total_cpu_ms"], 1e-9), 1)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.push_bench")
    parser.add_argument("--sizes", default="50x100,200x400", help="tokens x zones, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--detail", choices=("brief", "full"), default="brief")
    args = parser.parse_args(argv)
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for size in args.sizes.split(","):
        tokens, zones = (int(v) for v in size.split("x"))
        row = bench(tokens, zones, args.rounds, args.detail == "brief")
        print(
            f"  {row['scene']:>8} ({row['pairs']} pairs, {args.detail}): "
            f"same bytes {'yes' if row['same_bytes'] else 'NO'}\n"
            f"    before: engine {row['before_engine_cpu_ms']} ms + push {row['before_push_cpu_ms']} ms CPU "
            f"= {row['before_total_cpu_ms']} ms (wall {row['before_total_wall_ms']} ms)\n"
            f"    after:  engine {row['after_engine_cpu_ms']} ms + push {row['after_push_cpu_ms']} ms CPU "
            f"= {row['after_total_cpu_ms']} ms (wall {row['after_total_wall_ms']} ms)\n"
            f"    ratio (CPU): push {row['push_ratio_cpu']}x, engine + push {row['total_ratio_cpu']}x"
        )
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
