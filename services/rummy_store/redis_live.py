"""The Redis store's :class:`~rummy_store.base.Subscriptions`: catch-up by ``XRANGE``
pages, then live events from one shared reader per store (:mod:`rummy_store.fanout`, or
:mod:`rummy_store.cluster_fanout` on a cluster), and the append feed of a single Redis
(:mod:`rummy_store.feed`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TypeVar

from redis.asyncio.cluster import RedisCluster

from rummy_store.base import StoredEvent, StreamRewound, check_version
from rummy_store.cluster_fanout import ClusterStreamHub
from rummy_store.fanout import StreamHub, holds
from rummy_store.feed import AppendFeed
from rummy_store.redis_log import PAGE, RedisEventLog

__all__ = ["RedisSubscriptions"]

T = TypeVar("T")


class RedisSubscriptions(RedisEventLog):
    """Live subscriptions and the append feed of the Redis store (on its event log: a
    subscription catches up by reading it)."""

    def subscriber_count(self) -> int:
        """Live subscriptions of this store object (tests, metrics)."""
        return self._hub.subscriber_count()

    @property
    def hub(self) -> StreamHub | ClusterStreamHub:
        """The store's stream reader (:class:`rummy_store.fanout.StreamHub`; on a cluster,
        :class:`rummy_store.cluster_fanout.ClusterStreamHub`)."""
        return self._hub

    async def _bounded(self, read: Callable[[], Awaitable[T]]) -> T:
        """One read of a subscription outside the hub (its catch-up ``XRANGE`` pages, the
        check that what it delivered is still there, the store's version for a
        ``StreamRewound``): at most :data:`CATCH_UP_CONCURRENCY` of them run at once per
        store, so that a burst of new streams takes a bounded share of the pool."""
        task = asyncio.current_task()
        async with self._catch_up:
            try:
                if self._unready:
                    await self._initialize()
                return await read()
            finally:
                # redis-py (8.x) can swallow a cancellation that arrives inside a read, which
                # then returns as if nothing happened: a cancellation still pending on the
                # task is honoured here (contract: cancelling_200_subscribers)
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError

    async def _range(self, stream: str, after: int,
                     to: int | None = None) -> AsyncGenerator[StoredEvent, None]:
        """Entries ``after < version <= to`` (all if ``to`` is None) by short XRANGE pages,
        each a :meth:`_bounded` read."""
        high = "+" if to is None else f"0-{to}"
        while True:
            entries = await self._bounded(functools.partial(
                self._r.xrange, stream, min=f"0-{after + 1}", max=high, count=PAGE)) or []
            for entry in entries:
                event = self._decode(entry)
                after = event.version
                yield event
            if len(entries) < PAGE:
                return

    async def subscribe(
        self, game_id: str, after_version: int = 0, *, block_ms: int = 1000
    ) -> AsyncGenerator[StoredEvent, None]:
        """See :meth:`EventStore.subscribe`. Catches up with XRANGE, then takes live events
        from the store's :class:`~rummy_store.fanout.StreamHub` (one blocking reader per
        store); ``block_ms`` is ignored (the hub's ``block_ms`` applies). Holds no Redis
        connection while it waits.

        Raises:
            StreamRewound: the hub found, after a reconnection, that the stream went back in
                time past what this subscription delivered (:func:`rummy_store.fanout.
                rewind_check`); a rewind to a version it had not reached yet only refills it
                from the store.
        """
        stream = self.key(game_id, "events")
        check_version("after_version", after_version)
        check_version("block_ms", block_ms)
        last = after_version
        stamp: float | None = None  # ts of the event at ``last``, once one was delivered
        async for event in self._range(stream, last):  # catch up ...
            last, stamp = event.version, event.ts
            yield event

        async def kept() -> bool:  # what this subscription delivered last is still there
            return stamp is None or await self._bounded(
                lambda: holds(self._r, stream, last, stamp, self._decode))

        sub = self._hub.register(stream, last)  # ... register, ...
        try:
            if not await kept():  # the store went back while the catch-up was delivered
                raise StreamRewound(game_id, last,
                                    await self._bounded(lambda: self.version(game_id)))
            # ... and read once more: events appended between catch-up and registration
            async for event in self._range(stream, last):
                last, stamp = event.version, event.ts
                yield event
            while True:
                if sub.rewound is not None:  # the stream went back in time (rewind_check)
                    actual, sub.rewound = sub.rewound, None
                    if last > actual or not await kept():
                        raise StreamRewound(game_id, last, actual)
                    while not sub.queue.empty():  # what was queued may be the lost history
                        sub.queue.get_nowait()
                    sub.overflowed = True  # refill from the store
                if sub.overflowed:  # the hub dropped events for us: refill from the stream
                    sub.overflowed = False
                    async for event in self._range(stream, last):
                        last, stamp = event.version, event.ts
                        yield event
                    continue
                item = await sub.queue.get()
                if item is None:  # a wake-up: look at the flags
                    continue
                if item.version <= last:
                    continue  # already delivered
                if item.version > last + 1:  # a gap: fill it (and take this one) from XRANGE
                    async for filled in self._range(stream, last, item.version):
                        last, stamp = filled.version, filled.ts
                        yield filled
                    continue
                last, stamp = item.version, item.ts
                yield item
        finally:
            sub.close()


    def append_feed(self, listener: Callable[[str, int], None]) -> AppendFeed | None:
        """This store's :class:`~rummy_store.feed.AppendFeed` (one per store, started on the
        running loop by the first call), calling ``listener(game_id, version)`` for every
        append by any process from now on (``feed.discard(listener)`` stops that;
        :meth:`close` stops the feed).

        Returns:
            The feed, or ``None`` on a Redis Cluster (no process-wide channel there).
        """
        if isinstance(self._r, RedisCluster):
            return None
        if self._feed is None:
            self._feed = AppendFeed(self._r, self._feed_channel,
                                    name=f"rummy-feed:{self._prefix}")
        self._feed.add(listener)
        self._feed.start()
        return self._feed

