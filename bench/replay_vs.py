"""``sightline replay`` of the same recorded games, today's code against an older commit's, as users run it.

Run ``python -m bench.replay_vs [--rev f4be1fa] [--rounds 5] [--games aro,cards] [--out DIR] [--json]``.

:mod:`bench.replay_bench` compares, in one process, the engines against the per-pair path of the code
as it is now, which has itself been made faster since issue 15 was filed. This benchmark compares with
the code as it was: it

1. writes the recorded games (:func:`bench.replay_bench.record_game`, seeded, Infinity: ``aro`` and
   ``cards``, 50 × 100, 200 orders; when asked for, ``long``, the ``aro`` mix over 600 orders, and
   ``gurps`` and ``traveller``, the ``aro`` mix over 100 orders on those rulesets' scenes, with lights)
   to files;
2. prepares ``REV``'s code once, in a cache directory (``--cache``, default
   ``~/.cache/sightline-bench``): its tree from ``git archive`` and a venv of its own with the package
   installed from its own ``pyproject.toml`` (a plain, non-editable ``pip install``: its dependencies —
   numba for ``f4be1fa`` — from the registries, the newest the pins allow);
3. runs, alternately (the order swapped every round) and for several rounds, each side's
   ``sightline replay FILE`` (the console script of its venv; standard output to a file) and, in a
   second process, the same replay alone: ``bridge.replay.run_replay`` timed inside the interpreter
   after the package is imported and a small other game replayed (so neither the interpreter's start,
   the imports, numba's cache loads nor the rulesets' first load count); and each side's ``sightline
   replay`` of an empty file (its start-up: interpreter, imports). Wall time and CPU time (the
   child's user + system from ``getrusage``; ``time.process_time()`` inside for the replay alone).
   A first round of both sides is a warm-up and is not counted: it writes each side's byte-code and,
   for a numba-era ``REV``, numba's on-disk cache (``cache=True`` beside the installed code), so the
   old code's first compile is not counted against it. The warm-up's times are shown apart;
4. compares the answers line by line: each side must give the same answers every round, and the two
   sides' answers are diffed as JSON, counted by field path (list indices folded to ``[]``), with the
   first example of each.

Ratios are old / new of the medians (and of the best) over the counted rounds, and round by round: the median
(and range) of each round's old time over its new one, the two taken one after the other. "Today's code" is the
interpreter running this benchmark (its venv's ``sightline`` script). With ``--old-python PATH`` no
checkout is built: that interpreter's ``sightline`` is the old side (``--old-python`` with this same
interpreter is the cheap self-check the tests run).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .replay_bench import record_game

__all__ = ["Side", "answer_diff", "main", "prepare_rev", "ratios"]

REPO = Path(__file__).resolve().parents[1]

_GURPS = {"ruleset": "gurps-4e", "actions": ("attack", "dodge")}
_TRAVELLER = {"ruleset": "traveller", "actions": ("observation", "observation")}
#: The games: :func:`~bench.replay_bench.record_game`'s arguments. Only ``aro`` and ``cards`` by default.
GAMES: dict[str, dict[str, Any]] = {
    "aro": {"tokens": 50, "zones": 100, "orders": 200, "mix": "aro"},
    "cards": {"tokens": 50, "zones": 100, "orders": 200, "mix": "cards"},
    "long": {"tokens": 50, "zones": 100, "orders": 600, "mix": "aro"},
    "gurps": {"tokens": 50, "zones": 100, "orders": 100, "mix": "aro", **_GURPS},
    "traveller": {"tokens": 50, "zones": 100, "orders": 100, "mix": "aro", **_TRAVELLER},
}
QUICK_GAMES: dict[str, dict[str, Any]] = {
    name: game | {"tokens": 10, "zones": 20, "orders": 6} for name, game in GAMES.items()
}
#: Replayed first, in the same process, before the timed replay alone: another, small scene.
WARM_GAME: dict[str, Any] = {"tokens": 6, "zones": 10, "orders": 3, "mix": "aro", "seed": 7}

#: Run by each side's interpreter: replay WARM (discarded), then time ``run_replay`` of FILE into OUT.
_ALONE = """
import io, json, sys, time
from bridge.replay import run_replay
warm, path, out = sys.argv[1:4]
with open(warm, "rb") as source:
    run_replay(source, io.StringIO(), io.StringIO(), name=warm)
with open(path, "rb") as source, open(out, "w", encoding="utf-8") as sink:
    wall, cpu = time.perf_counter(), time.process_time()
    status = run_replay(source, sink, sys.stderr, name=path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"status": status, "wall_s": wall, "cpu_s": cpu}))
