"""bridge.core.rules.labels: what people read instead of an id, in English and Spanish; old citations read as new."""

from __future__ import annotations

import pytest

from bridge.core.rules import RULESETS
from bridge.core.rules.data_files import load_toml, vocabulary
from bridge.core.rules.labels import KINDS, label, readable_citation
from bridge.core.sight import CrossingKind


def test_each_crossing_kind_reads_as_a_reason_says_it_in_both_locales() -> None:
    """The contract's four kinds (from, into, within, through) read as words in en and es; another stays as it is."""
    assert set(KINDS) == {kind.value for kind in CrossingKind}
    shown = {kind: (label(None, "kind", kind, "en"), label(None, "kind", kind, "es")) for kind in KINDS}
    assert shown == {
        "from": ("out of", "desde"),
        "into": ("into", "hacia el interior de"),
        "within": ("within", "dentro de"),
        "through": ("through", "a través de"),
    }
    assert label("infinity-n4", "kind", "around", "es") == "around"


def test_each_ruleset_reads_as_its_players_name_it() -> None:
    """Rulesets read by title ("GURPS 4e", Spanish "GURPS 4.ª ed."), matching the vocabulary's; an unknown id as is."""
    for ruleset_id, row in vocabulary().rulesets.items():
        assert label(None, "ruleset", ruleset_id, "en") == row.title
    assert label(None, "ruleset", "gurps-4e", "es") == "GURPS 4.ª ed."
    assert label("traveller", "ruleset", "infinity-codeone", "es") == "Infinity CodeOne"
    assert label(None, "ruleset", "dnd-5e", "es") == "dnd-5e"


def test_editions_read_as_their_sources_head_them() -> None:
    """An edition is shown as 002 heads its texts ("Update 1.2", "Original"), never as the wire id."""
    shown = {edition: label("infinity-n4", "edition", edition, "en") for edition in RULESETS["infinity-n4"].editions}
    assert shown == {
        "original": "original text",
        "1.2": "Update 1.2",
        "1.3": "Update 1.3",
        "2.1": "Update 2.1",
        "current": "current rules",
    }
    assert label("gurps-4e", "edition", "current", "es") == "reglamento vigente"
    assert label("infinity-n4", "edition", "1.3", "es") == "Actualización 1.3"


def test_only_a_dotted_number_reads_as_an_update() -> None:
    """ "3" and "2.1.4" read as updates in both locales; "1.2x", "1." or "draft" are shown as they are."""
    assert label(None, "edition", "3", "en") == "Update 3"
    assert label(None, "edition", "2.1.4", "es") == "Actualización 2.1.4"
    assert label(None, "edition", "original", "es") == "texto original"
    for edition in ("1.2x", "1.", ".2", "draft"):
        assert label("infinity-n4", "edition", edition, "en") == edition


def test_every_id_of_the_contract_vocabulary_has_a_label_in_both_locales() -> None:
    """People read labels, never ids: each ruleset's zones, traits and actions read as words in en and es."""
    for ruleset_id, row in vocabulary().rulesets.items():
        named = [("zone", zone) for zone in row.zones] + [("action", action) for action in row.actions]
        named += [("trait", trait.replace("-N", "-2")) for trait in row.traits]
        for kind, value in named:
            for locale in ("en", "es"):
                shown = label(ruleset_id, kind, value, locale)  # type: ignore[arg-type]
                assert shown != value and "{" not in shown, (ruleset_id, kind, value, locale)
    assert label("gurps-4e", "trait", "blind", "es") == "Ciego"


def test_the_scenes_own_ruleset_labels_an_id_first() -> None:
    """An id several rulesets share reads as the asked ruleset's data says ("smoke", "dodge"), in either locale."""
    assert label("gurps-4e", "zone", "smoke", "en") == "Smoke"
    assert label("traveller", "zone", "smoke", "es") == "Humo"
    assert label("infinity-n4", "zone", "smoke", "en") == "Zero Visibility Zone (Smoke)"
    assert label("infinity-n4", "zone", "smoke", "es") == "Zona de Visibilidad Nula (Humo)"
    assert label("gurps-4e", "action", "dodge", "es") == "Esquiva"
    assert label("infinity-n4", "action", "dodge", "es") == "Esquivar"


