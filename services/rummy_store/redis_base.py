"""The shared state of the Redis event store's parts (:mod:`rummy_store.redis_store`).

:class:`RedisBase` holds the client, the key names and the readers, and implements
:class:`~rummy_store.base.Lifecycle` (``idle_ttl``, ``ping``, ``check_access``, ``close``);
each duty of :class:`~rummy_store.base.EventStore` is a subclass in a module of its own
(``redis_log``, ``redis_live``, ``redis_schedule``, ``redis_index``), and
:class:`~rummy_store.redis_store.RedisEventStore` joins them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError

from rummy_store.base import StoreAccessDenied, StoredEvent, check_delay, check_game_id
from rummy_store.batching import CommandBatcher
from rummy_store.cluster_fanout import ClusterStreamHub
from rummy_store.codec import unpack
from rummy_store.fanout import BLOCK_MS, QUEUE_SIZE, StreamHub
from rummy_store.feed import AppendFeed, feed_channel
from rummy_store.redis_scripts import (
    ABANDON_LUA,
    ACCESS_LUA,
    APPEND_LUA,
    CLAIM_LUA,
    FEED_CLAIM_LUA,
    RELAY_LUA,
    SCHEDULE_LUA,
    access_probes,
)

__all__ = ["CATCH_UP_CONCURRENCY", "RedisBase"]

log = logging.getLogger("rummy_store.redis")

T = TypeVar("T")

CATCH_UP_CONCURRENCY = 32
"""Reads of subscriptions outside the hub (catch-up ``XRANGE`` pages, the checks of what they
delivered) that run at once per store: bounds the pool connections a burst of new streams
takes (:meth:`RedisSubscriptions._bounded <rummy_store.redis_live.RedisSubscriptions>`)."""


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisBase:
    """The state every part of the Redis store shares; see
    :class:`~rummy_store.redis_store.RedisEventStore` (the class to use).

    Args:
        client: a ``redis.asyncio.Redis`` (``decode_responses`` either way), or a
            ``redis.asyncio.cluster.RedisCluster`` (Redis 7 or later).
        prefix: the first part of every key (no trailing colon).
        owns_client: close the client in :meth:`close`.
        hub_block_ms: longest wait of the stream hub's one blocking ``XREAD`` (milliseconds).
        queue_size: capacity of each subscriber's queue of live events (events).
        idle_ttl: seconds an active game may stay without an append before all its keys
            expire (an abandoned game; 0: never). A finished game (``set_active(False)``)
            is kept.
        request_ttl: seconds a finished game keeps its request records (its idempotency
            window; 0: forever).
        batch: group-commit appends and reads on a single Redis (:mod:`rummy_store.batching`).

    Raises ``ValueError`` for a bad prefix.
    """

    def __init__(
        self, client: aioredis.Redis | RedisCluster, *, prefix: str = "rummy",
        owns_client: bool = False,
        hub_block_ms: int = BLOCK_MS, queue_size: int = QUEUE_SIZE,
        idle_ttl: float = 0.0, request_ttl: float = 0.0, batch: bool = True,
    ) -> None:
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError(f"bad key prefix {prefix!r}: need a non-empty string without {{}}")
        self._idle_ms = int(check_delay("idle_ttl", idle_ttl) * 1000)
        self._request_ms = int(check_delay("request_ttl", request_ttl) * 1000)
        self._r = client
        self._cluster = isinstance(client, RedisCluster)
        self._unready = self._cluster  # a cluster client not initialized yet
        self._init_lock = asyncio.Lock()
        self._prefix = prefix
        self._owns = owns_client
        self._append = client.register_script(APPEND_LUA)
        self._batch = (CommandBatcher(client)  # type: ignore[arg-type]
                       if batch and not self._cluster else None)
        self._index = f"{prefix}:games"
        self._active = f"{prefix}:games:active"
        self._due = f"{prefix}:due"
        self._schedule = client.register_script(SCHEDULE_LUA)
        self._claim = client.register_script(CLAIM_LUA)
        self._hub: StreamHub | ClusterStreamHub
        if isinstance(client, RedisCluster):
            self._hub = ClusterStreamHub(client, self._decode, name=f"rummy-hub:{prefix}",
                                         block_ms=hub_block_ms, queue_size=queue_size)
        else:
            self._hub = StreamHub(client, self._decode, name=f"rummy-hub:{prefix}",
                                  block_ms=hub_block_ms, queue_size=queue_size)
        self._catch_up = asyncio.Semaphore(CATCH_UP_CONCURRENCY)
        self._feed_channel = feed_channel(prefix)
        self._feed: AppendFeed | None = None
        # the results feed (rummy_store.results): one stream, its keys in one slot
        self._results_tag = f"{prefix}:{{{prefix}:results}}"
        self._results_feed = f"{self._results_tag}:feed"
        self._results_seen = f"{self._results_tag}:relayed"
        self._relay = client.register_script(RELAY_LUA)
        self._claim_feed = client.register_script(FEED_CLAIM_LUA)
        self._abandon_script = client.register_script(ABANDON_LUA)
        self._groups_made: set[tuple[str, str]] = set()


    @property
    def client(self) -> aioredis.Redis | RedisCluster:
        """The underlying ``redis.asyncio.Redis`` (or ``RedisCluster``)."""
        return self._r

    @property
    def is_cluster(self) -> bool:
        """True on a Redis Cluster client."""
        return self._cluster

    @property
    def prefix(self) -> str:
        """The first part of every key of the store."""
        return self._prefix

    def key(self, game_id: str, kind: str) -> str:
        """The key of one of a game's structures: ``kind`` is events, requests, meta or
        snapshots."""
        return f"{self._prefix}:{{{check_game_id(game_id)}}}:{kind}"

    @property
    def idle_ttl(self) -> float:
        return self._idle_ms / 1000

    async def ping(self) -> None:
        if self._unready:
            await self._initialize()
        await self._flushing(self._r.ping())

    async def _flushing(self, call: Awaitable[T]) -> T:
        """``await call``; on a connection error, first close the pool's idle connections,
        then raise. After a Redis restart or failover every pooled connection is dead, and
        redis-py (no retry on the store's clients) fails each of them once on its next
        use: a command of a client that found Redis back. The health watcher's ping (every
        2 s) and the due-games poll (every 0.25 s) pass through here, so the first of them
        to meet the restart clears the pool, and the calls that follow get new
        connections (an attack on the service found 12 of 30 CreateGame failing 5 s after a
        restart)."""
        try:
            return await call
        except RedisConnectionError:
            pool = getattr(self._r, "connection_pool", None)  # a cluster client has none
            if pool is not None:
                with contextlib.suppress(Exception):
                    await pool.disconnect(inuse_connections=False)
            raise


    async def check_access(self) -> None:
        """See :meth:`Lifecycle.check_access <rummy_store.base.Lifecycle.check_access>`.
        One script (:data:`~rummy_store.redis_scripts.ACCESS_LUA`) asks Redis whether the
        store's user may run each command of :func:`~rummy_store.redis_scripts.access_probes`
        with the store's own keys and channels; on a cluster, on every primary (each node
        keeps its own ACL). A Redis before 7 cannot tell: a warning, and no check.

        Raises:
            StoreAccessDenied: the first command refused (or ``EVAL`` itself).
        """
        probes = access_probes(self._prefix, cluster=self._cluster)
        args: list[Any] = [len(probes)]
        for probe in probes:
            args += [len(probe), *probe]
        if self._unready:
            await self._initialize()
        try:
            if isinstance(self._r, RedisCluster):
                replies = await self._r.execute_command(
                    "EVAL", ACCESS_LUA, 0, *args, target_nodes=RedisCluster.PRIMARIES)
                found = list(replies.values()) if isinstance(replies, dict) else [replies]
            else:
                found = [await self._r.eval(ACCESS_LUA, 0, *args)]
        except NoPermissionError as exc:
            raise StoreAccessDenied(await self._whoami(), "EVAL", str(exc)) from exc
        for reply in found:
            status = _s(reply[0])
            if status == "refused":
                probe = probes[int(reply[1]) - 1]
                raise StoreAccessDenied(await self._whoami(), " ".join(probe[:2]),
                                        "refused by the user's ACL rules")
            if status == "unsupported":
                log.warning("the event store's Redis is older than 7: its user's permissions "
                            "cannot be checked at start-up")

    async def _whoami(self) -> str:
        """The store user's name (``ACL WHOAMI``), or ``""`` if Redis does not say."""
        try:
            if isinstance(self._r, RedisCluster):
                reply = await self._r.execute_command("ACL WHOAMI",
                                                      target_nodes=RedisCluster.RANDOM)
            else:
                reply = await self._r.acl_whoami()
            return _s(reply)
        except Exception:  # noqa: BLE001 - only a name for the message: never fail on it
            return ""

    async def close(self) -> None:
        if self._feed is not None:
            await self._feed.close()
        await self._hub.close()
        if self._batch is not None:
            await self._batch.close()
        if self._owns:
            await self._r.aclose()

    async def _initialize(self) -> None:
        """Initialize a cluster client (slot map, node connections) once, before any other
        command. redis-py 8.1 initializes lazily, on the first command; many first commands
        at once on a new client then race (a connection closed under a command:
        ``AttributeError: 'NoneType' object has no attribute 'writelines'``), so the store
        does it first, under a lock."""
        async with self._init_lock:
            if self._unready:
                assert isinstance(self._r, RedisCluster)
                await self._r.initialize()
                self._unready = False

    async def _relay_outbox(self, game_id: str, version: int, summary_json: str) -> bool:
        """A cluster's second step of a summary: append it to the results feed once
        (:data:`~rummy_store.redis_scripts.RELAY_LUA`), then drop it from the game's outbox.
        A failure is logged and leaves it in the outbox, for ``results_sweep`` to relay
        (the events stand). Returns True when the outbox entry was handled."""
        try:
            await self._relay(keys=[self._results_feed, self._results_seen],
                              args=[f"{game_id} {version}", game_id, summary_json])
            await self._r.hdel(self.key(game_id, "results"), str(version))
        except Exception as exc:  # noqa: BLE001 - the append stands; the sweep relays it
            log.warning("results feed: relay of %s at %d deferred to the sweep: %s: %s",
                        game_id, version, type(exc).__name__, exc)
            return False
        return True

    async def now(self) -> float:
        """The Redis server's clock in seconds (the one the append script stamps events with)."""
        if self._unready:
            await self._initialize()
        seconds, micros = await self._r.time()
        return int(seconds) + int(micros) / 1e6

    async def _register(self, game_id: str, ts: float) -> None:
        """Enter a game in the index, active, unless it is there already (idempotent)."""
        if self._unready:
            await self._initialize()
        if await self._r.zadd(self._index, {game_id: ts}, nx=True):
            await self._r.zadd(self._active, {game_id: ts}, nx=True)

    @staticmethod
    def _decode(entry: Any) -> StoredEvent:
        entry_id, fields = entry
        fields = {_s(k): _s(v) for k, v in fields.items()}
        data = unpack(fields["data"])
        return StoredEvent(
            version=int(_s(entry_id).partition("-")[2]),
            type=fields.get("type") or data["type"],  # entries of the first layout have both
            data=data,
            ts=int(fields["t"]) / 1000 if "t" in fields else float(fields["ts"]),
        )

