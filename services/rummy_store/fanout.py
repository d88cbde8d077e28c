"""One reader per store, fanning out: :class:`StreamHub`.

Before this module each :meth:`RedisEventStore.subscribe <rummy_store.redis_store.RedisEventStore
.subscribe>` did its own blocking ``XREAD ... BLOCK`` and held one pool connection while it
waited: about 100 open spectator streams exhausted the pool and took every other call down,
and a cancellation swallowed by redis-py inside a blocking read left handlers polling forever.

Now a store owns one :class:`StreamHub`. The hub runs **one** background task that does a
multi-key ``XREAD BLOCK`` over the streams of every game with at least one live subscriber, on
a dedicated single connection (its own one-connection pool, named ``rummy-hub:<prefix>`` in
``CLIENT LIST``), and puts each new event into every subscriber's bounded
:class:`asyncio.Queue`. Subscribers never touch Redis while they wait, so a cancelled or closed
subscriber leaves at once (:meth:`Subscription.close`) and nothing can swallow its
cancellation.

- **Lazy start, clean stop.** The task starts with the first subscriber, idles without any
  Redis traffic while nobody subscribes, and :meth:`StreamHub.close` (called by the store's
  ``close()``) cancels it and closes its connection.
- **New games join quickly.** Registering a game the hub does not read yet sends
  ``CLIENT UNBLOCK <hub connection id>`` (a timeout-style unblock: the blocked ``XREAD``
  returns nothing), so the next read includes the game at once; should that race with the
  start of a read, the read still ends within ``block_ms`` (default 250 ms).
- **This process's own appends go straight to its subscribers.** The store calls
  :meth:`StreamHub.appending` before its append script runs and
  :meth:`StreamHub.append_done` with the events it wrote: when they follow the hub's
  position on the key exactly, they are queued at once (no wait for the read that would
  bring them, no decoding) and the cursor moves past them; a read that returns while the
  append is in flight leaves that key's entries to it. The blocked ``XREAD`` still
  wakes for them (Redis wakes it on any ``XADD`` to a key it watches), so after a read that
  brought nothing new the next one waits :data:`PACE_SECONDS` (or until a new key joins),
  gathering the wake-ups of one busy spell into one read: events appended by *another*
  process reach this one's subscribers up to that much later while this one is busy
  appending to the same watched streams, never later than that.
- **Redis errors.** A failed read is logged, the connection dropped, and the read retried after
  an exponential back-off with full jitter (0.05 s doubling up to 5 s); subscribers just wait,
  and the hub resumes every game from the last version it delivered, so nothing is lost.
  Before reading on it checks that no stream went back in time meanwhile (a Redis restarted
  from an older file, a failover to a replica that lagged: :func:`rewind_check`); the
  subscribers of one that did are told, and the store's ``subscribe`` ends those that had
  delivered lost events with :class:`~rummy_store.base.StreamRewound`.
- **Slow consumers.** A subscriber's queue holds ``queue_size`` events; past that the hub drops
  the event for that subscriber and sets :attr:`Subscription.overflowed`; the store's
  ``subscribe`` then refills from ``XRANGE`` (it also fills any gap it sees and drops
  duplicates by version), so its order-without-gaps contract holds.

**Redis Cluster:** a multi-key ``XREAD`` needs every key in one hash slot (even keys of
different slots on the same node are refused with ``CROSSSLOT``), and each game has its own
slot, so this hub serves a single Redis only. On a cluster the store uses
:class:`rummy_store.cluster_fanout.ClusterStreamHub` instead (sharded pub/sub wake-ups, one
connection per node); both share :class:`Subscription` and :func:`deliver`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import redis.asyncio as aioredis

from rummy_store.base import StoredEvent

__all__ = ["BLOCK_MS", "PACE_SECONDS", "QUEUE_SIZE", "Hub", "StreamHub", "Subscription",
           "deliver", "deliver_stored", "holds", "rewind_check"]

log = logging.getLogger("rummy_store.fanout")

BLOCK_MS = 250
"""Default longest wait of one hub ``XREAD`` (milliseconds)."""
PACE_SECONDS = 0.005
"""Default wait before the next ``XREAD`` after one that brought only events already
delivered (this process's own appends, :meth:`StreamHub.append_done`)."""
QUEUE_SIZE = 1024
"""Default capacity of a subscriber's queue (events)."""
_PAGE = 1000  # entries per stream per XREAD
_BACKOFF_FIRST, _BACKOFF_MAX = 0.05, 5.0  # seconds


class Hub(Protocol):
    """What a :class:`Subscription` needs of its hub (:class:`StreamHub`, or
    :class:`rummy_store.cluster_fanout.ClusterStreamHub` on a Redis Cluster)."""

    def unregister(self, sub: Subscription) -> None: ...


class Subscription:
    """One subscriber's registration with a :class:`StreamHub`.

    Attributes:
        key: the stream key (``P:{G}:events``).
        queue: the events the hub read for this key, in version order (bounded).
        overflowed: set by the hub when it dropped an event because :attr:`queue` was full;
            the consumer clears it and refills from the stream.
    """

    __slots__ = ("_hub", "key", "overflowed", "queue", "rewound")

    def __init__(self, hub: Hub, key: str, queue_size: int) -> None:
        self._hub = hub
        self.key = key
        #: events in version order; ``None`` is a wake-up (look at :attr:`rewound`)
        self.queue: asyncio.Queue[StoredEvent | None] = asyncio.Queue(maxsize=queue_size)
        self.overflowed = False
        self.rewound: int | None = None
        """Set by the hub to the store's version when it found, after a reconnection, that
        the stream went back in time (its last delivered version no longer in the store
        as it was): what was queued may belong to the lost history."""

    def close(self) -> None:
        """Unregister at once (idempotent); the hub stops reading the key once no
        subscriber of it is left."""
        self._hub.unregister(self)


class StreamHub:
    """The one reader of a store's streams, fanning out to in-process subscribers.

    Args:
        client: the store's ``redis.asyncio.Redis``; the hub opens its own one-connection
            pool with the same connection settings (its socket timeout raised by ``block_ms``)
            and uses ``client`` only for ``CLIENT UNBLOCK``.
        decode: turns one raw stream entry ``(id, fields)`` into a :class:`StoredEvent`.
        name: the hub connection's ``CLIENT SETNAME`` (spaces become ``_``).
        block_ms: longest wait of one ``XREAD`` in milliseconds (> 0).
        queue_size: capacity of each subscriber's queue in events (> 0).
        pace: seconds the next ``XREAD`` waits after one that brought nothing new (>= 0;
            default :data:`PACE_SECONDS`).

    Use it from one event loop. Raises ``ValueError`` for a bad ``block_ms`` /
    ``queue_size`` / ``pace``.
    """

    def __init__(self, client: aioredis.Redis, decode: Callable[[Any], StoredEvent], *,
                 name: str = "rummy-hub", block_ms: int = BLOCK_MS,
                 queue_size: int = QUEUE_SIZE, pace: float = PACE_SECONDS) -> None:
        if block_ms <= 0 or queue_size <= 0 or not pace >= 0:
            raise ValueError(f"block_ms and queue_size must be > 0 and pace >= 0, got "
                             f"{block_ms}, {queue_size}, {pace}")
        self._pace = pace
        self._client = client
        self._decode = decode
        self._name = "".join("_" if c.isspace() else c for c in name)
        self._block_ms = block_ms
        self._queue_size = queue_size
        self._subs: dict[str, set[Subscription]] = {}
        self._cursors: dict[str, int] = {}  # key -> last version read by the hub
        self._stamps: dict[str, float] = {}  # key -> ts of the event at its cursor
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._reader: aioredis.Redis | None = None
        self._reader_id: int | None = None
        self._blocking = False
        self._unblocking: asyncio.Task[None] | None = None
        self._closed = False
        self.reads = 0
        """Number of ``XREAD`` calls made (tests, diagnostics)."""
        self.local = 0
        """Events queued by :meth:`append_done` (tests, diagnostics)."""
        self._appending: dict[str, int] = {}  # key -> appends of this process in flight
        self._held: set[str] = set()  # keys whose new entries a read left to an append

    # -------------------------------------------------------------- subscribers

    def subscriber_count(self) -> int:
        """Live subscriptions (over all games)."""
        return sum(len(s) for s in self._subs.values())

    def stream_count(self) -> int:
        """Streams (games) the hub currently reads."""
        return len(self._cursors)

    @property
    def running(self) -> bool:
        """True while the reader task is alive."""
        return self._task is not None and not self._task.done()

    def register(self, key: str, after_version: int) -> Subscription:
        """Subscribe to ``key``: every event with a version above the hub's position on the
        key is queued (for a key new to the hub, above ``after_version``). Starts the reader
        task if needed and wakes it when the key is new.

        Raises:
            RuntimeError: the hub is closed.
        """
        if self._closed:
            raise RuntimeError("the event store is closed")
        sub = Subscription(self, key, self._queue_size)
        subs = self._subs.setdefault(key, set())
        subs.add(sub)
        if key not in self._cursors:
            self._cursors[key] = after_version
            self._changed.set()
            self._wake()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)
        return sub

    def appending(self, key: str) -> None:
        """This process is about to append to ``key``: until :meth:`append_done`, the hub's
        reads leave the key's new entries to the append (they may be its own), so that its
        reply, not the read, delivers them. Pair each call with one :meth:`append_done`."""
        self._appending[key] = self._appending.get(key, 0) + 1

    def append_done(self, key: str, events: Sequence[StoredEvent] = ()) -> None:
        """The append announced by :meth:`appending` ended; ``events``: what it appended
        (consecutive versions, oldest first, as the append script stored them; empty when it
        appended nothing or failed). They are queued for the key's subscribers now if they
        follow the hub's position on the key exactly, and the position moves past them;
        otherwise (events another process appended in between, a read that brought them
        first, nothing appended) a read left waiting for this append is started at once."""
        left = self._appending.get(key, 0) - 1
        if left > 0:
            self._appending[key] = left
        else:
            self._appending.pop(key, None)
        held = key in self._held
        self._held.discard(key)
        cursor = self._cursors.get(key)
        if cursor is not None and events and events[0].version == cursor + 1:
            # another server's entries the held read also had wait for the next read
            # (PACE_SECONDS at most): waking it for each append would read once per append
            self.local += len(events)
            deliver_stored(key, events, self._subs, self._cursors, self._stamps)
        elif held:
            self._changed.set()

    def unregister(self, sub: Subscription) -> None:
        """Remove ``sub`` (no-op if it is not registered); a key with no subscriber left is
        no longer read."""
        subs = self._subs.get(sub.key)
        if subs is None or sub not in subs:
            return
        subs.discard(sub)
        if not subs:
            del self._subs[sub.key]
            self._cursors.pop(sub.key, None)
            self._stamps.pop(sub.key, None)
            self._held.discard(sub.key)

    # -------------------------------------------------------------- lifecycle

    async def close(self) -> None:
        """Stop the reader task and close its connection; subscribers get nothing more.
        Idempotent."""
        self._closed = True
        self._changed.set()
        for task in (self._task, self._unblocking):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, timeout=2)
        self._task = self._unblocking = None
        await self._drop_reader()

    async def _drop_reader(self) -> None:
        reader, self._reader, self._reader_id = self._reader, None, None
        if reader is not None:
            with contextlib.suppress(Exception):
                await reader.aclose()

    def _new_reader(self) -> aioredis.Redis:
        pool = self._client.connection_pool
        kwargs = dict(pool.connection_kwargs)
        kwargs["client_name"] = self._name
        # a blocking read must not hit the socket timeout (redis-py 8 defaults to 5 s), but
        # a dead connection must still be noticed: block time plus the usual timeout
        usual = kwargs.get("socket_timeout") or 5.0
        kwargs["socket_timeout"] = self._block_ms / 1000 + usual
        one = aioredis.ConnectionPool(connection_class=pool.connection_class,
                                      max_connections=1, **kwargs)
        return aioredis.Redis(connection_pool=one)

    def _wake(self) -> None:
        """Cut the current blocking read short (``CLIENT UNBLOCK``), once at a time."""
        if (not self._blocking or self._reader_id is None
                or (self._unblocking is not None and not self._unblocking.done())):
            return
        self._unblocking = asyncio.get_running_loop().create_task(
            self._unblock(self._reader_id))

    async def _unblock(self, client_id: int) -> None:
        try:
            await self._client.client_unblock(client_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a late wake-up only costs block_ms
            log.debug("CLIENT UNBLOCK failed: %s", exc)

    # -------------------------------------------------------------- the reader

    async def _run(self) -> None:
        backoff = _BACKOFF_FIRST
        task = asyncio.current_task()
        recovering = False  # a read failed: check the cursors before reading on
        while not self._closed:
            if not self._cursors:
                self._changed.clear()
                await self._changed.wait()
                continue
            self._changed.clear()
            try:
                if self._reader is None:
                    self._reader = self._new_reader()
                    self._reader_id = int(await self._reader.client_id())
                if recovering:  # before the read: it may move cursors back
                    await rewind_check(self._reader, self._cursors, self._stamps, self._subs,
                                       self._decode)
                    recovering = False
                streams = {key: f"0-{version}" for key, version in self._cursors.items()}
                self._blocking = True
                try:
                    self.reads += 1
                    reply = await self._reader.xread(streams, count=_PAGE,  # type: ignore[arg-type]
                                                     block=self._block_ms)
                finally:
                    self._blocking = False
                    # redis-py can swallow a cancellation inside a blocking read
                    if task is not None and task.cancelling():
                        raise asyncio.CancelledError
                fresh = self._dispatch(reply) if reply else 0
                if reply and not fresh and self._pace:
                    # woken by appends already delivered (this process's own): gather the
                    # next ones into one read; a new key cuts the wait short
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), self._pace)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - survive any Redis failure
                # (or an undecodable entry: the cursor stays before it and the read is
                # retried, so subscribers wait rather than miss an event)
                delay = random.uniform(0, backoff)
                log.warning("event stream hub: XREAD over %d streams failed (%s: %s); "
                            "retrying in %.2f s", len(self._cursors), type(exc).__name__, exc,
                            delay)
                recovering = True
                await self._drop_reader()
                await asyncio.sleep(delay)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_FIRST

    def _dispatch(self, reply: Any) -> int:
        """Hand the entries of one ``XREAD`` reply (RESP2 or RESP3) to the subscribers;
        returns how many were new (past the cursors)."""
        batches: list[tuple[Any, Any]]
        if isinstance(reply, dict):  # RESP3: {key: [[entry, ...]]}
            batches = [(key, value[0]) for key, value in reply.items() if value]
        else:  # RESP2: [[key, [entry, ...]]]
            batches = [(key, entries) for key, entries in reply]
        fresh = 0
        for raw_key, entries in batches:
            key = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
            if key in self._appending and key not in self._held:
                self._held.add(key)  # left to the append in flight (append_done), once:
                continue  # appends that overlap without end must not starve the read
            self._held.discard(key)
            fresh += deliver(key, entries, self._subs, self._cursors, self._decode,
                             self._stamps)
        return fresh


