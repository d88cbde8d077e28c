"""The results feed: one store-wide, ordered stream of game summaries read by consumer
groups (docs/operations.md, "The results feed").

The store knows nothing about Manipulation Rummy: a summary is a JSON dict its caller
builds (the service: :mod:`rummy_grpc.results`) and hands to ``append(..., summary=...)``;
the store appends it to the feed **in the same atomic step** as the events (inside the
append script on a single Redis, under the store's lock in memory), so there is no summary
without its events and no appended end of game without its summary. A game that expires
while idle (an abandoned game) gets a summary of its own when the store notices the expiry
(:meth:`ResultsFeed.results_sweep`, and any ``list_games`` that meets it), atomically with
its removal from the index of active games.

Reading follows Redis Streams consumer groups (``XREADGROUP``, ``XACK``, ``XPENDING``,
``XAUTOCLAIM``), and the in-memory store implements the same semantics:

- a **group** has one position (its checkpoint), kept by the store: each entry is delivered
  to one member (consumer) of the group; a new group starts at ``start`` (``"0"``: the
  beginning, ``"$"``: only entries appended from now on, or an entry id);
- an entry delivered and not acknowledged (:meth:`ResultsFeed.results_ack`) within
  ``lease`` seconds is delivered again, to whichever member reads next (a consumer that
  died loses nothing);
- an entry delivered more than ``max_deliveries`` times without an acknowledgement is
  **parked**: it leaves the group's pending entries and is kept in the group's parked list
  (:meth:`ResultsFeed.results_parked`), for an operator to look at.

Delivery is at least once; a consumer that acknowledges every entry it has processed, and
skips ids it has processed already, sees every summary exactly once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["LEASE", "MAX_DELIVERIES", "FeedEntry", "FeedStatus", "ParkedEntry", "ResultsFeed",
           "abandoned_summary", "check_entry_id", "check_group", "check_read", "check_start",
           "id_key"]

LEASE = 30.0
"""Default seconds an unacknowledged entry stays with the consumer it was delivered to."""
MAX_DELIVERIES = 5
"""Default deliveries of one entry before it is parked."""

_NAME = re.compile(r"^[A-Za-z0-9_.:@-]{1,64}$")
_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


def check_group(kind: str, name: str) -> str:
    """``name`` if it is a valid group or consumer name: 1 to 64 characters of letters,
    digits and ``_.:@-``.

    Raises:
        ValueError: any other name (``kind`` names it in the message).
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"bad {kind} name {name!r}: 1-64 letters, digits or _.:@-")
    return name


def check_entry_id(entry_id: str) -> str:
    """``entry_id`` if it is a feed entry id (``<ms>-<seq>``), else ``ValueError``."""
    if not isinstance(entry_id, str) or not _ID.match(entry_id):
        raise ValueError(f"bad feed entry id {entry_id!r}: need <ms>-<seq>")
    return entry_id


def check_start(start: str) -> str:
    """A group's start: ``"0"`` (the beginning), ``"$"`` (new entries only) or an entry id
    (the entries after it); ``""`` means ``"0"``. ``ValueError`` otherwise."""
    if start in ("", "0"):
        return "0"
    if start == "$":
        return start
    return check_entry_id(start)


def id_key(entry_id: str) -> tuple[int, int]:
    """An entry id as a sortable ``(ms, seq)``."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One summary delivered: its feed ``id`` (``"<ms>-<seq>"``: append time in
    milliseconds, store clock, and a sequence; ids grow in feed order), the ``summary``
    dict, and ``deliveries`` (1 for a first delivery)."""

    id: str
    summary: dict[str, Any]
    deliveries: int

    @property
    def ts(self) -> float:
        """The append time in seconds since the epoch (store clock)."""
        return id_key(self.id)[0] / 1000


@dataclass(frozen=True, slots=True)
class ParkedEntry:
    """An entry parked after too many deliveries: the feed entry, the consumer that held
    it last and the ``parked_id`` of its place in the group's parked list."""

    entry: FeedEntry
    consumer: str
    parked_id: str


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """A group's position: ``pending`` (delivered, not acknowledged), ``lag`` (entries not
    delivered yet; -1 when the store cannot tell), ``parked`` entries, the
    ``last_delivered`` id (``"0-0"``: none), the feed's ``length`` and
    ``consumer_pending``, the pending entries of the consumer asked about (0: none asked)."""

    pending: int
    lag: int
    parked: int
    last_delivered: str
    length: int
    consumer_pending: int = 0


@runtime_checkable
class ResultsFeed(Protocol):
    """The results feed of a store (both stores implement it; see the module)."""

    async def results_read(self, group: str, consumer: str, *, count: int = 100,
                           block_ms: int = 1000, start: str = "0", lease: float = LEASE,
                           max_deliveries: int = MAX_DELIVERIES) -> list[FeedEntry]:
        """Up to ``count`` entries for ``consumer`` of ``group`` (created at ``start`` if
        new): first entries of the group pending longer than ``lease`` seconds (taken over
        from their consumer; those delivered ``max_deliveries`` times already are parked
        instead), then new entries; waits up to ``block_ms`` for new ones when there is
        nothing else. ``[]`` when nothing came.

        Raises:
            ValueError: a bad group or consumer name, ``start``, ``count`` < 1,
                ``lease`` <= 0, ``max_deliveries`` < 1.
        """
        ...

    async def results_ack(self, group: str, ids: Sequence[str]) -> int:
        """Acknowledge entries of ``group``: they are not delivered again. Returns how
        many were pending (an id acknowledged twice counts once).

        Raises:
            ValueError: a bad group name or entry id.
        """
        ...

    async def results_status(self, group: str, consumer: str = "") -> FeedStatus:
        """The group's :class:`FeedStatus` (``consumer_pending`` of ``consumer`` when
        named); zero counts for a group that does not exist."""
        ...

    async def results_parked(self, group: str, *, after: str = "0",
                             limit: int = 100) -> list[ParkedEntry]:
        """Up to ``limit`` parked entries of ``group``, oldest first, after the parked id
        ``after``."""
        ...

    async def results_sweep(self, *, limit: int = 1000) -> int:
        """Find up to ``limit`` active games that expired while idle, take each out of the
        index and append its ``abandoned`` summary, atomically; returns how many."""
        ...


def abandoned_summary(game_id: str) -> dict[str, Any]:
    """The summary of a game that expired while idle (its data is gone with it)."""
    return {"kind": "abandoned", "game_id": game_id}


def check_read(group: str, consumer: str, count: int, start: str, lease: float,
               max_deliveries: int) -> str:
    """Check :meth:`ResultsFeed.results_read` arguments; returns the normalised start."""
    check_group("group", group)
    check_group("consumer", consumer)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    if not lease > 0:
        raise ValueError(f"lease must be > 0 seconds, got {lease!r}")
    if isinstance(max_deliveries, bool) or not isinstance(max_deliveries, int) \
            or max_deliveries < 1:
        raise ValueError(f"max_deliveries must be an integer >= 1, got {max_deliveries!r}")
    return check_start(start)
