"""Re-judging on the log's HTTP side: the JSON API, and the session page in a real headless Chromium."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import BrowserContext

from bridge.log.http import create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sqlite import SqliteLogStore
from bridge.palette import VERDICTS

from .test_http import BRIDGE, OTHER, check_secret
from .test_pages_browser import ARTIFACTS, browser  # noqa: F401  (the browser fixture)

DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture
async def demo_store(demo_log: Path, tmp_path: Path) -> AsyncIterator[SqliteLogStore]:
    """A copy of the demo's logged session, opened as the bridge opens its log."""
    shutil.copy(demo_log / "sightline.db", tmp_path / "sightline.db")
    store = SqliteLogStore(tmp_path / "sightline.db")
    await store.connect()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def client(demo_store: SqliteLogStore) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = create_log_app(check_secret=check_secret, store=demo_store)
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


async def _demo(store: SqliteLogStore) -> tuple[str, str, list[RulingRecord]]:
    (session,) = await store.list_sessions()
    records = [r async for r in store.export(session.world, session.id)]
    return session.world, session.id, records


async def test_api_rejudges_a_page_and_changes_nothing(
    client: TestClient[web.Request, web.Application], demo_store: SqliteLogStore
) -> None:
    """``/rejudge?edition=1.3`` answers the one changed demo ruling with both sides and changes nothing.

    The answer carries the page's counts and no next page; ``all=true`` lists all 13; the stored rulings are the same
    afterwards.
    """
    world, session, records = await _demo(demo_store)
    url = f"/api/worlds/{world}/sessions/{session}/rejudge"
    response = await client.get(url, params={"edition": "1.3"}, headers=BRIDGE)
    assert response.status == 200
    body = await response.json()
    assert body["scanned"] == 13 and body["next"] is None
    assert body["summary"] == {"same": 12, "changed": 1, "untranslatable": 0}
    (changed,) = body["rulings"]
    assert (changed["actor"]["name"], changed["target"]["name"], changed["direction"]) == ("Vik", "Lin", "now-allowed")
    assert changed["before"]["allowed"] is False and changed["after"]["allowed"] is True
    assert changed["after"]["line"]["start"] == records[7].line["start"]  # type: ignore[index]

    every = await (await client.get(url, params={"edition": "1.3", "all": "true"}, headers=BRIDGE)).json()
    assert len(every["rulings"]) == 13
    paged = await (await client.get(url, params={"ruleset": "infinity-codeone", "limit": "5"}, headers=BRIDGE)).json()
    assert paged["scanned"] == 5 and paged["next"] is not None

    assert [r.model_dump_json() for r in (await _demo(demo_store))[2]] == [r.model_dump_json() for r in records]


async def test_api_refuses_unknown_editions_and_strangers(
    client: TestClient[web.Request, web.Application], demo_store: SqliteLogStore
) -> None:
    """An unknown edition is a 400 naming it; another world's secret gets 401."""
    world, session, _ = await _demo(demo_store)
    url = f"/api/worlds/{world}/sessions/{session}/rejudge"
    bad = await client.get(url, params={"edition": "7"}, headers=BRIDGE)
    assert bad.status == 400 and "unknown edition '7'" in (await bad.json())["message"]
    assert (await client.get(url, params={"edition": "1.3"}, headers=OTHER)).status == 401
    assert (await client.get(url, params={"edition": "1.3"})).status == 401


async def test_a_spanish_page_says_in_spanish_why_a_ruling_cannot_carry_over(
    client: TestClient[web.Request, web.Application], demo_store: SqliteLogStore
) -> None:
    """Re-judged under Traveller, a Spanish session page says why each Infinity ruling cannot carry over by labels."""
    world, session, _ = await _demo(demo_store)
    path = f"/log/{world}/{session}"
    signed = await client.post("/log/login", data={"secret": "bridge-secret", "next": path}, allow_redirects=False)
    assert signed.status == 303
    page = await (await client.get(path, params={"lang": "es", "rejudge": "traveller:current"})).text()
    assert page.count('class="ruling untranslatable"') == 13
    assert "no se puede trasladar</span>: Traveller no tiene la acción «Ataque CD»" in page
    assert "bs-attack" not in page.split('id="rulings"')[1].split("</table>")[0]  # our ids never shown
    english = await (await client.get(path, params={"lang": "en", "rejudge": "traveller:current"})).text()
    assert "cannot carry over</span>: Traveller has no action &#x27;BS Attack&#x27;" in english


async def test_session_page_highlights_what_changes_and_redraws_its_line(
    demo_store: SqliteLogStore,
    browser: BrowserContext,  # noqa: F811
) -> None:
    """On the demo session's page, picking "Infinity N4 — 1.2" highlights the one ruling that changes.

    It shows its new verdict beside the original, and the map draws the re-judged line beside the original.
    """
    world, session, records = await _demo(demo_store)
    server = TestServer(create_log_app(check_secret=check_secret, store=demo_store))
    await server.start_server()
    try:
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(str(server.make_url(f"/log/{world}/{session}")))
        await page.fill("input[name=secret]", "bridge-secret")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#rulings tbody tr.ruling")
        await page.select_option("#rejudge", "infinity-n4:1.2")
        await page.click("#rejudge-go")
        await page.wait_for_url("**rejudge=infinity-n4**")
        changed = page.locator("#rulings tbody tr.ruling.changed")
        assert await changed.count() == 1
        vik = next(r for r in records if r.actor.name == "Vik" and r.target and r.target.name == "Lin")
        assert await changed.get_attribute("data-record") == vik.id
        assert "yes 0 (now allowed)" in await changed.inner_text()
        assert "Rulings on this page that change: 1 of 13;" in await page.inner_text("#rejudge-summary")
        await changed.click()
        await page.locator("#map line.rejudged").wait_for()
        assert await page.locator("#map line.sight").count() == 2
        assert await page.locator("#map line.rejudged").get_attribute("stroke") == VERDICTS["clear"]  # allowed now
        assert "Re-judged: MOD 0" in await page.inner_text("#map-caption")
        assert errors == []
        ARTIFACTS.mkdir(exist_ok=True)
        await page.mouse.move(0, 0)
        await page.screenshot(path=str(ARTIFACTS / "log-rejudge.png"), full_page=True)
    finally:
        await server.close()


def test_docs_picture_of_the_rejudged_demo_exists() -> None:
    """docs/log.md shows the re-judged demo session (copied from the browser test's screenshot)."""
    assert (DOCS_IMG / "log-rejudge.png").stat().st_size > 10_000
