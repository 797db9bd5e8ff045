"""The bridge's network side: one aiohttp application on one port.

``/ws`` pumps text frames through a :class:`~bridge.session.Session` per connection and carries out its
effects; ``/healthz`` answers anonymously; the log's API and pages are mounted beside them. This module
adds no rules and keeps no scene state of its own.

Per connection: a reader (this handler) and a writer task draining a queue bounded in bytes, so a
client that stops reading is closed (1013) instead of growing the bridge's memory; a deadline for
``hello``, from the connection's start (close 4408); a heartbeat that drops clients that vanished without closing.

Per world: one :class:`~bridge.workers.WorldWorker` thread runs its sessions' work (``receive`` and the
encoding of the answers) in order, off the event loop, so one world's costly message never delays
another world's answers. When a world's last connection leaves, its state is dropped and the memory
given back (``docs/architecture.md``, "Isolation between worlds"). Before a connection has sent its
HTTP head it is held by :mod:`bridge.gate` (header deadline, connection cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import orjson
from aiohttp import WSCloseCode, WSMsgType, web

from . import __version__, stages, warmup
from .access import LiveAccess
from .collector import IdleCollector
from .config import BridgeConfig, StartupError
from .core.rules import forget_scene_memos, load_all
from .core.world import SceneLimits, World
from .errors import InvalidMessage, TooManyConnections
from .gate import Gate
from .log.effects import log_outage, perform
from .log.http import setup_log
from .log.store import LogOpenError, LogStore, describe_database, open_store
from .protocol import encode, encode_frames
from .session import (
    AddressBudgets,
    ByteBudget,
    Close,
    Deliver,
    Effect,
    Limits,
    Send,
    Session,
    StoreThenSend,
    Worlds,
    error_message,
    forget_wire_forms,
    peek_id,
)
from .startup import app_status, listening, ssl_context
from .throttle import FailureThrottle, ThrottlePolicy, client_address
from .workers import InlineMoves, WorldWorker, give_back_memory

__all__ = [
    "BRIDGE",
    "BridgeState",
    "create_app",
    "describe_database",
    "run_bridge",
    "running_app",
    "scene_limits",
    "ssl_context",
]

_log = logging.getLogger(__name__)

# Every ruleset loaded and validated as the server is imported (``sightline serve`` imports it in a thread
# behind the open port): bad rules data stops the start, as it did when the rules loaded at import, and
# no client's first scene waits for a ruleset's load.
load_all()

HELLO_TIMEOUT_CLOSE = 4408


@dataclass
class BridgeState:
    """What every connection of this process shares."""

    config: BridgeConfig
    access: LiveAccess
    worlds: Worlds
    store: LogStore | None
    sockets: weakref.WeakSet[web.WebSocketResponse] = field(default_factory=weakref.WeakSet)
    connections: Counter[str] = field(default_factory=Counter)
    #: Each connection's outbox, socket and transport (the last to drop a client that does not read).
    outboxes: dict[Session, tuple[Outbox, web.WebSocketResponse, asyncio.BaseTransport | None]] = field(
        default_factory=dict
    )
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    collector: IdleCollector | None = None
    workers: dict[str, WorldWorker] = field(default_factory=dict)
    #: Per world, which token moves the loop runs itself (:class:`~bridge.workers.InlineMoves`).
    moves: dict[str, InlineMoves] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gate: Gate | None = None
    lingering: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    throttle: FailureThrottle = field(default_factory=FailureThrottle)
    #: Bytes read before ``hello`` per client address (the throttle's address): reconnecting does not refill it.
    before_hello: AddressBudgets | None = None
    #: Set when the bridge begins to stop (:func:`close_connections`).
    stopping: bool = False
    #: The connections' tasks now waiting for their world's worker (cancelled when the bridge stops).
    waiting: set[asyncio.Task[Any]] = field(default_factory=set)

    def admit(self, world: str) -> TooManyConnections | None:
        """``None`` if one more connection of ``world`` is welcome (it is counted now, and the world's
        worker started if need be), else why not (nothing counted: the connection stays open, unadmitted, and
        may say hello again until its hello deadline). Called by the session during ``hello``."""
        limit = self.config.max_connections_per_world
        with self.lock:
            if self.connections[world] >= limit:
                return TooManyConnections(
                    f"world {world!r} already has {limit} connections, the most this bridge allows",
                    limit="connections-per-world",
                    value=self.connections[world] + 1,
                    max=limit,
                )
            self.connections[world] += 1
            if world not in self.workers:
                self.workers[world] = WorldWorker(world)
                self.moves[world] = InlineMoves(self.config.inline_ms / 1000)
            lingering = self.lingering.pop(world, None)
        if lingering is not None:
            lingering.cancel()
        return None

    def left(self, world: str) -> None:
        """A connection of ``world`` is gone (its session's close queued on the world's worker). After the
        world's last one, its state is kept ``world_linger`` seconds (a reload comes straight back),
        then dropped."""
        with self.lock:
            self.connections[world] -= 1
            if self.connections[world] > 0:
                return
            del self.connections[world]
        self.lingering[world] = asyncio.get_running_loop().call_later(self.config.world_linger, self.retire, world)

    def retire(self, world: str) -> None:
        """Drop a world nobody is connected to: its worker frees the state and gives the memory back
        (off the loop: freeing a large world takes time), then ends."""
        self.lingering.pop(world, None)
        with self.lock:
            if self.connections[world] > 0:
                return
            self.connections.pop(world, None)
            worker = self.workers.pop(world, None)
            self.moves.pop(world, None)
            held = self.worlds.detach(world)
        if worker is not None:
            worker.post(functools.partial(_release, held))
            worker.stop()


def _release(held: list[Any]) -> None:
    for item in held:
        if isinstance(item, World):
            item.release()  # its scenes in slices: one cascade would hold the GIL while other worlds wait
    held.clear()
    forget_wire_forms()
    forget_scene_memos()
    give_back_memory()


BRIDGE = web.AppKey("bridge", BridgeState)

T = TypeVar("T")


# --- Routes ---------------------------------------------------------------------------------------


async def healthz(request: web.Request) -> web.Response:
    state = request.app[BRIDGE]
    outage = log_outage(state.store) if state.store is not None else None
    return web.json_response(
        {
            "status": "ok",
            "version": __version__,
            "worlds": len(state.worlds.worlds),
            "connections": len(state.sockets),
            "log": state.store is not None,
            # Rulings answered with logged: false because the store failed: since the start, and whether now.
            **({"log_failing": outage.since is not None, "log_unlogged": outage.total} if outage is not None else {}),
            **warmup.status(),
            **app_status(True),
        }
    )


async def websocket(request: web.Request) -> web.StreamResponse:
    state = request.app[BRIDGE]
    config = state.config
    loop = asyncio.get_running_loop()
    origin = request.headers.get("Origin")
    if config.allowed_origins and origin not in config.allowed_origins:
        raise web.HTTPForbidden(text=f"origin {origin!r} is not allowed to connect to this bridge")
    # Text frames arrive as their UTF-8 bytes, not decoded on the loop: a frame of up to 4 × the limit is read so
    # that it can be refused with too-large and its id (docs/protocol.md), and decoding one of 16 MiB held the
    # loop (and the interpreter) ~50 ms, then its size was measured by encoding it again on the world's worker
    # (~30 ms): every other world's answers waited. Now its size is its length; orjson reads the bytes on the
    # world's worker, refusing a frame that is not UTF-8 (invalid-message, the connection stays open).
    ws = web.WebSocketResponse(
        heartbeat=config.heartbeat or None,
        max_msg_size=config.max_frame_bytes * 4,
        compress=config.compress,
        decode_text=False,
    )
    address = client_address(request.remote, request.headers.get("X-Forwarded-For"), frozenset(config.trusted_proxies))
    # An address whose connections before hello have overspent its byte budget gets no new connection until the
    # debt is paid: aiohttp reads a new connection's first frame (up to 4 × the limit) before this handler can
    # refuse it, so reconnecting would otherwise have one frame read per connection, whatever the budget.
    if state.before_hello is not None and (owed := state.before_hello.owed(address, loop.time())) > 0:
        raise web.HTTPTooManyRequests(
            text=f"this address sent more than {config.bytes_per_second:,} bytes a second before hello "
            f"(--bytes-per-second); connect again in {owed:.1f} s",
            headers={"Retry-After": str(math.ceil(owed))},
        )
    await ws.prepare(request)
    state.sockets.add(ws)

    def authenticate(world: str, secret: str | None) -> bool:
        if state.access.opens(world, secret):
            return True
        state.throttle.failed(address, "hello")
        return False

    session = Session(
        state.worlds,
        authenticate=authenticate,
        admit=state.admit,
        limits=Limits(
            max_frame_bytes=config.max_frame_bytes,
            messages_per_second=config.messages_per_second,
            burst=config.message_burst,
            watches=config.max_watches_per_connection,
            watch_pairs=config.max_watch_pairs,
            world_watch_pairs=config.max_world_watch_pairs,
            watch_tests=config.max_watch_tests,
            best_line_tests=config.max_best_line_tests,
            log_record_bytes=config.max_log_record_bytes,
            option_values=config.max_option_values,
            max_depth=config.max_nesting,
        ),
    )
    outbox = Outbox(config.send_queue_bytes, config.send_queue, config.send_timeout)
    writer = asyncio.create_task(_write(ws, outbox, state))
    state.outboxes[session] = (outbox, ws, request.transport)
    # From the connection's start, never pushed back: a client whose hello is refused for want of room (the
    # connection stays open) may say hello again, but no longer than this.
    deadline = asyncio.get_running_loop().call_later(config.hello_timeout, _hello_overdue, session, outbox)
    worker: WorldWorker | None = None
    moves = InlineMoves(0)
    frame_limit = config.max_frame_bytes
    trace: stages.Trace | None = None
    budget = ByteBudget(config.bytes_per_second, _byte_burst(config), loop.time())
    try:
        async for msg in ws:
            if session.state == "awaiting-hello" and (wait := state.throttle.wait_before_attempt(address)) > 0:
                await asyncio.sleep(wait)  # an address that keeps sending wrong secrets waits longer each time
            if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                size, now = len(msg.data), loop.time()
                pause, charged = budget.charge(size, now), budget
                if worker is None and state.before_hello is not None:  # not admitted yet: the address pays too
                    address_pause, address_budget = state.before_hello.charge(address, size, now)
                    if address_pause > pause:
                        pause, charged = address_pause, address_budget
                if pause > 0:  # refused unread, then the socket left unread until the budget holds such a frame
                    request_id = peek_id(msg.data) if msg.type == WSMsgType.TEXT else None
                    refused = _prepare([Send(error_message(charged.refusal(size, pause), request_id))], frame_limit)
                    del msg
                    if not await _enqueue(refused, outbox, state):
                        await _close_not_reading(ws, request.transport)
                        break
                    if not await _pause(pause, state):
                        break
                    continue
            if msg.type == WSMsgType.TEXT:
                answer: list[Prepared] | None
                if worker is None:  # before hello: cheap, on the loop
                    answer = _prepare(session.receive(msg.data), frame_limit)
                    if session.state == "ready" and session.world is not None:
                        deadline.cancel()
                        world = session.world.id
                        worker, moves = state.workers[world], state.moves[world]
                elif _is_ping(msg.data):  # on the loop: answered even while the world's worker is busy
                    answer = _prepare(session.receive(msg.data), frame_limit)
                else:
                    if stages.ENABLED:
                        trace = stages.begin(peek_id(msg.data), state.collector.seconds if state.collector else None)
                    moved = _moved_tokens(session, msg.data) if moves.budget > 0 and worker.idle else None
                    if moved is not None and moves.allows(moved):  # a cheap move: done here, no hand-off
                        answer, seconds = _timed(functools.partial(_receive, session, msg.data, frame_limit, trace))
                        moves.record(moved, seconds)
                    else:
                        # A move is timed on the worker too: its cost decides where the world's next moves run.
                        job = functools.partial(
                            _timed, functools.partial(_receive, session, msg.data, frame_limit, trace, "worker")
                        )
                        running = worker.submit(job)
                        if trace is not None:
                            trace.stamp("submitted", worker.thread_ids)
                            stages.suspend()
                        result = await _from_worker(running, state)
                        if trace is not None:
                            stages.resume(trace, "loop")
                        answer = None if result is None else result[0]
                        if moved is not None and result is not None:
                            moves.record(moved, result[1])
                if answer is None:  # the bridge is stopping: the client has been told 1001
                    break
                prepared = answer
            elif msg.type == WSMsgType.BINARY:
                error = InvalidMessage("binary frames are not part of the protocol; send JSON text frames")
                prepared = _prepare([Send(error_message(error))], frame_limit)
            else:
                break
            if not await _enqueue(prepared, outbox, state):
                await _close_not_reading(ws, request.transport)
                break
            if trace is not None:
                outbox.trace(trace, sum(1 for item in prepared if isinstance(item, bytes)))
                trace = None
                stages.suspend()  # the loop is done with it (a ping answered here next must not stamp it)
            if state.collector is not None:
                state.collector.after_message(len(msg.data) if msg.type == WSMsgType.TEXT else 0)
            if any(isinstance(effect, Close) for effect in prepared):
                await writer
                break
    finally:
        if trace is not None:
            stages.suspend()
        state.outboxes.pop(session, None)
        deadline.cancel()
        if worker is not None:
            worker.post(session.close)
            # Counted as gone at once, not when the worker gets to the close: a client whose close was
            # answered may reconnect at once (a page reload), and must find its place free. The world's
            # retirement is queued on the same worker, after this close.
            state.left(world)
        else:
            session.close()
        await _finish_writer(writer, outbox)
        state.sockets.discard(ws)
    return ws


@dataclass(frozen=True, slots=True)
class _Push:
    """An encoded frame (UTF-8 JSON) for another connection of the world (a watcher)."""

    to: Session
    text: bytes


#: What the writer carries out: a text frame already encoded (UTF-8 JSON, sent as it is), a push for
#: another connection, a log operation, a close.
Prepared = bytes | _Push | StoreThenSend | Close


#: A frame longer than this is never taken for a move the loop may run itself (a token is ~1 KB as the module
#: sends it; :data:`bridge.session.MOVE_TOKENS` of them).
MOVE_BYTES = 16 * 1024

#: A frame longer than this is never taken for a ping (a ping is ``{"type": "ping", "id": …}``).
PING_BYTES = 256


async def _from_worker(running: asyncio.Future[T], state: BridgeState) -> T | None:
    """The world's worker's answer, or ``None`` if the bridge began to stop meanwhile.

    A stopping bridge does not wait for a computation (a watch of a large scene takes seconds of CPU): the
    connection has been told 1001, the answer would reach nobody, and the worker is a daemon thread.
    """
    task = asyncio.current_task()
    assert task is not None
    state.waiting.add(task)
    try:
        return await running
    except asyncio.CancelledError:
        if not state.stopping:
            raise
        task.uncancel()  # this cancellation was the bridge's, and is handled here
        return None
    finally:
        state.waiting.discard(task)


def _byte_burst(config: BridgeConfig) -> int:
    """The byte budgets' burst: at least the largest frame read (4 × the limit, refused too-large), so that one
    such frame always fits a whole budget."""
    return max(config.bytes_per_second, 4 * config.max_frame_bytes)


async def _pause(seconds: float, state: BridgeState) -> bool:
    """Wait ``seconds`` without reading the connection; ``False`` if the bridge began to stop meanwhile."""
    task = asyncio.current_task()
    assert task is not None
    state.waiting.add(task)
    try:
        await asyncio.sleep(seconds)
        return True
    except asyncio.CancelledError:
        if not state.stopping:
            raise
        task.uncancel()  # the bridge's own cancellation (close_connections): this connection is told 1001
        return False
    finally:
        state.waiting.discard(task)


def _is_ping(data: bytes) -> bool:
    """Whether a frame is a ping, which the loop answers itself.

    A ping changes nothing and reads no scene, and the connection's earlier messages are done (its frames
    are handled one at a time), so its ``pong`` still means "your earlier messages are done" — without
    waiting behind other connections' work on the world's worker, or for that thread to get the
    interpreter while the machine is busy.
    """
    value = _small_json(data, PING_BYTES)
    return isinstance(value, dict) and value.get("type") == "ping"


def _small_json(data: bytes, most: int) -> Any:
    """``data`` parsed, if it is JSON of at most ``most`` bytes; else ``None`` (the loop parses only small frames)."""
    if len(data) > most:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _receive(
    session: Session, data: bytes, frame_limit: int, trace: stages.Trace | None = None, where: str = "inline"
) -> list[Prepared]:
    """The session's answer to one frame, encoded — on the world's worker (``where``: ``"worker"``) or on the
    loop (``"inline"``) — and stamped when ``trace`` is given."""
    if trace is None:
        return _prepare(session.receive(data), frame_limit)
    stages.resume(trace, where)
    try:
        effects = session.receive(data)
        trace.stamp("answered")
        prepared = _prepare(effects, frame_limit)
        trace.stamp("encoded", trace.loop)  # the loop's counters as the answer is handed back
    finally:
        stages.suspend()
    return prepared


def _moved_tokens(session: Session, data: bytes) -> tuple[str, ...] | None:
    """The tokens a frame only moves (:meth:`Session.moved_tokens`), or ``None`` — also for any frame over
    :data:`MOVE_BYTES` or not JSON. Call only while the world's worker is idle (it reads the world)."""
    return session.moved_tokens(_small_json(data, MOVE_BYTES))


