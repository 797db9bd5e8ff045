"""A short run of the loopback load test: many connections across worlds, mixed traffic, a real log —
every request answered and none with an error. (Times and memory are the benchmark's to report.)"""

from __future__ import annotations

from bench.load import run


async def test_short_load_answers_everything_without_error() -> None:
    """40 connections over 10 worlds for 4 s: no error, nothing unanswered, logged rulings say so."""
    result = await run(seconds=4.0, connections=40, worlds=10, rate=3.0, database=None)
    assert result["errors"] == 0, result["error_samples"]
    assert result["unanswered"] == 0
    assert result["answered"] == result["requests"] > 200
    assert result["logged"] > 0
