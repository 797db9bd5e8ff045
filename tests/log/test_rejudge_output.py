"""What ``sightline log rejudge`` prints, from given outcomes: reasons, the JSON form and the four writers,
in English and in Spanish."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bridge.log.records import Party
from bridge.log.rejudge import Outcome, Rejudge
from bridge.log.rejudge_output import REJUDGE_FORMATS, outcome_wire, progress_text, reasons_of, why_text
from bridge.log.store import LoggedSession

from .sample import ruling

_SESSION = LoggedSession(id="01SESSION", world="w-ashes", name="Night raid", started="t0", last_activity="t1")
_CITE_NEW = "Infinity N4, 1.3 — White Noise Zone"
_CITE_OLD = "Infinity N4 — Poor Visibility Zone"


def _outcomes() -> list[Outcome]:
    """Three rulings re-judged under edition 1.3: one unchanged, one now blocked (with the rules that did it), and a
    GURPS one that cannot carry over (GURPS has no edition 1.3: judged for real)."""
    same = ruling(0).model_copy(update={"id": "R0"})
    blocked = ruling(1).model_copy(update={"id": "R1"})
    lost = ruling(2, actor_name="=HYPERLINK(x)", action="attack").model_copy(
        update={"id": "R2", "target": Party(id="t-pipe", name="Lin | Vik"), "ruleset": "gurps-4e"}
    )
    after = {
        "allowed": False,
        "modifier": None,
        "modifiers": [{"label": "White Noise Zone", "applied": False, "reason": "blocks the line"}],
        "notes": ["no line of fire"],
        "citations": [_CITE_NEW],
        "crossings": [{"region": "r-poor", "zone": "white-noise", "kind": "through"}],
        "line": {"start": {"x": 0, "y": 0}, "end": {"x": 1, "y": 1}},
    }
    return [
        Outcome(record=same, status="same", after={"allowed": True, "modifier": -6}),
        Outcome(
            record=blocked,
            status="changed",
            after=after,
            direction="now-blocked",
            added=(_CITE_NEW,),
            dropped=(_CITE_OLD,),
        ),
        Rejudge(edition="1.3").judge(lost),
    ]


async def _stream(items: list[Outcome]) -> AsyncIterator[Outcome]:
    for item in items:
        yield item


async def _written(
    fmt: str,
    *,
    keep_same: bool = False,
    judge: Rejudge | None = None,
    session: LoggedSession = _SESSION,
    outcomes: list[Outcome] | None = None,
    locale: str | None = None,
) -> tuple[str, str]:
    """What the ``fmt`` writer sends to the output, and to the summary stream (in ``locale``; none: the default)."""
    summary_to = io.StringIO()
    chunks = REJUDGE_FORMATS[fmt](
        _stream(_outcomes() if outcomes is None else outcomes),
        session=session,
        judge=judge or Rejudge(edition="1.3"),
        keep_same=keep_same,
        summary_to=summary_to,
        **({} if locale is None else {"locale": locale}),
    )
    return "".join([chunk async for chunk in chunks]), summary_to.getvalue()


def test_reasons_list_applied_entries_with_their_value_then_the_notes() -> None:
    """Applied entries read 'label (+n)' ('(0)' for zero, bare when valueless); entries not applied are left out."""
    modifiers: list[dict[str, Any]] = [
        {"label": "Poor Visibility Zone", "value": -3, "applied": True},
        {"label": "Cover", "value": 2, "applied": True},
        {"label": "Nothing", "value": 0, "applied": True},
        {"label": "Lit", "applied": True},
        {"label": "Smoke", "value": -6, "applied": False, "reason": "does not stack"},
    ]
    assert reasons_of(modifiers, ["a note"], allowed=True) == [
        "Poor Visibility Zone (-3)",
        "Cover (+2)",
        "Nothing (0)",
        "Lit",
        "a note",
    ]


def test_a_refused_rulings_reasons_name_what_decided_it() -> None:
    """When not allowed, each entry not applied that gives a reason is listed as 'label: reason'; others are not."""
    modifiers: list[dict[str, Any]] = [
        {"label": "Zero Visibility Zone", "applied": False, "reason": "blocks the line"},
        {"label": "Fog", "value": -3, "applied": False},
    ]
    assert reasons_of(modifiers, [], allowed=False) == ["Zero Visibility Zone: blocks the line"]
    assert reasons_of(modifiers, ["n"], allowed=True) == ["n"]


def test_an_outcomes_json_has_both_sides_and_the_rules_that_changed() -> None:
    """outcome_wire gives the ruling, the logged side, the side under the judge's rules and the citations that moved."""
    wire = outcome_wire(_outcomes()[1], Rejudge(edition="1.3"))
    assert (wire["record"], wire["status"], wire["direction"]) == ("R1", "changed", "now-blocked")
    assert wire["actor"] == {"id": "t-fus", "name": "Fusilier"} and wire["action"] == "bs-attack"
    assert wire["before"] == {
        "ruleset": "infinity-n4",
        "edition": "current",
        "allowed": True,
        "modifier": -6,
        "reasons": ["Poor Visibility Zone (-6)", "ruling 1"],
        "citations": ruling(1).citations,
    }
    after = wire["after"]
    assert (after["ruleset"], after["edition"], after["allowed"], after["modifier"]) == (
        "infinity-n4",
        "1.3",
        False,
        None,
    )
    assert after["reasons"] == ["White Noise Zone: blocks the line", "no line of fire"]
    assert after["crossings"][0]["zone"] == "white-noise" and after["line"] is not None
    assert (wire["added"], wire["dropped"]) == ([_CITE_NEW], [_CITE_OLD])
    json.dumps(wire)  # JSON-safe as it stands


