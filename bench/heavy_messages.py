"""One world's heaviest messages, measured in one process: what each costs the world's thread, and the longest
single step that holds the interpreter (while it is held, every other world waits).

``PYTHONPATH=CHECKOUT python -m bench.heavy_messages [--rounds 3]`` — run it with an older checkout on the path to
measure the code before (a step the older code lacks is printed as such).

1. A frame of 4 × the frame limit (16 MiB of 3-byte characters), refused ``too-large``: what reading it as text
   cost (aiohttp's UTF-8 decoding on the event loop, then the session's encoding to measure it) against what the
   session does with its bytes.
2. A wall moved on a scene of 50,000 walls, then a ruling (the per-pair path: options of its own) and one from
   the engine: the CPU of each, and the wall index made anew against updated.
3. ``adjudicate`` with ``log: false`` and 217,000 option keys (a 4 MiB frame): the CPU of the answer.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from bench.hostile import FRAME, base_scene
from bridge.core.geometry import WallIndex
from bridge.core.scene import Wall
from bridge.protocol import encode
from bridge.session import Limits, Session, Worlds


def best(rounds: int, work: Callable[[], object]) -> float:
    """The least wall time of ``rounds`` runs of ``work``, in ms."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def cpu(work: Callable[[], object]) -> tuple[float, Any]:
    start = time.process_time()
    result = work()
    return (time.process_time() - start) * 1e3, result


def ready_session() -> Session:
    session = Session(Worlds(), authenticate=lambda world, secret: True, limits=Limits())
    session.receive(json.dumps({"type": "hello", "protocol": 1, "world": "w", "secret": "s"}))
    return session


def frames(rounds: int) -> None:
    note = "\u20ac" * ((4 * FRAME - 1024) // 3)
    over = ('{"type": "adjudicate", "id": "big", "options": {"note": "' + note + '"}}').encode()
    text = over.decode()
    session = ready_session()
    print(f"1. a frame of {len(over) / 2**20:.1f} MiB (4 x the frame limit), refused too-large")
    print(f"   decoding it as text (aiohttp, on the event loop): {best(rounds, over.decode):.1f} ms in one call")
    encode = lambda: text.encode("utf-8", "surrogatepass")  # noqa: E731
    print(f"   measuring the text (encoded again, the world's worker): {best(rounds, encode):.1f} ms in one call")
    as_text = best(rounds, lambda: session.receive(text))
    as_bytes = best(rounds, lambda: session.receive(over))
    print(f"   the session's answer to the text: {as_text:.1f} ms; to its bytes: {as_bytes:.2f} ms")


def walls(rounds: int) -> None:
    count = 50_000
    data = [
        {"id": f"w{i}", "c": [(i * 13) % 9900, (i * 29) % 9900, (i * 13) % 9900 + 150, (i * 29) % 9900 + 90]}
        for i in range(count)
    ]
    session = ready_session()
    session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": base_scene("walled", walls=data)}))
    ask = {"type": "adjudicate", "scene": "walled", "actor": "a", "target": "t", "action": "bs-attack", "log": False}
    per_pair = {**ask, "options": {"note": 1}}
    session.receive(json.dumps({**ask, "id": "a"}))
    session.receive(json.dumps({**per_pair, "id": "p"}))
    print(f"2. a wall moved among {count:,}, then a ruling from the engine and one per pair (CPU, ms)")
    for n in range(rounds):
        move = {"type": "scene.patch", "id": f"m{n}", "scene": "walled"}
        move["upsert"] = {"walls": [{"id": "w0", "c": [n % 50, 0, 150, 90]}]}
        patch, _ = cpu(lambda: session.receive(json.dumps(move)))  # noqa: B023
        engine, _ = cpu(lambda: session.receive(json.dumps({**ask, "id": f"a{n}"})))  # noqa: B023
        alone, _ = cpu(lambda: session.receive(json.dumps({**per_pair, "id": f"p{n}"})))  # noqa: B023
        print(f"   patch {patch:.0f}, engine's ruling {engine:.0f}, per-pair ruling {alone:.0f}")
    objects = [Wall.model_validate(wall) for wall in data]
    index = WallIndex(objects, units_per_px=0.01)
    moved = list(objects)
    moved[0] = Wall.model_validate({"id": "w0", "c": [7, 0, 150, 90]})
    anew = best(rounds, lambda: WallIndex(moved, units_per_px=0.01))
    updated = getattr(index, "updated", None)
    since = f"{best(rounds, lambda: updated(moved)):.1f} ms" if updated else "(no WallIndex.updated in this code)"
    print(f"   the wall index made anew: {anew:.0f} ms; updated for the wall moved: {since}")


def options(rounds: int) -> None:
    session = ready_session()
    session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": base_scene("small")}))
    keys = 217_000
    message = {"type": "adjudicate", "scene": "small", "actor": "a", "target": "t", "action": "bs-attack"}
    message |= {"log": False, "options": {f"k{i}": i for i in range(keys)}}
    print(f"3. adjudicate log: false with {keys:,} option keys ({len(json.dumps(message)) / 2**20:.1f} MiB)")
    for n in range(rounds):
        text = json.dumps({**message, "id": f"a{n}"})
        spent, effects = cpu(lambda: session.receive(text))  # noqa: B023
        answer = json.loads(encode(effects[0].message))
        print(f"   {spent:.0f} ms of CPU, answered {answer.get('code', answer['type'])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.heavy_messages", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each measure (the least time is shown)")
    args = parser.parse_args(argv)
    frames(args.rounds)
    walls(args.rounds)
    options(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
