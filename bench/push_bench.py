"""A watch's first (full) push: built from every pair's ruling (as before) against built from the verdicts.

``python -m bench.push_bench [--sizes 50x100,200x400] [--rounds 5] [--detail brief|full] [--moves N]``

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

``--moves N`` also times the brief push that follows each of N one-token moves on one long-lived engine,
alternately built from the rulings and from the verdicts (CPU time), beside the ``update()`` before it.

``--changed N`` only counts, over N such moves, how many of the mover's pairs change their verdict, MOD or
crossings (what a push would still carry if it left out pairs whose sight line alone moved).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.visibility_bench import make_scene, move_token, state_of
from bridge.core.scene import Scene
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneState
from bridge.protocol import encode_frames
from bridge.session import _annotations

#: A frame limit no push reaches: the push is encoded whole (the split is the same work either way).
_NO_SPLIT = 1 << 40


def _timed(run: Callable[[], Any], *, collect: bool = True) -> tuple[Any, float, float]:
    """``run()``, its wall and CPU seconds, with the collector held (after a full collection if ``collect``)."""
    if collect:
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

    def push() -> list[bytes]:
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


def _moves(scene: Scene, count: int) -> Iterator[tuple[int, str, Scene]]:
    """``count`` one-token moves of ``scene`` (the seeded sequence ``bench.ws_bench`` sends): the move's number,
    the token moved and the scene after it."""
    rng = random.Random(2)
    for i in range(count):
        token = rng.choice(scene.tokens).id
        scene = move_token(scene, token, seed=i)
        yield i, token, scene


def move_pushes(tokens: int, zones: int, moves: int) -> dict[str, Any]:
    """The push after each one-token move on one long-lived engine (``update`` then the brief push, encoded),
    alternately from the rulings (before) and from the verdicts (after): CPU p50/p99 of the push, and of
    the ``update`` before it (the same either way)."""
    scene = make_scene(tokens, zones, seed=1)
    engine = SceneVisibility(state_of(scene), action="bs-attack")
    pushes: dict[bool, list[float]] = {True: [], False: []}
    updates: list[float] = []
    for i, _, moved in _moves(scene, moves + 20):
        state = state_of(moved, i + 1)
        if i % 50 == 0:
            gc.collect()  # now and then, untimed: a full pass per move would dominate the run
        changes, _, update_cpu = _timed(lambda state=state: engine.update(state), collect=False)
        before = i % 2 == 1

        def push(changes: Any = changes, state: SceneState = state, before: bool = before) -> list[bytes]:
            if before:
                return encode_frames(_annotations("w", state, dict(changes), full=False, brief=True), _NO_SPLIT)
            return encode_frames(_annotations("w", state, changes, full=False, brief=True, engine=engine), _NO_SPLIT)

        _, _, push_cpu = _timed(push, collect=False)
        if i >= 20:  # the first moves fill the memos
            pushes[before].append(push_cpu)
            updates.append(update_cpu)

    def ms(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {
        "scene": f"{tokens}x{zones}",
        "moves": moves,
        "before_push_cpu_p50_ms": ms(pushes[True], 0.5),
        "before_push_cpu_p99_ms": ms(pushes[True], 0.99),
        "after_push_cpu_p50_ms": ms(pushes[False], 0.5),
        "after_push_cpu_p99_ms": ms(pushes[False], 0.99),
        "update_cpu_p50_ms": ms(updates, 0.5),
        "update_cpu_p99_ms": ms(updates, 0.99),
    }


def _brief_content(ruling: Any) -> tuple[Any, ...]:
    """What a brief push says of a pair apart from its sight line: the verdict, the MOD and the crossings."""
    return (ruling.allowed, ruling.modifier, tuple((c.region, c.zone, c.kind) for c in ruling.crossings))


def changed_pairs(tokens: int, zones: int, moves: int) -> dict[str, Any]:
    """Of the moved token's pairs (every one of which a move's push resends: its sight line moved), how many
    changed anything else a brief push carries — the same scene, seed and moves as ``--moves`` and
    ``bench.ws_bench``: per move, the mover's pairs, those whose verdict, MOD or crossings changed, and those
    whose verdict or MOD changed."""
    scene = make_scene(tokens, zones, seed=1)
    engine = SceneVisibility(state_of(scene), action="bs-attack")
    rows: list[tuple[int, int, int]] = []
    for i, token, moved in _moves(scene, moves):
        before = {pair: _brief_content(r) for pair, r in engine.rulings().items() if token in pair}  # not yet updated
        engine.update(state_of(moved, i + 1))
        after = {pair: _brief_content(r) for pair, r in engine.rulings().items() if token in pair}
        changed = sum(1 for pair, content in after.items() if before[pair] != content)
        verdict = sum(1 for pair, content in after.items() if before[pair][:2] != content[:2])
        rows.append((len(after), changed, verdict))
    return {
        "scene": f"{tokens}x{zones}",
        "moves": moves,
        "mover_pairs": sum(row[0] for row in rows) / moves,
        "changed": sum(row[1] for row in rows) / moves,
        "changed_p50": statistics.median(row[1] for row in rows),
        "verdict_changed": sum(row[2] for row in rows) / moves,
    }


def _sizes(text: str) -> list[tuple[int, int]]:
    """``"50x100,200x400"`` as ``[(50, 100), (200, 400)]`` (tokens, zones)."""
    return [(int(tokens), int(zones)) for tokens, zones in (size.split("x") for size in text.split(","))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.push_bench")
    parser.add_argument("--sizes", default="50x100,200x400", help="tokens x zones, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--detail", choices=("brief", "full"), default="brief")
    parser.add_argument("--moves", type=int, default=0, help="also time the brief push after this many moves")
    parser.add_argument(
        "--changed",
        type=int,
        default=0,
        metavar="N",
        help="only count, over N moves, the mover's pairs whose verdict, MOD or crossings changed (no timing)",
    )
    args = parser.parse_args(argv)
    if args.changed:
        for tokens, zones in _sizes(args.sizes):
            row = changed_pairs(tokens, zones, args.changed)
            print(
                f"  {row['scene']:>8}, {row['moves']} one-token moves: "
                f"the mover's pairs {row['mover_pairs']:.1f} a move; "
                f"verdict, MOD or crossings changed {row['changed']:.1f} (p50 {row['changed_p50']:g}); "
                f"verdict or MOD changed {row['verdict_changed']:.1f}"
            )
        return 0
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if args.moves:
        for tokens, zones in _sizes(args.sizes):
            row = move_pushes(tokens, zones, args.moves)
            print(
                f"  {row['scene']:>8}, push after a move (CPU; {row['moves']} moves, alternately): "
                f"before p50 {row['before_push_cpu_p50_ms']} ms p99 {row['before_push_cpu_p99_ms']} ms; "
                f"after p50 {row['after_push_cpu_p50_ms']} ms p99 {row['after_push_cpu_p99_ms']} ms; "
                f"(update() before it: p50 {row['update_cpu_p50_ms']} ms p99 {row['update_cpu_p99_ms']} ms)"
            )
    for tokens, zones in _sizes(args.sizes):
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
