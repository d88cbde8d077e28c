"""The games' repository: the event store behind one mapper and a bounded state cache.

Every event goes through the one mapper of the store package
(:class:`rummy_store.mapper.EventMapper`) on its way in and out (core event ⇄ stored record,
upcasting old schema versions on read, ``docs/events.md``); nothing else in the service
converts events for the store. A game's latest state is kept in an LRU cache (game id -> state at
its latest known version and the ``ts`` of its last event); a cache hit reads only the
newer events.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from rummy_store.base import AppendResult, EventStore
from rummy_store.mapper import EventMapper
from rummy_store.repository import EventRepository

from rummy.events import Event
from rummy.evolve import evolve
from rummy.state import GameState
from rummy_grpc import metrics
from rummy_grpc.errors import GameLimitReached, GameNotFound
from rummy_grpc.model import MAX_EVENTS


class GameRepository(EventRepository):
    """Games from an :class:`~rummy_store.base.EventStore`, as core states and events: the
    store's :class:`~rummy_store.repository.EventRepository` plus the games' meta and a
    state cache.

    Args:
        store: the event store.
        cache_size: games whose latest state is kept in memory (LRU).
        mapper: the event mapper (default ``rummy_store.MAPPER``).
        max_events: the cap of events per game (:data:`MAX_EVENTS`); an append past it
            raises :class:`~rummy_grpc.errors.GameLimitReached`.
    """

    def __init__(self, store: EventStore, *, cache_size: int = 4096,
                 mapper: EventMapper | None = None, max_events: int = 0) -> None:
        super().__init__(store, mapper)
        self.max_events = max_events or MAX_EVENTS
        self._cache: OrderedDict[str, tuple[GameState, float]] = OrderedDict()
        self._cache_size = cache_size
        self._meta: dict[str, dict[str, Any]] = {}

    async def meta(self, game_id: str) -> dict[str, Any]:
        """The game's meta (seats, token digests, players, hand size, turn seconds).

        Raises:
            GameNotFound: no such game (or an id the store cannot hold).
        """
        meta = self._meta.get(game_id)
        if meta is None:
            try:
                meta = await self.store.get_meta(game_id)
            except ValueError:  # a game id the store cannot hold: no such game
                meta = None
            if meta is None or "seats" not in meta:
                raise GameNotFound(f"no game {game_id!r}")
            self._meta[game_id] = meta
        return meta

    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        """Store a new game's meta (and keep it cached)."""
        await self.store.put_meta(game_id, meta)
        self._meta[game_id] = meta

    def cached(self, game_id: str) -> tuple[GameState, float] | None:
        """The cached latest state and ``ts`` of a game, without asking the store."""
        return self._cache.get(game_id)

    async def load(self, game_id: str, *, fresh: bool = True) -> tuple[GameState, float]:
        """The latest state of a game and the ``ts`` of its last event.

        With ``fresh=False`` a cached state is returned without asking the store (commands
        do this: their append carries the cached version as ``expected_version``, so a stale
        cache costs a retry, never a wrong append).

        Raises:
            GameNotFound: the game has no events.
        """
        cached = self._cache.get(game_id)
        if cached is not None and not fresh:
            self._cache.move_to_end(game_id)
            return cached
        after = cached[0].version if cached else 0
        new = await self.read(game_id, after_version=after)
        if cached is None and not new:
            raise GameNotFound(f"no game {game_id!r}")
        state: GameState | None = cached[0] if cached else None
        ts = cached[1] if cached else 0.0
        for r in new:
            state = evolve(state, r.event)
            ts = r.ts
        assert state is not None
        self.remember(game_id, state, ts)
        return state, ts

    def remember(self, game_id: str, state: GameState, ts: float) -> None:
        """Cache ``state`` as the game's latest (unless a newer one is cached)."""
        cached = self._cache.get(game_id)
        if cached is not None and cached[0].version > state.version:
            return
        self._cache[game_id] = (state, ts)
        self._cache.move_to_end(game_id)
        while len(self._cache) > self._cache_size:
            old, _ = self._cache.popitem(last=False)
            self._meta.pop(old, None)

    async def state_at(self, game_id: str, version: int) -> GameState:
        """The state after the first ``version`` events (``version`` >= 1).

        Raises:
            GameNotFound: the game has no events.
        """
        state: GameState | None = None
        for r in await self.read(game_id, 0, version):
            state = evolve(state, r.event)
        if state is None:
            raise GameNotFound(f"no game {game_id!r}")
        return state

    async def append(self, game_id: str, events: Sequence[Event], expected_version: int, *,
                     request_id: str | None = None, request_hash: str | None = None,
                     response: dict[str, Any] | None = None) -> AppendResult:
        """:meth:`EventRepository.append`, timing the append and counting the events
        appended (metrics).

        Raises:
            VersionConflict, RequestIdReused: as ``EventStore.append``.
            GameLimitReached: the append would take the game past :attr:`max_events`.
        """
        if expected_version + len(events) > self.max_events:
            raise GameLimitReached(game_id, self.max_events)
        t0 = time.perf_counter()
        result = await super().append(game_id, events, expected_version,
                                      request_id=request_id, request_hash=request_hash,
                                      response=response)
        metrics.EVENT_APPEND_SECONDS.observe(time.perf_counter() - t0)
        if not result.duplicate:
            for se in result.events:
                metrics.EVENTS_APPENDED_TOTAL.labels(se.type).inc()
        return result


__all__ = ["GameRepository"]
