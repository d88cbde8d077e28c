"""Redis clients for the event store: a single Redis or a Redis Cluster, from a URL.

:func:`client_from_url` is the one place a store's client is made (the factory,
:func:`rummy_store.factory.open_store`, and :meth:`RedisEventStore.from_url
<rummy_store.redis_store.RedisEventStore.from_url>` call it): credentials from secret files
and TLS settings (:mod:`rummy_store.urls`), an explicit pool size, command packing by hiredis
on a single Redis, and socket timeouts on a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from rummy_store.urls import REDIS_PASSWORD_FILE, redis_tls_kwargs, resolve_url

__all__ = ["CLUSTER_RETRIES", "CLUSTER_SCHEMES", "CLUSTER_SOCKET_TIMEOUT", "MAX_CONNECTIONS",
           "client_from_url", "cluster_client_from_url", "is_cluster_url", "use_hiredis_packing"]

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""URL schemes of a Redis Cluster (:func:`cluster_client_from_url`), with the plain scheme
each stands for."""

MAX_CONNECTIONS = 1024
"""Default size of a store's connection pool (per node on a cluster)."""

CLUSTER_SOCKET_TIMEOUT = 5.0
"""Seconds a cluster client waits for a node to connect or to answer a command before it
gives up on that node (``socket_connect_timeout`` and ``socket_timeout`` unless the caller
sets them). Without them a node that hangs (a stopped process, a network partition that
drops packets) holds its callers for as long as TCP takes to notice, minutes; with them a
hung node costs its own shard's calls a ``TimeoutError`` (``UNAVAILABLE`` to a client)
and the store's readers regroup."""

CLUSTER_RETRIES = 1
"""Times a cluster client sends a command again, at once, after a connection error or a
timeout (after reloading the slot map: a failover moved the slot). redis-py's default, 3
with an exponential back-off, held the caller of a hung node about 55 s (each attempt a
socket timeout, each reload of the map another when it asked the hung node); with one, the
caller gets the error (``UNAVAILABLE``) and retries with its request id, as on a single
Redis, whose clients retry nothing."""


def is_cluster_url(url: str) -> bool:
    """True for a ``redis+cluster://`` or ``rediss+cluster://`` URL."""
    return url.partition("://")[0].lower() in CLUSTER_SCHEMES


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
    (measured on the service). The bytes are the same for every argument redis-py accepts
    (str as UTF-8, bytes, memoryview, int, float); anything hiredis refuses (a bool, a
    bytearray) goes through redis-py's own packing, which raises its ``DataError`` or packs
    it."""

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



def client_from_url(url: str, *, max_connections: int = MAX_CONNECTIONS,
                    environ: Mapping[str, str] | None = None,
                    **kwargs: Any) -> aioredis.Redis | RedisCluster:
    """A new client for a store URL: ``redis://``, ``rediss://`` or ``unix://`` (a single
    Redis; ``redis.asyncio.Redis.from_url`` gets ``kwargs``), or ``redis+cluster://`` /
    ``rediss+cluster://`` (:func:`cluster_client_from_url`; ``RedisCluster`` gets
    ``kwargs``, with :data:`CLUSTER_SOCKET_TIMEOUT` and :data:`CLUSTER_RETRIES` unless they
    set the timeouts or a ``retry``).

    A single-Redis URL without a password takes it from the file named by
    ``RUMMY_REDIS_PASSWORD_FILE`` (a mounted secret), and a ``rediss://`` URL verifies the
    server against ``RUMMY_REDIS_CA_FILE`` when set (:mod:`rummy_store.urls`); ``environ``
    replaces ``os.environ`` for both. Responses are decoded (``decode_responses=True``)
    unless ``kwargs`` says otherwise; ``max_connections`` sizes the pool explicitly
    (redis-py's default changed between releases: unbounded in 5.x, 100 in 8.x).

    Raises:
        ValueError: a malformed URL (``redis-py``'s message, or a bad cluster URL).
        rummy_store.urls.SecretFileError: a secret or CA file named by the environment
            cannot be used.
    """
    kwargs.setdefault("decode_responses", True)
    kwargs["max_connections"] = max_connections
    if is_cluster_url(url):
        kwargs.setdefault("socket_timeout", CLUSTER_SOCKET_TIMEOUT)
        kwargs.setdefault("socket_connect_timeout", CLUSTER_SOCKET_TIMEOUT)
        kwargs.setdefault("retry", Retry(NoBackoff(), CLUSTER_RETRIES))
        return cluster_client_from_url(url, **kwargs)
    url = resolve_url(url, REDIS_PASSWORD_FILE, environ)
    for key, value in redis_tls_kwargs(url, environ).items():
        kwargs.setdefault(key, value)
    return use_hiredis_packing(aioredis.Redis.from_url(url, **kwargs))
