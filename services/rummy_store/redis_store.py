"""The Redis Streams :class:`~rummy_store.base.EventStore` (docs/architecture.md).

The store is split by duty, one module each: :mod:`rummy_store.redis_log` (the event log
and request records), :mod:`rummy_store.redis_live` (subscriptions, the append feed),
:mod:`rummy_store.redis_schedule` (due games), :mod:`rummy_store.redis_index` (metadata,
the games index, snapshots), on :mod:`rummy_store.redis_base` (shared state, lifecycle);
:mod:`rummy_store.redis_scripts` holds the Lua scripts and :mod:`rummy_store.redis_client`
makes the clients.

Keys (``P`` is the prefix, default ``"rummy"``; ``{G}`` the game id in a hash tag, so all keys
of one game live on one Redis Cluster shard):

- ``P:{G}:events``   the stream; one entry per event, id ``0-<version>``, fields ``data``
  (the event's record in the compact text of :mod:`rummy_store.codec`: a JSON array by
  position, or its JSON object) and ``t`` (Redis server time, integer milliseconds); no
  MAXLEN. Entries written before the compact records have ``type``, ``data`` (JSON object)
  and ``ts`` (seconds) and still read.
- ``P:{G}:requests:<c>`` eight hashes (``c`` in 0-7,
  :data:`~rummy_store.redis_scripts.REQUEST_BUCKETS`): the request records, field = the last
  15 hex digits of the request id's 64-bit BLAKE2b digest, ``c`` its first modulo 8 ->
  ``hash|first|last`` (or JSON ``{"hash", "first", "last", "response"}`` when a response blob
  is kept). Records written before the compact storage are in ``P:{G}:requests`` by request
  id, and still count.
- ``P:{G}:meta``     string: the game's metadata as JSON.
- ``P:{G}:snapshots`` sorted set: one member per snapshot, score = its stream version,
  member = ``"<version>:<data as JSON>"`` (the version in the member keeps two snapshots with
  equal data apart); a put replaces the member at its version in one MULTI/EXEC.
- ``P:games``        sorted set: game id -> time it entered the index (seconds, Redis clock).
- ``P:games:active`` sorted set: the active subset, same scores.
- ``P:once:<name>``  string: a JSON value kept for an idempotency window (``put_if_absent``;
  ``CreateGame`` request ids).
- ``P:{P:results}:feed``, ``P:{P:results}:parked:<group>``, ``P:{P:results}:relayed``,
  ``P:{G}:results``: the results feed (:mod:`rummy_store.redis_results`).
- ``P:due``          sorted set: game id -> when the service must act on it (epoch seconds,
  Redis clock): a bot's turn or a turn deadline. Every replica polls it and claims due games
  with a lease (:data:`~rummy_store.redis_scripts.CLAIM_LUA`), so deadlines and bot turns
  survive the replica that armed them.

Appends go only through one Lua script (:data:`~rummy_store.redis_scripts.APPEND_LUA`) that
checks the request id, checks the version against the stream's last id and XADDs with explicit
ids, atomically; Redis refuses a second write of an id on its own, too. The two index keys are
global (not one game's slot), so they are updated by separate commands right after a game's
first append: a crash between the two leaves a game out of the index until that append is
retried (or ``put_meta`` / ``set_active`` is called), never a game without its events.

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
pool's idle connections (``RedisBase._flushing``), so the calls after it reconnect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rummy_store.redis_base import CATCH_UP_CONCURRENCY, RedisBase
from rummy_store.redis_client import (
    CLUSTER_SCHEMES,
    MAX_CONNECTIONS,
    client_from_url,
    cluster_client_from_url,
    use_hiredis_packing,
)
from rummy_store.redis_creators import RedisCreators
from rummy_store.redis_index import RedisGameIndex, RedisSnapshots
from rummy_store.redis_live import RedisSubscriptions
from rummy_store.redis_log import RedisEventLog
from rummy_store.redis_schedule import RedisSchedule
from rummy_store.redis_scripts import APPEND_LUA, CLAIM_LUA, REQUEST_BUCKETS, SCHEDULE_LUA

__all__ = ["APPEND_LUA", "CATCH_UP_CONCURRENCY", "CLAIM_LUA", "CLUSTER_SCHEMES",
           "MAX_CONNECTIONS", "REQUEST_BUCKETS", "SCHEDULE_LUA", "RedisBase", "RedisEventStore",
           "cluster_client_from_url", "use_hiredis_packing"]


class RedisEventStore(RedisSubscriptions, RedisEventLog, RedisSchedule, RedisGameIndex,
                      RedisSnapshots, RedisCreators):
    """The Redis Streams event store. See :class:`rummy_store.base.EventStore` for the contract.

    Arguments as for :class:`~rummy_store.redis_base.RedisBase` (the client, the key
    prefix, the expiries).

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
        arguments go to ``RedisCluster``, whose socket timeouts default to
        :data:`~rummy_store.redis_client.CLUSTER_SOCKET_TIMEOUT`). The client is made by
        :func:`~rummy_store.redis_client.client_from_url`; callers that take any store URL
        use :func:`rummy_store.factory.open_store`.

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
        client = client_from_url(url, max_connections=max_connections, environ=environ,
                                 **kwargs)
        return cls(client, prefix=prefix, owns_client=True, idle_ttl=idle_ttl,
                   request_ttl=request_ttl, batch=batch)
