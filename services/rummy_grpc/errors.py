"""Errors of the application service and the one table that maps every error to a gRPC status.

================================  ===================  =====================================
exception                         status               details
================================  ===================  =====================================
``CommandError`` (out of range)   INVALID_ARGUMENT     ErrorInfo reason ``BAD_REQUEST``
``NotationError``                 INVALID_ARGUMENT     ErrorInfo reason ``MALFORMED``
``UndecodableRequest``            INVALID_ARGUMENT     reason ``MALFORMED``
``InvalidRuleSetError``           INVALID_ARGUMENT     reason ``INVALID_RULES``
``BadRequest``                    INVALID_ARGUMENT     reason ``BAD_REQUEST``
``NotYourTurnError``              PERMISSION_DENIED    reason ``NOT_YOUR_TURN``
``GameOverError``                 FAILED_PRECONDITION  reason ``GAME_OVER``
``IllegalMoveError``              FAILED_PRECONDITION  reason ``ILLEGAL_MOVE``, rule id
``Unauthenticated``               UNAUTHENTICATED      reason ``NO_TOKEN``
``PermissionDenied``              PERMISSION_DENIED    reason ``BAD_TOKEN``
``GameNotFound``                  NOT_FOUND            reason ``GAME_NOT_FOUND``
``GameLimitReached``              FAILED_PRECONDITION  reason ``GAME_LIMIT``
``GameNotOver``                   FAILED_PRECONDITION  reason ``GAME_NOT_OVER``
``HintsDisabled``                 FAILED_PRECONDITION  reason ``HINTS_DISABLED``
``SeedNotAllowed``                PERMISSION_DENIED    reason ``SEED_NEEDS_ADMIN``
``VersionConflict``               ABORTED              reason ``VERSION_CONFLICT``
``RequestIdReused``               ALREADY_EXISTS       reason ``REQUEST_ID_REUSED``
``StreamLimitExceeded``           RESOURCE_EXHAUSTED   reason ``STREAM_LIMIT``
``StreamRewound``                 DATA_LOSS            reason ``STREAM_REWOUND``
``NoCredentials``                 UNAUTHENTICATED      reason ``NO_CREDENTIALS``
``BadCredentials``                PERMISSION_DENIED    reason ``BAD_CREDENTIALS``
``RateLimited``                   RESOURCE_EXHAUSTED   reason ``RATE_LIMITED``, RetryInfo
``GameUnlisted``                  UNAVAILABLE          reason ``STORE_UNAVAILABLE``
``AppendInterrupted``             UNAVAILABLE          reason ``STORE_UNAVAILABLE``
``StoreError`` (other)            UNAVAILABLE          reason ``STORE``
Redis refusing a write (OOM, ...) UNAVAILABLE          reason ``STORE`` (:func:`store_refusal`)
================================  ===================  =====================================

Every rule-related status carries the rule id (``"R5.8"``) three ways: in the message, in the
trailing metadata key ``rummy-rule``, and in a ``google.rpc.ErrorInfo`` detail
(``metadata["rule"]``, domain ``rummy``) of the standard ``grpc-status-details-bin`` trailer
(read it with ``grpc_status.rpc_status.from_call``). ``RATE_LIMITED`` adds a
``google.rpc.RetryInfo`` detail (``retry_delay``: how long to wait) after the ErrorInfo.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import grpc
import redis.exceptions
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from rummy_store.base import (
    AppendInterrupted,
    GameUnlisted,
    RequestIdReused,
    StoreError,
    StreamRewound,
    VersionConflict,
)

from rummy.errors import (
    CommandError,
    GameOverError,
    IllegalMoveError,
    InvalidRuleSetError,
    NotationError,
    NotYourTurnError,
    RummyError,
)

DOMAIN = "rummy"
RULE_KEY = "rummy-rule"
REASON_KEY = "rummy-reason"


class ServiceError(Exception):
    """Base of the application service's own errors (not rule errors)."""


class GameNotFound(ServiceError):
    """No game with this id."""


class Unauthenticated(ServiceError):
    """A seat token is required and none was given."""


class PermissionDenied(ServiceError):
    """The token is not a token of this game (or the admin token is wrong)."""


class GameLimitReached(ServiceError):
    """The game reached the server's cap of events per game (``--max-events``); no command
    can be appended to it any more. ``limit`` is the cap."""

    def __init__(self, game_id: str, limit: int) -> None:
        super().__init__(f"game {game_id!r} reached the cap of {limit} events per game; "
                         "no further command is accepted (a server limit, docs/api.md)")
        self.limit = limit


class SeedNotAllowed(ServiceError):
    """A client chose the seed of a game with a human seat without the admin token: the
    seed gives away every hand and the stock order."""


