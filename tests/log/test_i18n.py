"""The GM pages' words in English and Spanish, and how a request picks its language."""

from __future__ import annotations

import string
from typing import get_args

import pytest

from bridge.log.i18n import LANGUAGES, TEXTS, pick_language
from bridge.log.rejudge import Direction

#: Words that are the same in both languages.
_SAME_IN_BOTH = {"actor", "mod", "no"}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_english_first_then_spanish_each_with_its_texts() -> None:
    """The pages speak English (first: the fallback) and Spanish, and TEXTS has exactly those two."""
    assert LANGUAGES == ("en", "es")
    assert set(TEXTS) == set(LANGUAGES)
    assert TEXTS["en"]["title"] == "Sightline log" and TEXTS["es"]["title"] == "Registro de Sightline"


def test_both_languages_have_the_same_words_and_none_is_empty() -> None:
    """Every key has a text in both languages, and no text is empty or padded."""
    assert TEXTS["en"].keys() == TEXTS["es"].keys()
    for lang in LANGUAGES:
        for key, text in TEXTS[lang].items():
            assert text and text == text.strip(), (lang, key)


def test_spanish_is_translated_not_copied() -> None:
    """Each Spanish text differs from the English one, save the words that are the same in both."""
    copied = {key for key, text in TEXTS["es"].items() if text == TEXTS["en"][key]}
    assert copied == _SAME_IN_BOTH


def test_the_summary_takes_the_same_counts_in_both_languages() -> None:
    """The re-judge summary names {changed}, {total} and {untranslatable} in both languages and reads right for 1."""
    for lang in LANGUAGES:
        assert _fields(TEXTS[lang]["rejudge_summary"]) == {"changed", "total", "untranslatable"}
    assert TEXTS["en"]["rejudge_summary"].format(changed=1, total=9, untranslatable=1) == (
        "Rulings on this page that change: 1 of 9; that cannot carry over: 1."
    )
    assert TEXTS["es"]["rejudge_summary"].format(changed=1, total=9, untranslatable=1) == (
        "Resoluciones de esta página que cambian: 1 de 9; que no se pueden trasladar: 1."
    )
    others = [key for key in TEXTS["en"] if key != "rejudge_summary" and _fields(TEXTS["en"][key])]
    assert others == []


def test_every_rejudge_direction_has_words_in_both_languages() -> None:
    """Each direction a re-judged ruling can move in has its own label in English and in Spanish."""
    for direction in get_args(Direction):
        assert TEXTS["en"][direction] and TEXTS["es"][direction]
        assert TEXTS["en"][direction] != TEXTS["es"][direction]
    assert TEXTS["es"]["now-blocked"] == "ahora bloqueada" and TEXTS["en"]["easier"] == "easier"


def test_the_texts_cannot_be_changed_by_a_caller() -> None:
    """TEXTS and each language's words are read-only: a page cannot change another's words."""
    with pytest.raises(TypeError):
        TEXTS["en"]["title"] = "changed"  # type: ignore[index]
    with pytest.raises(TypeError):
        TEXTS["fr"] = {}  # type: ignore[index]
    assert TEXTS["en"]["title"] == "Sightline log"


def test_language_from_query_then_accept_language() -> None:
    """?lang wins; otherwise the highest-weighted supported Accept-Language; otherwise English."""
    assert pick_language("es", "en") == "es"
    assert pick_language("fr", "es-MX,es;q=0.9") == "es"
    assert pick_language(None, "fr-FR,fr;q=0.9,es;q=0.5,en;q=0.4") == "es"
    assert pick_language(None, "en-GB,es;q=0.8") == "en"
    assert pick_language(None, "de") == "en"
    assert pick_language(None, None) == "en"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("es,en", "es"),
        ("en,es", "en"),
        ("es;q=0.5,en;q=0.5", "es"),
        ("en;q=0.5,es;q=0.5", "en"),
        ("es;q=0", "en"),
        ("es;q=0,en;q=0", "en"),
        ("es;q=abc", "en"),
        ("es;q=abc,en;q=0.1", "en"),
        ("ES-es", "es"),
        ("  es-AR ;q=0.8 , fr", "es"),
        ("*", "en"),
        ("", "en"),
    ],
)
def test_accept_language_weights_ties_and_bad_weights(header: str, expected: str) -> None:
    """Ties go to the earlier tag; q=0 or an unreadable weight rules a language out; tags match in any case."""
    assert pick_language(None, header) == expected


@pytest.mark.parametrize("query", ["", "fr", "ES", "en-GB"])
def test_a_query_naming_no_language_we_speak_leaves_the_choice_to_the_header(query: str) -> None:
    """?lang= that is empty or names no language we speak (exactly: 'en' or 'es') is ignored, not an error."""
    assert pick_language(query, "es") == "es"
    assert pick_language(query, None) == "en"
