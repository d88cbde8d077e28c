"""Erasure of a game's personal data (its seat names) wherever the store keeps it
(docs/security.md, "Personal data and erasure").

:func:`erase_game` makes every copy of the names unreadable, and the game still replays
(its events stay; only the names read :data:`~rummy_store.shred.ERASED`):

- **sealed copies** (games written with sealing: every event, snapshot, meta and summary
  since) need nothing but the key: it is replaced by a tombstone in Redis and set NULL in
  the archive's ``game_keys`` (one row, made if missing, so that a later move of the game
  cannot bring the key back);
- **plaintext copies** (games written before sealing) are rewritten: the ``GameStarted``
  entries of the Redis stream (the stream is copied with those entries redacted and
  renamed over the old one, in one script), the meta (names replaced), the snapshots
  (deleted: a cache, rebuilt from the events), the results-feed entries of the game (a
  Redis stream entry cannot be changed: each is appended again redacted, then deleted,
  so consumer groups see it once more under a new id), and the archive's row and feed
  rows (updated in one transaction).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rummy_store.archive import canonical_events
from rummy_store.codec import pack
from rummy_store.sealed import GameStore
from rummy_store.shred import (
    ERASED,
    TOMBSTONE,
    is_sealed,
    transform_meta,
    transform_record,
    transform_summary,
)
from rummy_store.values import StoredEvent

__all__ = ["REWRITE_LUA", "Erased", "erase_game"]

#: Copy a game's stream with some entries' ``data`` replaced, then rename the copy over it.
#: KEYS: the stream, a scratch key (same slot). ARGV: entry id, new data, ... Keeps the
#: stream's expiry. Returns the entries copied.
REWRITE_LUA = r"""
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[2])
local repl = {}
for i = 1, #ARGV, 2 do repl[ARGV[i]] = ARGV[i + 1] end
local cursor, n = '-', 0
while true do
  local rows = redis.call('XRANGE', KEYS[1], cursor, '+', 'COUNT', 1000)
  if #rows == 0 then break end
  for _, e in ipairs(rows) do
    local f, args = e[2], {}
    for j = 1, #f, 2 do
      local v = f[j + 1]
      if f[j] == 'data' and repl[e[1]] then v = repl[e[1]] end
      args[#args + 1] = f[j]
      args[#args + 1] = v
    end
    redis.call('XADD', KEYS[2], e[1], unpack(args))
    n = n + 1
  end
  cursor = '(' .. rows[#rows][1]
end
if n > 0 then
  redis.call('RENAME', KEYS[2], KEYS[1])
  if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
end
return n
"""


@dataclass
class Erased:
    """What :func:`erase_game` did: where the game was (``in_redis``, ``in_archive``), and
    the plaintext copies it rewrote (``events``, ``meta``, ``snapshots`` deleted,
    ``feed_entries``, ``archive_rows``)."""

    game_id: str
    in_redis: bool
    in_archive: bool
    rewritten: dict[str, int] = field(default_factory=dict)


def _erase(value: str, _field: str) -> str:
    return value if is_sealed(value) else ERASED


def _plain_names(e: StoredEvent) -> bool:
    return e.type == "GameStarted" and any(
        isinstance(n, str) and not is_sealed(n) and n != ERASED
        for n in e.data.get("names") or [])


async def erase_game(store: GameStore, game_id: str) -> Erased | None:
    """Erase ``game_id``'s seat names everywhere (see the module). Idempotent.

    Returns:
        What was done, or None when no store holds the game.
    """
    inner: Any = store.inner
    redis = hasattr(inner, "client")
    in_redis = await inner.exists(game_id)
    archived = await store.archive.game(game_id) if store.archive is not None else None
    if not in_redis and archived is None:
        return None
    out = Erased(game_id, in_redis, archived is not None)
    if in_redis or not store.archive:
        await store.vault.erase(game_id)
    if in_redis:
        await _rewrite_redis(store, game_id, out)
    if store.archive is not None:
        redacted = None
        if archived is not None:
            info, events = archived
            plain = [e for e in events if _plain_names(e)]
            meta = info.meta
            seats = (meta or {}).get("seats") or []
            if plain or any(isinstance(s, dict) and not is_sealed(s.get("name"))
                            and s.get("name") != ERASED for s in seats):
                events = [StoredEvent(e.version, e.type, transform_record(e.data, _erase), e.ts)
                          for e in events]
                meta = None if meta is None else transform_meta(meta, _erase)
                redacted = (canonical_events(events), len(events), meta)
        rows = []
        for entry_id, summary in await store.archive.results(game_id):
            redone = transform_summary(summary, _erase)
            if redone != summary:
                rows.append((entry_id, json.dumps(redone, separators=(",", ":"))))
        await store.archive.erase(game_id, redacted, rows)
        out.rewritten["archive_rows"] = int(redacted is not None) + len(rows)
    if redis:
        out.rewritten["feed_entries"] = await _rewrite_feed(store, game_id)
    store.remember_key(game_id, TOMBSTONE)
    return out


async def _rewrite_redis(store: GameStore, game_id: str, out: Erased) -> None:
    """The plaintext copies in Redis (or in the memory store): stream, meta, snapshots."""
    inner: Any = store.inner
    events = await inner.read(game_id)
    plain = [e for e in events if _plain_names(e)]
    meta = await inner.get_meta(game_id)
    if meta is not None:
        redone = transform_meta(meta, _erase)
        if redone != meta:
            await inner.put_meta(game_id, redone)
            out.rewritten["meta"] = 1
    if not hasattr(inner, "client"):  # the memory store: its records in place
        game = inner._games.get(game_id)
        if game is not None:
            for i, e in enumerate(game.events):
                if _plain_names(e):
                    game.events[i] = StoredEvent(e.version, e.type,
                                                 transform_record(e.data, _erase), e.ts)
        out.rewritten["snapshots"] = int(inner._snapshots.pop(game_id, None) is not None)
        out.rewritten["events"] = len(plain)
        return
    r = inner.client
    if plain:
        args: list[str] = []
        for e in plain:
            args += [f"0-{e.version}", pack(transform_record(e.data, _erase))]
        await r.eval(REWRITE_LUA, 2, inner.key(game_id, "events"),
                     inner.key(game_id, "events:erasing"), *args)
    out.rewritten["events"] = len(plain)
    out.rewritten["snapshots"] = int(await r.delete(inner.key(game_id, "snapshots")))


async def _rewrite_feed(store: GameStore, game_id: str) -> int:
    """Append again, redacted, then delete the game's feed entries with plaintext names."""
    inner: Any = store.inner
    r = inner.client
    feed = inner._results_feed
    n = 0
    cursor = "-"
    while True:
        rows = await r.xrange(feed, cursor, "+", count=1000)
        if not rows:
            return n
        for entry_id, fields in rows:
            f = {(k.decode() if isinstance(k, bytes) else k):
                 (v.decode() if isinstance(v, bytes) else v) for k, v in fields.items()}
            if f.get("g") != game_id:
                continue
            summary = json.loads(f.get("s") or "{}")
            redone = transform_summary(summary, _erase)
            if redone != summary:
                await r.xadd(feed, {"g": game_id, "s": json.dumps(redone,
                                                                  separators=(",", ":"))})
                await r.xdel(feed, entry_id)
                n += 1
        last = rows[-1][0]
        cursor = "(" + (last.decode() if isinstance(last, bytes) else last)
