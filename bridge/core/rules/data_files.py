"""Reading rules data: TOML files under ``data/``, validated at load, frozen afterwards.

Every ruleset's data file is checked against the contract vocabulary (``data/vocabulary.toml``):
it may name only its own zone types, traits and actions, and every passage it cites must exist.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from functools import cache, lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from .base import LocalText, RulingError, Situation

__all__ = [
    "DataModel",
    "DataRuleset",
    "FormerCitation",
    "OptionRules",
    "Passage",
    "Text",
    "Vocabulary",
    "VocabularyRow",
    "check_vocabulary",
    "citation_text",
    "cite",
    "load_toml",
    "vocabulary",
]


class RulesetData(Protocol):
    """What :class:`DataRuleset` reads of a ruleset's data."""

    @property
    def id(self) -> str: ...

    @property
    def editions(self) -> Any: ...

    @property
    def actions(self) -> Mapping[str, Any]: ...

    @property
    def zones(self) -> Mapping[str, Any]: ...


D = TypeVar("D", bound=RulesetData)


class DataModel(BaseModel):
    """Base of every rules-data model: unknown keys are errors, everything is immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(DataModel):
    """A text in English and Spanish."""

    en: str
    es: str

    def local(self) -> LocalText:
        return LocalText(self.en, self.es)

    def get(self, locale: str, /, **values: Any) -> str:
        """As ``self.local().get(locale, **values)``."""
        text = self.es if locale == "es" else self.en
        return text.format(**values) if values else text


class OptionRules(DataModel):
    """One ``adjudicate.options`` key a ruleset reads (``[options.<key>]``): how people read it, and the
    passages it stands on. A key a ruleset does not declare is noted on its rulings, never read."""

    label: Text
    cite: tuple[str, ...] = ()


_SEED_FILE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt|rules-notes\.md")


def citation_text(title: str, source: str, quote: str) -> str:
    """``Title: quote``, or ``Title (URL): quote`` for a page on the web."""
    where = f" ({source})" if source.startswith(("http://", "https://")) else ""
    return f"{title}{where}: {quote}"


class FormerCitation(DataModel):
    """How a passage was cited before its title, quote or source was corrected (each left out: as today):
    rulings logged then still carry it, and read as the passage's citation today (``labels.readable_citation``)."""

    title: str | None = None
    quote: str | None = None
    source: str | None = None


class Passage(DataModel):
    """A quoted piece of a seed (or of an outside source named in rules-notes) a rule stands on.

    ``source`` is provenance — the seed's file name, ``rules-notes.md`` or the page's URL — and is never
    shown; people read ``title``, the source as its readers know it (rules-notes, "How sources are
    named"). A URL is shown beside its title so the page can be found. ``quote`` is the source's own words
    (whitespace aside), any text left out marked with "…" (``tests/core/rules/test_sources.py``).
    """

    source: str
    title: str
    quote: str
    editions: tuple[str, ...]
    lang: Literal["en", "es"] = "en"
    #: The key of the passage this one translates (004 is 001 in Spanish): cited instead of it.
    translates: str | None = None
    #: Earlier citations of this passage, before a correction; never cited now.
    formerly: tuple[FormerCitation, ...] = ()

    @model_validator(mode="after")
    def _title_names_no_file(self) -> Passage:
        if _SEED_FILE.search(self.title) or not self.title.strip():
            raise ValueError(f"a passage's title is what people read, not a file name: {self.title!r}")
        return self

    def citation(self) -> str:
        """``Title: quote``, or ``Title (URL): quote`` for a page on the web."""
        return citation_text(self.title, self.source, self.quote)


class VocabularyRow(DataModel):
    title: str
    zones: tuple[str, ...]
    traits: tuple[str, ...]
    actions: tuple[str, ...]
    environment: tuple[str, ...]
    #: The ``adjudicate.options`` keys the ruleset reads (its data's ``[options.*]``, checked equal at load).
    options: tuple[str, ...]
    #: The sign convention of ``modifier``: which way makes the roll harder.
    harder: Literal["negative", "positive"]

    def knows_trait(self, trait: str) -> bool:
        return _knows_trait(self.traits, trait)


