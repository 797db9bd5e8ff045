"""The log's HTTP side through aiohttp's test client: the JSON API, streamed exports, pages and secrets."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bridge.log import http as log_http
from bridge.log.export import CSV_BOM, CSV_COLUMNS
from bridge.log.http import COOKIE_NAME, create_log_app
from bridge.log.records import RulingRecord
from bridge.log.sql import SqlLogStore
from bridge.log.store import LAST_PAGE

from .sample import DOCKS, T0, ruling

BRIDGE = {"Authorization": "Bearer bridge-secret"}
ASHES = {"Authorization": "Bearer ashes-secret"}
OTHER = {"Authorization": "Bearer other-secret"}
_WORLD_SECRETS = {"w-ashes": "ashes-secret", "w-other": "other-secret"}


def check_secret(world: str | None, secret: str) -> bool:
    """The bridge's secret opens every world; a world's secret opens only its own."""
    if secret == "bridge-secret":
        return True
    return world is not None and _WORLD_SECRETS.get(world) == secret


@pytest.fixture
async def logged(store: SqlLogStore) -> list[RulingRecord]:
    """Twelve rulings in w-ashes (two actors, some denied) and one in w-other."""
    records = await store.append_many(
        [
            ruling(
                n,
                actor="t-sniper" if n % 3 == 0 else "t-fus",
                actor_name="Sniper" if n % 3 == 0 else "Fusilier",
                allowed=n % 4 != 1,
            )
            for n in range(12)
        ]
    )
    await store.append(ruling(0, world="w-other"))
    return records


@pytest.fixture
async def client(
    store: SqlLogStore, logged: list[RulingRecord]
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    """A test client of the stand-alone log application over the test store."""
    app = create_log_app(check_secret=check_secret, store=store)
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def _rulings_url(record: RulingRecord) -> str:
    return f"/api/worlds/{record.world}/sessions/{record.session}"


async def test_every_route_refuses_anonymous_and_wrong_secrets(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """Without a secret, or with another world's, every API route answers 401 and pages go to sign-in."""
    base = _rulings_url(logged[0])
    for path in (
        "/api/worlds",
        "/api/worlds/w-ashes/sessions",
        base + "/rulings",
        base + "/export.jsonl",
        base + "/export.csv",
        "/log/static/log.js",
    ):
        for headers in ({}, OTHER, {"Authorization": "Bearer nope"}):
            if path in ("/api/worlds", "/log/static/log.js") and headers is OTHER:
                continue  # any valid secret lists its own world and loads the script
            response = await client.get(path, headers=headers)
            assert response.status == 401, (path, headers)
    page = await client.get(f"/log/{logged[0].world}/{logged[0].session}", allow_redirects=False)
    assert page.status == 303 and page.headers["Location"].startswith("/log/login?")
    assert (await client.get("/log/", allow_redirects=False)).status == 303


async def test_worlds_and_sessions_by_secret(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord], store: SqlLogStore
) -> None:
    """The bridge's secret lists every world, a world's secret only its own; sessions list with counts.

    Each world comes with the name its clients sent (only for those that sent one, and only of the worlds listed).
    """
    await store.append(ruling(1, world="w-other", world_name="Other Shores"))
    everything = await (await client.get("/api/worlds", headers=BRIDGE)).json()
    assert everything == {"worlds": ["w-ashes", "w-other"], "names": {"w-other": "Other Shores"}}
    assert (await (await client.get("/api/worlds", headers=ASHES)).json()) == {"worlds": ["w-ashes"], "names": {}}
    body = await (await client.get("/api/worlds/w-ashes/sessions", headers=ASHES)).json()
    assert [(s["id"], s["rulings"]) for s in body["sessions"]] == [(logged[0].session, 12)]


