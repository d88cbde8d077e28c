"""The games' repository: the event store behind one mapper and a bounded state cache.

Every event goes through the one mapper of the store package
(:class:`rummy_store.mapper.EventMapper`) on its way in and out (core event ⇄ stored record,
upcasting old schema versions on read, ``docs/events.md``); nothing else in the service
converts events for the store. A game's latest state is kept in an LRU cache (game id -> state at
its latest known version and the ``ts`` of its last event); a cache hit reads only the
newer events.

Snapshots (``rummy.snapshot``, kept by the store's ``put_snapshot``): each time a game's
version crosses a multiple of ``snapshot_every`` the service stores the state
(:meth:`GameRepository.maybe_snapshot`), and a state at an old version (or a latest state
missing from the cache) is rebuilt from the newest snapshot at or before it, evolving only
the events after it; more than :data:`EVOLVE_INLINE` of them are decoded and evolved in a
worker thread (``asyncio.to_thread``) so that the event loop keeps serving other calls.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from rummy_store.base import AppendResult, EventStore, StoredEvent, VersionConflict
from rummy_store.mapper import EventMapper
from rummy_store.repository import EventRepository

from rummy.events import Event, GameEnded, GameStarted
from rummy.evolve import evolve
from rummy.evolve import replay as evolve_all
from rummy.snapshot import state_from_dict, state_to_dict
from rummy.state import GAME_OVER, GameState
from rummy_grpc import metrics
from rummy_grpc.errors import GameLimitReached, GameNotFound
from rummy_grpc.model import MAX_EVENTS
from rummy_grpc.results import summarize

log = logging.getLogger("rummy_grpc")

SNAPSHOT_EVERY = 256
"""Default events between two snapshots of a game (``GameRepository(snapshot_every=...)``)."""

EVOLVE_INLINE = 64
"""Most events decoded and evolved on the event loop by one rebuild; more go to a thread."""

_LATEST = 2**62  # a max_version above any stream's version

TRUST_SECONDS = 1.0
"""Longest time (seconds) a state known to be the latest is read from memory before the
store is asked again (``GameRepository.latest``): a bound on what a writer that does not
announce its appends can hide."""


def fold(state: GameState | None, stored: Sequence[StoredEvent], mapper: EventMapper,
         snapshot_every: int) -> tuple[GameState | None, list[GameState]]:
    """Decode (``mapper.to_event``) and evolve ``stored`` from ``state`` (pure CPU work, safe
    in a worker thread).

    Returns:
        The state after the last event (``state`` itself for no events), and the states
        passed on the way whose version is a multiple of ``snapshot_every`` (the last one
        included), oldest first.

    Raises:
        rummy.errors.NotationError: a stored record this release cannot read.
    """
    passed: list[GameState] = []
    for se in stored:
        state = evolve(state, mapper.to_event(se))
        if state.version % snapshot_every == 0:
            passed.append(state)
    return state, passed


class GameRepository(EventRepository):
    """Games from an :class:`~rummy_store.base.EventStore`, as core states and events: the
    store's :class:`~rummy_store.repository.EventRepository` plus the games' meta and a
    state cache.

    Args:
        store: the event store.
        cache_size: games whose latest state is kept in memory (LRU); also bounds the
            games whose last snapshot version is remembered.
        mapper: the event mapper (default ``rummy_store.MAPPER``).
        max_events: the cap of events per game (:data:`MAX_EVENTS`); an append past it
            raises :class:`~rummy_grpc.errors.GameLimitReached`.
        snapshot_every: events between two snapshots of a game (>= 1); a rebuild evolves
            about this many events at most once the game has snapshots.

    Raises:
        ValueError: ``snapshot_every`` < 1.
    """

    def __init__(self, store: EventStore, *, cache_size: int = 4096,
                 mapper: EventMapper | None = None, max_events: int = 0,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        super().__init__(store, mapper)
        self.max_events = max_events or MAX_EVENTS
        if isinstance(snapshot_every, bool) or not isinstance(snapshot_every, int) \
                or snapshot_every < 1:
            raise ValueError(f"snapshot_every must be an integer >= 1, got {snapshot_every!r}")
        self._cache: OrderedDict[str, tuple[GameState, float]] = OrderedDict()
        self._cache_size = cache_size
        self._meta: dict[str, dict[str, Any]] = {}
        self.snapshot_every = snapshot_every
        self._snapshotted: OrderedDict[str, int] = OrderedDict()  # game -> last snapshot
        # the read cache: game -> feed epoch in which its cached state was known
        # to be the latest; game -> highest version announced by the feed (kept for cached
        # games and games with a store call in flight); game -> store calls in flight
        self._feed: Any = None
        self._trusted: dict[str, tuple[int, float]] = {}  # game -> (epoch, since: monotonic)
        self._announced: dict[str, int] = {}
        self._inflight: dict[str, int] = {}
        self.feed_reads = 0
        """Reads answered from the cache without asking the store (:meth:`latest`)."""
        self.trust_seconds = TRUST_SECONDS
        """Longest time (seconds) :meth:`latest` answers from memory without the store."""

    def start_feed(self) -> bool:
        """Start the store's append feed (``EventStore.append_feed``; a single Redis has
        one, other stores answer None) so that :meth:`latest` can answer from memory; call
        once, on the running loop.

        Returns:
            True when the store has a feed (False: every read asks the store).
        """
        if self._feed is None:
            self._feed = self.store.append_feed(self._on_appended)
        return self._feed is not None

    def stop_feed(self) -> None:
        """Stop listening to the append feed; reads ask the store from now on."""
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.discard(self._on_appended)
        self._trusted.clear()

    def epoch(self) -> int | None:
        """The feed's epoch while it is live, else ``None``: take it *before* a store call
        whose result is to be trusted (:meth:`remember`'s ``epoch``)."""
        feed = self._feed
        return feed.epoch if feed is not None and feed.live else None

    def _on_appended(self, game_id: str, version: int) -> None:
        """The feed's listener: a process appended up to ``version``."""
        cached = self._cache.get(game_id)
        if cached is None and game_id not in self._inflight:
            return  # nothing of it here: a later read asks the store
        if version > self._announced.get(game_id, 0):
            self._announced[game_id] = version
        if cached is not None and cached[0].version < version:
            self._trusted.pop(game_id, None)

    def _enter(self, game_id: str) -> None:
        """A store call whose result may be trusted starts (announcements are kept)."""
        self._inflight[game_id] = self._inflight.get(game_id, 0) + 1

    def _leave(self, game_id: str) -> None:
        n = self._inflight.get(game_id, 0) - 1
        if n > 0:
            self._inflight[game_id] = n
            return
        self._inflight.pop(game_id, None)
        if game_id not in self._cache:
            self._announced.pop(game_id, None)

    async def latest(self, game_id: str) -> tuple[GameState, float]:
        """The latest state of a game and the ``ts`` of its last event, for reads: from
        memory when it is known to be the latest (the append feed was live from the moment
        it was read or written until now, and no newer version was announced), else as
        :meth:`load`. A read from memory trails another process's append by the time its
        notification takes to arrive (well under a millisecond on one host), or by at most
        three feed ping intervals (1.5 s) when the feed's connection dies silently, and a
        cached state is read from the store again at least every :attr:`trust_seconds`
        (1 s), which bounds what a writer that does not announce its appends (a process
        of a release before the feed, a key deleted by hand) can hide; commands never rely
        on it (they append with ``expected_version``).

        Raises:
            GameNotFound: the game has no events.
        """
        feed = self._feed
        cached = self._cache.get(game_id)
        trusted = self._trusted.get(game_id)
        if (cached is not None and feed is not None and feed.live and trusted is not None
                and trusted[0] == feed.epoch
                and time.monotonic() - trusted[1] < self.trust_seconds
                and not self._maybe_expired(cached)):
            self._cache.move_to_end(game_id)
            self.feed_reads += 1
            metrics.VIEW_READS_MEMORY.inc()
            return cached
        metrics.VIEW_READS_STORE.inc()
        return await self.load(game_id)

    def _maybe_expired(self, cached: tuple[GameState, float]) -> bool:
        """True when the store may have expired this idle game (``idle_ttl``)."""
        idle = self.store.idle_ttl
        return bool(idle) and cached[0].phase != GAME_OVER and time.time() - cached[1] >= idle

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
        if cached is not None and self._maybe_expired(cached):
            # the store may have expired this idle game: do not serve it from memory
            self.forget(game_id)
            cached = None
        if cached is not None and not fresh:
            self._cache.move_to_end(game_id)
            return cached
        epoch = self.epoch()  # before the reads: a notification after them is heard
        self._enter(game_id)
        try:
            new: Sequence[StoredEvent] = ()
            if cached is not None:
                # read from the cached version itself: its event must still be in the store,
                # with the same ts, or the store went back in time (a failover to a replica
                # that lagged, an append-only file that lost its last second) and this cache
                # holds versions that no longer exist
                base: GameState | None = cached[0]
                ts = cached[1]
                assert base is not None
                got = await self.store.read(game_id, base.version - 1)
                if got and got[0].version == base.version and got[0].ts == ts:
                    new = got[1:]
                else:
                    self.forget(game_id, f"its cached version {base.version} is no longer in "
                                "the store (the store went back in time)")
                    cached = None
            if cached is None:  # not cached (a restart, an evicted game): the newest snapshot
                base, ts = await self._snapshot_at(game_id, _LATEST), 0.0
                new = await self.store.read(game_id, base.version if base else 0)
            state = await self._evolve(game_id, base, new)
            if state is None:
                raise GameNotFound(f"no game {game_id!r}")
            if new:
                ts = new[-1].ts
            elif cached is None:  # the snapshot is the latest state: its last event's ts
                last = await self.store.read(game_id, state.version - 1, state.version)
                ts = last[-1].ts if last else 0.0
            self.remember(game_id, state, ts, epoch=epoch)
        finally:
            self._leave(game_id)
        return state, ts

    def forget(self, game_id: str, why: str = "") -> None:
        """Drop a game's cached state and meta (the next call reads both from the store);
        ``why``: logged as a warning when given (a cache that disagreed with the store)."""
        if why and game_id in self._cache:
            log.warning("game %s: cached state dropped: %s", game_id, why)
        self._cache.pop(game_id, None)
        self._meta.pop(game_id, None)
        self._trusted.pop(game_id, None)

    def remember(self, game_id: str, state: GameState, ts: float, *,
                 epoch: int | None = None) -> None:
        """Cache ``state`` as the game's latest (unless a newer one is cached).

        Args:
            epoch: :meth:`epoch` taken before the store call that showed ``state`` to be
                the latest (a read, or this process's own append); while the feed stays in
                that epoch, :meth:`latest` answers from memory. ``None``: not known to be
                the latest (reads ask the store).
        """
        cached = self._cache.get(game_id)
        if cached is not None and cached[0].version > state.version:
            return
        if cached is None or cached[0].version < state.version:
            self._trusted.pop(game_id, None)
        feed = self._feed
        # trusted only if every announcement since the store call was kept: the game was
        # cached or had the call in flight all along (an evicted game is not trusted)
        if epoch is not None and feed is not None and feed.live and epoch == feed.epoch \
                and (cached is not None or game_id in self._inflight) \
                and self._announced.get(game_id, 0) <= state.version:
            self._trusted[game_id] = (epoch, time.monotonic())
        self._cache[game_id] = (state, ts)
        self._cache.move_to_end(game_id)
        while len(self._cache) > self._cache_size:
            old, _ = self._cache.popitem(last=False)
            self._meta.pop(old, None)
            self._trusted.pop(old, None)
            if old not in self._inflight:
                self._announced.pop(old, None)

    async def state_at(self, game_id: str, version: int) -> GameState:
        """The state after the first ``version`` events (``version`` >= 1; a larger one
        gives the latest state).

        Starts from the newest snapshot at or before ``version`` and evolves the events
        after it (about ``snapshot_every`` at most once the game has snapshots; the whole
        stream for a game without any, in a worker thread, storing the snapshots it passes
        so that the next call is short).

        Raises:
            GameNotFound: the game has no events.
        """
        base = await self._snapshot_at(game_id, version)
        new = await self.store.read(game_id, base.version if base else 0, version)
        state = await self._evolve(game_id, base, new)
        if state is None:
            raise GameNotFound(f"no game {game_id!r}")
        return state

    async def maybe_snapshot(self, game_id: str, state: GameState) -> bool:
        """Store ``state`` as a snapshot of the game if its version crossed a multiple of
        ``snapshot_every`` since the last snapshot this repository knows of (call it after
        each append, with the state after it). A failed write is logged (warning) and
        ignored: snapshots are a cache, the command stands.

        Returns:
            True when a snapshot was written.
        """
        n = self.snapshot_every
        last = self._snapshotted.get(game_id, 0)
        if state.version // n <= last // n:
            return False
        return await self._put_snapshot(game_id, state)

    async def _put_snapshot(self, game_id: str, state: GameState) -> bool:
        """Write one snapshot; a failure is logged and reported as False, never raised."""
        try:
            await self.store.put_snapshot(game_id, state.version, state_to_dict(state))
        except Exception as exc:  # noqa: BLE001 - a cache write must not fail the caller
            log.warning("snapshot of game %s at version %d not stored: %s: %s", game_id,
                        state.version, type(exc).__name__, exc)
            return False
        self._note_snapshot(game_id, state.version)
        return True

    def _note_snapshot(self, game_id: str, version: int) -> None:
        """Remember the game's newest snapshot version (LRU, ``cache_size`` games)."""
        if version >= self._snapshotted.get(game_id, 0):
            self._snapshotted[game_id] = version
        self._snapshotted.move_to_end(game_id)
        while len(self._snapshotted) > self._cache_size:
            self._snapshotted.popitem(last=False)

    async def _snapshot_at(self, game_id: str, version: int) -> GameState | None:
        """The state of the newest readable snapshot at or before ``version``, or None (no
        snapshot, or one this release cannot read: text that is not JSON, another schema
        version, a malformed state; logged, and the caller replays the events, which stay
        the truth: a snapshot is a cache and never fails a call)."""
        try:
            found = await self.store.get_snapshot(game_id, version)
        except ValueError as exc:  # the stored text is not JSON (JSONDecodeError)
            log.warning("snapshot of game %s at or before version %d ignored: unreadable: "
                        "%s: %s", game_id, version, type(exc).__name__, exc)
            return None
        if found is None:
            return None
        at, data = found
        try:
            state = state_from_dict(data)
        except Exception as exc:  # noqa: BLE001 - an unreadable cache entry: replay instead
            log.warning("snapshot of game %s at version %d ignored: %s: %s", game_id, at,
                        type(exc).__name__, exc)
            return None
        if state.version != at:
            log.warning("snapshot of game %s stored at version %d holds version %d; ignored",
                        game_id, at, state.version)
            return None
        self._note_snapshot(game_id, at)
        return state

    async def _evolve(self, game_id: str, base: GameState | None,
                      stored: Sequence[StoredEvent]) -> GameState | None:
        """:func:`fold` ``stored`` from ``base``: on the event loop for at most
        :data:`EVOLVE_INLINE` events, else in a worker thread; then store the snapshots at
        the multiples of ``snapshot_every`` passed on the way (only where the snapshots
        have a gap: a game older than snapshots, or a command's events that crossed a
        multiple; a put at a version already kept replaces it)."""
        n = self.snapshot_every
        if len(stored) > EVOLVE_INLINE:
            state, passed = await asyncio.to_thread(fold, base, stored, self.mapper, n)
        else:
            state, passed = fold(base, stored, self.mapper, n)
        known = self._snapshotted.get(game_id, 0)
        for s in passed:  # a gap in the snapshots (a game older than them): fill it
            if s.version != known and not await self._put_snapshot(game_id, s):
                break
        return state

    async def append(self, game_id: str, events: Sequence[Event], expected_version: int, *,
                     request_id: str | None = None, request_hash: str | None = None,
                     response: dict[str, Any] | None = None,
                     summary: dict[str, Any] | None = None) -> AppendResult:
        """:meth:`EventRepository.append`, timing the append and counting the events
        appended (metrics). An append that starts or ends a game carries its results-feed
        summary (:func:`rummy_grpc.results.summarize`), unless ``summary`` is given.

        Raises:
            VersionConflict, RequestIdReused: as ``EventStore.append``.
            GameLimitReached: the append would take the game past :attr:`max_events`.
        """
        if expected_version + len(events) > self.max_events:
            raise GameLimitReached(game_id, self.max_events)
        if summary is None:
            summary = await self._summary(game_id, events, expected_version)
        t0 = time.perf_counter()
        self._enter(game_id)  # announcements during the append are kept for remember()
        try:
            result = await super().append(game_id, events, expected_version,
                                          request_id=request_id, request_hash=request_hash,
                                          response=response, summary=summary)
        except VersionConflict as exc:
            cached = self._cache.get(game_id)
            if cached is not None and exc.actual < cached[0].version:
                # the store is behind what this process saw appended: it went back in time
                self.forget(game_id, f"the store is at version {exc.actual}, the cache at "
                            f"{cached[0].version} (the store went back in time)")
            raise
        finally:
            self._leave(game_id)
        metrics.EVENT_APPEND_SECONDS.observe(time.perf_counter() - t0)
        if not result.duplicate:
            for se in result.events:
                metrics.child(metrics.EVENTS_APPENDED_TOTAL, se.type).inc()
            if summary is not None:
                metrics.child(metrics.RESULTS_APPENDED_TOTAL, summary["kind"]).inc()
        return result

    async def _summary(self, game_id: str, events: Sequence[Event],
                       expected_version: int) -> dict[str, Any] | None:
        """The results-feed summary of an append (:func:`rummy_grpc.results.summarize`):
        only appends that start or end a game have one; the meta names the controllers."""
        if not any(isinstance(e, (GameStarted, GameEnded)) for e in events):
            return None
        try:
            meta: dict[str, Any] | None = await self.meta(game_id)
        except GameNotFound:  # a game without meta (a test's direct append)
            meta = None
        control = None  # who played each seat at the end (§13), for an ending append
        if meta is not None and any(isinstance(e, GameEnded) for e in events):
            cached = self._cache.get(game_id)
            before = cached[0] if cached is not None else None
            if before is None or before.version != expected_version:
                try:
                    before = (await self.load(game_id))[0]
                except GameNotFound:  # a game without events (a test's direct append)
                    before = None
            if before is not None and before.version == expected_version:
                after = evolve_all(events, before)
                control = after.control if after is not None else None
        return summarize(game_id, events, expected_version, meta, control)


__all__ = ["EVOLVE_INLINE", "SNAPSHOT_EVERY", "TRUST_SECONDS", "GameRepository", "fold"]
