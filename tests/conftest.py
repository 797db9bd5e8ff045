"""Fixtures shared by every test package: the session's real PostgreSQL server; Hypothesis's CI profile.

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


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server of its own for the whole test session."""
    yield from run_postgres()


@pytest.fixture
async def postgres_url(postgres_server: PostgresServer) -> str:
    """A ``postgresql://`` URL of a fresh, empty database on that server."""
    return await new_postgres_database(postgres_server)
