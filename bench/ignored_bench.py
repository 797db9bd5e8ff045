"""What listing the ignored costs: ``ignored_in`` against the whole ``scene.sync`` it is part of.

    .venv/bin/python -m bench.ignored_bench [--walls 50000] [--tokens 5000] [--regions 5000] [--runs 3] [--json]

One offline :class:`~bridge.session.Session` (the server's logic) syncs an Infinity scene of ``--walls``
walls (one in a thousand of no length), ``--tokens`` tokens (one in a hundred with a Traveller trait) and
``--regions`` zones (one in a hundred of GURPS darkness); then moves one token by ``scene.patch``. For
each run it reports the time :func:`bridge.core.ignored.ignored_in` takes on the scene alone, as a
fraction of the whole ``scene.sync`` (decoding, validation, checks, the answer), and the patch's time:
the baseline is the same process's own sync, so the figures are ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bridge.core.ignored import ignored_in
from bridge.core.rules import RULESETS
from bridge.core.scene import Scene
from bridge.core.world import SceneLimits
from bridge.session import Limits, Session, Worlds


def build(walls: int, tokens: int, regions: int) -> dict[str, Any]:
    return {
        "id": "s-big",
        "name": "Big",
        "rules": {"ruleset": "infinity-n4"},
        "walls": [{"id": f"w{i}", "c": [i, 0, i, 0 if i % 1000 == 0 else 10]} for i in range(walls)],
        "tokens": [
            {
                "id": f"t{i}",
                "name": f"T{i}",
                "x": i * 10,
                "y": 500,
                "traits": ["radar" if i % 100 == 0 else "sixth-sense"],
            }
            for i in range(tokens)
        ],
        "regions": [
            {
                "id": f"r{i}",
                "name": f"Zone {i}",
                "shapes": [{"type": "rectangle", "x": i * 10, "y": 1000, "width": 5, "height": 5}],
                "zone": {"type": "darkness", "penalty": -3} if i % 100 == 0 else {"type": "low"},
            }
            for i in range(regions)
        ],
    }


def run(walls: int, tokens: int, regions: int) -> dict[str, Any]:
    data = build(walls, tokens, regions)
    frame = json.dumps({"type": "scene.sync", "id": "q", "scene": data})
    big = SceneLimits(walls=max(walls, 50_000), tokens=max(tokens, 5_000), regions=max(regions, 5_000))
    worlds = Worlds(scene_limits=big)
    session = Session(worlds, offline=True, limits=Limits(max_frame_bytes=1 << 30, messages_per_second=float("inf")))
    start = time.perf_counter()
    (answer,) = session.receive(frame)
    sync_s = time.perf_counter() - start
    listed = len(getattr(answer.message, "ignored", None) or [])
    scene = Scene.model_validate(data)
    start = time.perf_counter()
    ignored_in(scene, RULESETS["infinity-n4"])
    ignored_s = time.perf_counter() - start
    move = {"id": "t1", "name": "T1", "x": 15, "y": 500, "traits": ["sixth-sense"]}
    patch = json.dumps({"type": "scene.patch", "id": "p", "scene": "s-big", "upsert": {"tokens": [move]}})
    start = time.perf_counter()
    session.receive(patch)
    patch_s = time.perf_counter() - start
    return {
        "walls": walls,
        "tokens": tokens,
        "regions": regions,
        "listed": listed,
        "ignored_in_of_sync": round(ignored_s / sync_s, 3),
        "patch_of_sync": round(patch_s / sync_s, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.ignored_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--walls", type=int, default=50_000)
    parser.add_argument("--tokens", type=int, default=5_000)
    parser.add_argument("--regions", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args(argv)
    for _ in range(args.runs):
        row = run(args.walls, args.tokens, args.regions)
        if args.json:
            print(json.dumps(row))
        else:
            print(
                f"{row['walls']} walls, {row['tokens']} tokens, {row['regions']} zones: {row['listed']} listed; "
                f"ignored_in = {row['ignored_in_of_sync']:.1%} of the scene.sync; "
                f"a token move's patch = {row['patch_of_sync']:.2%} of it"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
