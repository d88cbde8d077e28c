"""Retention: finished games, and the results feed's acknowledged entries, move from Redis to
the archive once older than the retention period (``rummy serve --retain-finished``;
docs/operations.md, "Retention and the archive").

**A game's move** (:meth:`Archiver.move`), safe under a kill of the mover, of Redis or of
PostgreSQL at any point:

1. read the game from Redis: its events, meta, key (:mod:`rummy_store.shred`) and index
   score; it must be finished (not in the active index) with its last event older than
   the retention period;
2. write the archive's rows in one PostgreSQL transaction (replacing an older copy);
3. verify: ask PostgreSQL for the stored row's event count and ``sha256(events)`` and
   compare them with the copy read in step 1;
4. delete the game's Redis keys and index entries in one Lua script
   (:data:`DROP_LUA`), which first checks that the stream still ends at the version
   archived (a game that changed is left in Redis and copied again by a later pass).

Until step 4 the game is in Redis (and, after step 2, in both: readers prefer Redis,
:class:`rummy_store.sealed.GameStore`); after it, in the archive only. A crash between 2
and 4 leaves both copies; the next pass finds the game again, finds the archive's copy
equal, and does step 4. A Redis that loses the delete (a restart from an older AOF or
RDB) brings back the Redis copy, which a later pass drops again. The game is never in
neither place: the delete runs only after PostgreSQL committed (durable) and showed the
same count and hash.

**The results feed** is trimmed of the entries that every consumer group has acknowledged
and that are older than the retention period (:meth:`Archiver.trim_feed`): they are copied
to the archive's ``results`` table, counted back, and only then ``XTRIM MINID`` -ed. A
group that lags or holds unacknowledged entries keeps them (and everything after) in
Redis. A group created later with ``start="0"`` starts after the trimmed entries; the
game's summaries stay readable by game (:meth:`rummy_store.sealed.GameStore.
results_history`).

Single Redis and Redis Cluster: on a cluster the game's keys go in the script and the index
entries right after (a crash in between leaves an index entry without keys, which the next
pass removes once it finds the archive's copy). On both, the game's entries in its
creator's index (:mod:`rummy_store.redis_creators`, another slot) go after the script; a
crash in between leaves entries without keys, which the creator's next listing drops.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from rummy_store.archive import ArchivedGame, canonical_events
from rummy_store.redis_scripts import REQUEST_BUCKETS
from rummy_store.sealed import GameStore
from rummy_store.shred import TOMBSTONE

__all__ = ["DROP_LUA", "Archiver", "PassResult"]

log = logging.getLogger("rummy_store.retention")

#: Delete an archived game from Redis. KEYS: the stream, then the game's other keys; with
#: ARGV[3] == "1" the last three KEYS are the index, the active index and the due set
#: (single Redis). ARGV: [1] the version archived, [2] the game id, [3] "1" or "0". Deletes
#: nothing and returns 0 when the stream does not end at that version or the game is
#: active again; else deletes everything and returns 1.
DROP_LUA = r"""
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last == 0 or last[1][1] ~= '0-' .. ARGV[1] then return 0 end
local n = #KEYS
if ARGV[3] == '1' then
  if redis.call('ZSCORE', KEYS[n - 1], ARGV[2]) then return 0 end
  redis.call('ZREM', KEYS[n - 2], ARGV[2])
  redis.call('ZREM', KEYS[n], ARGV[2])
  n = n - 3
