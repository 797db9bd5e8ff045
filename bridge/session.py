"""One client's conversation with the bridge, without sockets (sans-I/O).

The adapter (WebSocket server, ``sightline replay``) feeds each received text frame to
:meth:`Session.receive` and carries out the effects it returns, in order:

- :class:`Send` — send this message;
- :class:`StoreThenSend` — run this log operation on the store, then send the answer it gives
  (:func:`bridge.log.effects.perform` does both; a logged ruling is committed before its answer);
- :class:`Close` — close the connection with this code.

Life cycle (one table, no chains of ``if``): ``awaiting-hello`` → ``ready`` on a good ``hello``;
``awaiting-hello`` stays ``awaiting-hello`` after a ``hello`` refused because its world has its most
connections (``rate-limited``: the client may ``ping`` and say ``hello`` again, until the adapter's hello
deadline); ``awaiting-hello`` → ``closed`` on anything else; ``ready`` stays ``ready`` whatever the client
sends, errors included. The world's scenes live in :class:`Worlds`, shared by every session of that world.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import typing
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import compress, count, islice
from operator import is_not
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from . import __version__, stages
from .core._loops import line_records
from .core.ignored import Ignored
from .core.release import free_in_slices, with_items
from .core.rules import RULESETS, RulingError, Situation
from .core.rules.base import Ruling
from .core.sight import Crossing, CrossingKind, Point3
from .core.world import SceneLimits, SceneRejected, SceneState, World
from .engines import SceneEngines
from .errors import (
    BridgeError,
    ConnectionFatal,
    HelloRequired,
    InternalError,
    InvalidMessage,
    RateLimited,
    RefusedBeforeHello,
    TooLarge,
    TooManyConnections,
    Unauthorized,
    UnknownRuleset,
    UnknownScene,
    UnknownToken,
    UnsupportedProtocol,
)
from .jsontext import SURROGATE_ESCAPE, loads_in_slices, search_in_slices
from .jsontext import nesting_depth as nesting_depth_of
from .palette import OTHER, VERDICTS, ZONES
from .protocol import (
    CLIENT_MESSAGE,
    PROTOCOL,
    Adjudicate,
    Adjudication,
    BridgeInfo,
    ClientMessage,
    EncounterRangeRequest,
    EncounterRangeResult,
    ErrorMessage,
    Hello,
    IgnoredEntry,
    IgnoredRef,
    Palette,
    Ping,
    Pong,
    Prebuilt,
    RulesetInfo,
    RulingOverride,
    ScenePatch,
    ScenePatched,
    SceneSync,
    SceneSynced,
    SessionEnd,
    SessionStart,
    Unwatch,
    Unwatched,
    UserInfo,
    Watch,
    Watching,
    Welcome,
    WireCrossing,
    WireLine,
    WireModifier,
    WirePoint,
    prune_wire,
)

if TYPE_CHECKING:  # imports shapely and the engine: imported by the first watch or engine (bridge.engines)
    from .core.visibility import SceneVisibility, VerdictRun
    from .log.capture import SnapshotParts
    from .log.records import RulingRecord, SceneSnapshot  # the log's models: imported by the first logged ruling

__all__ = [
    "MOVE_TOKENS",
    "ActiveWatch",
    "AddressBudgets",
    "ByteBudget",
    "Close",
    "Deliver",
    "Effect",
    "Limits",
    "Send",
    "Session",
    "StoreThenSend",
    "Worlds",
    "error_message",
    "forget_wire_forms",
    "peek_id",
    "watch_pairs",
]

OFFLINE_WORLD = "offline"
_log = logging.getLogger(__name__)
T = TypeVar("T")


# --- Effects the adapter carries out -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    message: BaseModel


@dataclass(frozen=True, slots=True)
class Close:
    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class StoreThenSend:
    """A log operation and the answer to send once it is done (or known to have failed).

    ``operation`` is ``append`` (``record`` set, ``answer`` the adjudication to complete with
    ``logged``/``record``), ``start`` (``name``, and the ``world_name`` the client's ``hello`` gave),
    ``end``, or ``override`` (``override`` set).
    """

    operation: Literal["append", "start", "end", "override"]
    request_id: str
    world: str
    at: datetime
    record: RulingRecord | None = None
    answer: Adjudication | None = None
    name: str = ""
    override: RulingOverride | None = None
    user: UserInfo | None = None
    world_name: str = ""


@dataclass(frozen=True, slots=True)
class Deliver:
    """Send ``message`` to another session of the same world (a watcher of a scene this one changed)."""

    to: Session
    message: BaseModel


Effect = Send | Close | StoreThenSend | Deliver


@dataclass
class ActiveWatch:
    """One ``watch``: who asked, under which id, and the engine keeping its rulings."""

    owner: Session
    watch_id: str
    scene: str
    visibility: SceneVisibility
    brief: bool = False
    #: The scene version its engine's rulings are for (``adjudicate`` reads them when it is the current one).
    state: SceneState | None = None
    #: The (actor, target) pairs it covers on that version (counted against ``Limits.world_watch_pairs``).
    pairs: int = 0


# --- Shared state ----------------------------------------------------------------------------------


@dataclass
class Worlds:
    """Every world's scenes, by world id; sessions of one world share its :class:`World`."""

    worlds: dict[str, World] = field(default_factory=dict)
    scene_limits: SceneLimits = field(default_factory=SceneLimits)
    _snapshots: dict[tuple[str, str], tuple[SceneState, SceneSnapshot, SnapshotParts]] = field(default_factory=dict)

    def snapshot(self, world: str, state: SceneState) -> SceneSnapshot:
        """The log's snapshot of a scene state, computed once per state (not once per ruling), from what the
        scene's last snapshot made of the regions and walls it still holds."""
        from .log.capture import SnapshotParts, snapshot_of

        key = (world, state.scene.id)
        cached = self._snapshots.get(key)
        if cached is None or cached[0] is not state:
            parts = SnapshotParts() if cached is None else cached[2]
            cached = self._snapshots[key] = (state, snapshot_of(state.scene, parts), parts)
        return cached[1]

    watches: dict[tuple[str, str], list[ActiveWatch]] = field(default_factory=dict)
    #: Each world's whole-scene engines kept for ``adjudicate`` (:mod:`bridge.engines`).
    engines: dict[str, SceneEngines] = field(default_factory=dict)

    def engines_of(self, world_id: str) -> SceneEngines:
        engines = self.engines.get(world_id)
        if engines is None:
            engines = self.engines.setdefault(world_id, SceneEngines())
        return engines

    def watchers(self, world: str, scene: str) -> list[ActiveWatch]:
        return self.watches.get((world, scene), [])

    def detach(self, world_id: str) -> list[Any]:
        """Take out everything held for a world (its clients have left): scenes, snapshots, watches.

        Returns what was taken, so that the caller decides where the last reference goes (and with it
        the work of freeing a large world). The module resyncs its scenes on every (re)connection.
        """
        taken: list[Any] = [self.worlds.pop(world_id, None)]
        for snapshot_key in [k for k in list(self._snapshots) if k[0] == world_id]:
            taken.append(self._snapshots.pop(snapshot_key, None))
        for watch_key in [k for k in list(self.watches) if k[0] == world_id]:
            taken.append(self.watches.pop(watch_key, None))
        taken.append(self.engines.pop(world_id, None))
        return taken

    def forget_gone(self, world: World) -> None:
        """Drop the log snapshots of scenes the world no longer holds (forgotten to make room)."""
        for key in [key for key in list(self._snapshots) if key[0] == world.id and key[1] not in world.scenes]:
            del self._snapshots[key]
        engines = self.engines.get(world.id)
        if engines is not None:
            engines.tidy(world.scenes, float("-inf"))

    def get(self, world_id: str) -> World:
        world = self.worlds.get(world_id)
        if world is None:
            world = self.worlds[world_id] = World(world_id, limits=self.scene_limits)
        return world


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one connection: frame size, JSON nesting depth, a token bucket of messages per second, and
    what one message may make the bridge compute (watches and the pairs they cover, the lines of ``"best"``)."""

    max_frame_bytes: int = 4 * 1024 * 1024
    messages_per_second: float = 100.0
    burst: int = 200
    max_depth: int = 32
    #: Watches one connection holds open at once.
    watches: int = 8
    #: (actor, target) pairs one watch covers.
    watch_pairs: int = 10_000
    #: (actor, target) pairs all of one world's open watches cover together, whichever connections hold them:
    #: each pair holds the engine's state for it (about 750 bytes), so 32 connections × 8 watches of
    #: ``watch_pairs`` each would otherwise let one world hold gigabytes. Three overlays of a 100-token scene.
    world_watch_pairs: int = 30_000
    #: What one watch computes: its pairs × the segments each pair's sight line may be tested against (the
    #: vertices the scene is drawn with — zones, curves by their polygons, token bases — plus its walls).
    watch_tests: int = 300_000_000
    #: In a ``rules.lines: "best"`` scene, the line tests one message asks for: sampled lines (at most
    #: :data:`BEST_LINES` a pair) × pairs × (zones + walls), each line being tested against each of them.
    best_line_tests: int = 50_000
    #: Bytes one logged ruling's record may take in the log (its JSON; the scene's snapshot, stored once per
    #: scene version, not counted): the request's ``options``, the user and the tokens the ruling read (those
    #: whose light may reach the target) are kept with every record, so a small message could otherwise
    #: make the log hold megabytes, and every other world's logged rulings wait while they are written.
    log_record_bytes: int = 64 * 1024
    #: Values one ``adjudicate``'s ``options`` may hold, nested ones counted (a key's value, a list's items): the
    #: message's validation and the ruling's memo key walk every one, logged or not. No ruleset reads more than a
    #: few; 217,000 keys cost ~1 s of CPU on the world's thread, one validation call ~130 ms of it.
    option_values: int = 1_000
    #: Ordered pairs of a scene up to which ``adjudicate`` is answered from a whole-scene engine kept for
    #: the scene (:mod:`bridge.engines`; its first question pays one whole-scene pass); 0: never.
    engine_pairs: int = 40_000


#: Keys of a logged request's options serialised at once to count their bytes (``Session._check_options_size``).
_OPTIONS_SLICE = 512
#: The options of a request that sets none: the only ones a whole-scene engine rules with.
_DEFAULT_OPTIONS = {"aware": True}
#: ``_frozen`` of a request's options when it sets none but ``aware`` (the common question: no walk).
_FROZEN_AWARE = {flag: (("aware", ("bool", flag)),) for flag in (True, False)}
#: Most sight lines of one pair under ``rules.lines: "best"``: 9 sample points of each footprint.
BEST_LINES = 81
#: How much of a frame is scanned for its ``id`` when the frame is not parsed (too large, rate-limited).
ID_SCAN_BYTES = 4096
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')


def peek_id(text: str | bytes) -> str | None:
    """The top-level ``id`` of a frame that is not parsed, read from its first :data:`ID_SCAN_BYTES`.

    A scan of strings and brackets, not a parse: it costs the same whatever the frame holds, and finds
    the id when the client puts it before the bulk of the message (``{"type": …, "id": …, …}``, as the
    module does). Anything else gives ``None``.
    """
    head = text[:ID_SCAN_BYTES]
    if isinstance(head, bytes):
        head = head.decode("utf-8", errors="ignore")
    depth = 0
    key: str | None = None
    expect_value = False
    for match in _JSON_TOKEN.finditer(head):
        token = match.group()
        if token in "{[":
            depth += 1
            expect_value = False
        elif token in "}]":
            depth -= 1
            if depth <= 0:
                return None
        elif token == ":":
            expect_value = depth == 1
        elif token == ",":
            key, expect_value = None, False
        elif depth == 1:  # a string at the top level: a key, or the value of one
            if expect_value:
                if key == "id":
                    try:
                        value = json.loads(token)
                    except ValueError:
                        return None
                    return value if isinstance(value, str) and 0 < len(value) <= 128 else None
                expect_value = False
            else:
                try:
                    key = json.loads(token)
                except ValueError:
                    key = None
    return None


class _Bucket:
    """Token bucket: ``burst`` messages at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.stamp = float(burst), now

    def take(self, now: float) -> bool:
        if self.rate == float("inf"):
            return True
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class ByteBudget:
    """Bytes one connection may send: ``rate`` a second on average, ``burst`` at once (a token bucket in bytes).

    The cost it bounds is the reading itself: a frame is joined, unmasked and copied on the event loop before
    anyone can look at it (about 11 ms for one of 16 MiB, the largest read — 4 × the frame limit, so that its
    ``too-large`` can carry its id), and a client could send them back to back while every world waits. Every
    frame read is charged, handled or not. A frame larger than what is left is refused (``rate-limited``,
    :meth:`refusal`), and the connection is not read again until the budget holds that frame: the socket is
    left unread, so the client's own TCP window holds what it sends meanwhile (after at most one frame aiohttp
    may have read ahead: it stops reading a socket only while its queue is full). Not thread-safe: the loop's.
    """

    def __init__(self, rate: float, burst: int, now: float, *, whose: str = "") -> None:
        self.rate, self.burst = float(rate), float(burst)
        self.tokens, self.stamp = self.burst, now
        self._window = (now, 0)  # start of the current second, bytes read in it
        self.whose = whose  # said in the refusal after the rate: "" (this connection's own), or whose bytes

    def full(self, now: float) -> bool:
        """Whether the budget has refilled to its whole burst by ``now`` (then it is as good as a new one)."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst

    def charge(self, size: int, now: float) -> float:
        """Charge a frame of ``size`` bytes just read: 0.0 if it is within the budget (handle it), else the
        seconds to read nothing more from the connection (refuse it with :meth:`refusal`)."""
        start, seen = self._window
        self._window = (start, seen + size) if now - start < 1.0 else (now, size)
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        within = self.tokens >= size
        self.tokens = max(-self.burst, self.tokens - size)
        return 0.0 if within else (size - self.tokens) / self.rate

    def refusal(self, size: int, pause: float) -> RateLimited:
        """The answer to a frame :meth:`charge` refused: ``value`` the bytes read in the current second."""
        return RateLimited(
            f"more than {self.rate:,.0f} bytes per second{self.whose} (bursts of {self.burst:,.0f}); this frame of "
            f"{size:,} bytes was dropped, and nothing more is read from this connection for {pause:.1f} s",
            limit="bytes-per-second",
            value=self._window[1],
            max=self.rate,
        )


class AddressBudgets:
    """A :class:`ByteBudget` per client address for the frames connections send before their ``hello`` is
    admitted, so that reconnecting does not refill it.

    Before ``hello`` a frame over the frame limit closes the connection (4400, after its ``too-large``), and a
    client without any secret could reconnect and send the next one at once: each new connection's budget
    was whole again, and each frame read held the event loop (about 11 ms for 16 MiB) for every world. The
    bytes read before ``hello`` are charged here as well as to the connection's own budget, with the same
    rate and burst. After ``hello`` only the connection's own budget counts: a world's admitted client is
    not slowed by what another tab, or a stranger behind the same address, sends before its own ``hello``.

    Bounded: a budget that has refilled to its whole burst is forgotten (a new one is the same), the least
    recently charged first, and at most ``max_addresses`` are held (the throttle's bound); an address dropped
    while still owing starts afresh. Not thread-safe: the loop's.
    """

    WHOSE = " from this address before hello"

    def __init__(self, rate: float, burst: int, *, max_addresses: int = 100_000) -> None:
        self.rate, self.burst, self.max_addresses = rate, burst, max_addresses
        self._budgets: OrderedDict[str, ByteBudget] = OrderedDict()

    def charge(self, address: str, size: int, now: float) -> tuple[float, ByteBudget]:
        """Charge a frame read before ``hello`` to ``address``: the pause :meth:`ByteBudget.charge` gives (0.0
        if it fits) and the address's budget (for :meth:`ByteBudget.refusal`)."""
        budget = self._budgets.pop(address, None)
        if budget is None:
            budget = ByteBudget(self.rate, self.burst, now, whose=self.WHOSE)
        pause = budget.charge(size, now)
        self._budgets[address] = budget  # the most recently charged last
        while self._budgets and (
            len(self._budgets) > self.max_addresses or next(iter(self._budgets.values())).full(now)
        ):
            self._budgets.popitem(last=False)
        return pause, budget

    def owed(self, address: str, now: float) -> float:
        """Seconds until ``address``'s budget is out of debt (0.0 if it is not): a new connection is not even
        opened before then, since its first frame would be read (joined, unmasked, copied) before anything
        could refuse it."""
        budget = self._budgets.get(address)
        if budget is None:
            return 0.0
        tokens = min(budget.burst, budget.tokens + (now - budget.stamp) * budget.rate)
        return -tokens / budget.rate if tokens < 0 else 0.0

    def __len__(self) -> int:
        return len(self._budgets)


Authenticator = Callable[[str, str | None], bool]
Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


# --- The session -----------------------------------------------------------------------------------


class Session:
    """One client's conversation. Not thread-safe; one per connection.

    ``authenticate(world, secret)`` decides a ``hello`` and ``admit(world)`` may still refuse it (too many
    connections: it returns the reason, or the error naming the limit): the refusal is answered ``rate-limited``
    and the session stays awaiting hello; ``offline=True`` (replay) needs no hello and works in the world
    ``"offline"``.
    """

    def __init__(
        self,
        worlds: Worlds,
        *,
        authenticate: Authenticator | None = None,
        admit: Callable[[str], str | TooManyConnections | None] | None = None,
        offline: bool = False,
        limits: Limits | None = None,
        clock: Clock = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        logging: bool = True,
    ) -> None:
        self._worlds = worlds
        self._authenticate = authenticate or (lambda world, secret: False)
        self._admit = admit or (lambda world: None)
        # Offline (replay) reads a file: no rate to limit.
        self._limits = limits or (Limits(messages_per_second=float("inf"), burst=1) if offline else Limits())
        self._clock = clock
        self._monotonic = monotonic
        self._bucket = _Bucket(self._limits.messages_per_second, self._limits.burst, monotonic())
        self._window = (monotonic(), 0)  # start of the current second, messages received in it
        self._logging = logging
        self.state: Literal["awaiting-hello", "ready", "closed"] = "awaiting-hello"
        self.world: World | None = None
        self.user: UserInfo | None = None
        #: The world's name as this client's ``hello`` gave it ("": unknown), kept with what it logs.
        self.world_name = ""
        #: A ``hello`` was refused for want of room (:class:`TooManyConnections`): ``ping`` is answered too
        #: while the session awaits another ``hello``.
        self._turned_away = False
        if offline:
            self.world = worlds.get(OFFLINE_WORLD)
            self.state = "ready"

    # Public methods for receiving data.

    def receive(self, text: str | bytes) -> list[Effect]:
        """Handle one text frame; return what to do, in order. Never raises for bad input."""
        if self.state == "closed":
            return []
        request_id: str | None = None
        try:
            now = self._monotonic()
            start, count = self._window
            self._window = (start, count + 1) if now - start < 1.0 else (now, 1)
            if not self._bucket.take(now):
                request_id = peek_id(text)
                raise RateLimited(
                    f"more than {self._limits.messages_per_second:g} messages per second (bursts of "
                    f"{self._limits.burst}); this one was dropped",
                    limit="messages-per-second",
                    value=self._window[1],
                    max=self._limits.messages_per_second,
                )
            raw = self._decode(text)
            request_id = _request_id(raw)
            problem = check_json(raw, text, self._limits.max_depth)
            if problem is not None:
                raise self._pre_hello(problem)
            if stages.ENABLED:
                stages.mark("parsed")
            # Options too large to log, or holding more values than the limit, are refused before validation (one
            # call over every key: 217,000 of them held the interpreter about 130 ms), the error made, not raised, so
            # that the frame is freed in slices.
            early = self._options_too_large(raw) if self.state == "ready" else None
            message = self._validate(raw) if early is None else None
            if len(text) >= SLICED_PARSE_BYTES:  # freed in slices, not in one cascade when this returns
                parts = _json_parts(raw)
                del raw
                free_in_slices(parts)
            if early is not None:
                raise early
            assert message is not None
            if stages.ENABLED:
                stages.mark("validated")
            return self._dispatch(message)
        except ConnectionFatal as exc:
            self.state = "closed"
            _drop_tracebacks(exc)
            return [Send(error_message(exc, request_id)), Close(exc.close_code, exc.code)]
        except BridgeError as exc:
            _drop_tracebacks(exc)
            return [Send(error_message(exc, request_id or exc.request_id))]
        except Exception as exc:  # a bug, never the client's: answered and logged (one line), not raised
            _log.error("internal error (%s) handling a message: %s", type(exc).__name__, str(exc)[:200])
            _drop_tracebacks(exc)
            error = InternalError("the bridge failed on this message; it was not applied")
            if self.state == "awaiting-hello":
                self.state = "closed"
                return [Send(error_message(error, request_id)), Close(4400, error.code)]
            return [Send(error_message(error, request_id))]

    # Decoding and validation.

    def moved_tokens(self, raw: Any) -> tuple[str, ...] | None:
        """The ids of the tokens ``raw`` (a parsed frame) moves, if it is only that — a ``scene.patch`` of a scene
        this world holds upserting at most :data:`MOVE_TOKENS` of its tokens, removing and replacing nothing —
        else ``None``. What such a patch costs follows the scene, not the frame, so the server may run it where
        cheap work runs (:class:`bridge.workers.InlineMoves`). Reads the world: call only while no other thread
        is in it. A frame the session would refuse is refused all the same wherever it runs."""
        world = self.world
        if self.state != "ready" or world is None or not isinstance(raw, dict) or raw.get("type") != "scene.patch":
            return None
        remove = raw.get("remove", {})
        if not raw.keys() <= _MOVE_KEYS or not isinstance(remove, dict) or any(remove.values()):
            return None
        upsert, scene = raw.get("upsert"), raw.get("scene")
        state = world.scenes.get(scene) if isinstance(scene, str) else None
        if state is None or not isinstance(upsert, dict) or any(v for k, v in upsert.items() if k != "tokens"):
            return None
        tokens = upsert.get("tokens")
        if not isinstance(tokens, list) or not 0 < len(tokens) <= MOVE_TOKENS:
            return None
        ids: list[str] = []
        for token in tokens:
            token_id = token.get("id") if isinstance(token, dict) else None
            if not isinstance(token_id, str) or state.token(token_id) is None:
                return None  # a new token adds pairs; an id that is not one is an error
            ids.append(token_id)
        return tuple(ids)

    def _decode(self, text: str | bytes) -> dict[str, Any]:
        # surrogatepass: a str may carry lone surrogates (replay reads files); they are refused below.
        if isinstance(text, str):
            # At most 4 UTF-8 bytes a character (3 for a lone surrogate): a short text needs no encoding to tell.
            size = (
                len(text)
                if 4 * len(text) <= self._limits.max_frame_bytes
                else len(text.encode("utf-8", "surrogatepass"))
            )
        else:
            size = len(text)
        if size > self._limits.max_frame_bytes:
            error = TooLarge(
                f"frame of {size} bytes is over the limit of {self._limits.max_frame_bytes}",
                limit="frame-bytes",
                value=size,
                max=self._limits.max_frame_bytes,
            )
            error.request_id = peek_id(text)
            raise self._pre_hello(error)
        try:
            raw = _parse(text)
        except RecursionError:
            error = _too_deep(nesting_depth(text), self._limits.max_depth)
            error.request_id = peek_id(text)  # not parsed: the id is read from the frame's head
            raise self._pre_hello(error) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise self._pre_hello(InvalidMessage(f"not valid JSON: {exc}")) from exc
        if not isinstance(raw, dict):
            problem = check_json(raw, text, self._limits.max_depth)
            raise self._pre_hello(
                problem or InvalidMessage(f"a message must be a JSON object, not {type(raw).__name__}")
            )
        return raw

    def _validate(self, raw: dict[str, Any]) -> BaseModel:
        kind = raw.get("type")
        if self.state == "awaiting-hello" and kind != "hello" and not (kind == "ping" and self._turned_away):
            if self._turned_away:
                raise HelloRequired(f"this connection's hello was refused: send 'hello' again or 'ping', not {kind!r}")
            raise HelloRequired(f"the first message must be 'hello', not {kind!r}")
        if kind == "adjudicate":  # the commonest message: its model's own validator, without the union's tag lookup
            try:
                return _ADJUDICATE(raw)
            except ValidationError:
                pass  # named below by the union, as every bad message is (the same error as before)
        try:
            return CLIENT_MESSAGE.validate_python(raw)
        except ValidationError as exc:
            raise self._pre_hello(_invalid(exc)) from exc

    def _pre_hello(self, error: BridgeError) -> BridgeError:
        """Before hello, every error in reading a message closes the connection (keeping its code: too-large stays
        too-large). Not a hello refused for want of room (:meth:`_hello`), nor a message dropped by the rate limit."""
        if self.state == "awaiting-hello":
            return RefusedBeforeHello(error)
        return error

    # Dispatch.

    def _dispatch(self, message: BaseModel) -> list[Effect]:
        handler = self._HANDLERS.get(type(message))
        if handler is None:  # pragma: no cover - every client message type has a handler
            raise InvalidMessage(f"no handler for {type(message).__name__}")
        return handler(self, message)

    def _hello(self, message: Hello) -> list[Effect]:
        if self.state == "ready" and self.world is not None and self.world.id != OFFLINE_WORLD:
            raise InvalidMessage("hello: this connection has already said hello")
        if message.protocol != PROTOCOL:
            raise UnsupportedProtocol(
                f"protocol {message.protocol} is not supported; this bridge speaks {PROTOCOL}",
                supported=[PROTOCOL],
            )
        if self.state == "awaiting-hello":
            if not self._authenticate(message.world, message.secret):
                raise Unauthorized(f"wrong or missing secret for world {message.world!r}")
            refusal = self._admit(message.world)
            if refusal is not None:  # not fatal: the session stays awaiting hello, counted for no world
                self._turned_away = True
                raise refusal if isinstance(refusal, TooManyConnections) else TooManyConnections(refusal)
            self.world = self._worlds.get(message.world)
        self.user = message.user
        self.world_name = message.world_name
        self.state = "ready"
        return [Send(welcome())]

    def _scene_sync(self, message: SceneSync) -> list[Effect]:
        world = self._ready_world()
        watched = {scene_id for world_id, scene_id in list(self._worlds.watches) if world_id == world.id}
        try:
            state = world.sync(message.scene, watched=watched)
        except SceneRejected as exc:
            raise _rejected(exc) from exc
        self._worlds.forget_gone(world)
        scene = state.scene
        answer = SceneSynced(
            id=message.id,
            scene=scene.id,
            regions=len(scene.regions),
            tokens=len(scene.tokens),
            walls=len(scene.walls),
            ignored=[_ignored_entry(entry) for entry in state.ignored.values()] or None,
        )
        return [Send(answer), *self._notify_watchers(world, state)]

    def _scene_patch(self, message: ScenePatch) -> list[Effect]:
        world = self._ready_world()
        replace_fields: dict[str, Any] = {
            key: value
            for key in ("name", "grid", "rules", "environment")
            if (value := getattr(message, key)) is not None
        }
        try:
            result = world.patch(
                message.scene,
                upsert={k: list(getattr(message.upsert, k)) for k in ("regions", "tokens", "walls", "lights")},
                remove={k: list(getattr(message.remove, k)) for k in ("regions", "tokens", "walls", "lights")},
                replace=replace_fields,
            )
        except KeyError as exc:
            raise UnknownScene(f"no scene {message.scene!r} in this world; send scene.sync first") from exc
        except SceneRejected as exc:
            raise _rejected(exc) from exc
        if stages.ENABLED:
            stages.mark("patched")
        answer = ScenePatched(
            id=message.id,
            scene=message.scene,
            ignored=[_ignored_entry(entry) for entry in result.ignored] or None,
            used=[IgnoredRef.model_validate({kind: item_id}) for kind, item_id in result.used] or None,
        )
        return [Send(answer), *self._notify_watchers(world, result.state)]

    def _adjudicate(self, message: Adjudicate) -> list[Effect]:
        world = self._ready_world()
        state = world.use(message.scene)
        if state is None:
            raise UnknownScene(f"no scene {message.scene!r} in this world; send scene.sync first")
        if message.target is not None and state.scene.rules.lines == "best":  # (the check's own test, without the call)
            self._check_best_lines(state, 1, "adjudicate")
        ruling = self.rule(state, message)
        if not (message.log and self._logging):
            return [Send(_adjudication_answer(message, state, ruling))]
        answer = _adjudication(message, state, ruling)
        record = self._record(message, state, ruling, answer)
        self._check_record_size(record.record)
        return [StoreThenSend("append", message.id, world.id, record.time_at, record=record.record, answer=answer)]

    def rule(self, state: SceneState, message: Adjudicate) -> Ruling:
        """The ruling for ``message`` on ``state`` (raises the contract's errors)."""
        scene = state.scene
        actor = state.token(message.actor)
        if actor is None:
            raise UnknownToken(f"actor: no token {message.actor!r} in scene {scene.id!r}", field="actor")
        ruleset = state.ruleset
        if message.action not in ruleset.actions:
            raise InvalidMessage(
                f"action: unknown action {message.action!r} for {ruleset.id}; "
                f"known: {', '.join(sorted(ruleset.actions))}",
                field="action",
            )
        target = None
        lines: tuple[Any, ...] = ()
        if message.target is not None:
            target = state.token(message.target)
            if target is None:
                raise UnknownToken(f"target: no token {message.target!r} in scene {scene.id!r}", field="target")
        # No options but ``aware`` (the common question): no options dictionary made unless the per-pair path needs it.
        options = {"aware": message.aware, **message.options} if message.options else None
        frozen = _FROZEN_AWARE[message.aware] if options is None else _frozen(options)
        key = (message.actor, message.target, message.action, message.reaction, frozen)
        known = state.rulings.get(key)
        if known is not None:
            return known
        if target is not None and self._engine_answers(state, options or {"aware": message.aware}):
            world_id = self._ready_world().id
            worlds = self._worlds
            ruling = (
                self._watched_ruling(world_id, state, actor.id, target.id, message.action, message.reaction)
                if worlds.watches.get((world_id, scene.id))  # (no watch of the scene: nothing to look through)
                else None
            )
            if ruling is None:
                ruling = worlds.engines_of(world_id).ruling(
                    state, actor.id, target.id, message.action, message.reaction, self._monotonic()
                )
            if ruling is not None:
                return ruling
        if options is None:
            options = {"aware": message.aware}
        if target is not None:
            geometry = state.geometry
            sight_lines = geometry.sight_lines(actor.id, target.id, scene.rules.lines)
            lines = tuple(geometry.evidence(actor.id, target.id, line) for line in sight_lines)
        situation = Situation(
            scene=scene,
            geometry=state.geometry,
            actor=actor,
            target=target,
            action=message.action,
            reaction=message.reaction,
            lines=lines,
            options=options,
        )
        try:
            return state.remember(key, ruleset.adjudicate(situation))
        except RulingError as exc:
            raise InvalidMessage(f"{exc.field}: {exc}", field=exc.field) from exc

    def _engine_answers(self, state: SceneState, options: dict[str, Any]) -> bool:
        """Whether a whole-scene engine may answer this question (:mod:`bridge.engines` says why not, else)."""
        if options != _DEFAULT_OPTIONS or state.scene.rules.lines != "center":
            return False
        n = len(state.scene.tokens)
        return 0 < n * (n - 1) <= self._limits.engine_pairs

    def _watched_ruling(
        self, world_id: str, state: SceneState, actor: str, target: str, action: str, reaction: bool
    ) -> Ruling | None:
        """The ruling a watch of this scene version already holds for the pair (an overlay's watch and the
        chat card ask the same question), or ``None``."""
        for watch in list(self._worlds.watchers(world_id, state.scene.id)):
            engine = watch.visibility
            if watch.state is state and engine.action == action:
                ruling = engine.rulings(reaction).get((actor, target))
                if ruling is not None:
                    return ruling
        return None

    def _record(self, message: Adjudicate, state: SceneState, ruling: Ruling, answer: Adjudication) -> _PendingRecord:
        from .log.capture import record_of, situation_of  # the log's modules only when a ruling is logged
        from .log.records import Party

        at = self._clock()
        actor = state.token(message.actor)
        target = state.token(message.target) if message.target else None
        user = message.user or self.user
        assert self.world is not None and actor is not None
        record = record_of(
            answer,
            world=self.world.id,
            world_name=self.world_name,
            actor=Party(id=actor.id, name=actor.name),
            target=Party(id=target.id, name=target.name) if target else None,
            user=Party(id=user.id, name=user.name) if user and (user.id or user.name) else None,
            reaction=message.reaction,
            snapshot=self._worlds.snapshot(self.world.id, state),
            situation=situation_of(state.scene, actor, target, aware=message.aware, options=message.options),
            at=at,
        )
        return _PendingRecord(record, at)

    def _options_too_large(self, raw: dict[str, Any]) -> TooLarge | None:
        """The error for an ``adjudicate`` (parsed, not yet validated) whose options hold more values than the limit
        (:meth:`_too_many_option_values`) or, logged, are alone over the record's limit; else ``None``.

        Its record keeps the options as they are, so it would certainly be refused once ruled and built. Their
        JSON (as the log writes it) is counted a slice of keys at a time, and only until it is past the limit: it
        costs none of the validation, the ruling (whose memo walks every option) nor the record's building and
        dump, and no one call over megabytes. Before, 217,000 option keys cost 0.6 s of CPU after parsing (one
        validation call of about 130 ms among it), 4 MiB of options 40 ms.
        """
        options = raw.get("options")
        if raw.get("type") != "adjudicate" or not isinstance(options, dict) or not options:
            return None
        if not (raw.get("log") is True and self._logging):
            return self._too_many_option_values(options)
        most = self._limits.log_record_bytes
        size = 1  # "{" … "}": each slice's JSON less one brace; the comma between two slices stands for the other
        items = iter(options.items())
        while size <= most and (part := dict(islice(items, _OPTIONS_SLICE))):
            # A string's JSON takes at least its length and two quotes: one longer than the limit is not serialised.
            longest = next((v for v in part.values() if isinstance(v, str) and len(v) > most), None)
            size += len(longest) + 2 if longest is not None else len(to_json(part)) - 1
        if size <= most:
            return self._too_many_option_values(options)
        return TooLarge(
            f"options: this ruling's log record would take more than {most:,} bytes (its options take {size:,} "
            f"bytes or more), over the limit of {most:,}; ask with log: false to have it answered without "
            "logging it",
            field="options",
            limit="log-record-bytes",
            value=size,
            max=most,
        )

    def _too_many_option_values(self, options: dict[str, Any]) -> TooLarge | None:
        """The error for ``options`` (parsed, not yet validated) holding more values than the limit, nested ones
        counted, or ``None``; counted only until past the limit.

        Logged or not, the message's validation (one call over every key) and the ruling's memo key (which keeps
        the options, walked in Python) cost what the options hold: 217,000 keys with ``log: false`` held the
        world's thread about 1 s, the interpreter 130 ms in one call, and the memo kept them.
        """
        most = self._limits.option_values
        if len(options) > most:
            count = len(options)
        else:
            count = 0
            stack: list[dict[str, Any] | list[Any]] = [options]
            while stack and count <= most:
                item = stack.pop()
                for child in item.values() if isinstance(item, dict) else item:
                    count += 1
                    if count > most:
                        break
                    if isinstance(child, (dict, list)) and child:
                        stack.append(child)
            if count <= most:
                return None
        return TooLarge(
            f"options: {count:,} values{'' if len(options) > most else ' or more'} (keys' values and list items, "
            f"nested ones counted), over the limit of {most:,}; no ruleset reads more than a few options",
            field="options",
            limit="option-values",
            value=count,
            max=most,
        )

    def _check_record_size(self, record: RulingRecord) -> None:
        """Refuse to log a ruling whose record would take more than the limit, naming what makes it large."""
        most = self._limits.log_record_bytes
        # The bytes ``model_dump_json`` would give, without making a str of them and encoding it again.
        size = len(record.__pydantic_serializer__.to_json(record, exclude={"snapshot"}))
        if size <= most:
            return
        situation = record.situation or {}
        tokens = situation.get("tokens", [])
        parts = [
            (_json_size(situation.get("options", {})), "options", "its options take {:,} bytes"),
            (
                _json_size(tokens),
                "log",
                f"the {len(tokens)} tokens it read (those whose light may reach the target) take {{:,}} bytes",
            ),
            (_json_size(record.user), "user", "the user's name and id take {:,} bytes"),
        ]
        part_size, field, what = max(parts, key=lambda part: part[0])
        why = what.format(part_size) if 2 * part_size >= size else "its notes, citations and crossings take most of it"
        raise TooLarge(
            f"{field}: this ruling's log record would take {size:,} bytes ({why}), over the limit of {most:,}; "
            "ask with log: false to have it answered without logging it",
            field=field,
            limit="log-record-bytes",
            value=size,
            max=most,
        )

    def _session_start(self, message: SessionStart) -> list[Effect]:
        world = self._ready_world()
        return [
            StoreThenSend(
                "start",
                message.id,
                world.id,
                self._clock(),
                name=message.name,
                user=self.user,
                world_name=self.world_name,
            )
        ]

    def _session_end(self, message: SessionEnd) -> list[Effect]:
        world = self._ready_world()
        return [StoreThenSend("end", message.id, world.id, self._clock(), user=self.user)]

    def _ruling_override(self, message: RulingOverride) -> list[Effect]:
        world = self._ready_world()
        if message.allowed == (message.modifier is None):
            raise InvalidMessage("modifier: give a modifier exactly when allowed is true", field="modifier")
        return [StoreThenSend("override", message.id, world.id, self._clock(), override=message, user=self.user)]

    def _encounter_range(self, message: EncounterRangeRequest) -> list[Effect]:
        from .core.rules.traveller import explain_encounter_range  # Traveller's module only when asked

        result = explain_encounter_range(
            message.base, light=message.light, weather=message.weather, woods=message.woods, locale=message.locale
        )
        answer = EncounterRangeResult(
            id=message.id, range=result.range, steps=list(result.steps), citations=list(result.citations)
        )
        return [Send(answer)]

    # Watches.

    def _check_best_lines(self, state: SceneState, pairs: int, what: str) -> None:
        """Refuse a message whose ``"best"`` sight lines would cost more line tests than the limit."""
        scene = state.scene
        if scene.rules.lines != "best":
            return
        against = sum(1 for region in scene.regions if region.zone is not None) + len(scene.walls)
        tests = pairs * BEST_LINES * against
        most = self._limits.best_line_tests
        if tests > most:
            raise TooLarge(
                f"{what}: rules.lines 'best' tests up to {BEST_LINES} sight lines a pair against every zone and "
                f"wall: {pairs} pair(s) × {BEST_LINES} × {against} = {tests} line tests, over the limit of {most}; "
                "use rules.lines 'center' on this scene",
                limit="best-line-tests",
                value=tests,
                max=most,
            )

    def _check_watch_size(self, state: SceneState, tokens: frozenset[str] | None) -> None:
        """Refuse a watch covering more pairs, or costing more segment tests (in a ``"best"`` scene, line
        tests), than the limits."""
        pairs = watch_pairs(state, tokens)
        most = self._limits.watch_pairs
        if pairs > most:
            raise TooLarge(
                f"watch: it covers {pairs} (actor, target) pairs, over the limit of {most}; "
                "watch the pairs of some tokens only (tokens)",
                limit="watch-pairs",
                value=pairs,
                max=most,
            )
        segments = state.vertices + len(state.scene.walls)
        tests = pairs * segments
        if tests > self._limits.watch_tests:
            raise TooLarge(
                f"watch: {pairs} pair(s) × {segments} segments (the scene's {state.vertices} vertices and "
                f"{len(state.scene.walls)} walls) = {tests} segment tests, over the limit of "
                f"{self._limits.watch_tests}; watch the pairs of some tokens only (tokens), or draw the zones "
                "with fewer vertices",
                limit="watch-tests",
                value=tests,
                max=self._limits.watch_tests,
            )
        self._check_best_lines(state, pairs, "watch")

    def _world_watch_pairs(self, world_id: str, *, besides: tuple[str, str] | None = None) -> int:
        """The pairs all of a world's open watches cover (those of the scene ``besides`` left out)."""
        return sum(
            w.pairs for k, ws in list(self._worlds.watches.items()) if k[0] == world_id and k != besides for w in ws
        )

    def _check_world_watch_pairs(self, held: int, pairs: int, what: str) -> None:
        """Refuse a watch whose pairs would take the world's open watches past ``Limits.world_watch_pairs``."""
        most = self._limits.world_watch_pairs
        if held + pairs > most:
            raise TooLarge(
                f"{what}: this world's open watches already cover {held:,} (actor, target) pairs and this one "
                f"{pairs:,}, over the limit of {most:,} for one world; close an overlay on another connection "
                "(unwatch), or watch the pairs of some tokens only (tokens)",
                limit="world-watch-pairs",
                value=held + pairs,
                max=most,
            )

    def _watch(self, message: Watch) -> list[Effect]:
        world = self._ready_world()
        state = world.use(message.scene)
        if state is None:
            raise UnknownScene(f"no scene {message.scene!r} in this world; send scene.sync first")
        open_watches = sum(1 for ws in list(self._worlds.watches.values()) for w in ws if w.owner is self)
        if open_watches >= self._limits.watches:
            raise TooLarge(
                f"watch: this connection already holds {open_watches} watches, the most it may; unwatch one first",
                limit="watches-per-connection",
                value=open_watches + 1,
                max=self._limits.watches,
            )
        if message.action not in state.ruleset.actions:
            raise InvalidMessage(f"action: unknown action {message.action!r} for {state.ruleset.id}", field="action")
        for token_id in message.tokens or ():
            if state.token(token_id) is None:
                raise UnknownToken(f"tokens: no token {token_id!r} in scene {state.scene.id!r}", field="tokens")
        key = (world.id, message.scene)
        mine = [w for k, ws in list(self._worlds.watches.items()) if k[0] == world.id for w in ws if w.owner is self]
        if any(w.watch_id == message.id for w in mine):
            raise InvalidMessage(f"id: a watch {message.id!r} is already open on this connection", field="id")
        watched = None if message.tokens is None else frozenset(message.tokens)
        self._check_watch_size(state, watched)
        pairs = watch_pairs(state, watched)
        self._check_world_watch_pairs(self._world_watch_pairs(world.id), pairs, "watch")
        from .core.visibility import SceneVisibility

        try:
            visibility = SceneVisibility(state, action=message.action, reaction=message.reaction, tokens=message.tokens)
            rulings = visibility.rulings()
        except RulingError as exc:
            raise InvalidMessage(f"{exc.field}: {exc}", field=exc.field) from exc
        self._worlds.watches.setdefault(key, []).append(
            ActiveWatch(
                self, message.id, message.scene, visibility, brief=message.detail == "brief", state=state, pairs=pairs
            )
        )
        everything = _annotations(
            message.id, state, rulings, full=True, brief=message.detail == "brief", engine=visibility
        )
        return [
            Send(Watching(id=message.id, watch=message.id, scene=message.scene, action=message.action)),
            Send(everything),
        ]

    def _unwatch(self, message: Unwatch) -> list[Effect]:
        self._ready_world()
        if not self._drop_watches(lambda w: w.watch_id == message.watch):
            raise InvalidMessage(f"watch: no watch {message.watch!r} on this connection", field="watch")
        return [Send(Unwatched(id=message.id, watch=message.watch))]

    def close(self) -> None:
        """The connection is gone: forget its watches. Call once, from the adapter."""
        self._drop_watches(lambda w: True)
        self.state = "closed"

    def _drop_watches(self, which: Callable[[ActiveWatch], bool]) -> int:
        """Drop this session's watches that ``which`` selects. Only its own world's entries are read or
        written: another world's sessions may be changing theirs at the same time (one thread per world)."""
        if self.world is None:
            return 0
        dropped = 0
        for key, watches in [(k, v) for k, v in list(self._worlds.watches.items()) if k[0] == self.world.id]:
            kept = [w for w in watches if not (w.owner is self and which(w))]
            if len(kept) == len(watches):
                continue
            dropped += len(watches) - len(kept)
            if kept:
                self._worlds.watches[key] = kept
            else:
                del self._worlds.watches[key]
        return dropped

    def _notify_watchers(self, world: World, state: SceneState) -> list[Effect]:
        """After a scene changed: each watcher gets only the pairs whose ruling changed."""
        effects: list[Effect] = []
        engines = self._worlds.engines.get(world.id)
        if engines is not None:
            engines.tidy(world.scenes, self._monotonic())
        key = (world.id, state.scene.id)
        held = self._world_watch_pairs(world.id, besides=key)  # the world's watches of its other scenes
        for watch in list(self._worlds.watchers(world.id, state.scene.id)):
            try:
                watch.owner._check_watch_size(state, watch.visibility.watched)
                pairs = watch_pairs(state, watch.visibility.watched)
                self._check_world_watch_pairs(held, pairs, "watch")
                changes = watch.visibility.update(state)
                watch.state = state
                watch.pairs = pairs
                held += pairs
                if stages.ENABLED:
                    stages.mark("updated")
            except (RulingError, KeyError, ValueError, TooLarge) as exc:
                self._worlds.watches[key].remove(watch)
                ended = Unwatched(watch=watch.watch_id, reason=f"the scene changed so that this watch ends: {exc}")
                effects.append(Send(ended) if watch.owner is self else Deliver(watch.owner, ended))
                continue
            except Exception as exc:  # a bug in the engine: the scene change stands, this watch ends
                _log.error("watch %s could not follow a change (%s): %s", watch.watch_id, type(exc).__name__, exc)
                self._worlds.watches[key].remove(watch)
                ended = Unwatched(watch=watch.watch_id, reason="the bridge could not follow this change; watch again")
                effects.append(Send(ended) if watch.owner is self else Deliver(watch.owner, ended))
                continue
            if not changes:
                continue
            pushed = _annotations(
                watch.watch_id, state, changes, full=False, brief=watch.brief, engine=watch.visibility
            )
            if stages.ENABLED:
                stages.mark("built")
            effects.append(Send(pushed) if watch.owner is self else Deliver(watch.owner, pushed))
        if key in self._worlds.watches and not self._worlds.watches[key]:
            del self._worlds.watches[key]
        return effects

    def _ping(self, message: Ping) -> list[Effect]:
        return [Send(Pong(id=message.id))]

    def _ready_world(self) -> World:
        assert self.world is not None, "dispatch happens only after hello"
        return self.world

    _HANDLERS: ClassVar[dict[type[BaseModel], Callable[[Session, Any], list[Effect]]]] = {
        Hello: _hello,
        SceneSync: _scene_sync,
        ScenePatch: _scene_patch,
        Adjudicate: _adjudicate,
        Ping: _ping,
        SessionStart: _session_start,
        SessionEnd: _session_end,
        RulingOverride: _ruling_override,
        EncounterRangeRequest: _encounter_range,
        Watch: _watch,
        Unwatch: _unwatch,
    }


@dataclass(frozen=True, slots=True)
class _PendingRecord:
    record: RulingRecord
    time_at: datetime


# --- Building answers ------------------------------------------------------------------------------


def welcome() -> Welcome:
    return Welcome(
        bridge=BridgeInfo(version=__version__),
        rulesets=[RulesetInfo(id=r.id, editions=list(r.editions)) for r in RULESETS.values()],
        palette=Palette(zones=dict(ZONES), other=OTHER, verdicts=dict(VERDICTS)),
    )


def _ignored_entry(entry: Ignored) -> IgnoredEntry:
    """The wire form of one thing held but not used: ``{"<kind>": id, "reason": …, "cause": …}``."""
    return IgnoredEntry.model_validate({entry.kind: entry.id, "reason": entry.reason, "cause": entry.cause})


def _ruling_fields(ruling: Ruling) -> dict[str, Any]:
    """The wire fields every ruling carries, in an adjudication or an annotation."""
    line = None
    if ruling.line is not None:
        start, end = ruling.line.start, ruling.line.end
        line = WireLine(start=WirePoint(x=start.x, y=start.y, z=start.z), end=WirePoint(x=end.x, y=end.y, z=end.z))
    return {
        "allowed": ruling.allowed,
        "modifier": ruling.modifier,
        "crossings": [WireCrossing(region=c.region, zone=c.zone, kind=c.kind.value) for c in ruling.crossings],
        "modifiers": [WireModifier.model_validate(entry.to_wire()) for entry in ruling.modifiers],
        "notes": list(ruling.notes),
        "citations": list(ruling.citations),
        "line": line,
    }


def _adjudication(message: Adjudicate, state: SceneState, ruling: Ruling) -> Adjudication:
    extra = dict(ruling.extra)
    top = {key: extra.pop(key) for key in ("difficulty", "asset", "device") if key in extra}
    return Adjudication(
        id=message.id,
        scene=state.scene.id,
        actor=message.actor,
        target=message.target,
        action=message.action,
        reaction=message.reaction,
        ruleset=state.ruleset.id,
        edition=state.scene.rules.edition,
        details=extra,
        **_ruling_fields(ruling),
        **top,
    )


#: Validates an ``adjudicate`` (what :data:`CLIENT_MESSAGE` does once it has read the tag ``adjudicate``).
_ADJUDICATE: Callable[[dict[str, Any]], Adjudicate] = Adjudicate.__pydantic_validator__.validate_python
#: A crossing's ``kind`` as the wire writes it (a look-up: cheaper than the enum's ``value`` property).
_KIND_WIRE: dict[CrossingKind, str] = {kind: kind.value for kind in CrossingKind}


def _adjudication_answer(message: Adjudicate, state: SceneState, ruling: Ruling) -> BaseModel:
    """An unlogged ``adjudication``, built straight into wire form: the same JSON as :func:`_adjudication`
    (field order and pruning included; ``tests/test_engines.py`` compares them), without a model per
    crossing and candidate. A ruling's ruleset fields (``extra``: plain JSON values) go where the model
    puts them: the contract's at the top level, the rest in ``details``, pruned as ``dump_message`` prunes."""
    payload: dict[str, Any] = {
        "type": "adjudication",
        "id": message.id,
        "scene": state.scene.id,
        "actor": message.actor,
        "target": message.target,
        "action": message.action,
        "reaction": message.reaction,
        "ruleset": state.ruleset.id,
        "edition": state.scene.rules.edition,
        "allowed": ruling.allowed,
        "modifier": ruling.modifier,
        "crossings": [{"region": c.region, "zone": c.zone, "kind": _KIND_WIRE[c.kind]} for c in ruling.crossings],
        "modifiers": [entry.to_wire() for entry in ruling.modifiers],
        "notes": list(ruling.notes),
        "citations": list(ruling.citations),
    }
    if ruling.line is not None:
        start, end = ruling.line.start, ruling.line.end
        payload["line"] = {
            "start": {"x": float(start.x), "y": float(start.y), "z": float(start.z)},
            "end": {"x": float(end.x), "y": float(end.y), "z": float(end.z)},
        }
    payload["logged"] = False
    if ruling.extra:
        details = dict(ruling.extra)
        for key in ("difficulty", "asset", "device"):
            value = details.pop(key, None)
            if value is not None:
                payload[key] = value
        if details:
            payload["details"] = prune_wire(details)
    return Prebuilt(payload=payload)  # a dict we just built: taken as it is (not validated)


def _annotations(
    watch_id: str,
    state: SceneState,
    changes: Mapping[tuple[str, str], Ruling | None],
    *,
    full: bool,
    brief: bool,
    engine: SceneVisibility | None = None,
) -> Prebuilt:
    """An ``annotations`` push, built straight into wire form: it carries every changed pair of a scene.

    ``changes`` is a watch's ``engine``'s :meth:`~SceneVisibility.rulings` (the first, full push) or what
    its ``update`` returned. A ``brief`` push reads verdicts, crossings and lines only: given the engine,
    they come from its arrays in bulk (:meth:`~SceneVisibility.verdict_runs`), no ruling is built for them
    and each pair is written already encoded (:func:`_run_wire`) — the same JSON, byte for byte
    (``tests/test_watch.py`` compares the two).
    """
    changed: list[Any] = []
    removed = []
    if engine is None or not brief:
        for (actor, target), found in changes.items():
            if found is None:
                removed.append({"actor": actor, "target": target})
            else:
                changed.append(_ruling_wire(found, brief=brief, pair={"actor": actor, "target": target}))
    else:
        from .core.visibility import VerdictRun

        for item in engine.verdict_runs(changes):
            if isinstance(item, VerdictRun):
                changed += _run_wire(item)
                continue
            (actor, target), found = item
            if found is None:
                removed.append({"actor": actor, "target": target})
            else:
                changed.append(_ruling_wire(found, brief=True, pair={"actor": actor, "target": target}))
    return Prebuilt(
        payload={
            "type": "annotations",
            "watch": watch_id,
            "scene": state.scene.id,
            "version": state.version,
            "full": full,
            "changed": changed,
            "removed": removed,
        }
    )


def _run_wire(run: VerdictRun) -> list[Any]:
    """Each line of ``run`` as its pushed JSON, already encoded (an ``orjson.Fragment``): the bytes orjson
    writes for the dictionary :func:`_ruling_wire` (``brief``) makes of the line's ruling — ``actor``,
    ``target``, ``allowed``, ``modifier``, ``crossings``, ``line`` — put together from the encoded pieces
    a scene shares (a token's id and centre, a zone's crossing, a verdict). Should a piece not encode (a
    lone surrogate: refused on the way in), the dictionaries instead, for the encoder's own error path."""
    try:
        actor_of, target_of = _token_fragments(run.ids)
        start_of, end_of = _line_fragments(run.points)
        crossings = _code_fragments(run.codes, run.crossings)
    except TypeError:  # orjson.JSONEncodeError
        return [
            {
                "actor": actor,
                "target": target,
                "allowed": found.allowed,
                "modifier": found.modifier,
                "crossings": list(map(_crossing_wire, found.crossings)),
                "line": {"start": _point_wire(found.start), "end": _point_wire(found.end)},
            }
            for (actor, target), found in run.items()
        ]
    return line_records(
        run.lines,
        run.src,
        run.dst,
        run.allowed,
        run.modifier,
        run.starts,
        crossings,
        actor_of,
        target_of,
        start_of,
        end_of,
        _VERDICT_FRAGMENTS,
        b'false,"modifier":null,"crossings":[',
        _verdict_fragment,
        orjson.Fragment,
    )


def _verdict_fragment(modifier: int) -> bytes:
    """An allowed line's verdict with ``modifier``, encoded with what follows it up to its crossings."""
    return b'true,"modifier":' + orjson.dumps(modifier) + b',"crossings":['


#: An allowed line's verdict, encoded with what follows it up to its crossings, by modifier.
_VERDICT_FRAGMENTS: dict[int, bytes] = {}


def _token_fragments(ids: list[str]) -> tuple[list[bytes], list[bytes]]:
    """Each token's ``actor`` and ``target`` pieces of a pair's JSON: ``{"actor":ID`` and
    ``,"target":ID,"allowed":`` (kept per list of ids: a pass's, which the engine never changes)."""
    found: tuple[list[bytes], list[bytes]] = _ids_json(ids)
    return found


def _line_fragments(points: list[Point3]) -> tuple[list[bytes], list[bytes]]:
    """Each token centre's pieces of a pair's JSON: ``],"line":{"start":POINT`` and ``,"end":POINT}}``
    (``_point_wire``'s dictionary, encoded), found by identity.

    A move's pass holds the same centre objects as the pass before it but the moved token's: the last
    lists made are kept with the centres they were made for, and only the entries whose centre is
    another object are found again (the pieces are the same for the same object). The lists handed out
    are never changed afterwards (a new list is made when one entry differs)."""
    last = _LAST_LINES[0]
    if last is not None and len(last[0]) == len(points):
        made_for, starts, ends = last
        moved = list(compress(count(), map(is_not, made_for, points)))
        if not moved:
            return starts, ends
        if 4 * len(moved) <= len(points):
            starts, ends = starts.copy(), ends.copy()
            for k in moved:
                starts[k], ends[k] = _point_json(points[k])
            _LAST_LINES[0] = (tuple(points), starts, ends)
            return starts, ends
    held = _point_json._held
    starts = []
    ends = []
    for point in points:
        entry = held.get(id(point))
        pieces = entry[1] if entry is not None and entry[0] is point else _point_json(point)
        starts.append(pieces[0])
        ends.append(pieces[1])
    _LAST_LINES[0] = (tuple(points), starts, ends)
    return starts, ends


#: :func:`_line_fragments`' last lists, with the centres they were made for (one entry, replaced whole:
#: worlds' threads may read and write it at the same time, each entry stays consistent).
_LAST_LINES: list[tuple[tuple[Point3, ...], list[bytes], list[bytes]] | None] = [None]


def _code_fragments(codes: list[int], crossings: list[Crossing]) -> list[bytes]:
    """The JSON of each crossing of ``codes`` (numbers into ``crossings``), in order: kept per list of
    codes (a pass's, which the engine never changes), so that every run of one pass shares it."""
    key = id(codes)
    found = _CODES_JSON.get(key)
    if found is not None and found[0] is codes:
        return found[1]
    made = list(map(_crossing_list_json(crossings).__getitem__, codes))
    if len(_CODES_JSON) >= 8:
        with contextlib.suppress(KeyError, StopIteration, RuntimeError):  # (another world's thread at it too)
            del _CODES_JSON[next(iter(_CODES_JSON))]
    _CODES_JSON[key] = (codes, made)
    return made


#: :func:`_code_fragments` of the last few passes.
_CODES_JSON: dict[int, tuple[list[int], list[bytes]]] = {}


class _WireByIdentity(Generic[T]):
    """The wire form of immutable objects, made once per object and found again by identity.

    A scene's crossings and token centres are shared by many rulings (every line of a token starts at
    the same point; a zone has four crossings, one per kind), so their JSON-ready form is built once.
    The object is held with its form, so its ``id`` cannot be reused while the entry lives; past
    ``limit`` entries the oldest goes (one at a time: no burst of frees inside one message). The forms
    are shared: nothing may change them.
    """

    def __init__(self, make: Callable[[T], Any], limit: int) -> None:
        self._make, self._limit = make, limit
        self._held: OrderedDict[int, tuple[T, Any]] = OrderedDict()

    def clear(self) -> None:
        self._held.clear()

    def __call__(self, value: T) -> Any:
        held = self._held.get(id(value))
        if held is not None and held[0] is value:
            return held[1]
        if len(self._held) >= self._limit:
            with contextlib.suppress(KeyError):  # emptied meanwhile by another world's thread
                self._held.popitem(last=False)
        wire = self._make(value)
        self._held[id(value)] = (value, wire)
        return wire


_crossing_wire = _WireByIdentity[Crossing](lambda c: {"region": c.region, "zone": c.zone, "kind": c.kind.value}, 10_000)
_point_wire = _WireByIdentity[Point3](lambda p: {"x": p.x, "y": p.y, "z": p.z}, 10_000)
#: The same forms encoded, as pieces of a brief push's JSON (:func:`_run_wire`).
_crossing_json = _WireByIdentity[Crossing](lambda c: orjson.dumps(_crossing_wire(c)), 10_000)
_crossing_list_json = _WireByIdentity[list[Crossing]](lambda cs: [_crossing_json(c) for c in cs], 16)
_point_json = _WireByIdentity[Point3](
    lambda p: (b'],"line":{"start":' + orjson.dumps(_point_wire(p)), b',"end":' + orjson.dumps(_point_wire(p)) + b"}}"),
    10_000,
)
_ids_json = _WireByIdentity[list[str]](
    lambda ids: (
        [b'{"actor":' + orjson.dumps(token_id) for token_id in ids],
        [b',"target":' + orjson.dumps(token_id) + b',"allowed":' for token_id in ids],
    ),
    16,
)


def forget_wire_forms() -> None:
    """Empty the wire-form caches (after a world is dropped): entries left from its scenes would keep
    their objects alive, scattered over the heap, and with them pages the allocator cannot give back."""
    _crossing_wire.clear()
    _point_wire.clear()
    _crossing_json.clear()
    _point_json.clear()
    _crossing_list_json.clear()
    _ids_json.clear()
    _CODES_JSON.clear()
    _LAST_LINES[0] = None


def _ruling_wire(ruling: Ruling, *, brief: bool = False, pair: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`_ruling_fields` as plain JSON-ready values (same fields, same pruning).

    ``brief`` (an overlay's watch: it draws lines and MODs) keeps the verdict, the crossings and the line,
    and leaves out the candidates, notes and citations. ``pair`` (``actor``, ``target``) is filled in and
    returned, when given, rather than a new dict.
    """
    wire: dict[str, Any] = {} if pair is None else pair
    wire["allowed"] = ruling.allowed
    wire["modifier"] = ruling.modifier
    wire["crossings"] = list(map(_crossing_wire, ruling.crossings))
    if not brief:
        wire["modifiers"] = [entry.to_wire() for entry in ruling.modifiers]
        wire["notes"] = list(ruling.notes)
        wire["citations"] = list(ruling.citations)
    if ruling.extra:
        extra = dict(ruling.extra)
        for key in ("difficulty", "asset", "device"):
            if extra.get(key) is not None:
                wire[key] = extra.pop(key)
        if extra:
            wire["details"] = extra
    if ruling.line is not None:
        wire["line"] = {"start": _point_wire(ruling.line.start), "end": _point_wire(ruling.line.end)}
    return wire


def with_log_result(answer: Adjudication, *, logged: bool, record: str | None) -> Adjudication:
    """The answer to send once the store has (or has not) committed its record."""
    return answer.model_copy(update={"logged": logged, "record": record})


def error_message(error: BridgeError, request_id: str | None = None) -> ErrorMessage:
    return ErrorMessage(id=request_id, code=error.code, message=error.message, details=error.details)


#: The most tokens a patch may move and still count as a move (:meth:`Session.moved_tokens`).
MOVE_TOKENS = 8
_MOVE_KEYS = frozenset({"type", "id", "scene", "upsert", "remove"})


def watch_pairs(state: SceneState, tokens: frozenset[str] | None) -> int:
    """Ordered (actor, target) pairs a watch covers: all of them, or those in which one of ``tokens`` is."""
    n = len(state.scene.tokens)
    if tokens is None:
        return n * (n - 1)
    k = sum(1 for token_id in tokens if state.token(token_id) is not None)
    return n * (n - 1) - (n - k) * (n - k - 1)


def _json_size(value: Any) -> int:
    """Bytes ``value`` (JSON data or a model) takes as JSON, as the log writes it; 0 for ``None``."""
    return 0 if value is None else len(to_json(value))


def _frozen(value: Any) -> Any:
    """A hashable stand-in for JSON data (request options), equal exactly when the data is."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", *(_frozen(v) for v in value))
    return (type(value).__name__, value)


def _drop_tracebacks(exc: BaseException | None) -> None:
    """Forget the tracebacks of a refusal and of the exceptions it came from. A traceback keeps the frames it
    passed through, whose locals (the frame's text, the error itself) make a reference cycle that only the cyclic
    collector frees — and the bridge's collector freezes large frames unscanned: every refused 16 MiB frame stayed
    in memory (RSS +11-16 MiB a frame)."""
    for _ in range(8):
        if exc is None:
            return
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


def _request_id(raw: dict[str, Any]) -> str | None:
    value = raw.get("id")
    if isinstance(value, str) and 0 < len(value) <= 128 and (value.isascii() or not _SURROGATE.search(value)):
        return value
    return None


# --- What JSON may hold ---------------------------------------------------------------------------

#: ``\\uD800``–``\\uDFFF`` escapes: the only way a JSON text (once UTF-8 decoded) spells a surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def nesting_depth(text: str | bytes) -> int:
    """How deep a JSON text nests arrays and objects (brackets inside strings not counted).

    Only for texts too deep to parse: a linear scan, with strings removed by one regular expression.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', "", text)
    depth = deepest = 0
    for char in bare:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


#: Frames up to this size that orjson refuses are parsed again by the standard library, which accepts what
#: orjson does not (``NaN``, lone surrogate escapes, integers past 64 bits) so that the models and
#: :func:`check_json` can name the field at fault. A larger frame gets orjson's reason: parsing it twice
#: would hold the interpreter (and every other world) for as long again.
STRICT_PARSE_BYTES = 64 * 1024
#: Frames from this size on are parsed in slices (:func:`bridge.jsontext.loads_in_slices`): orjson would hold
#: the interpreter for one C call of about 10 ms per 256 KiB (40-50 ms for a 4 MiB frame).
SLICED_PARSE_BYTES = 256 * 1024


def _parse(text: str | bytes) -> Any:
    """A frame's JSON, by orjson: several times faster than the standard library, and the interpreter lock
    is held for that long (another world's answers wait for it); see :data:`STRICT_PARSE_BYTES`. A frame of
    :data:`SLICED_PARSE_BYTES` or more is parsed in slices to the same value, orjson naming what is wrong."""
    if len(text) >= SLICED_PARSE_BYTES:
        sliced = _parse_in_slices(text)
        if sliced is not None:
            return sliced
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if len(text) <= STRICT_PARSE_BYTES:
            # Bytes (a WebSocket frame) decoded strictly first: json.loads would let encoded surrogates through.
            return json.loads(text.decode() if isinstance(text, bytes) else text)
        if str(exc).startswith("depth limit exceeded"):
            raise RecursionError from None
        raise ValueError(str(exc)) from None


def _json_parts(raw: dict[str, Any]) -> list[Any]:
    """A parsed frame, its members and the items of the lists two levels down (a scene's walls, a patch's
    upserts), for :func:`bridge.core.release.free_in_slices`."""
    found: list[Any] = [raw]
    for value in raw.values():
        if isinstance(value, dict):
            with_items(found, [value])
            with_items(found, [item for item in value.values() if isinstance(item, (list, dict))])
        elif isinstance(value, list):
            with_items(found, [value])
    return found


def _parse_in_slices(text: str | bytes) -> Any | None:
    """What :func:`bridge.jsontext.loads_in_slices` makes of a frame (``None``: left to orjson)."""
    if isinstance(text, str):
        try:
            text = text.encode()
        except UnicodeEncodeError:  # a lone surrogate in the str (a replay file): orjson names it
            return None
    return loads_in_slices(text)


def _too_deep(depth: int, limit: int) -> TooLarge:
    return TooLarge(
        f"message: JSON nested {depth} deep; the most is {limit}",
        field="message",
        limit="depth",
        value=depth,
        max=limit,
    )


def check_json(value: Any, text: str | bytes, max_depth: int) -> BridgeError | None:
    """The first problem of decoded JSON that models cannot see: nesting deeper than ``max_depth``, or a
    lone surrogate (``"\\ud800"``: no Unicode text holds one) in a key or string, named by its path.

    ``text`` (what was decoded) lets the common case skip the walk: a text with fewer brackets than the
    limit cannot nest deeper, and one without a surrogate escape (or raw surrogate) cannot hold one.
    """
    brackets = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if brackets > max_depth and len(text) >= SLICED_PARSE_BYTES and _text_depth(text) <= max_depth:
        brackets = 0  # a large frame's depth is counted in numpy slices: walking it all in Python costs ~250 ms
    # Searched in slices: one search over a 4 MiB frame would hold the interpreter for tens of milliseconds.
    if isinstance(text, str):
        # (no backslash-u: no escape to search for — the common case, one C scan)
        surrogates = ("\\u" in text and search_in_slices(_SURROGATE_ESCAPE, text, 5) is not None) or (
            not text.isascii() and search_in_slices(_SURROGATE, text, 0) is not None
        )
    else:
        surrogates = b"\\u" in text and search_in_slices(SURROGATE_ESCAPE, text, 5) is not None
    if brackets <= max_depth and not surrogates:
        return None
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                return _too_deep(_depth_of(item, depth), max_depth)
            for key, child in item.items():
                where = f"{path}.{key}" if path else str(key)
                if surrogates and _SURROGATE.search(key):
                    return _lone_surrogate(where)
                stack.append((child, where, depth + 1))
        elif isinstance(item, list):
            if depth > max_depth:
                return _too_deep(_depth_of(item, depth), max_depth)
            stack.extend((child, f"{path}[{index}]", depth + 1) for index, child in enumerate(item))
        elif surrogates and isinstance(item, str) and _SURROGATE.search(item):
            return _lone_surrogate(path or "message")
    return None


def _text_depth(text: str | bytes) -> int:
    """How deep a parsed JSON text nests (:func:`bridge.jsontext.nesting_depth`); a ``str`` holding a lone
    surrogate (a replay file) is counted as too deep, so that :func:`check_json` walks it."""
    try:
        data = text.encode() if isinstance(text, str) else text
    except UnicodeEncodeError:
        return 1 << 30
    return nesting_depth_of(data)


def _depth_of(value: Any, depth: int) -> int:
    """The deepest nesting under ``value`` (found at ``depth``), for the error's ``value``."""
    deepest = depth
    stack = [(value, depth)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _lone_surrogate(path: str) -> InvalidMessage:
    shown = _SURROGATE.sub("\ufffd", path)
    return InvalidMessage(
        f"{shown}: holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which is not text",
        field=shown,
    )


def _invalid(exc: ValidationError) -> InvalidMessage:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    where = _location(first["loc"])
    problems = [{"field": _location(e["loc"]), "problem": e["msg"]} for e in errors[:10]]
    if first["type"] == "union_tag_invalid":
        return InvalidMessage(f"type: {first['msg']}", field="type", errors=problems)
    if first["type"] == "union_tag_not_found":
        return InvalidMessage("type: every message needs a 'type'", field="type", errors=problems)
    return InvalidMessage(f"{where}: {first['msg']}", field=where, errors=problems)


#: Every client message's ``type`` (the first part of a validation error's location), from the union.
_MESSAGE_TAGS = frozenset(
    model.model_fields["type"].default for model in typing.get_args(typing.get_args(ClientMessage)[0])
)
_SHAPE_TAGS = frozenset(("rectangle", "circle", "ellipse", "polygon", "unknown"))


def _location(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a readable path: ``scene.regions[0].shapes[1].radius``.

    Union tags (the message type, the shape type) are left out: they are not fields.
    """
    parts = list(loc[1:]) if loc and loc[0] in _MESSAGE_TAGS else list(loc)
    text = ""
    for index, part in enumerate(parts):
        if isinstance(part, int):
            text += f"[{part}]"
        elif part in _SHAPE_TAGS and index > 0 and isinstance(parts[index - 1], int):
            continue
        else:
            text += f".{part}" if text else str(part)
    return text or "message"


def _rejected(exc: SceneRejected) -> BridgeError:
    if exc.limit is not None:
        return TooLarge(str(exc), field=exc.field, limit=exc.limit, value=exc.value, max=exc.most)
    if exc.unknown_ruleset:
        return UnknownRuleset(str(exc), field=exc.field)
    return InvalidMessage(str(exc), field=exc.field)