def _timed(job: Callable[[], T]) -> tuple[T, float]:
    """``job()`` and the CPU seconds it took this thread."""
    started = time.thread_time()
    result = job()
    return result, time.thread_time() - started


def _prepare(effects: list[Effect], frame_limit: int) -> list[Prepared]:
    """Encode what is sent (pushes split under the frame limit); log operations stay for the writer."""
    prepared: list[Prepared] = []
    for effect in effects:
        if isinstance(effect, Send):
            prepared.extend(encode_frames(effect.message, frame_limit))
        elif isinstance(effect, Deliver):
            prepared.extend(_Push(effect.to, text) for text in encode_frames(effect.message, frame_limit))
        else:
            prepared.append(effect)
    return prepared


class Outbox:
    """A connection's frames waiting to be written, bounded in bytes (and in count).

    The connection's own answers wait for room (:meth:`put_waiting`): an answer larger than the bound (a
    watch's full push, split in parts) goes out as fast as the client reads it, and meanwhile the
    connection's next message is not read. A client that does not read is closed: its queue is full and
    the writer has waited ``send_timeout`` seconds on one frame. Pushes for a connection from another
    one cannot wait (the other's answers would): a push is taken whole (:meth:`admits_push`) if the queue is
    within its bound, else the watcher is closed. So a queue holds at most its bound plus one push.
    """

    #: What a log operation is counted as until its answer exists.
    PENDING_SIZE = 4096

    def __init__(self, max_bytes: int, max_items: int, send_timeout: float = 30.0) -> None:
        self.max_bytes, self.max_items, self.send_timeout = max_bytes, max_items, send_timeout
        self.bytes = 0
        self._items: deque[tuple[Prepared | None, int]] = deque()
        self._ready = asyncio.Event()
        self._taken = asyncio.Event()
        #: When the writer began writing the frame it is on (``loop.time()``), or ``None``.
        self.sending_since: float | None = None
        #: The writer has ended (the connection is over): nothing more goes out.
        self.closed = False
        #: Stage traces (:mod:`bridge.stages`) waiting for their answer's last frame to be written.
        self._traces: deque[tuple[stages.Trace, int]] = deque()
        self._handed = 0  # items the writer has taken so far

    def __len__(self) -> int:
        return len(self._items)

    def trace(self, trace: stages.Trace, frames: int) -> None:
        """``trace``'s answer holds the last ``frames`` text frames queued: it is finished (written to the
        stages file) once the writer has written everything queued so far."""
        trace.stamp("queued")
        if frames <= 0:
            stages.finish(trace)
        else:
            self._traces.append((trace, self._handed + len(self._items)))

    def written(self) -> None:
        """The writer has written a text frame: finish the traces whose answers are all out."""
        while self._traces and self._traces[0][1] <= self._handed:
            stages.finish(self._traces.popleft()[0])

    @classmethod
    def size(cls, item: Prepared) -> int:
        return len(item) if isinstance(item, bytes) else cls.PENDING_SIZE

    def _full(self, size: int) -> bool:
        """Whether ``size`` more bytes would take the queue over its bounds (an empty queue takes one frame)."""
        return bool(self._items) and (self.bytes + size > self.max_bytes or len(self._items) >= self.max_items)

    def put(self, item: Prepared) -> bool:
        """Queue ``item`` if there is room now; ``False`` if not."""
        size = self.size(item)
        if self._full(size):
            return False
        self._push(item, size)
        return True

    async def put_waiting(self, item: Prepared) -> bool:
        """Queue ``item``, waiting for the writer to make room; ``False`` if the connection is over or its
        client stopped reading (the writer has been on one frame for ``send_timeout`` seconds)."""
        size = self.size(item)
        loop = asyncio.get_running_loop()
        while self._full(size):
            if self.closed:
                return False
            since = self.sending_since
            waited = 0.0 if since is None else loop.time() - since
            if waited >= self.send_timeout:
                return False
            self._taken.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._taken.wait(), self.send_timeout - waited)
        if self.closed:
            return False
        self._push(item, size)
        return True

    def admits_push(self) -> bool:
        """Whether a push (all its parts) is taken: the queue is within its bounds."""
        return not self.closed and self.bytes <= self.max_bytes and len(self._items) < self.max_items

    def force(self, item: Prepared) -> None:
        """Queue ``item`` whatever the bound (a part of a push already admitted)."""
        self._push(item, self.size(item))

    def finish(self) -> None:
        """The connection is over: the writer stops after what is queued."""
        self._push(None, 0)

    def end(self) -> None:
        """The writer has ended: whoever waits for room stops waiting."""
        self.closed = True
        self._taken.set()

    def _push(self, item: Prepared | None, size: int) -> None:
        self._items.append((item, size))
        self.bytes += size
        self._ready.set()

    async def get(self) -> Prepared | None:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        item, size = self._items.popleft()
        self._handed += 1
        self.bytes -= size
        self._taken.set()
        return item