def test_an_untranslatable_outcomes_json_has_no_after_side_and_says_why() -> None:
    """A ruling that cannot carry over has ``after`` null and its ``why`` (ids, English); with no target, it is null."""
    wire = outcome_wire(_outcomes()[2], Rejudge(edition="1.3"))
    assert wire["after"] is None and wire["why"] == "gurps-4e has no edition '1.3'"
    assert wire["status"] == "untranslatable" and wire["action"] == "attack"
    untargeted = Outcome(record=ruling(0, target=None), status="same", after={"allowed": True})
    assert outcome_wire(untargeted, Rejudge(edition="1.3"))["target"] is None


async def test_the_table_lists_what_changed_and_what_cannot_carry_over_then_the_summary() -> None:
    """The table shows each listed ruling by name and action label, before → after and both reasons; then counts."""
    text, elsewhere = await _written("table")
    assert elsewhere == ""
    blocks = text.split("\n\n")
    assert len(blocks) == 3  # the unchanged ruling is left out; the summary is last
    assert blocks[0].splitlines() == [
        "2025-03-01T19:01:00+00:00  Fusilier → Target t-tgt  BS Attack",
        "  before: allowed, -6  →  after: not allowed  (now blocked)",
        "  was: Poor Visibility Zone (-6); ruling 1",
        "  now: White Noise Zone: blocks the line; no line of fire",
    ]
    assert blocks[1].splitlines() == [
        "2025-03-01T19:02:00+00:00  =HYPERLINK(x) → Lin | Vik  Attack",
        "  before: allowed, -6  →  after: cannot carry over: GURPS 4e has no edition 'Update 1.3'",
        "  was: Poor Visibility Zone (-6); ruling 2",
    ]
    assert blocks[2].splitlines() == [
        "Session Night raid, under Update 1.3 — rulings re-judged: 3; changed: 1; unchanged: 1; cannot carry over: 1.",
        "  1 now blocked",
        "Rules that made the difference (+ cited now, − no longer cited):",
        f"  1 × + {_CITE_NEW}",
        f"  1 × − {_CITE_OLD}",
    ]


