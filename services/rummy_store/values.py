"""The values and errors of the event store (re-exported by :mod:`rummy_store.base`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "AppendInterrupted",
    "AppendResult",
    "GameUnlisted",
    "RequestIdReused",
    "StoreAccessDenied",
    "StoreError",
    "StoredEvent",
    "StreamRewound",
    "VersionConflict",
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


class AppendInterrupted(StoreError):
    """The store failed in the middle of an append (a Redis script that stopped at a command
    the store's user may not run, say): the events may or may not have been written. It
    is an outage to the caller, not a bug: retrying the append with the same
    ``request_id`` is safe (the retry returns the original result if the first one was
    written), and without a request id a retry fails with :class:`VersionConflict` if it
    was.

    Attributes:
        game_id, request_id, cause: the game, the append's request id (None: none), the
            store's error.
    """

    def __init__(self, game_id: str, request_id: str | None, cause: BaseException) -> None:
        super().__init__(game_id, request_id, cause)
        self.game_id = game_id
        self.request_id = request_id
        self.cause = cause

    def __str__(self) -> str:
        retry = (f"retry with the same request_id {self.request_id!r}" if self.request_id
                 else "read the game's version before retrying")
        return (f"an append to game {self.game_id!r} failed after it may have written "
                f"({type(self.cause).__name__}: {self.cause}); it may or may not have been "
                f"applied: {retry}")


class StoreAccessDenied(StoreError):
    """The store's user may not run a command the service needs (a Redis ACL): found by
    :meth:`Lifecycle.check_access` at start-up, before anything is written.

    Attributes:
        user, command, reason: the store user (``""`` if unknown), the command refused as
            it would be sent (e.g. ``"PUBLISH rummy:appended"``), Redis's words.
    """

    def __init__(self, user: str, command: str, reason: str) -> None:
        super().__init__(user, command, reason)
        self.user = user
        self.command = command
        self.reason = reason

    def __str__(self) -> str:
        who = f"user {self.user!r}" if self.user else "the store's user"
        return (f"the event store's {who} may not run {self.command} ({self.reason}); "
                f"grant it (Redis ACL) or use another user")
