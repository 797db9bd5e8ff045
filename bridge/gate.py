"""What a connection may cost before it has said who it is: the gate in front of aiohttp's handler.

- **Header deadline.** A connection must deliver its request line and headers within ``header_timeout``
  seconds of being accepted (a TLS handshake counts against the same deadline), or it is closed. A
  client that trickles one header byte at a time (slowloris) holds a descriptor for that long, not for
  ever.
- **Connection cap.** At most ``cap`` connections are open at once, below the process's descriptor
  limit (:func:`connection_cap`). One more is answered ``503 Service Unavailable`` with a reason and
  closed at once, rather than left to fail ``accept()`` with ``EMFILE``.
- **Held until the application is built.** A gate made without a factory (``sightline serve`` opens its
  port before it has imported the bridge, :mod:`bridge.startup`) reads each connection's request head,
  lets ``early`` answer it if it can (``GET /healthz``), and otherwise holds it — the head read, reading
  paused — until :meth:`Gate.open_to` gives it the application: then the connection is handed over with
  the bytes it sent, as if it had just arrived.
- **Accept errors.** When ``accept()`` does fail (descriptors taken by something else), asyncio reports
  every failure, with a traceback, to the loop's exception handler: :class:`AcceptErrorLog` writes one
  line per ``interval`` with the count of those it left out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from typing import Any

__all__ = ["AcceptErrorLog", "Gate", "connection_cap"]

log = logging.getLogger("sightline.gate")

#: Descriptors kept for everything else a bridge opens: its listening sockets, the log database, log
#: files, the interpreter's own.
DESCRIPTOR_RESERVE = 64

_HEAD_END = b"\r\n\r\n"

#: Bytes a held connection may send before reading is paused (request heads are far smaller).
HELD_BYTES = 64 * 1024


def connection_cap(configured: int = 0) -> int:
    """``configured`` when given, else the soft ``RLIMIT_NOFILE`` less :data:`DESCRIPTOR_RESERVE`
    (at least 16); never more than that either way."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = max(16, soft - DESCRIPTOR_RESERVE) if soft != resource.RLIM_INFINITY else 1_000_000
    return min(configured, room) if configured > 0 else room


class Gate:
    """Wraps aiohttp's protocol factory: counts open connections, refuses past the cap, enforces the
    header deadline. ``factory`` is aiohttp's ``Server`` (called once per accepted connection), or
    ``None`` until :meth:`open_to` gives it: meanwhile ``early(method, target)`` may answer a request
    (the whole HTTP response, after which the connection is closed) and every other one is held."""

    def __init__(
        self,
        factory: Callable[[], asyncio.Protocol] | None,
        *,
        cap: int,
        header_timeout: float,
        early: Callable[[str, str], bytes | None] | None = None,
    ) -> None:
        self._factory = factory
        self._early = early
        self._held: set[_Guarded] = set()
        self.cap = cap
        self.header_timeout = header_timeout
        self.open = 0
        self.refused = 0
        self.timed_out = 0

    def __call__(self) -> asyncio.Protocol:
        if self.open >= self.cap:
            self.refused += 1
            return _Refusal(self)
        return _Guarded(self, None if self._factory is None else self._factory())

    @property
    def held(self) -> int:
        """Connections whose request has been read, waiting for :meth:`open_to`."""
        return sum(1 for guarded in self._held if guarded.head_read)

    def open_to(self, factory: Callable[[], asyncio.Protocol]) -> None:
        """The application is ready: new connections go to ``factory``, and so does every held one."""
        self._factory = factory
        held, self._held = self._held, set()
        for guarded in held:
            guarded.hand_to(factory())

    def drop_held(self) -> None:
        """The application will not come (start-up failed or was stopped): close the held connections."""
        held, self._held = self._held, set()
        for guarded in held:
            guarded.close()