async def test_rulings_filters_and_pagination(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """The rulings endpoint filters by actor and allowed and pages forwards and backwards with cursors.

    It carries snapshots by key only: the page stays small whatever the scene.
    """
    url = _rulings_url(logged[0]) + "/rulings"
    body = await (await client.get(url, headers=ASHES, params={"actor": "Sniper"})).json()
    assert [r["id"] for r in body["rulings"]] == [r.id for r in logged if r.actor.id == "t-sniper"]
    assert body["next"] is None
    assert set(body) == {"rulings", "next", "previous"} and body["rulings"][0]["snapshot"] == "snap-docks-1"
    assert body["previous"] is None
    denied = await (await client.get(url, headers=ASHES, params={"allowed": "false"})).json()
    assert [r["id"] for r in denied["rulings"]] == [r.id for r in logged if not r.allowed]
    ids: list[str] = []
    params = {"limit": "5"}
    while True:
        page = await (await client.get(url, headers=ASHES, params=params)).json()
        ids += [r["id"] for r in page["rulings"]]
        if page["next"] is None:
            break
        params = {"limit": "5", "cursor": page["next"]}
    assert ids == [r.id for r in logged]
    back: list[list[str]] = []  # from the last page back to the first, with "previous"
    while page["previous"] is not None:
        page = await (await client.get(url, headers=ASHES, params={"limit": "5", "before": page["previous"]})).json()
        back.append([r["id"] for r in page["rulings"]])
    assert back == [ids[5:10], ids[0:5]]
    both = await client.get(url, headers=ASHES, params={"cursor": page["next"], "before": page["next"]})
    assert both.status == 400 and "not both" in (await both.json())["message"]
    timed = await (
        await client.get(url, headers=ASHES, params={"from": "2025-03-01T19:02:00Z", "to": "2025-03-01T19:04:00Z"})
    ).json()
    assert len(timed["rulings"]) == 3


async def test_a_snapshot_by_key_for_the_worlds_that_refer_to_it(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """/api/worlds/{world}/snapshots/{key} gives the snapshot a ruling of that world carries, to that world only.

    A key no ruling of the world refers to is 404, another world's secret 401.
    """
    url = f"/api/worlds/{logged[0].world}/snapshots/snap-docks-1"
    response = await client.get(url, headers=ASHES)
    assert response.status == 200 and await response.json() == DOCKS.model_dump(mode="json")
    assert (await client.get(url + "x", headers=ASHES)).status == 404
    assert (await client.get("/api/worlds/w-none/snapshots/snap-docks-1", headers=BRIDGE)).status == 404
    assert (await client.get(url, headers=OTHER)).status == 401


async def test_a_snapshot_asked_again_with_its_etag_is_304_without_a_body(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """A snapshot carries an ETag; If-None-Match with it answers 304 and no body, but never for another world.

    Snapshots are immutable by key, so a browser redrawing a 4.6 MiB scene need not fetch it again.
    """
    url = f"/api/worlds/{logged[0].world}/snapshots/snap-docks-1"
    first = await client.get(url, headers=ASHES)
    etag = first.headers.get("ETag")
    assert first.status == 200 and etag and etag.startswith('"')
    again = await client.get(url, headers={**ASHES, "If-None-Match": etag})
    assert again.status == 304 and await again.read() == b"" and again.headers["ETag"] == etag
    listed = await client.get(url, headers={**ASHES, "If-None-Match": f'"other", W/{etag}'})
    assert listed.status == 304
    stale = await client.get(url, headers={**ASHES, "If-None-Match": '"something-else"'})
    assert stale.status == 200 and await stale.json() == DOCKS.model_dump(mode="json")
    assert stale.headers["ETag"] == etag  # the same body, from the bridge's cache of encoded snapshots
    foreign = "/api/worlds/w-none/snapshots/snap-docks-1"
    assert (await client.get(foreign, headers={**BRIDGE, "If-None-Match": etag})).status == 404
    assert (await client.get(url, headers={**OTHER, "If-None-Match": etag})).status == 401


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The key of each snapshot the log's HTTP side encodes, in order (its body cache spares the others)."""
    keys: list[str] = []
    real = log_http.encode_snapshot

    def counting(snapshot: Any) -> bytes:
        keys.append(snapshot.key)
        return real(snapshot)

    monkeypatch.setattr(log_http, "encode_snapshot", counting)
    return keys


async def test_a_snapshot_read_again_is_sent_from_the_cache_without_encoding_it_again(
    store: SqlLogStore, logged: list[RulingRecord], encoded: list[str]
) -> None:
    """A second read of a snapshot sends the kept bytes, encoded once; the cache skips no world check.

    A world none of whose rulings refer to it gets 404 even once it is kept, and another world's secret 401.
    """
    await store.append(ruling(0, world="w-third", snapshot=None))  # a world that exists, without that snapshot
    app = create_log_app(check_secret=check_secret, store=store)
    async with TestClient(TestServer(app)) as client:
        url = f"/api/worlds/{logged[0].world}/snapshots/snap-docks-1"
        first = await client.get(url, headers=ASHES)
        second = await client.get(url, headers=ASHES)  # no If-None-Match: a whole body again
        assert (first.status, second.status) == (200, 200)
        assert await first.read() == await second.read() == DOCKS.model_dump_json().encode()
        assert encoded == ["snap-docks-1"]  # the second body came from the cache
        kept = app[log_http.LOG_SNAPSHOT_BODIES].get("snap-docks-1")
        assert kept is not None and kept == await second.read()
        for foreign in ("/api/worlds/w-third/snapshots/snap-docks-1", "/api/worlds/w-none/snapshots/snap-docks-1"):
            refused = await client.get(foreign, headers=BRIDGE)
            assert refused.status == 404 and await refused.read() != kept, foreign
        assert (await client.get(url, headers=OTHER)).status == 401
        assert encoded == ["snap-docks-1"]


async def test_the_snapshot_cache_keeps_at_most_its_bytes_and_drops_the_least_recently_read(
    store: SqlLogStore, logged: list[RulingRecord], encoded: list[str]
) -> None:
    """A body over the cache's bound is encoded on every read, never kept; the least recently read goes first.

    Over the bound in all, the body read longest ago is dropped (a read keeps a body recent).
    """
    size = len(DOCKS.model_dump_json().encode())
    app = create_log_app(check_secret=check_secret, store=store)
    app[log_http.LOG_SNAPSHOT_BODIES] = log_http._SnapshotBodies(most_bytes=size - 1)
    async with TestClient(TestServer(app)) as client:
        url = f"/api/worlds/{logged[0].world}/snapshots/snap-docks-1"
        for _ in range(2):
            assert (await client.get(url, headers=ASHES)).status == 200
        assert encoded == ["snap-docks-1", "snap-docks-1"]  # too big to keep: encoded each time
        assert app[log_http.LOG_SNAPSHOT_BODIES].get("snap-docks-1") is None

    bodies = log_http._SnapshotBodies(most_bytes=10)
    bodies.put("a", b"aaaa")
    bodies.put("b", b"bbbb")
    assert bodies.get("a") == b"aaaa"  # read: now the most recent
    bodies.put("c", b"cccc")  # 12 bytes > 10: the least recently read ("b") goes
    assert (bodies.get("a"), bodies.get("b"), bodies.get("c")) == (b"aaaa", None, b"cccc")
    bodies.put("huge", b"x" * 11)
    assert bodies.get("huge") is None and bodies.get("a") == b"aaaa"  # over the bound: not kept, nothing evicted


async def test_rulings_in_another_order_page_through_and_a_bad_order_is_named(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """order=-time gives the newest first, page after page through next; an unknown order is 400 naming order."""
    url = _rulings_url(logged[0]) + "/rulings"
    seen: list[str] = []
    params = {"order": "-time", "limit": "5"}
    while True:
        body = await (await client.get(url, headers=ASHES, params=params)).json()
        seen += [r["id"] for r in body["rulings"]]
        if body["next"] is None:
            break
        params = {"order": "-time", "limit": "5", "cursor": body["next"]}
    assert seen == [r.id for r in reversed(logged)]
    bad = await client.get(url, headers=ASHES, params={"order": "name"})
    assert bad.status == 400 and "order must be one of" in (await bad.json())["message"]
    export = await client.get(_rulings_url(logged[0]) + "/export.jsonl", headers=ASHES, params={"order": "-time"})
    assert [json.loads(line)["id"] for line in (await export.text()).splitlines()] == seen


async def test_bad_queries_and_unknown_sessions(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """Unreadable filters answer 400 naming the parameter; another world's session is 404."""
    url = _rulings_url(logged[0]) + "/rulings"
    for params in ({"allowed": "maybe"}, {"from": "yesterday"}, {"limit": "0"}, {"cursor": "zzz"}):
        response = await client.get(url, headers=ASHES, params=params)
        assert response.status == 400, params
    foreign = await client.get(f"/api/worlds/w-other/sessions/{logged[0].session}/rulings", headers=BRIDGE)
    assert foreign.status == 404


async def test_exports_stream_jsonl_and_csv(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """export.jsonl gives every record whole (snapshot included); export.csv a header and a row each."""
    url = _rulings_url(logged[0])
    response = await client.get(url + "/export.jsonl", headers=ASHES)
    assert response.status == 200 and response.headers["Content-Type"].startswith("application/x-ndjson")
    assert "attachment" in response.headers["Content-Disposition"]
    lines = (await response.text()).splitlines()
    assert [RulingRecord.model_validate(json.loads(line)) for line in lines] == logged
    text = await (await client.get(url + "/export.csv", headers=ASHES)).text()
    rows = list(csv.reader(io.StringIO(text.removeprefix(CSV_BOM))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 13
    assert rows[1][CSV_COLUMNS.index("actor_name")] == "Sniper"
    md = await (await client.get(url + "/export.md", headers=ASHES)).text()
    assert md.startswith("| Time (UTC) |") and md.count("\n") == 14 and "| BS Attack |" in md


async def test_login_sets_httponly_cookie_and_pages_render(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """Signing in with a world's secret sets an HttpOnly cookie opening its pages, in English or Spanish."""
    bad = await client.post("/log/login", data={"secret": "nope", "next": "/log/"}, allow_redirects=False)
    assert bad.status == 401
    session_path = f"/log/{logged[0].world}/{logged[0].session}"
    good = await client.post("/log/login", data={"secret": "ashes-secret", "next": session_path}, allow_redirects=False)
    assert good.status == 303 and good.headers["Location"] == session_path
    cookie = good.headers["Set-Cookie"]
    assert COOKIE_NAME in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "ashes-secret" not in cookie  # the cookie is a random sign-in token, never the secret
    listing = await client.get("/log/")
    assert listing.status == 200 and str(logged[0].session) in await listing.text()
    page = await (await client.get(session_path)).text()
    assert page.count('class="ruling') == 12 and '">Time<span class="tz"' in page and "BS Attack" in page
    assert '<time datetime="' in page and " UTC</time>" in page  # UTC until log.js shows local time
    spanish = await (await client.get(session_path, headers={"Accept-Language": "es-ES,es;q=0.9,en;q=0.5"})).text()
    assert 'lang="es"' in spanish and '">Hora<span class="tz"' in spanish and "Ataque CD" in spanish
    assert '">Hora<span class="tz"' in await (await client.get(session_path + "?lang=es")).text()
    filtered = await (await client.get(session_path, params={"actor": "Sniper"})).text()
    assert filtered.count('class="ruling') == 4
    assert (await client.get("/log/w-other/" + str(logged[0].session), allow_redirects=False)).status == 404
    token = client.session.cookie_jar.filter_cookies(client.make_url("/log/"))[COOKIE_NAME].value
    out = await client.post("/log/logout", allow_redirects=False)
    assert out.status == 303
    assert (await client.get("/log/", allow_redirects=False)).status == 303
    replayed = await client.get("/log/", cookies={COOKIE_NAME: token}, allow_redirects=False)
    assert replayed.status == 303  # a signed-out token opens nothing any more


async def test_login_never_redirects_off_the_log(client: TestClient[web.Request, web.Application]) -> None:
    """The sign-in form's next target is kept inside /log/ (no open redirect)."""
    response = await client.post(
        "/log/login", data={"secret": "bridge-secret", "next": "//evil.example/"}, allow_redirects=False
    )
    assert response.headers["Location"] == "/log/"


async def test_the_session_page_and_the_api_page_are_made_off_the_event_loop(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session page's HTML and an API page's JSON are made in worker threads, never on the event loop.

    Every world is served on that loop: reading the largest session does not hold up the others.
    """
    made: list[tuple[str, threading.Thread]] = []
    page_of, json_of = log_http.session_page, log_http._ruling_json

    def page(*args: Any, **kwargs: Any) -> str:
        made.append(("page", threading.current_thread()))
        return page_of(*args, **kwargs)

    def one(*args: Any, **kwargs: Any) -> dict[str, Any]:
        made.append(("api", threading.current_thread()))
        return json_of(*args, **kwargs)

    monkeypatch.setattr(log_http, "session_page", page)
    monkeypatch.setattr(log_http, "_ruling_json", one)
    session_path = f"/log/{logged[0].world}/{logged[0].session}"
    await client.post("/log/login", data={"secret": "ashes-secret", "next": session_path}, allow_redirects=False)
    assert (await client.get(session_path)).status == 200
    assert len((await (await client.get(_rulings_url(logged[0]) + "/rulings", headers=ASHES)).json())["rulings"]) == 12
    assert {kind for kind, _ in made} == {"page", "api"}
    assert all(thread is not threading.main_thread() for _, thread in made)


async def test_from_and_to_are_read_in_the_readers_time_zone_and_to_takes_its_whole_minute(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord], store: SqlLogStore
) -> None:
    """from/to without an offset are in tz (the zone the page shows); a to given to the minute keeps that whole minute.

    The rulings are 19:00-19:11 UTC, 20:00-20:11 in Madrid; a tz the bridge does not know is a 400 naming tz.
    """
    await store.append(ruling(100, at=T0 + timedelta(minutes=3, seconds=30)))  # 20:03:30 in Madrid
    url = _rulings_url(logged[0]) + "/rulings"
    params = {"from": "2025-03-01T20:02", "to": "2025-03-01T20:03", "tz": "Europe/Madrid"}
    body = await (await client.get(url, headers=ASHES, params=params)).json()
    assert [r["time"][11:19] for r in body["rulings"]] == ["19:02:00", "19:03:00", "19:03:30"]
    utc = await (await client.get(url, headers=ASHES, params={"from": "2025-03-01T19:10"})).json()
    assert len(utc["rulings"]) == 2  # no tz: UTC, as before
    day = await (await client.get(url, headers=ASHES, params={"to": "2025-03-01"})).json()
    assert len(day["rulings"]) == 13  # a to given to the day keeps the whole day
    bad = await client.get(url, headers=ASHES, params={**params, "tz": "Mars/Olympus_Mons"})
    assert bad.status == 400 and "tz" in (await bad.json())["message"]


async def test_the_last_page_is_one_link_away_and_has_no_next_page(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """before=LAST_PAGE gives the newest rulings (with a previous page, no next); the session page links to it."""
    url = _rulings_url(logged[0]) + "/rulings"
    last = await (await client.get(url, headers=ASHES, params={"limit": "5", "before": LAST_PAGE})).json()
    assert [r["id"] for r in last["rulings"]] == [r.id for r in logged[-5:]]
    assert last["next"] is None and last["previous"] is not None
    await client.post("/log/login", data={"secret": "ashes-secret", "next": "/log/"})
    page = await (await client.get(f"/log/{logged[0].world}/{logged[0].session}", params={"limit": "5"})).text()
    assert 'id="last-page"' in page
    shown = await (
        await client.get(f"/log/{logged[0].world}/{logged[0].session}", params={"limit": "5", "before": LAST_PAGE})
    ).text()
    assert 'id="next-page"' not in shown and 'id="last-page"' not in shown and 'id="previous-page"' in shown


async def test_exports_are_named_by_world_and_session_and_csv_opens_with_a_bom(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord], store: SqlLogStore
) -> None:
    """A downloaded export is named as the pages name world and session, never by ids; the CSV opens with a BOM."""
    await store.append(ruling(50, world_name="Cenizas: «Ñ»"))
    url = _rulings_url(logged[0])
    response = await client.get(url + "/export.csv", headers=ASHES)
    disposition = response.headers["Content-Disposition"]
    assert "filename*=UTF-8''Cenizas_%20%C2%AB%C3%91%C2%BB%20-%202025-03-01%2019.00%20UTC.csv" in disposition
    assert 'filename="Cenizas_ _ - 2025-03-01 19.00 UTC.csv"' in disposition
    assert str(logged[0].session) not in disposition and "w-ashes" not in disposition
    body = await response.read()
    assert body.startswith(b"\xef\xbb\xbfid,kind,")
    md = await client.get(url + "/export.md", headers=ASHES)
    assert not (await md.read()).startswith(b"\xef\xbb\xbf")  # only the CSV, for spreadsheets


async def test_behind_a_proxy_path_redirects_and_the_cookie_stay_under_it(store: SqlLogStore) -> None:
    """With --public-url http://…/a/ every redirect goes under /a/ and the sign-in cookie's path is /a/."""
    (record,) = await store.append_many([ruling(0)])
    app = create_log_app(check_secret=check_secret, store=store, public_url="http://127.0.0.1/a/")
    async with TestClient(TestServer(app)) as client:
        path = f"/log/{record.world}/{record.session}"
        anonymous = await client.get(path, allow_redirects=False)
        assert anonymous.status == 303 and anonymous.headers["Location"].startswith("/a/log/login?")
        signed = await client.post("/log/login", data={"secret": "ashes-secret", "next": path}, allow_redirects=False)
        assert signed.headers["Location"] == "/a" + path and "Path=/a/" in signed.headers["Set-Cookie"]
        assert (await client.get("/log", allow_redirects=False)).headers["Location"] == "/a/log/"
        out = await client.post("/log/logout", allow_redirects=False)
        assert out.headers["Location"].startswith("/a/log/login") and "Path=/a/" in out.headers["Set-Cookie"]


async def test_a_sign_in_that_ended_says_so_and_another_worlds_page_is_not_found(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """A cookie the bridge no longer knows goes to the form saying the sign-in ended (and is cleared).

    Signed in for one world, another world's session page is a 404 with the way back, not the sign-in form again.
    """
    path = f"/log/{logged[0].world}/{logged[0].session}"
    stale = await client.get(path, cookies={COOKIE_NAME: "from-before-a-restart"}, allow_redirects=False)
    assert stale.status == 303 and "ended=1" in stale.headers["Location"]
    assert f"{COOKIE_NAME}=" in stale.headers["Set-Cookie"] and "Max-Age=0" in stale.headers["Set-Cookie"]
    form = await (await client.get(stale.headers["Location"])).text()
    assert "Your sign-in has ended" in form and 'role="alert"' in form
    assert "ended" not in await (await client.get("/log/login")).text()
    await client.post("/log/login", data={"secret": "ashes-secret", "next": "/log/"})
    foreign = await client.get(f"/log/w-other/{logged[0].session}", allow_redirects=False)
    text = await foreign.text()
    assert foreign.status == 404 and "No such session" in text and 'href="/log/?lang=en"' in text


async def test_the_session_page_names_the_zones_a_ruling_crossed_by_the_names_the_gm_gave_them(
    client: TestClient[web.Request, web.Application], logged: list[RulingRecord]
) -> None:
    """The page names a crossed region as the GM named it ("through Poor Visibility Zone (Fog)"), as the Markdown does.

    The page's rulings carry their snapshot by key only; the names come from the session's latest snapshot.
    """
    await client.post("/log/login", data={"secret": "ashes-secret", "next": "/log/"})
    page = await (await client.get(f"/log/{logged[0].world}/{logged[0].session}")).text()
    assert page.count('<td class="crossings">through Poor Visibility Zone (Fog)</td>') == 12
    md = await (await client.get(_rulings_url(logged[0]) + "/export.md")).text()
    assert "| through Poor Visibility Zone (Fog) |" in md
