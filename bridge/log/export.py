"""Export writers: JSONL, CSV and Markdown, each a stream of text chunks over ``LogStore.export``.

Each writer takes an async iterable of records and yields text — the header, then chunks of whole rows
that stop at the row reaching :data:`CHUNK_CHARS` characters — so the HTTP
handlers and the command line write as they read and never hold the log in memory. Rows are made in a
worker thread, one chunk per hop (issue 12: serialising a session's records, whole snapshots included,
on the event loop held every other world's messages up to 343 ms): the event loop only hands records
over and writes what comes back, and the thread's work per hop is bounded by the chunk. The JSONL
writer serialises each distinct snapshot once (records of one scene version share it) and splices it
into its records' lines, byte for byte what ``record.model_dump_json()`` gives.

Exports are safe to open (issue 12; ``docs/log.md``, "Exports are safe to open"):

- CSV: it opens with a UTF-8 byte order mark (:data:`CSV_BOM`: Excel reads accents right). A cell that
  begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with a single quote, as
  OWASP recommends against formula injection (``=HYPERLINK(…)`` as a token name) — unless the whole cell
  is a plain number (``-3``, ``-150.5``, ``1e-05``), which stays a number a spreadsheet can sum; cells are
  quoted when they hold a separator, a quote or a line break. An empty value is an empty cell, never
  ``None``.
- Markdown: ``&``, ``<`` and ``>`` become entities (no raw HTML reaches a renderer) and Markdown's own
  inline syntax (links, emphasis, code, pipes) is backslash-escaped, so a name shows as written.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any, Final, Literal

from ..core.rules.labels import label, readable_citation
from .i18n import TEXTS
from .records import Party, RulingRecord

__all__ = [
    "CHUNK_CHARS",
    "CSV_BOM",
    "CSV_COLUMNS",
    "FORMATS",
    "ExportFormat",
    "candidate_text",
    "csv_chunks",
    "csv_safe",
    "jsonl_chunks",
    "markdown_cell",
    "markdown_chunks",
    "parse_jsonl_line",
]

ExportFormat = Literal["jsonl", "csv", "md"]


#: A chunk of rows ends with the row that brings it to this many characters.
CHUNK_CHARS: Final = 256 * 1024
#: The most records handed to the worker thread at once.
_BATCH: Final = 256
#: Distinct snapshots whose JSON the JSONL writer keeps (a session's records come in scene order).
_SNAPSHOT_JSON_CACHE: Final = 16


async def _rows(
    records: AsyncIterable[RulingRecord], row: Callable[[RulingRecord], str], header: str = ""
) -> AsyncIterator[str]:
    """``header``, then ``row(record)`` for every record, made in a worker thread into chunks of whole rows
    (each ends with the row that brings it to :data:`CHUNK_CHARS` characters)."""
    if header:
        yield header

    def make(batch: list[RulingRecord], start: int) -> tuple[str, int]:
        parts: list[str] = []
        size = 0
        index = start
        while index < len(batch) and size < CHUNK_CHARS:
            text = row(batch[index])
            parts.append(text)
            size += len(text)
            index += 1
        return "".join(parts), index

    async def flush(batch: list[RulingRecord]) -> AsyncIterator[str]:
        index = 0
        while index < len(batch):
            text, index = await asyncio.to_thread(make, batch, index)
            yield text

    batch: list[RulingRecord] = []
    async for record in records:
        batch.append(record)
        if len(batch) >= _BATCH:
            async for text in flush(batch):
                yield text
            batch = []
    async for text in flush(batch):
        yield text


class _JsonLines:
    """One record a line, its snapshot's JSON made once per distinct snapshot (a few kept, by key)."""

    def __init__(self) -> None:
        self._snapshots: OrderedDict[str, str] = OrderedDict()

    def __call__(self, record: RulingRecord) -> str:
        snapshot = record.snapshot
        if snapshot is None:
            return record.model_dump_json() + "\n"
        text = self._snapshots.get(snapshot.key)
        if text is None:
            text = snapshot.model_dump_json()
            self._snapshots[snapshot.key] = text
            if len(self._snapshots) > _SNAPSHOT_JSON_CACHE:
                self._snapshots.popitem(last=False)
        else:
            self._snapshots.move_to_end(snapshot.key)
        # ``snapshot`` is the record's last field: the same bytes as ``record.model_dump_json()``.
        return record.model_dump_json(exclude={"snapshot"})[:-1] + ',"snapshot":' + text + "}\n"


async def jsonl_chunks(records: AsyncIterable[RulingRecord], locale: str = "en") -> AsyncIterator[str]:
    """One JSON object per line: the whole record, snapshot included (enough to redraw it); data with its
    ids, whatever ``locale``."""
    async for text in _rows(records, _JsonLines()):
        yield text


