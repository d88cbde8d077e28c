"""The event-store port: values, errors and the :class:`EventStore` protocol.

The store knows nothing about Manipulation Rummy. It keeps, per game, an append-only stream of
JSON-serialisable event dicts (``rummy.events.to_dict`` output: ``{"type": ..., "v": ..., ...}``)
numbered 1, 2, 3, ... and a little JSON metadata, plus an index of games. Two implementations
(:class:`rummy_store.memory.MemoryEventStore`, :class:`rummy_store.redis_store.RedisEventStore`)
pass one contract suite (``tests/contract/test_event_store.py``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "AppendResult",
    "EventStore",
    "RequestIdReused",
    "StoreError",
    "StoredEvent",
    "StreamRewound",
    "VersionConflict",
    "request_digest",
]


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One recorded event of a game's stream.

    Attributes:
        version: 1-based position in the game's stream (Redis entry id ``0-<version>``).
        type: the event type name, e.g. ``"CardDrawn"`` (``data["type"]``).
        data: the event dict as stored (JSON round-tripped: tuples come back as lists).
        ts: append time in seconds since the epoch (store metadata, not part of the event;
            the Redis store uses the Redis server clock, all events of one append share it).
    """

    version: int
    type: str
    data: dict[str, Any]
    ts: float


@dataclass(frozen=True, slots=True)
class AppendResult:
    """The outcome of :meth:`EventStore.append`.

    Attributes:
        version: the stream version after the append; for a duplicate, the version right after
            the original append (not the current version of the stream).
        events: the events appended, in order (for a duplicate: the ones originally appended).
        duplicate: True when ``request_id`` had already been applied; nothing was appended.
        response: the ``response`` blob saved with the original request (None if none was).
    """

    version: int
    events: tuple[StoredEvent, ...]
    duplicate: bool
    response: dict[str, Any] | None


class StoreError(Exception):
    """Base class of the errors the event store raises on purpose."""


class GameUnlisted(StoreError):
    """A game's first events were appended, but entering the game in the games index (a
    second Redis call after the append script) failed: the game exists and is not listed
    yet. Retrying the append with the same ``request_id`` lists it (the retry is a
    duplicate, and a duplicate of a first append enters the game in the index).

    Attributes:
        game_id, version, cause: the game, its version after the append, the error.
    """

    def __init__(self, game_id: str, version: int, cause: BaseException) -> None:
        super().__init__(game_id, version, cause)
        self.game_id = game_id
        self.version = version
        self.cause = cause

    def __str__(self) -> str:
        return (f"game {self.game_id!r}: its events were written (version {self.version}) "
                f"but entering it in the games index failed ({type(self.cause).__name__}: "
                f"{self.cause}); retrying with the same request_id completes it")


class StreamRewound(StoreError):
    """A live subscription's stream went back in time: the store no longer has the events it
    delivered after ``actual`` (a failover to a replica that lagged, a Redis restarted from
    an older file). The subscription ends with this error instead of going on with a
    history that mixes the lost events and the ones appended since.

    Attributes:
        game_id, delivered, actual: the game, the last version the subscription delivered,
            the store's version when the rewind was found.
    """

    def __init__(self, game_id: str, delivered: int, actual: int) -> None:
        super().__init__(game_id, delivered, actual)
        self.game_id = game_id
        self.delivered = delivered
        self.actual = actual

    def __str__(self) -> str:
        return (f"the event store of game {self.game_id!r} went back to version {self.actual}"
                f" after this stream had delivered version {self.delivered} (a failover or a "
                f"restore lost the events after {self.actual}); read the game again and "
                f"subscribe with after_version <= {self.actual}")


class VersionConflict(StoreError):
    """The stream's version was not the ``expected_version`` of an append; nothing appended.

    Attributes:
        game_id, expected, actual: the game, the version the caller expected, the real one.
    """

    def __init__(self, game_id: str, expected: int, actual: int) -> None:
        super().__init__(game_id, expected, actual)
        self.game_id = game_id
        self.expected = expected
        self.actual = actual

    def __str__(self) -> str:
        return (
            f"version conflict on game {self.game_id!r}: expected version {self.expected}, "
            f"stream is at {self.actual}"
        )