async def _finish_writer(writer: asyncio.Task[None], outbox: Outbox) -> None:
    """Let the writer finish what it has (a log write under way completes), then stop it."""
    if writer.done():
        return
    try:
        outbox.finish()
        await asyncio.wait_for(asyncio.shield(writer), timeout=5.0)
    except TimeoutError:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer


async def _enqueue(effects: list[Prepared], outbox: Outbox, state: BridgeState) -> bool:
    """Queue one answer's frames; False when its client stopped reading (see :class:`Outbox`).

    Pushes for other connections (``_Push``) go first, at once and whole, so that every watcher receives
    the pushes of successive answers in order; a watcher whose queue is over its bound is closed (1013)
    rather than let its backlog grow. Then the connection's own frames, waiting for room if need be.
    """
    admitted: dict[Session, Outbox | None] = {}
    for effect in effects:
        if not isinstance(effect, _Push):
            continue
        if effect.to not in admitted:
            target = state.outboxes.get(effect.to)
            admitted[effect.to] = None
            if target is None:
                continue
            other_box, other_ws, other_transport = target
            if other_box.admits_push():
                admitted[effect.to] = other_box
            else:
                state.outboxes.pop(effect.to, None)
                _close_in_background(state, other_ws, other_transport)
        box = admitted[effect.to]
        if box is not None:
            box.force(effect.text)
    for effect in effects:
        if not isinstance(effect, _Push) and not await outbox.put_waiting(effect):
            return False
    return True