class GameNotOver(ServiceError):
    """A call that needs a finished game (``ReviewGame``) on a game still being played."""


class HintsDisabled(ServiceError):
    """``GetHint`` on a server started with ``rummy serve --hints off``."""

    def __init__(self) -> None:
        super().__init__("hints are disabled on this server (rummy serve --hints off); "
                         "GetLegalActions and CheckMeld still answer")


class BadRequest(ServiceError):
    """A malformed request that is not a card-notation problem (bad seat list, size caps);
    ``rule`` is the rule it breaks, if any (``"R1.1"`` for a seat count)."""

    def __init__(self, message: str, *, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


class UndecodableRequest(ServiceError):
    """The bytes of a request are not a protobuf message of the method's request type.

    Raised by :mod:`rummy_grpc.decoding` before any handler runs; mapped to
    ``INVALID_ARGUMENT`` with reason ``MALFORMED``.

    Attributes:
        method: the full method path, e.g. ``"/rummy_api.v1.GameService/GetView"``.
        size: the length of the request in bytes.
        why: the parser's explanation (the ``DecodeError`` text).
    """

    def __init__(self, method: str, size: int, why: str) -> None:
        super().__init__(method, size, why)
        self.method = method
        self.size = size
        self.why = why

    def __str__(self) -> str:
        return f"{self.method}: the request could not be decoded ({self.size} bytes): {self.why}"


class StreamLimitExceeded(ServiceError):
    """A new ``StreamEvents`` call would pass a bound on open streams.

    Attributes:
        bound: which bound: ``"per game"``, ``"per client"`` or ``"per server"``.
        limit: the bound's value (open streams).
    """

    def __init__(self, bound: str, limit: int) -> None:
        super().__init__(bound, limit)
        self.bound = bound
        self.limit = limit

    def __str__(self) -> str:
        return (f"too many open event streams: the limit of {self.limit} streams {self.bound} "
                "is reached; close a stream you no longer read, or retry later with back-off")


class NoCredentials(ServiceError):
    """A call reserved to known callers (``CreateGame``, a request with ``admin_token``)
    came with no caller credentials: no ``authorization`` API key and no client certificate
    (:mod:`rummy_grpc.callers`)."""

    def __init__(self) -> None:
        super().__init__("this call is reserved to known callers: send an API key "
                         "(metadata 'authorization: Bearer <key>') or a client certificate "
                         "the server accepts")


class BadCredentials(ServiceError):
    """A call reserved to known callers came with credentials the server does not accept.
    The message is the same whatever was wrong (malformed header, unknown key, a certificate
    name not allowed): it never tells which part failed."""

    def __init__(self) -> None:
        super().__init__("the caller's credentials are not accepted for this call")


class RateLimited(ServiceError):
    """A caller went past its rate limit (:class:`rummy_grpc.limits.RateLimiter`).

    Attributes:
        kind: which limit: ``"command"`` (game calls), ``"create"`` (``CreateGame``) or
            ``"events"`` (events read by ``GetEvents``, priced by page size).
        retry_after: seconds until the caller's next call of that kind is admitted (> 0).
    """

    def __init__(self, kind: str, retry_after: float) -> None:
        super().__init__(kind, retry_after)
        self.kind = kind
        self.retry_after = retry_after

    def __str__(self) -> str:
        what = {"create": "CreateGame calls",
                "events": "events read (GetEvents pages cost their size)"}.get(
                    self.kind, "game calls")
        wait = (f"{self.retry_after:.3f} s" if self.retry_after >= 0.001
                else "under a millisecond")  # "retry in 0.000 s" read as "now" or a bug
        return (f"rate limit of {what} for this caller reached; retry in {wait} "
                "(RetryInfo detail)")


MAX_MESSAGE = 1000  #: characters of an error message sent to a client


@dataclass(frozen=True, slots=True)
class Mapped:
    """A gRPC status for an exception: code, message, ErrorInfo reason, rule id (or ""),
    and ``retry_delay``: seconds a client should wait before retrying (> 0: a
    ``google.rpc.RetryInfo`` detail is added; 0: none)."""

    code: grpc.StatusCode
    message: str
    reason: str
    rule: str = ""
    retry_delay: float = 0.0

    def __post_init__(self) -> None:
        # messages may quote client input: keep them (and the details trailer) far below
        # gRPC's metadata limit, or the client would see RESOURCE_EXHAUSTED instead
        if len(self.message) > MAX_MESSAGE:
            object.__setattr__(self, "message", self.message[:MAX_MESSAGE] + "…")

    def status(self) -> grpc.Status:
        """The rich status (``google.rpc.Status`` with one ``ErrorInfo``: reason, domain
        ``rummy``, ``metadata["rule"]``; then a ``RetryInfo`` when ``retry_delay`` > 0),
        built by grpcio-status's ``rpc_status.to_status``, which puts it in the
        ``grpc-status-details-bin`` trailer."""
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN)
        if self.rule:
            info.metadata["rule"] = self.rule
        detail = any_pb2.Any()
        detail.Pack(info)
        details = [detail]
        if self.retry_delay > 0:
            retry = error_details_pb2.RetryInfo()
            nanos = max(1, round(self.retry_delay * 1e9))
            retry.retry_delay.seconds, retry.retry_delay.nanos = divmod(nanos, 10**9)
            extra = any_pb2.Any()
            extra.Pack(retry)
            details.append(extra)
        return rpc_status.to_status(status_pb2.Status(
            code=self.code.value[0], message=self.message, details=details))

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        """``rummy-reason``, ``rummy-rule`` (if any) and ``grpc-status-details-bin``."""
        md: list[tuple[str, str | bytes]] = [(REASON_KEY, self.reason)]
        if self.rule:
            md.append((RULE_KEY, self.rule))
        return (*md, *self.status().trailing_metadata)