"""


@dataclass
class Side:
    """One side of the comparison: an interpreter whose ``bridge`` package is the code to time."""

    name: str
    python: Path
    label: str
    runs: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    warmup: dict[str, dict[str, float]] = field(default_factory=dict)
    outputs: dict[str, set[bytes]] = field(default_factory=dict)

    def command(self) -> list[str]:
        """``sightline`` as its venv installed it, or ``python -m bridge`` where there is no such script."""
        script = self.python.parent / "sightline"
        return [str(script)] if script.exists() else [str(self.python), "-m", "bridge"]

    def versions(self) -> dict[str, str]:
        """The versions of the libraries that matter to the timing, as this side's interpreter has them."""
        probe = (
            "import importlib.metadata as m, json, sys\n"
            "names = ['numpy', 'numba', 'shapely', 'pydantic', 'orjson', 'cython']\n"
            "found = {}\n"
            "for n in names:\n"
            "    try: found[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: pass\n"
            "found['python'] = sys.version.split()[0]\n"
            "import bridge\n"
            "found['bridge'] = bridge.__file__\n"
            "print(json.dumps(found))\n"
        )
        done = subprocess.run(
            [str(self.python), "-c", probe], capture_output=True, text=True, check=True, cwd="/", env=_env()
        )
        return dict(json.loads(done.stdout))


def _env() -> dict[str, str]:
    """The children's environment: this one, less ``PYTHONPATH`` (each side imports its own package only) and
    less ``PYTHONDONTWRITEBYTECODE``, so the warm-up round writes both sides' byte-code as a user's first run
    does (pip compiled the old side's at install; with it set, the editable side compiled its sources every run)."""
    drop = {"PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def _describe_head() -> str:
    """``HEAD abc123`` (``, modified`` when tracked files differ from it), or what stood in the way."""
    try:
        head = _git("rev-parse", "--short=12", "HEAD")
        dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"HEAD {head}{', modified' if dirty else ''}"


def prepare_rev(rev: str, cache: Path, *, log: Any = print) -> Path:
    """The interpreter of a venv holding ``rev``'s package, built under ``cache`` once and then reused."""
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    home = cache / sha[:12]
    python = home / "venv" / "bin" / "python"
    if (home / "ready").exists():
        return python
    log(f"preparing {rev} ({sha[:12]}) in {home}: git archive, a venv, pip install (a few minutes, once)")
    # Built where it will stay (a venv's scripts name its interpreter by path); "ready" written last.
    building = home
    shutil.rmtree(home, ignore_errors=True)
    (building / "src").mkdir(parents=True)
    tree = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", sha], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(tree.stdout)) as archive:
        archive.extractall(building / "src", filter="data")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(building / "venv")], check=True)
    pip = [str(building / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, str(building / "src")], check=True)
    (building / "ready").write_text(sha + "\n", encoding="utf-8")
    return python


def _run_cli(side: Side, game: Path, out: Path) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with out.open("wb") as sink:
        done = subprocess.run(
            [*side.command(), "replay", str(game)], stdout=sink, stderr=subprocess.PIPE, cwd=out.parent, env=_env()
        )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{side.name}: sightline replay {game} exited {done.returncode}: {done.stderr[-2000:]!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "errors": float(done.stderr.count(b"\n"))}


