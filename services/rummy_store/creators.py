"""The per-creator index of games: which games a known caller created, by state, so that
``ListGames`` reads only the caller's own games (never the whole index).

A protocol of its own (2 members), like :class:`rummy_store.results.ResultsFeed`: both
backends implement it (:class:`rummy_store.memory.MemoryEventStore`,
:class:`rummy_store.redis_creators.RedisCreators` in
:class:`rummy_store.redis_store.RedisEventStore`, on a single Redis and a Redis Cluster).

A game enters its creator's index once its first events are appended
(:meth:`CreatorIndex.add_created`, after the append: a create cut short is completed by
its retry, as the games index is). Its state is the store's: active while it is in the
active games (``GameIndex.set_active``), finished once it left them; a game that expired
while idle leaves the creator's index when a listing meets it.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

STATES = ("all", "active", "finished")
"""The state filters of :meth:`CreatorIndex.list_created`."""


class UnknownCursor(LookupError):
    """``after`` names a game that is not (or no longer) in the creator's index."""


def check_listing(creator: str, limit: int, state: str) -> None:
    """The argument checks of :meth:`CreatorIndex.list_created`.

    Raises:
        ValueError: an empty creator, a negative limit, an unknown state.
    """
    if not isinstance(creator, str) or not creator:
        raise ValueError(f"creator must be a non-empty string, got {creator!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be an integer >= 0, got {limit!r}")
    if state not in STATES:
        raise ValueError(f"state must be one of {STATES}, got {state!r}")


def creator_tag(creator: str) -> str:
    """A short digest of a creator identity, for key names (any characters, braces
    included, may be in a certificate name)."""
    return hashlib.sha256(creator.encode()).hexdigest()[:24]


@runtime_checkable
class CreatorIndex(Protocol):
    """Each creator's games, newest first, by state."""

    async def add_created(self, creator: str, game_id: str, created: float) -> None:
        """Enter ``game_id`` in ``creator``'s index with the time it was created (epoch
        seconds: the order of the listing). Idempotent (a retry changes nothing).

        Raises:
            ValueError: an empty creator or a bad game id.
        """
        ...

    async def list_created(self, creator: str, *, limit: int, after: str | None = None,
                           state: str = "all") -> list[str]:
        """Up to ``limit`` ids of the games ``creator`` created, newest first (by created
        time, ties by id descending), only those after game ``after`` in that order (a
        previous page's last id; ``None``: from the newest), filtered by ``state``
        (:data:`STATES`: ``active``, in the store's active games; ``finished``, no
        longer). Reads the creator's own entries only.

        Raises:
            UnknownCursor: ``after`` is not in the creator's index.
            ValueError: see :func:`check_listing`.
        """
        ...


__all__ = ["STATES", "CreatorIndex", "UnknownCursor", "check_listing", "creator_tag"]
