"""Where a frame's time goes on its way through the bridge: stage marks for the benchmarks, off by default.

With ``SIGHTLINE_STAGES=/path/file.jsonl`` in its environment, ``sightline serve`` stamps each text frame a
world's worker handles at every stage of its path — read on the event loop, started on the world's
worker, parsed, validated, the scene patched, each watch's engine updated and its push built, the answer
encoded, back on the loop, queued, written — with ``time.perf_counter()`` (wall) and ``time.thread_time()``
(CPU of the thread that stamped it), and writes one JSON line per frame once its last frame is written.
At the two hand-offs between threads (loop → worker, worker → loop) it also reads the receiving thread's
scheduler counters (Linux ``/proc``): its CPU time, the time it spent runnable but waiting for a core,
and how often it went to sleep — so a wait can be told apart: the kernel's run queue, the GIL, or the
receiving thread busy with something else.
``bench.ws_bench`` reads them (``docs/performance.md``). Without the variable every mark is one test of a
module flag: nothing is recorded.

A frame is handled by one thread at a time (the loop, then its world's worker, then the loop), so the
frame being handled is a thread-local of the thread doing it. Nothing here is asserted by tests: timings
are for people to read.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from typing import IO, Any

import orjson

__all__ = [
    "ENABLED",
    "ThreadIds",
    "Trace",
    "begin",
    "configure",
    "finish",
    "mark",
    "resume",
    "sched",
    "suspend",
    "this_thread",
]

_path: str | None = os.environ.get("SIGHTLINE_STAGES") or None
#: Whether stages are recorded in this process (``SIGHTLINE_STAGES`` set when it started, or :func:`configure`).
ENABLED = _path is not None

_local = threading.local()
_lock = threading.Lock()
_out: IO[bytes] | None = None


def configure(path: str | None) -> None:
    """Record stages into ``path`` from now on (``None``: stop recording)."""
    global _path, ENABLED, _out
    with _lock:
        if _out is not None:
            _out.close()
            _out = None
        _path, ENABLED = path, path is not None


#: A thread as :func:`sched` reads it: ``(threading.get_ident(), threading.get_native_id())``.
ThreadIds = tuple[int, int]


def this_thread() -> ThreadIds:
    return threading.get_ident(), threading.get_native_id()


_schedstat: dict[int, int] = {}  # native thread id → an open /proc/self/task/<id>/schedstat


def sched(thread: ThreadIds) -> tuple[int, int, int] | None:
    """``thread``'s scheduler counters: CPU time (ns); time spent runnable, waiting for a core (ns, counted
    when it gets one); times it was put on a core (once per wake-up, once more per preemption or sleep on
    a lock such as the GIL). ``None`` where ``/proc`` does not tell (not Linux, the thread cannot be read).
    About 3 µs a call: the file stays open."""
    ident, native = thread
    try:
        fd = _schedstat.get(native)
        if fd is None:
            fd = _schedstat[native] = os.open(f"/proc/self/task/{native}/schedstat", os.O_RDONLY)
        _, delay, slices = os.pread(fd, 128, 0).split()
        cpu = time.clock_gettime_ns(time.pthread_getcpuclockid(ident))
    except (OSError, ValueError, AttributeError):
        fd = _schedstat.pop(native, None)
        if fd is not None:
            os.close(fd)
        return None
    return cpu, int(delay), int(slices)


class Trace:
    """One frame's stamps: ``(stage, wall, cpu, thread)``, in order; at a hand-off, the receiving thread's
    :func:`sched` counters, by stage."""

    __slots__ = ("collector", "frame_id", "loop", "marks", "sched")

    def __init__(self, frame_id: str | None, collector: float | None = None) -> None:
        self.frame_id = frame_id
        self.marks: list[tuple[str, float, float, int]] = []
        #: Seconds the server's garbage collector had spent so far when the frame was read (see
        #: :class:`~bridge.collector.IdleCollector`): the difference between two frames is what it took between them.
        self.collector = collector
        #: The event loop's thread (the one that read the frame).
        self.loop = this_thread()
        self.sched: dict[str, tuple[int, int, int] | None] = {}

    def stamp(self, stage: str, receiver: ThreadIds | None = None) -> None:
        """Stamp ``stage``; with ``receiver``, also read that thread's scheduler counters (:func:`sched`)."""
        if receiver is not None:  # read first: its cost (~3 µs) falls in the stage before, not the hand-off
            self.sched[stage] = sched(receiver)
        self.marks.append((stage, time.perf_counter(), time.thread_time(), threading.get_ident()))

    def as_json(self) -> dict[str, Any]:
        return {"id": self.frame_id, "marks": self.marks, "collector": self.collector, "sched": self.sched}


def begin(frame_id: str | None, collector: float | None = None) -> Trace:
    """A new trace for a frame just read, stamped ``read``, and current on this thread."""
    trace = Trace(frame_id, collector)
    trace.stamp("read")
    _local.trace = trace
    return trace


def resume(trace: Trace | None, stage: str) -> None:
    """``trace`` is now handled on this thread (stamped ``stage``, with this thread's scheduler counters)."""
    _local.trace = trace
    if trace is not None:
        trace.stamp(stage, this_thread())


def suspend() -> None:
    """This thread is done with its current trace (it goes on elsewhere)."""
    _local.trace = None


def mark(stage: str) -> None:
    """Stamp the current thread's trace, if any (call only under ``if stages.ENABLED``)."""
    trace = getattr(_local, "trace", None)
    if trace is not None:
        trace.stamp(stage)


def finish(trace: Trace) -> None:
    """The trace's last frame is written: stamp ``written`` and append it to the file."""
    global _out
    trace.stamp("written", this_thread())
    line = orjson.dumps(trace.as_json()) + b"\n"
    with _lock:
        if _path is None:
            return
        if _out is None:
            _out = open(_path, "ab", buffering=0)  # noqa: SIM115 (closed at exit or by configure)
            atexit.register(_out.close)
        _out.write(line)
