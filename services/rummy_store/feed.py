"""Append notifications of a single Redis: :class:`AppendFeed`.

The append script (:data:`rummy_store.redis_store.APPEND_LUA`) of a single-Redis store
``PUBLISH``-es ``"<game id> <new version>"`` on the channel ``<prefix>:appended`` in the
same atomic step as the ``XADD``: whatever process appended, every process subscribed
hears of it, after the events are readable.

A server process keeps its games' latest states in memory (``rummy_grpc.repository``). With
the feed it can answer a read (``GetView``) from that memory without asking Redis, as long as
it **knows** the state is the latest: it was read from the store, or written by this process,
while the feed was live, and no notification of a newer version has arrived since. The
feed's part of that contract:

- **Epochs.** Each (re)subscription that Redis confirms starts a new :attr:`AppendFeed.epoch`.
  Notifications published while the feed was not subscribed are lost, so whatever was
  known in an older epoch is not trusted in the new one.
- **Liveness.** :attr:`AppendFeed.live` is true only while subscribed and having heard from
  Redis (a notification, or the reply to the feed's own ``PING`` every ``ping_interval``
  seconds) within ``3 * ping_interval``: a connection that died silently stops being
  trusted within that bound, before the TCP stack notices.
- **Errors.** A failed connection is dropped and retried after an exponential back-off with
  full jitter (0.05 s doubling up to 5 s), like :class:`rummy_store.fanout.StreamHub`.

The feed runs on its own one-connection pool (``CLIENT LIST`` name ``rummy-feed:<prefix>``),
started by the first :meth:`AppendFeed.start` and stopped by :meth:`AppendFeed.close`.
On a Redis Cluster there is no feed (a process-wide channel would have to reach every
shard); readers there always ask the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from rummy_store.checks import check_game_id

__all__ = ["PING_INTERVAL", "AppendFeed", "feed_channel", "parse_notice"]

log = logging.getLogger("rummy_store.feed")

PING_INTERVAL = 0.5
"""Default seconds between two ``PING`` s of an otherwise quiet feed connection."""
_BACKOFF_FIRST, _BACKOFF_MAX = 0.05, 5.0  # seconds


def feed_channel(prefix: str) -> str:
    """The pub/sub channel the append script publishes on for the store ``prefix``."""
    return f"{prefix}:appended"


def _s(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


_MAX_DIGITS = 18  # a version fits a signed 64-bit integer (Redis stream ids do)


def parse_notice(data: bytes | str) -> tuple[str, int] | None:
    """``(game_id, version)`` of a message the append script publishes, ``"<game id>
    <version>"``, or ``None`` for anything else on the channel (which anyone allowed to
    ``PUBLISH`` there may send): bytes that are not UTF-8, a game id the store refuses
    (:func:`rummy_store.checks.check_game_id`), a version that is not 1 to 18 ASCII digits
    (``"²"`` and ``"３"`` pass ``str.isdigit`` but are no version).

    >>> parse_notice(b"g1 12"), parse_notice("g1 \\u00b2"), parse_notice(b"g1 \\xff")
    (('g1', 12), None, None)
    """
    try:
        text = data.decode() if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        return None
    game_id, _, version = text.partition(" ")
    if not (version.isascii() and version.isdigit() and len(version) <= _MAX_DIGITS):
        return None
    try:
        check_game_id(game_id)
    except ValueError:
        return None
    return game_id, int(version)


class AppendFeed:
    """One subscriber to a store's append notifications, calling each of its listeners as
    ``listener(game_id, version)`` per append (on the event loop; a listener must not block
    or raise; :meth:`add` / :meth:`discard` them).

    Args:
        client: the store's ``redis.asyncio.Redis`` (its connection settings are copied to
            the feed's own connection).
        channel: the channel (:func:`feed_channel`).
        name: the feed connection's ``CLIENT SETNAME``.
        ping_interval: seconds between two pings of a quiet connection (> 0).

    Raises:
        ValueError: ``ping_interval`` <= 0.
    """

    def __init__(self, client: aioredis.Redis, channel: str, *, name: str = "rummy-feed",
                 ping_interval: float = PING_INTERVAL) -> None:
        if not ping_interval > 0:
            raise ValueError(f"ping_interval must be > 0 seconds, got {ping_interval!r}")
        self._client = client
        self.channel = channel
        self._listeners: list[Callable[[str, int], None]] = []
        self._name = name
        self._ping = ping_interval
        self._task: asyncio.Task[None] | None = None
        self._subscribed = False
        self._heard = 0.0  # monotonic time of the last thing heard from Redis
        self.epoch = 0
        """Incremented each time Redis confirms a (re)subscription (0: never subscribed)."""
        self.notifications = 0
        """Notifications received (for tests and metrics)."""

    def add(self, listener: Callable[[str, int], None]) -> None:
        """Call ``listener(game_id, version)`` for every notification from now on."""
        self._listeners.append(listener)

    def discard(self, listener: Callable[[str, int], None]) -> None:
        """Stop calling ``listener`` (no-op when it is not registered)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def live(self) -> bool:
        """Subscribed, and heard from Redis within ``3 * ping_interval`` seconds."""
        return self._subscribed and time.monotonic() - self._heard < 3 * self._ping

    @property
    def running(self) -> bool:
        """True while the feed's task runs."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the feed's task on the running loop (no-op when running)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Stop the task and close the connection; the feed is no longer live."""
        self._subscribed = False
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, timeout=2)

    def _connection(self) -> aioredis.Redis:
        pool = self._client.connection_pool
        kwargs = dict(pool.connection_kwargs)
        kwargs["client_name"] = self._name
        # no silent reconnect inside redis-py: a lost connection must end the epoch here
        kwargs["retry"] = Retry(NoBackoff(), 0)
        # bytes, decoded here: a message that is not UTF-8 must not fail the connection's
        # reply parser (which would drop the connection, and the epoch with it)
        kwargs["decode_responses"] = False
        one = aioredis.ConnectionPool(connection_class=pool.connection_class,
                                      max_connections=1, **kwargs)
        return aioredis.Redis(connection_pool=one)

    async def _run(self) -> None:
        backoff = _BACKOFF_FIRST
        while True:
            conn = self._connection()
            pubsub: Any = conn.pubsub(ignore_subscribe_messages=False)  # untyped in redis-py
            try:
                await pubsub.subscribe(self.channel)
                await self._listen(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure: reconnect after a pause
                if self._subscribed or backoff == _BACKOFF_FIRST:
                    log.warning("append feed %s lost: %s: %s; reconnecting", self.channel,
                                type(exc).__name__, exc)
            finally:
                self._subscribed = False
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await conn.aclose()
            await asyncio.sleep(random.uniform(0, backoff))
            backoff = min(backoff * 2, _BACKOFF_MAX)

    def _tell(self, game_id: str, version: int) -> None:
        """Call every listener; one that raises is logged, and the others still hear."""
        for listener in list(self._listeners):
            try:
                listener(game_id, version)
            except Exception:  # noqa: BLE001 - a listener's bug must not drop the feed
                log.exception("append feed %s: a listener failed on %s %d", self.channel,
                              game_id, version)

    async def _listen(self, pubsub: Any) -> None:
        pinged = time.monotonic()
        while True:
            message = await pubsub.get_message(timeout=self._ping)
            now = time.monotonic()
            if message is not None:
                self._heard = now
                kind = _s(message.get("type"))
                if kind == "subscribe":
                    self.epoch += 1
                    self._subscribed = True
                elif kind == "message":
                    notice = parse_notice(message["data"])
                    if notice is None:  # not from the append script: dropped, nothing else
                        log.debug("append feed %s: ignored message %.80r", self.channel,
                                  message["data"])
                        continue
                    self.notifications += 1
                    self._tell(*notice)
                # "pong" (a reply to our ping) only refreshes _heard
            if now - pinged >= self._ping:
                pinged = now
                await pubsub.ping()