def _close_in_background(
    state: BridgeState, ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None
) -> None:
    closing = asyncio.get_running_loop().create_task(_close_not_reading(ws, transport))
    state.background.add(closing)
    closing.add_done_callback(state.background.discard)


async def _close_not_reading(ws: web.WebSocketResponse, transport: asyncio.BaseTransport | None) -> None:
    """Close (1013) a client that does not read: the close frame is queued behind what it has not read
    (no waiting for that to drain); if it does not answer the close within aiohttp's close timeout, the
    connection is dropped with whatever it holds."""
    with contextlib.suppress(Exception):
        await ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=b"client is not reading its answers", drain=False)
    if ws.close_code == WSCloseCode.ABNORMAL_CLOSURE and isinstance(transport, asyncio.WriteTransport):
        transport.abort()


def _hello_overdue(session: Session, outbox: Outbox) -> None:
    if session.state == "awaiting-hello":
        session.state = "closed"
        error = InvalidMessage("no hello within the deadline; the connection is closed")
        outbox.put(encode(error_message(error)).encode())
        outbox.put(Close(HELLO_TIMEOUT_CLOSE, "hello timeout"))


async def _write(ws: web.WebSocketResponse, outbox: Outbox, state: BridgeState) -> None:
    """Carry out effects in order: send, log-then-send, close.

    Nothing but the connection's end stops it: an effect that fails for another reason (a bug) is
    logged and the next one goes on — a writer that died would leave the socket open and silent.
    ``outbox.sending_since`` tells the outbox how long the client has kept the writer on one frame.
    """
    loop = asyncio.get_running_loop()
    try:
        while True:
            effect = await outbox.get()
            if effect is None:  # the connection is over
                return
            try:
                if isinstance(effect, bytes):  # orjson's UTF-8, written as a text frame without a str round trip
                    outbox.sending_since = loop.time()
                    await ws.send_frame(effect, WSMsgType.TEXT)
                    if stages.ENABLED:
                        outbox.written()
                elif isinstance(effect, StoreThenSend):
                    config = state.config
                    answer = await perform(
                        effect, state.store, wait=config.log_wait, wait_failing=config.log_wait_failing
                    )
                    text = encode(answer)
                    outbox.sending_since = loop.time()
                    await ws.send_str(text)
                elif isinstance(effect, Close):
                    await ws.close(code=effect.code, message=effect.reason.encode())
                    return
            except ConnectionError:
                return
            except Exception as exc:
                _log.error("could not carry out a %s: %s: %s", type(effect).__name__, type(exc).__name__, exc)
            finally:
                outbox.sending_since = None
    finally:
        outbox.end()


