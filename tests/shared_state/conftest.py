"""Fixtures of the shared-state tests: one real PostgreSQL server per session, a fresh database per test."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

from pg_server import PgServer, require_postgres  # noqa: E402


@pytest.fixture(scope="session")
def pg_server():
    require_postgres()
    server = PgServer().init()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def pg(pg_server, request):
    """The server, with a database of this test's own (its name from the test's)."""
    if not pg_server.running:
        pg_server.start()
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name.lower())[:50]
    pg_server.fresh_database(name)
    pg_server.database = name
    return pg_server
