"""The Redis store's Lua scripts, request records and access probes (no I/O here).

The data layout is described in :mod:`rummy_store.redis_store`; nothing here may change a
key name or a stored encoding (every stored game must still read).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from rummy_store.checks import dumps
from rummy_store.feed import feed_channel

__all__ = ["ABANDON_LUA", "ACCESS_LUA", "APPEND_LUA", "CLAIM_LUA", "FEED_CLAIM_LUA",
           "RELAY_LUA", "REQUEST_BUCKETS", "SCHEDULE_LUA",
           "access_probes", "parse_record", "record", "request_slot"]

#: The append script. KEYS: stream, the legacy requests hash (records written before the
#: buckets), meta, snapshots, then the game's request-record buckets (:data:`REQUEST_BUCKETS`,
#: in order); every key of the game gets the idle expiry after a successful append.
#: ARGV: [1] expected version, [2] request id ("" for none), [3] its field in its bucket,
#: [4] request hash, [5] request record, [6] the idle expiry in ms (0: none), [7] the index
#: in KEYS of the request's bucket, [8] "1" to ``SPUBLISH`` the new version on the stream
#: key's sharded channel (cluster stores), or "2" to ``PUBLISH`` ``"<game id> <new version>"``
#: on the channel [9] (single-Redis stores: :mod:`rummy_store.feed`), anything else: no
#: publish, [10] the game id, [11] n, then the stored text of each of the n events, then
#: [12 + n] the results-feed summary as JSON ("" or absent: none). With a summary, KEYS[13]
#: is the results feed (single Redis: the summary is ``XADD``-ed there, ``g`` = game id,
#: ``s`` = summary) or, on a cluster, the game's outbox hash ``P:{G}:results`` (field: the new
#: version; :data:`RELAY_LUA` moves it to the feed in a second step). Only the first twelve
#: keys (the game's data) get the idle expiry.
#: Returns {"ok", ms} | {"duplicate", record} | {"reused", record} | {"conflict", version}.
APPEND_LUA = r"""
local stream, legacy = KEYS[1], KEYS[2]
local bucket = KEYS[tonumber(ARGV[7])]
local expected = tonumber(ARGV[1])
local rid, field, rhash, record = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[11])
if rid ~= '' then
  local prior = redis.call('HGET', bucket, field)
  if not prior then prior = redis.call('HGET', legacy, rid) end
  if prior then
    local hash
    if string.sub(prior, 1, 1) == '{' then  -- a JSON record (with a response blob)
      local ok, decoded = pcall(cjson.decode, prior)
      if ok then hash = decoded['hash'] end
    else  -- a compact record: hash|first|last
      hash = string.match(prior, '^([^|]*)|')
    end
    if hash == rhash then
      return {'duplicate', prior}
    end
    return {'reused', prior}
  end
end
local actual = 0
local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
if #last > 0 then
  actual = tonumber(string.match(last[1][1], '^0%-(%d+)$'))
  if not actual then
    return redis.error_reply('ERR rummy event store: foreign entry id ' .. last[1][1])
  end
end
if actual ~= expected then
  return {'conflict', tostring(actual)}
end
local t = redis.call('TIME')
local ms = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
for i = 1, n do
  redis.call('XADD', stream, '0-' .. tostring(expected + i), 'data', ARGV[11 + i], 't', ms)
end
if rid ~= '' then
  redis.call('HSET', bucket, field, record)
end
local summary = ARGV[12 + n]
if summary and summary ~= '' and KEYS[13] then
  if ARGV[8] == '1' then  -- a cluster: the game's outbox (same slot), relayed after
    redis.call('HSET', KEYS[13], tostring(expected + n), summary)
  else  -- a single Redis: the feed itself, in this atomic step
    redis.call('XADD', KEYS[13], '*', 'g', ARGV[10], 's', summary)
  end
