"""The Redis Streams :class:`~rummy_store.base.EventStore` (docs/architecture.md).

Keys (``P`` is the prefix, default ``"rummy"``; ``{G}`` the game id in a hash tag, so all keys
of one game live on one Redis Cluster shard):

- ``P:{G}:events``   the stream; one entry per event, id ``0-<version>``, fields ``data``
  (the event's record in the compact text of :mod:`rummy_store.codec`: a JSON array by
  position, or its JSON object) and ``t`` (Redis server time, integer milliseconds); no
  MAXLEN. Entries written before issue 15 have ``type``, ``data`` (JSON object) and ``ts``
  (seconds) and still read.
- ``P:{G}:requests:<c>`` eight hashes (``c`` in 0-7, :data:`REQUEST_BUCKETS`): the
  request records, field = the last 15 hex digits of the request id's 64-bit BLAKE2b
  digest, ``c`` its first modulo 8 -> ``hash|first|last`` (or JSON ``{"hash", "first", "last",
  "response"}`` when a response blob is kept). Records written before issue 15's compact
  storage are in ``P:{G}:requests`` by request id, and still count.
- ``P:{G}:meta``     string: the game's metadata as JSON.
- ``P:{G}:snapshots`` sorted set: one member per snapshot, score = its stream version,
  member = ``"<version>:<data as JSON>"`` (the version in the member keeps two snapshots with
  equal data apart); a put replaces the member at its version in one MULTI/EXEC.
- ``P:games``        sorted set: game id -> time it entered the index (seconds, Redis clock).
- ``P:games:active`` sorted set: the active subset, same scores.
- ``P:once:<name>``  string: a JSON value kept for an idempotency window (``put_if_absent``;
  ``CreateGame`` request ids).
- ``P:due``          sorted set: game id -> when the service must act on it (epoch seconds,
  Redis clock): a bot's turn or a turn deadline. Every replica polls it and claims due games
  with a lease (:data:`CLAIM_LUA`), so deadlines and bot turns survive the replica that
  armed them.

Appends go only through one Lua script (:data:`APPEND_LUA`) that checks the request id, checks
the version against the stream's last id and XADDs with explicit ids, atomically; Redis refuses
a second write of an id on its own, too. The two index keys are global (not one game's slot),
so they are updated by separate commands right after a game's first append: a crash between
the two leaves a game out of the index until that append is retried (or ``put_meta`` /
``set_active`` is called), never a game without its events.

Live subscriptions share one blocking reader per store (:mod:`rummy_store.fanout`): a waiting
subscriber holds no Redis connection.

The clients :meth:`RedisEventStore.from_url` builds do not retry a command whose connection
failed (redis-py's default for a client from a URL: ``Retry(NoBackoff(), 0)``): the caller
gets the ``ConnectionError`` (the service answers ``UNAVAILABLE``), whether or not the
command ran. An append sent again by its caller either is recognised by its ``request_id``
(the original result comes back) or, without one, fails with
:class:`~rummy_store.base.VersionConflict`: never a double append.
After a Redis restart every pooled connection is dead and would fail once on its next use;
the first connection error of the health ping, the due-games poll or an append closes the
pool's idle connections (``RedisEventStore._flushing``), so the calls after it reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from rummy_store.base import (
    AppendResult,
    GameUnlisted,
    RequestIdReused,
    StoredEvent,
    StoreError,
    StreamRewound,
    VersionConflict,
    check_claim,
    check_delay,
    check_game_id,
    check_name,
    check_request_id,
    check_version,
    dumps,
    serialise_snapshot,
)
from rummy_store.batching import CommandBatcher
from rummy_store.cluster_fanout import ClusterStreamHub
from rummy_store.codec import pack_events, unpack
from rummy_store.fanout import BLOCK_MS, QUEUE_SIZE, StreamHub, holds
from rummy_store.feed import AppendFeed, feed_channel
from rummy_store.urls import REDIS_PASSWORD_FILE, redis_tls_kwargs, resolve_url

__all__ = ["APPEND_LUA", "CLAIM_LUA", "CLUSTER_SCHEMES", "REQUEST_BUCKETS", "SCHEDULE_LUA",
           "RedisEventStore", "cluster_client_from_url", "use_hiredis_packing"]

T = TypeVar("T")

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes of a Redis Cluster (:func:`cluster_client_from_url`), with the plain scheme
each stands for."""

