"""The log on the bridge's HTTP port: a JSON API, streamed exports and the GM pages.

Wire it into the bridge's application with :func:`setup_log` (routes under ``/api/`` and ``/log/``),
or run it alone with :func:`create_log_app`. Every route needs a secret, checked by the injected
``check_secret(world, secret)``: ``world`` is ``None`` for "the bridge-wide secret?". A request carries
its secret as ``Authorization: Bearer <secret>``, or — for the pages — in the HttpOnly cookie the
sign-in form sets. A world's secret sees only its world; the bridge's secret sees all of them.

JSON API
  ``GET /api/worlds`` → ``{"worlds": [...]}``
  ``GET /api/worlds/{world}/sessions`` → ``{"sessions": [...]}``
  ``GET /api/worlds/{world}/sessions/{session}/rulings``
  (query: ``actor target action allowed from to limit cursor before order``; ``actor``, ``target`` and
  ``action`` match any part of a name or label, whatever its case; ``order``: ``time`` (default),
  ``-time`` (newest first), ``actor``, ``target``, ``mod``, each reversed by a leading ``-``)
  → ``{"rulings": [...], "next": cursor-or-null, "previous": cursor-or-null}``, streamed (each
  ruling's ``snapshot`` is a key; ``before=previous`` gives the page before)
  ``GET /api/worlds/{world}/snapshots/{key}`` → one scene snapshot (of a ruling of that world), with an
  ``ETag``: ``If-None-Match`` with it → 304
  ``GET /api/worlds/{world}/sessions/{session}/export.{jsonl,csv,md}`` → the whole session, streamed
  (in ``order``).
  ``GET /api/worlds/{world}/sessions/{session}/rejudge`` (query: ``ruleset edition all`` and the
  rulings' filters, ``limit``, ``cursor``) → one page judged again (``sightline log rejudge``).
Pages: ``/log/`` (sessions), ``/log/{world}/{session}`` (rulings, filters, map), ``/log/login``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from aiohttp import web

from ..throttle import FailureThrottle, client_address
from .controls import WORDS, override_controls, parse_override_form, parse_session_name, session_controls, with_controls
from .export import FORMATS
from .i18n import TEXTS, pick_language
from .pages import login_page, session_page, sessions_page
from .records import Party, RulingRecord, SceneSnapshot
from .rejudge import Rejudge, RejudgeError
from .rejudge_output import outcome_wire, why_text
from .store import DEFAULT_IDLE_TIMEOUT, LoggedSession, LogStore, RulingFilter, check_order, open_store

__all__ = [
    "COOKIE_NAME",
    "LOG_CHECK_SECRET",
    "LOG_SECRET_WORLDS",
    "LOG_STORE",
    "LOG_THROTTLE",
    "SecretCheck",
    "SecretWorlds",
    "SignIns",
    "create_log_app",
    "log_routes",
    "log_store_context",
    "setup_log",
]

#: ``check_secret(world, secret)``: may ``secret`` read ``world``'s log (``None``: every world's)?
SecretCheck = Callable[[str | None, str], bool]
#: ``secret_worlds(secret)``: the worlds ``secret`` is the own secret of, whether they have a session yet or not.
SecretWorlds = Callable[[str], frozenset[str]]

LOG_STORE: Final = web.AppKey[LogStore]("sightline_log_store")
LOG_CHECK_SECRET: Final = web.AppKey[SecretCheck]("sightline_log_check_secret")
LOG_SECRET_WORLDS: Final = web.AppKey[SecretWorlds | None]("sightline_log_secret_worlds")
#: Sign-ins kept per secret: a GM's browsers and devices. One more signs out that secret's oldest — never
#: another secret's, so one world's sign-ins cannot evict another world's.
MAX_SIGN_INS_PER_SECRET: Final = 32


class SignIns:
    """Signed-in browsers: a random token (the cookie) → the secret it signed in with, bounded per secret.

    The secret itself never goes into a cookie; a bridge restart signs everyone out. Only secrets that
    opened something are ever kept, so the table is bounded by the configured secrets times
    :data:`MAX_SIGN_INS_PER_SECRET`.
    """

    def __init__(self, per_secret: int = MAX_SIGN_INS_PER_SECRET) -> None:
        self.per_secret = per_secret
        self._secret_of: dict[str, str] = {}
        self._tokens_of: dict[str, OrderedDict[str, None]] = {}

    def add(self, secret: str) -> str:
        """A new token for ``secret``; the secret's oldest sign-in goes if it already has its fill."""
        tokens = self._tokens_of.setdefault(secret, OrderedDict())
        while len(tokens) >= self.per_secret:
            oldest, _ = tokens.popitem(last=False)
            self._secret_of.pop(oldest, None)
        token = secrets.token_urlsafe(32)
        tokens[token] = None
        self._secret_of[token] = secret
        return token

    def get(self, token: str) -> str | None:
        return self._secret_of.get(token)

    def remove(self, token: str) -> None:
        secret = self._secret_of.pop(token, None)
        if secret is not None:
            tokens = self._tokens_of.get(secret)
            if tokens is not None:
                tokens.pop(token, None)
                if not tokens:
                    del self._tokens_of[secret]

    def __len__(self) -> int:
        return len(self._secret_of)


