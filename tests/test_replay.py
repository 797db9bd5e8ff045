"""`sightline replay` through the real console script: file and standard input, same answers as the server."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bridge.cli import REPLAY_GC_YOUNG
from tests.scenes import on_line_scene

SIGHTLINE = str(Path(sys.executable).parent / "sightline")

MESSAGES = [
    {"type": "scene.sync", "id": "q1", "scene": on_line_scene()},
    {"type": "adjudicate", "id": "a1", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"},
    {"type": "adjudicate", "id": "a2", "scene": "s1", "actor": "a", "target": "t", "action": "speculative-attack"},
    {"type": "session.start", "id": "g1", "name": "Friday"},
]


def replay(args: list[str], stdin: str | None = None) -> list[dict[str, object]]:
    done = subprocess.run([SIGHTLINE, "replay", *args], input=stdin, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_replay_answers_each_line_from_a_file(tmp_path: Path) -> None:
    """One answer line per message line, in order, with no hello needed."""
    source = tmp_path / "game.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in MESSAGES) + "\n\n")
    answers = replay([str(source)])
    assert [a["type"] for a in answers] == ["scene.synced", "adjudication", "adjudication", "error"]
    assert answers[1]["modifier"] == -6 and answers[1]["logged"] is False
    assert answers[2]["modifier"] == -6
    assert answers[3]["code"] == "log-unavailable"


def test_replay_reads_standard_input_and_survives_bad_lines() -> None:
    """`-` reads stdin; a malformed line is answered with an error and the rest goes on."""
    lines = [json.dumps(MESSAGES[0]), "{broken", json.dumps(MESSAGES[1])]
    answers = replay(["-"], stdin="\n".join(lines) + "\n")
    assert [a["type"] for a in answers] == ["scene.synced", "error", "adjudication"]


def test_every_error_on_the_wire_carries_a_details_object() -> None:
    """Contract: every error on the wire carries a `details` object, even when it has nothing to add.

    An error is `{type, id, code, message, details: {…}}` — `details` is there even when it has nothing to add (an
    unknown scene), so a client may read `details.field` without a guard; replay adds only the input line.
    """
    ask = {"type": "scene.patch", "id": "p", "scene": "nowhere"}
    (answer,) = replay(["-"], stdin=json.dumps(ask) + "\n")
    assert answer["code"] == "unknown-scene" and answer["details"] == {"line": 1}


def test_replay_of_a_missing_file_says_so() -> None:
    """A file that cannot be read exits 2 with a message naming it."""
    done = subprocess.run([SIGHTLINE, "replay", "/nonexistent/game.jsonl"], capture_output=True, text=True)
    assert done.returncode == 2 and "/nonexistent/game.jsonl" in done.stderr


def test_replay_of_a_long_file_is_never_rate_limited(tmp_path: Path) -> None:
    """Replay reads a file, not a live client: a thousand lines are all answered, none rate-limited."""
    source = tmp_path / "long.jsonl"
    pings = [json.dumps({"type": "ping", "id": str(i)}) for i in range(1000)]
    source.write_text("\n".join([json.dumps(MESSAGES[0]), *pings]) + "\n")
    answers = replay([str(source)])
    assert len(answers) == 1001 and all(a["type"] != "error" for a in answers)


GAMES = Path(__file__).parent / "replay_games"


def test_replay_of_a_recorded_game_is_byte_identical_to_before(tmp_path: Path) -> None:
    """A recorded game (bench's quick aro and cards, two bad lines) gives the bytes recorded before, file or stdin."""
    expected = (GAMES / "quick.answers").read_bytes()
    game = GAMES / "quick.jsonl"
    from_file = subprocess.run([SIGHTLINE, "replay", str(game)], capture_output=True, check=True)
    assert from_file.stdout == expected
    assert from_file.stderr.count(b"\n") == 2
    from_stdin = subprocess.run([SIGHTLINE, "replay", "-"], input=game.read_bytes(), capture_output=True, check=True)
    assert from_stdin.stdout == expected


def test_replay_from_a_file_reports_errors_after_the_answers_before_them(tmp_path: Path) -> None:
    """With both streams on one file, each line's report comes after the answers to the lines before it."""
    game = GAMES / "quick.jsonl"
    both = tmp_path / "both.txt"
    with both.open("wb") as sink:
        subprocess.run([SIGHTLINE, "replay", str(game)], stdout=sink, stderr=sink, check=True)
    expected: list[str] = []
    for line in (GAMES / "quick.answers").read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        if answer["type"] == "error":
            details = answer["details"]
            expected.append(f"sightline replay: {game} line {details['line']}: {answer['code']}: {answer['message']}")
        expected.append(line)
    assert both.read_text(encoding="utf-8").splitlines() == expected


def test_replay_imports_no_event_loop_and_no_log_store(tmp_path: Path) -> None:
    """`sightline replay` of a game without log operations never imports asyncio, the log's store nor ijson."""
    game = tmp_path / "game.jsonl"
    game.write_text("\n".join(json.dumps(m) for m in MESSAGES[:3]) + "\n")
    probe = (
        "import sys; from bridge.cli import main; status = main(['replay', sys.argv[1]]);"
        "unused = ('asyncio', 'aiohttp', 'bridge.log.store', 'bridge.log.effects', 'ijson');"
        "print([m for m in unused if m in sys.modules], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(game)], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"
    assert len(done.stdout.splitlines()) == 3


def test_replay_of_an_infinity_game_loads_only_its_ruleset(tmp_path: Path) -> None:
    """`sightline replay` of an Infinity game loads that ruleset alone: start-up pays for what the game uses.

    Not GURPS', Traveller's or Code One's modules and data, and none of the log's record models.
    """
    game = tmp_path / "game.jsonl"
    game.write_text("\n".join(json.dumps(m) for m in MESSAGES[:3]) + "\n")
    probe = (
        "import sys; from bridge.cli import main; status = main(['replay', sys.argv[1]]);"
        "from bridge.core.rules import RULESETS; print(repr(RULESETS), file=sys.stderr);"
        "print([m for m in ('bridge.core.rules.gurps', 'bridge.core.rules.traveller', 'bridge.log.capture',"
        " 'bridge.log.records') if m in sys.modules], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(game)], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines() == [
        "RULESETS(infinity-n4, infinity-codeone, gurps-4e, traveller; loaded: infinity-n4)",
        "[]",
    ]
    assert len(done.stdout.splitlines()) == 3


def test_the_replay_program_leaves_its_objects_to_the_exit_and_a_call_with_arguments_does_not(tmp_path: Path) -> None:
    """`sightline replay` as the program leaves its objects to the exit; a call with arguments does not.

    As the program (``main()`` reading ``sys.argv``) it collects young objects less often and freezes its objects once
    done, so the exit's collections skip them; ``main([...])`` changes neither.
    """
    game = tmp_path / "game.jsonl"
    game.write_text("\n".join(json.dumps(m) for m in MESSAGES[:3]) + "\n")
    probe = (
        "import gc, sys; from bridge.cli import main; mode, path = sys.argv[1:];"
        "sys.argv = ['sightline', 'replay', path];"
        "status = main() if mode == 'program' else main(['replay', path]);"
        "print(status, gc.get_freeze_count() > 0, gc.get_threshold()[0], file=sys.stderr)"
    )
    for mode, frozen in (("program", f"True {REPLAY_GC_YOUNG}"), ("call", f"False {gc.get_threshold()[0]}")):
        done = subprocess.run(
            [sys.executable, "-c", probe, mode, str(game)], capture_output=True, text=True, check=True
        )
        assert done.stderr.strip() == f"0 {frozen}"
        assert len(done.stdout.splitlines()) == 3


def test_the_replay_programs_imports_run_without_a_collection_and_are_frozen() -> None:
    """What `sightline replay` imports (models, rulesets, the engine) is made with no collection and then frozen."""
    probe = (
        "import gc, sys; from bridge.cli import _import_for_replay; seen = [];"
        "gc.callbacks.append(lambda phase, info: seen.append(phase)); _import_for_replay();"
        "print(len(seen), gc.isenabled(), gc.get_freeze_count() > 20_000, 'bridge.core.visibility' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0 True True True"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts the process's threads in /proc")
def test_the_replay_program_starts_no_blas_threads_unless_told_to(tmp_path: Path) -> None:
    """`sightline replay` as the program loads NumPy with OPENBLAS_NUM_THREADS=1, and keeps a value the user set.

    One thread is left in the process at the end, the replay's own.
    """
    game = tmp_path / "game.jsonl"
    game.write_text("\n".join(json.dumps(m) for m in MESSAGES[:3]) + "\n")
    probe = (
        "import os, sys; from bridge.cli import main; sys.argv = ['sightline', 'replay', sys.argv[1]];"
        "status = main();"
        "print(status, 'numpy' in sys.modules, os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')),"
        " file=sys.stderr)"
    )
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    }
    done = subprocess.run([sys.executable, "-c", probe, str(game)], capture_output=True, text=True, check=True, env=env)
    assert done.stderr.strip() == "0 True 1 1"
    assert len(done.stdout.splitlines()) == 3
    done = subprocess.run(
        [sys.executable, "-c", probe, str(game)],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
    )
    assert done.stderr.split()[:3] == ["0", "True", "2"]


def test_run_replay_writes_the_same_bytes_to_a_text_sink_and_to_a_utf8_files_bytes(tmp_path: Path) -> None:
    """A UTF-8 file gets orjson's bytes, a non-UTF-8 or in-memory sink the text: both what `replay_lines` says."""
    import io

    from bridge.replay import replay_lines, run_replay

    game = GAMES / "quick.jsonl"
    expected = "".join(f"{line}\n" for line in replay_lines(game.read_text(encoding="utf-8").splitlines()))
    assert "—" in expected  # (answers with non-ASCII text: an encoding would show)
    for encoding in ("utf-8", "utf-16"):
        out = tmp_path / f"out.{encoding}"
        with game.open("rb") as source, out.open("w", encoding=encoding) as sink:
            sink.write("head\n")  # written before the replay's own bytes
            assert run_replay(source, sink, io.StringIO(), name="quick") == 0
        assert out.read_text(encoding=encoding) == "head\n" + expected
    memory = io.StringIO()
    with game.open("rb") as source:
        run_replay(source, memory, io.StringIO(), name="quick")
    assert memory.getvalue() == expected
