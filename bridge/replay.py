"""``sightline replay``: the protocol without a network.

Reads client messages, one JSON object per line, and writes the bridge's answers, one per line — the
same :class:`~bridge.session.Session` as the server, in offline mode (no ``hello`` needed; one given is
answered with ``welcome``). Nothing is written to the log: logged rulings answer ``logged: false`` and
log operations answer ``log-unavailable``. Blank lines are skipped.

Every ``error`` answer carries the input line it answers as ``details.line`` (1 for the first line), and
is repeated on standard error as ``sightline replay: FILE line N: code: message``, so a long bug report
points at its bad line. Input must be UTF-8 (a byte-order mark is skipped): a line that is not stops the
replay with one line naming it and exit status 2, after the answers to the lines before it.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, TextIO

import orjson

from . import warmup
from .protocol import ErrorMessage, Prebuilt, encode
from .session import Close, Limits, Send, Session, StoreThenSend, Worlds

__all__ = ["ReplayInputError", "replay_lines", "run_replay"]


class ReplayInputError(Exception):
    """A line of the input that is not text (UTF-8); the message names the line and the byte."""


def replay_lines(
    lines: Iterable[str],
    *,
    on_error: Callable[[int, ErrorMessage], None] | None = None,
    limits: Limits | None = None,
    records: bool = False,
) -> Iterator[str]:
    """Answer each message line with the bridge's answer lines; errors carry ``details.line``.

    ``limits`` (the offline defaults when ``None``): e.g. ``engine_pairs=0`` answers every ``adjudicate``
    on the per-pair path. No store is kept, so a logged ruling answers ``logged: false`` and its log record
    is not built, unless ``records`` (the same answers; what a replay cost before, for the benchmark)."""
    for answer in _replay_bytes(lines, on_error=on_error, limits=limits, records=records):
        yield answer.decode()


def _replay_bytes(
    lines: Iterable[str],
    *,
    on_error: Callable[[int, ErrorMessage], None] | None = None,
    limits: Limits | None = None,
    records: bool = False,
) -> Iterator[bytes]:
    """:func:`replay_lines`' answers as UTF-8, as orjson writes them: no ``str`` made to be encoded again."""
    session = Session(Worlds(), offline=True, limits=limits, logging=records)
    if limits is None or limits.engine_pairs > 0:
        warmup.load()  # offline and long: the engine answers from the first question
    for number, line in enumerate(lines, start=1):
        if not line or line.isspace():  # (what ``strip()`` would leave empty, without the copy)
            continue
        for effect in session.receive(line):
            if isinstance(effect, Send):
                message = effect.message
                if type(message) is Prebuilt:  # an answer already in wire form (``adjudicate``'s): what encode() writes
                    try:
                        yield orjson.dumps(message.payload)
                        continue
                    except (TypeError, ValueError, RecursionError):
                        pass  # encode() answers internal-error, and logs it
                if isinstance(message, ErrorMessage):
                    message = message.model_copy(update={"details": {**message.details, "line": number}})
                    if on_error is not None:
                        on_error(number, message)
                yield encode(message).encode()
            elif isinstance(effect, StoreThenSend):
                from .log.effects import unlogged_answer  # the log's modules only when a line asks for it

                yield encode(unlogged_answer(effect)).encode()
            elif isinstance(effect, Close):
                return


def decoded_lines(source: Iterable[bytes], name: str) -> Iterator[str]:
    """The lines of ``source`` as text; :class:`ReplayInputError` at the first line that is not UTF-8."""
    for number, raw in enumerate(source, start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ReplayInputError(
                f"{name} line {number} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1});"
                " save the file as UTF-8"
            ) from None


#: Answers written at once when the input is a file (fewer, larger writes; see :func:`run_replay`).
BATCH = 256


def _from_file(source: BinaryIO) -> bool:
    """Whether ``source`` is a regular file (read to its end without waiting) rather than a pipe or terminal."""
    try:
        return stat.S_ISREG(os.fstat(source.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _utf8_buffer(sink: TextIO) -> BinaryIO | None:
    """The bytes under ``sink`` when writing UTF-8 there is what writing the same text to ``sink`` does (a
    UTF-8 text file or standard output whose ``"\\n"`` stays ``"\\n"``), else ``None``."""
    if not isinstance(sink, io.TextIOWrapper) or os.linesep != "\n":
        return None
    try:
        utf8 = codecs.lookup(sink.encoding).name == "utf-8" and sink.errors in ("strict", "surrogateescape")
    except LookupError:
        return None
    return sink.buffer if utf8 else None


def run_replay(source: BinaryIO, sink: TextIO, errors: TextIO, *, name: str) -> int:
    """Replay ``source`` to ``sink``; the exit status (0, or 2 when the input is not text).

    From a pipe or a terminal each answer is written and flushed before the next line is read (someone may
    be waiting for it). From a regular file the answers are written in batches of :data:`BATCH`: the same
    bytes in the same order, and every answer written before anything goes to ``errors`` (a line's report,
    the input's error), so the two streams interleave as before. A batch goes to a UTF-8 ``sink``'s bytes
    as orjson wrote them (the text layer's encoding of a long answer cost more than writing it)."""
    live = not _from_file(source)
    raw = None if live else _utf8_buffer(sink)
    if raw is not None:
        sink.flush()  # whatever the text layer holds goes first
    pending: list[bytes] = []

    def write_pending() -> None:
        if pending:
            pending.append(b"")  # (the last answer's newline)
            joined = b"\n".join(pending)
            pending.clear()
            if raw is not None:
                raw.write(joined)
            else:
                sink.write(joined.decode())
        if raw is not None:
            raw.flush()
        sink.flush()

    def report(line: int, message: ErrorMessage) -> None:
        write_pending()
        errors.write(f"sightline replay: {name} line {line}: {message.code}: {message.message}\n")
        errors.flush()

    try:
        for answer in _replay_bytes(decoded_lines(source, name), on_error=report):
            if live:
                sink.write(answer.decode() + "\n")
                sink.flush()
                continue
            pending.append(answer)
            if len(pending) >= BATCH:
                write_pending()
    except ReplayInputError as exc:
        write_pending()
        errors.write(f"sightline replay: {exc}\n")
        return 2
    finally:
        write_pending()  # also when interrupted: every answer made so far
    return 0
