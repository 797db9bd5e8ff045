"""The log's pages as a GM meets them after a session, in a real headless Chromium over a real port.

Behind a reverse proxy on a path (``--public-url http://host/a/``, the proxy strips ``/a``), in the GM's
own time zone (the browser's), and from the keyboard. The proxy is a small aiohttp application of this
file that forwards every request under ``/a/`` to the log's port, as nginx's ``location /a/ {
proxy_pass http://127.0.0.1:8765/; }`` does (docs/operations.md).
"""

from __future__ import annotations

import contextlib
import csv
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from playwright.async_api import BrowserContext

from bridge.log.http import create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sql import SqlLogStore

from .sample import ruling
from .test_http import check_secret
from .test_pages_browser import chromium

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])  # pages, not the store: both stores serve them alike

#: Headers the proxy passes on each way (hop-by-hop ones and the length are its own business).
_REQUEST_HEADERS = ("Cookie", "Content-Type", "Accept", "Accept-Language", "Origin", "Sec-Fetch-Site", "Authorization")
_RESPONSE_HEADERS = ("Location", "Content-Type", "Content-Disposition", "Cache-Control", "Content-Security-Policy")


def path_proxy(upstream: str, prefix: str = "/a") -> web.Application:
    """A reverse proxy serving ``upstream`` under ``prefix``: ``/a/log/`` → ``upstream/log/``; redirects untouched."""

    async def forward(request: web.Request) -> web.StreamResponse:
        if not request.path.startswith(prefix + "/"):
            raise web.HTTPNotFound(text=f"not under {prefix}/ on this proxy")
        target = upstream + request.raw_path.removeprefix(prefix)
        headers = {k: v for k, v in request.headers.items() if k in _REQUEST_HEADERS}
        async with (
            aiohttp.ClientSession() as client,
            client.request(
                request.method, target, headers=headers, data=await request.read(), allow_redirects=False
            ) as answer,
        ):
            response = web.Response(status=answer.status, body=await answer.read())
            for name in _RESPONSE_HEADERS:
                if name in answer.headers:
                    response.headers[name] = answer.headers[name]
            for cookie in answer.headers.getall("Set-Cookie", []):
                response.headers.add("Set-Cookie", cookie)
            return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


@pytest.fixture
async def madrid(tmp_path: Path) -> AsyncIterator[BrowserContext]:
    """A headless Chromium with a fresh profile whose clock is in Madrid (UTC+1 in March)."""
    async with chromium(tmp_path / "profile", timezone_id="Europe/Madrid", accept_downloads=True) as context:
        yield context


@pytest.fixture
async def logged(store: SqlLogStore) -> list[RulingRecord]:
    """Eight rulings, 19:00-19:07 UTC on 1 March 2025 (20:00-20:07 in Madrid)."""
    return await store.append_many([ruling(n, world_name="Ashes of Kaldor") for n in range(8)])


@contextlib.asynccontextmanager
async def _session_page(
    store: SqlLogStore, first: RulingRecord, madrid: BrowserContext, query: str = ""
) -> AsyncIterator[tuple[TestServer, Any]]:
    """A log server on port 0 and a Madrid browser page signed in on ``first``'s session page (``?lang=en`` and
    ``query``), its rulings shown; the server closed after."""
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        page = await madrid.new_page()
        await page.goto(str(server.make_url(f"/log/{first.world}/{first.session}?lang=en{query}")))
        await page.fill("input[name=secret]", "ashes-secret")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#rulings tbody tr.ruling")
        yield server, page
    finally:
        await server.close()