def _party(party: Party | None) -> tuple[str, str]:
    return (party.id, party.name) if party else ("", "")


def _point(line: dict[str, Any] | None, end: str, axis: str) -> str:
    if not line or not isinstance(line.get(end), dict):
        return ""
    value = line[end].get(axis)
    return "" if value is None else str(value)


def _crossings(record: RulingRecord) -> str:
    return "; ".join(f"{c.get('zone', '')} {c.get('kind', '')} ({c.get('region', '')})" for c in record.crossings)


def _modifiers(record: RulingRecord) -> str:
    parts = []
    for m in record.modifiers:
        text = str(m.get("label") or m.get("zone") or m.get("source") or "")
        value = m.get("value")
        if value is not None:  # a candidate without a number (a refusal) shows no number, not "None"
            text += f" {value:+d}" if isinstance(value, int) and not isinstance(value, bool) else f" {value}"
        text += "" if m.get("applied") else " (not applied)"
        parts.append(text.strip())
    return "; ".join(parts)


#: A cell that is only a number: a spreadsheet reads it as that number, never as a formula.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: str) -> str:
    """A CSV cell a spreadsheet will not run: a leading ``'`` when it would start a formula.

    Plain numbers (``-3``, ``+2``, ``-150.5``) are left as they are, so they stay numbers.
    """
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


#: The byte order mark a CSV export opens with: without it Excel reads a UTF-8 file in the system's legacy
#: code page ("sí" reads "sÃ" and a soft hyphen); LibreOffice, Numbers, Google Sheets and pandas
#: skip it. Python's ``csv`` reads it with ``encoding="utf-8-sig"``.
CSV_BOM: Final = "\ufeff"

#: The CSV header, one column per flat field; lists are joined with "; ". ``world_name`` (the world's newest
#: name, as the pages show it) came later and is last, so scripts that read columns by position still work.
CSV_COLUMNS: Final = (
    "id",
    "kind",
    "overrides",
    "time",
    "world",
    "session",
    "scene",
    "user_id",
    "user_name",
    "actor_id",
    "actor_name",
    "target_id",
    "target_name",
    "action",
    "reaction",
    "ruleset",
    "edition",
    "allowed",
    "modifier",
    "crossings",
    "modifiers",
    "notes",
    "citations",
    "reason",
    "start_x",
    "start_y",
    "start_z",
    "end_x",
    "end_y",
    "end_z",
    "snapshot",
    "world_name",
)


def _csv_row(record: RulingRecord) -> list[str]:
    line = record.line
    return [
        record.id or "",
        record.kind,
        record.overrides or "",
        record.time,
        record.world,
        record.session or "",
        record.scene,
        *_party(record.user),
        *_party(record.actor),
        *_party(record.target),
        record.action,
        "true" if record.reaction else "false",
        record.ruleset,
        record.edition,
        "true" if record.allowed else "false",
        "" if record.modifier is None else str(record.modifier),
        _crossings(record),
        _modifiers(record),
        "; ".join(record.notes),
        "; ".join(readable_citation(c) for c in record.citations),
        record.reason or "",
        *(_point(line, end, axis) for end in ("start", "end") for axis in ("x", "y", "z")),
        record.snapshot.key if record.snapshot else "",
        record.world_name,
    ]


def _csv_line(cells: list[str] | tuple[str, ...]) -> str:
    """One CSV line (RFC 4180 quoting, CRLF)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue()


async def csv_chunks(records: AsyncIterable[RulingRecord], locale: str = "en") -> AsyncIterator[str]:
    """RFC 4180 CSV with a header row (``CSV_COLUMNS``): data with its ids (names beside them), whatever
    ``locale``, for spreadsheets and scripts; the Markdown export is the one written for people. It opens
    with :data:`CSV_BOM`, so a spreadsheet reads its accents as UTF-8."""

    def row(record: RulingRecord) -> str:
        return _csv_line([csv_safe(cell) for cell in _csv_row(record)])

    async for text in _rows(records, row, CSV_BOM + _csv_line(CSV_COLUMNS)):
        yield text


#: Markdown's inline syntax (CommonMark backslash escapes), pipes for the table.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def markdown_cell(text: str) -> str:
    """One Markdown table cell showing ``text`` as written: no HTML, no links, one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


_MD_HEADER: Final[dict[str, tuple[str, ...]]] = {
    "en": (
        "Time (UTC)",
        "Scene",
        "Actor",
        "Target",
        "Action",
        "Allowed",
        "MOD",
        "Crossings",
        "Notes",
        "Why",
        "Sources",
    ),
    "es": (
        "Hora (UTC)",
        "Escena",
        "Actor",
        "Objetivo",
        "Acción",
        "Permitida",
        "MOD",
        "Zonas cruzadas",
        "Notas",
        "Por qué",
        "Fuentes",
    ),
}
_MD_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "yes": "yes",
        "no": "no",
        "override": "GM override: {reason}",
        "reaction": "reaction",
    },
    "es": {
        "yes": "sí",
        "no": "no",
        "override": "corrección del DJ: {reason}",
        "reaction": "reacción",
    },
}


