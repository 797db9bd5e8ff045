"""``sightline log …``: list sessions and export one, from the same store ``serve`` writes.

The lead's command line adds the parser with :func:`add_log_parser` and, for ``args.command == "log"``,
returns :func:`run_log_command`. Both subcommands take ``--data-dir`` and ``--database`` (also read
from ``SIGHTLINE_DATA_DIR`` / ``SIGHTLINE_DATABASE``); when the main parser defines them too, its
values are used unless repeated after the subcommand.

An export streams: records are read in batches and written as they come, to ``--output`` (written
beside the target and renamed into place when complete) or standard output; on a terminal, standard
error shows how many records are done.

The commands read a log, never make one: a data directory or SQLite file that holds none is refused by
name, as are an unknown session and an output file that cannot be written — one line on standard error,
exit 2.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..arguments import at_least
from ..config import data_dir_from
from .i18n import LANGUAGES

if TYPE_CHECKING:
    from .records import RulingRecord
    from .store import LoggedSession, LogStore

__all__ = [
    "EXPORT_FORMATS",
    "REJUDGE_FORMATS",
    "add_log_parser",
    "default_data_dir",
    "run_log_command",
    "run_log_command_async",
]

#: The names of :data:`bridge.log.export.FORMATS` and :data:`bridge.log.rejudge_output.REJUDGE_FORMATS`
#: (a test checks they agree): the parser is built by every ``sightline`` command, ``serve`` too, which
#: must not import the log's modules (and the rules behind them) before it listens.
EXPORT_FORMATS = ("csv", "jsonl", "md")
#: ``serve``'s ``--session-idle`` default (``BridgeConfig.session_idle_minutes``; a test checks they agree).
DEFAULT_SESSION_IDLE_MINUTES = 240.0
REJUDGE_FORMATS = ("csv", "jsonl", "md", "table")


def default_data_dir() -> Path:
    """``SIGHTLINE_DATA_DIR``, else the platform's per-user data directory — exactly as ``serve`` decides."""
    return data_dir_from(None)


def _storage_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", type=Path, default=argparse.SUPPRESS, help="directory of sightline.db (as for serve)"
    )
    parser.add_argument(
        "--database",
        default=argparse.SUPPRESS,
        help="sqlite:///path or postgresql://… (default: sightline.db in the data directory)",
    )


def _locale_option(parser: argparse.ArgumentParser, words: str) -> None:
    """``--locale``, the same for every log command that writes for people: the languages the log's pages
    speak (:data:`bridge.log.i18n.LANGUAGES`), English by default."""
    parser.add_argument(
        "--locale", choices=LANGUAGES, default=LANGUAGES[0], help=f"language of {words} (default {LANGUAGES[0]})"
    )


def add_log_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``log sessions``, ``log export`` and ``log rejudge`` to the ``subparsers`` of the main parser;
    returns ``log``'s."""
    log = subparsers.add_parser("log", help="browse and export the adjudication log")
    commands = log.add_subparsers(dest="log_command", required=True, metavar="{sessions,export,rejudge}")
    sessions = commands.add_parser("sessions", help="list game sessions, newest first")
    sessions.add_argument("--world", help="only this world's sessions")
    sessions.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    sessions.add_argument(
        "--session-idle",
        type=at_least(0, exclusive=True, unit="minutes"),
        default=DEFAULT_SESSION_IDLE_MINUTES,
        metavar="MINUTES",
        help="a session with no ruling for this long is shown as idle, ended at its last ruling: what the "
        "world's next ruling will make it (give serve's --session-idle; default %(default)g minutes)",
    )
    _storage_options(sessions)
    export = commands.add_parser("export", help="write one session's rulings")
    export.add_argument("--session", required=True, help="session id (see `sightline log sessions`)")
    export.add_argument("--world", help="the session's world (checked when given)")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="jsonl", help="output format (default jsonl)")
    export.add_argument("--output", "-o", type=Path, help="file to write (default: standard output)")
    _locale_option(export, "the Markdown export's words")
    _storage_options(export)
    rejudge = commands.add_parser(
        "rejudge",
        help="judge a session's rulings again under another edition or ruleset; prints what changes",
        description="Judge every logged ruling of a session again, from its stored scene, under another "
        "edition or ruleset, and print the rulings that change, those that cannot carry over, and a "
        "summary. Nothing stored changes.",
    )
    rejudge.add_argument("--session", required=True, help="session id (see `sightline log sessions`)")
    rejudge.add_argument("--world", help="the session's world (checked when given)")
    rejudge.add_argument("--ruleset", help="judge under this ruleset (default: each ruling's own)")
    rejudge.add_argument(
        "--edition", help="judge under this edition (default: current when --ruleset changes, else each ruling's own)"
    )
    rejudge.add_argument("--format", choices=REJUDGE_FORMATS, default="table", help="output format (default table)")
    rejudge.add_argument("--all", action="store_true", help="list unchanged rulings too")
    rejudge.add_argument("--output", "-o", type=Path, help="file to write (default: standard output)")
    _locale_option(rejudge, "the table's, the Markdown's and the summary's words; JSONL and CSV cells stay data")
    _storage_options(rejudge)
    return log  # type: ignore[no-any-return]


