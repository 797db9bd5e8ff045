"""The session page's layout and map in a real headless Chromium at 1400 px and 400 px wide.

What a GM saw go wrong (issue 14): the table slid under the map and hid the notes, the map covered the
actor and target columns on a phone, the map scrolled away, the caption kept the previous row's text.
Each is measured here on the rendered page (element boxes, what is drawn at a point), with screenshots
in ``artifacts/``. The log runs on a real port over a real SQLite file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import BrowserContext, Page

from bridge.log.http import create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sql import SqlLogStore
from bridge.palette import VERDICTS, ZONES

from .sample import ruling
from .test_http import check_secret
from .test_pages_browser import ARTIFACTS, browser  # noqa: F401  (the browser fixture)

LONG_NOTE = (
    "The smoke from the burning warehouse drifts across the quay; the GM ruled it thick enough to count "
    "as a Zero Visibility Zone for the whole of this turn and the next."
)


def _tokens(actor: str, actor_name: str, target: str) -> dict[str, Any]:
    """A situation as capture.py writes it: the actor's, the target's and a lamp-bearer's tokens."""
    token = {"elevation": 0, "width": 1, "height": 1, "traits": []}
    return {
        "tokens": [
            {**token, "id": actor, "name": actor_name, "x": 200, "y": 800},
            {**token, "id": target, "name": "Target " + target, "x": 1800, "y": 400},
            {**token, "id": "t-lamp", "name": "Lamplighter", "x": 1600, "y": 600},
        ],
        "aware": True,
        "options": {},
    }


def _records() -> list[RulingRecord]:
    """40 rulings with long notes and tokens, every fifth one a Traveller ruling with its difficulty."""
    out = []
    for n in range(40):
        actor, name = ("t-sniper", "Sniper") if n % 2 else ("t-fus", "Fusilier")
        record = ruling(n, actor=actor, actor_name=name, allowed=n % 3 != 1, situation=_tokens(actor, name, "t-tgt"))
        record = record.model_copy(update={"notes": [f"ruling {n}", LONG_NOTE]})
        if n % 5 == 4:
            record = record.model_copy(
                update={
                    "ruleset": "traveller",
                    "action": "observation",
                    "allowed": True,
                    "modifier": -2,
                    "details": {"difficulty": "difficult"},
                }
            )
        out.append(record)
    return out


@pytest.fixture
async def served(store: SqlLogStore) -> AsyncIterator[tuple[TestServer, list[RulingRecord]]]:
    """The log application on a real port over a store holding :func:`_records`."""
    records = await store.append_many(_records())
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        yield server, records
    finally:
        await server.close()


async def _open(context: BrowserContext, server: TestServer, record: RulingRecord, width: int, lang: str) -> Page:
    page = await context.new_page()
    await page.set_viewport_size({"width": width, "height": 900 if width > 900 else 800})
    page.on("pageerror", lambda exc: pytest.fail(f"page error: {exc}"))
    await page.goto(str(server.make_url("/log/login")))
    await page.fill("input[name=secret]", "ashes-secret")
    await page.click("button[type=submit]")
    await page.goto(str(server.make_url(f"/log/{record.world}/{record.session}?lang={lang}")))
    await page.wait_for_selector("#map g.zone")
    return page


async def _box(page: Page, selector: str) -> dict[str, float]:
    box = await page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not rendered"
    return box


