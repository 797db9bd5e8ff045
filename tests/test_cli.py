"""bridge/cli.py as a person meets it: `--version`, each command's `--help`, `main`'s exit statuses and lines."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from bridge import __version__
from bridge.cli import _parser, main
from bridge.config import BridgeConfig
from tests.scenes import on_line_scene

SIGHTLINE = str(Path(sys.executable).parent / "sightline")
#: The environment of a command run here: none of the bridge's own settings leak in from the machine's.
ENV = {key: value for key, value in os.environ.items() if not key.startswith("SIGHTLINE_")}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sightline ARGS`` to its end (a serve that starts would be killed by the timeout: a failure)."""
    return subprocess.run([SIGHTLINE, *args], capture_output=True, text=True, timeout=60, env={**ENV, **(env or {})})


def help_of(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """What ``sightline ARGS --help`` prints, checked to exit 0 and to print nothing on standard error."""
    with pytest.raises(SystemExit) as ended:
        main([*args, "--help"])
    assert ended.value.code == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def test_version_is_the_packages_from_the_program_and_from_python_m_bridge() -> None:
    """`sightline --version` and `python -m bridge --version` print `sightline <version>` and exit 0."""
    for command in ([SIGHTLINE], [sys.executable, "-m", "bridge"]):
        done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=60, env=ENV)
        assert (done.returncode, done.stdout, done.stderr) == (0, f"sightline {__version__}\n", "")


def test_without_a_command_the_parser_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """`sightline` and `sightline traveller` alone exit 2 listing each command with its --help line."""
    for args, prog, listed in (
        ([], "sightline", ["  serve      run the bridge (WebSocket /ws and HTTP on one port)", "  demo       play a"]),
        (["traveller"], "sightline traveller", ["  encounter-range  encounter range after night and weather"]),
    ):
        with pytest.raises(SystemExit) as ended:
            main(args)
        assert ended.value.code == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"{prog}: error: a command is needed, one of:\n")
        assert err.endswith(f"\n({prog} COMMAND --help lists a command's options)\n")
        assert all(any(line.startswith(start) for line in err.splitlines()) for start in listed), err


