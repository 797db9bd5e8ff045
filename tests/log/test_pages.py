"""The session page's markup (``bridge/log/pages.py``), built directly: what a reader sees of a row."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from bridge.log.pages import session_page, sessions_page
from bridge.log.store import LoggedSession, SessionChoices, format_time

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
    assert '<td class="difficulty">Formidable</td>' in page and '<th scope="col">Dificultad</th>' in page
    assert '<td class="mod">\u22126</td>' in page and '<td class="action">Observación</td>' in page
    infinity = session_page("en", SESSION, [ruling(0).model_copy(update={"id": "01R"})], filters={}, next_cursor=None)
    assert ">Difficulty</th>" not in infinity  # only pages holding a Traveller ruling have the column


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


def test_a_rulings_why_lists_every_candidate_with_its_reason_and_each_source_by_title() -> None:
    """Each row's "Why" shows every candidate MOD (applied or not, with its reason) and each citation by its title.

    Escaped, in the page's words ("not applied", "no aplicado"); a citation logged under a seed's file name reads as
    its source's title; an override (the GM's word, not a ruling) has none.
    """
    row = ruling(0).model_copy(
        update={
            "id": "01ROW0000000000000000000000",
            "modifiers": [
                {
                    "source": "zone",
                    "zone": "low",
                    "value": -3,
                    "applied": False,
                    "label": "Low <Visibility> Zone",
                    "reason": "Visibility Zone MODs never stack: only the most restrictive one applies.",
                },
                {"source": "zone", "zone": "poor", "value": -6, "applied": True, "label": "Poor Visibility Zone"},
            ],
            "citations": [
                "001_a0e8dce3ac9e4c22.txt: Any Skill, Special Skill or piece of Equipment that requires LoF, except "
                "Dodge, and is performed from, into, or through a Visibility Zone suffers a MOD to the relevant "
                "Attribute in the required Roll.",
                "Infinity N4 Core Rules — Visibility Conditions: Poor Visibility Zones apply a MOD of -6.",
            ],
        }
    )
    override = ruling(1).model_copy(
        update={"id": "01OVR0000000000000000000000", "kind": "override", "overrides": row.id, "reason": "cover"}
    )
    page = session_page("en", SESSION, [row, override], filters={}, next_cursor=None)
    cells = re.findall(r'<td class="notes">(.*?)</td>', page)
    assert '<details class="why" data-why="0"><summary>Why</summary></details>' in cells[0]
    assert "details" not in cells[1]
    why = re.findall(r'<template class="why" id="why-0">(.*?)</template>', page)[0]  # log.js puts it in on opening
    assert "<li>Low &lt;Visibility&gt; Zone \u22123 — not applied: Visibility Zone MODs never stack" in why
    assert "<li>Poor Visibility Zone \u22126 — applied</li>" in why
    assert "<li>Infinity N4 Core Rules — Visibility Conditions: Poor Visibility Zones apply a MOD of -6.</li>" in why
    assert ".txt" not in why and "<li>Infinity N4 Core Rules — Visibility Conditions: Any Skill" in why
    spanish = session_page("es", SESSION, [row], filters={}, next_cursor=None)
    assert "<summary>Por qué</summary>" in spanish and "— no aplicado: " in spanish and "Fuentes" in spanish


def test_the_table_is_one_tab_stop_headed_by_its_columns_and_times_say_their_zone() -> None:
    """Only the first row is in the tab order (the arrow keys move from it); headers are column headers.

    The Time header and the From/To fields say "(UTC)" until the page's script names the reader's zone; the filter
    form carries that zone (tz), and paging keeps it; the last page is one link away.
    """
    rows = [ruling(n).model_copy(update={"id": f"01ROW{n:021d}"}) for n in range(3)]
    page = session_page(
        "en", SESSION, rows, filters={"tz": "Europe/Madrid", "from": "2025-03-01T20:00"}, next_cursor="NEXT"
    )
    assert re.findall(r'<tr class="ruling" data-record="[^"]+" tabindex="(-?\d)"', page) == ["0", "-1", "-1"]
    assert re.search(  # the Time header (a link sorting the newest first) says its zone
        r'<th scope="col" aria-sort="ascending"><a class="sort" data-order="-time" href="[^"]+">'
        r'Time<span class="tz" data-tz> \(UTC\)</span></a></th>',
        page,
    )
    assert '<span>From<span class="tz" data-tz> (UTC)</span></span><input type="datetime-local" name="from"' in page
    assert '<input type="hidden" name="tz" value="Europe/Madrid">' in page
    assert "tz=Europe%2FMadrid" in re.search(r'id="next-page"[^>]*href="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    last = re.search(r'id="last-page" href="([^"]+)"', page)
    assert last is not None and "before=" in last.group(1) and "from=2025-03-01T20%3A00" in last.group(1)
    assert '<caption class="visually-hidden">' in page and 'aria-labelledby="map-caption"' in page
    listed = sessions_page("en", [SESSION])
    assert '<th scope="col">Started<span class="tz" data-tz> (UTC)</span></th>' in listed


def test_every_link_form_and_script_starts_with_the_proxy_path() -> None:
    """Behind a proxy path (root "/a"), every href, form action, script and the map's snapshot URL start with it."""
    rows = [ruling(0).model_copy(update={"id": "01ROW0000000000000000000000"})]
    page = session_page("en", SESSION, rows, filters={}, next_cursor="NEXT", root="/a")
    listed = sessions_page("en", [SESSION], root="/a")
    for markup in (page, listed):
        targets = re.findall(r'(?:href|action|src)="([^"]+)"', markup)
        assert targets and all(t.startswith("/a/") for t in targets), targets
    assert '"snapshotUrl":"/a/api/worlds/w-ashes/snapshots/"' in page


