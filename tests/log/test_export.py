"""Export writers stream a big session in bounded chunks made off the event loop (issue 12)."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator

import pytest

from bridge.log.export import CHUNK_CHARS, FORMATS, csv_chunks, jsonl_chunks, markdown_chunks, parse_jsonl_line
from bridge.log.records import RulingRecord, SceneSnapshot

from .sample import DOCKS, ruling


def _big_snapshot(version: int) -> SceneSnapshot:
    """A scene version with 400 walls (a big battle map): ~25 KB of JSON."""
    walls = [{"id": f"w{k}", "c": [k, 0, k, 600 + version], "sight": 20} for k in range(400)]
    return DOCKS.model_copy(update={"key": f"snap-big-{version}", "walls": walls})


def _session(count: int, versions: int) -> list[RulingRecord]:
    """``count`` rulings over ``versions`` scene versions in turn, some without a snapshot."""
    snapshots = [_big_snapshot(v) for v in range(versions)]
    return [
        ruling(n, snapshot=None if n % 7 == 3 else snapshots[(n * versions) // count]).model_copy(
            update={"id": f"r{n}", "session": "s1"}
        )
        for n in range(count)
    ]


async def _stream(records: list[RulingRecord]) -> AsyncIterator[RulingRecord]:
    """Records as a store hands them over: without ever suspending (the worst case for the loop)."""
    for record in records:
        yield record


async def test_jsonl_lines_are_each_records_own_json_with_snapshots_made_once() -> None:
    """Each JSONL line is byte for byte ``record.model_dump_json()``, each snapshot serialised once.

    The snapshot is spliced in from its one serialisation; this holds with more distinct snapshots than the writer
    keeps, and for records without one.
    """
    records = _session(300, 40)
    text = "".join([chunk async for chunk in jsonl_chunks(_stream(records))])
    assert text.splitlines() == [record.model_dump_json() for record in records]


async def test_every_format_streams_whole_rows_in_bounded_chunks() -> None:
    """Every format streams a big session in several chunks of whole rows, together exactly the rows one by one.

    Each chunk stops at the row that reaches CHUNK_CHARS.
    """
    records = _session(400, 8)
    for name, (writer, _media) in FORMATS.items():
        chunks = [chunk async for chunk in writer(_stream(records), "en")]
        body = chunks[1:]  # after the header
        if name == "jsonl":
            body = chunks
            assert len(chunks) > 2
        longest_row = max(len(line) + 2 for chunk in body for line in chunk.splitlines())
        assert all(len(chunk) < CHUNK_CHARS + longest_row for chunk in body), name
        assert all(chunk.endswith("\n") for chunk in chunks), name
    rows = list(csv.reader(io.StringIO("".join([c async for c in csv_chunks(_stream(records))]))))
    assert [row[0] for row in rows[1:]] == [record.id for record in records]
    md = "".join([c async for c in markdown_chunks(_stream(records))]).splitlines()
    assert len(md) == 2 + len(records)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
async def test_other_tasks_run_while_a_session_is_exported(fmt: str) -> None:
    """Rows are made in a worker thread: other tasks on the event loop keep running while a session is exported.

    The session's records are handed over without ever suspending; other worlds are served meanwhile.
    """
    writer, _media = FORMATS[fmt]
    records = _session(600, 6)
    turns = 0
    done = asyncio.Event()

    async def other_world() -> None:
        nonlocal turns
        while not done.is_set():
            turns += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other_world())
    try:
        chunks = [chunk async for chunk in writer(_stream(records), "en")]
    finally:
        done.set()
        await ticker
    assert len(chunks) >= 3 and turns >= len(chunks) - 1


async def test_the_exports_carry_the_worlds_name_beside_its_id() -> None:
    """CSV ends with a world_name column (the old columns keep their places); JSONL carries world_name."""
    record = ruling(0, world_name="=Ashes, of Kaldor").model_copy(update={"id": "r0", "session": "s1"})
    text = "".join([chunk async for chunk in csv_chunks(_stream([record]))])
    header, row = list(csv.reader(io.StringIO(text)))
    assert header[-1] == "world_name" and header[4] == "world"
    assert row[4] == "w-ashes" and row[-1] == "'=Ashes, of Kaldor"  # a formula-looking name is defused
    (line,) = "".join([chunk async for chunk in jsonl_chunks(_stream([record]))]).splitlines()
    assert parse_jsonl_line(line).world_name == "=Ashes, of Kaldor"
