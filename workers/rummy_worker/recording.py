"""Sampled games written to the event store (``--record-every K``).

A recorded game is appended as one batch of events at version 1 under game id
``batch-<batch id>-<index>`` (``-b`` suffix for variant B) with request id
``record:<game id>``, so writing the same game twice (a redelivered chunk) appends nothing
the second time. Recorded games are finished, so they are marked inactive in the store's
game index. Replay one with ``rummy replay --redis-url URL GAME_ID``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy_store import VersionConflict, encode_events, with_store_sync
from rummy_store.base import EventStore

from rummy.simulate import GameResult
from rummy_worker.batches import game_id


class GameRecorder:
    """Collects sampled games during a chunk; :meth:`flush` writes them in one connection.

    Args:
        batch_id: the batch the games belong to.
        url: event store URL (``redis://...``, or ``memory`` for tests).
        prefix: event store key prefix.
    """

    def __init__(self, batch_id: str, url: str, prefix: str = "rummy") -> None:
        self.batch_id = batch_id
        self.url = url
        self.prefix = prefix
        self.pending: list[tuple[str, GameResult]] = []

    def __call__(self, index: int, variant: str, result: GameResult) -> None:
        """Queue game ``index`` of ``variant`` (a :data:`rummy_worker.chunks.Recorder`)."""
        self.pending.append((game_id(self.batch_id, index, variant), result))

    def flush(self) -> list[str]:
        """Append every queued game; return the ids newly written (not duplicates).

        Raises:
            redis.exceptions.ConnectionError and other store errors (not conflicts).
        """
        pending, self.pending = self.pending, []
        if not pending:
            return []
        return with_store_sync(self.url, lambda store: _append_all(store, pending),
                               prefix=self.prefix)


async def _append_all(store: EventStore, games: Sequence[tuple[str, GameResult]]) -> list[str]:
    written = []
    for gid, result in games:
        try:
            res = await store.append(gid, encode_events(result.events), 0,
                                     request_id=f"record:{gid}")
        except VersionConflict:  # written before under another request id: leave it
            continue
        if not res.duplicate:
            written.append(gid)
        await store.set_active(gid, False)  # a finished game, not one the service serves
    return written
