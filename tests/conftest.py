"""Fixtures shared by every test package: the session's real PostgreSQL server; Hypothesis's CI profile; a
guard that no test ends the test run itself.

Under CI (``CI`` set, as ``.ci/run`` is) property tests draw the same examples every run
(``derandomize``), so a landing's verdict never depends on the draw; on a developer's machine they keep
exploring new examples, and what they find is pinned as an explicit test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.postgres import PostgresServer, new_postgres_database, run_postgres

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


_TEST_PROCESS = os.getpid()


@pytest.fixture(autouse=True)
def _test_process_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os._exit`` in pytest's own process fails the test that reached it instead of ending the run.

    ``sightline serve`` ends with ``os._exit(0)`` when a world's worker thread is still computing; in the test
    process, whose earlier tests leave such threads, that ended the whole run with status 0 and the tests after it
    unrun (once, unseen by CI). Other processes (a forked child) exit as they always did."""
    real_exit = os._exit

    def guarded(status: int) -> None:
        if os.getpid() == _TEST_PROCESS:
            raise AssertionError(f"os._exit({status}) in the test process: it would end the test run")
        real_exit(status)

    monkeypatch.setattr(os, "_exit", guarded)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server of its own for the whole test session."""
    yield from run_postgres()


@pytest.fixture
async def postgres_url(postgres_server: PostgresServer) -> str:
    """A ``postgresql://`` URL of a fresh, empty database on that server."""
    return await new_postgres_database(postgres_server)
