"""The event store's clock, read on the service host: turn deadlines run on it alone.

Events are stamped by the store (``TIME`` in the Redis append script), due times are kept
and claimed on the store's clock (``EventStore.schedule``/``claim_due``), and a turn deadline
is ``ts + turn_seconds`` with ``ts`` an event's stamp. Every "now" the service compares with
them must then be the store's now, not the service host's wall clock: with the host 30 s
ahead of Redis every timed turn timed out at once, 30 s behind none did for 30 s more.

:class:`StoreClock` reads the store's clock a few times, keeps the offset of the read with
the shortest round trip (error at most half of it, a millisecond or so on a LAN) and adds it
to the host's wall clock; it reads again every :data:`RESYNC_SECONDS` (the host's clock may
be stepped by NTP meanwhile). The in-memory store's clock is this host's ``time.time``, so
its offset is 0.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rummy_store.base import Lifecycle

log = logging.getLogger("rummy_grpc")

RESYNC_SECONDS = 30.0
"""Seconds between two measures of the offset (:meth:`StoreClock.maybe_sync`)."""
SAMPLES = 3
"""Reads of the store's clock per measure; the one with the shortest round trip counts."""
WARN_OFFSET = 1.0
"""An offset larger than this (seconds) is logged once per change of more than a second."""


def store_time_reader(store: Lifecycle) -> Callable[[], Awaitable[float]]:
    """The store's own clock (``Lifecycle.now``: Redis ``TIME``, the clock its append
    script stamps events with) as an async callable returning epoch seconds."""
    return store.now


class StoreClock:
    """The store's clock on this host: ``now()`` is the host's wall clock plus the measured
    offset of the store's clock, in epoch seconds.

    Args:
        store: the event store (:func:`store_time_reader` tells how to read its clock).
        host: the host's wall clock (epoch seconds).
        resync: seconds between two measures by :meth:`maybe_sync`.
    """

    def __init__(self, store: Any, *, host: Callable[[], float] = time.time,
                 resync: float = RESYNC_SECONDS) -> None:
        self._read = store_time_reader(store)
        self._host = host
        self._resync = resync
        self.offset = 0.0
        """Store clock minus host clock, in seconds (0 until measured)."""
        self._synced: float | None = None
        self._warned = 0.0

    def now(self) -> float:
        """The store's clock now, in epoch seconds."""
        return self._host() + self.offset

    async def sync(self) -> float:
        """Measure the offset now (:data:`SAMPLES` reads of the store's clock) and return it.

        Raises:
            Store errors (a connection error, a timeout): the offset stays as it was.
        """
        best: tuple[float, float] | None = None
        for _ in range(SAMPLES):
            t0 = self._host()
            store_now = await self._read()
            t1 = self._host()
            sample = (t1 - t0, store_now - (t0 + t1) / 2)
            if best is None or sample[0] < best[0]:
                best = sample
        assert best is not None
        self.offset = best[1]
        self._synced = time.monotonic()
        if abs(self.offset) > WARN_OFFSET and abs(self.offset - self._warned) > 1.0:
            self._warned = self.offset
            log.warning("this host's clock is %.1f s %s the event store's; turn deadlines "
                        "use the store's clock", abs(self.offset),
                        "behind" if self.offset > 0 else "ahead of")
        return self.offset

    async def maybe_sync(self) -> None:
        """:meth:`sync` when the last measure is :data:`RESYNC_SECONDS` old (or none was
        made); a store error is left to the caller's own handling of the store (the offset
        measured last stays in use)."""
        if self._synced is None or time.monotonic() - self._synced >= self._resync:
            await self.sync()


__all__ = ["RESYNC_SECONDS", "StoreClock", "store_time_reader"]