end
local ttl = tonumber(ARGV[6])
if ttl and ttl > 0 then
  for i = 1, math.min(#KEYS, 12) do redis.call('PEXPIRE', KEYS[i], ttl) end
end
if ARGV[8] == '1' then  -- a cluster store: wake the hub (sharded pub/sub, Redis 7)
  redis.call('SPUBLISH', stream, tostring(expected + n))
elseif ARGV[8] == '2' then  -- a single Redis: tell every server's append feed
  redis.call('PUBLISH', ARGV[9], ARGV[10] .. ' ' .. tostring(expected + n))
end
return {'ok', ms}
"""

#: An abandoned game (single Redis). KEYS: the index, the active index, the results feed,
#: the game's events, its meta, optionally the key of its sealed names
#: (:mod:`rummy_store.shred`, no expiry of its own). ARGV: game id, summary JSON. When the
#: game's keys are gone (expired while idle) it leaves both indexes, its names' key is
#: deleted and, if it was active, its summary is appended to the feed, in one atomic step.
#: Returns 1 when a summary was appended.
ABANDON_LUA = r"""
if redis.call('EXISTS', KEYS[4], KEYS[5]) > 0 then return 0 end
if KEYS[6] then redis.call('DEL', KEYS[6]) end
local was = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if was == 1 then redis.call('XADD', KEYS[3], '*', 'g', ARGV[1], 's', ARGV[2]) end
return was
"""

#: Relay a summary to the feed exactly once (a cluster's second step). KEYS: the results
#: feed, its set of relayed summaries (same slot). ARGV: a member naming the summary
#: (``"<game id> <version>"`` or ``"<game id> abandoned"``), game id, summary JSON.
#: Returns 1 when appended, 0 when it was relayed before.
RELAY_LUA = r"""
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[1], '*', 'g', ARGV[2], 's', ARGV[3])
return 1
"""

#: Take over a group's entries pending longer than the lease (``XAUTOCLAIM``), parking those
#: delivered too often. KEYS: the feed, the group's parked stream (same slot). ARGV: group,
#: consumer, lease (ms), count, max deliveries. An entry whose delivery count after the
#: claim exceeds the maximum is copied to the parked stream (``id``, ``s``, ``n`` the
#: deliveries it had, ``c`` the consumer that found it) and acknowledged. Returns the
#: claimed entries as {id, summary, deliveries}.
FEED_CLAIM_LUA = r"""
local feed, parked = KEYS[1], KEYS[2]
local group, consumer, maxd = ARGV[1], ARGV[2], tonumber(ARGV[5])
local r = redis.call('XAUTOCLAIM', feed, group, consumer, ARGV[3], '0-0', 'COUNT', ARGV[4])
local out = {}
for _, e in ipairs(r[2]) do
  if e and e[1] then
    local id, f, s = e[1], e[2], ''
    for i = 1, #f, 2 do if f[i] == 's' then s = f[i + 1] end end
    local p = redis.call('XPENDING', feed, group, id, id, 1)
    local n = 1
    if p[1] then n = tonumber(p[1][4]) end
    if n > maxd then
      redis.call('XADD', parked, '*', 'id', id, 's', s, 'n', tostring(n - 1), 'c', consumer)
      redis.call('XACK', feed, group, id)
    else
      out[#out + 1] = {id, s, tostring(n)}
    end
  end
end
return out
"""

#: Record a due time. KEYS: due set. ARGV: game id, delay (s), "1" to keep an earlier one.
SCHEDULE_LUA = r"""
local t = redis.call('TIME')
local when = tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[2])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], 'LT', when, ARGV[1])
else
  redis.call('ZADD', KEYS[1], when, ARGV[1])
end
return 1
"""

#: Claim due games. KEYS: due set. ARGV: lease (s), limit, one game id ("" for any).
#: Returns the claimed ids; each one's due time becomes now + lease.
CLAIM_LUA = r"""
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ids = {}
if ARGV[3] ~= '' then
  local score = redis.call('ZSCORE', key, ARGV[3])
  if score and tonumber(score) <= now then ids = {ARGV[3]} end
else
  ids = redis.call('ZRANGEBYSCORE', key, '-inf', string.format('%.6f', now),
                   'LIMIT', 0, tonumber(ARGV[2]))