async def holds(client: Any, key: str, version: int, ts: float | None,
                decode: Callable[[Any], StoredEvent]) -> bool:
    """True when stream ``key`` still has its event at ``version`` (with this ``ts``, when
    given): the check that tells a stream that went back in time. One ``XRANGE``."""
    entries = await client.xrange(key, min=f"0-{version}", max=f"0-{version}") or []
    return bool(entries) and (ts is None or decode(entries[0]).ts == ts)


async def rewind_check(client: Any, cursors: dict[str, int], stamps: dict[str, float],
                       subs: dict[str, set[Subscription]],
                       decode: Callable[[Any], StoredEvent]) -> list[str]:
    """After a reconnection, find the streams that went back in time (a Redis restarted from
    an older file, a failover to a replica that lagged): those whose entry at the hub's
    cursor is gone, or is another event (its ``ts`` differs from the one delivered:
    :func:`holds`). For each, set every subscriber's :attr:`Subscription.rewound` to the
    store's version, wake it (a ``None`` in its queue), and move the cursor back to that
    version, so that what is appended from now on is read. One ``XRANGE`` per stream with a
    cursor, and one ``XREVRANGE`` per stream that went back, once per reconnection; works on
    any client with those commands (a cluster client sends each to its node). Returns the
    keys found rewound.

    Raises:
        redis.exceptions.RedisError: the reads failed (the caller retries).
    """
    rewound = []
    for key, cursor in list(cursors.items()):
        if cursor <= 0 or await holds(client, key, cursor, stamps.get(key), decode):
            continue
        last = await client.xrevrange(key, count=1)
        top = decode(last[0]) if last else None
        if key not in cursors:  # every subscriber left meanwhile
            continue
        actual = top.version if top is not None else 0
        cursors[key] = actual
        if top is not None:
            stamps[key] = top.ts
        else:
            stamps.pop(key, None)
        log.warning("event stream hub: %s went back in time from version %d to %d; its "
                    "subscribers are told (StreamRewound)", key, cursor, actual)
        for sub in subs.get(key, ()):
            sub.rewound = actual
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)
        rewound.append(key)
    return rewound