# --- Application ----------------------------------------------------------------------------------


def scene_limits(config: BridgeConfig) -> SceneLimits:
    """The scene limits ``config`` sets (what one scene may hold, scenes per world)."""
    return SceneLimits(
        regions=config.max_regions,
        tokens=config.max_tokens,
        walls=config.max_walls,
        lights=config.max_lights,
        levels=config.max_levels,
        vertices=config.max_vertices,
        ring_vertices=config.max_ring_vertices,
        scenes=config.max_scenes_per_world,
    )


def create_app(
    config: BridgeConfig,
    *,
    store: LogStore | None = None,
    extend: Callable[[web.Application, BridgeState], None] | None = None,
    collector: IdleCollector | None = None,
) -> web.Application:
    """The bridge application (sync factory): routes, shared state, clean shutdown.

    ``extend`` mounts more routes (the log's API and pages) with access to the shared state;
    ``collector`` (a started :class:`~bridge.collector.IdleCollector`) is told of every message handled.
    """
    app = web.Application(client_max_size=config.max_frame_bytes)
    state = BridgeState(
        config=config,
        access=LiveAccess(config.secret, config.world_secrets, config.data_dir),
        worlds=Worlds(scene_limits=scene_limits(config)),
        store=store,
        collector=collector,
        throttle=FailureThrottle(
            ThrottlePolicy(free_failures=config.auth_free_failures, max_delay=config.auth_max_delay)
        ),
        before_hello=AddressBudgets(config.bytes_per_second, _byte_burst(config)),
    )
    app[BRIDGE] = state
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/ws", websocket)
    if store is not None:
        setup_log(
            app,
            check_secret=lambda world, secret: state.access.opens(world, secret),
            secret_worlds=lambda secret: state.access.own_worlds(secret),
            store=store,
            throttle=state.throttle,
            public_url=config.public_url,
            trusted_proxies=frozenset(config.trusted_proxies),
        )
    if extend is not None:
        extend(app, state)
    app.on_shutdown.append(_close_sockets)
    return app


