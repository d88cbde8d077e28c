"""Bounds on open ``StreamEvents`` calls: per game, per client and per server;
and per-caller rate limits (:class:`RateLimiter`).

A client is the caller's seat token if it gave one (kept as a SHA-256 digest, never in clear),
else the host of its address (``context.peer()``: ``ipv4:10.0.0.7:53211`` -> ``10.0.0.7``).
Past a bound a new stream fails at once with :class:`~rummy_grpc.errors.StreamLimitExceeded`
(``RESOURCE_EXHAUSTED``, reason ``STREAM_LIMIT``); a stream's counts are released when its
handler ends for any reason (end of game, cancellation, deadline, error).
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rummy_grpc import metrics
from rummy_grpc.errors import RateLimited, StreamLimitExceeded
from rummy_grpc.model import (
    MAX_STREAMS,
    MAX_STREAMS_PER_CLIENT,
    MAX_STREAMS_PER_GAME,
    RATE_CALLERS,
)


def client_key(token: str, peer: str, caller: str = "") -> str:
    """Who a stream counts against: ``"token:<sha256 prefix>"`` for a seat token, else the
    caller identity ``caller`` when given (``"key:<name>"``, ``"cn:<name>"``: see
    :mod:`rummy_grpc.callers`), else ``"host:<host>"`` from a gRPC peer string (``ipv4:H:P``,
    ``ipv6:[H]:P``, ``unix:PATH``; anything else is taken whole).

    >>> client_key("", "ipv6:[::1]:5000"), client_key("", "ipv4:127.0.0.1:41234")
    ('host:::1', 'host:127.0.0.1')
    """
    if token:
        return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]
    if caller:
        return caller
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return "host:" + rest.rpartition(":")[0]
    if kind == "ipv6":
        return "host:" + rest.rpartition(":")[0].strip("[]")
    return "host:" + peer


class StreamLimits:
    """Counts of open streams and their bounds (one per server; use it from one event loop).

    Args:
        per_game: open streams allowed on one game (> 0).
        per_client: open streams allowed to one client (> 0).
        total: open streams allowed on the server (> 0).

    Raises:
        ValueError: a bound is not a positive integer.
    """

    def __init__(self, per_game: int = MAX_STREAMS_PER_GAME,
                 per_client: int = MAX_STREAMS_PER_CLIENT, total: int = MAX_STREAMS) -> None:
        for name, value in (("per_game", per_game), ("per_client", per_client),
                            ("total", total)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"stream bound {name} must be an integer > 0, got {value!r}")
        self.per_game = per_game
        self.per_client = per_client
        self.total = total
        self._games: dict[str, int] = {}
        self._clients: dict[str, int] = {}
        self._open = 0

    @property
    def open(self) -> int:
        """Streams open now (admitted and not yet ended)."""
        return self._open

    def count(self, *, game_id: str | None = None, client: str | None = None) -> int:
        """Open streams of one game or of one client (a :func:`client_key`)."""
        if game_id is not None:
            return self._games.get(game_id, 0)
        return self._clients.get(client or "", 0)

    def acquire(self, game_id: str, client: str) -> None:
        """Count one more stream of ``game_id`` for ``client``.

        Raises:
            StreamLimitExceeded: a bound would be passed (nothing is counted then).
        """
        if self._open >= self.total:
            raise StreamLimitExceeded("per server", self.total)
        if self._games.get(game_id, 0) >= self.per_game:
            raise StreamLimitExceeded("per game", self.per_game)
        if self._clients.get(client, 0) >= self.per_client:
            raise StreamLimitExceeded("per client", self.per_client)
        self._open += 1
        self._games[game_id] = self._games.get(game_id, 0) + 1
        self._clients[client] = self._clients.get(client, 0) + 1
        metrics.STREAMS_OPEN.inc()

    def release(self, game_id: str, client: str) -> None:
        """Uncount a stream counted by :meth:`acquire`."""
        self._open -= 1
        for counts, key in ((self._games, game_id), (self._clients, client)):
            left = counts[key] - 1
            if left:
                counts[key] = left
            else:
                del counts[key]
        metrics.STREAMS_OPEN.dec()

    @contextmanager
    def hold(self, game_id: str, client: str) -> Iterator[None]:
        """:meth:`acquire` now, :meth:`release` when the block exits however it exits.

        Raises:
            StreamLimitExceeded: from :meth:`acquire`.
        """
        self.acquire(game_id, client)
        try:
            yield
        finally:
            self.release(game_id, client)





class RateLimiter:
    """Token buckets, one per caller: each holds up to ``burst`` calls and refills at
    ``rate`` calls per second. Memory is bounded: at most ``max_callers`` buckets are kept,
    the least recently used dropped first (a dropped bucket would be full again after
    ``burst / rate`` idle seconds anyway, so only a caller idle that long or longer loses
    nothing by it; one pushed out sooner starts again with a full bucket).

    Use it from one event loop (no locking).

    Args:
        rate: calls per second per caller (> 0), or 0 to admit every call.
        burst: bucket size in calls (>= 1).
        kind: the label of ``rummy_rate_limited_total`` and of the errors raised.
        max_callers: most buckets kept.
        clock: monotonic seconds.

    Raises:
        ValueError: a negative or non-finite rate, a burst < 1, ``max_callers`` < 1.
    """

    def __init__(self, rate: float, burst: int, *, kind: str = "command",
                 max_callers: int = RATE_CALLERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not (0 <= rate < float("inf")):
            raise ValueError(f"rate must be a finite number of calls per second >= 0, "
                             f"got {rate!r}")
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValueError(f"burst must be an integer >= 1, got {burst!r}")
        if max_callers < 1:
            raise ValueError(f"max_callers must be >= 1, got {max_callers!r}")
        self.rate = float(rate)
        self.burst = burst
        self.kind = kind
        self.max_callers = max_callers
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """caller -> (tokens at ``stamp``, stamp)"""

    @property
    def enabled(self) -> bool:
        """False when the rate is 0 (every call admitted, nothing kept)."""
        return self.rate > 0

    def __len__(self) -> int:
        """Buckets kept now."""
        return len(self._buckets)

    def delay(self, caller: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens (one call; for a priced limit, the call's size: capped at
        ``burst``) from ``caller``'s bucket: 0.0 when admitted, else the seconds until the
        bucket holds them (nothing is taken then)."""
        if not self.enabled:
            return 0.0
        cost = min(float(cost), float(self.burst))
        now = self._clock()
        tokens, stamp = self._buckets.pop(caller, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - stamp) * self.rate)
        wait = 0.0
        if tokens >= cost:
            tokens -= cost
        else:
            wait = (cost - tokens) / self.rate
        self._buckets[caller] = (tokens, now)  # most recently used last
        while len(self._buckets) > self.max_callers:
            self._buckets.popitem(last=False)
        return wait

    def refund(self, caller: str, amount: float) -> None:
        """Give ``amount`` tokens back to ``caller``'s bucket (a call priced up front that
        cost less: a page with fewer events than asked for), up to ``burst``."""
        if not self.enabled or amount <= 0:
            return
        entry = self._buckets.get(caller)
        if entry is not None:
            self._buckets[caller] = (min(float(self.burst), entry[0] + amount), entry[1])

    def take(self, caller: str, cost: float = 1.0) -> None:
        """:meth:`delay`, raising when the call is not admitted.

        Raises:
            RateLimited: ``caller`` is past its limit (``retry_after``: seconds to wait);
                counted in ``rummy_rate_limited_total{kind}``.
        """
        wait = self.delay(caller, cost)
        if wait > 0:
            metrics.child(metrics.RATE_LIMITED_TOTAL, self.kind).inc()
            raise RateLimited(self.kind, wait)


__all__ = ["MAX_STREAMS", "MAX_STREAMS_PER_CLIENT", "MAX_STREAMS_PER_GAME", "RateLimiter",
           "StreamLimits", "client_key"]
