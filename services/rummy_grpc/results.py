"""The results feed as the service writes and serves it (docs/operations.md, "The results
feed").

:func:`summarize` builds the summary an append carries to the store's feed
(:mod:`rummy_store.results`): ``created`` with the first events (``GameStarted``),
``ended`` with ``GameEnded`` (final scores, winners, R9); the store appends it in the same
atomic step as the events. :class:`ResultsRpc` serves ``StreamResults``, ``AckResults``
and ``ListParkedResults`` over the store's consumer groups.

Acknowledgements are a unary ``AckResults`` rather than a bidirectional stream: a backend
acknowledges after its own commit (a ratings transaction, a payout), often from another
task or process than the one reading; an ack is idempotent and may be retried alone;
any replica of the service accepts it (the group lives in the store); and unary calls
work through every gRPC proxy and client (grpc-web has no client streaming). An ack lost
with its connection only means one more delivery.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from rummy_store.results import FeedEntry, FeedStatus, ParkedEntry, ResultsFeed, check_read

from rummy.events import Event, GameEnded, GameStarted
from rummy.lifecycle import Control
from rummy_grpc import metrics
from rummy_grpc.errors import BadRequest
from rummy_grpc.lifecycle import spans

__all__ = ["ResultsRpc", "controller", "summarize"]

SWEEP_SECONDS = 30.0
"""Least seconds between two sweeps for abandoned games by one server process."""
MAX_ACKS = 10_000
"""Most entry ids of one AckResults call."""


def controller(seat: dict[str, Any]) -> str:
    """A seat's controller as the feed names it: ``"human"`` or ``"bot:<strategy>"``
    (``seat`` is one entry of the game's meta ``"seats"``)."""
    kind = str(seat.get("kind", ""))
    return f"bot:{seat.get('strategy', '')}" if kind == "bot" else kind


def summarize(game_id: str, events: Sequence[Event], expected_version: int,
              meta: dict[str, Any] | None,
              control: Control | None = None) -> dict[str, Any] | None:
    """The feed summary of appending ``events`` at ``expected_version``, or ``None`` when
    they neither start (``GameStarted``) nor end (``GameEnded``, R9) a game.

    Returns:
        ``{"kind": "created" | "ended", "game_id", "version" (after the append),
        "seats": [{"seat", "name", "controller"} (+ "final", "rounds_won", "winner" when
        ended)], "winners": [...] (ended)}``. Names come from ``GameStarted`` or the meta,
        controllers from the meta (``""`` when it is unknown). An ended game's seats also
        carry ``"left"`` (it resigned or left, R13.4) and ``"controllers"``, who played the
        seat from which version on (``control``, the game's control at its end, §13).
    """
    started = next((e for e in events if isinstance(e, GameStarted)), None)
    ended = next((e for e in events if isinstance(e, GameEnded)), None)
    if started is None and ended is None:
        return None
    seats_meta = list((meta or {}).get("seats") or [])
    n = len(ended.final) if ended is not None else started.players if started else 0
    seats = []
    for i in range(n):
        m = seats_meta[i] if i < len(seats_meta) else {}
        name = started.names[i] if started is not None and i < len(started.names) \
            else str(m.get("name", ""))
        seat: dict[str, Any] = {"seat": i, "name": name, "controller": controller(m)}
        if ended is not None:
            seat.update(final=ended.final[i], rounds_won=ended.rounds_won[i],
                        winner=i in ended.winners, left=i in ended.left)
            if meta:
                seat["controllers"] = spans(meta, control)[i]
        seats.append(seat)
    out: dict[str, Any] = {"kind": "ended" if ended is not None else "created",
                           "game_id": game_id, "version": expected_version + len(events),
                           "seats": seats}
    if ended is not None:
        out["winners"] = list(ended.winners)
        out["totals"] = list(ended.totals)
        out["bonuses"] = list(ended.bonuses)
    return out


def _check_range(name: str, value: int, default: int, low: int, high: int) -> int:
    if value == 0:
        return default
    if not low <= value <= high:
        raise BadRequest(f"{name} must be {low}..{high} (0: {default}), got {value}")
    return value


class ResultsRpc:
    """The results feed's calls over a store with a feed (:class:`ResultsFeed`).

    Args:
        store: the event store (both stores have the feed).
        block_ms: how long one read waits for new entries before it checks the stream's
            state again (milliseconds).
    """

    def __init__(self, store: ResultsFeed, *, block_ms: int = 1000) -> None:
        self.store = store
        self.block_ms = block_ms
        self._swept = 0.0

    def _feed(self) -> ResultsFeed:
        return self.store

    async def _maybe_sweep(self) -> None:
        now = time.monotonic()
        if now - self._swept >= SWEEP_SECONDS:
            self._swept = now
            found = await self._feed().results_sweep()
            if found:
                metrics.child(metrics.RESULTS_APPENDED_TOTAL, "abandoned").inc(found)

    async def stream(self, group: str, consumer: str, start: str, max_batch: int,
                     lease_seconds: int, max_deliveries: int,
                     max_in_flight: int) -> AsyncIterator[list[FeedEntry]]:
        """Batches of entries for ``consumer`` of ``group`` until cancelled.

        Raises:
            BadRequest: a bad name, start or bound (the message says which).
        """
        feed = self._feed()
        count = _check_range("max_batch", max_batch, 100, 1, 1000)
        lease = _check_range("lease_seconds", lease_seconds, 30, 1, 3600)
        most = _check_range("max_deliveries", max_deliveries, 5, 1, 100)
        in_flight = _check_range("max_in_flight", max_in_flight, 1000, 1, 100_000)
        try:
            check_read(group, consumer, count, start, lease, most)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        streams = metrics.child(metrics.RESULTS_STREAMS, group)
        streams.inc()
        try:
            async for batch in self._batches(feed, group, consumer, start, count, lease, most,
                                             in_flight):
                yield batch
        finally:
            streams.dec()

    async def _batches(self, feed: ResultsFeed, group: str, consumer: str, start: str,
                       count: int, lease: int, most: int,
                       in_flight: int) -> AsyncIterator[list[FeedEntry]]:
        while True:
            await self._maybe_sweep()
            status = await feed.results_status(group, consumer)
            metrics.observe_feed(group, status)
            room = in_flight - status.consumer_pending  # this consumer's unacknowledged
            if room <= 0:  # wait for acks (or for the lease to hand entries to others)
                await asyncio.sleep(self.block_ms / 1000)
                continue
            batch = await feed.results_read(group, consumer, count=min(count, room),
                                            block_ms=self.block_ms, start=start,
                                            lease=float(lease), max_deliveries=most)
            if batch:
                metrics.child(metrics.RESULTS_DELIVERED_TOTAL, group).inc(len(batch))
                yield batch

    async def ack(self, group: str, ids: Sequence[str]) -> int:
        """Acknowledge ``ids`` of ``group``; how many were pending.

        Raises:
            BadRequest: a bad group name or entry id, more than :data:`MAX_ACKS` ids.
        """
        if len(ids) > MAX_ACKS:
            raise BadRequest(f"at most {MAX_ACKS} entry ids per AckResults, got {len(ids)}")
        try:
            n = await self._feed().results_ack(group, list(ids))
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        metrics.child(metrics.RESULTS_ACKED_TOTAL, group).inc(n)
        return n

    async def parked(self, group: str, after: str,
                     limit: int) -> tuple[list[ParkedEntry], FeedStatus]:
        """Parked entries of ``group`` after ``after`` and the group's status.

        Raises:
            BadRequest: a bad group name, ``after`` or ``limit``.
        """
        most = _check_range("limit", limit, 100, 1, 1000)
        feed = self._feed()
        try:
            parked = await feed.results_parked(group, after=after or "0", limit=most)
            status = await feed.results_status(group)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        metrics.observe_feed(group, status)
        return parked, status
