"""The Redis store's :class:`~rummy_store.base.DueSchedule`: the sorted set ``P:due``
(game id -> when the service must act on it, Redis clock), written and claimed by Lua
scripts (:data:`~rummy_store.redis_scripts.SCHEDULE_LUA`,
:data:`~rummy_store.redis_scripts.CLAIM_LUA`)."""

from __future__ import annotations

from rummy_store.base import check_claim, check_delay, check_game_id
from rummy_store.redis_base import RedisBase, _s

__all__ = ["RedisSchedule"]


class RedisSchedule(RedisBase):
    """The due games of the Redis store, shared by every replica."""

    async def schedule(self, game_id: str, delay: float, *, only_earlier: bool = False) -> None:
        check_game_id(game_id)
        seconds = check_delay("delay", delay)
        if self._unready:
            await self._initialize()
        await self._schedule(keys=[self._due],
                             args=[game_id, repr(seconds), "1" if only_earlier else "0"])

    async def unschedule(self, game_id: str) -> None:
        if self._unready:
            await self._initialize()
        await self._r.zrem(self._due, check_game_id(game_id))

    async def claim_due(self, lease: float, *, limit: int = 64,
                        game_id: str | None = None) -> list[str]:
        check_claim(lease, limit)
        one = "" if game_id is None else check_game_id(game_id)
        if self._unready:
            await self._initialize()
        ids = await self._flushing(self._claim(keys=[self._due],
                                               args=[repr(float(lease)), limit, one]))
        return [_s(g) for g in ids]

    async def due(self, game_id: str) -> float | None:
        if self._unready:
            await self._initialize()
        score = await self._r.zscore(self._due, check_game_id(game_id))
        return None if score is None else float(score)

