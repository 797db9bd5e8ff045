"""Every passage the rules data quotes is its source's own words, under the title rules-notes gives that source.

The sources are vendored in ``tests/sources/`` (byte copies of the shared seeds and ``rules-notes.md``, checked
equal to the shared folder when one is found beside the checkout or above it), so this runs in any clone.

Where a passage's text is looked for:

- ``source`` a seed file name: in that seed.
- ``source = "rules-notes.md"``: in the notes.
- ``source`` a URL: the pages are not kept here. The notes state each fact from outside the seeds in their own
  words with its URL beside it, and that statement is what such a passage quotes; so it is looked for in the
  notes, within the list item or paragraph that names the URL (and nowhere else).

How it is compared: runs of whitespace and line breaks count as one space, and a Markdown list bullet ("- "
opening a line; 001 and 004 write their rules as such lists too) is not text. Nothing else is forgiven — "−",
"→", "×", backticks and quotation marks are as the source writes them. A quote may leave text out only where
it says so with "…": each piece between marks must be found, in that order.

Titles (rules-notes, "How sources are named"): 001 and 004 by their book; 002 by the heading the quoted lines
stand under — "Original", a dated update, or neither (the wiki page's own text, the CodeOne line included:
"Infinity Wiki — Visibility Conditions"); 003 by its book; 000 as "Traveller tactical visibility rules (<its
Updated: date>)" followed by " — <the section>" for text under a section ("Night: …"), and nothing more for its
untitled opening text; the notes as "Sightline rules notes — <subject>"; a URL as "<site> — <page>", the page
being the wiki page the URL names.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bridge.core.rules.data_files import load_toml

SOURCES = Path(__file__).resolve().parents[2] / "sources"
NOTES = "rules-notes.md"
_BULLET = re.compile(r"^\s*- ")
_URL = re.compile(r"https?://[^\s,)]+")

#: rules-notes, "How sources are named".
INFINITY_001 = "Infinity N4 Core Rules — Visibility Conditions"
INFINITY_004 = "Infinity N4 Reglamento — Condiciones de Visibilidad"
WIKI_002 = "Infinity Wiki — Visibility Conditions"
DATED_002 = {
    "Original": "Infinity N4 Core Rules, original text — Visibility Conditions",
    "Update 1.2, Jan 2022": "Infinity N4 rules update 1.2 (Jan 2022) — Visibility Conditions",
    "Update 1.3, Nov 2022": "Infinity N4 rules update 1.3 (Nov 2022) — Visibility Conditions",
    "Update PDF 2.1, July 2023": "Infinity N4 rules, PDF 2.1 (July 2023) — Visibility Conditions",
}
GURPS_003 = "GURPS Basic Set (4th edition) — Visibility"
NOTES_TITLE = "Sightline rules notes — "
#: Each web site the notes cite, as its readers know it; True where its URLs name a wiki page.
SITES = {
    "infinitythewiki.com": ("Infinity Wiki", True),
    "wiki.infinitythegame.com": ("Infinity Wiki", True),
    "gurps.ilmatar.net": ("GURPS Wiki", True),
    "twilight2000.one": ("Twilight: 2000 (TNE)", False),
}
_SECTION_000 = re.compile(r"([A-Z][\w -]{0,40}?):\s")


@dataclass(frozen=True)
class Text:
    """A source's text as compared: bullets gone, whitespace runs one space; ``starts[i]`` is where its
    line ``i`` begins in ``flat`` (a blank line begins where the next does)."""

    lines: tuple[str, ...]
    flat: str
    starts: tuple[int, ...]

    def line_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1


def flatten(lines: list[str] | tuple[str, ...]) -> Text:
    """``lines`` as compared, with where each line begins."""
    parts: list[str] = []
    starts: list[int] = []
    size = 0
    for line in lines:
        starts.append(size + (1 if parts else 0))
        words = " ".join(_BULLET.sub("", line).split())
        if words:
            size += len(words) + (1 if parts else 0)
            parts.append(words)
    return Text(tuple(lines), " ".join(parts), tuple(starts))


@cache
def source_text(name: str) -> Text:
    return flatten((SOURCES / name).read_text(encoding="utf-8").split("\n"))


def notes_items() -> list[list[str]]:
    """rules-notes split into its list items and paragraphs (a heading is one of its own)."""
    items: list[list[str]] = []
    for line in (SOURCES / NOTES).read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            items.append([])
        elif line.startswith(("- ", "#", "|")) or not items or not items[-1]:
            items.append([line])
        else:
            items[-1].append(line)
    return [item for item in items if item]


def urls(text: str) -> set[str]:
    """The URLs ``text`` names (a full stop after one ends the sentence, not the URL)."""
    return {url.rstrip(".") for url in _URL.findall(text)}


def find(quote: str, text: Text) -> tuple[tuple[int, int] | None, str | None]:
    """Where ``quote`` lies in ``text`` (from the start of its first piece to the end of its last), or the first
    piece of it (split on "…") that is not there, in order."""
    pieces = [" ".join(piece.split()) for piece in quote.split("…")]
    pieces = [piece for piece in pieces if piece]
    if not pieces:
        return None, quote
    at, first = 0, None
    for piece in pieces:
        found = text.flat.find(piece, at)
        if found < 0:
            return None, piece
        first = found if first is None else first
        at = found + len(piece)
    assert first is not None
    return (first, at), None


def where(passage: dict[str, Any]) -> tuple[str, list[Text]]:
    """The file a passage's quote is looked for in, and the texts within it that may hold it."""
    source = passage["source"]
    if source.startswith(("http://", "https://")):
        items = [flatten(item) for item in notes_items() if source in urls(" ".join(item))]
        return NOTES, items
    return source, [source_text(source)]