end
for i = 1, n do redis.call('DEL', KEYS[i]) end
return 1
"""

_KINDS = ("events", "requests", "meta", "snapshots",
          *(f"requests:{c}" for c in REQUEST_BUCKETS), "results", "key")


@dataclass
class PassResult:
    """One pass of the mover: games ``moved`` to the archive, ``backlog`` (games found
    eligible and not moved in this pass), ``failed`` moves, ``trimmed`` feed entries and
    ``oldest`` (seconds past the retention of the oldest eligible game seen; 0: none)."""

    moved: int = 0
    backlog: int = 0
    failed: int = 0
    trimmed: int = 0
    oldest: float = 0.0


class Archiver:
    """Moves finished games from a Redis :class:`GameStore` to its archive (see the module).

    Args:
        store: a :class:`GameStore` on Redis with an archive.
        retain: seconds a finished game stays in Redis after its last event (> 0).
        batch: most games moved by one pass.
        scan: most index entries looked at by one pass.

    Raises:
        ValueError: no archive, not a Redis store, ``retain`` <= 0.
    """

    def __init__(self, store: GameStore, retain: float, *, batch: int = 200,
                 scan: int = 2000) -> None:
        if store.archive is None:
            raise ValueError("retention needs an archive (--archive-url)")
        if not hasattr(store.inner, "client"):
            raise ValueError("retention needs the Redis store")
        if not retain > 0:
            raise ValueError(f"retain must be > 0 seconds, got {retain!r}")
        self.store = store
        self.archive = store.archive
        self.redis: Any = store.inner
        self.retain = float(retain)
        self.batch = batch
        self.scan = scan
        self._offset = 0
        self._drop = self.redis.client.register_script(DROP_LUA)

    def _index(self) -> tuple[str, str, str]:
        p = self.redis.prefix
        return f"{p}:games", f"{p}:games:active", f"{p}:due"

    async def run_once(self) -> PassResult:
        """One pass: move up to ``batch`` eligible games, then trim the feed."""
        out = PassResult()
        r = self.redis.client
        index, active, _ = self._index()
        now = await self.redis.now()
        cut = now - self.retain
        ids = [g.decode() if isinstance(g, bytes) else str(g) for g in await r.zrangebyscore(
            index, "-inf", cut, start=self._offset, num=self.scan)]
        if len(ids) < self.scan:
            self._offset = 0  # the end of the old part of the index: start over next pass
        eligible: list[tuple[str, float, float]] = []
        skipped = 0
        if ids:
            async with r.pipeline(transaction=False) as pipe:
                for g in ids:
                    pipe.zscore(active, g)
                    pipe.xrevrange(self.redis.key(g, "events"), "+", "-", count=1)
                    pipe.zscore(index, g)
                got = await pipe.execute()
            for i, g in enumerate(ids):
                is_active, last, entered = got[3 * i: 3 * i + 3]
                if is_active is not None:
                    skipped += 1
                    continue
                if not last:  # keys gone: an interrupted move's index entry, or expired
                    if await self.archive.has_game(g):
                        await self._unlist(g)
                    else:
                        skipped += 1
                    continue
                fields = {(k.decode() if isinstance(k, bytes) else k):
                          (v.decode() if isinstance(v, bytes) else v)
                          for k, v in last[0][1].items()}
                ts = int(fields["t"]) / 1000 if "t" in fields else float(fields.get("ts", 0))
                if ts > cut:
                    skipped += 1
                    continue
                eligible.append((g, float(entered or 0.0), ts))
        if len(ids) >= self.scan:
            self._offset += skipped
        if eligible:
            out.oldest = max(0.0, cut - min(ts for _, _, ts in eligible))
        for g, entered, ts in eligible[:self.batch]:
            try:
                out.moved += await self.move(g, entered, ts)
            except Exception as exc:  # noqa: BLE001 - one game's failure: the next pass retries
                out.failed += 1
                log.warning("archive: game %s not moved (the next pass retries): %s: %s",
                            g, type(exc).__name__, exc)
        out.backlog = len(eligible) - out.moved
        try:
            out.trimmed = await self.trim_feed(cut)
        except Exception as exc:  # noqa: BLE001
            log.warning("archive: results feed not trimmed: %s: %s", type(exc).__name__, exc)
        return out

    async def move(self, game_id: str, entered: float, finished: float) -> int:
        """Move one finished game (steps 1-4 of the module). Returns 1 when its Redis keys
        were deleted, 0 when the game changed meanwhile (it stays in Redis).

        Raises:
            RuntimeError: the archive's copy did not verify (nothing deleted).
            Connection errors of Redis or PostgreSQL (nothing deleted, or the delete's
            outcome unknown: the next pass finds out).
        """
        events = await self.redis.read(game_id)
        if not events:
            return 0
        meta = await self.redis.get_meta(game_id)
        key = await self.store.vault.get(game_id)
        blob = canonical_events(events)
        digest = hashlib.sha256(blob).digest()
        n = events[-1].version
        if n != len(events):
            raise RuntimeError(f"game {game_id}: {len(events)} events up to version {n}")
        if await self.archive.checksum(game_id) != (n, digest):
            row = ArchivedGame(game_id, n, digest, meta, entered, finished)
            await self.archive.put_game(row, blob, None if key == TOMBSTONE else key,
                                        key_known=key is not None)
        if await self.archive.checksum(game_id) != (n, digest):
            raise RuntimeError(f"game {game_id}: the archive's copy does not verify")
        if key is not None:
            known, archived = await self.archive.key(game_id)
            if not known or archived != (None if key == TOMBSTONE else key):
                raise RuntimeError(f"game {game_id}: the archive's key does not verify")
        creator = (meta or {}).get("creator")
        return await self._delete(game_id, n, creator if isinstance(creator, str) else None)

    async def _delete(self, game_id: str, n: int, creator: str | None = None) -> int:
        keys = [self.redis.key(game_id, k) for k in _KINDS]
        if self.redis.is_cluster:
            done = int(await self._drop(keys=keys, args=[n, game_id, "0"]))
            if done:
                await self._unlist(game_id)
        else:
            done = int(await self._drop(keys=[*keys, *self._index()], args=[n, game_id, "1"]))
        if done:
            self.store.remember_key(game_id, None)
            if creator and hasattr(self.redis, "_forget"):  # its per-creator index entries
                await self.redis._forget(creator, [game_id])
        return done

    async def _unlist(self, game_id: str) -> None:
        index, active, due = self._index()
        r = self.redis.client
        await r.zrem(due, game_id)
        if await r.zscore(active, game_id) is None:
            await r.zrem(index, game_id)

    async def trim_feed(self, cut: float, *, limit: int = 1000) -> int:
        """Copy to the archive and trim from Redis up to ``limit`` feed entries older than
        ``cut`` (epoch seconds) that every group has acknowledged. Returns how many."""
        r = self.redis.client
        feed = self.redis._results_feed
        bound = (int(cut * 1000), 0)  # entries with an id below this
        try:
            groups = await r.xinfo_groups(feed)
        except Exception:  # noqa: BLE001 - no feed yet
            return 0
        for g in groups:
            info = {(k.decode() if isinstance(k, bytes) else k): v for k, v in g.items()}
            name = info["name"]
            if int(info.get("pending") or 0):
                summary = await r.xpending(feed, name)
                low = summary.get("min")
                if low:
                    bound = min(bound, _id(low))
            last = _id(info.get("last-delivered-id") or "0-0")
            bound = min(bound, (last[0], last[1] + 1))
        if bound <= (0, 0):
            return 0
        rows = await r.xrange(feed, "-", f"({bound[0]}-{bound[1]}", count=limit)
        if not rows:
            return 0
        out = []
        for entry_id, fields in rows:
            f = {(k.decode() if isinstance(k, bytes) else k):
                 (v.decode() if isinstance(v, bytes) else v) for k, v in fields.items()}
            out.append((entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
                        f.get("g", ""), f.get("s", "{}")))
        await self.archive.put_results(out)
        if await self.archive.count_results([i for i, _, _ in out]) != len(out):
            raise RuntimeError("the archive's copy of the feed entries does not verify")
        ms, seq = _id(out[-1][0])
        return int(await r.xtrim(feed, minid=f"{ms}-{seq + 1}", approximate=False))


def _id(entry_id: Any) -> tuple[int, int]:
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)
