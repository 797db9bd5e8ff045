"""Group commit: concurrent appends share transactions, each still committed before it returns."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from bridge.log.group_commit import GroupCommit
from bridge.log.sql import SqlLogStore
from tests.log.sample import ruling


async def test_concurrent_submits_are_batched_and_each_gets_its_own_result() -> None:
    """Eleven submits made together are written in one batch, in order, each answered with its own result."""
    batches: list[list[int]] = []

    async def write_many(items: Sequence[int]) -> list[int]:
        batches.append(list(items))
        await asyncio.sleep(0.01)
        return [item * 10 for item in items]

    group: GroupCommit[int] = GroupCommit(write_many)
    results = await asyncio.gather(*(group.submit(i) for i in range(11)))
    assert results == [i * 10 for i in range(11)]
    assert batches == [list(range(11))]  # all queued before the writer ran: one transaction
    await group.drain()


async def test_a_failed_batch_fails_every_waiter_and_the_next_batch_still_runs() -> None:
    """A write that raises reaches each of its callers; later submits are written normally."""
    calls = 0

    async def write_many(items: Sequence[int]) -> list[int]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("disk full")
        return list(items)

    group: GroupCommit[int] = GroupCommit(write_many)
    with pytest.raises(OSError, match="disk full"):
        await group.submit(1)
    assert await group.submit(2) == 2
    await group.drain()


async def test_store_appends_in_parallel_are_all_stored(store: SqlLogStore) -> None:
    """Many appends at once (as many connections logging at once) are all in the log afterwards."""
    records = [ruling(i) for i in range(60)]
    stored = await asyncio.gather(*(store.append(record) for record in records))
    assert len({record.id for record in stored}) == 60
    exported = [record async for record in store.export(records[0].world, None)]
    assert {record.id for record in exported} == {record.id for record in stored}


async def test_drain_waits_for_the_batch_being_written() -> None:
    """drain() (the store closing at SIGTERM) lets the batch under way commit, and its caller gets the result."""
    committed: list[int] = []

    async def write_many(items: Sequence[int]) -> list[int]:
        await asyncio.sleep(0.2)  # an fsync on a slow disk
        committed.extend(items)
        return list(items)

    group: GroupCommit[int] = GroupCommit(write_many)
    submitted = asyncio.ensure_future(group.submit(7))
    await asyncio.sleep(0.05)  # the batch is off the queue and being written
    await asyncio.wait_for(group.drain(), timeout=5)
    assert committed == [7]
    assert await asyncio.wait_for(submitted, timeout=1) == 7
