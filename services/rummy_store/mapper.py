"""The one mapper between core events and stored records.

Every adapter that writes or reads events (the game service's repository, the workers'
game recorder, ``rummy export`` / ``rummy replay GAME_ID``) goes through
:class:`EventMapper`: a record is the JSON-ready dict of ``rummy.events.to_dict`` (cards in
notation, ``"type"`` and schema version ``"v"``), and reading upcasts an old version to the
current one (``rummy.events.from_dict``; the policy is in ``docs/events.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rummy.events import Event, from_dict, to_dict
from rummy_store.base import StoredEvent


class EventMapper:
    """Core events ⇄ stored records."""

    @staticmethod
    def to_record(event: Event) -> dict[str, Any]:
        """The stored record of an event, written at its type's current schema version."""
        return to_dict(event)

    @staticmethod
    def to_event(stored: StoredEvent) -> Event:
        """The core event of a stored record, upcast to the current schema version.

        Raises:
            rummy.errors.NotationError: a malformed record, an unknown type, or a version
                this release cannot read.
        """
        return from_dict(stored.data)

    def to_records(self, events: Iterable[Event]) -> list[dict[str, Any]]:
        """:meth:`to_record` of each event, in order."""
        return [self.to_record(e) for e in events]

    def to_events(self, stored: Iterable[StoredEvent]) -> list[Event]:
        """:meth:`to_event` of each stored record, in order."""
        return [self.to_event(se) for se in stored]


MAPPER = EventMapper()
"""The mapper every adapter uses."""

__all__ = ["MAPPER", "EventMapper"]