LOG_SIGN_INS: Final = web.AppKey[SignIns]("sightline_log_sign_ins")
#: Slows wrong secrets per client address (shared with the WebSocket ``hello`` in a bridge).
LOG_THROTTLE: Final = web.AppKey[FailureThrottle]("sightline_log_throttle")
#: ``(public URL or None, trusted proxy addresses)``: the cookie's ``Secure`` flag, the same-origin check
#: and the client address behind a proxy.
LOG_SITE: Final = web.AppKey[tuple[str | None, frozenset[str]]]("sightline_log_site")

#: The cookie the sign-in form sets (HttpOnly, SameSite=Strict; Secure over TLS or when the public URL is https).
COOKIE_NAME: Final = "sightline_log"
_MAX_LIMIT: Final = 1000
_EXPORT_FLUSH: Final = 64 * 1024
#: Chunks shorter than this are encoded on the event loop (well under a millisecond), longer ones in a thread.
_ENCODE_IN_LOOP: Final = 1024 * 1024
_SECURITY_HEADERS: Final = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}

routes = web.RouteTableDef()


# --- Wiring ---------------------------------------------------------------------------------------


def log_routes() -> list[web.AbstractRouteDef]:
    """The log's routes, to add to an application that has :data:`LOG_STORE` and :data:`LOG_CHECK_SECRET`."""
    return list(routes)


def log_store_context(
    *, database: str | None, data_dir: Path, idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT
) -> Callable[[web.Application], AsyncIterator[None]]:
    """A ``cleanup_ctx`` entry that opens the store into ``app[LOG_STORE]`` and closes it at shutdown."""

    async def context(app: web.Application) -> AsyncIterator[None]:
        store = await open_store(database, data_dir, idle_timeout=idle_timeout)
        app[LOG_STORE] = store
        try:
            yield
        finally:
            await store.close()

    return context


def setup_log(
    app: web.Application,
    *,
    check_secret: SecretCheck,
    store: LogStore | None = None,
    database: str | None = None,
    data_dir: Path | None = None,
    idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
    throttle: FailureThrottle | None = None,
    public_url: str | None = None,
    trusted_proxies: frozenset[str] = frozenset(),
    secret_worlds: SecretWorlds | None = None,
) -> None:
    """Add the log's routes to ``app``; use ``store`` if given, else open one on start-up.

    Without ``store``, ``data_dir`` is required and the store opened for ``database`` lives in
    ``app[LOG_STORE]`` from start-up to clean-up — where the bridge's session code finds it too.
    ``throttle`` slows wrong secrets (a bridge shares its own with ``hello``); ``public_url`` is the
    address browsers use (``https://…`` behind a TLS proxy makes the cookie ``Secure``). With
    ``secret_worlds`` a world's secret signs in and lists its world before the world's first session;
    without it only worlds with a session are tried.
    """
    app[LOG_CHECK_SECRET] = check_secret
    app[LOG_SECRET_WORLDS] = secret_worlds
    app[LOG_SIGN_INS] = SignIns()
    app[LOG_THROTTLE] = throttle or FailureThrottle()
    app[LOG_SNAPSHOT_BODIES] = _SnapshotBodies()
    app[LOG_SITE] = (public_url.rstrip("/") if public_url else None, trusted_proxies)
    if store is not None:
        app[LOG_STORE] = store
    else:
        if data_dir is None:
            raise ValueError("setup_log needs a store or a data_dir")
        app.cleanup_ctx.append(log_store_context(database=database, data_dir=data_dir, idle_timeout=idle_timeout))
    app.router.add_routes(log_routes())


def create_log_app(
    *,
    check_secret: SecretCheck,
    store: LogStore | None = None,
    database: str | None = None,
    data_dir: Path | None = None,
    idle_timeout: timedelta = DEFAULT_IDLE_TIMEOUT,
    public_url: str | None = None,
) -> web.Application:
    """A stand-alone application serving only the log (tests, or a separate log viewer)."""
    app = web.Application()
    setup_log(
        app,
        check_secret=check_secret,
        store=store,
        database=database,
        data_dir=data_dir,
        idle_timeout=idle_timeout,
        public_url=public_url,
    )
    return app


# --- Authentication -------------------------------------------------------------------------------


