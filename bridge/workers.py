"""One thread per world: a world's session work runs off the event loop, in order, beside the others.

The event loop only pumps bytes: it reads frames, hands each one to the world's :class:`WorldWorker`
(``Session.receive`` → prepared effects: answers already encoded to text), and writes what comes back.
While one world's worker is busy with a costly ruling, the loop keeps serving every other world's
frames and pings; CPython's switch interval hands it the GIL every few milliseconds, and the engine's
compiled loops (Cython, run in ``nogil`` blocks) and shapely's vectorised calls release it altogether.

A world's token moves that have proved cheap are run by the event loop itself (:class:`InlineMoves`): the two
hand-offs between threads cost a small move as much as its work.

Threads are daemons: a computation that is still running when the bridge is told to stop does not keep
the process alive (``sightline serve`` exits once its drain timeout has passed, whatever a worker is
doing). :func:`give_back_memory` returns freed heap pages to the system after a world is dropped;
:func:`one_malloc_arena` (``sightline serve``, before any thread starts) makes sure it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = ["InlineMoves", "WorldWorker", "give_back_memory", "one_malloc_arena"]

T = TypeVar("T")
log = logging.getLogger("sightline.workers")

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any] | None"]


class WorldWorker:
    """A daemon thread running jobs one at a time, in the order they were submitted.

    :meth:`submit` (from the event loop) returns a future resolved on the loop; :meth:`post` runs a job
    whose result nobody awaits. :meth:`stop` lets the queued jobs finish, then ends the thread.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"sightline-world:{name}"[:60], daemon=True)
        self.busy_since: float | None = None
        # Jobs handed over (written by the submitting thread, the event loop's) and finished (by this worker's
        # thread, once a job is over): each counter has one writer, so neither loses a count.
        self._handed = 0
        self._done = 0
        self._thread.start()

    def submit(self, job: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._handed += 1
        self._jobs.put((job, loop, future))
        return future

    def post(self, job: Callable[[], Any]) -> None:
        self._handed += 1
        self._jobs.put((job, asyncio.get_running_loop(), None))

    @property
    def idle(self) -> bool:
        """No job queued or running: the thread that submits (the event loop's) may do the world's next job
        itself, in order after the others, with no other thread in the world's state meanwhile."""
        return self._done == self._handed

    @property
    def handed(self) -> int:
        """How many jobs were handed to this worker so far."""
        return self._handed

    def stop(self) -> None:
        """No more jobs: the thread ends after those already queued (call from the worker or the loop)."""
        self._jobs.put(None)

    @property
    def thread_ids(self) -> tuple[int, int]:
        """The thread's ``(ident, native_id)`` (for :func:`bridge.stages.sched`)."""
        return self._thread.ident or 0, self._thread.native_id or 0

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            job, loop, future = item
            result: Any = None
            self.busy_since = time.monotonic()
            try:
                try:
                    result = job()
                finally:  # done with the world's state before the loop hears of it (it may then do the next job)
                    self.busy_since = None
                    self._done += 1
            except BaseException as exc:  # handed to the awaiting coroutine, or logged
                if future is None:
                    log.exception("world %s: a background job failed", self.name)
                else:
                    _resolve(loop, future, None, exc)
            else:
                if future is not None:
                    _resolve(loop, future, result, None)
            finally:
                # Drop references before waiting for the next job: sessions, scenes, and the answer just handed
                # back (the future holds it too) — a world's last large push is not kept while the world idles.
                del item, job, future, result


class InlineMoves:
    """Which of one world's token moves the event loop runs itself rather than hand to the world's worker.

    Handing a frame to the worker and its answer back costs two wake-ups of another thread, and the move's
    data are cold in that thread's core: for a move that rules a hundred sight lines, as much as the move's own
    work. The loop runs a move itself only when it is cheap by measure, not by guess: the world's last
    ``history`` moves, wherever they ran, each took at most ``budget`` seconds of CPU, and so did the last move
    of every token this one moves (a token not moved before goes to the worker). One costly move (a token led
    into a thicket of zones, a watch of more pairs) sends the next ones to the worker until ``history`` cheap
    ones have passed again. So while a world's moves stay under the budget, another world's frame waits at most
    about one budget for the loop — no longer than CPython's switch interval (5 ms) already lets a busy worker
    keep the interpreter from it — and a world whose moves cost more never holds the loop again until they
    cost less. ``budget`` 0: never. Used from the event loop's thread only.
    """

    #: Tokens whose last move is remembered; past it the memory starts again (each token's next move goes to
    #: the worker once).
    TOKENS = 10_000

    def __init__(self, budget: float, history: int = 8) -> None:
        self.budget = budget
        self._recent: deque[float] = deque(maxlen=history)
        self._by_token: dict[str, float] = {}

    def allows(self, tokens: Iterable[str]) -> bool:
        """Whether a move of ``tokens`` may run on the loop (the worker being idle is the caller's to check)."""
        budget, recent = self.budget, self._recent
        if budget <= 0 or len(recent) < (recent.maxlen or 0) or max(recent) > budget:
            return False
        last = self._by_token.get
        return all(last(token, budget + 1) <= budget for token in tokens)

    def record(self, tokens: Iterable[str], seconds: float) -> None:
        """A move of ``tokens`` took ``seconds`` of CPU (on the loop or on the worker)."""
        self._recent.append(seconds)
        by_token = self._by_token
        if len(by_token) >= self.TOKENS:
            by_token.clear()
        for token in tokens:
            by_token[token] = seconds


def _resolve(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any, exc: BaseException | None
) -> None:
    def settle() -> None:
        if future.done():  # the awaiting connection was cancelled meanwhile
            return
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
        loop.call_soon_threadsafe(settle)


def _load_libc(name: str, *argtypes: Any) -> Callable[..., int] | None:
    """``name`` from the C library the process already runs with (glibc only; ``None`` elsewhere).

    ``CDLL(None)``: the symbols already loaded, not ``ctypes.util.find_library``, which runs ``ldconfig``
    in a subprocess (``sightline serve`` loads this before it listens)."""
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = list(argtypes)
    function.restype = ctypes.c_int
    return function  # type: ignore[no-any-return]


_malloc_trim = _load_libc("malloc_trim", ctypes.c_size_t)
_mallopt = _load_libc("mallopt", ctypes.c_int, ctypes.c_int)

#: glibc's ``M_ARENA_MAX`` (``malloc.h``).
_M_ARENA_MAX = -8


def one_malloc_arena() -> bool:
    """Have every thread allocate from glibc's main arena (``mallopt(M_ARENA_MAX, 1)``); ``True`` if set.

    Each thread otherwise gets an arena of its own, and a world's worker thread fills one. ``malloc_trim``
    returns the free pages inside every arena, but the free space at the top of a thread's arena only
    shrinks when a later ``free`` in it finds more than the trim threshold there — which glibc raises to
    twice the largest block it has handed back to the system (up to 64 MiB), and no ``free`` comes once
    the world's thread has ended: 20-45 MB of a dropped world stayed resident for good. The main arena's
    top is trimmed by ``malloc_trim`` itself. Call before any other thread starts (a thread keeps the arena
    it got); the GIL already serialises most allocations, so threads seldom wait on the one arena's lock.
    """
    return _mallopt is not None and _mallopt(_M_ARENA_MAX, 1) == 1


def give_back_memory() -> None:
    """Collect unreachable cycles, then ask glibc to return its free pages to the system.

    Freed Python objects go back to the C heap, which glibc keeps for later allocations; without
    ``malloc_trim`` a process that once held a large world keeps its peak RSS for good. ``ctypes``
    releases the GIL during the call, so other worlds keep being served meanwhile.
    """
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)
