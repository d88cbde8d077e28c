"""The event-store ports: values, errors and small protocols, one per duty.

The store knows nothing about Manipulation Rummy. It keeps, per game, an append-only stream of
JSON-serialisable event dicts (``rummy.events.to_dict`` output: ``{"type": ..., "v": ..., ...}``)
numbered 1, 2, 3, ... and a little JSON metadata, plus an index of games.

Its duties are split into small protocols (in the manner of ``eventsourcing``'s recorders),
so that a caller names what it needs and a new backend can be read one duty at a time:

=====================  ====================================================  =======
protocol               members                                               count
=====================  ====================================================  =======
:class:`EventLog`      append, read, version, exists                         4
:class:`RequestLog`    get_request, put_if_absent                            2
:class:`Subscriptions` subscribe, subscriber_count, append_feed              3
:class:`DueSchedule`   schedule, unschedule, claim_due, due                  4
:class:`GameIndex`     put_meta, get_meta, list_games, set_active            4
:class:`SnapshotLog`   put_snapshot, get_snapshot                            2
:class:`Lifecycle`     idle_ttl, ping, check_access, close                   4
=====================  ====================================================  =======

The results feed, one store-wide stream of game summaries read by consumer groups, is a
protocol of its own (:class:`rummy_store.results.ResultsFeed`, 5 members, and the
``summary`` argument of :meth:`EventLog.append`); both backends implement it.

:class:`EventStore` is their union (23 members) for callers that need all of them. Three
backends implement every one (:class:`rummy_store.memory.MemoryEventStore`, and
:class:`rummy_store.redis_store.RedisEventStore` on a single Redis or a Redis Cluster), and
:func:`rummy_store.factory.open_store` builds the one a URL names. The contract suite
(:mod:`rummy_store.contract`) tests each protocol on each backend.

A new backend touches two files: its own module, a class with the 23 members (argument
checks and encodings in :mod:`rummy_store.checks`, values and errors in
:mod:`rummy_store.values`; :class:`rummy_store.memory.MemoryEventStore` is the shortest
example), and :mod:`rummy_store.factory` (its URL scheme). Then the contract suite's
fixtures for it (see :mod:`rummy_store.contract`) and nothing else: every command that
takes a store URL goes through the factory.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from rummy_store.checks import (
    check_claim,
    check_delay,
    check_game_id,
    check_name,
    check_request_id,
    check_version,
    dumps,
    request_digest,
    serialise_events,
    serialise_snapshot,
    utf8,
)
from rummy_store.values import (
    AppendInterrupted,
    AppendResult,
    GameUnlisted,
    RequestIdReused,
    StoreAccessDenied,
    StoredEvent,
    StoreError,
    StreamRewound,
    VersionConflict,
)

__all__ = [
    "AppendInterrupted",
    "AppendNotices",
    "AppendResult",
    "DueSchedule",
    "EventLog",
    "EventStore",
    "GameIndex",
    "GameUnlisted",
    "Lifecycle",
    "RequestIdReused",
    "RequestLog",
    "SnapshotLog",
    "StoreAccessDenied",
    "StoreError",
    "StoredEvent",
    "StreamRewound",
    "Subscriptions",
    "VersionConflict",
    "check_claim",
    "check_delay",
    "check_game_id",
    "check_name",
    "check_request_id",
    "check_version",
    "dumps",
    "request_digest",
    "serialise_events",
    "serialise_snapshot",
    "utf8",
]


class AppendNotices(Protocol):
    """What :meth:`Subscriptions.append_feed` returns: a live feed of the store's appends
    (:class:`rummy_store.feed.AppendFeed` on a single Redis)."""

    @property
    def epoch(self) -> int:
        """Incremented each time the feed (re)subscribes: what was known in an older epoch
        may have missed notifications (0: never subscribed)."""
        ...

    @property
    def live(self) -> bool:
        """True while the feed is subscribed and has heard from the store recently."""
        ...

    def discard(self, listener: Callable[[str, int], None]) -> None:
        """Stop calling ``listener`` (no-op when it is not registered)."""
        ...


@runtime_checkable
class EventLog(Protocol):
    """The games' append-only, versioned event streams (docs/architecture.md).

    A ``game_id`` is a non-empty string without ``{``, ``}`` or whitespace; any other raises
    ``ValueError``.
    """

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
        """Atomically append ``events`` as versions ``expected_version + 1 ...``.

        With ``summary`` (a JSON-serialisable dict), the results feed
        (:mod:`rummy_store.results`) gets it in the same atomic step (on a Redis Cluster,
        in the game's outbox, relayed right after); a duplicate appends nothing.

        In one atomic step: if ``request_id`` was already recorded for this game, return the
        original result (``duplicate=True``, nothing appended); else check that the stream is
        at ``expected_version``; append; record ``request_id`` with ``request_hash`` and the
        caller's ``response`` blob. An empty ``events`` with a ``request_id`` records the
        request only (after the version check). The first append to a game (version 1) also
        enters it in the game index as active.

        Raises:
            VersionConflict: the stream's version is not ``expected_version``.
            RequestIdReused: ``request_id`` was applied before with another ``request_hash``
                (``None`` counts as a hash of its own).
            ValueError: an event has no string ``"type"``; a bad game id or request id;
                ``expected_version < 0``.
            TypeError: an event is not a dict; an event or the response is not
                JSON-serialisable.
            AppendInterrupted: the store failed after it may have written (retry with the
                same ``request_id``).
        """
        ...

    async def read(
        self, game_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``after_version < version <= to_version`` (all if ``to_version`` is
        None), in version order; ``[]`` for an unknown game."""
        ...

    async def version(self, game_id: str) -> int:
        """The stream's version (its number of events); 0 for an unknown game."""
        ...

    async def exists(self, game_id: str) -> bool:
        """True when at least one event was appended to the game."""
        ...


@runtime_checkable
class RequestLog(Protocol):
    """Request records: what an append with a request id did, and idempotency windows
    of names (``CreateGame`` request ids).
    """

    async def get_request(
        self, game_id: str, request_id: str, request_hash: str | None = None
    ) -> AppendResult | None:
        """The original result of ``request_id`` if an append with it was applied to this
        game (``duplicate=True``, its events and response), else ``None``. Reads only.

        Raises:
            RequestIdReused: the request id was applied with another ``request_hash``.
            ValueError: a bad game id or request id.
        """
        ...

    async def put_if_absent(self, name: str, value: dict[str, Any],
                            ttl: float) -> dict[str, Any]:
        """Store the JSON dict ``value`` under ``name`` for ``ttl`` seconds unless a value is
        stored there already; return the value stored (``value`` itself, or the earlier
        one). Atomic: of concurrent callers exactly one value wins. ``CreateGame`` request
        ids use it (an idempotency window of ``ttl``).

        Raises:
            ValueError: an empty or whitespace-containing ``name``; ``ttl`` not > 0.
            TypeError: ``value`` is not a JSON-serialisable dict.
        """
        ...


@runtime_checkable
class Subscriptions(Protocol):
    """Live reading: a game's events as they are appended, and a feed of every append.
    """

    def subscribe(
        self, game_id: str, after_version: int = 0, *, block_ms: int = 1000
    ) -> AsyncGenerator[StoredEvent, None]:
        """Every event after ``after_version``, in order and without gaps, then each new one
        as it is appended; never ends by itself (cancel the consuming task or ``aclose()``).
        ``block_ms`` is how long one blocking wait lasts before it is renewed (milliseconds);
        a store whose subscribers share one reader may ignore it. A subscriber counts in
        :meth:`subscriber_count` (at the latest) once it has delivered its catch-up, and no
        longer once it is cancelled or closed."""
        ...

    def subscriber_count(self) -> int:
        """The live subscriptions of this store object, over all games (tests, metrics)."""
        ...

    def append_feed(self, listener: Callable[[str, int], None]) -> AppendNotices | None:
        """Call ``listener(game_id, version)`` for every append to the store by any process
        from now on, on the running loop (a listener must not block or raise), and return
        the feed (:class:`AppendNotices`; ``discard(listener)`` stops the calls,
        :meth:`Lifecycle.close` stops the feed). ``None`` when the store has no such feed (the
        in-memory store, a Redis Cluster): a reader that caches states then asks the store
        on every read."""
        ...


@runtime_checkable
class DueSchedule(Protocol):
    """When the service must act on a game (a bot's turn, a turn deadline), shared by
    every replica (store clock).
    """

    async def schedule(self, game_id: str, delay: float, *, only_earlier: bool = False) -> None:
        """Record that the service must act on the game ``delay`` seconds from now (store
        clock): a bot's turn (due at once) or a turn deadline. One due time per game; with
        ``only_earlier`` an existing earlier due time is kept. Every replica polls the due
        games (:meth:`claim_due`), so a game goes on when the replica that served it dies.

        Raises:
            ValueError: a bad game id, or a negative or non-finite ``delay``.
        """
        ...

    async def unschedule(self, game_id: str) -> None:
        """Forget the game's due time (nothing for the service to do on it)."""
        ...

    async def claim_due(self, lease: float, *, limit: int = 64,
                        game_id: str | None = None) -> list[str]:
        """Atomically take up to ``limit`` games whose due time has come (store clock),
        oldest first, and move each one's due time ``lease`` seconds ahead, so that another
        replica claims it again only if this one does not act (or reschedule) in time. With
        ``game_id``, claim that game only, if it is due. Returns the claimed ids.

        Raises:
            ValueError: ``lease`` not > 0, ``limit`` not >= 1, a bad ``game_id``.
        """
        ...

    async def due(self, game_id: str) -> float | None:
        """The game's due time in epoch seconds (store clock), or None."""
        ...


@runtime_checkable
class GameIndex(Protocol):
    """Each game's small JSON metadata and the index of games (active or finished).
    """

    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        """Replace the game's small JSON metadata (seat kinds, token hashes, ...). It does not
        enter the game in the index: the first append does (meta without events is no game).
        With an idle expiry, meta expires with the game's other keys. ``TypeError`` if
        ``meta`` is not a JSON-serialisable dict."""
        ...

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        """The metadata last put, or None."""
        ...

    async def list_games(self, *, limit: int = 100, active_only: bool = False) -> list[str]:
        """Up to ``limit`` game ids of the index, newest first (by time of entry in the
        index, ties by id descending); only the active ones if ``active_only``. Games that
        expired while idle are skipped (and leave the index)."""
        ...

    async def set_active(self, game_id: str, active: bool) -> bool:
        """Mark a game active or not (the service clears it when the game ends); a game not
        yet in the index is entered in it. Marking it not active keeps the game for good
        (no idle expiry) and its request records for the store's request window only.

        Returns:
            Whether the game was listed as active before the call (so that of two replicas
            finishing one game, or a game refused again and again at its cap of events,
            exactly one call sees ``True``).
        """
        ...


@runtime_checkable
class SnapshotLog(Protocol):
    """Snapshots of a game's state at a stream version: a cache of the stream.
    """

    async def put_snapshot(self, game_id: str, version: int, data: dict[str, Any]) -> None:
        """Keep ``data`` (a JSON-serialisable dict, e.g. ``rummy.snapshot.state_to_dict``
        output) as the game's snapshot at stream ``version``, replacing one kept at that
        version. Snapshots are a cache of the stream: the store does not check ``data``
        against the events, and keeps every version put.

        Raises:
            ValueError: a bad game id; ``version`` not an integer >= 0.
            TypeError: ``data`` is not a dict or not JSON-serialisable.
        """
        ...

    async def get_snapshot(self, game_id: str,
                           max_version: int) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot at a version ``<= max_version`` as ``(version, data)``
        (``data`` JSON round-tripped), or None when there is none (or no such game).

        Raises:
            ValueError: a bad game id; ``max_version`` not an integer >= 0.
        """
        ...


@runtime_checkable
class Lifecycle(Protocol):
    """Connection and limits: expiry, health, access, closing.
    """

    @property
    def idle_ttl(self) -> float:
        """Seconds after which an active game with no append expires with all its data
        (0: never). Readers that cache a game's state drop it after this long."""
        ...

    async def ping(self) -> None:
        """Return once the store answers; raise (a connection error, a timeout) when it does
        not. Health checks call it."""
        ...

    async def now(self) -> float:
        """The store's clock, in epoch seconds: the clock that stamps events (``ts``) and
        due times, so that deadlines computed from them are compared on one clock (Redis
        ``TIME``; this process's clock for the memory store)."""
        ...

    async def check_access(self) -> None:
        """Check that the store's user may run every command the store sends (appends,
        reads, subscriptions, the append feed, schedules, the index, snapshots), without
        writing anything; a service calls it at start-up so that a missing permission stops
        it there, named, rather than failing a command half-way.

        Raises:
            StoreAccessDenied: a command is refused; it names the first one.
            A connection error: the store does not answer.
        """
        ...

    async def close(self) -> None:
        """Release connections. The store is unusable afterwards."""
        ...


@runtime_checkable
class EventStore(EventLog, RequestLog, Subscriptions, DueSchedule, GameIndex, SnapshotLog,
                 Lifecycle, Protocol):
    """Every duty of the event store: the union of :class:`EventLog`, :class:`RequestLog`,
    :class:`Subscriptions`, :class:`DueSchedule`, :class:`GameIndex`, :class:`SnapshotLog`
    and :class:`Lifecycle` (23 members), for callers that need all of them (the game
    service). All methods are coroutines except ``subscribe`` (an async iterator),
    ``subscriber_count`` and ``append_feed``.
    """
