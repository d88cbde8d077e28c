"""The test PostgreSQL of the archive tests: ``RUMMY_TEST_PG_URL`` (default the one on
127.0.0.1:5432, trust auth, database ``test``); each test gets a schema of its own
(:func:`fresh_schema`), dropped after it. ``.ci/run`` installs and starts PostgreSQL when
nothing listens on 5432."""

from __future__ import annotations

import os
import uuid

PG_URL = os.environ.get("RUMMY_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def pg_unreachable() -> str | None:
    """Why the test PostgreSQL cannot be used, or None."""
    try:
        import psycopg
    except ImportError as exc:
        return f"psycopg is not installed ({exc})"
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001
        return f"PostgreSQL unreachable at {PG_URL}: {exc}"
    return None


def fresh_schema() -> str:
    """A new schema name, unique to the caller."""
    return f"t_{uuid.uuid4().hex[:16]}"


def drop_schema(schema: str) -> None:
    """Drop ``schema`` and everything in it."""
    import psycopg
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
