"""``sightline log sessions`` and ``sightline log export`` against both stores; the log commands' options."""

from __future__ import annotations

import argparse
import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bridge.config import BridgeConfig
from bridge.log.cli import (
    DEFAULT_SESSION_IDLE_MINUTES,
    EXPORT_FORMATS,
    REJUDGE_FORMATS,
    add_log_parser,
    run_log_command_async,
)
from bridge.log.export import FORMATS
from bridge.log.i18n import LANGUAGES
from bridge.log.records import RulingRecord
from bridge.log.rejudge_output import REJUDGE_FORMATS as REJUDGE_WRITERS
from bridge.log.sql import SqlLogStore
from bridge.log.store import open_store

from .sample import ruling


def parse(*argv: str) -> argparse.Namespace:
    """Arguments as the lead's main parser would give them."""
    parser = argparse.ArgumentParser(prog="sightline")
    add_log_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


class FakeTerminal(io.StringIO):
    """Standard error that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_parsers_format_names_are_the_writers() -> None:
    """The parser's --format choices are exactly the export and rejudge writers' names.

    The parser offers them without importing the writers, so that `serve` starts light.
    """
    assert tuple(sorted(FORMATS)) == EXPORT_FORMATS
    assert tuple(sorted(REJUDGE_WRITERS)) == REJUDGE_FORMATS


def test_rejudge_help_shows_the_locale_option(capsys: pytest.CaptureFixture[str]) -> None:
    """`log rejudge --help` offers --locale {en,es} and says what it translates, as `log export --help` offers it."""
    for command, words in (("rejudge", "the table's, the Markdown's and the summary's words"), ("export", "Markdown")):
        with pytest.raises(SystemExit) as exited:
            parse("log", command, "--help")
        assert exited.value.code == 0
        shown = " ".join(capsys.readouterr().out.split())  # argparse wraps lines where it likes
        assert "--locale {en,es}" in shown and words in shown and "(default en)" in shown


def test_rejudge_and_export_take_the_same_locales_with_the_same_default() -> None:
    """Both commands default to English, take the languages the log's pages speak and refuse any other."""
    assert parse("log", "rejudge", "--session", "s", "--edition", "1.3").locale == "en"
    assert parse("log", "export", "--session", "s").locale == "en"
    for language in LANGUAGES:
        assert parse("log", "rejudge", "--session", "s", "--edition", "1.3", "--locale", language).locale == language
        assert parse("log", "export", "--session", "s", "--locale", language).locale == language
    with pytest.raises(SystemExit):
        parse("log", "rejudge", "--session", "s", "--edition", "1.3", "--locale", "fr")


