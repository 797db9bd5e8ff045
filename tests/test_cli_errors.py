"""Every way a person can start a command wrongly ends in one line on standard error and a non-zero exit,
never a traceback — through the real ``sightline`` console script, as a GM would meet it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trustme

from bridge.log.store import open_store
from tests.log.sample import ruling

SIGHTLINE = str(Path(sys.executable).parent / "sightline")


def run(*args: str, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``sightline ARGS`` to its end (a serve that starts would be killed by ``timeout``: a failure)."""
    done = subprocess.run(
        [SIGHTLINE, *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, "SIGHTLINE_SECRET": ""},
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def one_line_error(done: subprocess.CompletedProcess[str], *phrases: str) -> str:
    """The single line of standard error, checked for a non-zero exit, no traceback and each phrase."""
    assert done.returncode != 0, done
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def test_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    """`serve --port P` with P taken: which port, that it is in use, and what to do."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run("serve", "--port", str(port), "--data-dir", str(tmp_path))
    line = one_line_error(done, f"port {port}", "already in use", "--port")
    assert line.startswith("sightline serve: ") and done.returncode == 2


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs sysfs, where no one may create files")
def test_serve_with_an_unwritable_data_dir_says_so() -> None:
    """serve names a data directory nobody may write in, with --data-dir as the way out, and one it cannot make.

    The unwritable one is in sysfs, which refuses even root.
    """
    one_line_error(
        run("serve", "--data-dir", "/sys/kernel"), "cannot write in the data directory /sys/kernel", "with --data-dir"
    )
    one_line_error(
        run("serve", "--data-dir", "/sys/kernel/sightline"), "cannot make the data directory", "with --data-dir"
    )


def test_serve_with_a_file_as_data_dir_says_so(tmp_path: Path) -> None:
    """A data directory under a file is refused by name, with --data-dir as the way out, by serve and secret alike."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    for command in (["serve"], ["secret"]):
        line = one_line_error(run(*command, "--data-dir", str(blocker / "sub")), "cannot make the data directory")
        assert line == (
            f"sightline {' '.join(command)}: cannot make the data directory {blocker / 'sub'}: Not a directory"
            " (choose another with --data-dir)"
        )


def test_a_damaged_worlds_file_says_so(tmp_path: Path) -> None:
    """A worlds.json cut short or of the wrong shape ends `secret --world` and `serve` in one line naming it."""
    for content in ('{"w-ashes": ', '["w-ashes"]'):
        (tmp_path / "worlds.json").write_text(content, encoding="utf-8")
        one_line_error(run("secret", "--world", "w-ashes", "--data-dir", str(tmp_path)), "worlds.json")
        one_line_error(run("serve", "--port", "0", "--data-dir", str(tmp_path)), "worlds.json")


def test_serve_with_a_bad_or_unreachable_database_says_so(tmp_path: Path) -> None:
    """serve refuses a bad or unreachable database in one line and creates no missing directory.

    An unknown scheme, a PostgreSQL server that is not there (its password never shown), an SQLite file in a missing
    directory: each refused in one line, and the missing directory is not created.
    """
    one_line_error(
        run("serve", "--port", "0", "--data-dir", str(tmp_path), "--database", "mysql://db/x"), "unsupported --database"
    )
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"postgresql://gm:hunter2@127.0.0.1:{port}/sightline"
    line = one_line_error(
        run("serve", "--port", "0", "--data-dir", str(tmp_path), "--database", url), "cannot open the log"
    )
    assert "hunter2" not in line and f"127.0.0.1:{port}/sightline" in line
    missing = tmp_path / "missing-dir"
    line = one_line_error(
        run("serve", "--port", "0", "--data-dir", str(tmp_path), "--database", f"sqlite:///{missing}/x.db"),
        "no directory",
    )
    assert str(missing) in line and not missing.exists()


def test_serve_with_a_missing_or_bad_certificate_says_so(tmp_path: Path) -> None:
    """A certificate that does not exist, and a file that is not one, are named."""
    missing = tmp_path / "cert.pem"
    one_line_error(run("serve", "--data-dir", str(tmp_path), "--certfile", str(missing)), f"--certfile {missing}")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    one_line_error(run("serve", "--data-dir", str(tmp_path), "--certfile", str(garbage)), "cannot use the TLS")


def test_serve_with_a_certificate_but_a_missing_key_says_so(tmp_path: Path) -> None:
    """A real certificate whose --keyfile is missing names the key file."""
    cert = trustme.CA().issue_cert("localhost")
    certfile = tmp_path / "cert.pem"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    keyfile = tmp_path / "key.pem"
    done = run(
        "serve", "--data-dir", str(tmp_path), "--port", "0", "--certfile", str(certfile), "--keyfile", str(keyfile)
    )
    one_line_error(done, f"--keyfile {keyfile}")


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--port", "99999"], "argument --port: 99999 is not a port"),
        (["--port", "http"], "argument --port: 'http' is not a port number"),
        (["--host", "256.1.1.1"], "argument --host: '256.1.1.1' is not an IP address"),
        (["--host", "bad host"], "is neither an IP address nor a host name"),
        (["--session-idle", "-5"], "argument --session-idle: -5 must be more than 0 minutes"),
        (["--session-idle", "0"], "must be more than 0 minutes"),
        (["--heartbeat", "-1"], "argument --heartbeat: -1 must be at least 0 seconds"),
        (["--heartbeat", "nan"], "is not a finite number"),
        (["--hello-timeout", "0"], "must be more than 0 seconds"),
        (["--log-wait", "0"], "argument --log-wait: 0 must be more than 0 seconds"),
        (["--log-wait", "61"], "argument --log-wait: 61 must be at most 60 seconds"),
        (["--log-wait-failing", "-1"], "argument --log-wait-failing: -1 must be more than 0 seconds"),
        (["--log-wait-failing", "inf"], "is not a finite number"),
        (["--bytes-per-second", "0"], "argument --bytes-per-second: 0 must be at least 1"),
        (["--inline-ms", "6"], "argument --inline-ms: 6 must be at most 5 ms"),
        (["--inline-ms", "-1"], "argument --inline-ms: -1 must be at least 0 ms"),
        (["--max-frame-bytes", "-1"], "must be at least 1"),
        (["--max-tokens", "2.5"], "is not a whole number"),
    ],
)
def test_serve_refuses_values_out_of_range_while_parsing(args: list[str], phrase: str) -> None:
    """Values out of range are refused by the parser in one line (no usage) pointing at --help, exit 2."""
    done = run("serve", *args, timeout=30)
    line = one_line_error(done, phrase)
    assert done.returncode == 2 and done.stdout == ""
    assert line.startswith("sightline serve: error: argument ") and line.endswith(
        " (sightline serve --help lists the options)"
    )