def test_an_id_of_another_ruleset_is_labelled_by_the_ruleset_that_knows_it() -> None:
    """A trait or zone foreign to the asked ruleset, or asked of no or an unknown ruleset, still reads as its label."""
    assert label("infinity-n4", "trait", "infravision", "es") == "Infravisión"
    assert label("traveller", "zone", "low", "en") == "Low Visibility Zone"
    assert label(None, "zone", "unnatural-darkness", "es") == "Oscuridad sobrenatural"
    assert label("dnd-5e", "action", "observation", "en") == label("traveller", "action", "observation", "en")
    assert label("gurps-4e", "difficulty", "average", "es") == "Media"


def test_a_numbered_trait_reads_with_its_number() -> None:
    """``night-vision-N`` traits read "Night Vision 3" / "Visión Nocturna 12"; one without a number stays as it is."""
    assert label("gurps-4e", "trait", "night-vision-3", "en") == "Night Vision 3"
    assert label("infinity-n4", "trait", "night-vision-12", "es") == "Visión Nocturna 12"
    for trait in ("night-vision-x", "night-vision-", "night-vision-3a"):
        assert label("gurps-4e", "trait", trait, "en") == trait


def test_a_device_carried_as_a_trait_reads_as_the_device() -> None:
    """A Traveller device a token carries as a trait reads as the device's name, in en and es."""
    assert label("traveller", "trait", "ir-goggles", "en") == "IR goggles"
    assert label("traveller", "trait", "ir-goggles", "es") == "Gafas infrarrojas"
    assert label("gurps-4e", "trait", "binoculars", "es") == "Prismáticos"


def test_the_difficulty_ladder_reads_in_both_locales() -> None:
    """Traveller's ladder from Easy to Impossible, in en and es; a level not on it is shown as it is.

    rules-notes "Traveller family": 'Difficulty ladder: Easy, Average, Difficult, Formidable, Impossible.'
    """
    levels = ["easy", "average", "difficult", "formidable", "impossible"]
    assert [label("traveller", "difficulty", level, "en") for level in levels] == [
        "Easy",
        "Average",
        "Difficult",
        "Formidable",
        "Impossible",
    ]
    assert [label("traveller", "difficulty", level, "es") for level in levels] == [
        "Fácil",
        "Media",
        "Difícil",
        "Formidable",
        "Imposible",
    ]
    assert label("traveller", "difficulty", "heroic", "es") == "heroic"


@pytest.mark.parametrize(("kind", "value"), [("action", "fly-by"), ("zone", "thick-fog"), ("trait", "flying-3")])
def test_an_id_no_ruleset_labels_is_shown_as_it_is(kind: str, value: str) -> None:
    """A foreign or future id is shown as it is rather than hidden, whatever ruleset is asked."""
    for ruleset in (None, "gurps-4e", "no-such-ruleset"):
        assert label(ruleset, kind, value, "es") == value  # type: ignore[arg-type]


def test_a_citation_logged_with_a_seed_file_name_reads_as_its_title_now() -> None:
    """A citation logged with a seed file name (`001_….txt: quote`) reads as today's, headed by the source's title.

    Records logged before sources were named by title cite so (and 002's dated texts with their date before the quote);
    a re-judged ruling then does not differ only in how its source is named. Anything else is left as it is.
    """
    old = "001_a0e8dce3ac9e4c22.txt: Low Visibility Zones apply a MOD of -3."
    assert (
        readable_citation(old)
        == "Infinity N4 Core Rules — Visibility Conditions: Low Visibility Zones apply a MOD of -3."
    )
    zero_12 = load_toml("infinity-n4")["passages"]["zero-002-u12"]
    logged = f"002_38ee4d299a054ffc.txt: Update 1.2, Jan 2022: {zero_12['quote']}"
    assert (
        readable_citation(logged)
        == f"Infinity N4 rules update 1.2 (Jan 2022) — Visibility Conditions: {zero_12['quote']}"
    )
    assert readable_citation("a note of someone else") == "a note of someone else"