def _presented_secret(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    cookie = request.cookies.get(COOKIE_NAME)
    return request.app[LOG_SIGN_INS].get(cookie) if cookie else None


def _client(request: web.Request) -> str:
    _public, trusted = request.app[LOG_SITE]
    return client_address(request.remote, request.headers.get("X-Forwarded-For"), trusted)


def _same_origin(request: web.Request, origin: str) -> bool:
    """Whether ``Origin`` names this bridge: the public URL's origin when one is set, else the ``Host`` the
    request came to (any scheme: behind a TLS proxy the bridge itself sees plain HTTP)."""
    public, _trusted = request.app[LOG_SITE]
    given = urlsplit(origin.strip().lower())
    if public:
        own = urlsplit(public.lower())
        return (given.scheme, given.netloc) == (own.scheme, own.netloc)
    return given.scheme in ("http", "https") and given.netloc == request.host.lower()


def _cross_site(request: web.Request) -> str | None:
    """Why a state-changing request looks cross-site (``None``: it does not).

    Browsers send ``Sec-Fetch-Site`` (pages cannot set it): only ``same-origin`` and ``none`` (typed or
    bookmarked) pass. Browsers without it send ``Origin``, which must be this bridge's. A request with neither
    (a script, ``curl``) is no browser's cross-site request and passes.
    """
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:
        return None if fetch_site.lower() in ("same-origin", "none") else f"Sec-Fetch-Site is {fetch_site!r}"
    origin = request.headers.get("Origin")
    if origin is not None and not _same_origin(request, origin):
        return f"Origin {origin!r} is not this bridge's"
    return None


def _refuse_cross_site(request: web.Request) -> None:
    reason = _cross_site(request)
    if reason is not None:
        raise web.HTTPForbidden(
            text=f"cross-site request refused: {reason}", content_type="text/plain", headers=_SECURITY_HEADERS
        )


def _root(request: web.Request) -> str:
    """The path the bridge is reached under behind a proxy: ``--public-url``'s path without its last ``/``
    (``https://example.org/a/`` → ``/a``; "" when there is none). Links, redirects and the cookie's path
    start with it; the routes themselves stay where the proxy sends them (it strips the path)."""
    public, _trusted = request.app[LOG_SITE]
    return urlsplit(public).path.rstrip("/") if public else ""


def _secure_cookie(request: web.Request) -> bool:
    public, _trusted = request.app[LOG_SITE]
    return request.secure or bool(public and public.lower().startswith("https://"))


def _bearer(request: web.Request) -> bool:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and bool(value.strip())


async def _secret_of(request: web.Request) -> str | None:
    """The presented secret; a ``Bearer`` one waits first if its address keeps sending wrong ones (the
    API is a third door for guessing, after ``hello`` and the sign-in form). A cookie carries a random
    token, not a secret: nothing to slow."""
    if _bearer(request):
        wait = request.app[LOG_THROTTLE].wait_before_attempt(_client(request))
        if wait > 0:
            await asyncio.sleep(wait)
    return _presented_secret(request)


async def _may_read(request: web.Request, world: str) -> bool:
    secret = await _secret_of(request)
    return secret is not None and request.app[LOG_CHECK_SECRET](world, secret)


async def _visible_worlds(request: web.Request, secret: str) -> list[str] | None:
    """The worlds ``secret`` may read; ``None`` when it is no secret at all. The bridge secret reads every
    world with a session; a world's secret its own world, with a session yet or not (with ``secret_worlds``:
    a GM whose world has logged nothing yet signs in, is not counted a wrong secret, and may start one)."""
    check = request.app[LOG_CHECK_SECRET]
    stored = await request.app[LOG_STORE].list_worlds()
    if check(None, secret):
        return stored
    own = request.app[LOG_SECRET_WORLDS]
    worlds = sorted(own(secret)) if own is not None else [w for w in stored if check(w, secret)]
    return worlds or None


def _unauthorized(request: web.Request) -> web.HTTPUnauthorized:
    """401; a wrong ``Bearer`` secret counts against its address like a wrong sign-in."""
    if _bearer(request):
        request.app[LOG_THROTTLE].failed(_client(request), "api")
    return web.HTTPUnauthorized(
        text='{"error": "unauthorized", "message": "a valid secret is required"}',
        content_type="application/json",
        headers={"WWW-Authenticate": 'Bearer realm="sightline"'},
    )


def _to_login(request: web.Request) -> web.HTTPSeeOther:
    """To the sign-in form, and back here after it. A cookie the bridge no longer knows (signed out, or the
    bridge restarted since) is cleared, and the form says the sign-in ended rather than nothing at all."""
    if _bearer(request):
        request.app[LOG_THROTTLE].failed(_client(request), "api")
    lang = _language(request)
    target = quote(request.path_qs, safe="")
    cookie = request.cookies.get(COOKIE_NAME)
    stale = bool(cookie) and request.app[LOG_SIGN_INS].get(cookie or "") is None
    response = web.HTTPSeeOther(f"{_root(request)}/log/login?lang={lang}&next={target}" + ("&ended=1" if stale else ""))
    if stale:
        response.del_cookie(COOKIE_NAME, path=_cookie_path(request))
    return response


def _cookie_path(request: web.Request) -> str:
    """The sign-in cookie's path: the log's own, under the proxy's path (two bridges behind one host on
    ``/a/`` and ``/b/`` keep their sign-ins apart)."""
    return f"{_root(request)}/"


def _language(request: web.Request) -> str:
    return pick_language(request.query.get("lang"), request.headers.get("Accept-Language"))


def _html(text: str, *, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", headers=_SECURITY_HEADERS)


def _json(data: Any, *, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, headers={"Cache-Control": "no-store"})


def _bad_request(message: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(
        text=web.json_response({"error": "invalid-query", "message": message}).text,
        content_type="application/json",
    )


# --- Query parameters -----------------------------------------------------------------------------

_BOOLEANS: Final = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


#: How much a ``to`` given to the minute (what a browser's date-and-time field sends) or to the day reaches
#: past the instant it names: the whole of that minute or day.
_WHOLE: Final = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"), timedelta(minutes=1)),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), timedelta(days=1)),
)


def _time_zone(query: Mapping[str, str]) -> tzinfo:
    """The zone ``from`` and ``to`` without an offset are read in: ``tz`` (an IANA name, which the pages'
    script sets to the reader's own — the zone the table shows), else UTC."""
    name = query.get("tz", "").strip()
    if not name or name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError) as exc:
        raise ValueError(f"tz is not a time zone this bridge knows: {name!r}") from exc


def parse_filters(query: Mapping[str, str]) -> RulingFilter:
    """The filters of a query string; :class:`ValueError` naming the parameter at fault.

    ``from`` and ``to`` without an offset are in ``tz`` (UTC when absent); a ``to`` given to the minute
    or the day takes the whole of it (``to=…T20:15`` keeps a ruling at 20:15:30).
    """
    allowed_text = query.get("allowed", "").strip().lower()
    if allowed_text and allowed_text not in _BOOLEANS:
        raise ValueError("allowed must be true or false")
    zone = _time_zone(query)
    times = {}
    for name in ("from", "to"):
        text = query.get(name, "").strip()
        if text:
            try:
                value = datetime.fromisoformat(text)
            except ValueError as exc:
                raise ValueError(f"{name} is not an ISO 8601 time") from exc
            if value.tzinfo is None:
                value = value.replace(tzinfo=zone)
            whole = next((span for form, span in _WHOLE if form.fullmatch(text)), None) if name == "to" else None
            if whole is not None:  # through the end of the minute or day named, inclusive
                value += whole - timedelta(microseconds=1)
            times[name] = value.astimezone(UTC)
    return RulingFilter(
        actor=query.get("actor", "").strip() or None,
        target=query.get("target", "").strip() or None,
        action=query.get("action", "").strip() or None,
        allowed=_BOOLEANS[allowed_text] if allowed_text else None,
        since=times.get("from"),
        until=times.get("to"),
    )


def _order(query: Mapping[str, str]) -> str:
    """The ``order`` asked for (:data:`~bridge.log.store.ORDERS`; ``time`` when absent)."""
    return check_order(query.get("order", "").strip() or "time")


def _limit(query: Mapping[str, str], default: int = 100) -> int:
    text = query.get("limit", "").strip()
    if not text:
        return default
    if not text.isdigit() or not 1 <= int(text) <= _MAX_LIMIT:
        raise ValueError(f"limit must be a whole number from 1 to {_MAX_LIMIT}")
    return int(text)


def _ruling_json(record: RulingRecord) -> dict[str, Any]:
    data: dict[str, Any] = record.model_dump(mode="json", exclude={"snapshot"})
    data["snapshot"] = record.snapshot.key if record.snapshot else None
    return data


async def _session_or_404(request: web.Request, world: str, session_id: str) -> LoggedSession:
    session = await request.app[LOG_STORE].get_session(session_id, world=world)
    if session is None:
        raise web.HTTPNotFound(
            text='{"error": "not-found", "message": "no such session in this world"}',
            content_type="application/json",
        )
    return session


# --- JSON API -------------------------------------------------------------------------------------


@routes.get("/api/worlds")
async def api_worlds(request: web.Request) -> web.Response:
    """The worlds the presented secret may read, and the names of those whose clients sent one."""
    secret = await _secret_of(request)
    worlds = await _visible_worlds(request, secret) if secret else None
    if worlds is None:
        raise _unauthorized(request)
    names = await request.app[LOG_STORE].world_names(worlds) if worlds else {}
    return _json({"worlds": worlds, "names": names})


@routes.get("/api/worlds/{world}/sessions")
async def api_sessions(request: web.Request) -> web.Response:
    """A world's sessions, newest first."""
    world = request.match_info["world"]
    if not await _may_read(request, world):
        raise _unauthorized(request)
    sessions = await request.app[LOG_STORE].list_sessions(world)
    return _json({"sessions": [s.model_dump(mode="json") for s in sessions]})


@routes.get("/api/worlds/{world}/sessions/{session}/rulings")
async def api_rulings(request: web.Request) -> web.StreamResponse:
    """One page of a session's rulings, filtered; ``next`` is the cursor of the following page."""
    world, session_id = request.match_info["world"], request.match_info["session"]
    if not await _may_read(request, world):
        raise _unauthorized(request)
    await _session_or_404(request, world, session_id)
    try:
        filters, limit = parse_filters(request.query), _limit(request.query)
        page = await request.app[LOG_STORE].query(
            world,
            session_id,
            filters=filters,
            limit=limit,
            cursor=request.query.get("cursor") or None,
            before=request.query.get("before") or None,
            snapshots=False,
            order=_order(request.query),
        )
    except ValueError as exc:
        raise _bad_request(str(exc)) from exc
    response = web.StreamResponse(
        headers={"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"}
    )
    response.enable_chunked_encoding()
    await response.prepare(request)
    pending = ['{"rulings":[']
    size = 0

    def encoded() -> list[str]:
        texts = []
        for record in page.records:
            data = _ruling_json(record)
            data["snapshot"] = page.snapshot_keys.get(record.id or "")
            texts.append(json.dumps(data, separators=(",", ":")))
        return texts

    # Encoded in a thread (a page of 1,000 takes a while), written as it goes.
    for index, text in enumerate(await asyncio.to_thread(encoded)):
        text = ("," if index else "") + text
        pending.append(text)
        size += len(text)
        if size >= _EXPORT_FLUSH:  # written as it is made: a big page never sits whole in memory
            await response.write("".join(pending).encode())
            pending, size = [], 0
    pending.append(f'],"next":{json.dumps(page.next_cursor)},"previous":{json.dumps(page.previous_cursor)}}}')
    await response.write("".join(pending).encode())
    await response.write_eof()
    return response


#: Encoded snapshot bodies kept by key (a key names its content, so a body never goes stale), at most this
#: many bytes in all: a GM clicking between rows of one big scene pays its encoding once, not per click.
SNAPSHOT_BODY_CACHE_BYTES: Final = 64 * 1024 * 1024
#: Part of every snapshot's ETag: bump it when the snapshot's JSON form changes, so browsers fetch it again.
_SNAPSHOT_FORMAT: Final = "1"


class _SnapshotBodies:
    """Encoded snapshot bodies by key, least recently used first out, bounded by their total bytes."""

    def __init__(self, most_bytes: int = SNAPSHOT_BODY_CACHE_BYTES) -> None:
        self.most_bytes = most_bytes
        self._bodies: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0

    def get(self, key: str) -> bytes | None:
        body = self._bodies.get(key)
        if body is not None:
            self._bodies.move_to_end(key)
        return body

    def put(self, key: str, body: bytes) -> None:
        if len(body) > self.most_bytes or key in self._bodies:
            return
        self._bodies[key] = body
        self._bytes += len(body)
        while self._bytes > self.most_bytes:
            _key, dropped = self._bodies.popitem(last=False)
            self._bytes -= len(dropped)


LOG_SNAPSHOT_BODIES: Final = web.AppKey[_SnapshotBodies]("sightline_log_snapshot_bodies")


def encode_snapshot(snapshot: SceneSnapshot) -> bytes:
    """A snapshot's body as the API sends it (what :class:`_SnapshotBodies` keeps)."""
    return snapshot.model_dump_json().encode()


def snapshot_etag(key: str) -> str:
    """A snapshot's strong ETag: its key (which names its content) hashed with the JSON form's version."""
    return hashlib.sha256(f"{_SNAPSHOT_FORMAT}:{key}".encode()).hexdigest()[:32]


@routes.get("/api/worlds/{world}/snapshots/{key}")
async def api_snapshot(request: web.Request) -> web.Response:
    """One scene snapshot (zones, walls, grid, setting), by the key a ruling of this world carries.

    Snapshots never change under their key: the answer carries an ``ETag``, and a browser asking again with
    ``If-None-Match`` gets ``304 Not Modified`` without a body (after the same checks: a key of another
    world is 404 whatever ETag is sent). A body once encoded is kept (:data:`SNAPSHOT_BODY_CACHE_BYTES`)."""
    world, key = request.match_info["world"], request.match_info["key"]
    if not await _may_read(request, world):
        raise _unauthorized(request)
    store = request.app[LOG_STORE]
    not_found = web.HTTPNotFound(
        text='{"error": "not-found", "message": "no such snapshot in this world"}', content_type="application/json"
    )
    etag = snapshot_etag(key)
    headers = {"Cache-Control": "private, max-age=86400, immutable"}  # a key names its content
    asked = request.if_none_match
    if asked and any(tag.value in (etag, "*") for tag in asked):
        if not await store.refers_to_snapshot(world, key):
            raise not_found
        response = web.Response(status=304, headers=headers)
        response.etag = etag
        return response
    bodies = request.app[LOG_SNAPSHOT_BODIES]
    body = bodies.get(key)
    if body is None or not await store.refers_to_snapshot(world, key):
        snapshot = await store.get_snapshot(world, key)
        if snapshot is None:
            raise not_found
        # Megabytes for a scene of 50,000 walls: encoded once, in a thread, then served from memory.
        body = await asyncio.to_thread(encode_snapshot, snapshot)
        bodies.put(key, body)
    response = web.Response(body=body, content_type="application/json", headers=headers)
    response.etag = etag
    return response


async def _encoded(text: str) -> bytes:
    """A big chunk (one record with a huge snapshot) encoded in a worker thread."""
    return await asyncio.to_thread(text.encode)


def export_filename(session: LoggedSession, fmt: str) -> str:
    """What a downloaded export is called: the world and the session as the pages name them ("Ashes of
    Acontecimento - Friday raid.csv"; an unnamed session by its start, "… - 2026-12-01 20.15 UTC.md"),
    never their ids; characters a file name cannot hold become "_"."""
    title = session.name or session.started.replace("T", " ")[:16].replace(":", ".") + " UTC"
    text = f"{session.world_name or session.world} - {title}"
    text = re.sub(r'[\x00-\x1f\x7f/\\:*?"<>|]+', "_", text).strip(" .")[:150] or "session"
    return f"{text}.{fmt}"


def _attachment(session: LoggedSession, fmt: str) -> str:
    """``Content-Disposition`` for an export: the readable name (RFC 6266 ``filename*``, UTF-8), and a
    plain ASCII one for clients that know only ``filename``."""
    name = export_filename(session, fmt)
    plain = re.sub(r"[^A-Za-z0-9 ._()-]+", "_", name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _export_handler(fmt: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    writer, media_type = FORMATS[fmt]

    async def export(request: web.Request) -> web.StreamResponse:
        world, session_id = request.match_info["world"], request.match_info["session"]
        if not await _may_read(request, world):
            raise _unauthorized(request)
        session = await _session_or_404(request, world, session_id)
        try:
            order = _order(request.query)  # as the page it was linked from shows the rulings
        except ValueError as exc:
            raise _bad_request(str(exc)) from exc
        response = web.StreamResponse(
            headers={
                "Content-Type": f"{media_type}; charset=utf-8",
                "Content-Disposition": _attachment(session, fmt),
                "Cache-Control": "no-store",
            }
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        # Rows are made in a worker thread, a bounded chunk at a time (``bridge.log.export``): the event
        # loop hands records over and writes, so other worlds' messages never wait for a big session.
        records = request.app[LOG_STORE].export(world, session_id, order=order)
        async for chunk in writer(records, _language(request)):
            await response.write(chunk.encode() if len(chunk) < _ENCODE_IN_LOOP else await _encoded(chunk))
        await response.write_eof()
        return response

    export.__doc__ = f"The whole session as {fmt}, streamed in bounded chunks made off the event loop."
    return export


for _fmt in FORMATS:
    routes.get(f"/api/worlds/{{world}}/sessions/{{session}}/export.{_fmt}")(_export_handler(_fmt))


def _rejudge_choice(choice: str) -> Rejudge | None:
    """The page's ``rejudge=ruleset:edition`` (empty: none); :class:`ValueError` naming what is wrong."""
    if not choice:
        return None
    ruleset, _, edition = choice.partition(":")
    try:
        return Rejudge(ruleset=ruleset or None, edition=edition or None)
    except RejudgeError as exc:
        raise ValueError(f"rejudge: {exc}") from exc


async def _rejudged(
    judge: Rejudge, records: list[RulingRecord], *, keep_same: bool, lang: str | None = None
) -> list[dict[str, Any]]:
    """``records`` judged again, in a worker thread: a large page never holds up other worlds' messages. With
    ``lang`` (a page's), each outcome also says in that language why it cannot carry over (``why_text``:
    labels, never ids)."""

    def run() -> list[dict[str, Any]]:
        return [
            outcome_wire(outcome, judge) | ({} if lang is None else {"why_text": why_text(outcome, judge, lang)})
            for outcome in judge.judge_all(records)
            if keep_same or outcome.status != "same"
        ]

    return await asyncio.to_thread(run)


@routes.get("/api/worlds/{world}/sessions/{session}/rejudge")
async def api_rejudge(request: web.Request) -> web.Response:
    """One page of a session's rulings judged again under ``ruleset`` and/or ``edition`` (query), as
    ``sightline log rejudge`` does: ``{"rulings": [...changed or untranslatable (all with all=true)],
    "scanned": n, "summary": {...this page}, "next": cursor-or-null}``. Nothing stored changes."""
    world, session_id = request.match_info["world"], request.match_info["session"]
    if not await _may_read(request, world):
        raise _unauthorized(request)
    await _session_or_404(request, world, session_id)
    query = request.query
    try:
        judge = Rejudge(ruleset=query.get("ruleset") or None, edition=query.get("edition") or None)
    except RejudgeError as exc:
        raise _bad_request(str(exc)) from exc
    try:
        filters, limit = parse_filters(query), _limit(query)
        page = await request.app[LOG_STORE].query(
            world, session_id, filters=filters, limit=limit, cursor=query.get("cursor") or None, order=_order(query)
        )
    except ValueError as exc:
        raise _bad_request(str(exc)) from exc
    every = await _rejudged(judge, page.records, keep_same=True)
    summary = {status: sum(o["status"] == status for o in every) for status in ("same", "changed", "untranslatable")}
    listed = [o for o in every if query.get("all") == "true" or o["status"] != "same"]
    return _json({"rulings": listed, "scanned": len(every), "summary": summary, "next": page.next_cursor})


# --- Pages ----------------------------------------------------------------------------------------


def _safe_next(target: str) -> str:
    """Only paths of the log itself: never an open redirect."""
    if target.startswith("/log/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/log/"


@routes.get("/log")
async def log_root(request: web.Request) -> web.Response:
    """``/log`` → ``/log/``."""
    raise web.HTTPFound(f"{_root(request)}/log/" + (f"?{request.query_string}" if request.query_string else ""))


@routes.get("/log/login")
async def login_form(request: web.Request) -> web.Response:
    """The sign-in form."""
    return _html(
        login_page(
            _language(request),
            next_url=_safe_next(request.query.get("next", "")),
            failed=False,
            expired=request.query.get("ended") == "1",
            root=_root(request),
        )
    )


@routes.post("/log/login")
async def login(request: web.Request) -> web.Response:
    """Check the posted secret; when it opens any log, keep it in an HttpOnly cookie and go on.

    Cross-site posts are refused (403); an address that keeps sending wrong secrets waits longer each time.
    """
    _refuse_cross_site(request)
    form = await request.post()
    secret = str(form.get("secret", "")).strip()
    next_url = _safe_next(str(form.get("next", "")))
    lang = _language(request)
    throttle, address = request.app[LOG_THROTTLE], _client(request)
    wait = throttle.wait_before_attempt(address)
    if wait > 0:
        await asyncio.sleep(wait)
    if not secret or await _visible_worlds(request, secret) is None:
        throttle.failed(address, "sign-in")
        return _html(login_page(lang, next_url=next_url, failed=True, root=_root(request)), status=401)
    token = request.app[LOG_SIGN_INS].add(secret)
    response = web.HTTPSeeOther(_root(request) + next_url)
    response.set_cookie(
        COOKIE_NAME, token, httponly=True, samesite="Strict", secure=_secure_cookie(request), path=_cookie_path(request)
    )
    raise response


@routes.post("/log/logout")
async def logout(request: web.Request) -> web.Response:
    """Forget the cookie (cross-site posts are refused: no page elsewhere can sign a GM out)."""
    _refuse_cross_site(request)
    cookie = request.cookies.get(COOKIE_NAME)
    if cookie:
        request.app[LOG_SIGN_INS].remove(cookie)
    response = web.HTTPSeeOther(f"{_root(request)}/log/login?lang={_language(request)}")
    response.del_cookie(COOKIE_NAME, path=_cookie_path(request))
    raise response


@routes.get("/log/")
async def sessions_list(request: web.Request) -> web.Response:
    """Every session of every world the secret may read."""
    secret = await _secret_of(request)
    worlds = await _visible_worlds(request, secret) if secret else None
    if worlds is None:
        raise _to_login(request)
    store = request.app[LOG_STORE]
    sessions = [s for world in worlds for s in await store.list_sessions(world)]
    sessions.sort(key=lambda s: (s.started, s.id), reverse=True)
    lang = _language(request)
    open_sessions = {s.world: s for s in sessions if s.ended is None}
    names = await store.world_names(worlds)
    root = _root(request)
    listed = sessions_page(lang, sessions, root=root, idle_timeout=store.idle_timeout)
    return _html(with_controls(listed, session_controls(lang, worlds, open_sessions, names, root=root)))


#: The pages' scripts: the session page's map (log.js), its GM controls (controls.js), and local times on
#: every page (times.js).
_SCRIPTS = frozenset({"log.js", "controls.js", "times.js"})


@routes.get("/log/static/{name}")
async def script(request: web.Request) -> web.Response:
    """One of the log pages' scripts, for signed-in readers only (like everything else)."""
    name = request.match_info["name"]
    if name not in _SCRIPTS:
        raise web.HTTPNotFound()
    secret = await _secret_of(request)
    if not secret or await _visible_worlds(request, secret) is None:
        raise _unauthorized(request)
    text = resources.files("bridge.log").joinpath("static", name).read_text(encoding="utf-8")
    return web.Response(text=text, content_type="text/javascript", headers={"Cache-Control": "no-cache"})


@routes.get("/log/{world}/{session}")
async def session_view(request: web.Request) -> web.Response:
    """A session's rulings page: filters, table, paging, export links and the map."""
    world, session_id = request.match_info["world"], request.match_info["session"]
    if not await _may_read(request, world):
        secret = _presented_secret(request)
        if secret and await _visible_worlds(request, secret) is not None:
            # Signed in, for other worlds: the sign-in form would only send the GM back here, again and
            # again. Said as for a session that does not exist: nothing tells whether this world has one.
            return _not_found(request)
        raise _to_login(request)
    lang = _language(request)
    store = request.app[LOG_STORE]
    session = await store.get_session(session_id, world=world)
    if session is None:
        return _not_found(request)
    keys = ("actor", "target", "action", "allowed", "from", "to", "tz", "order", "cursor", "before", "limit", "rejudge")
    shown = {k: request.query.get(k, "") for k in keys}
    error = None
    records: list[RulingRecord] = []
    next_cursor = previous_cursor = None
    choices = await store.choices(world, session_id)
    snapshot_keys: dict[str, str] = {}
    rejudged: dict[str, dict[str, Any]] | None = None
    try:
        judge = _rejudge_choice(shown["rejudge"])
        page = await store.query(
            world,
            session_id,
            filters=parse_filters(request.query),
            limit=_limit(request.query),
            cursor=shown["cursor"] or None,
            before=shown["before"] or None,
            snapshots=judge is not None,  # the map fetches the one it draws
            order=_order(request.query),
        )
        records, next_cursor, snapshot_keys = page.records, page.next_cursor, page.snapshot_keys
        previous_cursor = page.previous_cursor
        if judge is not None:
            rejudged = {o["record"]: o for o in await _rejudged(judge, records, keep_same=True, lang=lang)}
    except ValueError as exc:
        error = str(exc)
    html = await asyncio.to_thread(  # a page of 1,000 rows is built off the event loop
        session_page,
        lang,
        session,
        records,
        filters=shown,
        next_cursor=next_cursor,
        previous_cursor=previous_cursor,
        choices=choices,
        error=error,
        rejudge=shown["rejudge"] if rejudged is not None else "",
        rejudged=rejudged,
        snapshot_keys=snapshot_keys,
        root=_root(request),
        idle_timeout=store.idle_timeout,
    )
    # The form carries no row of the page (a script fills it from the chosen row); ``override=list``, its
    # link without script, lists the page's rulings in it.
    controls = override_controls(
        lang,
        session,
        records,
        root=_root(request),
        listed=request.query.get("override") == "list",
        query=request.query,
    )
    html = with_controls(html, controls, before='<form class="filters"')
    return _html(html, status=400 if error else 200)


# --- GM controls: sessions and overrides from the pages (bridge.log.controls) ----------------------


def _not_found(request: web.Request) -> web.Response:
    """404 for a session page: no such session in the worlds this sign-in opens, with the way back."""
    lang = _language(request)
    t = TEXTS[lang]
    body = (
        f'<p class="error" role="alert">{escape(t["not_found"])}</p>'
        f'<p><a href="{escape(_root(request))}/log/?lang={lang}">← {escape(t["back"])}</a></p>'
    )
    page = (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{escape(t["title"])}</title></head>'
        f"<body><main>{body}</main></body></html>"
    )
    return _html(page, status=404)


def _control_failed(request: web.Request, message: str, back: str, *, status: int = 400) -> web.Response:
    """A short page naming what was wrong, with the way back; nothing was changed."""
    lang = _language(request)
    w = WORDS[lang]
    body = (
        f'<p class="error" role="alert">{escape(w["failed"])}: {escape(message)}</p>'
        f'<p><a href="{escape(back)}">← {escape(w["back"])}</a></p>'
    )
    page = f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"></head><body>{body}</body></html>'
    return _html(page, status=status)


async def _gm_post(request: web.Request, world: str) -> Mapping[str, str]:
    """The posted form of a GM control: refused when cross-site (403) or not signed in for ``world`` (401)."""
    _refuse_cross_site(request)
    if not await _may_read(request, world):
        raise _unauthorized(request)
    form = await request.post()
    return {k: v for k, v in form.items() if isinstance(v, str)}


def _now() -> datetime:
    return datetime.now(UTC)


@routes.post("/log/{world}/session/start")
async def session_start(request: web.Request) -> web.StreamResponse:
    """Start a named game session for the world (the open one is closed), then show it."""
    world = request.match_info["world"]
    form = await _gm_post(request, world)
    lang = _language(request)
    try:
        name = parse_session_name(form.get("name", ""), lang)
    except ValueError as exc:
        return _control_failed(request, str(exc), f"{_root(request)}/log/?lang={lang}")
    session = await request.app[LOG_STORE].start_session(world, name, _now())
    raise web.HTTPSeeOther(f"{_root(request)}/log/{quote(world, safe='')}/{quote(session.id, safe='')}?lang={lang}")


@routes.post("/log/{world}/session/end")
async def session_end(request: web.Request) -> web.StreamResponse:
    """End the world's open game session (nothing to do when none is open), then back to the list."""
    world = request.match_info["world"]
    await _gm_post(request, world)
    await request.app[LOG_STORE].end_session(world, _now())
    raise web.HTTPSeeOther(f"{_root(request)}/log/?lang={_language(request)}")


@routes.post("/log/{world}/{session}/override")
async def ruling_override(request: web.Request) -> web.StreamResponse:
    """Record a GM's override of one of the session's rulings, with its reason, then back to the session."""
    world, session_id = request.match_info["world"], request.match_info["session"]
    form = await _gm_post(request, world)
    lang = _language(request)
    store = request.app[LOG_STORE]
    back = f"{_root(request)}/log/{quote(world, safe='')}/{quote(session_id, safe='')}?lang={lang}"
    try:
        posted = parse_override_form(form, lang)
    except ValueError as exc:
        return _control_failed(request, str(exc), back)
    original = await store.get_record(world, posted.record)
    if original is None or original.session != session_id:
        return _control_failed(request, WORDS[lang]["bad_record"], back, status=404)
    await store.override(
        world,
        posted.record,
        modifier=posted.modifier,
        allowed=posted.allowed,
        reason=posted.reason,
        user=Party(id="log-page", name=WORDS[lang]["by"]),
        at=_now(),
    )
    raise web.HTTPSeeOther(back)
