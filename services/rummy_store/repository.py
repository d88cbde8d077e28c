"""The event store as the application sees it: core events in, core events out.

:class:`EventRepository` wraps any :class:`~rummy_store.base.EventStore` (whose records are
JSON dicts) behind the one :class:`~rummy_store.mapper.EventMapper`: it appends
``rummy.events`` values and returns them, upcast to the current schema version, with their
stream version and append time. Idempotent appends, request lookups and subscriptions keep
the store's semantics (see ``EventStore``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

from rummy.events import Event
from rummy_store.base import AppendResult, EventStore
from rummy_store.mapper import MAPPER, EventMapper


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """A core event as stored: its stream ``version`` (1-based), the ``event`` and its
    append time ``ts`` (seconds since the epoch)."""

    version: int
    event: Event
    ts: float


class EventRepository:
    """Core events through an event store and one mapper.

    Args:
        store: the event store.
        mapper: the mapper (default :data:`rummy_store.mapper.MAPPER`).
    """

    def __init__(self, store: EventStore, mapper: EventMapper | None = None) -> None:
        self.store = store
        self.mapper = mapper or MAPPER

    async def append(self, game_id: str, events: Sequence[Event], expected_version: int, *,
                     request_id: str | None = None, request_hash: str | None = None,
                     response: dict[str, Any] | None = None,
                     summary: dict[str, Any] | None = None) -> AppendResult:
        """Append core events atomically at ``expected_version`` (``EventStore.append``),
        with the results-feed ``summary`` if any (:mod:`rummy_store.results`).

        Raises:
            VersionConflict, RequestIdReused, ValueError: as ``EventStore.append``.
        """
        records = [self.mapper.to_record(e) for e in events]
        if summary is None:  # the call as before: stores without the feed still work
            return await self.store.append(game_id, records, expected_version,
                                           request_id=request_id, request_hash=request_hash,
                                           response=response)
        return await self.store.append(game_id, records, expected_version,
                                       request_id=request_id, request_hash=request_hash,
                                       response=response, summary=summary)

    async def read(self, game_id: str, after_version: int = 0,
                   to_version: int | None = None) -> list[RecordedEvent]:
        """The events ``after_version < version <= to_version`` as core events.

        Raises:
            rummy.errors.NotationError: a stored record this release cannot read.
        """
        return [RecordedEvent(se.version, self.mapper.to_event(se), se.ts)
                for se in await self.store.read(game_id, after_version, to_version)]

    async def get_request(self, game_id: str, request_id: str,
                          request_hash: str | None = None) -> AppendResult | None:
        """``EventStore.get_request``: the original result of ``request_id``, or ``None``."""
        return await self.store.get_request(game_id, request_id, request_hash)

    async def subscribe(self, game_id: str, after_version: int = 0
                        ) -> AsyncGenerator[RecordedEvent, None]:
        """``EventStore.subscribe`` as core events (catch-up, then live; never ends by
        itself: close it with ``aclose()`` or cancel the consuming task)."""
        sub = self.store.subscribe(game_id, after_version)
        try:
            async for se in sub:
                yield RecordedEvent(se.version, self.mapper.to_event(se), se.ts)
        finally:
            await sub.aclose()


__all__ = ["EventRepository", "RecordedEvent"]
