"""An in-process :class:`~rummy_store.base.EventStore` for demos and tests.

Behaves as :class:`rummy_store.redis_store.RedisEventStore` does (one contract suite), except
that nothing survives the process and ``block_ms`` has no effect (a subscriber simply waits on
a future of its game, set by the game's next append: an append wakes its own game's
subscribers only). Use it from one event loop.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy_store.base import (
    AppendNotices,
    AppendResult,
    RequestIdReused,
    StoredEvent,
    VersionConflict,
    check_claim,
    check_delay,
    check_game_id,
    check_name,
    check_request_id,
    check_version,
    dumps,
    serialise_events,
    serialise_snapshot,
)
from rummy_store.creators import UnknownCursor, check_listing
from rummy_store.memory_results import MemoryFeed
from rummy_store.results import (
    LEASE,
    MAX_DELIVERIES,
    FeedEntry,
    FeedStatus,
    ParkedEntry,
    abandoned_summary,
)

__all__ = ["MemoryEventStore"]


@dataclass(slots=True)
class _Request:
    hash: str
    first: int
    last: int
    response: str  # JSON, "null" for none


@dataclass(slots=True)
class _Game:
    events: list[StoredEvent] = field(default_factory=list)
    requests: dict[str, _Request] = field(default_factory=dict)


class MemoryEventStore:
    """The in-memory event store. See :class:`rummy_store.base.EventStore` for the contract."""

    def __init__(self, *, idle_ttl: float = 0.0, request_ttl: float = 0.0) -> None:
        """Args: ``idle_ttl`` and ``request_ttl`` as for
        :class:`~rummy_store.redis_store.RedisEventStore` (seconds; 0: never)."""
        self._idle = check_delay("idle_ttl", idle_ttl)
        self._request_ttl = check_delay("request_ttl", request_ttl)
        # both in the order they expire, oldest first (a touch moves a game to the end), so
        # that _expire looks only at what is due: O(expired) per call, not O(games)
        self._touched: dict[str, float] = {}  # active game id -> last append / meta (s)
        self._requests_until: dict[str, float] = {}  # finished game -> requests expiry (s)
        self._games: dict[str, _Game] = {}
        self._meta: dict[str, str] = {}
        self._index: dict[str, float] = {}  # game id -> time entered in the index (s)
        self._active: set[str] = set()
        self._snapshots: dict[str, dict[int, str]] = {}  # game id -> {version: JSON}
        self._lock = asyncio.Lock()  # appends, one at a time
        self._due: dict[str, float] = {}  # game id -> due time (epoch s)
        self._once: dict[str, tuple[float, str]] = {}  # name -> (expiry, JSON)
        self._subscribers = 0
        self._created: dict[str, dict[str, float]] = {}  # creator -> {game id: created}
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}  # game id -> subscribers'
        self._results = MemoryFeed()

    async def append(
        self,
        game_id: str,
        events: Sequence[dict[str, Any]],
        expected_version: int,
        *,
        request_id: str | None = None,
        request_hash: str | None = None,
        response: dict[str, Any] | None = None,
        summary: dict[str, Any] | None = None,
    ) -> AppendResult:
        check_game_id(game_id)
        if summary is not None:
            dumps(summary)  # TypeError before anything is written
        check_version("expected_version", expected_version)
        check_request_id(request_id)
        encoded = serialise_events(events)
        response_json = dumps(response)
        async with self._lock:
            game = self._games.get(game_id) or _Game()
            if request_id is not None:
                prior = game.requests.get(request_id)
                if prior is not None:
                    if prior.hash != (request_hash or ""):
                        raise RequestIdReused(game_id, request_id)
                    if prior.first == 1 and prior.last >= 1:
                        self._register(game_id, game.events[0].ts)
                    return AppendResult(
                        version=prior.last,
                        events=tuple(game.events[prior.first - 1 : prior.last]),
                        duplicate=True,
                        response=json.loads(prior.response),
                    )
            actual = len(game.events)
            if actual != expected_version:
                raise VersionConflict(game_id, expected_version, actual)
            ts = time.time()
            new = tuple(
                StoredEvent(version=expected_version + i, type=kind, data=json.loads(text), ts=ts)
                for i, (kind, text) in enumerate(encoded, start=1)
            )
            game.events.extend(new)
            last = expected_version + len(new)
            if request_id is not None:
                game.requests[request_id] = _Request(
                    request_hash or "", expected_version + 1, last, response_json
                )
            self._games[game_id] = game
            if game_id in self._touched or game_id not in self._index:
                self._touch(game_id, ts)
            if expected_version == 0 and new:
                self._register(game_id, ts)
            self._results.add(summary)  # in the same step as the events
            if new:
                for waiter in self._waiters.pop(game_id, ()):
                    if not waiter.done():
                        waiter.set_result(None)
        return AppendResult(
            version=last, events=new, duplicate=False, response=json.loads(response_json)
        )

    @property
    def idle_ttl(self) -> float:
        return self._idle

    async def ping(self) -> None:
        return None

    async def now(self) -> float:
        """This process's clock, the one that stamps the memory store's events."""
        return time.time()

    async def check_access(self) -> None:
        """Nothing to check: the store is this process's memory."""
        return None

    async def get_request(
        self, game_id: str, request_id: str, request_hash: str | None = None
    ) -> AppendResult | None:
        check_game_id(game_id)
        self._expire()
        check_request_id(request_id)
        game = self._games.get(game_id)
        prior = game.requests.get(request_id) if game is not None else None
        if game is None or prior is None:
            return None
        if prior.hash != (request_hash or ""):
            raise RequestIdReused(game_id, request_id)
        return AppendResult(version=prior.last,
                            events=tuple(game.events[prior.first - 1 : prior.last]),
                            duplicate=True, response=json.loads(prior.response))

    async def read(
        self, game_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        check_game_id(game_id)
        self._expire()
        check_version("after_version", after_version)
        if to_version is not None:
            check_version("to_version", to_version)
        game = self._games.get(game_id)
        if game is None:
            return []
        if to_version is not None and to_version <= after_version:
            return []
        return game.events[after_version:to_version]

    async def version(self, game_id: str) -> int:
        check_game_id(game_id)
        self._expire()
        game = self._games.get(game_id)
        return len(game.events) if game else 0

    async def exists(self, game_id: str) -> bool:
        return await self.version(game_id) > 0

    async def subscribe(
        self, game_id: str, after_version: int = 0, *, block_ms: int = 1000
    ) -> AsyncGenerator[StoredEvent, None]:
        check_game_id(game_id)
        check_version("after_version", after_version)
        last = after_version
        self._subscribers += 1
        try:
            while True:
                while (game := self._games.get(game_id)) is None or len(game.events) <= last:
                    waiter = asyncio.get_running_loop().create_future()
                    self._waiters.setdefault(game_id, set()).add(waiter)
                    try:
                        await waiter
                    finally:
                        waiting = self._waiters.get(game_id)
                        if waiting is not None:
                            waiting.discard(waiter)
                            if not waiting:
                                del self._waiters[game_id]
                batch = game.events[last:]
                for event in batch:
                    last = event.version
                    yield event
        finally:
            self._subscribers -= 1

    def subscriber_count(self) -> int:
        return self._subscribers

    def append_feed(self, listener: Callable[[str, int], None]) -> AppendNotices | None:
        """None: one process holds the store, so a reader's cache has nothing to hear."""
        return None

    async def schedule(self, game_id: str, delay: float, *, only_earlier: bool = False) -> None:
        check_game_id(game_id)
        when = time.time() + check_delay("delay", delay)
        prior = self._due.get(game_id)
        if not (only_earlier and prior is not None and prior <= when):
            self._due[game_id] = when

    async def unschedule(self, game_id: str) -> None:
        check_game_id(game_id)
        self._due.pop(game_id, None)

    async def claim_due(self, lease: float, *, limit: int = 64,
                        game_id: str | None = None) -> list[str]:
        check_claim(lease, limit)
        now = time.time()
        if game_id is not None:
            check_game_id(game_id)
            when = self._due.get(game_id)
            ids = [game_id] if when is not None and when <= now else []
        else:
            ids = sorted((g for g, w in self._due.items() if w <= now),
                         key=lambda g: (self._due[g], g))[:limit]
        for g in ids:
            self._due[g] = now + lease
        return ids

    async def due(self, game_id: str) -> float | None:
        check_game_id(game_id)
        return self._due.get(game_id)

    async def put_if_absent(self, name: str, value: dict[str, Any],
                            ttl: float) -> dict[str, Any]:
        check_name(name)
        if check_delay("ttl", ttl) <= 0:
            raise ValueError(f"ttl must be > 0 seconds, got {ttl!r}")
        if not isinstance(value, dict):
            raise TypeError(f"value must be a dict, got {value!r}")
        text = dumps(value)
        now = time.time()
        prior = self._once.get(name)
        if prior is not None and prior[0] > now:
            return dict(json.loads(prior[1]))
        self._once[name] = (now + ttl, text)
        return dict(json.loads(text))

    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        check_game_id(game_id)
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict, got {meta!r}")
        self._meta[game_id] = dumps(meta)
        if game_id in self._touched or game_id not in self._index:
            self._touch(game_id, time.time())

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        check_game_id(game_id)
        self._expire()
        text = self._meta.get(game_id)
        return None if text is None else json.loads(text)

    async def list_games(self, *, limit: int = 100, active_only: bool = False) -> list[str]:
        if limit <= 0:
            return []
        self._expire()
        ids = self._active if active_only else self._index
        ranked = sorted(ids, key=lambda g: (self._index[g], g), reverse=True)
        return ranked[:limit]

    async def add_created(self, creator: str, game_id: str, created: float) -> None:
        """See :meth:`rummy_store.creators.CreatorIndex.add_created`."""
        check_listing(creator, 0, "all")
        check_game_id(game_id)
        self._created.setdefault(creator, {}).setdefault(game_id, float(created))

    async def list_created(self, creator: str, *, limit: int, after: str | None = None,
                           state: str = "all") -> list[str]:
        """See :meth:`rummy_store.creators.CreatorIndex.list_created`."""
        check_listing(creator, limit, state)
        self._expire()
        mine = self._created.get(creator, {})
        for g in [g for g in mine if g not in self._index]:  # expired while idle
            del mine[g]
        ranked = sorted(mine, key=lambda g: (mine[g], g), reverse=True)
        if after is not None:
            if after not in mine:
                raise UnknownCursor(after)
            ranked = ranked[ranked.index(after) + 1:]
        if state != "all":
            ranked = [g for g in ranked if (g in self._active) == (state == "active")]
        return ranked[:limit]

    async def set_active(self, game_id: str, active: bool) -> bool:
        check_game_id(game_id)
        was = game_id in self._active
        if active:
            self._index.setdefault(game_id, time.time())
            self._active.add(game_id)
        else:
            self._active.discard(game_id)
            self._touched.pop(game_id, None)  # finished: kept for good
            if self._request_ttl:
                self._requests_until.pop(game_id, None)  # to the end: the latest expiry
                self._requests_until[game_id] = time.time() + self._request_ttl
        return was

    async def put_snapshot(self, game_id: str, version: int, data: dict[str, Any]) -> None:
        check_game_id(game_id)
        text = serialise_snapshot(version, data)
        self._snapshots.setdefault(game_id, {})[version] = text

    async def get_snapshot(self, game_id: str,
                           max_version: int) -> tuple[int, dict[str, Any]] | None:
        check_game_id(game_id)
        check_version("max_version", max_version)
        kept = self._snapshots.get(game_id, {})
        best = max((v for v in kept if v <= max_version), default=None)
        return None if best is None else (best, json.loads(kept[best]))

    async def close(self) -> None:
        return None

    async def results_read(self, group: str, consumer: str, *, count: int = 100,
                           block_ms: int = 1000, start: str = "0", lease: float = LEASE,
                           max_deliveries: int = MAX_DELIVERIES) -> list[FeedEntry]:
        """See :meth:`rummy_store.results.ResultsFeed.results_read`."""
        self._expire()
        return await self._results.read(group, consumer, count=count, block_ms=block_ms,
                                        start=start, lease=lease,
                                        max_deliveries=max_deliveries)

    async def results_ack(self, group: str, ids: Sequence[str]) -> int:
        """See :meth:`rummy_store.results.ResultsFeed.results_ack`."""
        return self._results.ack(group, ids)

    async def results_status(self, group: str, consumer: str = "") -> FeedStatus:
        """See :meth:`rummy_store.results.ResultsFeed.results_status`."""
        return self._results.status(group, consumer)

    async def results_parked(self, group: str, *, after: str = "0",
                             limit: int = 100) -> list[ParkedEntry]:
        """See :meth:`rummy_store.results.ResultsFeed.results_parked`."""
        return self._results.parked(group, after=after, limit=limit)

    async def results_sweep(self, *, limit: int = 1000) -> int:
        """See :meth:`rummy_store.results.ResultsFeed.results_sweep` (expired games
        append their summary when the store notices them, here or in any read)."""
        before = self._results.length
        self._expire()
        return self._results.length - before

    def _touch(self, game_id: str, ts: float) -> None:
        """A game's last append or meta write was at ``ts``: it moves to the end of the
        idle order."""
        self._touched.pop(game_id, None)
        self._touched[game_id] = ts

    def _expire(self) -> None:
        """Drop the games idle longer than the idle expiry, and the request records of
        finished games past their window (what Redis key expiry does). Both dicts are in
        expiry order, so this stops at the first entry not yet due: a read pays for what
        expires, not for every game held. (A wall clock set back makes the entries behind
        an older one expire late, by at most the step.)"""
        now = time.time()
        if self._idle:
            touched = self._touched
            while touched:
                g = next(iter(touched))
                if now - touched[g] < self._idle:
                    break
                del touched[g]
                self._games.pop(g, None)
                self._meta.pop(g, None)
                self._snapshots.pop(g, None)
                self._index.pop(g, None)
                if g in self._active:
                    self._active.discard(g)
                    self._results.add(abandoned_summary(g))
        until = self._requests_until
        while until:
            g = next(iter(until))
            if until[g] > now:
                break
            del until[g]
            if g in self._games:
                self._games[g].requests.clear()

    def _register(self, game_id: str, ts: float) -> None:
        """Enter a game in the index, active, unless it is there already."""
        if game_id not in self._index:
            self._index[game_id] = ts
            self._active.add(game_id)