end
local until_ = string.format('%.6f', now + tonumber(ARGV[1]))
for _, g in ipairs(ids) do redis.call('ZADD', key, until_, g) end
return ids
"""


#: Check the calling user's permissions without running anything (Redis 7:
#: ``redis.acl_check_cmd``, which needs no ACL permission of its own). ARGV: n, then n
#: probes, each as a count c followed by its c words (a command with its arguments).
#: Returns {"ok"}, {"refused", i} (the 1-based index of the first probe refused) or
#: {"unsupported"} (a Redis before 7, without ``acl_check_cmd``).
ACCESS_LUA = r"""
if not redis.acl_check_cmd then return {'unsupported'} end
local n, at = tonumber(ARGV[1]), 2
for i = 1, n do
  local c = tonumber(ARGV[at])
  local words = {}
  for j = 1, c do words[j] = ARGV[at + j] end
  at = at + c + 1
  if not redis.acl_check_cmd(unpack(words)) then return {'refused', i} end
end
return {'ok'}
"""

def record(request_hash: str, first: int, last: int,
            response: dict[str, Any] | None) -> str:
    """A request record: ``hash|first|last`` (compact: a record is kept per command while
    the game runs), or JSON when there is a ``response`` blob to keep."""
    if response is None and "|" not in request_hash and not request_hash.startswith("{"):
        return f"{request_hash}|{first}|{last}"
    return dumps({"hash": request_hash, "first": first, "last": last, "response": response})


def parse_record(text: str) -> dict[str, Any]:
    """A request record back as ``{"hash", "first", "last", "response"}`` (either form)."""
    if text.startswith("{"):
        return dict(json.loads(text))
    request_hash, first, last = text.rsplit("|", 2)
    return {"hash": request_hash, "first": int(first), "last": int(last), "response": None}


REQUEST_BUCKETS = "01234567"
"""Suffixes of a game's request-record buckets ``P:{G}:requests:<c>``, ``c`` = the request
id's digest modulo 8: eight small hashes stay in Redis's compact listpack encoding
(``hash-max-listpack-entries``: 512 by Redis's default) up to about 3,500 commands a game
(about 900 on a Redis configured at 128), where one hash of every record turned into a hash
table past 512 commands and cost about twice the memory per record."""


def request_slot(request_id: str) -> tuple[str, str]:
    """``(bucket, field)`` of a request id's record: a 64-bit BLAKE2b digest in hex, its
    first digit (modulo the buckets) naming the bucket and the other fifteen the field (a
    record then costs the same whatever the length of the client's id; two ids of one game
    collide with probability 2**-60)."""
    digest = hashlib.blake2b(request_id.encode(), digest_size=8).hexdigest()
    return REQUEST_BUCKETS[int(digest[0], 16) % len(REQUEST_BUCKETS)], digest[1:]



def access_probes(prefix: str, *, cluster: bool) -> list[tuple[str, ...]]:
    """Every command the store sends, with keys and channels of its own key space, as
    :data:`ACCESS_LUA` probes them (the commands of its scripts included: Redis checks
    those only when the script reaches them, after earlier writes).

    Args:
        prefix: the store's key prefix.
        cluster: a Redis Cluster store (``SPUBLISH`` / ``SSUBSCRIBE`` instead of the
            append feed's ``PUBLISH`` / ``SUBSCRIBE``; the cluster's ``CLUSTER`` reads).
    """
    game = f"{prefix}:{{access-check}}"
    events, meta, snaps = f"{game}:events", f"{game}:meta", f"{game}:snapshots"
    bucket, legacy = f"{game}:requests:0", f"{game}:requests"
    index, active, due = f"{prefix}:games", f"{prefix}:games:active", f"{prefix}:due"
    once = f"{prefix}:once:access-check"
    creator = f"{prefix}:creator:{{{prefix}:c:access-check}}:all"
    probes: list[tuple[str, ...]] = [
        ("PING",), ("TIME",), ("CLIENT", "SETNAME", "rummy"),
        ("EVALSHA", "0" * 40, "1", events), ("SCRIPT", "LOAD", "return 1"),
        ("EVAL", "return 1", "1", events),
        # the append script
        ("HGET", bucket, "f"), ("HGET", legacy, "r"), ("XREVRANGE", events, "+", "-"),
        ("XADD", events, "0-1", "data", "x"), ("HSET", bucket, "f", "x"),
        *(("PEXPIRE", key, "1") for key in (events, legacy, meta, snaps, bucket)),
        # reads, subscriptions
        ("XRANGE", events, "-", "+"), ("EXISTS", events), ("XREAD", "STREAMS", events, "0"),
        # the index, meta, snapshots
        ("ZADD", index, "1", "g"), ("ZADD", active, "1", "g"), ("ZSCORE", index, "g"),
        ("ZREVRANGE", index, "0", "1"), ("ZREM", index, "g"), ("ZREM", active, "g"),
        ("EXISTS", meta, events), ("SET", meta, "{}"), ("GET", meta),
        *(("PERSIST", key) for key in (events, meta, snaps, bucket, legacy)),
        ("MULTI",), ("EXEC",), ("PTTL", events), ("ZREMRANGEBYSCORE", snaps, "0", "0"),
        ("ZADD", snaps, "0", "0:{}"), ("ZREVRANGEBYSCORE", snaps, "0", "-inf"),
        # put_if_absent, the due games (and their scripts' commands)
        ("SET", once, "{}", "NX"), ("GET", once), ("ZADD", due, "1", "g"), ("ZREM", due, "g"),
        ("ZSCORE", due, "g"), ("ZRANGEBYSCORE", due, "-inf", "1"),
        # the per-creator index (rummy_store.redis_creators)
        ("ZADD", creator, "1", "g"), ("ZRANGE", creator, "0", "-1"),
        ("ZREVRANGEBYSCORE", creator, "+inf", "-inf"), ("ZSCORE", creator, "g"),
        ("ZREM", creator, "g"), ("ZMSCORE", index, "g"), ("ZMSCORE", active, "g"),
    ]
    # the results feed (rummy_store.redis_results) and its scripts
    feed, parked = f"{prefix}:{{{prefix}:results}}:feed", f"{prefix}:{{{prefix}:results}}:parked:g"
    probes += [
        ("XADD", feed, "*", "s", "x"), ("XGROUP", "CREATE", feed, "g", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", feed, ">"), ("XACK", feed, "g", "0-1"),
        ("XAUTOCLAIM", feed, "g", "c", "1", "0-0"), ("XPENDING", feed, "g"),
        ("XINFO", "GROUPS", feed), ("XLEN", feed), ("XADD", parked, "*", "s", "x"),
        ("XRANGE", parked, "-", "+"), ("ZSCAN", active, "0"),
        ("EXISTS", events, meta),
        # sealed names (rummy_store.sealed), retention (rummy_store.retention), erasure
        ("SET", f"{game}:key", "x", "NX"), ("GET", f"{game}:key"), ("DEL", f"{game}:key"),
        ("ZRANGEBYSCORE", index, "-inf", "1"), ("XTRIM", feed, "MINID", "0-1"),
        ("XDEL", feed, "0-1"), ("RENAME", f"{game}:events:erasing", events),
    ]
    if cluster:
        outbox, relayed = f"{game}:results", f"{prefix}:{{{prefix}:results}}:relayed"
        probes += [("HSET", outbox, "1", "x"), ("HGETALL", outbox), ("HDEL", outbox, "1"),
                   ("SADD", relayed, "g 1"), ("SCAN", "0")]
    if cluster:
        probes += [("SPUBLISH", events, "1"), ("SSUBSCRIBE", events),
                   ("SUNSUBSCRIBE", events), ("CLUSTER", "SLOTS")]
    else:
        channel = feed_channel(prefix)
        probes += [("PUBLISH", channel, "g 1"), ("SUBSCRIBE", channel),
                   ("UNSUBSCRIBE", channel), ("CLIENT", "ID"), ("CLIENT", "UNBLOCK", "1"),
                   ("XREAD", "BLOCK", "1", "STREAMS", events, "0")]
    return probes
