"""The Redis store's :class:`~rummy_store.creators.CreatorIndex`: three sorted sets per
creator, score = the game's creation time, in one slot (a hash tag of the creator's
digest, so that a transaction may touch all three on a Redis Cluster):

* ``P:creator:{P:c:<digest>}:all`` — every game the creator created;
* ``P:creator:{P:c:<digest>}:active`` — those not seen finished yet;
* ``P:creator:{P:c:<digest>}:finished`` — those seen finished.

A game enters ``all`` and ``active`` together. A game leaves the store's active games
(``P:games:active``) when it ends, in a step that knows nothing of creators; a listing of
``active`` or ``finished`` games first moves the creator's games that ended from
``active`` to ``finished`` (one ``ZMSCORE`` of its active ids against ``P:games:active``,
then a transaction on the creator's slot), so each listing reads the creator's own entries
only. A game whose keys are gone (expired while idle, or moved to the archive) leaves all
three when a listing meets it: a listing holds the games still in Redis.
"""

from __future__ import annotations

from typing import Any

from rummy_store.base import check_game_id
from rummy_store.creators import UnknownCursor, check_listing, creator_tag
from rummy_store.redis_base import RedisBase, _s

__all__ = ["RedisCreators"]

_BATCH = 200  #: entries read per round trip while a page fills


class RedisCreators(RedisBase):
    """The per-creator index of the Redis store."""

    def _creator_keys(self, creator: str) -> tuple[str, str, str]:
        """``(all, active, finished)`` keys of ``creator``, in one slot."""
        base = f"{self._prefix}:creator:{{{self._prefix}:c:{creator_tag(creator)}}}"
        return f"{base}:all", f"{base}:active", f"{base}:finished"

    async def add_created(self, creator: str, game_id: str, created: float) -> None:
        """See :meth:`rummy_store.creators.CreatorIndex.add_created`."""
        check_listing(creator, 0, "all")
        check_game_id(game_id)
        every, active, _ = self._creator_keys(creator)
        if self._unready:
            await self._initialize()
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.zadd(every, {game_id: float(created)}, nx=True)
            pipe.zadd(active, {game_id: float(created)}, nx=True)
            await pipe.execute()

    async def _alive(self, ids: list[str]) -> list[bool]:
        """Whether each game still has its keys: not expired while idle, and not moved to
        the archive by retention (:mod:`rummy_store.retention`, with or without an idle
        expiry)."""
        if not ids:
            return []
        async with self._r.pipeline(transaction=False) as pipe:
            for g in ids:
                pipe.exists(self.key(g, "meta"), self.key(g, "events"))
            return [bool(n) for n in await pipe.execute()]

    async def _forget(self, creator: str, ids: list[str]) -> None:
        """Take games whose keys are gone out of the creator's index."""
        async with self._r.pipeline(transaction=True) as pipe:
            for k in self._creator_keys(creator):
                pipe.zrem(k, *ids)
            await pipe.execute()

    async def _settle(self, creator: str) -> None:
        """Move the creator's games that ended from ``active`` to ``finished``, and drop
        the ones whose keys are gone (expired or archived)."""
        _, active, finished = self._creator_keys(creator)
        rows: list[Any] = await self._r.zrange(active, 0, -1, withscores=True)
        if not rows:
            return
        ids = [_s(g) for g, _ in rows]
        still = await self._r.zmscore(self._active, ids)
        alive = await self._alive(ids)
        gone = [g for g, a in zip(ids, alive, strict=True) if not a]
        ended = [(g, score) for g, (_, score), s, a in zip(ids, rows, still, alive, strict=True)
                 if s is None and a]
        if gone:
            await self._forget(creator, gone)
        if ended:
            async with self._r.pipeline(transaction=True) as pipe:
                for g, score in ended:
                    pipe.zrem(active, g)
                    pipe.zadd(finished, {g: score}, nx=True)
                await pipe.execute()

    async def list_created(self, creator: str, *, limit: int, after: str | None = None,
                           state: str = "all") -> list[str]:
        """See :meth:`rummy_store.creators.CreatorIndex.list_created`."""
        check_listing(creator, limit, state)
        if limit == 0:
            return []
        if self._unready:
            await self._initialize()
        every, active, finished = self._creator_keys(creator)
        if state != "all":
            await self._settle(creator)
        key = {"all": every, "active": active, "finished": finished}[state]
        top: Any = "+inf"
        if after is not None:
            score = await self._r.zscore(every, after)
            if score is None:
                raise UnknownCursor(after)
            top = score
        out: list[str] = []
        offset = 0
        while len(out) < limit:
            rows: list[Any] = await self._r.zrevrangebyscore(
                key, top, "-inf", start=offset, num=_BATCH, withscores=True)
            if not rows:
                break
            offset += len(rows)
            ids = [_s(g) for g, score in rows
                   if after is None or score < top or _s(g) < after]  # ties: by id desc
            if state == "all" and ids:  # a game whose keys are gone leaves the index
                alive = await self._alive(ids)
                gone = [g for g, a in zip(ids, alive, strict=True) if not a]
                if gone:
                    await self._forget(creator, gone)
                    offset -= len(gone)
                    ids = [g for g in ids if g not in gone]
            out += ids
        return out[:limit]