def _apart(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


async def _uncovered(page: Page, selector: str) -> list[str]:
    """The texts of the visible cells matching ``selector`` whose centre shows something else (covered)."""
    return list(
        await page.evaluate(
            """(selector) => {
                const covered = [];
                for (const cell of document.querySelectorAll(selector)) {
                    const r = cell.getBoundingClientRect();
                    const x = r.left + r.width / 2, y = r.top + r.height / 2;
                    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;  // off screen
                    const scroller = cell.closest('.rows').getBoundingClientRect();
                    if (y < scroller.top || y > scroller.bottom || x < scroller.left || x > scroller.right) continue;
                    const hit = document.elementFromPoint(x, y);
                    const what = hit && (hit.id || hit.tagName);
                    if (!hit || !cell.contains(hit)) covered.push(`${cell.textContent} under ${what}`);
                }
                return covered;
            }""",
            selector,
        )
    )


@pytest.mark.parametrize("backend", ["sqlite"])
@pytest.mark.parametrize("lang", ["en", "es"])
async def test_at_1400_px_the_table_keeps_clear_of_the_map_and_the_map_stays_in_view(
    served: tuple[TestServer, list[RulingRecord]],
    browser: BrowserContext,  # noqa: F811
    lang: str,
) -> None:
    """At 1400 px the table and the map sit side by side without overlap, and the map stays in view.

    Every column (the notes too) is shown without scrolling sideways, and the map is still on screen after scrolling to
    the last row.
    """
    server, records = served
    page = await _open(browser, server, records[0], 1400, lang)
    rows, pane = await _box(page, ".rows"), await _box(page, ".map-pane")
    assert _apart(rows, pane), (rows, pane)
    overflow = await page.evaluate(
        "(() => { const r = document.querySelector('.rows'); return r.scrollWidth - r.clientWidth })()"
    )
    assert overflow <= 0, f"the table is {overflow} px wider than its column"
    assert await _uncovered(page, "#rulings td.notes") == []
    assert await _uncovered(page, "#rulings td.actor, #rulings td.target") == []
    await page.locator("#rulings tbody tr.ruling").last.click()
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert await page.evaluate("window.scrollY") > 500  # the page did scroll a long way
    svg = await _box(page, "#map")
    assert svg["y"] >= 0 and svg["y"] + svg["height"] <= 900, f"the map left the screen: {svg}"
    assert _apart(await _box(page, "#rulings tbody tr.ruling >> nth=-1"), svg)
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"log-layout-1400-{lang}.png"))


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_at_400_px_the_map_never_covers_the_actor_and_target_columns(
    served: tuple[TestServer, list[RulingRecord]],
    browser: BrowserContext,  # noqa: F811
) -> None:
    """At 400 px the map sits above the table, never over it or its actor and target columns.

    Actor and target cells are visible where they are; scrolling the table leaves the map where it is, on screen.
    """
    server, records = served
    page = await _open(browser, server, records[0], 400, "en")
    pane = await _box(page, ".map-pane")
    assert pane["width"] <= 400
    await page.evaluate("window.scrollTo(0, document.querySelector('.map-pane').offsetTop - 4)")
    before = await _box(page, "#map")
    assert before["y"] >= 0 and before["y"] + before["height"] <= 800
    assert _apart(await _box(page, ".rows"), await _box(page, ".map-pane"))
    assert await _uncovered(page, "#rulings td.actor, #rulings td.target") == []
    visible = await page.evaluate(
        "[...document.querySelectorAll('#rulings td.actor')].filter(c => { const r = c.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth }).length"
    )
    assert visible >= 3, "some actor cells are on screen beside the map"
    await page.locator(".rows").evaluate("(rows) => rows.scrollTo(0, rows.scrollHeight)")
    await page.locator("#rulings tbody tr.ruling").last.click()
    after = await _box(page, "#map")
    assert after == before, "scrolling the table moved the map"
    assert await _uncovered(page, "#rulings td.actor, #rulings td.target") == []
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / "log-layout-400.png"))


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_caption_and_map_follow_the_selected_row(
    served: tuple[TestServer, list[RulingRecord]],
    browser: BrowserContext,  # noqa: F811
) -> None:
    """Selecting row after row, the caption and the map follow the row just chosen, never the one before.

    The caption names that row; the map draws its tokens by name and its line in the palette's colour, the zones in the
    palette's colours; the scene and a Traveller ruling's difficulty are shown by their names and labels.
    """
    server, records = served
    page = await _open(browser, server, records[0], 1400, "en")
    rows = page.locator("#rulings tbody tr.ruling")
    for index in (0, 1, 4, 2):
        record = records[index]
        await rows.nth(index).click()
        caption = await page.inner_text("#map-caption")
        assert caption.startswith(f"{record.actor.name} → Target t-tgt · "), caption
        assert "Docks" in caption
        await page.wait_for_function("(n) => document.querySelectorAll('#map g.tokens g.token').length === n", arg=3)
        names = await page.locator("#map g.tokens text").evaluate_all("(ts) => ts.map((t) => t.textContent)")
        assert sorted(names) == sorted([str(record.actor.name), "Target t-tgt", "Lamplighter"])
        verdict = "blocked" if not record.allowed else "penalised"
        assert await page.locator("#map line.sight").get_attribute("stroke") == VERDICTS[verdict]
    assert "Difficult" in await page.inner_text("#map-caption") or "Difficult" in await rows.nth(4).inner_text()
    assert "Difficult" in await rows.nth(4).locator("td.difficulty").inner_text()
    assert await rows.nth(4).locator("td.action").inner_text() == "Observation"
    assert await rows.nth(0).locator("td.scene").inner_text() == "Docks"
    fills = await page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('#map g.zone')].map("
        "(g) => [g.dataset.zone, g.querySelector('rect,circle,polygon,ellipse').getAttribute('fill')]))"
    )
    assert fills == {"zero": ZONES["zero"], "poor": ZONES["poor"]}

    spanish = await _open(browser, server, records[0], 1400, "es")
    await spanish.locator("#rulings tbody tr.ruling").nth(4).click()
    assert "Difícil" in await spanish.inner_text("#map-caption")
    assert await spanish.locator("#rulings tbody tr.ruling").nth(4).locator("td.difficulty").inner_text() == "Difícil"


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_filters_take_part_of_a_name_in_any_case_offer_choices_and_page_back(
    served: tuple[TestServer, list[RulingRecord]],
    browser: BrowserContext,  # noqa: F811
) -> None:
    """The filters take part of a name in any case, offer the session's names, and page back.

    "sni" finds the Sniper's rulings, "ATAQUE" the BS Attacks (by their Spanish label); the lists offer the session's
    names; with ten a page, Previous page comes back to the rows before.
    """
    server, records = served
    page = await _open(browser, server, records[0], 1400, "en")
    assert await page.locator("#actor-choices option").evaluate_all("(os) => os.map((o) => o.value)") == [
        "Fusilier",
        "Sniper",
    ]
    actions = await page.locator("#action-choices option").evaluate_all("(os) => os.map((o) => o.value)")
    assert actions == ["BS Attack", "Observation"]
    await page.fill("input[name=actor]", "sni")
    await page.click("#apply")
    await page.wait_for_url("**actor=sni**")
    shown = await page.locator("#rulings td.actor").all_inner_texts()
    assert shown and set(shown) == {"Sniper"} and len(shown) == 20
    await page.fill("input[name=actor]", "")
    await page.fill("input[name=action]", "ATAQUE")
    await page.click("#apply")
    await page.wait_for_url("**action=ATAQUE**")
    assert set(await page.locator("#rulings td.action").all_inner_texts()) == {"BS Attack"}

    url = f"/log/{records[0].world}/{records[0].session}?lang=en&limit=10"
    await page.goto(str(server.make_url(url)))
    first = await page.locator("#rulings tbody tr.ruling").evaluate_all("(rs) => rs.map((r) => r.dataset.record)")
    await page.click("#next-page")
    await page.click("#next-page")
    third = await page.locator("#rulings tbody tr.ruling").evaluate_all("(rs) => rs.map((r) => r.dataset.record)")
    assert third == [r.id for r in records[20:30]]
    await page.click("#previous-page")
    await page.click("#previous-page")
    back = await page.locator("#rulings tbody tr.ruling").evaluate_all("(rs) => rs.map((r) => r.dataset.record)")
    assert back == first == [r.id for r in records[:10]]
    assert await page.locator("#previous-page").count() == 0
    markdown = page.locator("a.export-md")
    assert await markdown.inner_text() == "Markdown"
    response = await page.request.get(str(server.make_url(str(await markdown.get_attribute("href")))))
    assert response.ok and "Sniper" in await response.text()
