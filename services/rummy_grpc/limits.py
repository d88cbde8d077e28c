"""Bounds on open ``StreamEvents`` calls (issue 12): per game, per client and per server.

A client is the caller's seat token if it gave one (kept as a SHA-256 digest, never in clear),
else the host of its address (``context.peer()``: ``ipv4:10.0.0.7:53211`` -> ``10.0.0.7``).
Past a bound a new stream fails at once with :class:`~rummy_grpc.errors.StreamLimitExceeded`
(``RESOURCE_EXHAUSTED``, reason ``STREAM_LIMIT``); a stream's counts are released when its
handler ends for any reason (end of game, cancellation, deadline, error).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from rummy_grpc import metrics
from rummy_grpc.errors import StreamLimitExceeded
from rummy_grpc.model import MAX_STREAMS, MAX_STREAMS_PER_CLIENT, MAX_STREAMS_PER_GAME


def client_key(token: str, peer: str) -> str:
    """Who a stream counts against: ``"token:<sha256 prefix>"`` for a seat token, else
    ``"host:<host>"`` from a gRPC peer string (``ipv4:H:P``, ``ipv6:[H]:P``, ``unix:PATH``;
    anything else is taken whole).

    >>> client_key("", "ipv6:[::1]:5000"), client_key("", "ipv4:127.0.0.1:41234")
    ('host:::1', 'host:127.0.0.1')
    """
    if token:
        return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]
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


__all__ = ["MAX_STREAMS", "MAX_STREAMS_PER_CLIENT", "MAX_STREAMS_PER_GAME", "StreamLimits",
           "client_key"]
