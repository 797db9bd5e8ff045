"""Notes every ruleset adds the same way: vocabulary of another ruleset met on a ruling, and request options
the scene's ruleset does not read."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from ..sight import Crossing
from .base import REQUEST_FIELDS, Situation
from .data_files import vocabulary
from .labels import label

__all__ = ["OPTION_NOTES", "foreign_vocabulary_notes", "option_notes", "region_name", "regions_by_id", "tokens_by_id"]

TextLookup = Callable[..., str]


def foreign_vocabulary_notes(
    situation: Situation, text: TextLookup, *, crossings: Iterable[Crossing] = ()
) -> tuple[str, ...]:
    """One note per region whose zone type, and per token trait, belongs to another ruleset and that this ruling
    touches (notes of the same text given once), then :func:`option_notes` — never a silent zero.

    The zones touched are those the situation's sight lines cross and ``crossings`` (a placement's:
    the zones the actor stands in). ``text(key, locale, **values)`` must know ``foreign_zone``,
    ``foreign_trait``, ``foreign_option``, ``unknown_option`` and ``more_options``.
    """
    ruleset = situation.scene.rules.ruleset
    row = vocabulary().rulesets[ruleset]
    locale = situation.locale
    notes: dict[str, None] = {}
    seen_regions: set[str] = set()
    for crossing in chain((c for evidence in situation.lines for c in evidence.crossings), crossings):
        if crossing.zone not in row.zones and crossing.region not in seen_regions:
            seen_regions.add(crossing.region)
            values: dict[str, Any] = {
                "region": region_name(situation.scene, crossing.region),
                "zone": label(None, "zone", crossing.zone, locale),
                "ruleset": label(ruleset, "ruleset", ruleset, locale),
            }
            notes[text("foreign_zone", locale, **values)] = None
    for token in (situation.actor, situation.target):
        if token is None:
            continue
        for trait in token.traits:
            if not row.knows_trait(trait):
                values = {
                    "token": token.name or token.id,
                    "trait": label(None, "trait", trait, locale),
                    "ruleset": label(ruleset, "ruleset", ruleset, locale),
                }
                notes[text("foreign_trait", locale, **values)] = None
    for note in option_notes(situation, text):
        notes[note] = None
    return tuple(notes)


def option_notes(situation: Situation, text: TextLookup) -> tuple[str, ...]:
    """One note per ``options`` key the scene's ruleset does not read (its vocabulary row, which its data's
    ``[options.*]`` matches), in key order: the key as given, the ruleset's title and, when other rulesets
    read the key, theirs (``foreign_option``), else ``unknown_option``. Never a refusal: the contract lets a
    client send any ruleset's options to any scene. The request's own fields (``aware``) are no options.

    A request without options of its own gives none, so the whole-scene engine (default options only)
    answers exactly as a ruling made here.
    """
    options = situation.options
    if REQUEST_FIELDS.issuperset(options):
        return ()  # the common question: nothing but ``aware``
    ruleset = situation.scene.rules.ruleset
    vocab = vocabulary()
    read = vocab.rulesets[ruleset].options
    locale = situation.locale
    notes: list[str] = []
    title = label(ruleset, "ruleset", ruleset, locale)
    # In key order: a ruling is kept per set of options whatever their order in the request.
    ignored = sorted(k for k in options if k not in read and k not in REQUEST_FIELDS)
    for key in ignored[:OPTION_NOTES]:
        owners = vocab.owner_of_option(key)
        if owners:
            titles = ", ".join(label(rid, "ruleset", rid, locale) for rid in owners)
            notes.append(text("foreign_option", locale, option=key, owners=titles, ruleset=title))
        else:
            notes.append(text("unknown_option", locale, option=key, ruleset=title))
    if len(ignored) > OPTION_NOTES:  # (a request of thousands of keys is not answered, nor logged, with a note each)
        notes.append(text("more_options", locale, count=len(ignored) - OPTION_NOTES, ruleset=title))
    return tuple(notes)


#: At most this many ignored options are noted one by one; the rest are counted in one note (``more_options``).
OPTION_NOTES = 8


def region_name(scene: Any, region_id: str) -> str:
    """A region as the GM named it in Foundry; its id only when it has no name."""
    region = regions_by_id(scene).get(region_id)
    if region is not None:
        return str(region.name) or region_id
    return region_id


# The scenes' regions and tokens by id, per list (a patch that touches no region keeps the very list): a
# few kept, each with its list, so that an id is never taken for another list's.
_BY_ID: dict[int, tuple[Any, dict[str, Any]]] = {}
_BY_ID_LIMIT = 16


def regions_by_id(scene: Any) -> dict[str, Any]:
    """The scene's regions by id (the first of an id, as a scan finds it), made once per regions list."""
    return _by_id(scene.regions)


def tokens_by_id(scene: Any) -> dict[str, Any]:
    """The scene's tokens by id (the first of an id, as a scan finds it), made once per tokens list."""
    return _by_id(scene.tokens)


def forget_lists() -> None:
    """Let go of the scenes' lists held here (after a world is dropped: they would keep its regions and
    tokens alive until other scenes' lists pushed them out)."""
    _BY_ID.clear()


def _by_id(items: Any) -> dict[str, Any]:
    found = _BY_ID.get(id(items))
    if found is not None and found[0] is items:
        return found[1]
    by_id: dict[str, Any] = {}
    for item in items:
        by_id.setdefault(item.id, item)
    if len(_BY_ID) >= _BY_ID_LIMIT:
        _BY_ID.clear()
    _BY_ID[id(items)] = (items, by_id)
    return by_id
