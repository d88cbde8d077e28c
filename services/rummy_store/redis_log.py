"""The Redis store's :class:`~rummy_store.base.EventLog` and
:class:`~rummy_store.base.RequestLog`: appends through one Lua script, reads by ``XRANGE``
pages, request records (keys in :mod:`rummy_store.redis_store`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError, RedisError, ResponseError

from rummy_store.base import (
    AppendInterrupted,
    AppendResult,
    GameUnlisted,
    RequestIdReused,
    StoredEvent,
    StoreError,
    VersionConflict,
    check_delay,
    check_name,
    check_request_id,
    check_version,
    dumps,
)
from rummy_store.codec import pack_events, unpack
from rummy_store.fanout import StreamHub
from rummy_store.redis_base import RedisBase, _s
from rummy_store.redis_scripts import REQUEST_BUCKETS, parse_record, record, request_slot

__all__ = ["PAGE", "RedisEventLog"]

PAGE = 1000
"""Entries per ``XRANGE`` call."""

# refusals Redis answers before a script runs (nothing of it applied): raised as they are
_BEFORE_RUN = ("NOSCRIPT", "NOPERM", "OOM", "READONLY", "MISCONF", "NOREPLICAS", "BUSY",
               "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "MOVED", "ASK", "CROSSSLOT")


class RedisEventLog(RedisBase):
    """Appends, reads, request records and idempotency windows of the Redis store."""

    async def append(
        self,
        game_id: str,
        events: Sequence[dict[str, Any]],
        expected_version: int,
        *,
        request_id: str | None = None,
        request_hash: str | None = None,
        response: dict[str, Any] | None = None,
        summary: dict[str, Any] | None = None,
    ) -> AppendResult:
        stream = self.key(game_id, "events")
        summary_json = "" if summary is None else dumps(summary)
        check_version("expected_version", expected_version)
        check_request_id(request_id)
        encoded = pack_events(events)
        response_json = dumps(response)
        entry = record(request_hash or "", expected_version + 1,
                       expected_version + len(encoded), response)
        bucket, field = request_slot(request_id) if request_id else ("0", "")
        args: list[Any] = [expected_version, request_id or "", field, request_hash or "",
                           entry, self._idle_ms, 5 + REQUEST_BUCKETS.index(bucket),
                           "1" if self._cluster else "2", self._feed_channel, game_id,
                           len(encoded)]
        args += [text for _, text in encoded]
        base = stream[:-len("events")]  # the game id was checked once, by self.key
        keys = [stream, base + "requests", base + "meta", base + "snapshots",
                *(f"{base}requests:{c}" for c in REQUEST_BUCKETS)]
        if summary_json:  # the results feed (single Redis) or the game's outbox (cluster)
            args.append(summary_json)
            keys.append(base + "results" if self._cluster else self._results_feed)
        if self._unready:
            await self._initialize()
        # this server's subscribers get the events from the reply (StreamHub.append_done)
        hub = self._hub if isinstance(self._hub, StreamHub) else None
        new: tuple[StoredEvent, ...] = ()
        if hub is not None:
            hub.appending(stream)
        try:
            try:
                reply = await self._run_append(keys, args)
            except ResponseError as exc:
                if _before_run(exc):
                    raise
                # the script stopped at a command (a permission the user lacks, say) after
                # it may have written the events and the request record: no roll back in Lua
                raise AppendInterrupted(game_id, request_id, exc) from exc
            status, value = (_s(x) for x in reply)
            if status == "ok":
                ts = int(value) / 1000
                new = tuple(
                    StoredEvent(version=expected_version + i, type=kind, data=unpack(text),
                                ts=ts)
                    for i, (kind, text) in enumerate(encoded, start=1)
                )
        finally:
            if hub is not None:
                hub.append_done(stream, new)
        if status == "ok":
            if expected_version == 0 and new:
                try:
                    await self._register(game_id, ts)
                except RedisError as exc:  # the events stand: say so, not "nothing applied"
                    raise GameUnlisted(game_id, len(new), exc) from exc
            if summary_json and self._cluster:  # the second step (see results_sweep)
                await self._relay_outbox(game_id, expected_version + len(new), summary_json)
            return AppendResult(
                version=expected_version + len(new),
                events=new,
                duplicate=False,
                response=json.loads(response_json),
            )
        if status == "conflict":
            raise VersionConflict(game_id, expected_version, int(value))
        assert request_id is not None
        if status == "reused":
            raise RequestIdReused(game_id, request_id)
        if status == "duplicate":
            prior = parse_record(value)
            first, last = int(prior["first"]), int(prior["last"])
            original = await self.read(game_id, first - 1, last) if last >= first else []
            if first == 1 and original:
                await self._register(game_id, original[0].ts)
            return AppendResult(
                version=last, events=tuple(original), duplicate=True, response=prior["response"]
            )
        raise StoreError(f"unexpected reply from the append script: {status!r}")

    async def _run_append(self, keys: list[str], args: list[Any]) -> Any:
        """The append script's reply: through the group commit on a single Redis
        (:mod:`rummy_store.batching`), loading the script on ``NOSCRIPT`` (a Redis that
        restarted or flushed its scripts; the script did not run, so running it is safe)."""
        if self._batch is None:
            return await self._flushing(self._append(keys=keys, args=args))
        try:
            return await self._flushing(
                self._batch.call("EVALSHA", self._append.sha, len(keys), *keys, *args))
        except NoScriptError:
            return await self._append(keys=keys, args=args)

    async def get_request(
        self, game_id: str, request_id: str, request_hash: str | None = None
    ) -> AppendResult | None:
        check_request_id(request_id)
        if self._unready:
            await self._initialize()
        bucket, field = request_slot(request_id)
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.hget(self.key(game_id, f"requests:{bucket}"), field)
            pipe.hget(self.key(game_id, "requests"), request_id)  # written before the buckets
            found, legacy = await pipe.execute()
        raw = found if found is not None else legacy
        if raw is None:
            return None
        prior = parse_record(_s(raw))
        if prior["hash"] != (request_hash or ""):
            raise RequestIdReused(game_id, request_id)
        first, last = int(prior["first"]), int(prior["last"])
        original = await self.read(game_id, first - 1, last) if last >= first else []
        return AppendResult(version=last, events=tuple(original), duplicate=True,
                            response=prior["response"])

    async def read(
        self, game_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        stream = self.key(game_id, "events")
        check_version("after_version", after_version)
        if to_version is not None:
            check_version("to_version", to_version)
            if to_version <= after_version:
                return []
        high = "+" if to_version is None else f"0-{to_version}"
        out: list[StoredEvent] = []
        low = after_version
        while True:
            if self._unready:
                await self._initialize()
            if self._batch is not None:
                entries = await self._batch.call("XRANGE", stream, f"0-{low + 1}", high,
                                                 "COUNT", PAGE) or []
            else:
                entries = await self._r.xrange(stream, min=f"0-{low + 1}", max=high,
                                               count=PAGE) or []
            out.extend(self._decode(entry) for entry in entries)
            if len(entries) < PAGE:
                return out
            low = out[-1].version

    async def version(self, game_id: str) -> int:
        if self._unready:
            await self._initialize()
        last = await self._r.xrevrange(self.key(game_id, "events"), count=1)
        return self._decode(last[0]).version if last else 0

    async def exists(self, game_id: str) -> bool:
        if self._unready:
            await self._initialize()
        return bool(await self._r.exists(self.key(game_id, "events")))


    async def put_if_absent(self, name: str, value: dict[str, Any],
                            ttl: float) -> dict[str, Any]:
        key = f"{self._prefix}:once:{check_name(name)}"
        if check_delay("ttl", ttl) <= 0:
            raise ValueError(f"ttl must be > 0 seconds, got {ttl!r}")
        if not isinstance(value, dict):
            raise TypeError(f"value must be a dict, got {value!r}")
        text = dumps(value)
        if self._unready:
            await self._initialize()
        if await self._r.set(key, text, nx=True, px=max(1, int(ttl * 1000))):
            return dict(json.loads(text))
        prior = await self._r.get(key)
        if prior is None:  # expired between the two calls: try once more
            return await self.put_if_absent(name, value, ttl)
        return dict(json.loads(_s(prior)))



def _before_run(exc: ResponseError) -> bool:
    """True when Redis refused the append script before it ran (nothing written: redis-py
    raises a subclass for most such codes, ``NoPermissionError``, ``OutOfMemoryError``,
    ...), or the script refused on purpose before writing (a foreign entry id)."""
    text = str(exc)
    return type(exc) is not ResponseError or text.split(" ", 1)[0] in _BEFORE_RUN \
        or "rummy event store:" in text
