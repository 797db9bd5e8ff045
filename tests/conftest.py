"""Fixtures shared by every test package: the session's real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres import PostgresServer, new_postgres_database, run_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server of its own for the whole test session."""
    yield from run_postgres()


@pytest.fixture
async def postgres_url(postgres_server: PostgresServer) -> str:
    """A ``postgresql://`` URL of a fresh, empty database on that server."""
    return await new_postgres_database(postgres_server)
