"""The session page in a real headless Chromium (Debian's): table, filter, and a row's sight line on the map.

Chromium runs through Playwright's driver with ``executable_path=/usr/bin/chromium`` (Playwright cannot
download its own browsers here), a fresh user-data-dir and the flags below. The log application
runs on a real port (``TestServer``) over the test store, SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import BrowserContext, async_playwright

from bridge.log.http import create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sql import SqlLogStore
from bridge.palette import VERDICTS

from .sample import ruling
from .test_http import check_secret

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


@asynccontextmanager
async def chromium(profile: Path, **options: Any) -> AsyncIterator[BrowserContext]:
    """A headless Chromium with a fresh profile in ``profile``; ``options`` go to Playwright's context."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: apt-get install -y chromium", pytrace=False)
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 900},
            **options,
        )
        try:
            yield context
        finally:
            await context.close()


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[BrowserContext]:
    """A headless Chromium with a fresh profile."""
    async with chromium(tmp_path / "profile") as context:
        yield context


async def test_session_page_filters_and_draws_the_selected_line(
    store: SqlLogStore, browser: BrowserContext, backend: str
) -> None:
    """Signed in, the table renders, a filter narrows it, and clicking a row draws its line on the map."""
    records: list[RulingRecord] = await store.append_many(
        [
            ruling(
                n,
                actor="t-sniper" if n % 3 == 0 else "t-fus",
                actor_name="Sniper" if n % 3 == 0 else "Fusilier",
                allowed=n != 4,
            )
            for n in range(9)
        ]
    )
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(str(server.make_url(f"/log/{records[0].world}/{records[0].session}")))
        assert "/log/login" in page.url
        await page.fill("input[name=secret]", "ashes-secret")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#rulings tbody tr.ruling")
        assert await page.locator("#rulings tbody tr.ruling").count() == 9
        await page.wait_for_selector("#map g.zone")  # the snapshot is fetched by key, not in the page
        assert await page.locator("#map g.zone").count() == 2
        carried = await page.text_content("#log-data") or ""
        assert "snapshotUrl" in carried and "Fog" not in carried and "r-smoke" not in carried

        await page.fill("input[name=actor]", "Sniper")
        await page.click("#apply")
        await page.wait_for_url("**actor=Sniper**")
        rows = page.locator("#rulings tbody tr.ruling")
        assert await rows.count() == 3

        chosen = next(r for r in records if r.actor.id == "t-sniper" and r.id is not None and r.line)
        assert chosen.line is not None
        await page.click(f'tr[data-record="{chosen.id}"]')
        sight = page.locator("#map line.sight")
        await sight.wait_for()
        assert float(await sight.get_attribute("x1") or "nan") == chosen.line["start"]["x"]
        assert float(await sight.get_attribute("x2") or "nan") == chosen.line["end"]["x"]
        assert await page.get_attribute(f'tr[data-record="{chosen.id}"]', "aria-selected") == "true"
        caption = await page.inner_text("#map-caption")
        assert caption.startswith("Sniper → Target t-tgt · BS Attack") and "(250, 850" not in caption
        first_time = page.locator("#rulings tbody tr.ruling time").first  # the reader's local time, not UTC
        assert "UTC" not in await first_time.inner_text()
        assert (await first_time.get_attribute("title") or "") in {r.time for r in records}  # UTC kept as a tooltip
        assert "BS Attack" in await page.inner_text("#rulings") and "bs-attack" not in await page.inner_text("#rulings")
        assert errors == []

        await page.goto(str(server.make_url(f"/log/{records[0].world}/{records[0].session}?lang=es")))
        await page.click("#rulings tbody tr.ruling >> nth=4")
        assert "Ataque CD" in await page.inner_text("#map-caption")
        assert await page.locator("#map line.sight").get_attribute("stroke") == VERDICTS["blocked"]  # denied
        if backend == "sqlite":
            await page.goto(str(server.make_url(f"/log/{records[0].world}/{records[0].session}?lang=en")))
            await page.click("#rulings tbody tr.ruling >> nth=3")
            await page.mouse.move(0, 0)
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "log-session.png"), full_page=True)
    finally:
        await server.close()


async def test_times_are_shown_in_the_readers_local_time_on_both_pages(
    store: SqlLogStore, browser: BrowserContext, backend: str
) -> None:
    """The sessions list and the session page show every time in the reader's time zone and language.

    The script is a file of the bridge's own: the pages' Content-Security-Policy refuses inline scripts.
    """
    (record,) = await store.append_many([ruling(0)])
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        page = await browser.new_page()
        refused: list[str] = []
        page.on(
            "console",
            lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
        )
        await page.goto(str(server.make_url("/log/login")))
        await page.fill("input[name=secret]", "ashes-secret")
        await page.click("button[type=submit]")
        for path in ("/log/", f"/log/{record.world}/{record.session}"):
            await page.goto(str(server.make_url(path)))
            await page.wait_for_load_state("load")
            times = page.locator("time[datetime]")
            assert await times.count() > 0, path
            for k in range(await times.count()):
                shown = await times.nth(k).text_content() or ""
                local = await times.nth(k).evaluate(  # in a table under a header naming the zone, else with it
                    "n => new Date(n.dateTime).toLocaleString(document.documentElement.lang || undefined,"
                    " n.closest('table') ? {dateStyle: n.closest('#rulings') ? 'short' : 'medium',"
                    " timeStyle: 'medium'} : {year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric',"
                    " minute: '2-digit', second: '2-digit', timeZoneName: 'short'})"
                )
                assert shown == local and not shown.startswith("2025-03-01 "), (path, shown, local)
        assert refused == []
    finally:
        await server.close()


async def test_worlds_are_read_by_their_newest_name_on_both_pages(
    store: SqlLogStore, browser: BrowserContext, backend: str
) -> None:
    """In Chromium both pages and the GM controls show a world by the newest name its clients sent.

    The sessions list, its GM controls and the session page show it as text (markup in it stays text), its id only as
    the tooltip; a world never named shows its id.
    """
    name = "Ashes <b>of</b> Kaldor"
    (record,) = await store.append_many([ruling(0, world_name="Ashes")])
    await store.append_many([ruling(1, world_name=name), ruling(2, world="w-other")])
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        page = await browser.new_page()
        await page.goto(str(server.make_url("/log/login")))
        await page.fill("input[name=secret]", "bridge-secret")
        await page.click("button[type=submit]")
        await page.goto(str(server.make_url("/log/")))
        cells = page.locator("#sessions tbody tr td:first-child .world")
        assert await cells.all_inner_texts() == ["w-other", name]
        assert await cells.nth(1).get_attribute("title") == "w-ashes"
        assert await page.locator("#sessions b").count() == 0
        await page.click("#session-controls summary")
        controls = page.locator('.world-controls[data-world="w-ashes"] strong')
        assert await controls.inner_text() == name
        await page.goto(str(server.make_url(f"/log/{record.world}/{record.session}")))
        heading = page.locator("h2 .world")
        assert (await heading.inner_text(), await heading.get_attribute("title")) == (name, "w-ashes")
    finally:
        await server.close()
