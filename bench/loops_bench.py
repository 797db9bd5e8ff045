"""The engine's compiled loops alone, on the very arrays a real engine passes them.

Run ``python -m bench.loops_bench [--sizes 50x100,200x400] [--numba PATH]``. For each seeded scene
(``bench.visibility_bench.make_scene``), one engine is built while every call of the four loops
(``zone_meetings``, ``crossing_order``, ``conic_entries``, ``box_pairs``) is recorded; each loop's first
call is then timed again alone (best of ``--repeats``).

``--numba PATH`` also loads another ``meetings.py`` (the numba version the loops replaced in issue 15:
``git show e73eef9:bridge/core/meetings.py > /tmp/meetings_numba.py``, and ``pip install numba``), runs
it on the same arrays, alternately with ours, and says whether the outputs are equal bit for bit.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from types import ModuleType
from typing import Any

import numpy as np

import bridge.core.meetings as ours
import bridge.core.visibility as visibility

from .visibility_bench import make_scene, state_of

__all__ = ["main"]

LOOPS = ("zone_meetings", "crossing_order", "conic_entries", "box_pairs")


def _record(tokens: int, zones: int) -> dict[str, tuple[tuple[Any, ...], dict[str, Any]]]:
    """The first call of each loop while an engine of the seeded scene is built: its arguments, copied."""
    calls: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
    originals = {name: getattr(visibility, name) for name in LOOPS}

    def spy(name: str) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if name not in calls:
                calls[name] = (args, {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in kwargs.items()})
            return originals[name](*args, **kwargs)

        return wrapped

    try:
        for name in LOOPS:
            setattr(visibility, name, spy(name))
        visibility.SceneVisibility(state_of(make_scene(tokens, zones, seed=1)), action="bs-attack")
    finally:
        for name, original in originals.items():
            setattr(visibility, name, original)
    return calls


def _run(module: ModuleType, name: str, call: tuple[tuple[Any, ...], dict[str, Any]]) -> Any:
    args, kwargs = call
    fresh = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}  # `ambiguous` is written
    return getattr(module, name)(*args, **fresh)


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bridge.core._meetings_other", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache looks its module up by name
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.loops_bench")
    parser.add_argument("--sizes", default="50x100,200x400", help="tokens x zones, comma-separated")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--numba", metavar="PATH", help="another meetings.py to compare with (the numba one)")
    args = parser.parse_args(argv)
    other = _load(args.numba) if args.numba else None
    print(f"loops compiled: {ours.COMPILED}")
    for size in args.sizes.split(","):
        tokens, zones = (int(v) for v in size.split("x"))
        for name, call in _record(tokens, zones).items():
            modules = [("ours", ours)] + ([("other", other)] if other else [])
            best = dict.fromkeys((label for label, _ in modules), float("inf"))
            for _ in range(args.repeats):
                for label, module in modules:
                    began = time.perf_counter()
                    _run(module, name, call)
                    best[label] = min(best[label], time.perf_counter() - began)
            line = f"{size:>9} {name:15} ours {best['ours'] * 1e3:9.3f} ms"
            if other is not None:
                same = all(
                    np.array_equal(a, b, equal_nan=True)
                    for a, b in zip(_run(ours, name, call), _run(other, name, call), strict=True)
                )
                line += f"   other {best['other'] * 1e3:9.3f} ms   ours/other {best['ours'] / best['other']:.2f}"
                line += f"   outputs equal: {same}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