async def test_the_table_in_spanish_word_for_word() -> None:
    """With locale es the table's words, the action labels, why a ruling cannot carry over and the summary are Spanish.

    The reasons are the rulings' own texts (here logged in English) and stay as logged; names stay as the GM wrote them.
    """
    text, elsewhere = await _written("table", locale="es")
    assert elsewhere == ""
    assert text.split("\n") == [
        "2025-03-01T19:01:00+00:00  Fusilier → Target t-tgt  Ataque CD",
        "  antes: permitida, -6  →  después: no permitida  (ahora bloqueada)",
        "  motivos antes: Poor Visibility Zone (-6); ruling 1",
        "  motivos ahora: White Noise Zone: blocks the line; no line of fire",
        "",
        "2025-03-01T19:02:00+00:00  =HYPERLINK(x) → Lin | Vik  Ataque",
        "  antes: permitida, -6  →  después: no se puede trasladar: "
        "GURPS 4.ª ed. no tiene la edición «Actualización 1.3»",
        "  motivos antes: Poor Visibility Zone (-6); ruling 2",
        "",
        "Sesión Night raid, con Actualización 1.3 — resoluciones juzgadas de nuevo: 3; cambian: 1; sin cambios: 1; "
        "no se pueden trasladar: 1.",
        "  ahora bloqueada: 1",
        "Reglas que marcaron la diferencia (+ citada ahora, − ya no citada):",
        f"  1 × + {_CITE_NEW}",
        f"  1 × − {_CITE_OLD}",
        "",
    ]


async def test_the_markdown_in_spanish_word_for_word() -> None:
    """With locale es the Markdown's header, cells and summary list are Spanish; cells are escaped as in English."""
    text, elsewhere = await _written("md", locale="es")
    assert elsewhere == ""
    assert text.split("\n") == [
        "| Hora | Actor | Objetivo | Acción | Antes | Después | Motivos antes | Motivos ahora |",
        "|---|---|---|---|---|---|---|---|",
        "| 2025-03-01T19:01:00+00:00 | Fusilier | Target t-tgt | Ataque CD | permitida, -6 | no permitida "
        "| Poor Visibility Zone (-6); ruling 1 | White Noise Zone: blocks the line; no line of fire |",
        "| 2025-03-01T19:02:00+00:00 | =HYPERLINK(x) | Lin \\| Vik | Ataque | permitida, -6 "
        "| no se puede trasladar: GURPS 4.ª ed. no tiene la edición «Actualización 1.3» "
        "| Poor Visibility Zone (-6); ruling 2 |  |",
        "",
        "- Sesión Night raid, con Actualización 1.3 — resoluciones juzgadas de nuevo: 3; cambian: 1; sin cambios: 1; "
        "no se pueden trasladar: 1.",
        "- ahora bloqueada: 1",
        "- Reglas que marcaron la diferencia (+ citada ahora, − ya no citada):",
        f"- 1 × + {_CITE_NEW}",
        f"- 1 × − {_CITE_OLD}",
        "",
    ]


async def test_csv_and_jsonl_stay_data_in_spanish_only_the_csv_summary_is_translated() -> None:
    """With locale es the CSV (header, cells) and the JSONL equal the English byte for byte; the CSV summary is Spanish.

    The CSV's summary goes to the other stream, for people; everything in the files stays data with its ids.
    """
    for fmt in ("jsonl", "csv"):  # the CSV last: its summaries are checked below
        english, english_summary = await _written(fmt, keep_same=True)
        spanish, spanish_summary = await _written(fmt, keep_same=True, locale="es")
        assert spanish == english
    assert english_summary.startswith("Session Night raid, under Update 1.3 — rulings re-judged: 3;")
    assert spanish_summary.splitlines()[:2] == [
        "Sesión Night raid, con Actualización 1.3 — resoluciones juzgadas de nuevo: 3; cambian: 1; sin cambios: 1; "
        "no se pueden trasladar: 1.",
        "  ahora bloqueada: 1",
    ]


@pytest.mark.parametrize(
    ("locale", "copies", "lines"),
    [
        (
            "en",
            1,
            [
                "Session Night raid, under Update 1.3 — rulings re-judged: 1; changed: 1; unchanged: 0; "
                "cannot carry over: 0.",
                "  1 now blocked",
            ],
        ),
        (
            "en",
            12,
            [
                "Session Night raid, under Update 1.3 — rulings re-judged: 12; changed: 12; unchanged: 0; "
                "cannot carry over: 0.",
                "  12 now blocked",
            ],
        ),
        (
            "es",
            1,
            [
                "Sesión Night raid, con Actualización 1.3 — resoluciones juzgadas de nuevo: 1; cambian: 1; "
                "sin cambios: 0; no se pueden trasladar: 0.",
                "  ahora bloqueada: 1",
            ],
        ),
        (
            "es",
            12,
            [
                "Sesión Night raid, con Actualización 1.3 — resoluciones juzgadas de nuevo: 12; cambian: 12; "
                "sin cambios: 0; no se pueden trasladar: 0.",
                "  ahora bloqueada: 12",
            ],
        ),
    ],
    ids=["en-1", "en-12", "es-1", "es-12"],
)
async def test_the_summarys_counts_read_right_for_one_and_for_many(locale: str, copies: int, lines: list[str]) -> None:
    """Each count stands after a colon (or before words that do not change with it), so 1 reads as right as 12."""
    blocked = _outcomes()[1]
    text, _ = await _written("table", outcomes=[blocked] * copies, locale=locale)
    assert text.split("\n\n")[-1].splitlines()[:2] == lines