def _run_alone(side: Side, warm: Path, game: Path, out: Path) -> dict[str, float]:
    done = subprocess.run(
        [str(side.python), "-c", _ALONE, str(warm), str(game), str(out)],
        capture_output=True,
        text=True,
        cwd=out.parent,
        env=_env(),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{side.name}: the replay alone of {game} failed: {done.stderr[-2000:]}")
    row = json.loads(done.stdout.splitlines()[-1])
    return {"wall_s": float(row["wall_s"]), "cpu_s": float(row["cpu_s"])}


def _paths(old: Any, new: Any, path: str, into: list[tuple[str, Any, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [key for key in new if key not in old]:
            if key not in old or key not in new or old[key] != new[key]:
                _paths(old.get(key, "<absent>"), new.get(key, "<absent>"), f"{path}.{key}", into)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for a, b in zip(old, new, strict=True):
            if a != b:
                _paths(a, b, f"{path}[]", into)
    else:
        into.append((path or ".", old, new))


def answer_diff(old_lines: list[str], new_lines: list[str]) -> dict[str, Any]:
    """How two replays' answers differ: lines differing, and per field path a count and a first example."""
    counts: Counter[str] = Counter()
    examples: dict[str, dict[str, Any]] = {}
    differing = text_only = 0
    for number, (old_text, new_text) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if old_text == new_text:
            continue
        old, new = json.loads(old_text), json.loads(new_text)
        if old == new:
            text_only += 1
            continue
        differing += 1
        found: list[tuple[str, Any, Any]] = []
        _paths(old, new, "", found)
        kind = f"{old.get('type')}" if old.get("type") == new.get("type") else f"{old.get('type')}->{new.get('type')}"
        for path, a, b in found:
            key = f"{kind} {path}"
            counts[key] += 1
            examples.setdefault(key, {"answer": number, "old": _short(a), "new": _short(b)})
    return {
        "answers": [len(old_lines), len(new_lines)],
        "differing": differing,
        "text_only": text_only,
        "paths": [{"path": key, "count": n, **examples[key]} for key, n in counts.most_common()],
    }


def _short(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= 200 else text[:200] + "…"


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "best": min(values)} if values else {}


def ratios(old: list[float], new: list[float]) -> dict[str, Any]:
    """Old / new of the medians and of the best, and round by round: each old time over the new one taken in the
    same round (the two run one after the other), whose median follows a machine that slows and speeds up
    over the minutes less than a ratio of medians gathered across them."""
    o, n = _summary(old), _summary(new)
    rounds = [a / b for a, b in zip(old, new, strict=True)]
    return {
        "old": o,
        "new": n,
        "ratio_median": o["median"] / n["median"],
        "ratio_best": o["best"] / n["best"],
        "ratio_rounds": {"median": statistics.median(rounds), "low": min(rounds), "high": max(rounds)},
    }


FIGURES = (
    ("wall_s", "whole process, wall"),
    ("cpu_s", "whole process, CPU"),
    ("alone_wall_s", "replay alone, wall"),
    ("alone_cpu_s", "replay alone, CPU"),
)


def _show(report: dict[str, Any]) -> None:
    print(f"load average: start {report['loadavg_start']}, end {report['loadavg_end']}")
    start = report["startup"]
    print(
        f"start-up (sightline replay of an empty file), median: old {start['wall_s']['old']['median']:.2f} s wall / "
        f"{start['cpu_s']['old']['median']:.2f} s CPU, new {start['wall_s']['new']['median']:.2f} s / "
        f"{start['cpu_s']['new']['median']:.2f} s"
    )
    for name, result in report["results"].items():
        print(f"{name} ({report['games'][name]['lines']} messages), {report['rounds']} rounds, old/new:")
        for key, what in FIGURES:
            if key in result:
                row = result[key]
                print(
                    f"  {what:21} old {row['old']['median']:.2f} s (best {row['old']['best']:.2f}), new "
                    f"{row['new']['median']:.2f} s (best {row['new']['best']:.2f}): {row['ratio_median']:.1f}x "
                    f"(best {row['ratio_best']:.1f}x; round by round {row['ratio_rounds']['median']:.1f}x, "
                    f"{row['ratio_rounds']['low']:.1f}-{row['ratio_rounds']['high']:.1f}x)"
                )
        warm_old, warm_new = result["warmup"]["old"], result["warmup"]["new"]
        print(f"  warm-up (not counted): old {warm_old['wall_s']:.2f} s, new {warm_new['wall_s']:.2f} s wall")
        print(f"  error lines on stderr: {result['errors']}; same answers every round: {result['deterministic']}")
        diff = result["diff"]
        print(
            f"  answers {diff['answers'][0]} old / {diff['answers'][1]} new: {diff['differing']} differ, "
            f"{diff['text_only']} more differ in text only (equal as JSON)"
        )
        for row in diff["paths"][:20]:
            print(f"    {row['count']:6}  {row['path']}  e.g. answer {row['answer']}: {row['old']!r} -> {row['new']!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_vs")
    parser.add_argument("--rev", default="f4be1fa", help="the older commit (default f4be1fa: before issue 15)")
    parser.add_argument("--old-python", type=Path, help="the old side's interpreter, instead of building --rev")
    parser.add_argument("--cache", type=Path, help="where --rev's checkout and venv are kept")
    parser.add_argument("--games", default="aro,cards", help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--rounds", type=int, default=5, help="counted rounds, after one warm-up round")
    parser.add_argument("--no-alone", action="store_true", help="time only the whole sightline replay processes")
    parser.add_argument("--quick", action="store_true", help="small games (a smoke run)")
    parser.add_argument("--out", type=Path, help="keep the games and the answers here (default: a temporary dir)")
    parser.add_argument("--json", action="store_true", help="one JSON object at the end")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    def say(text: str) -> None:
        if not args.json:
            print(text, flush=True)

    table = QUICK_GAMES if args.quick else GAMES
    games = [name.strip() for name in args.games.split(",") if name.strip()]
    unknown = [name for name in games if name not in table]
    if unknown or not games:
        parser.error(f"unknown game(s) {', '.join(unknown)}; choose from {', '.join(table)}")
    if args.old_python is not None:
        old = Side("old", args.old_python, f"{args.old_python}")
    else:
        cache = args.cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sightline-bench"
        python = prepare_rev(args.rev, cache, log=say)
        old = Side("old", python, f"{args.rev} ({_git('rev-parse', '--short=12', args.rev)})")
    new = Side("new", Path(sys.executable), f"this checkout ({_describe_head()})")

    out = args.out or Path(tempfile.mkdtemp(prefix="replay-vs-"))
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for name in games:
        files[name] = out / f"{name}.jsonl"
        files[name].write_text("\n".join(record_game(**table[name])) + "\n", encoding="utf-8")
    warm = out / "warm.jsonl"
    warm.write_text("\n".join(record_game(**WARM_GAME)) + "\n", encoding="utf-8")
    empty = out / "empty.jsonl"
    empty.write_text("", encoding="utf-8")

    report: dict[str, Any] = {
        "old": {"code": old.label, "command": old.command(), "versions": old.versions()},
        "new": {"code": new.label, "command": new.command(), "versions": new.versions()},
        "games": {
            name: {"file": str(files[name]), "lines": len(files[name].read_text().splitlines())} for name in games
        },
        "rounds": args.rounds,
        "loadavg_start": os.getloadavg(),
    }
    say(f"old: {old.label}: {' '.join(old.command())} {report['old']['versions']}")
    say(f"new: {new.label}: {' '.join(new.command())} {report['new']['versions']}")
    say(f"games in {out}; load average {report['loadavg_start'][0]:.2f}")

    startup: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for round_ in range(args.rounds + 1):
        order = (old, new) if round_ % 2 == 0 else (new, old)
        for side in order:
            row = _run_cli(side, empty, out / f"empty.{side.name}.answers.jsonl")
            if round_:
                startup[side.name].append(row)
        for name in games:
            for side in order:
                answers = out / f"{name}.{side.name}.answers.jsonl"
                row = _run_cli(side, files[name], answers)
                side.outputs.setdefault(name, set()).add(answers.read_bytes())
                if not args.no_alone:
                    alone = _run_alone(side, warm, files[name], out / f"{name}.{side.name}.alone.jsonl")
                    row |= {"alone_wall_s": alone["wall_s"], "alone_cpu_s": alone["cpu_s"]}
                if round_ == 0:
                    side.warmup[name] = row
                else:
                    side.runs.setdefault(name, []).append(row)
                say(
                    f"  {'warm-up' if round_ == 0 else f'round {round_}'} {name:5} {side.name}: "
                    f"process {row['wall_s']:.2f} s wall / {row['cpu_s']:.2f} s CPU"
                    + (
                        ""
                        if args.no_alone
                        else f"; replay alone {row['alone_wall_s']:.2f} s / {row['alone_cpu_s']:.2f} s"
                    )
                )
    report["loadavg_end"] = os.getloadavg()
    report["startup"] = {
        key: ratios([row[key] for row in startup["old"]], [row[key] for row in startup["new"]])
        for key in ("wall_s", "cpu_s")
    }

    report["results"] = {}
    for name in games:
        result: dict[str, Any] = {}
        for key, _ in FIGURES:
            if not (args.no_alone and key.startswith("alone")):
                result[key] = ratios([row[key] for row in old.runs[name]], [row[key] for row in new.runs[name]])
        result["warmup"] = {"old": old.warmup[name], "new": new.warmup[name]}
        result["errors"] = {"old": old.warmup[name]["errors"], "new": new.warmup[name]["errors"]}
        result["deterministic"] = {"old": len(old.outputs[name]) == 1, "new": len(new.outputs[name]) == 1}
        old_lines = (out / f"{name}.old.answers.jsonl").read_text(encoding="utf-8").splitlines()
        new_lines = (out / f"{name}.new.answers.jsonl").read_text(encoding="utf-8").splitlines()
        result["diff"] = answer_diff(old_lines, new_lines)
        report["results"][name] = result

    if args.json:
        print(json.dumps(report))
    else:
        _show(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
