"""The session page's markup (``bridge/log/pages.py``), built directly: what a reader sees of a row."""

from __future__ import annotations

import re

from bridge.log.pages import session_page, sessions_page
from bridge.log.store import LoggedSession, SessionChoices

from .sample import ruling

SESSION = LoggedSession(id="s1", world="w-ashes", started="2025-03-01T19:00:00.000000Z", last_activity="x")


def test_an_override_names_the_ruling_it_overrides_never_its_id() -> None:
    """An override's note reads "GM override of <time> · Fusilier → Target t-tgt: reason", not the id."""
    original = ruling(0).model_copy(update={"id": "01ORIGINAL00000000000000000"})
    override = ruling(1).model_copy(
        update={"id": "01OVERRIDE00000000000000000", "kind": "override", "overrides": original.id, "reason": "cover"}
    )
    page = session_page("en", SESSION, [original, override], filters={}, next_cursor=None)
    assert "GM override of <time" in page and "· Fusilier → Target t-tgt</strong>: cover" in page
    assert "01ORIGINAL" not in "".join(re.findall(r'<td class="notes">(.*?)</td>', page))
    alone = session_page("es", SESSION, [override], filters={}, next_cursor=None)
    assert "<strong>Corrección</strong>: cover" in alone


def test_scene_difficulty_and_modifier_are_read_as_people_read_them() -> None:
    """The scene, a Traveller difficulty and the modifiers are shown as people read them.

    The scene by name (from the session's choices when the row carries no snapshot), a Traveller difficulty by its label
    in the page's language, modifiers as +3 / −6 / 0.
    """
    row = ruling(0, snapshot=None).model_copy(
        update={"id": "01ROW0000000000000000000000", "ruleset": "traveller", "action": "observation"}
    )
    row = row.model_copy(update={"details": {"difficulty": "formidable"}, "modifier": -6})
    choices = SessionChoices([], [], [], {"s-docks": "Los muelles"})
    page = session_page("es", SESSION, [row], filters={}, next_cursor=None, choices=choices)
    assert '<td class="scene">Los muelles</td>' in page and "s-docks</td>" not in page
    assert '<td class="difficulty">Formidable</td>' in page and "<th>Dificultad</th>" in page
    assert '<td class="mod">\u22126</td>' in page and '<td class="action">Observación</td>' in page
    infinity = session_page("en", SESSION, [ruling(0).model_copy(update={"id": "01R"})], filters={}, next_cursor=None)
    assert "<th>Difficulty</th>" not in infinity  # only pages holding a Traveller ruling have the column


def test_rejudge_choices_name_editions_in_the_readers_words() -> None:
    """The re-judge list reads "Infinity N4 — Update 1.2" / "— reglamento vigente", not edition ids."""
    from bridge.log.pages import rejudge_choices

    english = dict(rejudge_choices("en"))
    assert english["infinity-n4:1.2"].endswith("— Update 1.2")
    assert english["infinity-n4:current"].endswith("— current rules")
    assert dict(rejudge_choices("es"))["gurps-4e:current"].endswith("— reglamento vigente")


def test_worlds_are_shown_by_their_name_with_the_id_only_as_a_tooltip() -> None:
    """The sessions table and the session page name the world (escaped), its id only in the title.

    A world that never sent a name shows its id, muted.
    """
    named = SESSION.model_copy(update={"world_name": 'Ashes <of> "Kaldor" & co'})
    listed = sessions_page("en", [named, SESSION.model_copy(update={"id": "s2", "world": "w-plain"})])
    shown = '<span class="world" title="w-ashes">Ashes &lt;of&gt; &quot;Kaldor&quot; &amp; co</span>'
    assert f"<td>{shown}</td>" in listed
    assert '<td><span class="world muted">w-plain</span></td>' in listed
    assert ">w-ashes<" not in listed and "<of>" not in listed
    page = session_page("es", named, [], filters={}, next_cursor=None)
    assert f'<span class="muted">{shown}</span></h2>' in page and ">w-ashes<" not in page
    assert '<span class="world muted">w-ashes</span>' in session_page("en", SESSION, [], filters={}, next_cursor=None)