def candidate_text(candidate: dict[str, Any], locale: str) -> str:
    """One candidate MOD of a ruling as a reader takes it: "Low Visibility Zone −3 — not applied: <reason>".
    Its label and reason are the ruling's own words (in the language its scene was played in); "applied" is
    in ``locale``. The session page's "Why" and the Markdown export's say the same."""
    t = TEXTS[locale if locale in TEXTS else "en"]
    text = str(candidate.get("label") or candidate.get("zone") or candidate.get("source") or "")
    value = candidate.get("value")
    if isinstance(value, int) and not isinstance(value, bool):
        text += " " + (f"+{value}" if value > 0 else f"\u2212{-value}" if value < 0 else "0")
    text += " — " + (t["applied"] if candidate.get("applied") else t["not_applied"])
    reason = candidate.get("reason")
    return text + (f": {reason}" if reason else "")


def crossing_text(
    record: RulingRecord, crossing: Mapping[str, Any], locale: str, regions: Mapping[str, str] | None = None
) -> str:
    """How the line met a zone, in words: "through Low Visibility Zone (Harbour haze)" — the kind and the
    zone type by their labels, the region by the name the GM gave it (from the ruling's snapshot, else
    ``regions``: the names the session's latest snapshot of the scene gives, as a page has them). A name
    the label already says ("Smoke" for "Zero Visibility Zone (Smoke)") is not said twice."""
    kind = label(record.ruleset, "kind", str(crossing.get("kind", "")), locale)
    zone = label(record.ruleset, "zone", str(crossing.get("zone", "")), locale)
    region_id = crossing.get("region")
    names = {r.get("id"): r.get("name") for r in (record.snapshot.regions if record.snapshot else [])}
    name = str(names.get(region_id) or (regions or {}).get(str(region_id)) or "").strip()
    return f"{kind} {zone}" + (f" ({name})" if name and name.casefold() not in zone.casefold() else "")


def _crossing_words(record: RulingRecord, locale: str) -> str:
    return "; ".join(crossing_text(record, c, locale) for c in record.crossings)


def _markdown_row(r: RulingRecord, locale: str) -> str:
    words = _MD_WORDS.get(locale, _MD_WORDS["en"])
    allowed = words["yes"] if r.allowed else words["no"]
    if r.kind == "override":
        allowed += " (" + words["override"].format(reason=r.reason or "") + ")"
    action = label(r.ruleset, "action", r.action, locale)
    if r.reaction:
        action += f" ({words['reaction']})"
    modifier = "" if r.modifier is None else f"{r.modifier:+d}" if r.modifier else "0"  # as the page: 0, not +0
    difficulty = r.details.get("difficulty")
    if difficulty:  # a Traveller ruling's difficulty by its label, as the page's Difficulty column
        modifier = f"{modifier} ({label(r.ruleset, 'difficulty', str(difficulty), locale)})".strip()
    scene = r.snapshot.name if r.snapshot is not None and r.snapshot.name else r.scene
    cells = [
        r.time.replace("T", " ")[:19],
        scene,
        r.actor.name or r.actor.id,
        (r.target.name or r.target.id) if r.target else "",
        action,
        allowed,
        modifier,
        _crossing_words(r, locale),
        "; ".join(r.notes),
        "; ".join(candidate_text(m, locale) for m in r.modifiers) if r.kind == "ruling" else "",
        "; ".join(readable_citation(c) for c in r.citations) if r.kind == "ruling" else "",
    ]
    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |\n"


async def markdown_chunks(records: AsyncIterable[RulingRecord], locale: str = "en") -> AsyncIterator[str]:
    """A Markdown table, one row per record, for pasting into a campaign journal: in ``locale`` (en, es),
    tokens by name and actions, zones and crossing kinds by their labels — never ids."""
    header = _MD_HEADER.get(locale, _MD_HEADER["en"])
    head = "| " + " | ".join(header) + " |\n" + "|" + "---|" * len(header) + "\n"
    async for text in _rows(records, lambda record: _markdown_row(record, locale), head):
        yield text


#: Writer and media type of each export format.
FORMATS: Final[dict[str, tuple[Callable[[AsyncIterable[RulingRecord], str], AsyncIterator[str]], str]]] = {
    "jsonl": (jsonl_chunks, "application/x-ndjson"),
    "csv": (csv_chunks, "text/csv"),
    "md": (markdown_chunks, "text/markdown"),
}


def parse_jsonl_line(line: str) -> RulingRecord:
    """A record back from one JSONL line (for imports and tests)."""
    return RulingRecord.model_validate(json.loads(line))
