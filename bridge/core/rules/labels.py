"""What a person reads instead of an id: the localised label of an action, zone type, trait, crossing kind
or Traveller difficulty, from the rulesets' own data.

Ids stay on the wire and in the log's records (they are the contract); every text made for people —
the log's pages, the Markdown export, the demo — asks here. An id no ruleset labels (a foreign or future
one) is shown as it is rather than hidden.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Final, Literal

from .data_files import Text, citation_text

__all__ = ["KINDS", "label", "readable_citation"]

Kind = Literal["action", "zone", "trait", "kind", "difficulty", "ruleset", "edition"]

#: How a line meets a zone (contract: from, into, within, through), as a reason reads it.
KINDS: Final = {
    "from": Text(en="out of", es="desde"),
    "into": Text(en="into", es="hacia el interior de"),
    "within": Text(en="within", es="dentro de"),
    "through": Text(en="through", es="a través de"),
}

_RULESET_TITLES: Final = {
    "infinity-n4": Text(en="Infinity N4", es="Infinity N4"),
    "infinity-codeone": Text(en="Infinity CodeOne", es="Infinity CodeOne"),
    "gurps-4e": Text(en="GURPS 4e", es="GURPS 4.ª ed."),
    "traveller": Text(en="Traveller", es="Traveller"),
}

#: An edition as its source heads it: 002 heads each dated text "Update 1.2, Jan 2022" and the first
#: one "Original"; ``current`` is whatever is newest (contract, "Rules").
_EDITIONS: Final = {
    "current": Text(en="current rules", es="reglamento vigente"),
    "original": Text(en="original text", es="texto original"),
}
_UPDATE: Final = Text(en="Update {n}", es="Actualización {n}")

_NUMBERED = re.compile(r"(.+-)(\d+)")


def label(ruleset: str | None, kind: Kind, value: str, locale: str) -> str:
    """The label of ``value`` (an id of ``kind``) in ``locale``: from ``ruleset``'s data first, then from
    any ruleset that knows it (a record of another ruleset, a trait of a foreign token); else the id."""
    if kind == "kind":
        return KINDS[value].get(locale) if value in KINDS else value
    if kind == "ruleset":
        return _RULESET_TITLES[value].get(locale) if value in _RULESET_TITLES else value
    if kind == "edition":
        if value in _EDITIONS:
            return _EDITIONS[value].get(locale)
        return _UPDATE.get(locale, n=value) if re.fullmatch(r"\d+(\.\d+)*", value) else value
    from . import RULESETS  # the registry imports this module's siblings: look it up when asked

    order = [ruleset] if ruleset is not None and ruleset in RULESETS else []
    order += [rid for rid in RULESETS if rid != ruleset]
    for rid in order:
        found = _from_data(getattr(RULESETS[rid], "data", None), kind, value, locale)
        if found is not None:
            return found
    return value


def _from_data(data: Any, kind: Kind, value: str, locale: str) -> str | None:
    if data is None:
        return None
    if kind == "difficulty":
        ladder = getattr(data, "ladder", None)
        for level in getattr(ladder, "levels", ()):
            if level.id == value:
                return str(level.label.get(locale))
        return None
    tables = {"action": ("actions",), "zone": ("zones",), "trait": ("traits", "devices")}[kind]
    for table in tables:
        entries = getattr(data, table, None) or {}
        if value in entries:
            return _text(entries[value], locale)
        numbered = _NUMBERED.fullmatch(value)
        if kind == "trait" and numbered and f"{numbered.group(1)}N" in entries:  # night-vision-3 → Night Vision 3
            return _text(entries[f"{numbered.group(1)}N"], locale, n=numbered.group(2))
    return None


def _text(entry: Any, locale: str, **values: Any) -> str | None:
    text = getattr(entry, "label", None)
    return str(text.get(locale, **values)) if text is not None else None


#: The words 002's dated texts began with before their titles said the date (records logged before).
_DATED_PREFIXES: Final = {
    "Infinity N4 Core Rules, original text — Visibility Conditions": "Original: ",
    "Infinity N4 rules update 1.2 (Jan 2022) — Visibility Conditions": "Update 1.2, Jan 2022: ",
    "Infinity N4 rules update 1.3 (Nov 2022) — Visibility Conditions": "Update 1.3, Nov 2022: ",
    "Infinity N4 rules, PDF 2.1 (July 2023) — Visibility Conditions": "Update PDF 2.1, July 2023: ",
}


@cache
def _legacy_citations() -> dict[str, str]:
    from . import RULESETS

    found: dict[str, str] = {}
    for ruleset in RULESETS.values():
        for passage in getattr(getattr(ruleset, "data", None), "passages", {}).values():
            current = passage.citation()
            wordings = [(passage.title, passage.source, passage.quote)]
            wordings += [
                (old.title or passage.title, old.source or passage.source, old.quote or passage.quote)
                for old in passage.formerly
            ]
            for title, source, quote in wordings:
                found[f"{source}: {quote}"] = current
                prefix = _DATED_PREFIXES.get(title)
                if prefix:
                    found[f"{source}: {prefix}{quote}"] = current
                found[citation_text(title, source, quote)] = current
    return found


def readable_citation(text: str) -> str:
    """A citation as people read it now: one logged before sources were named by title
    (``001_….txt: quote``) becomes ``Title: quote``, and one logged before a passage's title, quote or
    source was corrected (its ``formerly``) becomes the passage's citation today; any other text is
    returned as it is."""
    return _legacy_citations().get(text, text)