_REFUSAL_CLASSES = (redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError,
                    redis.exceptions.NoPermissionError, redis.exceptions.TryAgainError,
                    redis.exceptions.ClusterDownError)
# error codes redis-py leaves at the start of a plain ResponseError's message
_PIPELINE_ERROR = re.compile(r"^Command # \d+ \(.*?\) of pipeline caused error: \(?['\"]?",
                             re.S)
_REFUSAL_CODES = ("MISCONF", "NOREPLICAS", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN",
                  "OOM", "READONLY", "NOPERM")


def store_refusal(exc: BaseException) -> str | None:
    """The Redis error code when ``exc`` is Redis refusing an operation because of its own
    state or configuration, not because of the command: ``OOM`` (``maxmemory`` reached
    under ``noeviction``), ``READONLY`` (a replica, e.g. a demoted primary during a
    failover), ``MISCONF`` (a failed RDB save stops writes), ``NOREPLICAS``
    (``min-replicas-to-write``), ``BUSY`` (a long script), ``NOPERM`` (ACL), ``TRYAGAIN`` /
    ``CLUSTERDOWN`` / ``MASTERDOWN`` (a cluster or replica in transition); else ``None``.
    Redis refuses such a command before it runs (scripts included), so nothing of it was
    applied."""
    if not isinstance(exc, redis.exceptions.ResponseError):
        return None
    code = getattr(exc, "status_code", None)
    if isinstance(exc, _REFUSAL_CLASSES):
        return str(code or type(exc).__name__)
    # a queued command of a pipeline or MULTI/EXEC: redis-py rewrites the message as
    # "Command # 1 (ZREM ...) of pipeline caused error: ('NOREPLICAS ...',)"
    text = _PIPELINE_ERROR.sub("", str(exc), count=1)
    word = text.split(" ", 1)[0]
    return word if word in _REFUSAL_CODES else None


def _refusal_text(exc: BaseException, code: str) -> str:
    """The refusal's own words: without redis-py's pipeline wrapping and without the code
    repeated ("Redis NOREPLICAS: NOREPLICAS Not enough ...")."""
    text, wrapped = _PIPELINE_ERROR.subn("", str(exc), count=1)
    if wrapped:  # the rest of the tuple's repr
        text = text.removesuffix(",)").rstrip("'\"")
    return text[len(code):].strip() if text.startswith(code) else text