@pytest.mark.parametrize(
    ("command", "phrases"),
    [
        ((), ["serve", "run the bridge (WebSocket /ws and HTTP on one port)", "replay", "demo", "--version"]),
        (("serve",), ["--host HOST", "--port PORT", "--world-secret WORLD=SECRET", "limits:", "--max-frame-bytes"]),
        (("secret",), ["--data-dir DATA_DIR", "--world WORLD"]),
        (("log",), ["sessions", "export", "rejudge"]),
        (("replay",), ["file", "the file to read, or - for standard input"]),
        (
            ("traveller", "encounter-range"),
            ["base", "--light {day,1,2,3}", "--weather {good,poor,very-poor}", "--json"],
        ),
        (("demo",), ["--svg SVG", "--locale {en,es}", "--keep-log DIR"]),
    ],
)
def test_each_commands_help_names_its_options(
    command: tuple[str, ...], phrases: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sightline [COMMAND] --help` exits 0 with its own usage line and names its options and subcommands."""
    monkeypatch.setenv("COLUMNS", "200")  # one line per option, whatever the terminal
    out = help_of(capsys, *command)
    assert out.startswith(" ".join(["usage: sightline", *command]) + " [-h]")
    for phrase in phrases:
        assert phrase in out, phrase


def test_serves_defaults_are_the_ones_its_help_and_the_contract_state(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve` without options listens where its help and the contract say, with BridgeConfig's limits.

    Contract: "One WebSocket endpoint, `ws://HOST:PORT/ws` (default `127.0.0.1:8765`)".
    """
    monkeypatch.setenv("COLUMNS", "200")
    out = help_of(capsys, "serve")
    assert "address to listen on (default: 127.0.0.1)" in out and "port; 0 picks a free one (default: 8765)" in out
    for name in ("SIGHTLINE_PUBLIC_URL", "SIGHTLINE_DATABASE"):
        monkeypatch.delenv(name, raising=False)
    args = vars(_parser().parse_args(["serve"]))
    defaults = BridgeConfig()
    assert (args["host"], args["port"]) == (defaults.host, defaults.port) == ("127.0.0.1", 8765)
    renamed = {"session_idle": "session_idle_minutes", "ws_compress": "compress"}
    checked = 0
    for dest, value in args.items():
        field = renamed.get(dest, dest)
        if field in {"data_dir", "database", "public_url", "secret", "certfile", "keyfile"} or not hasattr(
            defaults, field
        ):
            continue
        assert value == getattr(defaults, field), dest
        checked += 1
    assert checked >= 30


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``sightline NAME``, as ``main`` builds it."""
    commands = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = commands.choices[name]
    return parser


def test_every_serve_option_says_what_it_does_and_its_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each `serve` option has a help text showing its default, BridgeConfig's own value where it has one; no jargon.

    Numbers are shown as people write them (4,194,304 bytes = 4 MiB, 240 minutes), as docs/operations.md's table does.
    """
    defaults = BridgeConfig()
    renamed = {"session_idle": "session_idle_minutes", "ws_compress": "compress"}
    options = [a for a in command_parser("serve")._actions if a.dest != "help"]
    assert len(options) >= 40
    for action in options:
        assert action.help and "default: " in action.help, action.option_strings
        value = getattr(defaults, renamed.get(action.dest, action.dest), None)
        if isinstance(value, bool) or not isinstance(value, int | float) or action.dest == "port":
            continue
        shown = f"{value:,}" if isinstance(value, int) else f"{value:,g}"
        assert f"(default: {shown}" in action.help, (action.option_strings, action.help)
    monkeypatch.setenv("COLUMNS", "200")
    out = help_of(capsys, "serve")
    for said in ("(default: 4,194,304 bytes = 4 MiB)", "(default: 240 minutes)", "(default: 8765)", "(default: off)"):
        assert said in out, said
    for jargon in ("1013", "rules.lines", "'best'"):
        assert jargon not in out, jargon


def test_secret_offers_no_option_it_does_not_use(capsys: pytest.CaptureFixture[str]) -> None:
    """`sightline secret` takes --data-dir and --world: --database, which it never reads, is neither shown nor taken."""
    assert "--database" not in help_of(capsys, "secret")
    with pytest.raises(SystemExit) as ended:
        main(["secret", "--database", "postgresql://db/x"])
    assert ended.value.code == 2
    assert "unrecognized arguments: --database" in capsys.readouterr().err


def test_serves_max_levels_reaches_the_scene_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve --max-levels 2` hands the bridge a configuration whose scene limits hold 2 levels (default 100)."""
    from bridge import startup, workers
    from bridge.server import scene_limits

    served: list[BridgeConfig] = []

    async def serve(config: BridgeConfig, **_: Any) -> None:
        served.append(config)

    monkeypatch.setattr(startup, "serve", serve)
    monkeypatch.setattr(workers, "one_malloc_arena", lambda: False)
    # Earlier tests' world workers may still be alive in this process: serve would then end the process
    # (os._exit) instead of returning. None of this bridge's own, so none is looked at.
    monkeypatch.setattr(threading, "enumerate", list)
    for extra in (["--max-levels", "2"], []):
        assert main(["serve", "--data-dir", str(tmp_path), "--secret", "s", *extra]) == 0
    assert [scene_limits(config).levels for config in served] == [2, 100]


def test_replay_through_main_answers_a_small_file_and_returns_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`main(["replay", FILE])` writes one answer per message line and returns 0 (it does not exit)."""
    game = tmp_path / "game.jsonl"
    messages = [
        {"type": "scene.sync", "id": "q1", "scene": on_line_scene()},
        {"type": "adjudicate", "id": "a1", "scene": "s1", "actor": "a", "target": "t", "action": "bs-attack"},
        {"type": "ping", "id": "p1"},
    ]
    game.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    assert main(["replay", str(game)]) == 0
    out, err = capsys.readouterr()
    answers = [json.loads(line) for line in out.splitlines()]
    assert [(a["type"], a["id"]) for a in answers] == [("scene.synced", "q1"), ("adjudication", "a1"), ("pong", "p1")]
    assert answers[1]["modifier"] == -6 and err == ""


def test_replay_of_a_file_it_cannot_read_says_why_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file and a directory are each refused in one line naming the file and the reason; nothing answered."""
    missing = tmp_path / "missing.jsonl"
    for path, reason in ((missing, "No such file or directory"), (tmp_path, "Is a directory")):
        assert main(["replay", str(path)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err == f"sightline replay: cannot read {path}: {reason}\n"


def test_a_startup_error_is_one_line_named_by_its_command_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sightline secret` with a data directory under a file: one line, prefixed `sightline secret: `, exit 2."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["secret", "--data-dir", str(blocker / "data")]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1
    assert lines[0].startswith("sightline secret: cannot make the data directory") and str(blocker) in lines[0]


@pytest.mark.parametrize("value", ["w-ashes", "=s3cret", "w-ashes="])
def test_serve_refuses_a_world_secret_that_is_not_world_equals_secret(tmp_path: Path, value: str) -> None:
    """`--world-secret` without a world, an `=` or a secret is refused in one line, exit 2, before serving."""
    done = run("serve", "--port", "0", "--data-dir", str(tmp_path), "--world-secret", value)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"sightline serve: --world-secret takes WORLD=SECRET, not {value!r}\n"


def test_serve_refuses_a_public_url_that_is_not_http_from_the_option_or_the_environment(tmp_path: Path) -> None:
    """A `--public-url` (or SIGHTLINE_PUBLIC_URL) that is not http(s) is refused in one line, exit 2, before serving."""
    base = ("serve", "--port", "0", "--data-dir", str(tmp_path))
    for done, value in (
        (run(*base, "--public-url", "ftp://sightline.example.org"), "ftp://sightline.example.org"),
        (run(*base, env={"SIGHTLINE_PUBLIC_URL": "sightline.example.org"}), "sightline.example.org"),
    ):
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == f"sightline serve: --public-url takes http://… or https://…, not {value!r}\n"


def test_traveller_encounter_range_prints_spanish_steps_then_each_citation(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json the steps print one a line in the chosen locale, then each citation after a dash.

    000: 'At night, divide all encounter ranges (except in woods) by 3× the background light level, then modify for
    poor or very poor weather.'
    """
    assert main(["traveller", "encounter-range", "1200", "--light", "2", "--weather", "poor", "--locale", "es"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:4] == [
        "Distancia de encuentro base: 1200 m.",
        "Noche, nivel de luz de fondo 2: dividida por 6 → 200 m.",
        "Mal tiempo: dividida por 2 → 100 m.",
        "Distancia de encuentro: 100 m.",
    ]
    assert len(lines) > 4 and err == ""
    assert all(line.startswith("  — Traveller tactical visibility rules (2011-03-17) — ") for line in lines[4:])


def test_ctrl_c_during_a_replay_ends_it_with_status_130_and_no_traceback() -> None:
    """SIGINT while `sightline replay -` waits for its next line: the answers so far stay, exit 130, stderr empty.

    The replay is started with SIGINT's default action, as from a terminal: a test run that is itself a background
    job of a non-interactive shell has SIGINT ignored, and a program started from there keeps ignoring it.
    """
    default_sigint = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    )
    replay = subprocess.Popen(
        [sys.executable, "-c", default_sigint, SIGHTLINE, "replay", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    watchdog = threading.Timer(60, replay.kill)  # a replay that never answers fails the test instead of hanging it
    watchdog.start()
    try:
        assert replay.stdin is not None and replay.stdout is not None and replay.stderr is not None
        replay.stdin.write(b'{"type": "ping", "id": "p1"}\n')
        replay.stdin.flush()
        assert replay.stdout.readline() == b'{"type":"pong","id":"p1"}\n'  # answered: the replay waits for more
        replay.send_signal(signal.SIGINT)
        assert replay.wait(timeout=60) == 130
        assert replay.stdout.read() == b"" and replay.stderr.read() == b""
    finally:
        watchdog.cancel()
        replay.kill()
        replay.wait()
        for stream in (replay.stdin, replay.stdout, replay.stderr):
            if stream is not None:
                stream.close()