async def test_behind_a_proxy_path_a_gm_signs_in_reads_draws_exports_and_signs_out(
    store: SqlLogStore, logged: list[RulingRecord], madrid: BrowserContext
) -> None:
    """Behind a proxy on /a/ every step stays under /a/: sign in, open a session, draw a ruling, export, sign out.

    Each redirect, link, script and the map's snapshot are fetched through the proxy (nothing under /log/ or /api/ at
    the proxy's top, which is another bridge's or nobody's); the export downloads under its readable name.
    """
    log = TestServer(create_log_app(check_secret=check_secret, store=store, public_url="http://127.0.0.1/a/"))
    await log.start_server()
    proxy = TestServer(path_proxy(str(log.make_url("")).rstrip("/")))
    await proxy.start_server()
    try:
        page = await madrid.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url) if "/a/" not in r.url else None)
        await page.goto(str(proxy.make_url("/a/log/")))
        assert "/a/log/login" in page.url
        await page.fill("input[name=secret]", "ashes-secret")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#sessions a")
        await page.click("#sessions tbody a")
        await page.wait_for_selector("#map g.zone")  # the snapshot came through /a/api/…
        await page.click("#rulings tbody tr.ruling >> nth=2")
        await page.locator("#map line.sight").wait_for()
        async with page.expect_download() as download:
            await page.click("a.export-csv")
        assert (await download.value).suggested_filename == "Ashes of Kaldor - 2025-03-01 19.00 UTC.csv"
        await page.click("header button[type=submit]")  # sign out
        await page.wait_for_url("**/a/log/login**")
        await page.goto(str(proxy.make_url("/a/log/")))
        assert "/a/log/login" in page.url  # signed out for good
        assert outside == [] and errors == []
    finally:
        await proxy.close()
        await log.close()


async def test_times_and_the_from_to_filter_are_in_the_gms_own_time_zone(
    store: SqlLogStore, logged: list[RulingRecord], madrid: BrowserContext
) -> None:
    """A GM in Madrid reads 8:02 PM where the log holds 19:02 UTC, headed "(Europe/Madrid)", and filters by that time.

    From 20:02 to 20:04, typed as the table shows them, finds the three rulings shown at 20:02, 20:03 and 20:04; the
    session's start outside the table names its zone.
    """
    async with _session_page(store, logged[0], madrid, "") as (_server, page):
        assert await page.inner_text("#rulings thead th >> nth=0") == "Time (Europe/Madrid)"
        assert "8:02:00 PM" in await page.inner_text("#rulings tbody tr.ruling >> nth=2 >> td.time")
        assert "GMT+1" in await page.inner_text(".session-facts time >> nth=0")
        assert "From (Europe/Madrid)" in await page.inner_text("form.filters")
        await page.fill("input[name=from]", "2025-03-01T20:02")
        await page.fill("input[name=to]", "2025-03-01T20:04")
        await page.click("#apply")
        await page.wait_for_url("**tz=Europe%2FMadrid**")
        shown = await page.locator("#rulings tbody tr.ruling").evaluate_all("(rs) => rs.map((r) => r.dataset.record)")
        assert shown == [r.id for r in logged[2:5]]
        assert await page.input_value("input[name=from]") == "2025-03-01T20:02"  # as typed, in the GM's zone


async def test_from_the_keyboard_the_table_is_one_tab_stop_and_enter_opens_a_rulings_why(
    store: SqlLogStore, logged: list[RulingRecord], madrid: BrowserContext
) -> None:
    """Arrow keys move between rows; Enter selects one, draws it and opens its why; Tab leaves the table.

    With five rows a page, the next page is one Tab after the table, not one per row.
    """
    async with _session_page(store, logged[0], madrid, "&limit=5") as (_server, page):
        await page.focus("#rulings tbody tr.ruling >> nth=0")
        await page.keyboard.press("ArrowDown")
        await page.keyboard.press("ArrowDown")
        focused = await page.evaluate("document.activeElement.dataset.record")
        assert focused == logged[2].id
        await page.keyboard.press("Enter")
        row = page.locator(f'tr[data-record="{logged[2].id}"]')
        assert await row.get_attribute("aria-selected") == "true"
        await page.locator("#map line.sight").wait_for()
        why = row.locator("details.why")
        assert await why.evaluate("(d) => d.open") is True
        assert "Poor Visibility Zone \u22126 — applied" in await why.inner_text()
        assert "Infinity N4" in await why.locator("ul.citations").inner_text()
        await page.keyboard.press("Tab")
        assert await page.evaluate("document.activeElement.id") == "next-page"
        await page.keyboard.press("Shift+Tab")
        assert await page.evaluate("document.activeElement.dataset.record") == logged[2].id  # back to the row left