#: The append script. KEYS: stream, the legacy requests hash (records written before the
#: buckets), meta, snapshots, then the game's request-record buckets (:data:`REQUEST_BUCKETS`,
#: in order); every key of the game gets the idle expiry after a successful append.
#: ARGV: [1] expected version, [2] request id ("" for none), [3] its field in its bucket,
#: [4] request hash, [5] request record, [6] the idle expiry in ms (0: none), [7] the index
#: in KEYS of the request's bucket, [8] "1" to ``SPUBLISH`` the new version on the stream
#: key's sharded channel (cluster stores), or "2" to ``PUBLISH`` ``"<game id> <new version>"``
#: on the channel [9] (single-Redis stores: :mod:`rummy_store.feed`), anything else: no
#: publish, [10] the game id, [11] n, then the stored text of each of the n events.
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
local ttl = tonumber(ARGV[6])
if ttl and ttl > 0 then
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end
if ARGV[8] == '1' then  -- a cluster store: wake the hub (sharded pub/sub, Redis 7)
  redis.call('SPUBLISH', stream, tostring(expected + n))
elseif ARGV[8] == '2' then  -- a single Redis: tell every server's append feed
  redis.call('PUBLISH', ARGV[9], ARGV[10] .. ' ' .. tostring(expected + n))
end
return {'ok', ms}
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

_PAGE = 1000  # entries per XRANGE call

CATCH_UP_CONCURRENCY = 32
"""Reads of subscriptions outside the hub (catch-up ``XRANGE`` pages, the checks of what they
delivered) that run at once per store: bounds the pool connections a burst of new streams
takes (:meth:`RedisEventStore._bounded`)."""


MAX_CONNECTIONS = 1024
"""Default size of a store's connection pool (see :meth:`RedisEventStore.from_url`)."""


def _record(request_hash: str, first: int, last: int,
            response: dict[str, Any] | None) -> str:
    """A request record: ``hash|first|last`` (compact: a record is kept per command while
    the game runs), or JSON when there is a ``response`` blob to keep."""
    if response is None and "|" not in request_hash and not request_hash.startswith("{"):
        return f"{request_hash}|{first}|{last}"
    return dumps({"hash": request_hash, "first": first, "last": last, "response": response})


def _parse_record(text: str) -> dict[str, Any]:
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


def _request_slot(request_id: str) -> tuple[str, str]:
    """``(bucket, field)`` of a request id's record: a 64-bit BLAKE2b digest in hex, its
    first digit (modulo the buckets) naming the bucket and the other fifteen the field (a
    record then costs the same whatever the length of the client's id; two ids of one game
    collide with probability 2**-60)."""
    digest = hashlib.blake2b(request_id.encode(), digest_size=8).hexdigest()
    return REQUEST_BUCKETS[int(digest[0], 16) % len(REQUEST_BUCKETS)], digest[1:]


def cluster_client_from_url(url: str, **kwargs: Any) -> RedisCluster:
    """A ``redis.asyncio.cluster.RedisCluster`` for a cluster URL.

    The URL is ``redis+cluster://[user[:password]@]host:port[,host:port...][/0][?option=value
    ...]`` (``rediss+cluster://`` for TLS): the listed nodes are startup nodes (any subset of
    the cluster; the client discovers the others with ``CLUSTER SLOTS``), a missing port is
    6379, IPv6 hosts go in brackets. Query options are those of a ``redis://`` URL and win
    over ``kwargs``; the rest of ``kwargs`` goes to ``RedisCluster`` (``max_connections`` is
    per node there). The client connects lazily, on its first command.

    Raises:
        ValueError: not a cluster URL, no host, a bad port, or a database other than 0
            (a cluster has only database 0).
    """
    scheme, sep, rest = url.partition("://")
    plain = CLUSTER_SCHEMES.get(scheme.lower())
    if not sep or plain is None:
        raise ValueError(f"not a Redis Cluster URL: {url!r} (expected "
                         f"redis+cluster://host:port[,host:port...])")
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    userinfo, at, hosts = netloc.rpartition("@")
    nodes: list[tuple[str, int]] = []
    for item in hosts.split(","):
        item = item.strip()
        if not item:
            continue
        host, colon, port = item.rpartition(":")
        if not colon or host.endswith(":"):  # no port (an IPv6 host needs brackets)
            host, port = item, "6379"
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bad cluster node {item!r} in {url!r}: need host:port")
        nodes.append((host, int(port)))
    if not nodes:
        raise ValueError(f"no node in the Redis Cluster URL {url!r}")
    first_host, first_port = nodes[0]
    first = f"[{first_host}]" if ":" in first_host else first_host
    options: dict[str, Any] = dict(parse_url(f"{plain}://{userinfo}{at}{first}:{first_port}{tail}"))
    if int(options.pop("db", 0) or 0) != 0:
        raise ValueError(f"a Redis Cluster has only database 0: {url!r}")
    for name in ("host", "port", "path"):
        options.pop(name, None)
    if options.pop("connection_class", None) is not None:  # rediss: SSLConnection
        options["ssl"] = True
    kwargs.update(options)
    return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in nodes], **kwargs)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


