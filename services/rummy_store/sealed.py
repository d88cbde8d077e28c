"""The store the service and the commands use: :class:`GameStore`, an event store (Redis or
memory) with personal fields sealed (:mod:`rummy_store.shred`) and, optionally, the archive
of finished games behind it (:mod:`rummy_store.archive`).

- **Writes** seal the personal fields of records, meta, snapshots and results-feed
  summaries under the game's key (made on the game's first such write, kept by the
  :class:`KeyVault`), so neither Redis nor the archive ever holds a name in plaintext.
- **Reads** open them again (:data:`~rummy_store.shred.ERASED` once the key is erased);
  plaintext values (games written before sealing) read as they are.
- **The archive.** A game absent from Redis is read from the archive: ``read``,
  ``version``, ``exists``, ``get_meta`` and the key. While a game is in both (a move
  interrupted between the archive's commit and the Redis delete), Redis is read: the
  choice is deterministic, and both copies hold the same events (the mover verified it).
  A snapshot is never written for a game that is not in Redis (it would leave a stray key
  behind the move). ``list_games`` lists Redis's index only.

Keys are cached in this process for :data:`KEY_CACHE_SECONDS` (an erasure made by another
process is seen within that time).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from rummy_store.archive import PgArchive
from rummy_store.base import AppendNotices, AppendResult, EventStore, StoredEvent
from rummy_store.results import FeedEntry, FeedStatus, ParkedEntry, ResultsFeed, id_key
from rummy_store.shred import (
    TOMBSTONE,
    is_sealed,
    new_key,
    open_value,
    seal_value,
    transform_meta,
    transform_record,
    transform_snapshot,
    transform_summary,
)

__all__ = ["KEY_CACHE_SECONDS", "GameStore", "KeyVault"]

KEY_CACHE_SECONDS = 30.0
"""Seconds a game's key (or its absence) is kept in this process's memory."""
_KEY_CACHE_SIZE = 4096


class KeyVault:
    """The games' keys in the event store: ``P:{G}:key`` in Redis (64 hex digits, no
    expiry; the text ``erased`` once erased), a dict in memory."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._mem: dict[str, bytes] = {}
        self._redis = hasattr(store, "client") and hasattr(store, "key")

    def name(self, game_id: str) -> str:
        """The Redis key of the game's key."""
        return str(self._store.key(game_id, "key"))

    async def get(self, game_id: str) -> bytes | None:
        """The key, the tombstone, or None (never made)."""
        if not self._redis:
            return self._mem.get(game_id)
        value = await self._store.client.get(self.name(game_id))
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else str(value)
        return TOMBSTONE if text == TOMBSTONE.decode() else bytes.fromhex(text)

    async def make(self, game_id: str) -> bytes:
        """The game's key, made now if it has none (atomic: of racing makers one wins)."""
        if not self._redis:
            return self._mem.setdefault(game_id, new_key())
        await self._store.client.set(self.name(game_id), new_key().hex(), nx=True)
        got = await self.get(game_id)
        assert got is not None
        return got

    async def erase(self, game_id: str) -> None:
        """Replace the key by the tombstone (an erased game stays erased)."""
        if not self._redis:
            self._mem[game_id] = TOMBSTONE
            return
        await self._store.client.set(self.name(game_id), TOMBSTONE.decode())


