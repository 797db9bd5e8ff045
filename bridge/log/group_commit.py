"""Group commit: logged rulings that arrive together share one durable transaction.

Every ``submit`` still returns only after its record is committed — the bridge's guarantee ("a logged
ruling is committed before its answer is sent") is unchanged — but while one transaction is being
written, the records that arrive queue up and go into the next one. Under load this turns one fsync per
ruling into one fsync per batch; with a single ruling in flight it costs nothing.

A caller that stops waiting (its ``submit`` cancelled: the bridge answers without the log when the
database does not answer in time) takes its item off the queue if it is still there — it is never
written. If its batch was already being written and commits after all, ``on_late`` is told, so that the
bridge can say which ruling it answered as not logged is in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["GroupCommit"]

T = TypeVar("T")


class GroupCommit(Generic[T]):
    """Batches calls of ``write_many`` (one transaction per batch); each caller gets its own result."""

    def __init__(
        self,
        write_many: Callable[[Sequence[T]], Awaitable[Sequence[T]]],
        *,
        max_batch: int = 500,
        on_late: Callable[[T, T], None] | None = None,
    ) -> None:
        self._write_many = write_many
        self.max_batch = max_batch
        self._on_late = on_late
        self._queue: list[tuple[T, asyncio.Future[T]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: The batch being written now (taken off the queue, not yet committed or failed).
        self._writing = 0

    async def submit(self, item: T) -> T:
        """``item`` as written, once its batch is committed; raises what the write raised."""
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())
        future: asyncio.Future[T] = loop.create_future()
        entry = (item, future)
        self._queue.append(entry)
        self._wake.set()
        try:
            return await future
        except asyncio.CancelledError:
            self._queue = [queued for queued in self._queue if queued is not entry]  # not taken: never written
            raise

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
                self._writing = len(batch)
                try:
                    written = await self._write_many([item for item, _ in batch])
                except BaseException as exc:  # every waiter of the batch learns it was not written
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError("not written"))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                finally:
                    self._writing = 0
                for (item, future), result in zip(batch, written, strict=True):
                    if not future.done():
                        future.set_result(result)
                    elif future.cancelled() and self._on_late is not None:
                        self._on_late(item, result)  # its caller stopped waiting, yet it is written

    async def drain(self) -> None:
        """Wait for what is queued, and the batch being written, to be committed; then stop the writer task.

        The batch under way is never cancelled: its records were taken off the queue and may be the last
        rulings of a session (a bridge stopping with SIGTERM closes the store right after its clients)."""
        while self._queue or self._writing:
            if self._queue and (self._task is None or self._task.done()):  # no writer left to take them
                self._task = asyncio.get_running_loop().create_task(self._run())
                self._wake.set()
            await asyncio.sleep(0.01)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
