"""A world's worker thread (bridge.workers): jobs in order, results on the loop, nothing kept once idle."""

from __future__ import annotations

import asyncio
import threading
import weakref

from bridge.workers import WorldWorker


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


async def test_an_idle_worker_keeps_nothing_of_its_last_answer() -> None:
    """Once the awaiting coroutine has dropped a job's result, the idle worker holds no reference to it
    (a world's last large push is freed by reference counting, not kept until the world's next message)."""
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
