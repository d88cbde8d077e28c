"""The event store of the game service (docs/architecture.md, "Event store contract").

Small ports by duty (:mod:`rummy_store.base`: ``EventLog``, ``RequestLog``,
``Subscriptions``, ``DueSchedule``, ``GameIndex``, ``SnapshotLog``, ``Lifecycle``), their
union :class:`EventStore`, and two implementations that pass one contract suite:
:class:`MemoryEventStore` (demos, tests) and :class:`RedisEventStore` (Redis Streams on a
single Redis or a Redis Cluster, one stream per game, appends through one Lua script).
:func:`open_store` builds the store a URL names, for every caller. The stores keep plain JSON
records; :class:`EventMapper` (:data:`MAPPER`) is the one mapper between those records and core
events, used by every adapter (upcasting old schema versions on read).

>>> import asyncio
>>> store = MemoryEventStore()
>>> asyncio.run(store.append("g1", [{"type": "Passed", "v": 1, "seat": 0}], 0)).version
1
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rummy.events import Event
from rummy_store.base import (
    AppendInterrupted,
    AppendResult,
    EventStore,
    GameUnlisted,
    RequestIdReused,
    StoreAccessDenied,
    StoredEvent,
    StoreError,
    StreamRewound,
    VersionConflict,
    request_digest,
)
from rummy_store.creators import CreatorIndex
from rummy_store.factory import UnknownStoreURL, open_store
from rummy_store.mapper import MAPPER, EventMapper
from rummy_store.memory import MemoryEventStore
from rummy_store.redis_store import RedisEventStore
from rummy_store.repository import EventRepository, RecordedEvent
from rummy_store.results import FeedEntry, FeedStatus, ParkedEntry, ResultsFeed
from rummy_store.sync import append_sync, read_all_sync, run_sync, with_store_sync

__all__ = [
    "CreatorIndex",
    "FeedEntry",
    "FeedStatus",
    "ParkedEntry",
    "ResultsFeed",
    "AppendInterrupted",
    "AppendResult",
    "EventMapper",
    "EventRepository",
    "EventStore",
    "MAPPER",
    "MemoryEventStore",
    "RecordedEvent",
    "RedisEventStore",
    "RequestIdReused",
    "StoreAccessDenied",
    "StoreError",
    "StoredEvent",
    "GameUnlisted",
    "StreamRewound",
    "UnknownStoreURL",
    "VersionConflict",
    "append_sync",
    "decode_events",
    "encode_events",
    "open_store",
    "read_all_sync",
    "request_digest",
    "run_sync",
    "with_store_sync",
]


def encode_events(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Core events -> the dicts :meth:`EventStore.append` takes (:data:`MAPPER`)."""
    return MAPPER.to_records(events)


def decode_events(stored: Iterable[StoredEvent]) -> list[Event]:
    """Stored events -> core events, in the given order (``rummy.events.from_dict``, which
    upcasts old schema versions).

    Raises:
        rummy.errors.NotationError: a stored payload is malformed or of an unknown type.
    """
    return MAPPER.to_events(stored)