def test_old_citations_of_every_kind_of_source_read_as_the_titles_rules_notes_names() -> None:
    """004 in Spanish, 002's Original and PDF 2.1, a web page, rules-notes and 003/000 logged by file read by title.

    rules-notes "How sources are named": '004 | Infinity N4 Reglamento — Condiciones de Visibilidad', '002, "Update PDF
    2.1, July 2023" | Infinity N4 rules, PDF 2.1 (July 2023) — Visibility Conditions', 'a URL above | the site and page,
    e.g. "Infinity Wiki — Multispectral Visor", with the URL kept beside it'.
    """
    infinity, gurps, traveller = (load_toml(name)["passages"] for name in ("infinity-n4", "gurps-4e", "traveller"))
    low_004, stack_21 = infinity["low-004"]["quote"], infinity["not-stacking-002-u21"]["quote"]
    stack_0, msv = infinity["not-stacking-002-original"]["quote"], infinity["msv-notes"]["quote"]
    zero_notes, blind = infinity["zero-notes-original"]["quote"], gurps["attacker-blind-003"]["quote"]
    smoke = traveller["smoke-000"]["quote"]
    msv_url = "https://infinitythewiki.com/Multispectral_Visor"
    read_now = {
        f"004_acbdbfc06fa3cda7.txt: {low_004}": f"Infinity N4 Reglamento — Condiciones de Visibilidad: {low_004}",
        f"002_38ee4d299a054ffc.txt: Update PDF 2.1, July 2023: {stack_21}": (
            f"Infinity N4 rules, PDF 2.1 (July 2023) — Visibility Conditions: {stack_21}"
        ),
        f"002_38ee4d299a054ffc.txt: Original: {stack_0}": (
            f"Infinity N4 Core Rules, original text — Visibility Conditions: {stack_0}"
        ),
        f"{msv_url}: {msv}": f"Infinity Wiki — Multispectral Visor ({msv_url}): {msv}",
        f"rules-notes.md: {zero_notes}": f"Sightline rules notes — Zero Visibility in the original text: {zero_notes}",
        f"003_9309532a8d7e382e.txt: {blind}": f"GURPS Basic Set (4th edition) — Visibility: {blind}",
        f"000_3f2752d40c93425c.txt: {smoke}": f"Traveller tactical visibility rules (2011-03-17) — Smoke: {smoke}",
    }
    for old, new in read_now.items():
        assert readable_citation(old) == new
        assert readable_citation(new) == new  # today's citation is left as it is
    assert readable_citation(f"002_38ee4d299a054ffc.txt: Update 9.9, May 2031: {stack_21}").startswith("002_")


def test_a_citation_logged_before_a_passage_was_corrected_reads_as_todays() -> None:
    """A ruling logged with a passage's former title, quote or source (its `formerly`) reads as its citation today.

    So a re-judged ruling does not list a corrected passage as dropped and added, and the CSV shows today's title:
    002's undated 'Low Visibility Zones apply a MOD of -3.' was titled as 002's "Original" text, and rules-notes' own
    'Difficulty ladder: …' was cited, reworded, as a page of http://twilight2000.one/matt/stealth.htm.
    """
    low = "Low Visibility Zones apply a MOD of -3."
    assert (
        readable_citation(f"Infinity N4 Core Rules, original text — Visibility Conditions: {low}")
        == f"Infinity Wiki — Visibility Conditions: {low}"
    )
    ladder = load_toml("traveller")["passages"]["ladder-notes"]
    (former,) = ladder["formerly"]
    url = former["source"]
    now = f"Sightline rules notes — Difficulty ladder: {ladder['quote']}"
    assert readable_citation(f"{former['title']} ({url}): {former['quote']}") == now
    assert readable_citation(f"{url}: {former['quote']}") == now  # logged before sources were named by title
    passages = [passage for ruleset in RULESETS.values() for passage in ruleset.data.passages.values()]  # type: ignore[attr-defined]
    today = {passage.citation() for passage in passages}
    corrected = 0
    for passage in passages:
        for old in passage.formerly:
            title, quote = old.title or passage.title, old.quote or passage.quote
            source = old.source or passage.source
            where = f" ({source})" if source.startswith("http") else ""
            logged = f"{title}{where}: {quote}"
            assert logged not in today, f"a former citation is another passage's today: {logged}"
            assert readable_citation(logged) == passage.citation()
            assert readable_citation(f"{source}: {quote}") == passage.citation()
            corrected += 1
    assert corrected >= 20
