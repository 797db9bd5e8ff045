"""CPU time of the costliest message each cost limit lets through, and of the first one over it.

Run ``python -m bench.message_cost``. Every message goes through a :class:`~bridge.session.Session`
with the default limits (as ``sightline serve`` sets them), offline: no socket, so the figure is the
bridge's own work for that one message. The scenes are hostile: zones and limited walls all lie across
the sight lines, so no index narrows them. The table is in ``docs/operations.md``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bridge.config import BridgeConfig
from bridge.protocol import encode
from bridge.server import scene_limits
from bridge.session import BEST_LINES, Limits, Send, Session, Worlds
from tests.scenes import rect_region, scene, token, wall

__all__ = ["main", "measure"]


def _session() -> Session:
    config = BridgeConfig()
    worlds = Worlds(scene_limits=scene_limits(config))
    limits = Limits(
        max_frame_bytes=config.max_frame_bytes * 4,  # the figures are about work, not about frame bytes
        messages_per_second=float("inf"),
        watches=config.max_watches_per_connection,
        watch_pairs=config.max_watch_pairs,
        best_line_tests=config.max_best_line_tests,
    )
    return Session(worlds, offline=True, limits=limits)


def _timed(session: Session, message: dict[str, Any]) -> tuple[float, str]:
    start = time.process_time()
    effects = session.receive(json.dumps(message))
    spent = time.process_time() - start
    answer = json.loads(encode(next(e.message for e in effects if isinstance(e, Send))))
    return spent, answer.get("code") or answer["type"]


def _zigzag(n: int) -> list[float]:
    return [c for i in range(n) for c in ((0 if i % 2 else 1000), (i * 37) % 1000)]


def measure() -> list[tuple[str, float, str]]:
    """(what, CPU seconds, answer) for each message."""
    rows: list[tuple[str, float, str]] = []
    against = BridgeConfig().max_best_line_tests // BEST_LINES  # zones + walls at the limit
    zones = 100
    regions = [rect_region(f"r{i}", "low", 500 + (i % 50) * 10, -2000, 5, 6000) for i in range(zones)]
    walls = [wall(f"w{i}", 400 + i * 0.5, -3000, 401 + i * 0.5, 3000, sight=10) for i in range(against - zones)]
    pair = [token("a", 0, 0), token("b", 2000, 0)]
    ask = {"type": "adjudicate", "id": "a", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack"}
    for extra, label in ((0, "at"), (1, "one wall over")):
        session = _session()
        more = [wall("wx", 400, -3000, 401, 3000, sight=10)] * extra
        session.receive(
            json.dumps(
                {
                    "type": "scene.sync",
                    "id": "q",
                    "scene": scene(regions=regions, tokens=pair, walls=walls + more, lines="best"),
                }
            )
        )
        tests = BEST_LINES * (against + extra)
        rows.append(
            (f"adjudicate 'best', {tests:,} line tests ({label} the limit)", *_timed(session, {**ask, "log": False}))
        )
    circles = [{"type": "circle", "x": 0, "y": 0, "radius": 1e8}]
    for count in (300, 122):
        session = _session()
        many = [{"id": f"c{k}", "shapes": circles, "zone": {"type": "low"}} for k in range(count)]
        sync = {
            "type": "scene.sync",
            "id": "q",
            "scene": scene(regions=many, tokens=[token("a", -2e7, 0), token("b", 2e7, 0)]),
        }
        rows.append((f"scene.sync of {count} circles of radius 1e8", *_timed(session, sync)))
    rows.append(("adjudicate across 122 such circles", *_timed(session, {**ask, "log": False})))
    for n in (500, BridgeConfig().max_ring_vertices):
        region = {"id": "r", "shapes": [{"type": "polygon", "points": _zigzag(n)}], "zone": {"type": "low"}}
        rows.append(
            (
                f"scene.sync of a self-crossing zigzag of {n:,} vertices",
                *_timed(_session(), {"type": "scene.sync", "id": "q", "scene": scene(regions=[region])}),
            )
        )
    return rows


def main() -> None:
    print("| message at the default limits | CPU time | answer |")
    print("|---|---|---|")
    for what, seconds, answer in measure():
        shown = f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
        print(f"| {what} | {shown} | `{answer}` |")


if __name__ == "__main__":
    main()