def quote_problem(passage: dict[str, Any]) -> str | None:
    """Why ``passage``'s quote is not its source's words (``None`` when it is)."""
    name, texts = where(passage)
    if not texts:
        return f"{NOTES} names {passage['source']} nowhere"
    missing = None
    for text in texts:
        span, missing = find(passage["quote"], text)
        if span is not None:
            return None
    return f"not in {name}, word for word: {missing!r}"


def titles_002(lines: tuple[str, ...]) -> list[str]:
    """Each line's title: a dated heading ("Original", "Update …") rules the lines after it until "Show original
    text." or the next section heading (a line alone between blank lines, with no closing punctuation)."""
    titles, current = [], WIKI_002
    for i, line in enumerate(lines):
        stripped = line.strip()
        alone = (i == 0 or not lines[i - 1].strip()) and (i + 1 == len(lines) or not lines[i + 1].strip())
        if stripped in DATED_002:
            current = DATED_002[stripped]
        elif stripped == "Show original text." or (alone and stripped and stripped[-1].isalnum()):
            current = WIKI_002
        titles.append(current)
    return titles


def titles_000(lines: tuple[str, ...]) -> list[str]:
    """Each line's title: the document's, with its date, then " — " and the section ("Night: …") it lies in."""
    date = re.match(r"Updated:\s+(\S+)", lines[0])
    assert date, "000 opens with its 'Updated:' date"
    base = f"Traveller tactical visibility rules ({date.group(1)})"
    titles, current = [base], base
    for line in lines[1:]:
        section = _SECTION_000.match(line)
        if section:
            current = f"{base} — {section.group(1)}"
        titles.append(current)
    return titles


def page_title(url: str) -> str | None:
    """The site and wiki page a URL names ("Infinity Wiki — Multispectral Visor"); ``None`` for a site that is
    not a wiki (any page title then follows the site's name)."""
    parts = urlsplit(url)
    site, wiki = SITES[parts.hostname or ""]
    if not wiki:
        return None
    page = parse_qs(parts.query).get("title", [parts.path.rstrip("/").rsplit("/", 1)[-1]])[0]
    return f"{site} — {page.replace('_', ' ')}"


def title_problem(passage: dict[str, Any]) -> str | None:
    """Why ``passage``'s title is not the one rules-notes gives its source (``None`` when it is)."""
    source, title = passage["source"], passage["title"]
    if source.startswith(("http://", "https://")):
        host = urlsplit(source).hostname or ""
        if host not in SITES:
            return f"no site name for {host}: add it to SITES"
        site, expected = SITES[host][0], page_title(source)
        ok = title == expected if expected else title.startswith(f"{site} — ") and bool(title[len(site) + 3 :].strip())
        return None if ok else f"{title!r} is not '{expected or site + ' — <page>'}'"
    if source == NOTES:
        ok = title.startswith(NOTES_TITLE) and bool(title[len(NOTES_TITLE) :].strip())
        return None if ok else f"{title!r} is not '{NOTES_TITLE}<subject>'"
    fixed = {"001": INFINITY_001, "004": INFINITY_004, "003": GURPS_003}.get(source[:3])
    if fixed is not None:
        return None if title == fixed else f"{title!r} is not {fixed!r}"
    text = source_text(source)
    span, _ = find(passage["quote"], text)
    if span is None:
        return "the quote is not in its source (see the quote's test)"
    titles = {"000": titles_000, "002": titles_002}[source[:3]](text.lines)
    spanned = set(titles[text.line_at(span[0]) : text.line_at(span[1] - 1) + 1])
    if len(spanned) != 1:
        return f"the quote runs over {sorted(spanned)}"
    (expected,) = spanned
    return None if title == expected else f"{title!r} is not {expected!r}"