@lru_cache(maxsize=4096)
def _knows_trait(traits: tuple[str, ...], trait: str) -> bool:
    """Whether ``trait`` is one of ``traits`` (``name-N``: any ``name-<digits>``); kept, a ruling asks it of
    every trait of both tokens."""
    for known in traits:
        if known.endswith("-N"):
            if re.fullmatch(re.escape(known[:-1]) + r"\d+", trait):
                return True
        elif known == trait:
            return True
    return False


class Vocabulary(DataModel):
    rulesets: dict[str, VocabularyRow]
    _trait_owners: dict[str, tuple[str, ...]] = PrivateAttr(default_factory=dict)

    def owner_of_zone(self, zone: str) -> tuple[str, ...]:
        return tuple(rid for rid, row in self.rulesets.items() if zone in row.zones)

    def owner_of_environment(self, key: str) -> tuple[str, ...]:
        return tuple(rid for rid, row in self.rulesets.items() if key in row.environment)

    def owner_of_option(self, key: str) -> tuple[str, ...]:
        return tuple(rid for rid, row in self.rulesets.items() if key in row.options)

    def owner_of_trait(self, trait: str) -> tuple[str, ...]:
        owners = self._trait_owners.get(trait)
        if owners is None:  # every scene check asks this of every token's traits: match patterns once
            owners = tuple(rid for rid, row in self.rulesets.items() if row.knows_trait(trait))
            if len(self._trait_owners) < 4096:
                self._trait_owners[trait] = owners
        return owners


def check_vocabulary(
    ruleset_id: str,
    *,
    zones: Iterable[str],
    actions: Iterable[str],
    traits: Iterable[str],
    options: Iterable[str],
    editions: Sequence[str],
) -> None:
    """Raise ``ValueError`` unless a ruleset's data names exactly its row of the contract vocabulary (zone
    types, actions, traits, the ``adjudicate.options`` keys it reads) and ends its editions with ``current``."""
    row = vocabulary().rulesets.get(ruleset_id)
    if row is None:
        raise ValueError(f"ruleset {ruleset_id!r} is not in the contract vocabulary")
    for kind, names, allowed in (
        ("zone type", zones, row.zones),
        ("action", actions, row.actions),
        ("trait", traits, row.traits),
        ("option", options, row.options),
    ):
        if set(names) != set(allowed):
            raise ValueError(f"{kind}s {sorted(names)} differ from the vocabulary's {sorted(allowed)}")
    if list(editions)[-1:] != ["current"]:
        raise ValueError("the last edition must be 'current'")


def load_toml(name: str) -> dict[str, Any]:
    """The parsed contents of ``data/<name>.toml``, shipped with the package."""
    text = resources.files(__package__).joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def vocabulary() -> Vocabulary:
    """The contract's vocabulary, loaded once."""
    return Vocabulary.model_validate(load_toml("vocabulary"))


def cite(passages: Mapping[str, Passage], keys: tuple[str, ...], *, edition: str, locale: str) -> tuple[str, ...]:
    """Citations for ``keys``: the passages that hold in ``edition``, in ``locale`` where one exists.

    A passage in the scene's locale replaces the English one it translates; an English passage with
    no translation among them (002's dated texts, rules-notes, outside sources) is cited as it is.
    """
    memo_key = (id(passages), keys, edition, locale)
    found = _CITED.get(memo_key)
    if found is not None and found[0] is passages:
        return found[1]
    cited = _cite(passages, keys, edition=edition, locale=locale)
    if len(_CITED) >= 4096:
        _CITED.clear()
    _CITED[memo_key] = (passages, cited)
    return cited


#: :func:`cite`'s answers, per passages mapping (by identity, held with it), keys, edition and locale.
_CITED: dict[tuple[int, tuple[str, ...], str, str], tuple[Mapping[str, Passage], tuple[str, ...]]] = {}


def forget_scene_answers() -> None:
    """Empty the memos filled from scenes' contents (:func:`cite`'s answers, the traits asked of
    :meth:`VocabularyRow.knows_trait`): after a world is dropped, their entries — made while it was
    ruled, scattered over the allocator's pages — would keep those pages from going back to the system."""
    _CITED.clear()
    _knows_trait.cache_clear()


