"""The results feed of the in-memory store: the semantics of Redis consumer groups
(:mod:`rummy_store.results`) over a list, for :class:`rummy_store.memory.MemoryEventStore`.
Use it from one event loop."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy_store.checks import dumps
from rummy_store.results import (
    LEASE,
    MAX_DELIVERIES,
    FeedEntry,
    FeedStatus,
    ParkedEntry,
    check_entry_id,
    check_group,
    check_read,
    id_key,
)

__all__ = ["MemoryFeed"]


@dataclass(slots=True)
class _Pending:
    consumer: str
    delivered: float  # monotonic time of the last delivery
    deliveries: int


@dataclass(slots=True)
class _Group:
    next: int  # index in the feed of the next entry never delivered
    pending: dict[str, _Pending] = field(default_factory=dict)  # in delivery order
    parked: list[ParkedEntry] = field(default_factory=list)


class MemoryFeed:
    """Summaries in append order, read by consumer groups (see
    :class:`rummy_store.results.ResultsFeed`; the store's methods delegate here)."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._pos: dict[str, int] = {}
        self._groups: dict[str, _Group] = {}
        self._last = (0, 0)
        self._parked_seq = (0, 0)
        self._new = asyncio.Event()

    def _next_id(self, last: tuple[int, int]) -> tuple[int, int]:
        ms = int(time.time() * 1000)
        return (ms, 0) if ms > last[0] else (last[0], last[1] + 1)

    @property
    def length(self) -> int:
        """Entries in the feed."""
        return len(self._ids)

    def add(self, summary: dict[str, Any] | None) -> None:
        """Append ``summary`` (call it inside the store's lock, in the append's step)."""
        if summary is None:
            return
        self._last = self._next_id(self._last)
        entry_id = f"{self._last[0]}-{self._last[1]}"
        self._pos[entry_id] = len(self._ids)
        self._ids.append(entry_id)
        self._texts.append(dumps(summary))
        self._new.set()

    def _group(self, group: str, start: str) -> _Group:
        g = self._groups.get(group)
        if g is None:
            if start == "0":
                at = 0
            elif start == "$":
                at = len(self._ids)
            else:
                key = id_key(start)
                at = next((i for i, e in enumerate(self._ids) if id_key(e) > key),
                          len(self._ids))
            g = self._groups[group] = _Group(next=at)
        return g

    def _entry(self, entry_id: str, deliveries: int) -> FeedEntry:
        return FeedEntry(entry_id, json.loads(self._texts[self._pos[entry_id]]), deliveries)

    async def read(self, group: str, consumer: str, *, count: int = 100,
                   block_ms: int = 1000, start: str = "0", lease: float = LEASE,
                   max_deliveries: int = MAX_DELIVERIES) -> list[FeedEntry]:
        """See :meth:`ResultsFeed.results_read`."""
        start = check_read(group, consumer, count, start, lease, max_deliveries)
        g = self._group(group, start)
        now = time.monotonic()
        out: list[FeedEntry] = []
        for entry_id, p in list(g.pending.items()):  # what XAUTOCLAIM takes over
            if len(out) >= count:
                break
            if now - p.delivered < lease:
                continue
            p.deliveries += 1
            if p.deliveries > max_deliveries:
                del g.pending[entry_id]
                self._parked_seq = self._next_id(self._parked_seq)
                g.parked.append(ParkedEntry(self._entry(entry_id, p.deliveries - 1), consumer,
                                            f"{self._parked_seq[0]}-{self._parked_seq[1]}"))
                continue
            p.consumer, p.delivered = consumer, now
            del g.pending[entry_id]
            g.pending[entry_id] = p  # redelivered: to the end of the pending order
            out.append(self._entry(entry_id, p.deliveries))
        if not out and g.next >= len(self._ids) and block_ms > 0:
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), block_ms / 1000)
            except TimeoutError:
                pass
        while len(out) < count and g.next < len(self._ids):  # what XREADGROUP > gives
            entry_id = self._ids[g.next]
            g.next += 1
            g.pending[entry_id] = _Pending(consumer, time.monotonic(), 1)
            out.append(self._entry(entry_id, 1))
        return out

    def ack(self, group: str, ids: Sequence[str]) -> int:
        """See :meth:`ResultsFeed.results_ack`."""
        check_group("group", group)
        ids = [check_entry_id(i) for i in ids]
        g = self._groups.get(group)
        if g is None:
            return 0
        return sum(g.pending.pop(i, None) is not None for i in dict.fromkeys(ids))

    def status(self, group: str, consumer: str = "") -> FeedStatus:
        """See :meth:`ResultsFeed.results_status`."""
        check_group("group", group)
        g = self._groups.get(group)
        if g is None:
            return FeedStatus(0, 0, 0, "0-0", len(self._ids))
        mine = sum(1 for p in g.pending.values() if consumer and p.consumer == consumer)
        last = self._ids[g.next - 1] if g.next else "0-0"
        return FeedStatus(len(g.pending), len(self._ids) - g.next, len(g.parked), last,
                          len(self._ids), mine)

    def parked(self, group: str, *, after: str = "0", limit: int = 100) -> list[ParkedEntry]:
        """See :meth:`ResultsFeed.results_parked`."""
        check_group("group", group)
        g = self._groups.get(group)
        if g is None:
            return []
        low = (0, 0) if after in ("", "0") else id_key(check_entry_id(after))
        return [p for p in g.parked if id_key(p.parked_id) > low][:max(1, limit)]