class RequestIdReused(StoreError):
    """A ``request_id`` already applied to this game came back with a different request hash.

    Attributes:
        game_id, request_id: the game and the reused id.
    """

    def __init__(self, game_id: str, request_id: str) -> None:
        super().__init__(game_id, request_id)
        self.game_id = game_id
        self.request_id = request_id

    def __str__(self) -> str:
        return (
            f"request id {self.request_id!r} was already used on game {self.game_id!r} "
            "for a different request"
        )


@runtime_checkable
class EventStore(Protocol):
    """Append-only, versioned event streams, one per game (docs/architecture.md).

    All methods are coroutines except :meth:`subscribe`, which returns an async iterator.
    A ``game_id`` is a non-empty string without ``{``, ``}`` or whitespace; any other raises
    ``ValueError``.
    """

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
        """Atomically append ``events`` as versions ``expected_version + 1 ...``.

        In one atomic step: if ``request_id`` was already recorded for this game, return the
        original result (``duplicate=True``, nothing appended); else check that the stream is
        at ``expected_version``; append; record ``request_id`` with ``request_hash`` and the
        caller's ``response`` blob. An empty ``events`` with a ``request_id`` records the
        request only (after the version check). The first append to a game (version 1) also
        enters it in the game index as active.

        Raises:
            VersionConflict: the stream's version is not ``expected_version``.
            RequestIdReused: ``request_id`` was applied before with another ``request_hash``
                (``None`` counts as a hash of its own).
            ValueError: an event has no string ``"type"``; a bad game id or request id;
                ``expected_version < 0``.
            TypeError: an event is not a dict; an event or the response is not
                JSON-serialisable.
        """
        ...

    @property
    def idle_ttl(self) -> float:
        """Seconds after which an active game with no append expires with all its data
        (0: never). Readers that cache a game's state drop it after this long."""
        ...

    async def ping(self) -> None:
        """Return once the store answers; raise (a connection error, a timeout) when it does
        not. Health checks call it."""
        ...

    async def get_request(
        self, game_id: str, request_id: str, request_hash: str | None = None
    ) -> AppendResult | None:
        """The original result of ``request_id`` if an append with it was applied to this
        game (``duplicate=True``, its events and response), else ``None``. Reads only.

        Raises:
            RequestIdReused: the request id was applied with another ``request_hash``.
            ValueError: a bad game id or request id.
        """
        ...

    async def read(
        self, game_id: str, after_version: int = 0, to_version: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``after_version < version <= to_version`` (all if ``to_version`` is
        None), in version order; ``[]`` for an unknown game."""
        ...

    async def version(self, game_id: str) -> int:
        """The stream's version (its number of events); 0 for an unknown game."""
        ...

    async def exists(self, game_id: str) -> bool:
        """True when at least one event was appended to the game."""
        ...

    def subscribe(
        self, game_id: str, after_version: int = 0, *, block_ms: int = 1000
    ) -> AsyncGenerator[StoredEvent, None]:
        """Every event after ``after_version``, in order and without gaps, then each new one
        as it is appended; never ends by itself (cancel the consuming task or ``aclose()``).
        ``block_ms`` is how long one blocking wait lasts before it is renewed (milliseconds);
        a store whose subscribers share one reader may ignore it. A subscriber counts in
        :meth:`subscriber_count` (at the latest) once it has delivered its catch-up, and no
        longer once it is cancelled or closed."""
        ...

    def subscriber_count(self) -> int:
        """The live subscriptions of this store object, over all games (tests, metrics)."""
        ...

    async def schedule(self, game_id: str, delay: float, *, only_earlier: bool = False) -> None:
        """Record that the service must act on the game ``delay`` seconds from now (store
        clock): a bot's turn (due at once) or a turn deadline. One due time per game; with
        ``only_earlier`` an existing earlier due time is kept. Every replica polls the due
        games (:meth:`claim_due`), so a game goes on when the replica that served it dies.

        Raises:
            ValueError: a bad game id, or a negative or non-finite ``delay``.
        """
        ...

    async def unschedule(self, game_id: str) -> None:
        """Forget the game's due time (nothing for the service to do on it)."""
        ...

    async def claim_due(self, lease: float, *, limit: int = 64,
                        game_id: str | None = None) -> list[str]:
        """Atomically take up to ``limit`` games whose due time has come (store clock),
        oldest first, and move each one's due time ``lease`` seconds ahead, so that another
        replica claims it again only if this one does not act (or reschedule) in time. With
        ``game_id``, claim that game only, if it is due. Returns the claimed ids.

        Raises:
            ValueError: ``lease`` not > 0, ``limit`` not >= 1, a bad ``game_id``.
        """
        ...

    async def due(self, game_id: str) -> float | None:
        """The game's due time in epoch seconds (store clock), or None."""
        ...

    async def put_if_absent(self, name: str, value: dict[str, Any],
                            ttl: float) -> dict[str, Any]:
        """Store the JSON dict ``value`` under ``name`` for ``ttl`` seconds unless a value is
        stored there already; return the value stored (``value`` itself, or the earlier
        one). Atomic: of concurrent callers exactly one value wins. ``CreateGame`` request
        ids use it (an idempotency window of ``ttl``).

        Raises:
            ValueError: an empty or whitespace-containing ``name``; ``ttl`` not > 0.
            TypeError: ``value`` is not a JSON-serialisable dict.
        """
        ...

    async def put_meta(self, game_id: str, meta: dict[str, Any]) -> None:
        """Replace the game's small JSON metadata (seat kinds, token hashes, ...). It does not
        enter the game in the index: the first append does (meta without events is no game).
        With an idle expiry, meta expires with the game's other keys. ``TypeError`` if
        ``meta`` is not a JSON-serialisable dict."""
        ...

    async def get_meta(self, game_id: str) -> dict[str, Any] | None:
        """The metadata last put, or None."""
        ...

    async def list_games(self, *, limit: int = 100, active_only: bool = False) -> list[str]:
        """Up to ``limit`` game ids of the index, newest first (by time of entry in the
        index, ties by id descending); only the active ones if ``active_only``. Games that
        expired while idle are skipped (and leave the index)."""
        ...

    async def set_active(self, game_id: str, active: bool) -> bool:
        """Mark a game active or not (the service clears it when the game ends); a game not
        yet in the index is entered in it. Marking it not active keeps the game for good
        (no idle expiry) and its request records for the store's request window only.

        Returns:
            Whether the game was listed as active before the call (so that of two replicas
            finishing one game, or a game refused again and again at its cap of events,
            exactly one call sees ``True``).
        """
        ...

    async def put_snapshot(self, game_id: str, version: int, data: dict[str, Any]) -> None:
        """Keep ``data`` (a JSON-serialisable dict, e.g. ``rummy.snapshot.state_to_dict``
        output) as the game's snapshot at stream ``version``, replacing one kept at that
        version. Snapshots are a cache of the stream: the store does not check ``data``
        against the events, and keeps every version put.

        Raises:
            ValueError: a bad game id; ``version`` not an integer >= 0.
            TypeError: ``data`` is not a dict or not JSON-serialisable.
        """
        ...

    async def get_snapshot(self, game_id: str,
                           max_version: int) -> tuple[int, dict[str, Any]] | None:
        """The newest snapshot at a version ``<= max_version`` as ``(version, data)``
        (``data`` JSON round-tripped), or None when there is none (or no such game).

        Raises:
            ValueError: a bad game id; ``max_version`` not an integer >= 0.
        """
        ...

    async def close(self) -> None:
        """Release connections. The store is unusable afterwards."""
        ...


# -- helpers shared by the implementations --------------------------------------------------


_GAME_ID = re.compile(r"[^{}\s]+")  # \s: what str.isspace() calls whitespace


def check_game_id(game_id: str) -> str:
    """Return ``game_id`` if it is usable inside a Redis hash tag; raise ``ValueError``."""
    if not isinstance(game_id, str) or _GAME_ID.fullmatch(game_id) is None \
            or not _encodes(game_id):
        raise ValueError(f"bad game id {game_id!r}: need a non-empty UTF-8 string without "
                         f"{{}} or spaces")
    return game_id


def check_version(name: str, value: int) -> int:
    """Return ``value`` if it is an int >= 0; raise ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def check_delay(name: str, value: float) -> float:
    """Return ``value`` as a float if it is a finite number >= 0; raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def check_claim(lease: float, limit: int) -> None:
    """Raise ``ValueError`` unless ``lease`` > 0 seconds and ``limit`` is an int >= 1."""
    if check_delay("lease", lease) <= 0:
        raise ValueError(f"lease must be > 0 seconds, got {lease!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")


def check_name(name: str) -> str:
    """Return ``name`` if it is a non-empty string without whitespace; raise ``ValueError``."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"bad name {name!r}: need a non-empty string without spaces")
    return name


def check_request_id(request_id: str | None) -> str | None:
    """Return ``request_id`` if it is None or a non-empty string; raise ``ValueError``."""
    if request_id is not None and (not isinstance(request_id, str) or not request_id
                                   or not _encodes(request_id)):
        raise ValueError(f"request_id must be None or a non-empty UTF-8 string, got "
                         f"{request_id!r}")
    return request_id


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def dumps(obj: Any, what: str = "a value") -> str:
    """Compact JSON, the one encoding the stores keep (raises ``TypeError`` if unencodable,
    a lone surrogate included, naming ``what``: Redis keeps UTF-8, and every store refuses
    alike; ``ValueError`` for NaN or infinity)."""
    return utf8(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False),
                what)


def utf8(text: str, what: str = "a value") -> str:
    """``text`` if it encodes as UTF-8; raises ``TypeError`` naming ``what`` otherwise (a
    lone surrogate such as ``"\\ud800"``, which JSON allows and Redis cannot store)."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise TypeError(f"{what} is not valid UTF-8 text ({exc.reason} at {exc.start}: "
                        f"{text[max(0, exc.start - 10):exc.start + 10]!r})") from None
    return text


def serialise_snapshot(version: int, data: dict[str, Any]) -> str:
    """The JSON text of a snapshot's ``data``, validated (``version`` must be an int >= 0).

    Raises:
        ValueError: a bad ``version``.
        TypeError: ``data`` is not a dict or not JSON-serialisable.
    """
    check_version("version", version)
    if not isinstance(data, dict):
        raise TypeError(f"snapshot data must be a dict, got {type(data).__name__}")
    try:
        return dumps(data)
    except ValueError as exc:  # NaN / infinity
        raise TypeError(f"snapshot data is not JSON-serialisable: {exc}") from exc


def serialise_events(events: Sequence[dict[str, Any]],
                     encode: Callable[[dict[str, Any]], str] | None = None
                     ) -> list[tuple[str, str]]:
    """``(type, text)`` for each event dict, validated; ``encode`` makes the text (default
    :func:`dumps`, the JSON object; the Redis store passes ``rummy_store.codec.pack``).

    Raises:
        ValueError: an event has no non-empty string ``"type"``.
        TypeError: an event is not a dict, not JSON-serialisable or not UTF-8 text (the
            message names the event's index).
    """
    out = []
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise TypeError(f"event {i} is a {type(event).__name__}, not a dict: {event!r}")
        kind = event.get("type")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"event {i} has no string 'type': {event!r}")
        try:
            out.append((kind, (encode or dumps)(event)))
        except ValueError as exc:  # NaN / infinity
            raise TypeError(f"event {i} is not JSON-serialisable: {exc}") from exc
        except TypeError as exc:
            raise TypeError(f"event {i}: {exc}") from None
    return out


def request_digest(payload: Any) -> str:
    """A stable hash of a request body for ``append(request_hash=...)``: the SHA-256 hex
    digest of its canonical JSON (keys sorted). Raises ``TypeError`` if not encodable.

    >>> request_digest({"b": 1, "a": [2]}) == request_digest({"a": [2], "b": 1})
    True
    """
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