def map_error(exc: BaseException) -> Mapped | None:
    """The status for ``exc``, or ``None`` for an unexpected exception (a bug: INTERNAL)."""
    if isinstance(exc, NotYourTurnError):
        return Mapped(grpc.StatusCode.PERMISSION_DENIED, str(exc), "NOT_YOUR_TURN", exc.rule)
    if isinstance(exc, GameOverError):
        return Mapped(grpc.StatusCode.FAILED_PRECONDITION, str(exc), "GAME_OVER", exc.rule)
    if isinstance(exc, IllegalMoveError):
        return Mapped(grpc.StatusCode.FAILED_PRECONDITION, str(exc), "ILLEGAL_MOVE", exc.rule)
    if isinstance(exc, InvalidRuleSetError):
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "INVALID_RULES", exc.rule)
    if isinstance(exc, CommandError):  # well-formed but out of range (turn_seconds)
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "BAD_REQUEST", exc.rule)
    if isinstance(exc, NotationError):
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "MALFORMED", exc.rule)
    if isinstance(exc, RummyError):
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "MALFORMED", exc.rule)
    if isinstance(exc, UndecodableRequest):
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "MALFORMED")
    if isinstance(exc, BadRequest):
        return Mapped(grpc.StatusCode.INVALID_ARGUMENT, str(exc), "BAD_REQUEST", exc.rule)
    if isinstance(exc, NoCredentials):
        return Mapped(grpc.StatusCode.UNAUTHENTICATED, str(exc), "NO_CREDENTIALS")
    if isinstance(exc, BadCredentials):
        return Mapped(grpc.StatusCode.PERMISSION_DENIED, str(exc), "BAD_CREDENTIALS")
    if isinstance(exc, RateLimited):
        return Mapped(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), "RATE_LIMITED",
                      retry_delay=exc.retry_after)
    if isinstance(exc, Unauthenticated):
        return Mapped(grpc.StatusCode.UNAUTHENTICATED, str(exc), "NO_TOKEN")
    if isinstance(exc, PermissionDenied):
        return Mapped(grpc.StatusCode.PERMISSION_DENIED, str(exc), "BAD_TOKEN")
    if isinstance(exc, GameLimitReached):
        return Mapped(grpc.StatusCode.FAILED_PRECONDITION, str(exc), "GAME_LIMIT")
    if isinstance(exc, GameNotOver):
        return Mapped(grpc.StatusCode.FAILED_PRECONDITION, str(exc), "GAME_NOT_OVER")
    if isinstance(exc, HintsDisabled):
        return Mapped(grpc.StatusCode.FAILED_PRECONDITION, str(exc), "HINTS_DISABLED")
    if isinstance(exc, SeedNotAllowed):
        return Mapped(grpc.StatusCode.PERMISSION_DENIED, str(exc), "SEED_NEEDS_ADMIN")
    if isinstance(exc, GameNotFound):
        return Mapped(grpc.StatusCode.NOT_FOUND, str(exc), "GAME_NOT_FOUND")
    if isinstance(exc, VersionConflict):
        return Mapped(grpc.StatusCode.ABORTED, str(exc), "VERSION_CONFLICT")
    if isinstance(exc, RequestIdReused):
        return Mapped(grpc.StatusCode.ALREADY_EXISTS, str(exc), "REQUEST_ID_REUSED")
    if isinstance(exc, StreamLimitExceeded):
        return Mapped(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), "STREAM_LIMIT")
    if isinstance(exc, StreamRewound):  # the store lost what the stream had sent
        return Mapped(grpc.StatusCode.DATA_LOSS, str(exc), "STREAM_REWOUND")
    if isinstance(exc, (GameUnlisted, AppendInterrupted)):  # an outage: retry is safe
        return Mapped(grpc.StatusCode.UNAVAILABLE, f"event store: {exc}", "STORE_UNAVAILABLE")
    if isinstance(exc, StoreError):
        return Mapped(grpc.StatusCode.UNAVAILABLE, f"event store: {exc}", "STORE")
    refused = store_refusal(exc)
    if refused is not None:  # an operational state of Redis, not a bug: nothing was applied
        return Mapped(grpc.StatusCode.UNAVAILABLE,
                      f"the event store refused the operation (Redis {refused}: "
                      f"{_refusal_text(exc, refused)}); "
                      "nothing was applied: retry later, with the same request_id for a "
                      "command", "STORE")
    if isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        # an infrastructure fault, not a bug: the client may retry; a command's outcome is
        # unknown, and retrying it with the same request_id is safe (docs/api.md)
        return Mapped(grpc.StatusCode.UNAVAILABLE,
                      f"event store unavailable ({type(exc).__name__}); retry later: a "
                      "command may or may not have been applied, and retrying it with the "
                      "same request_id is safe", "STORE_UNAVAILABLE")
    return None


def store_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` is an infrastructure fault of the event store (a connection error
    or a timeout: ``UNAVAILABLE``, reason ``STORE_UNAVAILABLE``; or Redis refusing writes,
    :func:`store_refusal`), not a bug."""
    mapped = map_error(exc)
    return mapped is not None and (mapped.reason == "STORE_UNAVAILABLE"
                                   or store_refusal(exc) is not None)


def log_failure(logger: logging.Logger, what: str, exc: BaseException, then: str) -> None:
    """Log that background work failed: a store outage (:func:`store_unavailable`) in one
    warning line, anything else at ERROR with its traceback; ``what`` names the work and
    ``then`` says what happens next (``"it is retried after its lease (3.0 s)"``)."""
    if store_unavailable(exc):  # an outage, not a bug: one line, no traceback
        logger.warning("%s failed (%s: %s); %s", what, type(exc).__name__, exc, then)
    else:
        logger.error("%s failed; %s", what, then, exc_info=exc)


def outcome(exc: BaseException | None) -> str:
    """A bounded ``outcome`` label for ``rummy_commands_total``: ``ok`` or the reason in
    lower case (``illegal_move``, ``version_conflict``, ...), ``error`` for a bug."""
    if exc is None:
        return "ok"
    mapped = map_error(exc)
    return mapped.reason.lower() if mapped else "error"