def test_why_a_ruling_cannot_carry_over_in_each_language() -> None:
    """A record from before the log kept situations says so in English or Spanish; so does a missing edition."""
    judge = Rejudge(edition="1.3")
    old = judge.judge(ruling(0))  # no situation logged
    assert (old.status, old.why_code) == ("untranslatable", "unrecorded")
    assert why_text(old, judge) == "recorded before the log kept each ruling's whole situation"
    assert why_text(old, judge, "es") == (
        "registrada antes de que el registro guardara la situación completa de cada resolución"
    )
    lost = _outcomes()[2]
    assert why_text(lost, judge, "en") == "GURPS 4e has no edition 'Update 1.3'"
    assert why_text(lost, judge, "es") == "GURPS 4.ª ed. no tiene la edición «Actualización 1.3»"
    refused = Outcome(record=ruling(3), status="untranslatable", why="invalid scene", why_code="refused")
    assert why_text(refused, judge, "es") == "invalid scene"  # the bridge's own message, as it wrote it
    assert progress_text("es").format(count=5, total=13, percent=" (38%)") == "juzgados de nuevo 5/13 registros (38%)"


async def test_all_lists_the_unchanged_rulings_too() -> None:
    """With keep_same every ruling is listed, in every format; the counts stay the same."""
    table, _ = await _written("table", keep_same=True)
    assert table.count("\n\n") == 3 and "after: allowed, -6" in table
    lines = (await _written("jsonl", keep_same=True))[0].splitlines()
    assert [json.loads(line).get("record") for line in lines[:-1]] == ["R0", "R1", "R2"]
    rows = list(csv.reader(io.StringIO((await _written("csv", keep_same=True))[0])))
    assert [row[0] for row in rows[1:]] == ["R0", "R1", "R2"]
    md = (await _written("md", keep_same=True))[0]
    assert md.count("| 2025-03-01") == 3


async def test_jsonl_is_one_object_per_listed_ruling_then_the_summary() -> None:
    """JSONL: each listed ruling as outcome_wire gives it, then one {"summary": …} line with counts and causes."""
    text, elsewhere = await _written("jsonl")
    lines = [json.loads(line) for line in text.splitlines()]
    assert elsewhere == "" and len(lines) == 3
    judge = Rejudge(edition="1.3")
    assert lines[:2] == [outcome_wire(o, judge) for o in _outcomes()[1:]]
    assert lines[2] == {
        "summary": {
            "total": 3,
            "same": 1,
            "changed": 1,
            "untranslatable": 1,
            "directions": {"now-blocked": 1},
            "causes": [{"citation": "+ " + _CITE_NEW, "rulings": 1}, {"citation": "− " + _CITE_OLD, "rulings": 1}],
        }
    }


async def test_csv_is_one_table_its_summary_goes_elsewhere_and_formulas_are_neutralised() -> None:
    """CSV: the header and one row per listed ruling; a cell that would start a formula is quoted; numbers stay."""
    text, elsewhere = await _written("csv")
    assert text.startswith("\ufeffrecord,")  # a BOM, as the export's CSV: spreadsheets read accents as UTF-8
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    assert [row["record"] for row in rows] == ["R1", "R2"]
    changed, lost = rows
    assert (changed["before_allowed"], changed["before_modifier"], changed["after_allowed"]) == ("true", "-6", "false")
    assert changed["after_modifier"] == "" and changed["direction"] == "now-blocked"
    assert changed["after_reasons"] == "White Noise Zone: blocks the line; no line of fire"
    assert lost["actor"] == "'=HYPERLINK(x)" and lost["target"] == "Lin | Vik"
    assert (lost["after_allowed"], lost["why"]) == ("", "gurps-4e has no edition '1.3'")
    assert text.startswith("\ufeffrecord,time,actor,target,action,status,direction,") and "\r\n" in text
    assert elsewhere.startswith("Session Night raid, under Update 1.3 — rulings re-judged: 3;")
    assert "Session" not in text