class _Guarded(asyncio.Protocol):
    """aiohttp's handler behind a deadline: every protocol call is passed on unchanged. Without a
    handler yet (``inner`` is ``None``), the connection is held: see :class:`Gate`."""

    def __init__(self, gate: Gate, inner: Any) -> None:
        self._gate = gate
        self._inner = inner
        self._timer: asyncio.TimerHandle | None = None
        self._transport: asyncio.BaseTransport | None = None
        self._tail = b""  # the last bytes seen, to find the end of the head across reads
        self._held = b""  # what a held connection sent
        self._paused = False
        self._answered = False
        self.head_read = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._gate.open += 1
        self._transport = transport
        self._timer = asyncio.get_running_loop().call_later(self._gate.header_timeout, self._overdue)
        if self._inner is not None:
            self._inner.connection_made(transport)
        else:
            self._gate._held.add(self)

    def data_received(self, data: bytes) -> None:
        if self._timer is not None:
            seen = self._tail + data
            if _HEAD_END in seen:
                self._timer.cancel()
                self._timer = None
                self._tail = b""
            else:
                self._tail = seen[-3:]
        if self._inner is not None:
            self._inner.data_received(data)
        elif not self._answered:
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        self._held += data
        self.head_read = self._timer is None
        if self.head_read and self._gate._early is not None:
            method, _, rest = self._held.partition(b"\r\n")[0].partition(b" ")
            target = rest.partition(b" ")[0]
            answer = self._gate._early(method.decode("latin-1"), target.decode("latin-1"))
            if answer is not None and isinstance(self._transport, asyncio.WriteTransport):
                self._answered = True
                self._gate._held.discard(self)
                self._held = b""
                self._transport.write(answer)
                self._transport.close()
                return
        if (self.head_read or len(self._held) >= HELD_BYTES) and not self._paused:
            self._paused = True
            if isinstance(self._transport, asyncio.ReadTransport):
                self._transport.pause_reading()  # until the application takes it (or the deadline drops it)

    def hand_to(self, inner: Any) -> None:
        """Give a held connection to the application's handler, with what it has sent so far."""
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        self._inner = inner
        inner.connection_made(transport)
        held, self._held = self._held, b""
        if held:
            inner.data_received(held)
        if self._paused and isinstance(transport, asyncio.ReadTransport):
            self._paused = False
            transport.resume_reading()

    def close(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    def eof_received(self) -> bool | None:
        if self._inner is None:
            return None  # a held connection that stopped sending is closed
        result: bool | None = self._inner.eof_received()
        return result

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._gate.open -= 1
        self._gate._held.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._inner is not None:
            self._inner.connection_lost(exc)

    def _overdue(self) -> None:
        self._timer = None
        self._gate.timed_out += 1
        transport = self._transport
        if isinstance(transport, asyncio.WriteTransport) and not transport.is_closing():
            transport.abort()  # nothing was asked, nothing is owed: drop it without a reply


class _Refusal(asyncio.Protocol):
    """Past the cap: a short 503 naming the reason, then close (the client sees why, at once)."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        body = f"this bridge already has {self._gate.cap} open connections, its most; try again later\n".encode()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 5\r\nConnection: close\r\n\r\n"
        ).encode()
        transport.write(head + body)
        transport.close()

    def data_received(self, data: bytes) -> None:
        pass


class AcceptErrorLog:
    """A loop exception handler that lets accept failures through once per ``interval`` seconds.

    Every other context goes to the handler that was there before (or the loop's default).
    """

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._last: float | None = None
        self.left_out = 0
        self._previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        self._previous = loop.get_exception_handler()
        loop.set_exception_handler(self)

    def uninstall(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop.get_exception_handler() is self:
            loop.set_exception_handler(self._previous)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if not message.startswith("socket.accept()") and "accept" not in message.lower():
            if self._previous is not None:
                self._previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            self.left_out += 1
            return
        exc = context.get("exception")
        skipped = f" ({self.left_out} more like it in the last {self.interval:g} s not shown)" if self.left_out else ""
        log.error("%s: %s%s", message, exc if exc is not None else "", skipped)
        self._last = now
        self.left_out = 0