def _entry_version(entry: Any) -> int | None:
    """The version in a raw entry's id (``0-<version>``), or None when it does not parse
    (left to ``decode``)."""
    entry_id = entry[0]
    try:
        return int((entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id))
                   .partition("-")[2])
    except (ValueError, TypeError, UnicodeDecodeError):
        return None


def deliver(key: str, entries: Iterable[Any], subs: dict[str, set[Subscription]],
            cursors: dict[str, int], decode: Callable[[Any], StoredEvent],
            stamps: dict[str, float] | None = None) -> int:
    """Queue the raw stream ``entries`` of ``key`` (in id order) for every subscriber of it:
    entries at or below the key's cursor are skipped (without decoding them), the cursor
    moves to the last one queued (and ``stamps[key]`` to its ``ts``, for
    :func:`rewind_check`); a full queue drops the event for that subscriber and sets its
    :attr:`Subscription.overflowed`. A key without cursor (every subscriber left) is
    ignored. Returns the number of entries queued. Raises whatever ``decode`` raises (the
    cursor stays before that entry)."""
    if key not in cursors:
        return 0
    fresh = 0
    for entry in entries:
        version = _entry_version(entry)
        if version is not None and version <= cursors[key]:
            continue
        event = decode(entry)
        if event.version <= cursors[key]:
            continue
        fresh += 1
        deliver_stored(key, (event,), subs, cursors, stamps)
    return fresh


def deliver_stored(key: str, events: Iterable[StoredEvent],
                   subs: dict[str, set[Subscription]], cursors: dict[str, int],
                   stamps: dict[str, float] | None = None) -> None:
    """Queue decoded ``events`` of ``key`` (past its cursor, in version order) for every
    subscriber of it and move the cursor (and ``stamps[key]``) to the last one; a full
    queue drops the event for that subscriber and sets its
    :attr:`Subscription.overflowed`."""
    targets = subs.get(key, set())
    for event in events:
        cursors[key] = event.version
        if stamps is not None:
            stamps[key] = event.ts
        for sub in targets:
            try:
                sub.queue.put_nowait(event)
            except asyncio.QueueFull:
                sub.overflowed = True