def test_every_commands_parser_errors_are_one_line() -> None:
    """A wrong option, argument or command is one line naming it, pointing at --help, exit 2."""
    for args, line in (
        (["serve", "--no-such-option"], "sightline serve: error: unrecognized arguments: --no-such-option"),
        (["secret", "--world"], "sightline secret: error: argument --world: expected one argument"),
        (["log", "export"], "sightline log export: error: the following arguments are required: --session"),
        (["demo", "--locale", "fr"], "sightline demo: error: argument --locale: invalid choice: 'fr' (choose from"),
        (["bogus"], "sightline: error: argument {serve,secret,log,replay,traveller,demo}: invalid choice: 'bogus'"),
    ):
        done = run(*args, timeout=30)
        assert one_line_error(done).startswith(line) and done.returncode == 2, args
        prog = line.partition(": error:")[0]
        assert done.stderr.endswith(f" ({prog} --help lists the options)\n")


@pytest.mark.parametrize(
    ("args", "commands"),
    [
        ([], ["serve", "secret", "log", "replay", "traveller", "demo"]),
        (["log"], ["sessions", "export", "rejudge"]),
        (["traveller"], ["encounter-range"]),
    ],
)
def test_a_missing_command_lists_every_command_with_its_line(args: list[str], commands: list[str]) -> None:
    """`sightline` (`log`, `traveller`) alone lists each command with its --help line, one a line, exit 2."""
    done = run(*args, timeout=30)
    prog = " ".join(["sightline", *args])
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"{prog}: error: a command is needed, one of:"
    assert lines[-1] == f"({prog} COMMAND --help lists a command's options)"
    assert [line.split()[0] for line in lines[1:-1]] == commands
    listed = dict(line.strip().split(maxsplit=1) for line in lines[1:-1])
    assert (
        listed[commands[0]]
        == {
            "serve": "run the bridge (WebSocket /ws and HTTP on one port)",
            "sessions": "list game sessions, newest first",
            "encounter-range": "encounter range after night and weather, as “Traveller tactical visibility rules "
            "(2011-03-17) — Encounter Ranges” gives it",
        }[commands[0]]
    )
    assert all(listed.values()), listed