def rulesets() -> list[str]:
    data = resources.files("bridge.core.rules").joinpath("data")
    names = sorted(entry.name.removesuffix(".toml") for entry in data.iterdir() if entry.name.endswith(".toml"))
    return [name for name in names if "passages" in load_toml(name)]


PASSAGES = [(name, key, passage) for name in rulesets() for key, passage in load_toml(name)["passages"].items()]
IDS = [f"{name}:{key}" for name, key, _ in PASSAGES]


@pytest.mark.parametrize(("name", "key", "passage"), PASSAGES, ids=IDS)
def test_each_quote_is_its_sources_own_words(name: str, key: str, passage: dict[str, Any]) -> None:
    """A passage's quote is in its source word for word (whitespace aside), any left-out text marked with "…"."""
    assert quote_problem(passage) is None, f"{name} {key}: {quote_problem(passage)}"


@pytest.mark.parametrize(("name", "key", "passage"), PASSAGES, ids=IDS)
def test_each_title_is_the_one_rules_notes_gives_its_source(name: str, key: str, passage: dict[str, Any]) -> None:
    """A passage's title is its source's as rules-notes "How sources are named" gives it; Spanish only for 004."""
    assert title_problem(passage) is None, f"{name} {key}: {title_problem(passage)}"
    assert (passage.get("lang", "en") == "es") == passage["source"].startswith("004_")


def test_every_ruleset_with_passages_is_checked() -> None:
    """The passages checked are those of every ruleset data file that has any (N4, GURPS, Traveller)."""
    assert rulesets() == ["gurps-4e", "infinity-n4", "traveller"]
    assert len(PASSAGES) > 60


def test_the_check_sees_a_changed_character_a_silent_cut_and_a_wrong_title() -> None:
    """Wordings the rules data once had are refused: "-" for "−", a cut without "…", an undated 002 line as "Original".

    rules-notes: 'Darkness is the light where the target stands: a `darkness` zone containing the target overrides
    the scene's `darkness` (a lit room in a dark scene); several zones: the worst.'
    """
    notes = {"source": NOTES, "title": NOTES_TITLE + "Darkness zones"}
    marked = "a `darkness` zone containing the target overrides the scene's `darkness` … several zones: the worst."
    assert quote_problem({**notes, "quote": marked}) is None
    assert quote_problem({**notes, "quote": marked.replace(" …", " (a lit room in a dark scene);")}) is None
    assert quote_problem({**notes, "quote": marked.replace(" …", ";")}) is not None
    penalties = "Several vision penalties do not add up: take the worst single one, never beyond −10."
    assert quote_problem({**notes, "quote": penalties}) is None
    assert quote_problem({**notes, "quote": penalties.replace("−", "-")}) is not None
    url = "https://infinitythewiki.com/Sixth_Sense"
    assert quote_problem({"source": url, "quote": "Smoke ammunition makes a Zero zone"}) is not None  # not its item
    seed_002, seed_000 = "002_38ee4d299a054ffc.txt", "000_3f2752d40c93425c.txt"
    low = {"source": seed_002, "quote": "Low Visibility Zones apply a MOD of -3."}
    assert title_problem({**low, "title": WIKI_002}) is None
    assert title_problem({**low, "title": DATED_002["Original"]}) is not None
    original = {"source": seed_002, "quote": "Troopers cannot draw LoF through a Zero Visibility Zone."}
    assert title_problem({**original, "title": DATED_002["Original"]}) is None
    opening = {"source": seed_000, "quote": "unaided eyes are affected by all of them."}
    assert title_problem({**opening, "title": "Traveller tactical visibility rules (2011-03-17)"}) is None
    assert title_problem({**opening, "title": "Traveller tactical visibility rules (2011-03-17) — Observation"})


def shared_folder() -> Path | None:
    """``shared/`` (with ``seeds/`` and ``rules-notes.md``) in the checkout's folder or one above it."""
    for folder in Path(__file__).resolve().parents:
        candidate = folder / "shared"
        if (candidate / "seeds").is_dir() and (candidate / NOTES).is_file():
            return candidate
    return None


def test_the_vendored_sources_are_the_shared_ones() -> None:
    """tests/sources holds byte copies of every shared seed and of rules-notes.md, and nothing else but its README."""
    shared = shared_folder()
    if shared is None:
        pytest.skip("no shared/ folder (seeds/, rules-notes.md) beside the checkout or above it to compare with")
    originals = {path.name: path for path in (shared / "seeds").glob("*.txt")} | {NOTES: shared / NOTES}
    assert sorted(path.name for path in SOURCES.iterdir()) == sorted([*originals, "README.md"])
    for name, path in originals.items():
        assert (SOURCES / name).read_bytes() == path.read_bytes(), f"tests/sources/{name} differs from {path}"
