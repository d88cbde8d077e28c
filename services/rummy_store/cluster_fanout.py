"""Live subscriptions on a Redis Cluster: :class:`ClusterStreamHub`.

The single-Redis :class:`~rummy_store.fanout.StreamHub` reads every subscribed game with one
multi-key ``XREAD BLOCK``. A cluster refuses that: a multi-key command needs all its keys in
one hash slot (``CROSSSLOT`` even when two slots live on the same node), and every game has
its own slot (``{game_id}`` hash tag). One blocking ``XREAD`` per game would hold one
connection per watched game again, the problem the hub exists to avoid. So on a cluster:

- **Wake-ups by sharded pub/sub.** The append script, on a cluster store, ends with
  ``SPUBLISH <stream key> <new version>``. A sharded channel lives on the node of its slot,
  so the message never crosses the cluster bus, and one connection may ``SSUBSCRIBE`` to
  channels of many slots (one command per channel). The hub keeps **one pub/sub connection
  per primary node** (``CLIENT SETNAME rummy-hub:<prefix>``), subscribed to the stream keys of
  the games it watches on that node.
- **Reads by XRANGE.** A wake-up (or a subscription being confirmed) marks the game dirty;
  the hub's poller reads the game's new entries with ``XRANGE <key> (cursor +`` through the
  cluster client (which follows ``MOVED``), each game's poll a task of its own, at most
  :data:`POLL_CONCURRENCY` at once per node (so a node that hangs holds up the games of its
  own shard only, until the client's socket timeout; the others are polled meanwhile), and
  queues them to the subscribers with :func:`rummy_store.fanout.deliver` (same cursors,
  overflow flag and back-pressure as the single-node hub).
- **At-most-once messages, at-least-once delivery.** Pub/sub can lose a message (a dropped
  connection, a slot moved away); the hub never relies on one: it polls every game once
  its ``SSUBSCRIBE`` is confirmed (events appended before the subscription), after any
  reconnection, and every ``resync_s`` seconds (default :data:`RESYNC_S`), so a lost
  wake-up delays events by at most ``resync_s``, never loses them.
- **Resharding / failover.** A node connection that fails, or an ``sunsubscribe`` the hub did
  not ask for (Redis 7 sends one when a slot leaves the node), makes the hub refresh the
  cluster's slot map and regroup every watched game by the node that owns it now; each
  regrouped game is re-subscribed and polled. Every ``resync_s`` the hub also regroups from
  the client's slot map (which the ``MOVED`` replies of ordinary commands keep current).
  Limits: during a migration events can arrive up to ``resync_s`` late; ``ASK`` redirects
  of a slot half-way through migration are left to redis-py's ``XRANGE``; replicas are
  never read.

The hub starts with its first subscriber and closes with the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from rummy_store.base import StoredEvent
from rummy_store.fanout import BLOCK_MS, QUEUE_SIZE, Subscription, deliver, rewind_check

__all__ = ["POLL_CONCURRENCY", "RESYNC_S", "ClusterStreamHub"]

log = logging.getLogger("rummy_store.cluster_fanout")

RESYNC_S = 5.0
"""Default period of the safety poll of every watched game (seconds): the longest a lost
wake-up can delay an event."""
POLL_CONCURRENCY = 32
"""``XRANGE`` calls of one hub in flight at once per node."""
_PAGE = 1000  # entries per XRANGE
_BACKOFF_FIRST, _BACKOFF_MAX = 0.05, 5.0  # seconds


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _NodeReader:
    """The pub/sub connection to one primary: keeps its ``SSUBSCRIBE``s equal to
    :attr:`want` and marks a game dirty on each message about it."""

    def __init__(self, hub: ClusterStreamHub, node: ClusterNode) -> None:
        self.hub = hub
        self.node = node
        self.want: set[str] = set()
        self.changed = asyncio.Event()
        self._have: set[str] = set()
        self._pubsub: Any = None
        self._conn: aioredis.Redis | None = None
        self.task = asyncio.get_running_loop().create_task(
            self._run(), name=f"{hub.name}:{node.name}")

    def _connect(self) -> None:
        kwargs = dict(self.node.connection_kwargs)
        kwargs["client_name"] = self.hub.name
        kwargs["retry"] = Retry(NoBackoff(), 0)  # a failure is handled here: rebuild, regroup
        pool = aioredis.ConnectionPool(connection_class=self.node.connection_class,
                                       max_connections=1, **kwargs)
        self._conn = aioredis.Redis(connection_pool=pool)
        self._pubsub = self._conn.pubsub()
        self._have = set()

    async def drop(self) -> None:
        """Close the connection (a new one is made on the next round)."""
        pubsub, conn, self._pubsub, self._conn = self._pubsub, self._conn, None, None
        self._have = set()
        with contextlib.suppress(Exception):
            if pubsub is not None:
                await pubsub.aclose()
        with contextlib.suppress(Exception):
            if conn is not None:
                await conn.aclose()

    async def _run(self) -> None:
        backoff = _BACKOFF_FIRST
        hub = self.hub
        while not hub.closed:
            try:
                if not self.want and not self._have:
                    self.changed.clear()
                    await self.changed.wait()
                    continue
                if self._pubsub is None:
                    self._connect()
                self.changed.clear()
                for channel in sorted(self.want - self._have):
                    await self._pubsub.ssubscribe(channel)  # one slot per command
                    self._have.add(channel)
                for channel in sorted(self._have - self.want):
                    await self._pubsub.sunsubscribe(channel)
                    self._have.discard(channel)
                if not self._have:
                    continue
                message = await self._pubsub.get_message(timeout=hub.poll_s)
                if message is not None:
                    self._handle(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - survive any Redis failure
                delay = random.uniform(0, backoff)
                log.warning("event stream hub: pub/sub on %s failed (%s: %s); regrouping, "
                            "retrying in %.2f s", self.node.name, type(exc).__name__, exc,
                            delay)
                await self.drop()
                hub.recovering = True
                hub.request_regroup(refresh=True)
                await asyncio.sleep(delay)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_FIRST

    def _handle(self, message: dict[str, Any]) -> None:
        kind = _s(message.get("type"))
        channel = _s(message.get("channel"))
        if kind in ("smessage", "ssubscribe"):
            self.hub.mark_dirty(channel)  # confirmed: poll once for what came before
        elif kind == "sunsubscribe" and channel in self._have and channel in self.want:
            # not asked for: the slot left this node (resharding, failover)
            self._have.discard(channel)
            self.hub.request_regroup(refresh=True)


class ClusterStreamHub:
    """The fan-out of a cluster store's streams; the interface of
    :class:`~rummy_store.fanout.StreamHub` (``register``, ``unregister``, counts, ``close``).

    Args:
        client: the store's ``redis.asyncio.cluster.RedisCluster``; the hub reads through it
            (``XRANGE``) and opens one pub/sub connection per primary with its node settings.
        decode: turns one raw stream entry ``(id, fields)`` into a :class:`StoredEvent`.
        name: the pub/sub connections' ``CLIENT SETNAME`` (spaces become ``_``).
        block_ms: longest wait of one pub/sub read in milliseconds (> 0); it bounds how long a
            new subscription waits for its ``SSUBSCRIBE`` (at most 50 ms are used).
        queue_size: capacity of each subscriber's queue in events (> 0).
        resync_s: period of the safety poll of every watched game, seconds (> 0).

    Use it from one event loop. Raises ``ValueError`` for a bad ``block_ms``, ``queue_size``
    or ``resync_s``.
    """

    def __init__(self, client: RedisCluster, decode: Callable[[Any], StoredEvent], *,
                 name: str = "rummy-hub", block_ms: int = BLOCK_MS,
                 queue_size: int = QUEUE_SIZE, resync_s: float = RESYNC_S) -> None:
        if block_ms <= 0 or queue_size <= 0 or resync_s <= 0:
            raise ValueError(f"block_ms, queue_size and resync_s must be > 0, got {block_ms}, "
                             f"{queue_size}, {resync_s}")
        self._client = client
        self._decode = decode
        self.name = "".join("_" if c.isspace() else c for c in name)
        self.poll_s = min(block_ms / 1000, 0.05)
        self._queue_size = queue_size
        self._resync_s = resync_s
        self._subs: dict[str, set[Subscription]] = {}
        self._cursors: dict[str, int] = {}  # key -> last version delivered
        self._stamps: dict[str, float] = {}  # key -> ts of the event at its cursor
        self.recovering = False
        """Set when a read or a node's pub/sub failed: the next poll first checks that no
        stream went back in time (:func:`rummy_store.fanout.rewind_check`)."""
        self._owner: dict[str, str] = {}  # key -> name of the node whose reader has it
        self._readers: dict[str, _NodeReader] = {}
        self._dirty: set[str] = set()
        self._unplaced: set[str] = set()
        self._regroup = False
        self._refresh = False
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._polling: dict[str, asyncio.Task[None]] = {}  # key -> its poll in flight
        self._redo: set[str] = set()  # keys woken while their poll was in flight
        self._unchecked: set[str] = set()  # keys to check for a rewind before their poll
        self._backoff: dict[str, float] = {}  # key -> next back-off after a failed poll
        self._node_polls: dict[str, asyncio.Semaphore] = {}  # node name -> its polls
        self.closed = False
        self.reads = 0
        """Number of ``XRANGE`` polls made (tests, diagnostics)."""

    # -------------------------------------------------------------- subscribers

    def subscriber_count(self) -> int:
        """Live subscriptions (over all games)."""
        return sum(len(s) for s in self._subs.values())

    def stream_count(self) -> int:
        """Streams (games) the hub currently watches."""
        return len(self._cursors)

    def node_count(self) -> int:
        """Nodes the hub has a pub/sub reader for."""
        return len(self._readers)

    @property
    def running(self) -> bool:
        """True while the hub's poller task is alive."""
        return self._task is not None and not self._task.done()

    def register(self, key: str, after_version: int) -> Subscription:
        """Subscribe to ``key``: every event with a version above the hub's position on the
        key is queued (for a key new to the hub, above ``after_version``).

        Raises:
            RuntimeError: the hub is closed.
        """
        if self.closed:
            raise RuntimeError("the event store is closed")
        sub = Subscription(self, key, self._queue_size)
        self._subs.setdefault(key, set()).add(sub)
        if key not in self._cursors:
            self._cursors[key] = after_version
            self._unplaced.add(key)
            self._dirty.add(key)
            self._wakeup.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)
        return sub

    def unregister(self, sub: Subscription) -> None:
        """Remove ``sub`` (no-op if it is not registered); a key with no subscriber left is
        no longer watched (its channel is unsubscribed)."""
        subs = self._subs.get(sub.key)
        if subs is None or sub not in subs:
            return
        subs.discard(sub)
        if subs:
            return
        key = sub.key
        del self._subs[key]
        self._cursors.pop(key, None)
        self._stamps.pop(key, None)
        self._dirty.discard(key)
        self._unplaced.discard(key)
        self._redo.discard(key)
        self._unchecked.discard(key)
        self._backoff.pop(key, None)
        owner = self._owner.pop(key, None)
        reader = self._readers.get(owner) if owner is not None else None
        if reader is not None:
            reader.want.discard(key)
            reader.changed.set()

    def mark_dirty(self, key: str) -> None:
        """Poll ``key`` soon (a wake-up or a confirmed subscription)."""
        if key in self._cursors:
            self._dirty.add(key)
            self._wakeup.set()

    def request_regroup(self, *, refresh: bool) -> None:
        """Regroup the watched keys by owning node soon; ``refresh`` reloads the slot map
        from the cluster first (after an error or an unsolicited ``sunsubscribe``)."""
        self._regroup = True
        self._refresh = self._refresh or refresh
        self._wakeup.set()

    # -------------------------------------------------------------- lifecycle

    async def close(self) -> None:
        """Stop the poller and every node reader and close their connections; subscribers
        get nothing more. Idempotent."""
        self.closed = True
        self._wakeup.set()
        tasks = [t for t in [self._task, *(r.task for r in self._readers.values()),
                             *self._polling.values()]
                 if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, timeout=2)
        self._task = None
        for reader in self._readers.values():
            await reader.drop()
        self._readers.clear()

    # -------------------------------------------------------------- the poller

    async def _run(self) -> None:
        backoff = _BACKOFF_FIRST
        loop = asyncio.get_running_loop()
        next_resync = loop.time() + self._resync_s
        while not self.closed:
            if not (self._dirty or self._unplaced or self._regroup):
                self._wakeup.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(),
                                           max(0.0, next_resync - loop.time()))
            if loop.time() >= next_resync:  # the safety net: poll all, regroup from the map
                next_resync = loop.time() + self._resync_s
                self._dirty.update(self._cursors)
                self._regroup = True
            if self.recovering:  # a failure (here, or a node's) sets it again
                self.recovering = False
                self._unchecked.update(self._cursors)  # each checked before its next poll
            try:
                if self._unplaced or self._regroup:
                    await self._place()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - survive any Redis failure
                delay = random.uniform(0, backoff)
                log.warning("event stream hub: cluster slot map failed (%s: %s); retrying in "
                            "%.2f s", type(exc).__name__, exc, delay)
                self.recovering = True
                self.request_regroup(refresh=True)
                await asyncio.sleep(delay)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            backoff = _BACKOFF_FIRST
            batch, self._dirty = self._dirty, set()
            for key in batch:
                if key not in self._cursors:
                    continue
                if key in self._polling:  # polled again once the poll in flight ends
                    self._redo.add(key)
                    continue
                task = loop.create_task(self._poll_one(key), name=f"{self.name}:poll")
                self._polling[key] = task
                task.add_done_callback(functools.partial(self._polled, key))

    def _polled(self, key: str, task: asyncio.Task[None]) -> None:
        """A poll of ``key`` ended: poll it again if it was woken meanwhile; after a
        failure, again after a back-off of its own (the hub's other games go on), with the
        slot map refreshed and every stream checked for a rewind before its next poll."""
        if self._polling.get(key) is task:
            del self._polling[key]
        if task.cancelled() or self.closed:
            return
        exc = task.exception()
        if exc is None:
            self._backoff.pop(key, None)
            if key in self._redo:
                self._redo.discard(key)
                self.mark_dirty(key)
            return
        self._redo.discard(key)
        backoff = self._backoff.get(key, _BACKOFF_FIRST)
        self._backoff[key] = min(backoff * 2, _BACKOFF_MAX)
        delay = random.uniform(0, backoff)
        (log.warning if backoff == _BACKOFF_FIRST else log.debug)(
            "event stream hub: poll of %s failed (%s: %s); retrying in %.2f s", key,
            type(exc).__name__, exc, delay)
        self.recovering = True
        self.request_regroup(refresh=True)
        asyncio.get_running_loop().call_later(delay, self.mark_dirty, key)

    async def _poll_one(self, key: str) -> None:
        """Check ``key`` for a rewind if a failure asked for it, then poll it; at most
        :data:`POLL_CONCURRENCY` of these run at once per node (a hung node holds up the
        polls of its own games only)."""
        node = self._owner.get(key, "")
        async with self._node_polls.setdefault(node, asyncio.Semaphore(POLL_CONCURRENCY)):
            if key in self._unchecked and key in self._cursors:
                one = {key: self._cursors[key]}
                await rewind_check(self._client, one, self._stamps, self._subs, self._decode)
                self._unchecked.discard(key)
                if key in self._cursors:
                    self._cursors[key] = one[key]
            await self._poll(key)

    async def _poll(self, key: str) -> None:
        """Read ``key``'s entries past its cursor and deliver them (an error is raised; the
        caller retries)."""
        task = asyncio.current_task()
        while key in self._cursors:
            try:
                self.reads += 1
                entries = await self._client.xrange(
                    key, min=f"0-{self._cursors[key] + 1}", max="+", count=_PAGE) or []
            finally:
                # redis-py can swallow a cancellation inside a read
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError
            deliver(key, entries, self._subs, self._cursors, self._decode, self._stamps)
            if len(entries) < _PAGE:
                return

    async def _place(self) -> None:
        """Give every unplaced key (every key, when regrouping) to the reader of the node
        that owns its slot; a key that changes node is polled."""
        refresh, self._refresh = self._refresh, False
        regroup, self._regroup = self._regroup, False
        try:
            await self._client.initialize()
            if refresh:
                await self._client.nodes_manager.initialize()
        except BaseException:
            self._refresh = self._refresh or refresh
            self._regroup = self._regroup or regroup
            raise
        keys = list(self._cursors) if regroup else list(self._unplaced)
        self._unplaced.clear()
        for key in keys:
            node = self._client.get_node_from_key(key)
            if node is None:  # pragma: no cover - get_node_from_key raises instead
                continue
            old = self._owner.get(key)
            if old == node.name:
                continue
            if old is not None and old in self._readers:
                self._readers[old].want.discard(key)
                self._readers[old].changed.set()
                self._dirty.add(key)
            reader = self._readers.get(node.name)
            if reader is None or reader.task.done():
                reader = self._readers[node.name] = _NodeReader(self, node)
            reader.want.add(key)
            reader.changed.set()
            self._owner[key] = node.name
