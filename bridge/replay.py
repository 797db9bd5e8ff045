"""``sightline replay``: the protocol without a network.

Reads client messages, one JSON object per line, and writes the bridge's answers, one per line — the
same :class:`~bridge.session.Session` as the server, in offline mode (no ``hello`` needed; one given is
answered with ``welcome``). Nothing is written to the log: logged rulings answer ``logged: false`` and
log operations answer ``log-unavailable``. Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

from .log.effects import unlogged_answer
from .protocol import encode
from .session import Close, Send, Session, StoreThenSend, Worlds

__all__ = ["replay_lines", "run_replay"]


def replay_lines(lines: Iterable[str]) -> Iterator[str]:
    """Answer each message line with the bridge's answer lines."""
    session = Session(Worlds(), offline=True)
    for line in lines:
        if not line.strip():
            continue
        for effect in session.receive(line):
            if isinstance(effect, Send):
                yield encode(effect.message)
            elif isinstance(effect, StoreThenSend):
                yield encode(unlogged_answer(effect))
            elif isinstance(effect, Close):
                return


def run_replay(source: TextIO, sink: TextIO) -> int:
    for answer in replay_lines(source):
        sink.write(answer + "\n")
        sink.flush()
    return 0
