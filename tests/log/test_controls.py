"""The GM's controls on the log pages (bridge.log.controls): start, name and end a game session and override a
ruling with a reason — through a real aiohttp server over a real store (SQLite and PostgreSQL), signed in with
the page's cookie; cross-site posts, other worlds' secrets and bad forms are refused and change nothing. Then
the same in headless Chromium: sign in, start a named session, override a ruling from the form."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import BrowserContext

from bridge.log.controls import override_controls, parse_override_form, with_controls
from bridge.log.http import create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sql import SqlLogStore
from bridge.log.store import LoggedSession

from .sample import ruling
from .test_http import ASHES, check_secret
from .test_pages_browser import (
    browser,  # noqa: F401 - the shared headless Chromium fixture
    chromium,
)

SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}


def _choices(page: str) -> int:
    """How many rulings the page's override form offers."""
    form = page[page.index('id="override-form"') :]
    return form[: form.index("</form>")].count("<option value=")


@pytest.fixture
async def logged(store: SqlLogStore) -> list[RulingRecord]:
    """Four rulings of one open session in w-ashes, one in w-other."""
    records = await store.append_many([ruling(n, allowed=n != 2) for n in range(4)])
    await store.append(ruling(0, world="w-other"))
    return records


@pytest.fixture
async def client(
    store: SqlLogStore, logged: list[RulingRecord]
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    """A client of the log application on a real port, signed in with w-ashes's secret (the page cookie)."""
    app = create_log_app(check_secret=check_secret, store=store)
    async with TestClient(TestServer(app)) as test_client:
        signed = await test_client.post("/log/login", data={"secret": "ashes-secret"}, allow_redirects=False)
        assert signed.status == 303
        yield test_client


async def test_a_signed_in_gm_starts_a_named_session_and_ends_it(
    client: TestClient[web.Request, web.Application], store: SqlLogStore, logged: list[RulingRecord]
) -> None:
    """Start closes the open session and opens the named one (shown at once); End closes it; End again is harmless."""
    listing = await (await client.get("/log/")).text()
    assert 'id="session-controls"' in listing and 'action="/log/w-ashes/session/start?lang=en"' in listing
    assert "w-other" not in listing  # another world's controls are not offered
    started = await client.post(
        "/log/w-ashes/session/start", data={"name": "  Docks, night 2 "}, headers=SAME_ORIGIN, allow_redirects=False
    )
    assert started.status == 303
    sessions = await store.list_sessions("w-ashes")
    new, old = sessions[0], next(s for s in sessions if s.id == logged[0].session)
    assert (new.name, new.ended) == ("Docks, night 2", None) and old.ended is not None
    assert started.headers["Location"] == f"/log/w-ashes/{new.id}?lang=en"
    assert "Open now: Docks, night 2" in await (await client.get("/log/")).text()

    ended = await client.post("/log/w-ashes/session/end", headers=SAME_ORIGIN, allow_redirects=False)
    assert (ended.status, ended.headers["Location"]) == (303, "/log/?lang=en")
    assert (await store.get_session(new.id)).ended is not None  # type: ignore[union-attr]
    again = await client.post("/log/w-ashes/session/end", headers=SAME_ORIGIN, allow_redirects=False)
    assert again.status == 303
    assert 'class="session-end"' not in await (await client.get("/log/")).text()  # nothing open: no End button


async def test_a_gm_overrides_a_ruling_with_a_reason_beside_the_original(
    client: TestClient[web.Request, web.Application], store: SqlLogStore, logged: list[RulingRecord]
) -> None:
    """The override is a record of its own (reason, new verdict, who) pointing at the untouched original."""
    page_url = f"/log/w-ashes/{logged[0].session}"
    page = await (await client.get(page_url)).text()
    assert _choices(page) == 0 and '<input type="hidden" name="record" value="">' in page  # a script fills it
    assert _choices(await (await client.get(page_url, params={"override": "list"})).text()) == 4  # without script
    original = logged[2]
    posted = await client.post(
        f"{page_url}/override",
        data={"record": str(original.id), "allowed": "true", "modifier": "-3", "reason": "the smoke had cleared"},
        headers=SAME_ORIGIN,
        allow_redirects=False,
    )
    assert (posted.status, posted.headers["Location"]) == (303, f"{page_url}?lang=en")
    page = await store.query("w-ashes", logged[0].session)
    override = next(r for r in page.records if r.kind == "override")
    assert (override.overrides, override.allowed, override.modifier, override.reason) == (
        original.id,
        True,
        -3,
        "the smoke had cleared",
    )
    assert override.user is not None and override.user.name == "GM (log page)"
    assert await store.get_record("w-ashes", str(original.id)) == original
    shown = await (await client.get(page_url)).text()
    assert "the smoke had cleared" in shown
    listed = await (await client.get(page_url, params={"override": "list"})).text()
    assert _choices(listed) == 4  # overrides are not offered
    blocked = await client.post(
        f"{page_url}/override?lang=es",
        data={"record": str(logged[0].id), "reason": "muro"},  # no "allowed": the action is not allowed
        headers=SAME_ORIGIN,
        allow_redirects=False,
    )
    assert blocked.status == 303
    latest = (await store.query("w-ashes", logged[0].session)).records[-1]
    assert latest.user is not None
    assert (latest.allowed, latest.modifier, latest.user.name) == (False, None, "DJ (página del registro)")


async def test_cross_site_anonymous_and_other_worlds_posts_change_nothing(
    client: TestClient[web.Request, web.Application], store: SqlLogStore, logged: list[RulingRecord]
) -> None:
    """Posts from another site, without a sign-in or with another world's secret are refused; the log is as it was.

    A post another site makes the browser send (Sec-Fetch-Site, or a foreign Origin) is 403; without a sign-in 401; with
    another world's secret 401.
    """
    before = await store.list_sessions()
    override = f"/log/w-ashes/{logged[0].session}/override"
    form = {"record": str(logged[0].id), "allowed": "true", "modifier": "1", "reason": "x"}
    for headers in (
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://evil.example"},
    ):
        for path in ("/log/w-ashes/session/start", "/log/w-ashes/session/end", override):
            response = await client.post(path, data=form, headers=headers, allow_redirects=False)
            assert response.status == 403, (path, headers)
            assert "cross-site request refused" in await response.text()
    client.session.cookie_jar.clear()
    assert (await client.post("/log/w-ashes/session/end", allow_redirects=False)).status == 401
    other = {"Authorization": "Bearer other-secret"}
    assert (await client.post("/log/w-ashes/session/start", headers=other, allow_redirects=False)).status == 401
    assert (await client.post(override, data=form, headers=other, allow_redirects=False)).status == 401
    assert await store.list_sessions() == before
    assert len((await store.query("w-ashes", logged[0].session)).records) == 4


async def test_bad_forms_are_named_and_change_nothing(
    client: TestClient[web.Request, web.Application], store: SqlLogStore, logged: list[RulingRecord]
) -> None:
    """A bad form gets a 4xx page naming the field, in the reader's language, and changes nothing.

    No reason, a broken modifier, a ruling of another session or world, a name too long are each refused so; a script
    with the world's secret (no browser headers) is served.
    """
    override = f"/log/w-ashes/{logged[0].session}/override"
    cases = [
        ({"record": str(logged[0].id), "allowed": "true", "modifier": "-2", "reason": "  "}, 400, "reason"),
        ({"record": str(logged[0].id), "allowed": "true", "modifier": "2.5", "reason": "x"}, 400, "modifier"),
        ({"record": str(logged[0].id), "allowed": "true", "modifier": "-500", "reason": "x"}, 400, "modifier"),
        ({"record": "r-unknown", "allowed": "true", "modifier": "1", "reason": "x"}, 404, "record"),
    ]
    other_world = (await store.query("w-other", None)).records[0]
    cases.append(({"record": str(other_world.id), "reason": "x"}, 404, "record"))
    for form, status, field in cases:
        response = await client.post(override, data=form, headers=SAME_ORIGIN, allow_redirects=False)
        assert response.status == status, form
        assert f"{field}:" in await response.text()
    long_name = await client.post(
        "/log/w-ashes/session/start?lang=es", data={"name": "x" * 201}, headers=SAME_ORIGIN, allow_redirects=False
    )
    assert long_name.status == 400 and "nombre:" in await long_name.text()
    assert len((await store.query("w-ashes", logged[0].session)).records) == 4
    assert len(await store.list_sessions("w-ashes")) == 1
    client.session.cookie_jar.clear()
    scripted = await client.post(
        "/log/w-ashes/session/start", data={"name": "API"}, headers=ASHES, allow_redirects=False
    )
    assert scripted.status == 303 and (await store.list_sessions("w-ashes"))[0].name == "API"


def test_the_override_form_carries_no_row_of_a_long_page_unless_asked_for_the_list() -> None:
    """A 1,000-row page's override form is under 2 KB and names no row; override=list (no script) lists them.

    The chosen row fills the form; the form's link without script keeps the page's query and adds override=list.

    Before, every page's form listed every ruling: 124,816 bytes of the 1,000-row page.
    """
    session = LoggedSession(id="s-1", world="w-ashes", started="2025-03-01T19:00:00.000000Z", last_activity="x")
    rows = [ruling(n).model_copy(update={"id": f"01ROW{n:021d}", "session": "s-1"}) for n in range(1000)]
    query = {"actor": "Sniper", "cursor": "abc", "limit": "1000", "override": "list"}
    form = override_controls("en", session, rows, query=query)
    assert len(form.encode()) < 2000 and "01ROW" not in form
    assert "<fieldset disabled>" in form and 'name="record" value=""' in form
    link = re.search(r'<noscript><p><a id="override-list" href="([^"]+)"', form)
    assert link is not None
    assert html.unescape(link.group(1)) == (
        "/log/w-ashes/s-1?actor=Sniper&cursor=abc&limit=1000&lang=en&override=list#override-controls"
    )
    listed = override_controls("es", session, rows, listed=True)
    assert listed.count("<option value=") == 1000 and "<fieldset>" in listed and " open>" in listed
    assert "noscript" not in listed


def test_the_form_reader_and_the_page_insertion() -> None:
    """An unticked box means not allowed (modifier dropped); controls go first in <main>."""
    posted = parse_override_form({"record": "r1", "modifier": "4", "reason": " wall "}, "en")
    assert (posted.allowed, posted.modifier, posted.reason) == (False, None, "wall")
    assert parse_override_form({"record": "r1", "allowed": "on", "modifier": "", "reason": "r"}, "en").modifier == 0
    page = "<html><body><header>h</header><main><h2>x</h2></main></body></html>"
    merged = with_controls(page, "<form>c</form>")
    assert merged.index("<main>") < merged.index("<form>c</form>") < merged.index("<h2>")
    assert with_controls(page, "").count("<style>") == 0


async def test_in_chromium_a_gm_starts_a_session_and_overrides_from_the_pages(
    store: SqlLogStore,
    browser: BrowserContext,  # noqa: F811 - the fixture imported above
    backend: str,
    tmp_path: Path,
) -> None:
    """In Chromium a GM starts a session and overrides one of its rulings from the pages, reason and all.

    Real browser, real headers (Sec-Fetch-Site: same-origin): sign in, start "Docks, night 3", then override a ruling of
    the new session chosen by clicking its row; the table shows the override and its reason.
    """
    await store.append(ruling(0))
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        page = await browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        await page.goto(str(server.make_url("/log/")))
        await page.fill("input[name=secret]", "ashes-secret")
        await page.click("button[type=submit]")
        await page.click("#session-controls summary")
        await page.fill("#session-controls input[name=name]", "Docks, night 3")
        await page.click("#session-controls button.session-start")
        await page.wait_for_selector("h2:has-text('Docks, night 3')")
        session = (await store.list_sessions("w-ashes"))[0]
        assert session.name == "Docks, night 3"
        await store.append_many([ruling(1, session=session.id), ruling(2, session=session.id)])
        await page.reload()
        await page.click("#override-controls summary")
        assert await page.is_disabled("#override-form textarea[name=reason]")  # no ruling chosen yet
        assert (await page.inner_text("#override-ruling")).startswith("Choose the ruling to override in the table")
        chosen = (await store.query("w-ashes", session.id)).records[1]  # not the first row
        await page.click(f'tr[data-record="{chosen.id}"]')  # choosing the row chooses it in the form
        assert await page.input_value("#override-form input[name=record]") == chosen.id
        described = await page.inner_text("#override-ruling")
        assert "Fusilier → Target t-tgt · BS Attack" in described and chosen.id not in described
        await page.uncheck("#override-form input[name=allowed]")
        await page.fill("#override-form textarea[name=reason]", "a wall the scene did not have")
        await page.click("#override-save")
        await page.wait_for_selector("#rulings tr.override")
        assert "a wall the scene did not have" in await page.inner_text("#rulings tr.override")
        override = (await store.query("w-ashes", session.id)).records[-1]
        assert (override.kind, override.overrides, override.allowed) == ("override", chosen.id, False)
        assert errors == []
    finally:
        await server.close()


async def test_without_script_a_gm_overrides_a_ruling_chosen_from_the_forms_list(
    store: SqlLogStore, backend: str, tmp_path: Path
) -> None:
    """In Chromium with JavaScript off, the form's link lists the page's rulings; one chosen there is overridden.

    The page itself lists none (the form's fields stay disabled until a script fills them): without script the GM
    follows the link, which reloads the same page (filters kept) with the list, and posts the form from there.
    """
    first = await store.append(ruling(0))
    await store.append_many([ruling(1, session=first.session), ruling(2, session=first.session, actor_name="Sniper")])
    server = TestServer(create_log_app(check_secret=check_secret, store=store))
    await server.start_server()
    try:
        async with chromium(tmp_path / "profile", java_script_enabled=False) as context:
            page = await context.new_page()
            await page.goto(str(server.make_url(f"/log/w-ashes/{first.session}?actor=sni")))
            await page.fill("input[name=secret]", "ashes-secret")
            await page.click("button[type=submit]")
            await page.wait_for_selector("#rulings tbody tr.ruling")
            await page.click("#override-controls summary")
            assert await page.is_disabled("#override-form textarea[name=reason]")
            assert await page.inner_text("#override-ruling") == ""  # "a click on a row" would not work here
            await page.click("#override-list")
            await page.wait_for_url("**override=list**")
            assert "actor=sni" in page.url
            options = page.locator("#override-form select[name=record] option")
            assert await options.count() == 1  # the page's rulings: the filter kept
            chosen = await options.first.get_attribute("value")
            await page.select_option("#override-form select[name=record]", chosen)
            await page.fill("#override-form input[name=modifier]", "-3")
            await page.fill("#override-form textarea[name=reason]", "smoke, seen from the window")
            await page.click("#override-save")
            await page.wait_for_selector("#rulings tr.override")
            override = (await store.query("w-ashes", first.session)).records[-1]
            assert (override.kind, override.overrides, override.modifier) == ("override", chosen, -3)
            assert override.reason == "smoke, seen from the window"
    finally:
        await server.close()