def run_log_command(args: argparse.Namespace) -> int:
    """Run ``log sessions`` or ``log export``; the process exit status."""
    import asyncio  # here: the parser is built for every command, `replay` included, which runs no loop

    return asyncio.run(run_log_command_async(args))


async def run_log_command_async(
    args: argparse.Namespace, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """:func:`run_log_command` inside a running event loop (tests, embedding)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    name = f"sightline log {args.log_command}"
    database = getattr(args, "database", None) or os.environ.get("SIGHTLINE_DATABASE") or None
    data_dir = Path(getattr(args, "data_dir", None) or default_data_dir())
    from .store import LogOpenError, describe_database, open_store

    try:
        store = await open_store(database, data_dir, create=False)
    except LogOpenError as exc:
        print(f"{name}: {exc}", file=err)
        return 2
    where = describe_database(database, data_dir)
    try:
        if args.log_command == "sessions":
            return await _sessions(store, args, out)
        if args.log_command == "rejudge":
            return await _rejudge(store, args, out, err, name, where)
        return await _export(store, args, out, err, name, where)
    except _CannotWrite as exc:
        print(f"{name}: {exc}", file=err)
        return 2
    finally:
        await store.close()


class _CannotWrite(Exception):
    """``--output`` cannot be written: its path and the system's reason ("Is a directory")."""

    def __init__(self, output: Path, exc: OSError) -> None:
        super().__init__(f"cannot write {output}: {exc.strerror or exc}")


def _session_dict(session: LoggedSession) -> dict[str, Any]:
    return session.model_dump(mode="json")


def _world(session: LoggedSession) -> str:
    """The world as the table shows it: its name, then the id ``--world`` takes (the id alone when its
    clients never sent a name)."""
    return f"{session.world_name} ({session.world})" if session.world_name else session.world


def _ended(session: LoggedSession, state: str) -> str:
    """The ENDED cell: the end; for an idle session its last ruling's time, "(idle)"; else "open"."""
    if state == "idle":
        return f"{session.last_activity} (idle)"
    return session.ended or "open"


async def _sessions(store: LogStore, args: argparse.Namespace, out: TextIO) -> int:
    """The sessions, each ``open``, ``idle`` (no ruling for ``--session-idle``: the game is over, and the
    world's next ruling will close it at its last ruling's time) or ended."""
    from datetime import UTC, datetime, timedelta

    sessions = await store.list_sessions(args.world)
    now = datetime.now(UTC)
    idle = timedelta(minutes=args.session_idle)
    states = [s.state(now, idle) for s in sessions]
    if args.json:
        listed = [_session_dict(s) | {"state": state} for s, state in zip(sessions, states, strict=True)]
        json.dump(listed, out, indent=2)
        out.write("\n")
        return 0
    header = ("ID", "WORLD", "NAME", "STARTED", "ENDED", "RULINGS")
    rows = [
        (s.id, _world(s), s.name, s.started, _ended(s, state), str(s.rulings))
        for s, state in zip(sessions, states, strict=True)
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n")
    return 0


class _Progress:
    """``exported N/M records`` (or ``text``'s words) on a terminal, at most five times a second."""

    def __init__(self, stream: TextIO, total: int, text: str = "exported {count}/{total} records{percent}") -> None:
        self._stream, self._total, self._text = stream, total, text
        self._on = stream.isatty()
        self._shown_at = 0.0
        self.count = 0

    async def counted(self, records: AsyncIterator[RulingRecord]) -> AsyncIterator[RulingRecord]:
        async for record in records:
            self.count += 1
            now = time.monotonic()
            if self._on and now - self._shown_at >= 0.2:
                self._shown_at = now
                self._show()
            yield record

    def _show(self) -> None:
        percent = f" ({100 * self.count // self._total}%)" if self._total else ""
        self._stream.write("\r" + self._text.format(count=self.count, total=self._total, percent=percent))
        self._stream.flush()

    def done(self) -> None:
        if self._on:
            self._show()
            self._stream.write("\n")
            self._stream.flush()


async def _find_session(
    store: LogStore, args: argparse.Namespace, err: TextIO, name: str, where: str
) -> LoggedSession | None:
    session = await store.get_session(args.session, world=args.world)
    if session is None:
        world = f" of world {args.world!r}" if args.world else ""
        print(f"{name}: no session {args.session!r}{world} in the log at {where}", file=err)
    return session


async def _rejudge(store: LogStore, args: argparse.Namespace, out: TextIO, err: TextIO, name: str, where: str) -> int:
    from .rejudge import Rejudge, RejudgeError
    from .rejudge_output import REJUDGE_FORMATS as WRITERS
    from .rejudge_output import progress_text

    try:
        judge = Rejudge(ruleset=args.ruleset, edition=args.edition)
    except RejudgeError as exc:
        print(f"{name}: {exc}", file=err)
        return 2
    session = await _find_session(store, args, err, name, where)
    if session is None:
        return 2
    writer = WRITERS[args.format]
    progress = _Progress(err, session.rulings, progress_text(args.locale))
    outcomes = judge.outcomes(progress.counted(store.export(session.world, session.id)))
    chunks = writer(outcomes, session=session, judge=judge, keep_same=args.all, summary_to=err, locale=args.locale)
    await _write_chunks(chunks, args.output, out)
    progress.done()
    return 0


async def _write_chunks(chunks: AsyncIterator[str], output: Path | None, out: TextIO) -> None:
    """Write ``chunks`` to ``output`` (beside it, then renamed into place when complete) or ``out``.

    :class:`_CannotWrite` when the file cannot be made, written or put in place (nothing is read first when
    it cannot be made); an error reading the log is not one, and goes on as it is."""
    if output is None:
        async for chunk in chunks:
            out.write(chunk)
        out.flush()
        return
    if output.is_dir():  # FILE.partial could be made, but not renamed over a directory at the end
        raise _CannotWrite(output, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    partial = output.with_name(output.name + ".partial")
    try:
        file = partial.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise _CannotWrite(output, exc) from exc
    try:
        with file:
            async for chunk in chunks:
                try:
                    file.write(chunk)
                except OSError as exc:
                    raise _CannotWrite(output, exc) from exc
            try:
                file.close()
                partial.replace(output)
            except OSError as exc:
                raise _CannotWrite(output, exc) from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


async def _export(store: LogStore, args: argparse.Namespace, out: TextIO, err: TextIO, name: str, where: str) -> int:
    from .export import FORMATS

    session = await _find_session(store, args, err, name, where)
    if session is None:
        return 2
    writer, _ = FORMATS[args.format]
    progress = _Progress(err, session.rulings)
    chunks = writer(progress.counted(store.export(session.world, session.id)), args.locale)
    await _write_chunks(chunks, args.output, out)
    progress.done()
    return 0
