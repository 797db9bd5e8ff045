"""Export writers' escaping and the pages' language choice, without a store."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

from bridge.log.export import csv_chunks, jsonl_chunks, markdown_chunks, parse_jsonl_line
from bridge.log.i18n import pick_language
from bridge.log.records import RulingRecord

from .sample import ruling


async def _records(*items: RulingRecord) -> AsyncIterator[RulingRecord]:
    for item in items:
        yield item


async def test_writers_escape_what_their_format_needs() -> None:
    """Pipes and newlines stay inside one Markdown cell; commas and quotes inside one CSV field."""
    tricky = ruling(0).model_copy(update={"notes": ['a | b\nc, "d"']})
    md = "".join([c async for c in markdown_chunks(_records(tricky))]).splitlines()
    assert len(md) == 3 and "a \\| b c" in md[2]
    rows = list(csv.reader(io.StringIO("".join([c async for c in csv_chunks(_records(tricky))]))))
    assert rows[1][rows[0].index("notes")] == 'a | b\nc, "d"'
    line = "".join([c async for c in jsonl_chunks(_records(tricky))])
    assert parse_jsonl_line(line) == tricky


def test_language_from_query_then_accept_language() -> None:
    """?lang wins; otherwise the highest-weighted supported Accept-Language; otherwise English."""
    assert pick_language("es", "en") == "es"
    assert pick_language("fr", "es-MX,es;q=0.9") == "es"
    assert pick_language(None, "fr-FR,fr;q=0.9,es;q=0.5,en;q=0.4") == "es"
    assert pick_language(None, "en-GB,es;q=0.8") == "en"
    assert pick_language(None, "de") == "en"
    assert pick_language(None, None) == "en"


async def test_markdown_export_speaks_the_readers_words() -> None:
    """The Markdown export is for people: tokens by name, the action and the crossings by their labels, in
    English or Spanish — the ids stay in JSONL and CSV."""
    record = ruling(0).model_copy(
        update={"crossings": [{"region": "r-fog", "zone": "low", "kind": "through"}], "reaction": True}
    )
    english = "".join([c async for c in markdown_chunks(_records(record))])
    assert "| Fusilier | Target t-tgt | BS Attack (reaction) |" in english
    assert "through Low Visibility Zone" in english and "bs-attack" not in english and "t-fus" not in english
    spanish = "".join([c async for c in markdown_chunks(_records(record), "es")])
    assert spanish.startswith("| Hora (UTC) | Actor | Objetivo | Acción |")
    assert "Ataque CD (reacción)" in spanish and "a través de Zona de Baja Visibilidad" in spanish
    rows = list(csv.reader(io.StringIO("".join([c async for c in csv_chunks(_records(record))]))))
    assert rows[1][rows[0].index("action")] == "bs-attack"