async def test_markdown_is_one_row_per_listed_ruling_with_cells_escaped() -> None:
    """Markdown: a header, one row per listed ruling (pipes escaped, action by label), then the summary as a list."""
    text, elsewhere = await _written("md")
    lines = text.splitlines()
    assert elsewhere == "" and lines[0].startswith("| Time | Actor | Target | Action | Before | After |")
    rows = [line for line in lines if line.startswith("| 2025")]
    assert len(rows) == 2
    assert "| Fusilier | Target t-tgt | BS Attack | allowed, -6 | not allowed |" in rows[0]
    assert "| Lin \\| Vik |" in rows[1] and "cannot carry over: GURPS 4e has no edition 'Update 1.3'" in rows[1]
    assert "- Session Night raid, under Update 1.3 — rulings re-judged: 3;" in text and "- 1 now blocked" in text


@pytest.mark.parametrize(
    ("judge", "session", "locale", "head"),
    [
        (
            Rejudge(ruleset="gurps-4e"),
            _SESSION,
            "en",
            "Session Night raid, under GURPS 4e (current rules) — rulings re-judged: 3;",
        ),
        (
            Rejudge(ruleset="gurps-4e"),
            _SESSION,
            "es",
            "Sesión Night raid, con GURPS 4.ª ed. (reglamento vigente) — resoluciones juzgadas de nuevo: 3;",
        ),
        (
            Rejudge(ruleset="infinity-n4", edition="1.2"),
            _SESSION.model_copy(update={"name": "", "world_name": "Ashes", "started": "2026-12-01T20:15:07.250000Z"}),
            "en",
            "Session 2026-12-01 20:15:07 UTC (Ashes), under Infinity N4 (Update 1.2) — rulings re-judged: 3;",
        ),
        (
            Rejudge(edition="1.3"),
            _SESSION.model_copy(update={"name": "", "started": "2026-12-01T20:15:07.250000Z"}),
            "es",
            "Sesión 2026-12-01 20:15:07 UTC (w-ashes), con Actualización 1.3 — resoluciones juzgadas de nuevo: 3;",
        ),
        (
            Rejudge(ruleset="infinity-n4", edition="original"),
            _SESSION,
            "es",
            "Sesión Night raid, con Infinity N4 (texto original) — resoluciones juzgadas de nuevo: 3;",
        ),
    ],
    ids=["ruleset-alone", "ruleset-alone-es", "nameless-session", "nameless-unnamed-world-es", "original-es"],
)
async def test_the_summary_names_the_session_and_the_rules_judged_under(
    judge: Rejudge, session: LoggedSession, locale: str, head: str
) -> None:
    """The summary names the session (unnamed: its start and world, never its id), the rules by their labels."""
    text, _ = await _written("table", judge=judge, session=session, locale=locale)
    assert text.split("\n\n")[-1].startswith(head)


async def test_an_empty_session_prints_only_its_summary() -> None:
    """With nothing to judge each writer gives its header (if any) and the summary: 0 rulings, nothing changed."""
    judge = Rejudge(edition="1.3")
    written: dict[str, str] = {}
    summary_to = io.StringIO()
    for fmt, writer in REJUDGE_FORMATS.items():
        chunks = writer(_stream([]), session=_SESSION, judge=judge, keep_same=True, summary_to=summary_to)
        written[fmt] = "".join([chunk async for chunk in chunks])
    head = (
        "Session Night raid, under Update 1.3 — rulings re-judged: 0; changed: 0; unchanged: 0; cannot carry over: 0."
    )
    assert written["table"] == head + "\n"
    assert json.loads(written["jsonl"])["summary"]["total"] == 0 and written["jsonl"].count("\n") == 1
    assert written["csv"].count("\r\n") == 1 and summary_to.getvalue() == head + "\n"
    assert written["md"].endswith("|---|\n\n- " + head + "\n")