class GameStore:
    """An :class:`~rummy_store.base.EventStore` and :class:`~rummy_store.results.ResultsFeed`
    with sealed personal fields and an optional archive (see the module).

    Args:
        inner: the Redis or memory store (its methods are called as they are).
        archive: the archive of finished games, or None.
    """

    def __init__(self, inner: EventStore, archive: PgArchive | None = None) -> None:
        self.inner = inner
        self.archive = archive
        self.vault = KeyVault(inner)
        self._keys: OrderedDict[str, tuple[bytes | None, float]] = OrderedDict()

    def __getattr__(self, name: str) -> Any:  # client, prefix, key(), is_cluster, ...
        return getattr(self.inner, name)

    # -- keys ------------------------------------------------------------------------
    async def game_key(self, game_id: str, *, make: bool = False) -> bytes | None:
        """The game's key (the tombstone once erased; None: none anywhere). ``make``: make
        one in the vault when there is none."""
        hit = self._keys.get(game_id)
        if hit is not None and time.monotonic() - hit[1] < KEY_CACHE_SECONDS \
                and (hit[0] is not None or not make):
            return hit[0]
        key = await self.vault.get(game_id)
        if key is None and self.archive is not None:
            known, archived = await self.archive.key(game_id)
            if known:
                key = TOMBSTONE if archived is None else archived
        if key is None and make:
            key = await self.vault.make(game_id)
        self.remember_key(game_id, key)
        return key

    def remember_key(self, game_id: str, key: bytes | None) -> None:
        """Cache a game's key (None: forget it)."""
        self._keys.pop(game_id, None)
        if key is not None:
            self._keys[game_id] = (key, time.monotonic())
            while len(self._keys) > _KEY_CACHE_SIZE:
                self._keys.popitem(last=False)

    def _sealer(self, key: bytes | None, game_id: str) -> Callable[[str, str], str]:
        return lambda value, field: seal_value(key, game_id, field, value)

    def _opener(self, key: bytes | None, game_id: str) -> Callable[[str, str], str]:
        return lambda value, field: open_value(key, game_id, field, value)

    async def _open_events(self, game_id: str,
                           events: Sequence[StoredEvent]) -> list[StoredEvent]:
        out = list(events)
        for i, e in enumerate(out):
            if e.type == "GameStarted" and any(is_sealed(n) for n in e.data.get("names") or []):
                key = await self.game_key(game_id)
                out[i] = dataclasses.replace(
                    e, data=transform_record(e.data, self._opener(key, game_id)))
        return out

    async def _open_result(self, game_id: str, result: AppendResult) -> AppendResult:
        if not any(e.type == "GameStarted" for e in result.events):
            return result  # only a GameStarted holds names to open (a move's append)
        return dataclasses.replace(result, events=tuple(await self._open_events(
            game_id, result.events)))

    async def _open_summary(self, summary: dict[str, Any]) -> dict[str, Any]:
        seats = summary.get("seats")
        if not isinstance(seats, list) or not any(
                isinstance(s, dict) and is_sealed(s.get("name")) for s in seats):
            return summary
        game_id = str(summary.get("game_id", ""))
        key = await self.game_key(game_id)
        return transform_summary(summary, self._opener(key, game_id))

    # -- EventLog --------------------------------------------------------------------
    async def append(self, game_id: str, events: Sequence[dict[str, Any]],
                     expected_version: int, *, request_id: str | None = None,
                     request_hash: str | None = None, response: dict[str, Any] | None = None,
                     summary: dict[str, Any] | None = None) -> AppendResult:
        personal = summary is not None or any(
            isinstance(e, dict) and e.get("type") == "GameStarted" for e in events)
        if personal:
            key = await self.game_key(game_id, make=True)
            seal = self._sealer(key, game_id)
            events = [transform_record(e, seal) if isinstance(e, dict) else e for e in events]
            if summary is not None:
                summary = transform_summary(summary, seal)
        result = await self.inner.append(game_id, events, expected_version,
                                         request_id=request_id, request_hash=request_hash,
                                         response=response, summary=summary)
        return await self._open_result(game_id, result)

    async def _in_redis(self, game_id: str) -> bool:
        return await self.inner.exists(game_id)

    async def read(self, game_id: str, after_version: int = 0,
                   to_version: int | None = None) -> list[StoredEvent]:
        events = await self.inner.read(game_id, after_version, to_version)
        if not events and self.archive is not None and not await self._in_redis(game_id):
            got = await self.archive.game(game_id)
            if got is not None:
                events = [e for e in got[1] if e.version > after_version
                          and (to_version is None or e.version <= to_version)]
        return await self._open_events(game_id, events)

    async def version(self, game_id: str) -> int:
        v = await self.inner.version(game_id)
        if v == 0 and self.archive is not None:
            return await self.archive.n_events(game_id)
        return v

    async def exists(self, game_id: str) -> bool:
        if await self.inner.exists(game_id):
            return True
        return self.archive is not None and await self.archive.has_game(game_id)

    # -- RequestLog ------------------------------------------------------------------
    async def get_request(self, game_id: str, request_id: str,
                          request_hash: str | None = None) -> AppendResult | None:
        got = await self.inner.get_request(game_id, request_id, request_hash)
        return None if got is None else await self._open_result(game_id, got)

    async def put_if_absent(self, name: str, value: dict[str, Any],
                            ttl: float) -> dict[str, Any]:
        return await self.inner.put_if_absent(name, value, ttl)

    # -- Subscriptions ---------------------------------------------------------------
    def subscribe(self, game_id: str, after_version: int = 0, *,
                  block_ms: int = 1000) -> AsyncGenerator[StoredEvent, None]:
        """:meth:`EventStore.subscribe` with the seat names of ``GameStarted`` opened, and an
        archived game's events first. Past version 1 with no archive there is nothing to
        open (``GameStarted`` is a game's first event) nor to look up: the inner store's
        subscription is returned as it is, one generator less per event delivered."""
        if self.archive is None and after_version >= 1:
            return self.inner.subscribe(game_id, after_version, block_ms=block_ms)
        return self._subscribe(game_id, after_version, block_ms)

    async def _subscribe(self, game_id: str, after_version: int,
                         block_ms: int) -> AsyncGenerator[StoredEvent, None]:
        if self.archive is not None and not await self._in_redis(game_id):
            got = await self.archive.game(game_id)  # an archived game: its events, then
            for e in await self._open_events(game_id, got[1] if got else []):  # nothing
                if e.version > after_version:
                    after_version = e.version
                    yield e
        gen = self.inner.subscribe(game_id, after_version, block_ms=block_ms)
        try:
            async for e in gen:
                yield e if e.type != "GameStarted" else (
                    await self._open_events(game_id, [e]))[0]
        finally:
            await gen.aclose()

    def subscriber_count(self) -> int:
        return self.inner.subscriber_count()

    def append_feed(self, listener: Callable[[str, int], None]) -> AppendNotices | None:
        return self.inner.append_feed(listener)

    # -- DueSchedule -----------------------------------------------------------------
    async def schedule(self, game_id: str, delay: float, *, only_earlier: bool = False) -> None:
        await self.inner.schedule(game_id, delay, only_earlier=only_earlier)

    async def unschedule(self, game_id: str) -> None:
        await self.inner.unschedule(game_id)

    async def claim_due(self, lease: float, *, limit: int = 64,
                        game_id: str | None = None) -> list[str]:
        return await self.inner.claim_due(lease, limit=limit, game_id=game_id)

    async def due(self, game_id: str) -> float | None:
        return await self.inner.due(game_id)

    # -- GameIndex -------------------------------------------------------------------
    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        if isinstance(meta, dict) and "seats" in meta:
            key = await self.game_key(game_id, make=True)
            meta = transform_meta(meta, self._sealer(key, game_id))
        await self.inner.put_meta(game_id, meta)

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        meta = await self.inner.get_meta(game_id)
        if meta is None and self.archive is not None and not await self._in_redis(game_id):
            got = await self.archive.game(game_id)
            meta = got[0].meta if got is not None else None
        if meta is None or not any(isinstance(s, dict) and is_sealed(s.get("name"))
                                   for s in meta.get("seats") or []):
            return meta
        key = await self.game_key(game_id)
        return transform_meta(meta, self._opener(key, game_id))

    async def list_games(self, *, limit: int = 100, active_only: bool = False) -> list[str]:
        return await self.inner.list_games(limit=limit, active_only=active_only)

    async def set_active(self, game_id: str, active: bool) -> bool:
        return await self.inner.set_active(game_id, active)

    # -- SnapshotLog -----------------------------------------------------------------
    async def put_snapshot(self, game_id: str, version: int, data: dict[str, Any]) -> None:
        if self.archive is not None and not await self._in_redis(game_id):
            return  # an archived game: no stray snapshot key in Redis
        if isinstance(data, dict) and "names" in data:
            key = await self.game_key(game_id, make=True)
            data = transform_snapshot(data, self._sealer(key, game_id))
        await self.inner.put_snapshot(game_id, version, data)

    async def get_snapshot(self, game_id: str,
                           max_version: int) -> tuple[int, dict[str, Any]] | None:
        got = await self.inner.get_snapshot(game_id, max_version)
        names = got[1].get("names") if got is not None and isinstance(got[1], dict) else None
        if got is None or not isinstance(names, list) or not any(is_sealed(n) for n in names):
            # nothing sealed, or not a snapshot this release reads: the repository checks
            # it (rummy.snapshot.state_from_dict) and ignores what it cannot read
            return got
        key = await self.game_key(game_id)
        return got[0], transform_snapshot(got[1], self._opener(key, game_id))

    # -- Lifecycle -------------------------------------------------------------------
    @property
    def idle_ttl(self) -> float:
        return self.inner.idle_ttl

    async def ping(self) -> None:
        await self.inner.ping()

    async def now(self) -> float:
        return await self.inner.now()

    async def check_access(self) -> None:
        await self.inner.check_access()

    async def close(self) -> None:
        if self.archive is not None:
            await self.archive.close()
        await self.inner.close()

    # -- ResultsFeed -----------------------------------------------------------------
    def _feed(self) -> ResultsFeed:
        feed = self.inner
        assert isinstance(feed, ResultsFeed)
        return feed

    async def results_read(self, group: str, consumer: str, *, count: int = 100,
                           block_ms: int = 1000, start: str = "0", lease: float = 30.0,
                           max_deliveries: int = 5) -> list[FeedEntry]:
        got = await self._feed().results_read(group, consumer, count=count, block_ms=block_ms,
                                              start=start, lease=lease,
                                              max_deliveries=max_deliveries)
        return [dataclasses.replace(e, summary=await self._open_summary(e.summary))
                for e in got]

    async def results_ack(self, group: str, ids: Sequence[str]) -> int:
        return await self._feed().results_ack(group, ids)

    async def results_status(self, group: str, consumer: str = "") -> FeedStatus:
        return await self._feed().results_status(group, consumer)

    async def results_parked(self, group: str, *, after: str = "0",
                             limit: int = 100) -> list[ParkedEntry]:
        got = await self._feed().results_parked(group, after=after, limit=limit)
        return [dataclasses.replace(p, entry=dataclasses.replace(
            p.entry, summary=await self._open_summary(p.entry.summary))) for p in got]

    async def results_sweep(self, *, limit: int = 1000) -> int:
        return await self._feed().results_sweep(limit=limit)

    async def results_history(self, game_id: str) -> list[FeedEntry]:
        """The game's results-feed summaries, oldest first (``deliveries`` 0): those trimmed
        into the archive, then those still in the store's feed (a scan of the feed, which
        retention keeps to about the retention period's entries)."""
        found: list[tuple[str, dict[str, Any]]] = []
        if self.archive is not None:
            found += await self.archive.results(game_id)
        inner: Any = self.inner
        if hasattr(inner, "client"):
            cursor = "-"
            while True:
                rows = await inner.client.xrange(inner._results_feed, cursor, "+", count=1000)
                if not rows:
                    break
                for entry_id, fields in rows:
                    f = {_text(k): _text(v) for k, v in fields.items()}
                    if f.get("g") == game_id:
                        found.append((_text(entry_id), json.loads(f.get("s") or "{}")))
                cursor = "(" + _text(rows[-1][0])
        else:
            feed = inner._results
            for entry_id, text in zip(feed._ids, feed._texts, strict=True):
                summary = json.loads(text)
                if summary.get("game_id") == game_id:
                    found.append((entry_id, summary))
        seen: dict[str, dict[str, Any]] = dict(found)
        return [FeedEntry(i, await self._open_summary(s), 0)
                for i, s in sorted(seen.items(), key=lambda kv: id_key(kv[0]))]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
