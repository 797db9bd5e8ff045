"""What ``sightline log rejudge`` prints: a table, JSONL, CSV or Markdown, streamed as rulings are judged.

Each writer takes the :class:`~bridge.log.rejudge.Outcome` stream and yields text chunks; it lists the
rulings that change and those that cannot carry over (every unchanged one too with ``keep_same``), then
the summary — how many changed, in which direction for the actor, which rules made the difference. The
CSV writer sends its summary to ``summary_to`` (standard error) so the file stays one table.

Words for people are in ``locale`` (en, es; ``--locale``, as ``log export``'s): the table, the Markdown and
the summary, with actions, editions, rulesets and what a ruling lacks by their labels
(:func:`bridge.core.rules.labels.label`, as the export's Markdown). JSONL and CSV cells stay data with
their ids, whatever the locale (as the export's CSV and JSONL). Each side's reasons are the ruling's own
texts, in the language its scene was played in (``rules.locale``), as the export's notes are.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Final, TextIO

from ..core.rules.labels import label
from .export import CSV_BOM, csv_safe, markdown_cell
from .i18n import TEXTS
from .records import RulingRecord
from .rejudge import Outcome, Rejudge, Summary
from .store import LoggedSession

__all__ = ["REJUDGE_FORMATS", "outcome_wire", "progress_text", "reasons_of", "why_text"]

Writer = Callable[..., AsyncIterator[str]]

#: The words the log's pages already say for a re-judged ruling, taken from them (:data:`bridge.log.i18n.TEXTS`)
#: so that the command and the pages never word them apart.
_PAGE_WORDS: Final = ("cannot_carry", "now-allowed", "now-blocked", "other-scale")
#: The words of the table, the Markdown and the summary. Counts stand after a colon or before a word
#: that does not change with the number ("changed: 1", "1 × …"), so they read right for 1 as for 12.
_OWN_WORDS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "before": "before",
        "after": "after",
        "was": "was",
        "now": "now",
        "allowed": "allowed",
        "not_allowed": "not allowed",
        "easier": "easier for the actor",
        "harder": "harder for the actor",
        "summary": "Session {session}, under {rules} — rulings re-judged: {total}; changed: {changed}; "
        "unchanged: {same}; cannot carry over: {untranslatable}.",
        "rules": "{ruleset} ({edition})",
        "direction_count": "  {count} {direction}",
        "causes": "Rules that made the difference (+ cited now, − no longer cited):",
        "lacks": "{ruleset} has no {what}",
        "edition": "edition '{name}'",
        "action": "action '{name}'",
        "trait": "trait '{name}'",
        "zone": "zone type '{name}'",
        "unrecorded": "recorded before the log kept each ruling's whole situation",
        "progress": "re-judged {count}/{total} records{percent}",
    },
    "es": {
        "before": "antes",
        "after": "después",
        "was": "motivos antes",
        "now": "motivos ahora",
        "allowed": "permitida",
        "not_allowed": "no permitida",
        "easier": "más fácil para el actor",
        "harder": "más difícil para el actor",
        "summary": "Sesión {session}, con {rules} — resoluciones juzgadas de nuevo: {total}; cambian: {changed}; "
        "sin cambios: {same}; no se pueden trasladar: {untranslatable}.",
        "rules": "{ruleset} ({edition})",
        "direction_count": "  {direction}: {count}",
        "causes": "Reglas que marcaron la diferencia (+ citada ahora, − ya no citada):",
        "lacks": "{ruleset} no tiene {what}",
        "edition": "la edición «{name}»",
        "action": "la acción «{name}»",
        "trait": "el rasgo «{name}»",
        "zone": "el tipo de zona «{name}»",
        "unrecorded": "registrada antes de que el registro guardara la situación completa de cada resolución",
        "progress": "juzgados de nuevo {count}/{total} registros{percent}",
    },
}
_WORDS: Final[dict[str, dict[str, str]]] = {
    lang: {**{key: TEXTS[lang][key] for key in _PAGE_WORDS}, **words} for lang, words in _OWN_WORDS.items()
}
_MD_HEADER: Final[dict[str, tuple[str, ...]]] = {
    "en": ("Time", "Actor", "Target", "Action", "Before", "After", "Was", "Now"),
    "es": ("Hora", "Actor", "Objetivo", "Acción", "Antes", "Después", "Motivos antes", "Motivos ahora"),
}


def _words(locale: str) -> dict[str, str]:
    """The words of ``locale``; English for a language we do not speak (as the export's Markdown)."""
    return _WORDS.get(locale, _WORDS["en"])


def progress_text(locale: str = "en") -> str:
    """The progress line's template in ``locale`` (``{count}``, ``{total}``, ``{percent}``)."""
    return _words(locale)["progress"]


def reasons_of(modifiers: list[dict[str, Any]], notes: list[str], allowed: bool) -> list[str]:
    """A ruling's reasons in its own words: each applied entry (or, when not allowed, each entry that
    decides it) with its value, then the notes."""
    reasons = []
    for entry in modifiers:
        if entry.get("applied"):
            value = entry.get("value")
            reasons.append(entry.get("label", "") + ("" if value is None else f" ({value:+d})" if value else " (0)"))
        elif not allowed and entry.get("reason"):
            reasons.append(f"{entry.get('label', '')}: {entry['reason']}")
    return reasons + list(notes)


def _side(allowed: bool | None, modifier: int | None, words: dict[str, str]) -> str:
    if allowed is None:
        return "—"
    if not allowed:
        return words["not_allowed"]
    return words["allowed"] + ", " + ("0" if not modifier else f"{modifier:+d}")


def why_text(outcome: Outcome, judge: Rejudge, locale: str = "en") -> str:
    """Why ``outcome`` could not carry over, in ``locale``: what the rules judged under lack, by their
    labels ("GURPS 4e has no edition 'Update 1.3'"); a record from before the log kept situations; or
    the bridge's own message when it refused the scene or the ruling."""
    words = _words(locale)
    if outcome.why_code == "lacks":
        r = outcome.record
        ruleset, _ = judge.rules_for(r)
        what = ", ".join(
            words[kind].format(name=label(ruleset if kind == "edition" else r.ruleset, kind, value, locale))
            for kind, value in outcome.lacks
        )
        return words["lacks"].format(ruleset=label(ruleset, "ruleset", ruleset, locale), what=what)
    if outcome.why_code == "unrecorded":
        return words["unrecorded"]
    return outcome.why or ""


def outcome_wire(outcome: Outcome, judge: Rejudge) -> dict[str, Any]:
    """One outcome as JSON: the ruling, both sides with their reasons, and why it changed."""
    r: RulingRecord = outcome.record
    ruleset, edition = judge.rules_for(r)
    after = outcome.after or {}
    return {
        "record": r.id,
        "time": r.time,
        "scene": r.scene,
        "actor": r.actor.model_dump(),
        "target": r.target.model_dump() if r.target else None,
        "action": r.action,
        "status": outcome.status,
        "direction": outcome.direction,
        "why": outcome.why,
        "before": {
            "ruleset": r.ruleset,
            "edition": r.edition,
            "allowed": r.allowed,
            "modifier": r.modifier,
            "reasons": reasons_of(r.modifiers, r.notes, r.allowed),
            "citations": r.citations,
        },
        "after": None
        if outcome.after is None
        else {
            "ruleset": ruleset,
            "edition": edition,
            "allowed": after.get("allowed"),
            "modifier": after.get("modifier"),
            "reasons": reasons_of(after.get("modifiers", []), after.get("notes", []), bool(after.get("allowed"))),
            "citations": after.get("citations", []),
            "crossings": after.get("crossings", []),
            "line": after.get("line"),
        },
        "added": list(outcome.added),
        "dropped": list(outcome.dropped),
    }


async def _listed(outcomes: AsyncIterable[Outcome], summary: Summary, keep_same: bool) -> AsyncIterator[Outcome]:
    async for outcome in outcomes:
        summary.add(outcome)
        if keep_same or outcome.status != "same":
            yield outcome


def _rules_text(judge: Rejudge, words: dict[str, str], locale: str) -> str:
    """The rules judged under, by their labels: "Update 1.3" (each ruling's own ruleset), "GURPS 4e (current rules)"."""
    if judge.ruleset is None:
        return label(None, "edition", judge.edition or "current", locale)
    edition = label(judge.ruleset, "edition", judge.edition or "current", locale)
    return words["rules"].format(ruleset=label(judge.ruleset, "ruleset", judge.ruleset, locale), edition=edition)


def _session_text(session: LoggedSession) -> str:
    """The session as the log's pages name it: its name, else when it started (UTC) with its world's name
    (its id when it never sent one) — never the session's internal id."""
    if session.name:
        return session.name
    return f"{session.started.replace('T', ' ')[:19]} UTC ({session.world_name or session.world})"


def _summary_lines(summary: Summary, session: LoggedSession, judge: Rejudge, locale: str) -> list[str]:
    words = _words(locale)
    lines = [
        words["summary"].format(
            session=_session_text(session),
            rules=_rules_text(judge, words, locale),
            total=summary.total,
            changed=summary.changed,
            same=summary.same,
            untranslatable=summary.untranslatable,
        )
    ]
    for direction, count in summary.directions.most_common():
        lines.append(words["direction_count"].format(count=count, direction=words.get(direction, direction)))
    if summary.causes:
        lines.append(words["causes"])
        lines.extend(f"  {count} × {cause}" for cause, count in summary.causes.most_common())
    return lines


def _who(outcome: Outcome) -> tuple[str, str]:
    r = outcome.record
    return r.actor.name or r.actor.id, (r.target.name or r.target.id) if r.target else ""


def _after_text(outcome: Outcome, judge: Rejudge, locale: str) -> str:
    words = _words(locale)
    if outcome.after is None:
        return words["cannot_carry"] + ": " + why_text(outcome, judge, locale)
    return _side(outcome.after.get("allowed"), outcome.after.get("modifier"), words)


async def table_chunks(
    outcomes: AsyncIterable[Outcome],
    *,
    session: LoggedSession,
    judge: Rejudge,
    keep_same: bool,
    summary_to: TextIO,
    locale: str = "en",
) -> AsyncIterator[str]:
    """For a terminal: a block per listed ruling (who, what, before → after, both sides' reasons), in ``locale``."""
    words = _words(locale)
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        r = outcome.record
        actor, target = _who(outcome)
        after = outcome.after or {}
        action = label(r.ruleset, "action", r.action, locale)
        head = f"{r.time}  {actor}" + (f" → {target}" if target else "") + f"  {action}"
        before_text = _side(r.allowed, r.modifier, words)
        lines = [
            head,
            f"  {words['before']}: {before_text}  →  {words['after']}: {_after_text(outcome, judge, locale)}",
        ]
        if outcome.direction:
            lines[-1] += f"  ({words[outcome.direction]})"
        lines.append(f"  {words['was']}: " + ("; ".join(reasons_of(r.modifiers, r.notes, r.allowed)) or "—"))
        if outcome.after is not None:
            now = reasons_of(after.get("modifiers", []), after.get("notes", []), bool(after.get("allowed")))
            lines.append(f"  {words['now']}: " + ("; ".join(now) or "—"))
        yield "\n".join(lines) + "\n\n"
    yield "\n".join(_summary_lines(summary, session, judge, locale)) + "\n"


async def jsonl_chunks(
    outcomes: AsyncIterable[Outcome],
    *,
    session: LoggedSession,
    judge: Rejudge,
    keep_same: bool,
    summary_to: TextIO,
    locale: str = "en",
) -> AsyncIterator[str]:
    """One JSON object per listed ruling (:func:`outcome_wire`), then ``{"summary": …}``: data with its ids,
    whatever ``locale``."""
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        yield json.dumps(outcome_wire(outcome, judge), ensure_ascii=False) + "\n"
    yield json.dumps({"summary": summary.wire()}, ensure_ascii=False) + "\n"


CSV_COLUMNS: Final = (
    "record",
    "time",
    "actor",
    "target",
    "action",
    "status",
    "direction",
    "before_allowed",
    "before_modifier",
    "after_allowed",
    "after_modifier",
    "before_reasons",
    "after_reasons",
    "why",
)


def _flag(value: bool | None) -> str:
    return "" if value is None else ("true" if value else "false")


async def csv_chunks(
    outcomes: AsyncIterable[Outcome],
    *,
    session: LoggedSession,
    judge: Rejudge,
    keep_same: bool,
    summary_to: TextIO,
    locale: str = "en",
) -> AsyncIterator[str]:
    """CSV (cells neutralised as the log export's are): columns and cells are data with their ids whatever
    ``locale``, as the export's CSV; the summary goes to ``summary_to``, in ``locale``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def take(row: list[str] | tuple[str, ...]) -> str:
        writer.writerow([csv_safe(cell) for cell in row])
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield CSV_BOM + take(CSV_COLUMNS)  # as the export's: a spreadsheet reads its accents as UTF-8
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        wire = outcome_wire(outcome, judge)
        before, after = wire["before"], wire["after"] or {}
        actor, target = _who(outcome)
        yield take(
            [
                outcome.record.id or "",
                outcome.record.time,
                actor,
                target,
                outcome.record.action,
                outcome.status,
                outcome.direction or "",
                _flag(before["allowed"]),
                "" if before["modifier"] is None else str(before["modifier"]),
                _flag(after.get("allowed")),
                "" if after.get("modifier") is None else str(after["modifier"]),
                "; ".join(before["reasons"]),
                "; ".join(after.get("reasons", [])),
                outcome.why or "",
            ]
        )
    summary_to.write("\n".join(_summary_lines(summary, session, judge, locale)) + "\n")


async def markdown_chunks(
    outcomes: AsyncIterable[Outcome],
    *,
    session: LoggedSession,
    judge: Rejudge,
    keep_same: bool,
    summary_to: TextIO,
    locale: str = "en",
) -> AsyncIterator[str]:
    """A Markdown table of the listed rulings, then the summary as a list, in ``locale``."""
    words = _words(locale)
    header = _MD_HEADER.get(locale, _MD_HEADER["en"])
    yield "| " + " | ".join(header) + " |\n" + "|" + "---|" * len(header) + "\n"
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        wire = outcome_wire(outcome, judge)
        actor, target = _who(outcome)
        after = wire["after"] or {}
        cells = [
            outcome.record.time,
            actor,
            target,
            label(outcome.record.ruleset, "action", outcome.record.action, locale),
            _side(outcome.record.allowed, outcome.record.modifier, words),
            _after_text(outcome, judge, locale),
            "; ".join(wire["before"]["reasons"]),
            "; ".join(after.get("reasons", [])),
        ]
        yield "| " + " | ".join(markdown_cell(c) for c in cells) + " |\n"
    yield "\n" + "\n".join("- " + line.strip() for line in _summary_lines(summary, session, judge, locale)) + "\n"


#: Writer of each ``--format``.
REJUDGE_FORMATS: Final[dict[str, Writer]] = {
    "table": table_chunks,
    "jsonl": jsonl_chunks,
    "csv": csv_chunks,
    "md": markdown_chunks,
}
