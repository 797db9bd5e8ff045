"""A world's worker thread (bridge.workers): jobs in order, results on the loop, nothing kept once idle."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import weakref

import pytest

from bridge import workers
from bridge.workers import InlineMoves, WorldWorker


class Answer:
    """Something a job hands back (a weak reference can watch it)."""


async def test_jobs_run_in_order_on_one_thread_and_results_come_back_on_the_loop() -> None:
    """Submitted jobs run one after another on the worker's own thread; each result resolves its future."""
    worker = WorldWorker("order")
    seen: list[tuple[int, int]] = []

    def job(n: int) -> int:
        seen.append((n, threading.get_ident()))
        return n * n

    try:
        results = await asyncio.gather(*(worker.submit(lambda n=n: job(n)) for n in range(20)))
    finally:
        worker.stop()
        assert worker.join(5)
    assert results == [n * n for n in range(20)]
    assert [n for n, _ in seen] == list(range(20))
    assert len({thread for _, thread in seen}) == 1 and seen[0][1] != threading.get_ident()


async def test_a_worker_is_idle_only_with_no_job_queued_or_running() -> None:
    """idle is False from a job's submission until it is over (posted jobs too), True once every job has run."""
    worker = WorldWorker("idle-flag")
    release = threading.Event()
    try:
        assert worker.idle and worker.handed == 0
        running = worker.submit(lambda: release.wait(5))
        worker.post(lambda: None)
        assert not worker.idle and worker.handed == 2
        await asyncio.sleep(0.05)
        assert not worker.idle  # the first job still runs, the second waits
        release.set()
        assert await running is True
        for _ in range(500):
            if worker.idle:
                break
            await asyncio.sleep(0.01)
        assert worker.idle and worker.handed == 2
    finally:
        release.set()
        worker.stop()
        assert worker.join(5)


def test_inline_moves_needs_a_full_history_of_cheap_moves_and_the_tokens_own() -> None:
    """Moves run on the loop only after `history` moves under the budget, and only for tokens moved cheaply before."""
    moves = InlineMoves(0.002, history=3)
    assert not moves.allows(["a"])
    moves.record(["a"], 0.001)
    moves.record(["b"], 0.001)
    assert not moves.allows(["a"])  # two moves known of three
    moves.record(["a", "c"], 0.0015)
    assert moves.allows(["a"]) and moves.allows(["a", "b", "c"])
    assert not moves.allows(["d"])  # never moved: its cost is unknown
    assert not moves.allows(["a", "d"])


def test_inline_moves_one_costly_move_sends_the_next_ones_to_the_worker() -> None:
    """A move over the budget stops moves on the loop until `history` cheap ones have passed, and its token's too."""
    moves = InlineMoves(0.002, history=3)
    for token in "abc":
        moves.record([token], 0.001)
    moves.record(["b"], 0.010)
    assert not moves.allows(["a"]) and not moves.allows(["b"])
    moves.record(["a"], 0.001)
    moves.record(["c"], 0.001)
    assert not moves.allows(["a"])  # the costly move is still among the last three
    moves.record(["a"], 0.001)
    assert moves.allows(["a"]) and moves.allows(["c"])
    assert not moves.allows(["b"])  # its own last move was costly
    moves.record(["b"], 0.001)  # (run on the worker, cheap again)
    assert moves.allows(["b"])


def test_inline_moves_with_no_budget_never_allows_and_forgets_tokens_past_its_bound() -> None:
    """Budget 0 never runs a move on the loop; past TOKENS remembered tokens the memory starts again."""
    never = InlineMoves(0, history=1)
    never.record(["a"], 0.0)
    assert not never.allows(["a"])
    moves = InlineMoves(0.002, history=1)
    moves.TOKENS = 3
    for token in "abc":
        moves.record([token], 0.001)
    assert moves.allows(["a"])
    moves.record(["d"], 0.001)  # the fourth: the memory of a, b and c is dropped
    assert moves.allows(["d"]) and not moves.allows(["a"])


async def test_an_idle_worker_keeps_nothing_of_its_last_answer() -> None:
    """An idle worker holds no reference to a job's result once the awaiting coroutine has dropped it.

    A world's last large push is freed by reference counting, not kept until the world's next message.
    """
    worker = WorldWorker("idle")
    watched: list[weakref.ref[Answer]] = []

    def job() -> Answer:
        answer = Answer()
        watched.append(weakref.ref(answer))
        return answer

    try:
        answer = await worker.submit(job)
        assert isinstance(answer, Answer)
        del answer
        for _ in range(200):  # the worker drops its references right after handing back
            if watched[0]() is None:
                break
            await asyncio.sleep(0.01)
        assert watched[0]() is None
    finally:
        worker.stop()
        assert worker.join(5)


#: A world in miniature, in a fresh process: a large block freed first (glibc then raises its trim threshold
#: to 32 MiB), then a thread that fills 25 MB of heap and ends, then give_back_memory. Prints the KiB kept.
_THREAD_HEAP = r"""
import sys, threading
from bridge.workers import give_back_memory, one_malloc_arena

def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

if sys.argv[1] == "one-arena":
    assert one_malloc_arena()
block = bytearray(16 << 20)
del block
before = rss()

def world():
    held = [bytes(1000) for _ in range(25_000)]
    del held

thread = threading.Thread(target=world)
thread.start()
thread.join()
give_back_memory()
print(rss() - before)
"""


@pytest.mark.skipif(workers._mallopt is None or workers._malloc_trim is None, reason="glibc only")
def test_a_threads_freed_heap_goes_back_to_the_system_with_one_malloc_arena() -> None:
    """With one_malloc_arena, what an ended thread freed goes back to the system on give_back_memory.

    one_malloc_arena is how sightline serve starts; with an arena per thread, the free top of that arena stays resident
    (a control).
    """
    kept = {}
    for mode in ("one-arena", "default"):
        ran = subprocess.run([sys.executable, "-c", _THREAD_HEAP, mode], capture_output=True, text=True, check=True)
        kept[mode] = int(ran.stdout)
    assert kept["one-arena"] < 5 * 1024, kept
    assert kept["default"] > 15 * 1024, kept  # what the bridge kept before: the control shows the test can fail