async def _accessible_rows(page: Any) -> tuple[str, list[tuple[str, bool | None]]]:
    """The rulings table's role and each row's accessible name and "selected" state, as Chromium gives them to
    screen readers (its accessibility tree through the DevTools protocol)."""
    session = await page.context.new_cdp_session(page)
    table = await session.send("DOM.getDocument")
    found = await session.send("DOM.querySelector", {"nodeId": table["root"]["nodeId"], "selector": "#rulings"})
    tree = await session.send("Accessibility.getPartialAXTree", {"nodeId": found["nodeId"], "fetchRelatives": False})
    role = tree["nodes"][0]["role"]["value"]
    nodes = (await session.send("Accessibility.getFullAXTree"))["nodes"]
    rows = []
    for node in nodes:
        if node.get("role", {}).get("value") != "row" or node.get("ignored"):
            continue
        states = {p["name"]: p["value"].get("value") for p in node.get("properties", [])}
        if states.get("focusable"):  # the rulings, not the header row
            rows.append((str(node.get("name", {}).get("value", "")), states.get("selected")))
    return role, rows


async def test_a_screen_reader_is_told_which_ruling_is_selected(
    store: SqlLogStore, logged: list[RulingRecord], madrid: BrowserContext
) -> None:
    """The table is a grid whose rows say selected or not: Chromium's accessibility tree carries the state.

    Before, aria-selected on a plain table's rows reached no screen reader (the tree had no "selected").
    """
    async with _session_page(store, logged[0], madrid, "&limit=5") as (_server, page):
        await page.focus("#rulings tbody tr.ruling >> nth=0")
        await page.keyboard.press("ArrowDown")
        await page.keyboard.press("Enter")
        await page.locator("#map line.sight").wait_for()
        role, rows = await _accessible_rows(page)
        assert role == "grid"
        assert [selected for _name, selected in rows] == [False, True, False, False, False]
        assert "Fusilier" in rows[1][0]  # the row is read by its cells: who, at whom, what


async def test_newest_first_from_the_keyboard_kept_by_paging_filters_and_exports(
    store: SqlLogStore, logged: list[RulingRecord], madrid: BrowserContext
) -> None:
    """Enter on the Time header sorts the newest first; paging, a filter and the CSV export keep that order.

    The actor header sorts by name, its second Enter the other way; the headers say how the table is sorted.
    """
    extra = await store.append_many(
        [ruling(8, actor="t-ana", actor_name="ana"), ruling(9, actor="t-zoe", actor_name="Zoe")]
    )
    every = [*logged, *extra]
    async with _session_page(store, logged[0], madrid, "&limit=4") as (server, page):
        shown = "[...document.querySelectorAll('#rulings tbody tr.ruling')].map(r => r.dataset.record)"
        assert await page.evaluate(shown) == [r.id for r in every[:4]]
        await page.focus("#rulings th a.sort[data-order='-time']")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**order=-time**")
        newest = [r.id for r in reversed(every)]
        assert await page.evaluate(shown) == newest[:4]
        assert await page.get_attribute("#rulings th:first-child", "aria-sort") == "descending"
        assert await page.input_value("select[name=order]") == "-time"
        await page.click("#next-page")
        await page.wait_for_url("**cursor=**")
        assert await page.evaluate(shown) == newest[4:8]
        await page.click("#last-page")
        await page.wait_for_url("**before=**")
        assert await page.evaluate(shown) == newest[-4:]  # the four oldest: newest-first's last page
        csv_link = await page.get_attribute("a.export-csv", "href") or ""
        assert "order=-time" in csv_link
        async with aiohttp.ClientSession() as client:
            exported = await (
                await client.get(str(server.make_url(csv_link)), headers={"Authorization": "Bearer ashes-secret"})
            ).text()
        times = [row["time"] for row in csv.DictReader(io.StringIO(exported.lstrip("\ufeff")))]
        assert times == sorted(times, reverse=True) and len(times) == 10

        await page.fill("input[name=actor]", "fus")
        await page.click("#apply")
        await page.wait_for_url("**actor=fus**")
        assert "order=-time" in page.url and await page.evaluate(shown) == [r.id for r in reversed(logged)][:4]

        await page.goto(str(server.make_url(f"/log/{logged[0].world}/{logged[0].session}?lang=en&limit=4")))
        await page.focus("#rulings th a.sort[data-order='actor']")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**order=actor**")
        names = "[...document.querySelectorAll('#rulings tbody td.actor')].map(c => c.textContent)"
        assert await page.evaluate(names) == ["ana", "Fusilier", "Fusilier", "Fusilier"]
        await page.focus("#rulings th a.sort[data-order='-actor']")
        await page.keyboard.press("Enter")
        await page.wait_for_url("**order=-actor**")
        assert (await page.evaluate(names))[0] == "Zoe"
        assert await page.get_attribute("#rulings th:nth-child(3)", "aria-sort") == "descending"
