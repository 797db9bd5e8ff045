"""Large JSON frames parsed in slices, so that no single C call holds the interpreter for long.

``orjson.loads`` of a 4 MiB frame is one C call of 40-50 ms (more on a loaded machine) holding the GIL,
and every other world's answers wait for it (``docs/architecture.md``, "Isolation between worlds").
:func:`loads_in_slices` feeds the frame to ijson's C backend (yajl2_c) :data:`PARSE_SLICE` bytes at a time:
each call is short, and between two of them the worker thread runs Python bytecode, where CPython
hands the GIL to a waiting thread. It costs several times orjson's CPU, on the world's own thread.

It gives exactly what :func:`orjson.loads` gives, or leaves the frame to it: the caller gets ``None`` —
and parses the frame with orjson as before — where the two could differ or yajl would misbehave:

- a ``\\uD800``-``\\uDFFF`` escape anywhere (yajl turns a lone surrogate into ``?``, orjson refuses it);
- nesting deeper than orjson's limit (:data:`ORJSON_DEPTH`; ijson's memory grows with the square of the
  depth: a frame nested 100,000 deep took 23 GB), found by :func:`nesting_depth` in numpy;
- anything yajl refuses (bad JSON, integers past 64 bits, which orjson reads): orjson then names the
  problem, with the very message it gave before.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = ["ORJSON_DEPTH", "PARSE_SLICE", "SLICE", "loads_in_slices", "nesting_depth", "search_in_slices"]

#: Bytes given to the C parser per call (about a millisecond of work: on a loaded machine the thread may be
#: preempted while it holds the GIL, and then every thread waits for as long as the call takes).
PARSE_SLICE = 16 * 1024
#: Bytes searched (or counted) per C call.
SLICE = 64 * 1024
#: orjson refuses nesting deeper than this ("depth limit exceeded").
ORJSON_DEPTH = 1024

#: ``\\uD800``–``\\uDFFF`` escapes: the only way a JSON text (once UTF-8 decoded) spells a surrogate.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

_QUOTE = ord('"')
#: Every byte but those that can decide where strings and brackets are: quotes, brackets, backslashes and the
#: characters an escape may start with (so that deleting the rest never joins a backslash to another).
_IRRELEVANT = bytes(c for c in range(256) if c not in b'"[]{}\\/bfnrtu')
_STEP = np.zeros(256, np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def search_in_slices(pattern: re.Pattern[Any], text: Any, overlap: int, size: int = SLICE) -> re.Match[Any] | None:
    """``pattern.search(text)``, one slice of ``size`` characters at a time (a match is at most ``overlap``
    + 1 long): a regular expression search holds the GIL from start to end."""
    for start in range(0, len(text), size):
        match = pattern.search(text, start, start + size + overlap)
        if match is not None:
            return match
    return None


def nesting_depth(data: bytes) -> int:
    """How deep a JSON text nests arrays and objects, brackets inside strings not counted, in short C calls.

    What cannot matter is deleted first (one ``translate``); escaped backslashes and quotes are removed
    left to right, as JSON reads them; then a bracket counts where the quotes before it are even — in
    numpy, one slice at a time, carrying the quote parity and the depth from slice to slice. On a text that
    is not JSON the result is exact up to the first error a parser would stop at.
    """
    kept = data.translate(None, _IRRELEVANT)
    if b"\\" in kept:
        kept = kept.replace(b"\\\\", b"").replace(b'\\"', b"")
    codes = np.frombuffer(kept, np.uint8)
    deepest = depth = quotes = 0
    for start in range(0, len(codes), SLICE):
        part = codes[start : start + SLICE]
        parity = (np.cumsum(part == _QUOTE, dtype=np.int32) + quotes) & 1
        steps = np.where(parity == 0, _STEP[part], 0)
        levels = np.cumsum(steps, dtype=np.int32) + depth
        deepest = max(deepest, int(levels.max()))
        depth, quotes = int(levels[-1]), quotes + int(np.count_nonzero(part == _QUOTE))
    return deepest


def loads_in_slices(data: bytes) -> Any | None:
    """The JSON value of ``data`` parsed :data:`PARSE_SLICE` bytes per C call, or ``None`` where it must be left to
    orjson (see the module's text): the result is always what ``orjson.loads(data)`` gives."""
    if search_in_slices(SURROGATE_ESCAPE, data, 5) is not None:
        return None
    if nesting_depth(data) > ORJSON_DEPTH:
        return None
    import ijson  # only for such a frame: a process that never reads one (a replay) does not load it
    from ijson.backends import yajl2_c

    values: list[Any] = ijson.sendable_list()
    parser = yajl2_c.items_coro(values, "", use_float=True)
    try:
        for start in range(0, len(data), PARSE_SLICE):
            parser.send(data[start : start + PARSE_SLICE])
        parser.close()
    except (ijson.JSONError, ValueError, UnicodeDecodeError):
        return None
    if len(values) != 1:  # pragma: no cover - yajl refuses empty input and trailing data
        return None
    return values[0]