def _cite(passages: Mapping[str, Passage], keys: tuple[str, ...], *, edition: str, locale: str) -> tuple[str, ...]:
    rows = _citation_rows(passages, edition)
    held: dict[str, tuple[str, str | None, str]] = {}
    for key in keys:
        row = rows[key]  # KeyError for a key that names no passage
        if row is not None:
            held[key] = row
    translated = {translates for lang, translates, _ in held.values() if lang == locale and translates}
    return tuple(
        text for key, (lang, _, text) in held.items() if lang == locale or (lang == "en" and key not in translated)
    )


#: Per passages mapping (by identity, held with it) and edition: each passage's (lang, translates,
#: citation text), or ``None`` when it does not hold in the edition. Rules data is immutable.
_CITATION_ROWS: dict[tuple[int, str], tuple[Mapping[str, Passage], dict[str, tuple[str, str | None, str] | None]]] = {}


def _citation_rows(passages: Mapping[str, Passage], edition: str) -> dict[str, tuple[str, str | None, str] | None]:
    found = _CITATION_ROWS.get((id(passages), edition))
    if found is not None and found[0] is passages:
        return found[1]
    rows: dict[str, tuple[str, str | None, str] | None] = {
        key: (p.lang, p.translates, p.citation()) if edition in p.editions else None for key, p in passages.items()
    }
    if len(_CITATION_ROWS) >= 64:  # rulesets × editions: a handful; more only from test data
        _CITATION_ROWS.clear()
    _CITATION_ROWS[(id(passages), edition)] = (passages, rows)
    return rows


class _HasPassages(DataModel):
    """Mixin check: every ``cite`` key in the data names a passage."""

    passages: Mapping[str, Passage] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _cited_passages_exist(self) -> _HasPassages:
        missing = sorted(key for key in _cite_keys(self.model_dump(exclude={"passages"})) if key not in self.passages)
        if missing:
            raise ValueError(f"cite names unknown passages: {', '.join(missing)}")
        for key, passage in self.passages.items():
            original = self.passages.get(passage.translates) if passage.translates else None
            if passage.translates and (original is None or original.lang == passage.lang):
                raise ValueError(f"passage {key!r} translates {passage.translates!r}, no passage in another language")
        return self


def _cite_keys(node: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key.startswith("cite") and isinstance(value, list | tuple):
                keys.update(str(item) for item in value)
            else:
                keys |= _cite_keys(value)
    elif isinstance(node, list | tuple):
        for item in node:
            keys |= _cite_keys(item)
    return keys


PassageMap = Mapping[str, Passage]

#: Frozen empty mapping, for defaults.
EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


class DataRuleset(Generic[D]):
    """The parts of the :class:`~bridge.core.rules.base.Ruleset` interface every ruleset reads straight
    from its data: id, editions, actions, zone types, traits (from the contract vocabulary), and the
    look-up of the requested action."""

    #: Whether a ruling reads distances or lights (see ``Ruleset.reads_positions``); rulesets that do say so.
    reads_positions: bool = False

    def __init__(self, data: D) -> None:
        self.data = data
        self._row = vocabulary().rulesets[data.id]
        # The data is frozen: made once (every adjudicate and scene check reads them).
        self._editions = tuple(data.editions)
        self._actions = frozenset(data.actions)
        self._zone_types = frozenset(data.zones)

    @property
    def id(self) -> str:
        return self.data.id

    @property
    def editions(self) -> tuple[str, ...]:
        return self._editions

    @property
    def actions(self) -> frozenset[str]:
        return self._actions

    @property
    def zone_types(self) -> frozenset[str]:
        return self._zone_types

    def knows_trait(self, trait: str) -> bool:
        return self._row.knows_trait(trait)

    def _action(self, situation: Situation, *, needs_target: bool = True) -> Any:
        """The data of the requested action; :class:`RulingError` naming the field when it cannot be ruled."""
        action = self.data.actions.get(situation.action)
        if action is None:
            known = ", ".join(sorted(self.data.actions))
            raise RulingError(f"unknown action {situation.action!r} for {self.id}; known: {known}", field="action")
        if needs_target and situation.target is None:
            raise RulingError(f"{situation.action!r} needs a target", field="target")
        return action