_hiredis_pack: Callable[[tuple[Any, ...]], bytes] | None
try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is a dependency of the service extra
    _hiredis_pack = None


_HIREDIS_INT_BITS = 13_000
"""Largest int (in bits, ~3,900 decimal digits) handed to ``hiredis.pack_command``; larger
ones go through redis-py's packing (attack finding: hiredis 3.5 segfaults on an int past
Python's 4,300-digit str() limit)."""


class _HiredisPacking:
    """A ``redis.asyncio`` connection mixin that packs commands with ``hiredis.pack_command``
    (C), as redis-py's synchronous client does (``HiredisRespSerializer``); redis-py's
    asyncio connection packs in Python, about 16 us for an append's 26 arguments against 4
    (issue 15). The bytes are the same for every argument redis-py accepts (str as UTF-8,
    bytes, memoryview, int, float); anything hiredis refuses (a bool, a bytearray) goes
    through redis-py's own packing, which raises its ``DataError`` or packs it."""

    def pack_command(self, *args: Any) -> list[bytes]:
        head = args[0]
        if isinstance(head, str):
            args = (*head.encode().split(), *args[1:])
        elif b" " in head:
            args = (*head.split(), *args[1:])
        for a in args:
            # hiredis 3.5 crashes the process (SIGSEGV) on an int that str() refuses (more
            # than 4,300 digits); redis-py's packing raises its ValueError for the caller
            if type(a) is int and a.bit_length() > _HIREDIS_INT_BITS:
                return super().pack_command(*args)  # type: ignore[misc, no-any-return]
        try:
            return [_hiredis_pack(args)]  # type: ignore[misc]
        except TypeError:
            return super().pack_command(*args)  # type: ignore[misc, no-any-return]


def use_hiredis_packing(client: aioredis.Redis) -> aioredis.Redis:
    """Make ``client``'s pool open connections that pack commands with hiredis
    (:class:`_HiredisPacking`) when hiredis is installed and the client encodes text as
    strict UTF-8 (what hiredis does); otherwise leave it. Call before the pool opens its
    first connection. Returns ``client``."""
    pool = client.connection_pool
    kwargs = pool.connection_kwargs
    if _hiredis_pack is None or kwargs.get("encoding", "utf-8").lower() not in ("utf-8", "utf8") \
            or kwargs.get("encoding_errors", "strict") != "strict":
        return client
    base = pool.connection_class
    if not issubclass(base, _HiredisPacking):
        pool.connection_class = type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})
    return client


