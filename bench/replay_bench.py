"""``adjudicate`` from the scene's kept engine against the per-pair path, in one process.

Run ``python -m bench.replay_bench [--quick] [--json]``. Two figures:

- **replay**: a long recorded game (made here, seeded: :func:`record_game`) replayed through
  :func:`bridge.replay.replay_lines` as ``sightline replay`` does, once with the engines
  (``Limits.engine_pairs``, the default) and once as it ran before: every ``adjudicate`` on the per-pair
  path (``engine_pairs=0``) and a log record built for each logged one (``records=True``; replay keeps no
  log, so it no longer builds them), alternately, best of ``--runs``; the answers of both must be equal.
  Two games: ``aro`` (per order, the active model moves, the GM asks every enemy whether it has a line
  for an ARO, the player previews three targets and rolls against one, one enemy rolls its ARO) and
  ``cards`` (per order, a move, then one preview and its roll: the fewest questions a move brings).
- **adjudicate, scene already ruled**: on one seeded scene, ``Session.receive`` of an ``adjudicate``
  (JSON in, the answer's effect out) for random distinct pairs once the scene's engine is built,
  against the same for the per-pair path; also what the first question costs (the engine's build), and
  one question after a token moved (the engine's update against the per-pair path's new geometry).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bridge.replay import replay_lines
from bridge.session import Limits, Session, Worlds

from .visibility_bench import GRID, SCENE_PX, make_scene

__all__ = ["adjudicate_figures", "main", "record_game", "replay_figures"]

ENGINE = Limits(messages_per_second=float("inf"), burst=1)
PER_PAIR = Limits(messages_per_second=float("inf"), burst=1, engine_pairs=0)


def record_game(
    tokens: int,
    zones: int,
    orders: int,
    *,
    mix: str = "aro",
    seed: int = 0,
    ruleset: str = "infinity-n4",
    actions: tuple[str, str] = ("bs-attack", "bs-attack"),
) -> list[str]:
    """The client messages of a seeded game on a ``tokens`` × ``zones`` scene, one JSON text a line.

    ``ruleset``: the scene's (:func:`bench.visibility_bench.make_scene`); ``actions``: the action asked
    about for an attack and for a reaction."""
    rng = random.Random(seed)
    scene = make_scene(tokens, zones, seed=seed, ruleset=ruleset)
    data = scene.model_dump(mode="json")
    lines = [json.dumps({"type": "scene.sync", "id": "sync", "scene": data})]
    models = {item["id"]: item for item in data["tokens"]}
    ids = list(models)
    sides = (ids[: len(ids) // 2], ids[len(ids) // 2 :])
    count = 0

    def ask(actor: str, target: str, *, reaction: bool = False, log: bool = False) -> None:
        nonlocal count
        count += 1
        message = {"type": "adjudicate", "id": f"q{count}", "scene": scene.id, "actor": actor, "target": target}
        message.update(action=actions[1] if reaction else actions[0], reaction=reaction, log=log)
        lines.append(json.dumps(message))

    for order in range(orders):
        mine, theirs = sides[order % 2], sides[1 - order % 2]
        mover = rng.choice(mine)
        model = models[mover]
        reach = 4 * GRID  # up to four squares a move
        model["x"] = min(max(model["x"] + rng.randint(-reach, reach), 0), SCENE_PX - GRID)
        model["y"] = min(max(model["y"] + rng.randint(-reach, reach), 0), SCENE_PX - GRID)
        patch = {"type": "scene.patch", "id": f"p{order}", "scene": scene.id, "upsert": {"tokens": [model]}}
        lines.append(json.dumps(patch))
        if mix == "aro":
            for enemy in theirs:
                ask(enemy, mover, reaction=True)
            targets = rng.sample(theirs, 3)
            for target in targets:
                ask(mover, target)
            ask(mover, targets[0], log=True)
            ask(rng.choice(theirs), mover, reaction=True, log=True)
        else:
            target = rng.choice(theirs)
            ask(mover, target)
            ask(mover, target, log=True)
    return lines


def _timed(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def replay_figures(tokens: int, zones: int, orders: int, *, mix: str, runs: int) -> dict[str, Any]:
    """Best-of-``runs`` replay times of one recorded game, engines against the per-pair path."""
    game = record_game(tokens, zones, orders, mix=mix)
    plain_times, engine_times = [], []
    plain_answers: list[str] = []
    engine_answers: list[str] = []
    for _ in range(runs):
        elapsed, plain_answers = _timed(lambda: list(replay_lines(game, limits=PER_PAIR, records=True)))
        plain_times.append(elapsed)
        elapsed, engine_answers = _timed(lambda: list(replay_lines(game, limits=ENGINE)))
        engine_times.append(elapsed)
    questions = sum('"adjudicate"' in line for line in game)
    return {
        "figure": "replay",
        "game": mix,
        "scene": f"{tokens}x{zones}",
        "messages": len(game),
        "adjudicate": questions,
        "per_pair_s": min(plain_times),
        "engine_s": min(engine_times),
        "ratio": min(plain_times) / min(engine_times),
        "equal": plain_answers == engine_answers,
    }


def _question(scene_id: str, actor: str, target: str, n: int, action: str = "bs-attack") -> str:
    message = {"type": "adjudicate", "id": f"a{n}", "scene": scene_id, "actor": actor, "target": target}
    return json.dumps(message | {"action": action, "log": False})


_ACTIONS = {"infinity-n4": "bs-attack", "gurps-4e": "attack", "traveller": "observation"}


def adjudicate_figures(tokens: int, zones: int, questions: int, *, ruleset: str = "infinity-n4") -> dict[str, Any]:
    """Per-question times of ``Session.receive`` on a scene already ruled, engines against the per-pair path
    (``ruleset``: the scene's, asked about its attack: ``bs-attack``, ``attack``, ``observation``)."""
    scene = make_scene(tokens, zones, ruleset=ruleset)
    action = _ACTIONS[ruleset]
    sync = json.dumps({"type": "scene.sync", "id": "sync", "scene": scene.model_dump(mode="json")})
    ids = [token.id for token in scene.tokens]
    rng = random.Random(1)
    pairs = [tuple(rng.sample(ids, 2)) for _ in range(questions)]
    result: dict[str, Any] = {"figure": "adjudicate", "scene": f"{tokens}x{zones}", "questions": questions}
    result["ruleset"] = ruleset
    for name, limits in (("per_pair", PER_PAIR), ("engine", ENGINE)):
        session = Session(Worlds(), offline=True, limits=limits)
        session.receive(sync)
        first, _ = _timed(lambda s=session: s.receive(_question(scene.id, ids[0], ids[1], 0, action)))
        times = []
        for n, (actor, target) in enumerate(pairs, start=1):
            ask = _question(scene.id, actor, target, n, action)
            elapsed, _ = _timed(lambda s=session, q=ask: s.receive(q))
            times.append(elapsed)
        moved = scene.tokens[2].model_dump(mode="json") | {"x": 50, "y": 50}
        patch = {"type": "scene.patch", "id": "move", "scene": scene.id, "upsert": {"tokens": [moved]}}
        session.receive(json.dumps(patch))
        after_move, _ = _timed(lambda s=session: s.receive(_question(scene.id, ids[2], ids[3], -1, action)))
        times.sort()
        result[f"{name}_first_ms"] = first * 1e3
        result[f"{name}_p50_ms"] = statistics.median(times) * 1e3
        result[f"{name}_p99_ms"] = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3
        result[f"{name}_after_move_ms"] = after_move * 1e3
    result["ratio_p50"] = result["per_pair_p50_ms"] / result["engine_p50_ms"]
    return result


def _show(row: dict[str, Any]) -> str:
    if row["figure"] == "replay":
        return (
            f"replay {row['game']:5} {row['scene']:>7}: {row['messages']} messages ({row['adjudicate']} adjudicate) "
            f"per-pair {row['per_pair_s']:.2f} s, engine {row['engine_s']:.2f} s, {row['ratio']:.1f}x, "
            f"answers equal: {'yes' if row['equal'] else 'NO'}"
        )
    return (
        f"adjudicate {row['scene']:>7} ({row['questions']} pairs): engine p50 {row['engine_p50_ms']:.3f} ms "
        f"p99 {row['engine_p99_ms']:.3f} ms (first {row['engine_first_ms']:.0f} ms, after a move "
        f"{row['engine_after_move_ms']:.1f} ms); per-pair p50 {row['per_pair_p50_ms']:.3f} ms "
        f"p99 {row['per_pair_p99_ms']:.3f} ms (first {row['per_pair_first_ms']:.0f} ms, after a move "
        f"{row['per_pair_after_move_ms']:.1f} ms); {row['ratio_p50']:.0f}x at p50"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_bench")
    parser.add_argument("--quick", action="store_true", help="small scenes and short games (a smoke run)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--runs", type=int, default=3, help="replays of each game per path (best kept)")
    args = parser.parse_args(argv)
    if args.quick:
        plan: list[Callable[[], dict[str, Any]]] = [
            lambda: adjudicate_figures(20, 30, 50),
            lambda: replay_figures(20, 30, 10, mix="aro", runs=1),
        ]
    else:
        plan = [
            lambda: adjudicate_figures(200, 400, 500),
            lambda: replay_figures(50, 100, 200, mix="aro", runs=args.runs),
            lambda: replay_figures(50, 100, 200, mix="cards", runs=args.runs),
        ]
    for step in plan:
        row = step()
        print(json.dumps(row) if args.json else _show(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