def test_a_long_page_carries_each_distinct_why_once_and_each_snapshot_key_once() -> None:
    """1,000 rulings weighing the same candidates carry their Why text once, and their shared snapshot key once.

    Each row keeps its own folded Why (a <details> naming the text by number); before, every row repeated the
    whole text (about 440 bytes a row) and the map data repeated the key.
    """
    rows = [ruling(n).model_copy(update={"id": f"01ROW{n:021d}"}) for n in range(1000)]
    page = session_page("en", SESSION, rows, filters={}, next_cursor=None)
    assert page.count("Poor Visibility Zone \u22126 — applied") == 1
    assert page.count('<details class="why" data-why="0"><summary>Why</summary></details>') == 1000
    assert page.count("snap-docks-1") == 1
    data = json.loads(re.findall(r'<script type="application/json" id="log-data">(.*?)</script>', page)[0])
    assert data["snapshots"] == ["snap-docks-1"] and {r["snapshot"] for r in data["rulings"].values()} == {0}
    assert len(page.encode()) < 850_000  # 1,042,816 bytes before


def test_the_filter_form_offers_page_sizes_and_an_order_and_keeps_the_chosen_ones() -> None:
    """Rows per page (25, 100, 250, 1,000; 100 unless asked) and the order are choices of the form, kept as chosen."""
    rows = [ruling(0).model_copy(update={"id": "01ROW0000000000000000000000"})]
    plain = session_page("en", SESSION, rows, filters={}, next_cursor=None)
    assert re.findall(r"<option( selected)?>(\d+)</option>", plain) == [
        ("", "25"),
        (" selected", "100"),
        ("", "250"),
        ("", "1000"),
    ]
    chosen = session_page("es", SESSION, rows, filters={"limit": "250", "order": "-mod"}, next_cursor="NEXT")
    assert "<option selected>250</option>" in chosen and "Filas por página" in chosen
    assert '<option value="-mod" selected>MOD, de mayor a menor</option>' in chosen
    nxt = re.search(r'id="next-page"[^>]*href="([^"]+)"', chosen)
    assert nxt is not None and "limit=250" in nxt.group(1) and "order=-mod" in nxt.group(1)


def test_a_session_no_ruling_came_to_for_the_idle_timeout_reads_as_idle_not_open() -> None:
    """With the store's idle timeout, a session quiet for longer shows its last ruling's time marked idle."""
    now = datetime.now(UTC)
    quiet = SESSION.model_copy(update={"ended": None, "last_activity": format_time(now - timedelta(hours=5))})
    busy = quiet.model_copy(update={"id": "s-busy", "last_activity": format_time(now - timedelta(minutes=5))})
    listed = sessions_page("en", [quiet, busy], idle_timeout=timedelta(hours=4))
    cells = re.findall(r"<tr><td>.*?</tr>", listed)
    assert f'<time datetime="{quiet.last_activity}">' in cells[0] and "(idle: ended at its last ruling)" in cells[0]
    assert ">open<" in cells[1] and "idle" not in cells[1]
    page = session_page("es", quiet, [], filters={}, next_cursor=None, idle_timeout=timedelta(hours=4))
    assert "(inactiva: terminó en su última resolución)" in page
