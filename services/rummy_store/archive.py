"""The archive of finished games: PostgreSQL tables that outlive the event store's Redis
(docs/operations.md, "Retention and the archive").

A game moves here from Redis once it has been finished for the retention period
(:mod:`rummy_store.retention` moves it; :class:`rummy_store.sealed.GameStore` reads it).
Tables, in the schema ``schema`` (default ``rummy``):

- ``games``: one row per game: ``game_id`` (primary key), ``n_events``, ``events`` (bytea:
  the canonical JSON of the game's events, :func:`canonical_events`), ``sha256`` (its
  SHA-256), ``meta`` (the game's meta as JSON, personal fields sealed as in Redis),
  ``entered`` (its score in the Redis games index, seconds), ``finished`` (its last event's
  ``ts``), ``archived`` (when the row was written).
- ``game_keys``: the per-game key that opens the sealed personal fields
  (:mod:`rummy_store.shred`); ``key`` is NULL once the game's names were erased.
- ``results``: results-feed entries trimmed from Redis: ``entry_id`` (primary key),
  ``game_id``, ``summary`` (JSON).

PostgreSQL's own TOAST compression keeps ``events`` small (about a quarter of its text).
A copy is verified by asking PostgreSQL for the stored row's event count and
``sha256(events)`` after the commit; only then does the mover delete the Redis keys.

The client is psycopg 3 (``psycopg``), async, one connection per archive object used under
a lock (the archive is off the service's hot path: the mover, and reads of archived games).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rummy_store.values import StoredEvent

__all__ = ["ArchivedGame", "PgArchive", "canonical_events", "events_from_canonical"]

_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def canonical_events(events: Sequence[StoredEvent]) -> bytes:
    """The archive's text of a game's events: a JSON array of ``[version, ts, data]`` in
    version order, keys sorted, no spaces (UTF-8). Its SHA-256 is the copy's checksum."""
    rows = [[e.version, e.ts, e.data] for e in events]
    return json.dumps(rows, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()


def events_from_canonical(blob: bytes) -> list[StoredEvent]:
    """The events of :func:`canonical_events` text."""
    return [StoredEvent(version=int(v), type=str(d.get("type", "")), data=d, ts=float(ts))
            for v, ts, d in json.loads(bytes(blob))]


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """What the archive holds of one game: ``n_events``, the SHA-256 of its events text,
    the meta (sealed), its index score ``entered`` and its last event's ``finished``
    (seconds, Redis clock)."""

    game_id: str
    n_events: int
    sha256: bytes
    meta: dict[str, Any] | None
    entered: float
    finished: float


class PgArchive:
    """Finished games in PostgreSQL (see the module).

    Args:
        url: a libpq connection string or URL (``postgresql://127.0.0.1:5432/test``).
        schema: the schema of the tables (lower-case letters, digits, ``_``); created with
            them by :meth:`setup`.

    Raises:
        ValueError: a bad schema name.
    """

    def __init__(self, url: str, *, schema: str = "rummy") -> None:
        if not _SCHEMA.match(schema):
            raise ValueError(f"bad archive schema name {schema!r}: lower-case letters, "
                             "digits and _, at most 63")
        self.url = url
        self.schema = schema
        self._conn: Any = None
        self._lock = asyncio.Lock()
        self._ready = False

    async def _connect(self) -> Any:
        import psycopg
        if self._conn is None or self._conn.closed:
            self._conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
            self._ready = False
        if not self._ready:
            await self._setup(self._conn)
            self._ready = True
        return self._conn

    async def _setup(self, conn: Any) -> None:
        s = self.schema
        async with conn.transaction():
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.games (game_id text PRIMARY KEY, "
                "n_events integer NOT NULL, events bytea NOT NULL, sha256 bytea NOT NULL, "
                "meta text, entered double precision NOT NULL, "
                "finished double precision NOT NULL, archived timestamptz NOT NULL "
                "DEFAULT now())")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.game_keys (game_id text PRIMARY KEY, "
                "key bytea)")
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.results (entry_id text PRIMARY KEY, "
                "game_id text NOT NULL, summary text NOT NULL)")
            await conn.execute(
                f"CREATE INDEX IF NOT EXISTS results_game ON {s}.results (game_id)")

    async def _run(self, sql: str, params: Sequence[Any] = (), *,
                   fetch: bool = True) -> list[tuple[Any, ...]]:
        """One statement; a broken connection is dropped (the next call reconnects)."""
        async with self._lock:
            conn = await self._connect()
            try:
                cur = await conn.execute(sql.replace("{s}", self.schema), params)
                return list(await cur.fetchall()) if fetch else []
            except Exception:
                if conn.closed or conn.broken:
                    self._conn = None
                raise

    async def setup(self) -> None:
        """Create the schema and tables if missing (every call does it once per connection)."""
        async with self._lock:
            await self._connect()

    async def put_game(self, game: ArchivedGame, blob: bytes, key: bytes | None,
                       key_known: bool) -> None:
        """Write a game's row (and its key row when ``key_known``: ``key`` None means erased)
        in one transaction; an existing row is replaced (the copy in Redis is the one
        readers prefer while it exists, so a second move makes the archive agree with it)."""
        s = self.schema
        async with self._lock:
            conn = await self._connect()
            try:
                async with conn.transaction():
                    await conn.execute(
                        f"INSERT INTO {s}.games (game_id, n_events, events, sha256, meta, "
                        "entered, finished) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                        "ON CONFLICT (game_id) DO UPDATE SET n_events = EXCLUDED.n_events, "
                        "events = EXCLUDED.events, sha256 = EXCLUDED.sha256, "
                        "meta = EXCLUDED.meta, entered = EXCLUDED.entered, "
                        "finished = EXCLUDED.finished, archived = now()",
                        (game.game_id, game.n_events, blob, game.sha256,
                         None if game.meta is None else json.dumps(game.meta),
                         game.entered, game.finished))
                    if key_known:
                        await conn.execute(
                            f"INSERT INTO {s}.game_keys (game_id, key) VALUES (%s, %s) "
                            "ON CONFLICT (game_id) DO UPDATE SET key = EXCLUDED.key "
                            f"WHERE {s}.game_keys.key IS NOT NULL",
                            (game.game_id, key))
            except Exception:
                if conn.closed or conn.broken:
                    self._conn = None
                raise

    async def checksum(self, game_id: str) -> tuple[int, bytes] | None:
        """``(n_events, sha256(events))`` of the stored row, computed by PostgreSQL from
        what it holds (None: no row). The mover compares it with its own before it deletes
        anything in Redis."""
        rows = await self._run("SELECT n_events, sha256(events) FROM {s}.games "
                               "WHERE game_id = %s", (game_id,))
        return (int(rows[0][0]), bytes(rows[0][1])) if rows else None

    async def n_events(self, game_id: str) -> int:
        """The archived game's event count (0: not archived)."""
        rows = await self._run("SELECT n_events FROM {s}.games WHERE game_id = %s",
                               (game_id,))
        return int(rows[0][0]) if rows else 0

    async def has_game(self, game_id: str) -> bool:
        """True when the game has a row."""
        return bool(await self._run("SELECT 1 FROM {s}.games WHERE game_id = %s", (game_id,)))

    async def game(self, game_id: str) -> tuple[ArchivedGame, list[StoredEvent]] | None:
        """The game's row and its events, or None."""
        rows = await self._run("SELECT n_events, sha256, meta, entered, finished, events "
                               "FROM {s}.games WHERE game_id = %s", (game_id,))
        if not rows:
            return None
        n, digest, meta, entered, finished, blob = rows[0]
        info = ArchivedGame(game_id, int(n), bytes(digest),
                            None if meta is None else json.loads(meta), float(entered),
                            float(finished))
        return info, events_from_canonical(blob)

    async def key(self, game_id: str) -> tuple[bool, bytes | None]:
        """``(known, key)``: whether the archive has a key row for the game, and the key
        (None once erased)."""
        rows = await self._run("SELECT key FROM {s}.game_keys WHERE game_id = %s",
                               (game_id,))
        if not rows:
            return False, None
        return True, None if rows[0][0] is None else bytes(rows[0][0])

    async def erase(self, game_id: str, redacted: tuple[bytes, int, dict[str, Any] | None]
                    | None, results: Sequence[tuple[str, str]]) -> None:
        """Erase a game's personal data in the archive, in one transaction: its key row
        becomes NULL (created so when missing: erasure is remembered), and with
        ``redacted`` = ``(events text, n_events, meta)`` the row's events and meta are
        replaced by that redacted copy (a game written before the sealing), with
        ``results`` = ``[(entry id, summary JSON)]`` those feed rows too."""
        s = self.schema
        async with self._lock:
            conn = await self._connect()
            try:
                async with conn.transaction():
                    await conn.execute(
                        f"INSERT INTO {s}.game_keys (game_id, key) VALUES (%s, NULL) "
                        "ON CONFLICT (game_id) DO UPDATE SET key = NULL", (game_id,))
                    if redacted is not None:
                        blob, n, meta = redacted
                        await conn.execute(
                            f"UPDATE {s}.games SET events = %s, sha256 = %s, n_events = %s, "
                            "meta = %s WHERE game_id = %s",
                            (blob, hashlib.sha256(blob).digest(), n,
                             None if meta is None else json.dumps(meta), game_id))
                    for entry_id, summary in results:
                        await conn.execute(f"UPDATE {s}.results SET summary = %s "
                                           "WHERE entry_id = %s", (summary, entry_id))
            except Exception:
                if conn.closed or conn.broken:
                    self._conn = None
                raise

    async def put_results(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Keep feed entries ``(entry id, game id, summary JSON)`` (an entry kept before is
        left as it is), in one transaction."""
        if not rows:
            return
        s = self.schema
        async with self._lock:
            conn = await self._connect()
            try:
                async with conn.transaction(), conn.cursor() as cur:
                    await cur.executemany(
                        f"INSERT INTO {s}.results (entry_id, game_id, summary) "
                        "VALUES (%s, %s, %s) ON CONFLICT (entry_id) DO NOTHING", rows)
            except Exception:
                if conn.closed or conn.broken:
                    self._conn = None
                raise

    async def count_results(self, entry_ids: Sequence[str]) -> int:
        """How many of ``entry_ids`` the archive holds (the trim's verification)."""
        if not entry_ids:
            return 0
        rows = await self._run("SELECT count(*) FROM {s}.results WHERE entry_id = ANY(%s)",
                               (list(entry_ids),))
        return int(rows[0][0])

    async def results(self, game_id: str) -> list[tuple[str, dict[str, Any]]]:
        """The game's archived feed entries ``(entry id, summary)``, oldest first."""
        rows = await self._run("SELECT entry_id, summary FROM {s}.results WHERE game_id = %s",
                               (game_id,))
        out = [(str(i), json.loads(s)) for i, s in rows]
        out.sort(key=lambda r: tuple(int(x) for x in r[0].split("-")))
        return out

    async def count_games(self) -> int:
        """Rows of ``games``."""
        return int((await self._run("SELECT count(*) FROM {s}.games"))[0][0])

    async def close(self) -> None:
        """Close the connection (the next call opens a new one)."""
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