async def _close_sockets(app: web.Application) -> None:
    await close_connections(app[BRIDGE])  # already done by running_app; for an application run otherwise


async def close_connections(state: BridgeState) -> None:
    """Clients are told the bridge is going away (1001), not dropped; all at once, within 30 % of the drain
    timeout (a client that does not answer the close is not waited for longer).

    Called before aiohttp's own shutdown, which stops reading the sockets (the clients' answers to the
    close would go unread, and every close would wait its whole timeout). A connection waiting for its
    world's worker stops waiting (:func:`_from_worker`), once its close frame is on its way.
    """
    state.stopping = True

    async def close(ws: web.WebSocketResponse) -> None:
        with contextlib.suppress(Exception):
            await ws.close(code=WSCloseCode.GOING_AWAY, message=b"bridge shutting down")

    closing = [asyncio.ensure_future(close(ws)) for ws in list(state.sockets)]
    await asyncio.sleep(0)  # each close frame is written before its connection's handler ends
    for task in list(state.waiting):
        task.cancel()
    if closing:
        await asyncio.wait(closing, timeout=state.config.drain_timeout * 0.3)


@contextlib.asynccontextmanager
async def running_app(
    config: BridgeConfig,
    *,
    store: LogStore | None = None,
    extend: Callable[[web.Application, BridgeState], None] | None = None,
    collector: IdleCollector | None = None,
) -> AsyncIterator[web.AppRunner]:
    """The bridge application, set up and ready to be given connections (``runner.server``).

    The log store is opened (and migrated) first, from ``config.database`` or the data directory,
    unless one is given or ``config.log`` is off; it is closed after the application.
    """
    own_store = store is None and config.log
    if own_store:
        idle = timedelta(minutes=config.session_idle_minutes)
        try:
            store = await open_store(config.database, config.data_dir, idle_timeout=idle)
        except LogOpenError as exc:
            raise StartupError(str(exc)) from exc
    try:
        app = create_app(config, store=store, extend=extend, collector=collector)
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=config.drain_timeout * 0.2)
        await runner.setup()
        try:
            yield runner
        finally:
            await close_connections(app[BRIDGE])
            await runner.cleanup()
    finally:
        if own_store and store is not None:
            await store.close()


@contextlib.asynccontextmanager
async def run_bridge(
    config: BridgeConfig,
    *,
    store: LogStore | None = None,
    extend: Callable[[web.Application, BridgeState], None] | None = None,
    collector: IdleCollector | None = None,
) -> AsyncIterator[tuple[str, int]]:
    """Start the bridge and yield the ``(host, port)`` it listens on (``port=0`` picks a free one).

    Everything is built before the port opens (:func:`running_app`); ``sightline serve`` opens it first
    instead (:mod:`bridge.startup`).
    """
    async with running_app(config, store=store, extend=extend, collector=collector) as runner:
        assert runner.server is not None
        async with listening(config, runner.server) as (gate, _server, host, port):
            runner.app[BRIDGE].gate = gate
            yield host, port