def test_serve_on_an_unknown_host_name_says_so(tmp_path: Path) -> None:
    """A host name that does not resolve is named when the bridge tries to listen."""
    one_line_error(run("serve", "--data-dir", str(tmp_path), "--host", "no-such-host.invalid"), "no-such-host.invalid")


def test_encounter_range_refuses_an_infinite_base() -> None:
    """`traveller encounter-range 1e400` (infinite as a float) and a negative range are refused while parsing."""
    for base in ("1e400", "inf", "-10"):
        done = run("traveller", "encounter-range", "--", base, timeout=30)
        assert done.returncode == 2
        assert one_line_error(done).startswith("sightline traveller encounter-range: error: argument base:")


def test_replay_of_a_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    """A replay file with a Latin-1 byte on line 2: line 1 is answered, then one line names line 2 and the byte."""
    source = tmp_path / "game.jsonl"
    source.write_bytes(b'{"type": "ping", "id": "p1"}\n{"type": "ping", "id": "caf\xe9"}\n')
    done = run("replay", str(source))
    line = one_line_error(done, f"{source} line 2 is not UTF-8", "0xe9")
    assert done.returncode == 2 and line.startswith("sightline replay: ")
    assert done.stdout.splitlines() == ['{"type":"pong","id":"p1"}']
    done = run("replay", "-", stdin=b"\xff\n")
    one_line_error(done, "standard input line 1 is not UTF-8")


def test_replay_errors_carry_their_input_line() -> None:
    """Every error answer of a replay names its input line, in `details.line` and on standard error."""
    stdin = b'{"type": "ping", "id": "p1"}\n\nnot json\n{"type": "adjudicate", "id": "a1"}\n'
    done = run("replay", "-", stdin=stdin)
    assert done.returncode == 0
    answers = done.stdout.splitlines()
    assert '"line":3' in answers[1] and '"line":4' in answers[2] and '"id":"a1"' in answers[2]
    errors = done.stderr.splitlines()
    assert errors[0].startswith("sightline replay: standard input line 3: invalid-message: not valid JSON")
    assert errors[1].startswith("sightline replay: standard input line 4: invalid-message:")


