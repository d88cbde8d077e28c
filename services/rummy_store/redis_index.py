"""The Redis store's :class:`~rummy_store.base.GameIndex` (``P:{G}:meta``, ``P:games``,
``P:games:active``) and :class:`~rummy_store.base.SnapshotLog` (``P:{G}:snapshots``)."""

from __future__ import annotations

import json
from typing import Any

from rummy_store.base import check_game_id, check_version, dumps, serialise_snapshot
from rummy_store.redis_base import RedisBase, _s
from rummy_store.redis_results import RedisResults
from rummy_store.redis_scripts import REQUEST_BUCKETS

__all__ = ["RedisGameIndex", "RedisSnapshots"]


class RedisGameIndex(RedisResults):
    """Game metadata and the index of games of the Redis store."""

    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        key = self.key(game_id, "meta")
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict, got {meta!r}")
        if self._unready:
            await self._initialize()
        await self._r.set(key, dumps(meta), px=self._idle_ms or None)

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        if self._unready:
            await self._initialize()
        text = await self._r.get(self.key(game_id, "meta"))
        return None if text is None else json.loads(_s(text))

    async def list_games(self, *, limit: int = 100, active_only: bool = False) -> list[str]:
        if limit <= 0:
            return []
        key = self._active if active_only else self._index
        out: list[str] = []
        start = 0
        while len(out) < limit:
            if self._unready:
                await self._initialize()
            ids = [_s(g) for g in await self._r.zrevrange(key, start, start + limit - 1)]
            if not ids:
                return out
            if not self._idle_ms:
                return ids[:limit]
            async with self._r.pipeline(transaction=False) as pipe:
                for g in ids:
                    pipe.exists(self.key(g, "meta"), self.key(g, "events"))
                alive = await pipe.execute()
            gone = [g for g, n in zip(ids, alive, strict=True) if not n]
            if gone:  # expired while idle: out of the index for good, abandoned if active
                await self._abandon(gone)
                start -= len(gone)
            out += [g for g, n in zip(ids, alive, strict=True) if n]
            start += len(ids)
        return out[:limit]

    async def set_active(self, game_id: str, active: bool) -> bool:
        """See :meth:`EventStore.set_active`. On a single Redis, finishing a game is one
        MULTI/EXEC. On a cluster the active set and the game's keys are in different slots,
        so it is two steps, each idempotent: first the game's keys are made permanent (one
        MULTI/EXEC on the game's slot), then the game leaves ``P:games:active``. A crash
        between the two leaves a finished, kept game still listed as active until
        ``set_active(False)`` is retried; never an active-listed game whose keys expire."""
        check_game_id(game_id)
        if not active and self._cluster:
            if self._unready:
                await self._initialize()
            async with self._r.pipeline(transaction=True) as pipe:
                self._keep(pipe, game_id)
                await pipe.execute()
            return bool(await self._r.zrem(self._active, game_id))
        if not active:  # finished: kept for good, its request records for the window only
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.zrem(self._active, game_id)
                self._keep(pipe, game_id)
                removed, *_ = await pipe.execute()
            return bool(removed)
        score = await self._r.zscore(self._index, game_id)
        if score is None:
            score = await self.now()
            await self._r.zadd(self._index, {game_id: score}, nx=True)
        return not await self._r.zadd(self._active, {game_id: score}, nx=True)

    def _keep(self, pipe: Any, game_id: str) -> None:
        """Queue, on ``pipe``, what finishing keeps: the game's keys without expiry, its
        request records for the request window only."""
        for kind in ("events", "meta", "snapshots"):
            pipe.persist(self.key(game_id, kind))
        for kind in ("requests", *(f"requests:{c}" for c in REQUEST_BUCKETS)):
            if self._request_ms:
                pipe.pexpire(self.key(game_id, kind), self._request_ms)
            else:
                pipe.persist(self.key(game_id, kind))



class RedisSnapshots(RedisBase):
    """Snapshots of the Redis store: one sorted set per game, score = stream version."""

    async def put_snapshot(self, game_id: str, version: int, data: dict[str, Any]) -> None:
        key = self.key(game_id, "snapshots")
        member = f"{version}:{serialise_snapshot(version, data)}"
        if self._unready:
            await self._initialize()
        ttl = await self._r.pttl(self.key(game_id, "events")) if self._idle_ms else -1
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, version, version)
            pipe.zadd(key, {member: version})
            if ttl > 0:  # an active game's snapshots expire with it
                pipe.pexpire(key, ttl)
            await pipe.execute()

    async def get_snapshot(self, game_id: str,
                           max_version: int) -> tuple[int, dict[str, Any]] | None:
        key = self.key(game_id, "snapshots")
        check_version("max_version", max_version)
        if self._unready:
            await self._initialize()
        found = await self._r.zrevrangebyscore(key, max_version, "-inf", start=0, num=1)
        if not found:
            return None
        version, _, text = _s(found[0]).partition(":")
        return int(version), json.loads(text)

