"""Whole-scene visibility: the incremental engine against the per-pair shapely baseline.

Run ``python -m bench.visibility_bench [--quick]``. For each seeded scene (tokens × zones) it prints
the full all-pairs time and the one-token-move update time of :class:`~bridge.core.visibility.SceneVisibility`
next to :class:`bench.baseline.BaselineVisibility` run in the same process, as a ratio, and writes a
plot of time against tokens × zones to ``docs/img/``.

It then times the engine against the outside yardstick, ``shared/bench/reference_los.py`` (found in a
``shared/bench`` folder beside the checkout or above it, or given with ``--yardstick``): its vectorised
NumPy kernel's all-pairs and one-move times at the same sizes, interleaved round by round with ours in
this process, and prints ours as a multiple of its (``--yardstick-only`` skips the per-pair baseline).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import shapely

from bridge.core.rules import RULESETS
from bridge.core.scene import Scene
from bridge.core.visibility import SceneVisibility
from bridge.core.world import SceneState

from .baseline import BaselineVisibility

__all__ = [
    "SIZES",
    "SizeResult",
    "YardstickResult",
    "bench_size",
    "bench_yardstick",
    "find_yardstick",
    "main",
    "make_scene",
    "move_token",
    "plot",
    "report",
    "yardstick_report",
]

#: (tokens, zones) of the benchmarked scenes.
SIZES = ((20, 30), (50, 100), (100, 200), (200, 400))
SCENE_PX = 8000
GRID = 100
ZONE_TYPES = ("low", "poor", "zero", "white-noise", "smoke", "eclipse")
TRAITS = ("multispectral-visor-1", "multispectral-visor-2", "multispectral-visor-3", "marksmanship", "sixth-sense")
#: Per ruleset (``--ruleset``): the action timed, zones (type and parameters), traits and environment.
#: Traveller and GURPS scenes also hold lights (scene lights, and a few carried ones), which they read.
ACTIONS = {"infinity-n4": "bs-attack", "traveller": "observation", "gurps-4e": "attack"}
RULESET_ZONES: dict[str, tuple[dict[str, Any], ...]] = {
    "traveller": (
        {"type": "smoke", "density": 1},
        {"type": "smoke", "density": 2},
        {"type": "woods"},
        {"type": "woods"},
        {"type": "illuminated", "by": "white-spotlight"},
        {"type": "illuminated", "by": "ir-spotlight"},
    ),
    "gurps-4e": (
        {"type": "darkness", "penalty": -4},
        {"type": "darkness", "penalty": -8},
        {"type": "darkness", "total": True},
        {"type": "unnatural-darkness"},
        {"type": "smoke"},
        {"type": "smoke"},
    ),
}
RULESET_TRAITS = {
    "traveller": ("image-intensifier", "ir-goggles", "thermal-viewer", "binoculars", "wide-spectrum-visual"),
    "gurps-4e": ("night-vision-3", "dark-vision", "infravision", "blind", "invisible"),
}
RULESET_ENVIRONMENT: dict[str, dict[str, Any]] = {
    "traveller": {"light": 2, "weather": "good"},
    "gurps-4e": {"darkness": -5},
}


def make_scene(
    tokens: int, zones: int, *, seed: int = 0, walls: int | None = None, ruleset: str = "infinity-n4"
) -> Scene:
    """A seeded ~8000 × 8000 px scene: zones of mixed shape and size, tokens, some walls. Infinity's by
    default; ``ruleset`` ``traveller`` or ``gurps-4e``: the same shapes with that ruleset's zones and
    traits, its environment, and lights (one scene light per 20 zones; every 25th token carries one)."""
    rng = random.Random(seed * 1_000_003 + tokens * 1009 + zones)
    regions = [_zone(rng, f"z{i}") for i in range(zones)]
    token_data = [_token(rng, f"t{i}") for i in range(tokens)]
    wall_count = walls if walls is not None else max(4, zones // 8)
    wall_data = [_wall(rng, f"w{i}") for i in range(wall_count)]
    extra: dict[str, Any] = {}
    if ruleset != "infinity-n4":
        kinds = RULESET_ZONES[ruleset]
        for region in regions:
            region["zone"] = dict(rng.choice(kinds))
        for k, token in enumerate(token_data):
            token["traits"] = [t for t in RULESET_TRAITS[ruleset] if rng.random() < 0.08]
            if k % 25 == 7:
                token["light"] = {"radius": rng.choice((5, 10)), "kind": "white"}
        lights = [
            {
                "id": f"l{i}",
                "x": rng.uniform(0, SCENE_PX),
                "y": rng.uniform(0, SCENE_PX),
                "radius": rng.choice((3, 6, 10)),
                "kind": rng.choice(("white", "white", "ir")),
            }
            for i in range(max(1, zones // 20))
        ]
        extra = {"lights": lights, "environment": RULESET_ENVIRONMENT[ruleset]}
    return Scene.model_validate(
        {
            "id": f"bench-{tokens}x{zones}",
            "grid": {"size": GRID, "distance": 1},
            "rules": {"ruleset": ruleset, "edition": "current", "locale": "en"},
            "regions": regions,
            "tokens": token_data,
            "walls": wall_data,
            **extra,
        }
    )


def state_of(scene: Scene, version: int = 0) -> SceneState:
    return SceneState(scene, RULESETS[scene.rules.ruleset], version=version)


def move_token(scene: Scene, token_id: str, *, seed: int = 0) -> Scene:
    """The scene with one token moved to a random place (as one ``scene.patch`` would)."""
    rng = random.Random(seed)
    tokens = [
        token.model_copy(update={"x": rng.randint(0, int(SCENE_PX - GRID)), "y": rng.randint(0, int(SCENE_PX - GRID))})
        if token.id == token_id
        else token
        for token in scene.tokens
    ]
    return scene.model_copy(update={"tokens": tokens})


# Scene generation.


def _zone(rng: random.Random, region_id: str) -> dict[str, Any]:
    size = rng.choice((60.0, 120.0, 200.0, 350.0, 600.0)) * rng.uniform(0.7, 1.3)
    cx, cy = rng.uniform(0, SCENE_PX), rng.uniform(0, SCENE_PX)
    kind = rng.choices(("rectangle", "circle", "ellipse", "polygon"), weights=(4, 3, 1, 2))[0]
    shapes: list[dict[str, Any]]
    if kind == "rectangle":
        w, h = size * rng.uniform(0.5, 1.5), size * rng.uniform(0.5, 1.5)
        rotation = rng.choice((0.0, 0.0, 0.0, rng.uniform(0, 180)))
        corner = {"x": cx - w / 2, "y": cy - h / 2}
        shapes = [{"type": "rectangle", **corner, "width": w, "height": h, "rotation": rotation}]
    elif kind == "circle":
        shapes = [{"type": "circle", "x": cx, "y": cy, "radius": size / 2}]
    elif kind == "ellipse":
        shapes = [
            {
                "type": "ellipse",
                "x": cx,
                "y": cy,
                "radiusX": size / 2,
                "radiusY": size / 2 * rng.uniform(0.4, 1.0),
                "rotation": rng.uniform(0, 180),
            }
        ]
    else:
        n = rng.randint(5, 10)
        angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(n))
        points: list[float] = []
        for angle in angles:
            r = size / 2 * rng.uniform(0.5, 1.0)
            points += [cx + r * math.cos(angle), cy + r * math.sin(angle)]
        ring = shapely.Polygon(list(zip(points[::2], points[1::2], strict=True)))
        if not ring.is_valid:
            # Angles more than half a turn apart can make the ring cross itself, which the bridge refuses
            # (Foundry never sends one): its hull instead, the random draws unchanged for what follows.
            points = [float(v) for xy in ring.convex_hull.exterior.coords[:-1] for v in xy]
        shapes = [{"type": "polygon", "points": points}]
    if rng.random() < 0.15:  # a hole in the middle
        shapes.append({"type": "circle", "x": cx, "y": cy, "radius": size / 6, "hole": True})
    span = rng.random()
    if span < 0.7:
        elevation: dict[str, Any] = {"bottom": None, "top": None}
    elif span < 0.85:
        elevation = {"bottom": 0, "top": rng.choice((2, 4, 6))}
    else:
        elevation = {"bottom": rng.choice((1, 3)), "top": None}
    return {
        "id": region_id,
        "shapes": shapes,
        "elevation": elevation,
        "zone": {"type": rng.choice(ZONE_TYPES)},
    }


def _token(rng: random.Random, token_id: str) -> dict[str, Any]:
    traits = [t for t in TRAITS if rng.random() < 0.08]
    return {
        "id": token_id,
        "name": token_id.upper(),
        "x": rng.randint(0, int(SCENE_PX - GRID)),  # whole pixels, as Foundry stores a token's x and y
        "y": rng.randint(0, int(SCENE_PX - GRID)),
        "width": rng.choice((1, 1, 1, 2)),
        "height": rng.choice((1, 1, 1, 2)),
        "shape": rng.choice(("rectangle", "rectangle", "ellipse")),
        "elevation": rng.choice((0, 0, 0, 0, 1, 3, 5)),
        "traits": traits,
    }


def _wall(rng: random.Random, wall_id: str) -> dict[str, Any]:
    x0, y0 = rng.uniform(0, SCENE_PX), rng.uniform(0, SCENE_PX)
    angle, length = rng.uniform(0, 2 * math.pi), rng.uniform(100, 600)
    data: dict[str, Any] = {
        "id": wall_id,
        # Whole pixels, as Foundry stores a wall's coordinates.
        "c": [round(x0), round(y0), round(x0 + length * math.cos(angle)), round(y0 + length * math.sin(angle))],
        "sight": rng.choice((20, 20, 20, 10, 10, 30, 40, 0)),
        "dir": rng.choice((0, 0, 0, 1, 2)),
    }
    if data["sight"] in (30, 40):
        data["threshold"] = {"sight": rng.uniform(5, 40)}
    if rng.random() < 0.2:
        data["door"] = 1
        data["ds"] = rng.choice((0, 1, 2))
    return data


@dataclass(frozen=True)
class SizeResult:
    """The figures of one scene size; times in seconds."""

    tokens: int
    zones: int
    pairs: int
    full: float
    full_baseline: float
    baseline_sampled: int  # pairs the baseline actually ran (its time is extrapolated to all pairs)
    move: float
    move_baseline: float
    agree: bool

    @property
    def full_ratio(self) -> float:
        return self.full_baseline / self.full

    @property
    def move_ratio(self) -> float:
        return self.move_baseline / self.move


def bench_size(
    tokens: int,
    zones: int,
    *,
    baseline_pairs: int,
    repeats: int,
    moves: int = 15,
    seed: int = 0,
    ruleset: str = "infinity-n4",
) -> SizeResult:
    """Full all-pairs time (best of ``repeats``) and one-token-move time (median of ``moves`` different
    moves; the baseline's median of 3), ours and the baseline's, on one seeded scene."""
    scene = make_scene(tokens, zones, seed=seed, ruleset=ruleset)
    state = state_of(scene)
    action = ACTIONS[ruleset]
    ids = [token.id for token in scene.tokens]
    every = [(a, b) for a in ids for b in ids if a != b]

    # The baseline runs first, while the heap holds no engine (its garbage collections would
    # otherwise rescan our rulings too): the full sample, then the pairs of three moves.
    baseline = BaselineVisibility(state, action=action)
    sample = every if len(every) <= baseline_pairs else random.Random(seed).sample(every, baseline_pairs)
    started = time.perf_counter()
    expected = baseline.rulings(sample)
    full_baseline = (time.perf_counter() - started) / len(sample) * len(every)
    # One token moves: the engine diffs the scenes; the baseline re-rules that token's pairs.
    # Several different random moves on the same long-lived engine: the median of each side.
    mover = ids[len(ids) // 2]
    touched = [(a, b) for a, b in every if mover in (a, b)]
    states = [state_of(move_token(scene, mover, seed=seed + 1 + k), version=k + 1) for k in range(moves)]
    baseline_times = []
    expected_after = []
    for moved in states[:3]:
        moved_baseline = BaselineVisibility(moved, action=action)
        started = time.perf_counter()
        expected_after.append(moved_baseline.rulings(touched))
        baseline_times.append(time.perf_counter() - started)
    move_baseline = statistics.median(baseline_times)

    full = _best(repeats, lambda: SceneVisibility(state, action=action))
    engine = SceneVisibility(state, action=action)
    agree = all(engine.rulings()[pair] == ruling for pair, ruling in expected.items())
    times = []
    for k, moved in enumerate(states):
        started = time.perf_counter()
        engine.update(moved)
        times.append(time.perf_counter() - started)
        if k < 3:
            agree = agree and all(engine.rulings()[pair] == r for pair, r in expected_after[k].items())
    move = statistics.median(times)
    return SizeResult(tokens, zones, len(every), full, full_baseline, len(sample), move, move_baseline, agree)


def report(results: list[SizeResult]) -> str:
    """The figures as a table; every time next to the baseline's, as a ratio."""
    rows = [
        f"{'tokens x zones':>15} {'pairs':>7} | {'full':>9} {'baseline':>10} {'ratio':>7} | "
        f"{'move':>9} {'baseline':>10} {'ratio':>7} | agree"
    ]
    for r in results:
        sampled = "*" if r.baseline_sampled < r.pairs else " "
        rows.append(
            f"{f'{r.tokens} x {r.zones}':>15} {r.pairs:>7} | {_ms(r.full)} {_ms(r.full_baseline)}{sampled} "
            f"{r.full_ratio:>6.1f}x | {_ms(r.move)} {_ms(r.move_baseline)}  {r.move_ratio:>6.1f}x | "
            f"{'yes' if r.agree else 'NO'}"
        )
    if any(r.baseline_sampled < r.pairs for r in results):
        rows.append(
            "* baseline timed on a random sample of pairs "
            + ", ".join(f"({r.baseline_sampled} of {r.pairs})" for r in results if r.baseline_sampled < r.pairs)
            + " and extrapolated per pair"
        )
    return "\n".join(rows)


def plot(results: list[SizeResult], path: Path) -> Path:
    """Time against tokens × zones, ours beside the baseline (log–log), written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r.tokens * r.zones for r in results]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    ax.loglog(x, [r.full_baseline for r in results], "o--", color="tab:red", label="full scene, per-pair shapely")
    ax.loglog(x, [r.full for r in results], "o-", color="tab:blue", label="full scene, SceneVisibility")
    ax.loglog(x, [r.move_baseline for r in results], "s--", color="tab:orange", label="one move, per-pair shapely")
    ax.loglog(x, [r.move for r in results], "s-", color="tab:green", label="one move, SceneVisibility.update")
    for r, xi in zip(results, x, strict=True):
        ax.annotate(f"{r.tokens}×{r.zones}", (xi, r.full), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xlabel("tokens × zones")
    ax.set_ylabel("seconds")
    ax.set_title("Whole-scene visibility (2-core machine)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


# The outside yardstick (shared/bench/reference_los.py), in this process.


@dataclass(frozen=True)
class YardstickResult:
    """Medians over interleaved rounds, in seconds. Ours: the full pass on a compiled scene (an engine
    built ``sharing`` another's compiled zones, as the yardstick's kernel is built before it is timed:
    every ordered pair's crossings, walls and verdict; rulings built when read), the same from the bare
    scene (zones compiled too), the pass with every ruling built, one move (``update``: the changed
    pairs found, their rulings built when read) and the move with its changed rulings built. The
    yardstick's NumPy all-pairs (2D and 3D) and one-move (3D) times."""

    tokens: int
    zones: int
    full: float
    full_cold: float
    full_built: float
    full_verdicts: float
    move: float
    move_built: float
    yard_full_2d: float
    yard_full_3d: float
    yard_move: float

    @property
    def yard_full(self) -> float:
        """The yardstick's faster all-pairs kernel (the stricter comparison)."""
        return min(self.yard_full_2d, self.yard_full_3d)

    @property
    def full_ratio(self) -> float:
        return self.full / self.yard_full

    @property
    def move_ratio(self) -> float:
        return self.move / self.yard_move


def find_yardstick(start: Path | None = None) -> Path | None:
    """``shared/bench/reference_los.py`` in the checkout's folder or one above it, or ``None``."""
    here = (start or Path(__file__)).resolve()
    for folder in here.parents:
        candidate = folder / "shared" / "bench" / "reference_los.py"
        if candidate.is_file():
            return candidate
    return None


def _load_yardstick(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("reference_los", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the yardstick from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def bench_yardstick(
    yardstick: ModuleType,
    tokens: int,
    zones: int,
    *,
    rounds: int = 5,
    seed: int = 0,
    ruleset: str = "infinity-n4",
    built: bool = True,
    verdicts: bool = True,
) -> YardstickResult:
    """Our full pass and one move against the yardstick's NumPy kernel at the same size, one of each per
    round in turn (so that load on a shared machine falls on both), medians over ``rounds``."""
    ref_scene = yardstick.make_scene(tokens, zones, 1)
    kernel = yardstick.NumpyLOS(ref_scene)
    ia, ib = yardstick.all_pairs(tokens)
    rng = np.random.default_rng(2)
    ref_moves = []
    for _ in range(rounds):
        k = int(rng.integers(tokens))
        moved = ref_scene.with_token_moved(k, rng.uniform(0, yardstick.MAP_SIZE, 2), float(rng.choice((0, 1, 3))))
        ref_moves.append((moved, *yardstick.pairs_of(tokens, k)))
    scene = make_scene(tokens, zones, seed=seed, ruleset=ruleset)
    state = state_of(scene)
    action = ACTIONS[ruleset]
    mover = scene.tokens[tokens // 2].id
    moves = [state_of(move_token(scene, mover, seed=seed + 1 + k), version=k + 1) for k in range(rounds)]
    kernel.los2d(ref_scene, ia, ib)  # warm: first calls pay for allocation
    compiled = SceneVisibility(state, action=action)
    engine = SceneVisibility(state, action=action)
    keys = ("full", "cold", "built", "verdicts", "move", "moved", "y2", "y3", "ymove")
    times: dict[str, list[float]] = {key: [] for key in keys}
    back = state_of(scene, version=rounds + 1)

    def timed(key: str, run: Callable[[], object]) -> None:
        gc.collect()
        started = time.perf_counter()
        run()
        times[key].append(time.perf_counter() - started)

    for r in range(rounds):
        timed("y2", lambda: kernel.los2d(ref_scene, ia, ib))
        timed("y3", lambda: kernel.los3d(ref_scene, ia, ib))
        timed("full", lambda: SceneVisibility(state, action=action, sharing=compiled))
        timed("cold", lambda: SceneVisibility(state, action=action))
        if built:
            timed("built", lambda: dict(SceneVisibility(state, action=action, sharing=compiled).rulings()))
        if verdicts:
            timed("verdicts", lambda: _all_verdicts(SceneVisibility(state, action=action, sharing=compiled)))
        timed("ymove", lambda r=r: kernel.los3d(*ref_moves[r]))
        timed("move", lambda r=r: engine.update(moves[r]))
        engine.update(back)
        if built:
            timed("moved", lambda r=r: dict(engine.update(moves[r])))
            engine.update(back)
    med = {key: statistics.median(values) if values else math.nan for key, values in times.items()}
    return YardstickResult(
        tokens,
        zones,
        med["full"],
        med["cold"],
        med["built"],
        med["verdicts"],
        med["move"],
        med["moved"],
        med["y2"],
        med["y3"],
        med["ymove"],
    )


def _all_verdicts(engine: SceneVisibility) -> int:
    """Every pair's verdict read (allowed, modifier): what a pass must know of each line."""
    verdict = engine.verdict
    return sum(verdict(*pair)[0] for pair in engine.rulings())


def yardstick_report(results: list[YardstickResult]) -> str:
    """Our times as multiples of the yardstick's NumPy kernel (target: within 2x)."""
    rows = [
        f"{'tokens x zones':>15} | {'full':>9} {'numpy 2d':>9} {'numpy 3d':>9} {'ratio':>6} | "
        f"{'move':>9} {'numpy 3d':>9} {'ratio':>6} | {'cold':>9} {'all built':>10} {'move built':>10} "
        f"{'+verdicts':>10}"
    ]
    for r in results:
        rows.append(
            f"{f'{r.tokens} x {r.zones}':>15} | {_ms(r.full)} {_ms(r.yard_full_2d)} {_ms(r.yard_full_3d)} "
            f"{r.full_ratio:>5.2f}x | {_ms(r.move)} {_ms(r.yard_move)} {r.move_ratio:>5.2f}x | "
            f"{_ms(r.full_cold)} {_ms(r.full_built)}  {_ms(r.move_built)}  {_ms(r.full_verdicts)}"
        )
    rows.append(
        "ratio: ours / the yardstick's (full: against the faster of its 2D and 3D kernels). full: every "
        "ordered pair's crossings, walls and verdict on a compiled scene; cold: zones compiled too; all "
        "built: full + every Ruling built; move: update() finding the changed pairs; move built: + their Rulings; "
        "+verdicts: full + every pair's verdict() read"
    )
    return "\n".join(rows)


def _best(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _ms(seconds: float) -> str:
    if math.isnan(seconds):
        return f"{'-':>10}"
    return f"{seconds * 1000:>8.1f}ms" if seconds < 10 else f"{seconds:>8.2f}s "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Whole-scene visibility against the per-pair shapely baseline.")
    parser.add_argument("--quick", action="store_true", help="the two smaller scenes only, one repetition")
    parser.add_argument("--plot", type=Path, default=Path("docs/img/performance.png"), help="where to write the plot")
    parser.add_argument("--baseline-pairs", type=int, default=2000, help="most pairs the baseline runs per scene")
    parser.add_argument("--yardstick", type=Path, default=None, help="path of shared/bench/reference_los.py")
    parser.add_argument("--yardstick-only", action="store_true", help="only the comparison with the yardstick")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds against the yardstick")
    parser.add_argument("--ruleset", choices=sorted(ACTIONS), default="infinity-n4", help="the scenes' ruleset")
    parser.add_argument("--sizes", default=None, help="only these sizes, e.g. 200x400,50x100")
    parser.add_argument("--no-built", action="store_true", help="skip 'all built' and 'move built' (slow rulesets)")
    parser.add_argument("--no-verdicts", action="store_true", help="skip '+verdicts' (slow before rules over arrays)")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    if args.sizes:
        sizes = tuple((int(a), int(b)) for a, b in (size.split("x") for size in args.sizes.split(",")))
    yardstick_path = args.yardstick or find_yardstick()
    if args.yardstick_only:
        if yardstick_path is None:
            raise SystemExit("no shared/bench/reference_los.py found: give --yardstick")
        return _yardstick_main(
            _load_yardstick(yardstick_path), sizes, args.rounds, args.ruleset, not args.no_built, not args.no_verdicts
        )
    results = []
    for tokens, zones in sizes:
        repeats, moves = (1, 5) if args.quick else (3, 15)
        results.append(
            bench_size(
                tokens, zones, baseline_pairs=args.baseline_pairs, repeats=repeats, moves=moves, ruleset=args.ruleset
            )
        )
        lines = report(results[-1:]).splitlines()
        print("\n".join(lines[:2]) if len(results) == 1 else lines[1], flush=True)
    print()
    print(report(results))
    if not args.quick:
        print(f"plot: {plot(results, args.plot)}")
    if yardstick_path is not None:
        print()
        _yardstick_main(_load_yardstick(yardstick_path), sizes, args.rounds, args.ruleset)
    return 0 if all(r.agree for r in results) else 1


def _yardstick_main(
    yardstick: ModuleType,
    sizes: tuple[tuple[int, int], ...],
    rounds: int,
    ruleset: str = "infinity-n4",
    built: bool = True,
    verdicts: bool = True,
) -> int:
    found = []
    for tokens, zones in sizes:
        found.append(
            bench_yardstick(yardstick, tokens, zones, rounds=rounds, ruleset=ruleset, built=built, verdicts=verdicts)
        )
        lines = yardstick_report(found[-1:]).splitlines()
        print("\n".join(lines[:2]) if len(found) == 1 else lines[1], flush=True)
    print()
    print(yardstick_report(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