class RedisEventStore:
    """The Redis Streams event store. See :class:`rummy_store.base.EventStore` for the contract.

    Args:
        client: a ``redis.asyncio.Redis`` (``decode_responses`` either way), or a
            ``redis.asyncio.cluster.RedisCluster`` (Redis 7 or later: see "Redis Cluster"
            below).
        prefix: the first part of every key (no trailing colon).
        owns_client: close the client in :meth:`close`.
        hub_block_ms: longest wait of the stream hub's one blocking ``XREAD`` (milliseconds).
        queue_size: capacity of each subscriber's queue of live events (events).
        idle_ttl: seconds an active game may stay without an append before all its keys
            expire (an abandoned game; 0: never). A finished game (``set_active(False)``)
            is kept.
        request_ttl: seconds a finished game keeps its request records (its idempotency
            window; 0: forever).

    Subscriptions share one reader, :class:`rummy_store.fanout.StreamHub`, on a dedicated
    connection with the client's settings; :meth:`close` stops it. Create clients after a
    worker process forks, never before (docs/architecture.md). Raises ``ValueError`` for a
    bad prefix.

    **Redis Cluster.** A game's keys share one slot (the ``{game_id}`` hash tag), so the append
    script and the snapshot transaction run on the game's node as on a single Redis. The
    global keys (``P:games``, ``P:games:active``, ``P:due``, ``P:once:*``) each live in their
    own slot and are only touched by single-key commands and single-key scripts; the one step
    that mixed them with a game's keys in a transaction (``set_active(False)``) runs as two
    steps there (see :meth:`set_active`). Appends also ``SPUBLISH`` a wake-up on the game's
    sharded channel, and subscriptions go through
    :class:`rummy_store.cluster_fanout.ClusterStreamHub` (one pub/sub connection per node).
    """

    def __init__(
        self, client: aioredis.Redis | RedisCluster, *, prefix: str = "rummy",
        owns_client: bool = False,
        hub_block_ms: int = BLOCK_MS, queue_size: int = QUEUE_SIZE,
        idle_ttl: float = 0.0, request_ttl: float = 0.0, batch: bool = True,
    ) -> None:
        if not prefix or "{" in prefix or "}" in prefix:
            raise ValueError(f"bad key prefix {prefix!r}: need a non-empty string without {{}}")
        self._idle_ms = int(check_delay("idle_ttl", idle_ttl) * 1000)
        self._request_ms = int(check_delay("request_ttl", request_ttl) * 1000)
        self._r = client
        self._cluster = isinstance(client, RedisCluster)
        self._unready = self._cluster  # a cluster client not initialized yet
        self._init_lock = asyncio.Lock()
        self._prefix = prefix
        self._owns = owns_client
        self._append = client.register_script(APPEND_LUA)
        self._batch = (CommandBatcher(client)  # type: ignore[arg-type]
                       if batch and not self._cluster else None)
        self._index = f"{prefix}:games"
        self._active = f"{prefix}:games:active"
        self._due = f"{prefix}:due"
        self._schedule = client.register_script(SCHEDULE_LUA)
        self._claim = client.register_script(CLAIM_LUA)
        self._hub: StreamHub | ClusterStreamHub
        if isinstance(client, RedisCluster):
            self._hub = ClusterStreamHub(client, self._decode, name=f"rummy-hub:{prefix}",
                                         block_ms=hub_block_ms, queue_size=queue_size)
        else:
            self._hub = StreamHub(client, self._decode, name=f"rummy-hub:{prefix}",
                                  block_ms=hub_block_ms, queue_size=queue_size)
        self._catch_up = asyncio.Semaphore(CATCH_UP_CONCURRENCY)
        self._feed_channel = feed_channel(prefix)
        self._feed: AppendFeed | None = None

    @classmethod
    def from_url(cls, url: str, prefix: str = "rummy", *,
                 max_connections: int = MAX_CONNECTIONS, idle_ttl: float = 0.0,
                 request_ttl: float = 0.0, environ: Mapping[str, str] | None = None,
                 batch: bool = True, **kwargs: Any) -> RedisEventStore:
        """A store on a new client for ``url``; the store closes the client.

        ``url`` is either a single Redis, ``redis://[user:password@]host:port/db``
        (``rediss://`` for TLS; extra keyword arguments go to ``redis.asyncio.Redis.from_url``),
        or a Redis Cluster, ``redis+cluster://host:port[,host:port...]``
        (``rediss+cluster://`` for TLS; see :func:`cluster_client_from_url`; extra keyword
        arguments go to ``RedisCluster``).

        A single-Redis URL without a password takes it from the file named by
        ``RUMMY_REDIS_PASSWORD_FILE`` (a mounted secret), and a ``rediss://`` URL verifies
        the server against ``RUMMY_REDIS_CA_FILE`` when set (:mod:`rummy_store.urls`);
        ``environ`` replaces ``os.environ`` for both. The stream hub's own connection copies
        these settings.

        ``max_connections`` sizes the client's connection pool explicitly (per node on a
        cluster): redis-py's default changed between releases (unbounded in 5.x, 100 in 8.x).
        Subscriptions do not hold pool connections while they wait (one hub reads for all of
        them).

        Raises:
            ValueError: a malformed URL (``redis-py``'s message, or a bad cluster URL).
            rummy_store.urls.SecretFileError: a secret or CA file named by the environment
                cannot be used.
        """
        if url.partition("://")[0].lower() not in CLUSTER_SCHEMES:
            url = resolve_url(url, REDIS_PASSWORD_FILE, environ)
            for key, value in redis_tls_kwargs(url, environ).items():
                kwargs.setdefault(key, value)
        kwargs.setdefault("decode_responses", True)
        kwargs["max_connections"] = max_connections
        client: aioredis.Redis | RedisCluster
        if url.partition("://")[0].lower() in CLUSTER_SCHEMES:
            client = cluster_client_from_url(url, **kwargs)
        else:
            client = use_hiredis_packing(aioredis.Redis.from_url(url, **kwargs))
        return cls(client, prefix=prefix, owns_client=True, idle_ttl=idle_ttl,
                   request_ttl=request_ttl, batch=batch)

    @property
    def client(self) -> aioredis.Redis | RedisCluster:
        """The underlying ``redis.asyncio.Redis`` (or ``RedisCluster``)."""
        return self._r

    @property
    def is_cluster(self) -> bool:
        """True on a Redis Cluster client."""
        return self._cluster

    @property
    def prefix(self) -> str:
        return self._prefix

    def key(self, game_id: str, kind: str) -> str:
        """The key of one of a game's structures: ``kind`` is events, requests, meta or
        snapshots."""
        return f"{self._prefix}:{{{check_game_id(game_id)}}}:{kind}"

    async def append(
        self,
        game_id: str,
        events: Sequence[dict[str, Any]],
        expected_version: int,
        *,
        request_id: str | None = None,
        request_hash: str | None = None,
        response: dict[str, Any] | None = None,
    ) -> AppendResult:
        stream = self.key(game_id, "events")
        check_version("expected_version", expected_version)
        check_request_id(request_id)
        encoded = pack_events(events)
        response_json = dumps(response)
        record = _record(request_hash or "", expected_version + 1,
                         expected_version + len(encoded), response)
        bucket, field = _request_slot(request_id) if request_id else ("0", "")
        args: list[Any] = [expected_version, request_id or "", field, request_hash or "",
                           record, self._idle_ms, 5 + REQUEST_BUCKETS.index(bucket),
                           "1" if self._cluster else "2", self._feed_channel, game_id,
                           len(encoded)]
        args += [text for _, text in encoded]
        base = stream[:-len("events")]  # the game id was checked once, by self.key
        keys = [stream, base + "requests", base + "meta", base + "snapshots",
                *(f"{base}requests:{c}" for c in REQUEST_BUCKETS)]
        if self._unready:
            await self._initialize()
        status, value = (_s(x) for x in await self._run_append(keys, args))
        if status == "ok":
            ts = int(value) / 1000
            new = tuple(
                StoredEvent(version=expected_version + i, type=kind, data=unpack(text), ts=ts)
                for i, (kind, text) in enumerate(encoded, start=1)
            )
            if expected_version == 0 and new:
                try:
                    await self._register(game_id, ts)
                except RedisError as exc:  # the events stand: say so, not "nothing applied"
                    raise GameUnlisted(game_id, len(new), exc) from exc
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
            prior = _parse_record(value)
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

    @property
    def idle_ttl(self) -> float:
        return self._idle_ms / 1000

    async def ping(self) -> None:
        if self._unready:
            await self._initialize()
        await self._flushing(self._r.ping())

    async def _flushing(self, call: Awaitable[T]) -> T:
        """``await call``; on a connection error, first close the pool's idle connections,
        then raise. After a Redis restart or failover every pooled connection is dead, and
        redis-py (no retry on the store's clients) fails each of them once on its next
        use: a command of a client that found Redis back. The health watcher's ping (every
        2 s) and the due-games poll (every 0.25 s) pass through here, so the first of them
        to meet the restart clears the pool, and the calls that follow get new
        connections (issue 15's attack: 12 of 30 CreateGame failed 5 s after a restart)."""
        try:
            return await call
        except RedisConnectionError:
            pool = getattr(self._r, "connection_pool", None)  # a cluster client has none
            if pool is not None:
                with contextlib.suppress(Exception):
                    await pool.disconnect(inuse_connections=False)
            raise

    async def get_request(
        self, game_id: str, request_id: str, request_hash: str | None = None
    ) -> AppendResult | None:
        check_request_id(request_id)
        if self._unready:
            await self._initialize()
        bucket, field = _request_slot(request_id)
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.hget(self.key(game_id, f"requests:{bucket}"), field)
            pipe.hget(self.key(game_id, "requests"), request_id)  # written before the buckets
            found, legacy = await pipe.execute()
        raw = found if found is not None else legacy
        if raw is None:
            return None
        prior = _parse_record(_s(raw))
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
                                                 "COUNT", _PAGE) or []
            else:
                entries = await self._r.xrange(stream, min=f"0-{low + 1}", max=high,
                                               count=_PAGE) or []
            out.extend(self._decode(entry) for entry in entries)
            if len(entries) < _PAGE:
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

    def subscriber_count(self) -> int:
        """Live subscriptions of this store object (tests, metrics)."""
        return self._hub.subscriber_count()

    @property
    def hub(self) -> StreamHub | ClusterStreamHub:
        """The store's stream reader (:class:`rummy_store.fanout.StreamHub`; on a cluster,
        :class:`rummy_store.cluster_fanout.ClusterStreamHub`)."""
        return self._hub

    async def _bounded(self, read: Callable[[], Awaitable[T]]) -> T:
        """One read of a subscription outside the hub (its catch-up ``XRANGE`` pages, the
        check that what it delivered is still there, the store's version for a
        ``StreamRewound``): at most :data:`CATCH_UP_CONCURRENCY` of them run at once per
        store, so that a burst of new streams takes a bounded share of the pool."""
        task = asyncio.current_task()
        async with self._catch_up:
            try:
                if self._unready:
                    await self._initialize()
                return await read()
            finally:
                # redis-py (8.x) can swallow a cancellation that arrives inside a read, which
                # then returns as if nothing happened: a cancellation still pending on the
                # task is honoured here (contract: cancelling_200_subscribers)
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError

    async def _range(self, stream: str, after: int,
                     to: int | None = None) -> AsyncGenerator[StoredEvent, None]:
        """Entries ``after < version <= to`` (all if ``to`` is None) by short XRANGE pages,
        each a :meth:`_bounded` read."""
        high = "+" if to is None else f"0-{to}"
        while True:
            entries = await self._bounded(functools.partial(
                self._r.xrange, stream, min=f"0-{after + 1}", max=high, count=_PAGE)) or []
            for entry in entries:
                event = self._decode(entry)
                after = event.version
                yield event
            if len(entries) < _PAGE:
                return

    async def subscribe(
        self, game_id: str, after_version: int = 0, *, block_ms: int = 1000
    ) -> AsyncGenerator[StoredEvent, None]:
        """See :meth:`EventStore.subscribe`. Catches up with XRANGE, then takes live events
        from the store's :class:`~rummy_store.fanout.StreamHub` (one blocking reader per
        store); ``block_ms`` is ignored (the hub's ``block_ms`` applies). Holds no Redis
        connection while it waits.

        Raises:
            StreamRewound: the hub found, after a reconnection, that the stream went back in
                time past what this subscription delivered (:func:`rummy_store.fanout.
                rewind_check`); a rewind to a version it had not reached yet only refills it
                from the store.
        """
        stream = self.key(game_id, "events")
        check_version("after_version", after_version)
        check_version("block_ms", block_ms)
        last = after_version
        stamp: float | None = None  # ts of the event at ``last``, once one was delivered
        async for event in self._range(stream, last):  # catch up ...
            last, stamp = event.version, event.ts
            yield event

        async def kept() -> bool:  # what this subscription delivered last is still there
            return stamp is None or await self._bounded(
                lambda: holds(self._r, stream, last, stamp, self._decode))

        sub = self._hub.register(stream, last)  # ... register, ...
        try:
            if not await kept():  # the store went back while the catch-up was delivered
                raise StreamRewound(game_id, last,
                                    await self._bounded(lambda: self.version(game_id)))
            # ... and read once more: events appended between catch-up and registration
            async for event in self._range(stream, last):
                last, stamp = event.version, event.ts
                yield event
            while True:
                if sub.rewound is not None:  # the stream went back in time (rewind_check)
                    actual, sub.rewound = sub.rewound, None
                    if last > actual or not await kept():
                        raise StreamRewound(game_id, last, actual)
                    while not sub.queue.empty():  # what was queued may be the lost history
                        sub.queue.get_nowait()
                    sub.overflowed = True  # refill from the store
                if sub.overflowed:  # the hub dropped events for us: refill from the stream
                    sub.overflowed = False
                    async for event in self._range(stream, last):
                        last, stamp = event.version, event.ts
                        yield event
                    continue
                item = await sub.queue.get()
                if item is None:  # a wake-up: look at the flags
                    continue
                if item.version <= last:
                    continue  # already delivered
                if item.version > last + 1:  # a gap: fill it (and take this one) from XRANGE
                    async for filled in self._range(stream, last, item.version):
                        last, stamp = filled.version, filled.ts
                        yield filled
                    continue
                last, stamp = item.version, item.ts
                yield item
        finally:
            sub.close()

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
            if gone:  # expired while idle: out of the index for good
                await self._r.zrem(self._index, *gone)
                await self._r.zrem(self._active, *gone)
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
            score = await self._now()
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

    def append_feed(self, listener: Callable[[str, int], None]) -> AppendFeed | None:
        """This store's :class:`~rummy_store.feed.AppendFeed` (one per store, started on the
        running loop by the first call), calling ``listener(game_id, version)`` for every
        append by any process from now on (``feed.discard(listener)`` stops that;
        :meth:`close` stops the feed).

        Returns:
            The feed, or ``None`` on a Redis Cluster (no process-wide channel there).
        """
        if isinstance(self._r, RedisCluster):
            return None
        if self._feed is None:
            self._feed = AppendFeed(self._r, self._feed_channel,
                                    name=f"rummy-feed:{self._prefix}")
        self._feed.add(listener)
        self._feed.start()
        return self._feed

    async def close(self) -> None:
        if self._feed is not None:
            await self._feed.close()
        await self._hub.close()
        if self._batch is not None:
            await self._batch.close()
        if self._owns:
            await self._r.aclose()

    async def _initialize(self) -> None:
        """Initialize a cluster client (slot map, node connections) once, before any other
        command. redis-py 8.1 initializes lazily, on the first command; many first commands
        at once on a new client then race (a connection closed under a command:
        ``AttributeError: 'NoneType' object has no attribute 'writelines'``), so the store
        does it first, under a lock."""
        async with self._init_lock:
            if self._unready:
                assert isinstance(self._r, RedisCluster)
                await self._r.initialize()
                self._unready = False

    async def _now(self) -> float:
        """The Redis server's clock in seconds (the one the append script stamps events with)."""
        if self._unready:
            await self._initialize()
        seconds, micros = await self._r.time()
        return int(seconds) + int(micros) / 1e6

    async def _register(self, game_id: str, ts: float) -> None:
        """Enter a game in the index, active, unless it is there already (idempotent)."""
        if self._unready:
            await self._initialize()
        if await self._r.zadd(self._index, {game_id: ts}, nx=True):
            await self._r.zadd(self._active, {game_id: ts}, nx=True)

    @staticmethod
    def _decode(entry: Any) -> StoredEvent:
        entry_id, fields = entry
        fields = {_s(k): _s(v) for k, v in fields.items()}
        data = unpack(fields["data"])
        return StoredEvent(
            version=int(_s(entry_id).partition("-")[2]),
            type=fields.get("type") or data["type"],  # entries before issue 15 have both
            data=data,
            ts=int(fields["t"]) / 1000 if "t" in fields else float(fields["ts"]),
        )
