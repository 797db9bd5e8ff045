"""Export writers' escaping and their English and Spanish words, without a store."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

from bridge.log.export import crossing_text, csv_chunks, jsonl_chunks, markdown_chunks, parse_jsonl_line
from bridge.log.records import Party, RulingRecord

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


async def test_markdown_export_speaks_the_readers_words() -> None:
    """The Markdown export names tokens, the action and the crossings as people read them, in English or Spanish.

    Tokens by name, the action and the crossings by their labels; the ids stay in JSONL and CSV.
    """
    record = ruling(0).model_copy(
        update={"crossings": [{"region": "r-fog", "zone": "low", "kind": "through"}], "reaction": True}
    )
    english = "".join([c async for c in markdown_chunks(_records(record))])
    assert "| Fusilier | Target t-tgt | BS Attack (reaction) |" in english
    assert "through Low Visibility Zone" in english and "bs-attack" not in english and "t-fus" not in english
    spanish = "".join([c async for c in markdown_chunks(_records(record), "es")])
    assert spanish.startswith("| Hora (UTC) | Escena | Actor | Objetivo | Acción |")
    assert "Ataque CD (reacción)" in spanish and "a través de Zona de Baja Visibilidad" in spanish
    rows = list(csv.reader(io.StringIO("".join([c async for c in csv_chunks(_records(record))]))))
    assert rows[1][rows[0].index("action")] == "bs-attack"


async def test_csv_cells_that_would_start_a_formula_are_neutralised_and_numbers_stay_numbers() -> None:
    """OWASP: a CSV cell that would start a formula gets a leading ', while negative numbers stay numbers.

    A cell beginning with = + - @ tab or CR gets it (a token named =HYPERLINK(…), a user, an override reason); a -3
    modifier and negative coordinates stay numbers.
    """
    hostile = ruling(0).model_copy(
        update={
            "actor": Party(id="t-1", name='=HYPERLINK("http://evil.example","x")'),
            "user": Party(id="@u", name="+cmd|' /C calc'!A0"),
            "target": Party(id="t-2", name="-2+3"),
            "kind": "override",
            "overrides": "r-0",
            "reason": "\t=1+1",
            "notes": ["\rnote"],
            "modifier": -3,
            "line": {"start": {"x": -150.5, "y": 0, "z": -1}, "end": {"x": 1e-05, "y": 2, "z": 0}},
        }
    )
    rows = list(csv.reader(io.StringIO("".join([c async for c in csv_chunks(_records(hostile))]))))
    cell = dict(zip(rows[0], rows[1], strict=True))
    assert cell["actor_name"] == '\'=HYPERLINK("http://evil.example","x")'
    assert cell["user_id"] == "'@u" and cell["user_name"] == "'+cmd|' /C calc'!A0"
    assert cell["target_name"] == "'-2+3" and cell["reason"] == "'\t=1+1" and cell["notes"] == "'\rnote"
    assert cell["modifier"] == "-3" and cell["start_x"] == "-150.5" and cell["start_z"] == "-1"
    assert cell["end_x"] == "1e-05"
    assert not any(value.startswith(("=", "+", "-", "@", "\t", "\r")) and not _number(value) for value in rows[1])


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


async def test_empty_values_are_empty_cells_never_none() -> None:
    """No user, no target, no line, a candidate without a value: empty cells, and no text 'None'."""
    bare = ruling(0, target=None).model_copy(
        update={
            "user": None,
            "line": None,
            "snapshot": None,
            "allowed": False,
            "modifier": None,
            "modifiers": [{"source": "rule", "value": None, "applied": False, "label": "No line of fire"}],
        }
    )
    text = "".join([c async for c in csv_chunks(_records(bare))])
    rows = list(csv.reader(io.StringIO(text)))
    cell = dict(zip(rows[0], rows[1], strict=True))
    assert "None" not in text
    assert cell["user_id"] == cell["target_name"] == cell["modifier"] == cell["start_x"] == cell["snapshot"] == ""
    assert cell["modifiers"] == "No line of fire (not applied)"
    md = "".join([c async for c in markdown_chunks(_records(bare))])
    assert "None" not in md


async def test_markdown_escapes_html_and_markdown_syntax() -> None:
    """A name holding HTML or a Markdown link shows as text: no raw tag, no link reaches the renderer."""
    hostile = ruling(0).model_copy(
        update={
            "actor": Party(id="t-1", name='<img src=x onerror="alert(1)">'),
            "notes": ["[click](javascript:alert(1)) *bold* `code` a & b"],
        }
    )
    row = "".join([c async for c in markdown_chunks(_records(hostile))]).splitlines()[2]
    assert "<img" not in row and '&lt;img src=x onerror="alert(1)"&gt;' in row
    assert "\\[click\\](javascript:alert(1)) \\*bold\\* \\`code\\` a &amp; b" in row


async def test_markdown_says_what_the_page_says_scene_difficulty_why_and_sources() -> None:
    """The Markdown export carries what the session page shows of a ruling, in the reader's words.

    The scene by name, a Traveller difficulty by its label beside the MOD, every candidate with its reason ("Why")
    and each citation by its source's title ("Sources"); an override, the GM's word, lists none.
    """
    record = ruling(0).model_copy(
        update={
            "modifiers": [
                {
                    "source": "zone",
                    "zone": "low",
                    "value": -3,
                    "applied": False,
                    "label": "Low Visibility Zone",
                    "reason": "Visibility Zone MODs never stack",
                },
                {"source": "zone", "zone": "poor", "value": -6, "applied": True, "label": "Poor Visibility Zone"},
            ],
            "details": {"difficulty": "difficult"},
        }
    )
    override = ruling(1).model_copy(update={"kind": "override", "reason": "cover"})
    english = "".join([c async for c in markdown_chunks(_records(record, override))]).splitlines()
    assert english[0].startswith("| Time (UTC) | Scene | Actor |") and english[0].endswith("| Notes | Why | Sources |")
    assert "| Docks | Fusilier |" in english[2] and "| -6 (Difficult) |" in english[2]
    assert (
        "| Low Visibility Zone \u22123 — not applied: Visibility Zone MODs never stack; Poor Visibility Zone"
        in english[2]
    )
    assert (
        "| Infinity N4 Core Rules, original text — Visibility Conditions: Visibility Zone MODs never stack |"
        in (english[2])
    )
    assert english[3].endswith("| ruling 1 |  |  |")
    level = "".join([c async for c in markdown_chunks(_records(record.model_copy(update={"modifier": 0})))])
    assert "| 0 (Difficult) |" in level  # a MOD of 0 reads 0, as on the page, not +0
    spanish = "".join([c async for c in markdown_chunks(_records(record), "es")])
    assert "| Por qué | Fuentes |" in spanish and "— no aplicado: " in spanish and "(Difícil)" in spanish


async def test_csv_opens_with_a_byte_order_mark_so_spreadsheets_read_accents() -> None:
    """The CSV export opens with a UTF-8 BOM (Excel reads a file without one in a legacy code page); once."""
    record = ruling(0, actor_name="Álvaro")
    text = "".join([c async for c in csv_chunks(_records(record, record))])
    assert text.startswith("\ufeffid,kind,") and text.count("\ufeff") == 1
    assert "Álvaro" in text.encode("utf-8").decode("utf-8-sig")


def test_a_region_named_as_its_zone_type_says_is_not_named_twice() -> None:
    """A region "Smoke" reads "through Zero Visibility Zone (Smoke)", once; "Dock smoke" keeps its own name."""
    record = ruling(0, snapshot=None)
    smoke = {"region": "r-smoke", "zone": "smoke", "kind": "through"}
    assert crossing_text(record, smoke, "en", {"r-smoke": "Smoke"}) == "through Zero Visibility Zone (Smoke)"
    assert crossing_text(record, smoke, "es", {"r-smoke": "humo"}).endswith("Zona de Visibilidad Nula (Humo)")
    named = crossing_text(record, smoke, "en", {"r-smoke": "Dock smoke"})
    assert named == "through Zero Visibility Zone (Smoke) (Dock smoke)"
