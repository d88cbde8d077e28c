"""The Redis store's :class:`~rummy_store.results.ResultsFeed`: one stream
``P:{P:results}:feed`` read by Redis consumer groups.

Keys (all in the slot of the hash tag ``{P:results}``):

- ``P:{P:results}:feed`` the stream of summaries; entry id ``<ms>-<seq>`` (Redis clock),
  fields ``g`` (game id) and ``s`` (the summary as JSON). Its consumer groups are the
  readers' checkpoints, kept by Redis.
- ``P:{P:results}:parked:<group>`` a group's parked entries (fields ``id``, ``s``, ``n``
  deliveries, ``c`` consumer).
- ``P:{P:results}:relayed`` (cluster only) the set of summaries relayed to the feed
  (``"<game id> <version>"``, ``"<game id> abandoned"``): the relay runs at least once, the
  set makes it append once.
- ``P:{G}:results`` (cluster only) a game's outbox: summaries written by the append script
  in the game's slot, version -> summary, until relayed.

**Order.** On a single Redis a summary is appended by the append script itself, so the feed
is in commit order (the order of the appends that caused the summaries) and a summary is
readable exactly when its events are. On a cluster the append script may not write to
another slot; it writes the summary to the game's outbox (atomically with the events), and
the appending process then relays it (:data:`~rummy_store.redis_scripts.RELAY_LUA`). If
that process dies in between, :meth:`RedisResults.results_sweep` relays it later (it scans
every primary for outboxes). On a cluster the feed is therefore in relay order: per game
in version order, across games only roughly in time, and a summary may appear after later
events of its game (or, after a crash, only at the next sweep); never lost, never twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from rummy_store.checks import dumps
from rummy_store.redis_base import RedisBase, _s, log
from rummy_store.results import (
    LEASE,
    MAX_DELIVERIES,
    FeedEntry,
    FeedStatus,
    ParkedEntry,
    abandoned_summary,
    check_entry_id,
    check_group,
    check_read,
)

__all__ = ["RedisResults"]

_SCAN = 500  # keys per SCAN / ZSCAN step of the sweep


class RedisResults(RedisBase):
    """The results feed of the Redis store (see the module)."""

    def _parked_key(self, group: str) -> str:
        return f"{self._results_tag}:parked:{group}"

    async def _make_group(self, group: str, start: str) -> None:
        made = self._groups_made
        if (group, start) in made:
            return
        try:
            await self._r.xgroup_create(self._results_feed, group, id=start, mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        made.add((group, start))

    async def results_read(self, group: str, consumer: str, *, count: int = 100,
                           block_ms: int = 1000, start: str = "0", lease: float = LEASE,
                           max_deliveries: int = MAX_DELIVERIES) -> list[FeedEntry]:
        start = check_read(group, consumer, count, start, lease, max_deliveries)
        if self._unready:
            await self._initialize()
        await self._make_group(group, start)
        try:
            taken = await self._claim_feed(keys=[self._results_feed, self._parked_key(group)],
                                args=[group, consumer, max(1, int(lease * 1000)), count,
                                      max_deliveries])
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._groups_made.discard((group, start))
            await self._make_group(group, start)
            return []
        out = [FeedEntry(_s(i), json.loads(_s(s)), int(_s(n))) for i, s, n in taken]
        if len(out) >= count:
            return out
        try:
            reply: Any = await self._r.xreadgroup(
                group, consumer, {self._results_feed: ">"}, count=count - len(out),
                block=None if out else max(1, block_ms))
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._groups_made.discard((group, start))
            return out
        for _, entries in reply or []:
            for entry_id, fields in entries:
                f = {_s(k): _s(v) for k, v in fields.items()}
                out.append(FeedEntry(_s(entry_id), json.loads(f["s"]), 1))
        return out

    async def results_ack(self, group: str, ids: Sequence[str]) -> int:
        check_group("group", group)
        ids = [check_entry_id(i) for i in ids]
        if not ids:
            return 0
        if self._unready:
            await self._initialize()
        try:
            return int(await self._r.xack(self._results_feed, group, *dict.fromkeys(ids)))
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                return 0
            raise

    async def results_status(self, group: str, consumer: str = "") -> FeedStatus:
        check_group("group", group)
        if consumer:
            check_group("consumer", consumer)
        if self._unready:
            await self._initialize()
        length = int(await self._r.xlen(self._results_feed))
        parked = int(await self._r.xlen(self._parked_key(group)))
        try:
            groups = await self._r.xinfo_groups(self._results_feed)
        except ResponseError:  # no feed yet
            groups = []
        for g in groups:
            info = {_s(k): v for k, v in g.items()}
            if _s(info["name"]) != group:
                continue
            mine = 0
            if consumer:
                summary = await self._r.xpending(self._results_feed, group)
                for c in summary.get("consumers") or []:
                    if _s(c["name"]) == consumer:
                        mine = int(c["pending"])
            lag = info.get("lag")
            return FeedStatus(pending=int(info["pending"]),
                              lag=-1 if lag is None else int(lag), parked=parked,
                              last_delivered=_s(info["last-delivered-id"]), length=length,
                              consumer_pending=mine)
        return FeedStatus(pending=0, lag=0, parked=parked, last_delivered="0-0",
                          length=length)

    async def results_parked(self, group: str, *, after: str = "0",
                             limit: int = 100) -> list[ParkedEntry]:
        check_group("group", group)
        low = "-" if after in ("", "0") else "(" + check_entry_id(after)
        if self._unready:
            await self._initialize()
        rows: Any = await self._r.xrange(self._parked_key(group), min=low, max="+",
                                         count=max(1, limit))
        out = []
        for parked_id, fields in rows:
            f = {_s(k): _s(v) for k, v in fields.items()}
            entry = FeedEntry(f["id"], json.loads(f["s"]) if f["s"] else {}, int(f["n"]))
            out.append(ParkedEntry(entry, f["c"], _s(parked_id)))
        return out

    async def results_sweep(self, *, limit: int = 1000) -> int:
        """See :meth:`ResultsFeed.results_sweep`; on a cluster also relays every summary
        left in a game's outbox (a process that died between the append and the relay)."""
        if self._unready:
            await self._initialize()
        found = 0
        if self._idle_ms:
            gone: list[str] = []
            cursor = 0
            while len(gone) < limit:
                cursor, rows = await self._r.zscan(self._active, cursor, count=_SCAN)
                ids = [_s(g) for g, _ in rows]
                if ids:
                    async with self._r.pipeline(transaction=False) as pipe:
                        for g in ids:
                            pipe.exists(self.key(g, "meta"), self.key(g, "events"))
                        alive = await pipe.execute()
                    gone += [g for g, n in zip(ids, alive, strict=True) if not n]
                if not cursor:
                    break
            found = await self._abandon(gone[:limit])
        if self._cluster:
            await self._relay_all()
        return found

    async def _abandon(self, game_ids: Sequence[str]) -> int:
        """Take expired games out of both indexes, appending the ``abandoned`` summary of
        each one that was active: atomically on a single Redis (:data:`ABANDON_LUA`); on a
        cluster relayed once first (:data:`RELAY_LUA`), then removed from the indexes (a
        crash between the two relays it again, which appends nothing)."""
        n = 0
        for g in game_ids:
            summary = dumps(abandoned_summary(g))
            if self._cluster:
                if await self._r.zscore(self._active, g) is not None:
                    n += int(await self._relay(
                        keys=[self._results_feed, self._results_seen],
                        args=[f"{g} abandoned", g, summary]))
                await self._r.zrem(self._active, g)
                await self._r.zrem(self._index, g)
                if not await self._r.exists(self.key(g, "events"), self.key(g, "meta")):
                    await self._r.delete(self.key(g, "key"))  # its names' key: no expiry
            else:
                n += int(await self._abandon_script(
                    keys=[self._index, self._active, self._results_feed,
                          self.key(g, "events"), self.key(g, "meta"), self.key(g, "key")],
                    args=[g, summary]))
        return n

    async def _relay_all(self) -> int:
        """Relay every summary left in a game's outbox (cluster: scans each primary)."""
        assert isinstance(self._r, RedisCluster)
        pattern = f"{self._prefix}:{{*}}:results"
        n = 0
        for node in self._r.get_primaries():
            cursor = 0
            while True:
                reply = await self._r.execute_command(
                    "SCAN", cursor, "MATCH", pattern, "COUNT", _SCAN, target_nodes=node)
                cursor, keys = reply
                if isinstance(cursor, dict):  # redis-py's cluster SCAN: {node name: cursor}
                    cursor = next(iter(cursor.values()))
                for key in keys:
                    k = _s(key)
                    game_id = k[len(self._prefix) + 2:-len("}:results")]
                    entries: dict[Any, Any] = await self._r.hgetall(k)
                    for version, summary in sorted(entries.items(),
                                                   key=lambda kv: int(_s(kv[0]))):
                        n += await self._relay_outbox(game_id, int(_s(version)), _s(summary))
                if not int(cursor):
                    break
        if n:
            log.info("results feed: relayed %d summaries left in outboxes", n)
        return n
