"""What ``sightline log rejudge`` prints: a table, JSONL, CSV or Markdown, streamed as rulings are judged.

Each writer takes the :class:`~bridge.log.rejudge.Outcome` stream and yields text chunks; it lists the
rulings that change and those that cannot carry over (every unchanged one too with ``keep_same``), then
the summary — how many changed, in which direction for the actor, which rules made the difference. The
CSV writer sends its summary to ``summary_to`` (standard error) so the file stays one table.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Final, TextIO

from ..core.rules import RULESETS
from .export import csv_safe, markdown_cell
from .records import RulingRecord
from .rejudge import Outcome, Rejudge, Summary
from .store import LoggedSession

__all__ = ["REJUDGE_FORMATS", "outcome_wire", "reasons_of"]

Writer = Callable[..., AsyncIterator[str]]

_DIRECTION_WORDS: Final = {
    "now-allowed": "now allowed",
    "now-blocked": "now blocked",
    "easier": "easier for the actor",
    "harder": "harder for the actor",
    "other-scale": "another scale",
}


def action_label(ruleset: str, action: str) -> str:
    """The action's English label in ``ruleset``'s data, else its id."""
    data = getattr(RULESETS.get(ruleset), "data", None)
    rules = getattr(data, "actions", {}).get(action)
    label = getattr(rules, "label", None)
    return label.get("en") if label is not None else action


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


def _side(allowed: bool | None, modifier: int | None) -> str:
    if allowed is None:
        return "—"
    if not allowed:
        return "not allowed"
    return "allowed, " + ("0" if not modifier else f"{modifier:+d}")


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


def _summary_lines(summary: Summary, session: LoggedSession, judge: Rejudge) -> list[str]:
    if judge.ruleset is None:
        target = f"edition {judge.edition}"
    else:
        target = f"{judge.ruleset}, edition {judge.edition or 'current'}"
    lines = [
        f"Session {session.name or session.id}: {summary.total} rulings re-judged under {target}: "
        f"{summary.changed} changed, {summary.same} unchanged, {summary.untranslatable} cannot carry over."
    ]
    for direction, count in summary.directions.most_common():
        lines.append(f"  {count} {_DIRECTION_WORDS.get(direction, direction)}")
    if summary.causes:
        lines.append("Rules that made the difference (+ cited now, − no longer cited):")
        lines.extend(f"  {count} × {cause}" for cause, count in summary.causes.most_common())
    return lines


def _who(outcome: Outcome) -> tuple[str, str]:
    r = outcome.record
    return r.actor.name or r.actor.id, (r.target.name or r.target.id) if r.target else ""


def _after_text(outcome: Outcome) -> str:
    if outcome.after is None:
        return "cannot carry over: " + (outcome.why or "")
    return _side(outcome.after.get("allowed"), outcome.after.get("modifier"))


async def table_chunks(
    outcomes: AsyncIterable[Outcome], *, session: LoggedSession, judge: Rejudge, keep_same: bool, summary_to: TextIO
) -> AsyncIterator[str]:
    """For a terminal: a block per listed ruling (who, what, before → after, both sides' reasons)."""
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        r = outcome.record
        actor, target = _who(outcome)
        after = outcome.after or {}
        head = f"{r.time}  {actor}" + (f" → {target}" if target else "") + f"  {action_label(r.ruleset, r.action)}"
        lines = [head, f"  before: {_side(r.allowed, r.modifier)}  →  after: {_after_text(outcome)}"]
        if outcome.direction:
            lines[-1] += f"  ({_DIRECTION_WORDS[outcome.direction]})"
        lines.append("  was: " + ("; ".join(reasons_of(r.modifiers, r.notes, r.allowed)) or "—"))
        if outcome.after is not None:
            now = reasons_of(after.get("modifiers", []), after.get("notes", []), bool(after.get("allowed")))
            lines.append("  now: " + ("; ".join(now) or "—"))
        yield "\n".join(lines) + "\n\n"
    yield "\n".join(_summary_lines(summary, session, judge)) + "\n"


async def jsonl_chunks(
    outcomes: AsyncIterable[Outcome], *, session: LoggedSession, judge: Rejudge, keep_same: bool, summary_to: TextIO
) -> AsyncIterator[str]:
    """One JSON object per listed ruling (:func:`outcome_wire`), then ``{"summary": …}``."""
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
    outcomes: AsyncIterable[Outcome], *, session: LoggedSession, judge: Rejudge, keep_same: bool, summary_to: TextIO
) -> AsyncIterator[str]:
    """CSV (cells neutralised as the log export's are); the summary goes to ``summary_to``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def take(row: list[str] | tuple[str, ...]) -> str:
        writer.writerow([csv_safe(cell) for cell in row])
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield take(CSV_COLUMNS)
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
    summary_to.write("\n".join(_summary_lines(summary, session, judge)) + "\n")


async def markdown_chunks(
    outcomes: AsyncIterable[Outcome], *, session: LoggedSession, judge: Rejudge, keep_same: bool, summary_to: TextIO
) -> AsyncIterator[str]:
    """A Markdown table of the listed rulings, then the summary as a list."""
    yield "| Time | Actor | Target | Action | Before | After | Was | Now |\n|---|---|---|---|---|---|---|---|\n"
    summary = Summary()
    async for outcome in _listed(outcomes, summary, keep_same):
        wire = outcome_wire(outcome, judge)
        actor, target = _who(outcome)
        after = wire["after"] or {}
        cells = [
            outcome.record.time,
            actor,
            target,
            action_label(outcome.record.ruleset, outcome.record.action),
            _side(outcome.record.allowed, outcome.record.modifier),
            _after_text(outcome),
            "; ".join(wire["before"]["reasons"]),
            "; ".join(after.get("reasons", [])),
        ]
        yield "| " + " | ".join(markdown_cell(c) for c in cells) + " |\n"
    yield "\n" + "\n".join("- " + line.strip() for line in _summary_lines(summary, session, judge)) + "\n"


#: Writer of each ``--format``.
REJUDGE_FORMATS: Final[dict[str, Writer]] = {
    "table": table_chunks,
    "jsonl": jsonl_chunks,
    "csv": csv_chunks,
    "md": markdown_chunks,
}