def test_log_export_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`sightline log export … | head -1`: one line says the output is incomplete, exit 141, no traceback."""

    async def fill() -> str:
        store = await open_store(None, tmp_path)
        try:
            stored = await store.append_many([ruling(n) for n in range(400)])
        finally:
            await store.close()
        return str(stored[0].session)

    session = asyncio.run(fill())
    export = subprocess.Popen(
        [SIGHTLINE, "log", "export", "--session", session, "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert export.stdout is not None and export.stderr is not None
    first = export.stdout.readline()
    export.stdout.close()  # what `head -1` does after its line
    stderr = export.stderr.read().decode()
    export.stderr.close()
    assert export.wait(timeout=120) == 141 and first.startswith(b"{")
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert stderr.strip().splitlines() == [
        "sightline log export: standard output closed before the end (broken pipe); the output is incomplete"
    ]


def test_log_with_an_unreachable_database_says_so(tmp_path: Path) -> None:
    """`log sessions` against a PostgreSQL server that is not there: one line, the password never shown."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = run(
        "log", "sessions", "--database", f"postgresql://gm:hunter2@127.0.0.1:{port}/x", "--data-dir", str(tmp_path)
    )
    line = one_line_error(done, "cannot open the log")
    assert "hunter2" not in line


def _log_with_a_session(data_dir: Path) -> str:
    """A real SQLite log in ``data_dir`` holding one session of three rulings; the session's id."""

    async def fill() -> str:
        store = await open_store(None, data_dir)
        try:
            stored = await store.append_many([ruling(n) for n in range(3)])
        finally:
            await store.close()
        return str(stored[0].session)

    return asyncio.run(fill())


def test_log_commands_read_a_log_and_never_make_one(tmp_path: Path) -> None:
    """sessions, export and rejudge with a mistyped --data-dir (or a missing SQLite --database) name it, exit 2.

    Nothing is created: no folder, no empty database, no empty table.
    """
    typo = tmp_path / "sightlin"
    for command in (["sessions"], ["export", "--session", "s1"], ["rejudge", "--session", "s1", "--edition", "1.3"]):
        done = run("log", *command, "--data-dir", str(typo))
        line = one_line_error(done, f"no log at {typo / 'sightline.db'}; check --data-dir")
        assert line.startswith(f"sightline log {command[0]}: ") and done.returncode == 2 and done.stdout == ""
    assert not typo.exists()
    missing = tmp_path / "log.db"
    done = run("log", "sessions", "--database", f"sqlite://{missing}")
    one_line_error(done, f"no log at {missing}; check --database")
    assert done.returncode == 2 and not missing.exists()


def test_log_export_of_an_unknown_session_names_the_command_and_the_log(tmp_path: Path) -> None:
    """An unknown session, or one asked of another world, is named with the log searched: exit 2, as usage errors."""
    session = _log_with_a_session(tmp_path)
    database = tmp_path / "sightline.db"
    done = run("log", "export", "--session", "nope", "--data-dir", str(tmp_path))
    line = one_line_error(done, f"no session 'nope' in the log at {database}")
    assert line.startswith("sightline log export: ") and done.returncode == 2
    done = run(
        "log", "rejudge", "--session", session, "--world", "w-x", "--edition", "1.3", "--data-dir", str(tmp_path)
    )
    line = one_line_error(done, f"no session '{session}' of world 'w-x' in the log at {database}")
    assert line.startswith("sightline log rejudge: ") and done.returncode == 2


def test_log_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """`export -o DIR`, `export -o missing/x.csv` and `rejudge -o DIR` name the path and the problem, exit 2.

    Nothing is written to standard output and no FILE.partial is left behind.
    """
    session = _log_with_a_session(tmp_path)
    folder = tmp_path / "exports"
    folder.mkdir()
    missing = tmp_path / "missing" / "x.csv"
    cases = [
        (["export", "-o", str(folder)], f"cannot write {folder}: Is a directory"),
        (["export", "--format", "csv", "-o", str(missing)], f"cannot write {missing}: No such file or directory"),
        (["rejudge", "--edition", "1.3", "-o", str(folder)], f"cannot write {folder}: Is a directory"),
    ]
    for command, phrase in cases:
        done = run("log", *command, "--session", session, "--data-dir", str(tmp_path))
        line = one_line_error(done, phrase)
        assert line.startswith(f"sightline log {command[0]}: ") and done.returncode == 2 and done.stdout == ""
    assert list(folder.iterdir()) == [] and not (tmp_path / "exports.partial").exists()
    assert not missing.parent.exists()