async def test_sessions_table_and_json(store: SqlLogStore, store_url: str, tmp_path: Path) -> None:
    """`log sessions` lists sessions as a table or JSON, optionally of one world.

    The table names a world by the name its client sent, with the id `--world` takes beside it (the id alone when none
    was sent).
    """
    a = await store.append(ruling(0, world="w-a", world_name="Ashes of Acontecimento"))
    await store.append(ruling(0, world="w-b"))
    out = io.StringIO()
    args = parse("log", "sessions", "--database", store_url, "--data-dir", str(tmp_path))
    assert await run_log_command_async(args, stdout=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["ID", "WORLD", "NAME", "STARTED", "ENDED", "RULINGS"] and len(lines) == 3
    world_column = lines[0].index("WORLD")
    assert sorted(line[world_column:].split("  ")[0] for line in lines[1:]) == [
        "Ashes of Acontecimento (w-a)",
        "w-b",
    ]
    out = io.StringIO()
    args = parse("log", "sessions", "--world", "w-a", "--json", "--database", store_url)
    assert await run_log_command_async(args, stdout=out) == 0
    listed = json.loads(out.getvalue())
    assert [(s["id"], s["world"], s["rulings"]) for s in listed] == [(a.session, "w-a", 1)]


async def test_export_formats_to_stdout_and_file_with_progress(
    store: SqlLogStore, store_url: str, tmp_path: Path
) -> None:
    """`log export` writes JSONL to stdout, CSV and Markdown to a file, and shows progress on a terminal."""
    stored = await store.append_many([ruling(n) for n in range(30)])
    session = str(stored[0].session)
    out, err = io.StringIO(), FakeTerminal()
    args = parse("log", "export", "--session", session, "--database", store_url)
    assert await run_log_command_async(args, stdout=out, stderr=err) == 0
    assert [RulingRecord.model_validate_json(line) for line in out.getvalue().splitlines()] == stored
    assert "exported 30/30 records (100%)" in err.getvalue()
    target = tmp_path / "session.csv"
    args = parse("log", "export", "--session", session, "--format", "csv", "-o", str(target), "--database", store_url)
    quiet = io.StringIO()
    assert await run_log_command_async(args, stderr=quiet) == 0
    assert quiet.getvalue() == "" and not (tmp_path / "session.csv.partial").exists()
    with target.open(newline="") as file:
        assert len(list(csv.reader(file))) == 31
    args = parse("log", "export", "--session", session, "--format", "md", "--database", store_url)
    md = io.StringIO()
    assert await run_log_command_async(args, stdout=md) == 0
    assert md.getvalue().count("| BS Attack |") == 30
    args = parse("log", "export", "--session", session, "--format", "md", "--locale", "es", "--database", store_url)
    md_es = io.StringIO()
    assert await run_log_command_async(args, stdout=md_es) == 0
    assert md_es.getvalue().count("| Ataque CD |") == 30 and md_es.getvalue().startswith("| Hora (UTC) |")


async def test_export_of_unknown_session_fails(store: SqlLogStore, store_url: str) -> None:
    """An unknown session id, or a session of another world, exits 2 naming the command, the session and the log."""
    stored = await store.append(ruling(0))
    err = io.StringIO()
    args = parse("log", "export", "--session", "nope", "--database", store_url)
    assert await run_log_command_async(args, stderr=err) == 2
    assert err.getvalue().startswith("sightline log export: no session 'nope' in the log at ")
    assert (store_url.split("@")[-1] if "@" in store_url else store_url) in err.getvalue()
    args = parse("log", "export", "--session", str(stored.session), "--world", "w-x", "--database", store_url)
    assert await run_log_command_async(args, stderr=io.StringIO()) == 2


async def test_default_database_is_sightline_db_in_the_data_dir(tmp_path: Path) -> None:
    """Without --database the commands read sightline.db in --data-dir, never making one; a bad URL exits 2."""
    err = io.StringIO()
    assert await run_log_command_async(parse("log", "sessions", "--data-dir", str(tmp_path)), stderr=err) == 2
    assert err.getvalue() == f"sightline log sessions: no log at {tmp_path / 'sightline.db'}; check --data-dir\n"
    assert not (tmp_path / "sightline.db").exists()
    made = await open_store(None, tmp_path)
    await made.append(ruling(0))
    await made.close()
    out = io.StringIO()
    assert await run_log_command_async(parse("log", "sessions", "--data-dir", str(tmp_path)), stdout=out) == 0
    assert len(out.getvalue().splitlines()) == 2
    err = io.StringIO()
    assert await run_log_command_async(parse("log", "sessions", "--database", "mysql://x"), stderr=err) == 2


async def test_sessions_say_idle_when_no_ruling_came_for_the_idle_timeout(
    store: SqlLogStore, store_url: str, tmp_path: Path
) -> None:
    """A session without a ruling for --session-idle shows as idle, ended at its last ruling; not as open.

    The store closes such a session only at the world's next ruling; until then `log sessions` called a game
    finished hours ago "open". A recent session stays open, a closed one shows its end; the JSON says each state.
    """
    now = datetime.now(UTC)
    finished = await store.append(ruling(0, world="w-done", at=now - timedelta(hours=5)))
    playing = await store.append(ruling(0, world="w-live", at=now - timedelta(minutes=10)))
    await store.append(ruling(0, world="w-ended", at=now - timedelta(hours=1)))
    await store.end_session("w-ended", now - timedelta(minutes=50))
    out = io.StringIO()
    args = parse("log", "sessions", "--session-idle", "240", "--database", store_url, "--data-dir", str(tmp_path))
    assert await run_log_command_async(args, stdout=out) == 0
    ended = {line.split()[1]: line.split()[-3:-1] for line in out.getvalue().splitlines()[1:]}
    done = await store.get_session(str(finished.session))
    assert done is not None and ended["w-done"] == [done.last_activity, "(idle)"]
    assert ended["w-live"][-1] == "open" and "(idle)" not in ended["w-ended"]
    out = io.StringIO()
    args = parse("log", "sessions", "--json", "--session-idle", "240", "--database", store_url)
    assert await run_log_command_async(args, stdout=out) == 0
    states = {s["world"]: s["state"] for s in json.loads(out.getvalue())}
    assert states == {"w-done": "idle", "w-live": "open", "w-ended": "ended"}
    out = io.StringIO()  # with a shorter idle timeout, the ten-minute-old session is idle too
    args = parse("log", "sessions", "--json", "--session-idle", "5", "--database", store_url)
    assert await run_log_command_async(args, stdout=out) == 0
    assert {s["world"]: s["state"] for s in json.loads(out.getvalue())}[playing.world] == "idle"
    with pytest.raises(SystemExit):
        parse("log", "sessions", "--session-idle", "0")


def test_the_sessions_idle_default_is_serves() -> None:
    """`log sessions --session-idle` defaults to serve's --session-idle, so both call the same sessions idle."""
    assert parse("log", "sessions").session_idle == BridgeConfig().session_idle_minutes == DEFAULT_SESSION_IDLE_MINUTES
