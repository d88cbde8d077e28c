"""``GameService.Session``: one bidirectional stream per seat, for its commands and their
results, with every other event of the game pushed on it.

A unary command pays for a new gRPC call each time (a new HTTP/2 stream, its headers and
trailers, a task, the caller's identification); a seat that plays a whole game on one
stream pays those once. What a command does is the unary path's own
(:meth:`rummy_grpc.app.GameApp.command`: token checked on every command, decided by the pure
core, appended with the expected version and the request id, so every guarantee of the
unary calls holds: atomic expected-version appends, idempotent retries, I3), and so is what
a refused command says (:func:`rummy_grpc.errors.map_error`, sent as a
``SessionError`` result: the stream stays open).

The protocol (docs/api.md, "Session"):

* the first request is ``open`` (game, seat token, ``after_version``): the token is checked,
  the stream counted against the ``StreamEvents`` bounds (:class:`~rummy_grpc.limits.
  StreamLimits`), and the game's events after ``after_version`` are pushed from then on
  (:meth:`rummy_grpc.reads.ReadModels.stream`: catch-up then live, redacted for the seat);
  an ``open`` that fails ends the stream with the unary status (``UNAUTHENTICATED``,
  ``PERMISSION_DENIED``, ``NOT_FOUND``, ``RESOURCE_EXHAUSTED`` / ``STREAM_LIMIT``, ...);
* each ``command`` then gets one ``result`` with its ``tag``, in the order sent; every
  command takes one token of the caller's command rate limit (``RATE_LIMITED`` result past
  it);
* every event after ``after_version`` reaches the seat once: in the result of the command
  that appended it, or pushed (events pushed while a command is in flight wait for its
  result, and are dropped if it carried them);
* the stream ends when the client half-closes or cancels (the push is stopped, the bounds
  released); a request that does not decode ends it with ``INVALID_ARGUMENT`` /
  ``MALFORMED``.

Each command is timed into ``rummy_grpc_server_handling_seconds{method=".../Session/<Kind>"}``
and counted in ``rummy_grpc_server_handled_total`` by its code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store.base import StoredEvent

from rummy.events import to_dict
from rummy_grpc import metrics
from rummy_grpc.aborts import abort
from rummy_grpc.auth import authenticate
from rummy_grpc.convert import (
    event_dict_to_proto,
    event_to_proto,
    table_from_proto,
    view_to_proto,
)
from rummy_grpc.errors import BadRequest, ServiceError, UndecodableRequest, map_error
from rummy_grpc.limits import client_key
from rummy_grpc.model import Outcome
from rummy_grpc.reads import redact_for, redact_record

log = logging.getLogger("rummy_grpc")

METHOD = "/rummy_api.v1.GameService/Session"
"""The method's full path."""
KINDS: dict[int, str] = {
    pb.SESSION_COMMAND_KIND_DRAW: "draw",
    pb.SESSION_COMMAND_KIND_PASS: "pass",
    pb.SESSION_COMMAND_KIND_MELD: "meld",
    pb.SESSION_COMMAND_KIND_KNOCK: "knock",
    pb.SESSION_COMMAND_KIND_END_TURN: "end_turn",
}
"""Command kind of the proto -> the command kind of :meth:`GameApp.command`."""
_LABELS = {k: f"{METHOD}/{v}" for k, v in KINDS.items()}
_UNKNOWN_LABEL = f"{METHOD}/unknown"
_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}


def session_error(exc: BaseException) -> pb.SessionError | None:
    """The ``SessionError`` a unary call would have ended with for ``exc``; ``None`` for an
    exception :func:`map_error` does not know (an internal error: the stream is aborted)."""
    mapped = map_error(exc)
    if mapped is None:
        return None
    return pb.SessionError(code=mapped.code.value[0], message=mapped.message,
                           reason=mapped.reason, rule=mapped.rule,
                           retry_delay=mapped.retry_delay)


def outcome_to_proto(out: Outcome, with_view: bool) -> pb.CommandResult:
    """A command's outcome as the unary calls' ``CommandResult`` (view only if asked)."""
    result = pb.CommandResult(
        version=out.version,
        events=[event_to_proto(t.event, t.version, t.ts) for t in out.events],
        duplicate=out.duplicate)
    if with_view and out.view is not None:
        result.view.CopyFrom(view_to_proto(out.view, turn_deadline=out.turn_deadline))
    return result


class ClientGone(Exception):
    """A write on the call failed: the client cancelled, its deadline passed or its
    connection closed (grpcio reports it as a failed batch, before the call's
    ``cancelled()`` may say so)."""


class _Writer:
    """The call's one writer (results and pushed events come from two tasks).

    ``next`` is the version the seat is owed next: events reach it once each, in version
    order. While a command is in flight (:meth:`begin` .. :meth:`result`), pushed events
    are held back. The result then goes out after every held or still-arriving event
    older than the first one it carries (the catch-up after ``open``, another seat's
    out-of-turn move), and the held events it did not carry follow it. Pushed events come
    as stored records and are decoded and redacted (``show``) only when they are sent: the
    seat's own events, which its results carry, cost no decoding."""

    CATCH_UP_WAIT = 30.0
    """Seconds a result waits for the push to deliver the events older than the ones it
    carries (the subscription's catch-up); past it the result goes out anyway, logged."""

    def __init__(self, context: grpc.aio.ServicerContext,
                 show: Callable[[StoredEvent], pb.Event], after_version: int = 0) -> None:
        self._context = context
        self._show = show
        self._lock = asyncio.Lock()
        self._busy = False
        self._held: list[StoredEvent] = []
        self._arrived = asyncio.Event()
        self.next = after_version + 1

    def begin(self) -> None:
        """A command is in flight: hold pushed events back."""
        self._busy = True

    async def result(self, message: pb.SessionResponse, carried: set[int]) -> None:
        """Send a command's result (``carried``: the versions of the events it carries;
        empty for a refusal): first the events owed before the oldest of them, then the
        result, then the held events it did not carry."""
        async with self._lock:
            if carried:
                await self._drain_before(min(carried))
            await self._write(message)
            if carried:
                self.next = max(self.next, max(carried) + 1)
            held, self._held, self._busy = self._held, [], False
            for se in held:
                if se.version >= self.next and se.version not in carried:
                    await self._write(pb.SessionResponse(event=self._show(se)))
                    self.next = se.version + 1

    async def _drain_before(self, first: int) -> None:
        """Write the held events older than version ``first`` that the seat is owed, in
        order, waiting for the push to deliver those not arrived yet."""
        deadline = asyncio.get_running_loop().time() + self.CATCH_UP_WAIT
        while self.next < first:
            se = next((e for e in self._held if e.version == self.next), None)
            if se is None:
                if any(e.version > self.next for e in self._held):
                    self.next = min(e.version for e in self._held if e.version > self.next)
                    continue  # a gap in the log (never expected): skip to what exists
                self._arrived.clear()
                left = deadline - asyncio.get_running_loop().time()
                try:
                    await asyncio.wait_for(self._arrived.wait(), max(left, 0.0))
                except TimeoutError:
                    log.warning("session: events %d..%d did not arrive within %.0f s; the "
                                "result goes out before them", self.next, first - 1,
                                self.CATCH_UP_WAIT)
                    return
                continue
            self._held.remove(se)
            await self._write(pb.SessionResponse(event=self._show(se)))
            self.next = se.version + 1

    async def push(self, se: StoredEvent) -> None:
        """Push one event unless the seat has it already (a result carried it); held back
        while a command is in flight."""
        if self._busy:
            self._held.append(se)
            self._arrived.set()
            return
        if se.version < self.next:  # a result carried it (the seat's own move)
            return
        async with self._lock:
            if self._busy:  # a command began while this push waited for the lock
                self._held.append(se)
                self._arrived.set()
                return
            if se.version < self.next:
                return
            await self._write(pb.SessionResponse(event=self._show(se)))
            self.next = se.version + 1

    async def _write(self, message: pb.SessionResponse) -> None:
        try:
            await self._context.write(message)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:  # noqa: BLE001 - the call cannot send any more
            raise ClientGone(type(exc).__name__) from exc


def _gone(context: grpc.aio.ServicerContext) -> bool:
    """Whether the call ended on the client's side (cancelled, deadline, connection)."""
    try:
        return bool(context.cancelled() or context.done())
    except Exception:  # noqa: BLE001 - a context without them: not known to be gone
        return False


def _server_stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is grpc's "Server already stopped" (``_ServerStoppedError``, raised
    by a read or write of a call the stopping server no longer serves): nobody is left to
    answer, so it is no internal error. Told by name: grpc keeps the class private."""
    return type(exc).__name__ == "_ServerStoppedError"


class SessionServicer:
    """The ``Session`` method, mixed into :class:`rummy_grpc.servicer.GameServicer` (it
    uses its ``app``, ``streams`` and ``gate``)."""

    app: Any
    streams: Any
    gate: Any

    async def Session(self, request_iterator: Any,
                      context: grpc.aio.ServicerContext) -> None:
        """Serve one seat's session (see the module docstring). The requests arrive as
        bytes (the method is registered with no deserializer,
        :func:`rummy_grpc.decoding.decoding_handler`) and are parsed here."""
        who = await self._admit_session(context)
        first = await self._read(context)
        if first is None:
            return
        if first.WhichOneof("request") != "open":
            await abort(context, BadRequest("the first request of a Session must be open"))
        opened = first.open
        game_id, token = opened.game_id, opened.token
        client = client_key(token, context.peer(), who.key)
        try:  # the game found and the token checked before the stream counts
            meta, seat = await self._check_open(game_id, token, opened.after_version)
            self.streams.acquire(game_id, client)
        except Exception as exc:  # noqa: BLE001 - mapped like the unary calls
            await abort(context, exc)
        writer = _Writer(context, self._shower(meta, seat), opened.after_version)
        failed: list[BaseException] = []
        main = asyncio.current_task()
        pusher = asyncio.get_running_loop().create_task(
            self._push(writer, game_id, opened.after_version))

        def stop_on_failure(task: asyncio.Task[None]) -> None:
            # the push failed (store gone, stream rewound): end the call with its status
            if not task.cancelled() and task.exception() is not None and main is not None:
                failed.append(task.exception())  # type: ignore[arg-type]
                main.cancel()

        pusher.add_done_callback(stop_on_failure)
        try:
            while True:
                request = await self._read(context)
                if request is None:
                    break
                if request.WhichOneof("request") != "command":
                    await abort(context, BadRequest("a Session takes one open, then commands"))
                await self._command(writer, who.key, game_id, token, request.command)
        except asyncio.CancelledError:
            if not failed:
                raise
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001 - an internal error: INTERNAL, logged
            failed.append(exc)
        finally:
            pusher.remove_done_callback(stop_on_failure)
            pusher.cancel()
            with contextlib.suppress(BaseException):
                await pusher
            self.streams.release(game_id, client)
        if failed and (isinstance(failed[0], ClientGone) or _gone(context)
                       or _server_stopped(failed[0])):
            # a reply or a push written as the client left (cancel, deadline, closed
            # connection): nothing is wrong with the server; counted, not logged at ERROR
            metrics.child(metrics.REPLIES_UNDELIVERED_TOTAL, METHOD).inc()
            log.debug("session on %s: the client had gone (%s)", game_id,
                      type(failed[0]).__name__)
            return
        if failed:
            await abort(context, failed[0])

    async def _check_open(self, game_id: str, token: str,
                          after_version: int) -> tuple[dict[str, Any], int]:
        """The game's meta and the token's seat; raises what the unary calls would for
        this game, seat token and version."""
        meta = await self.app.repo.meta(game_id)
        seat = authenticate(meta, token, seat_required=True).seat
        assert seat is not None
        state, _ = await self.app.repo.load(game_id)
        if not 0 <= after_version <= state.version:
            raise BadRequest(f"after_version must be 0..{state.version} (the game's "
                             f"version), got {after_version}")
        return meta, seat

    def _shower(self, meta: dict[str, Any], seat: int) -> Callable[[StoredEvent], pb.Event]:
        """A stored event as ``seat`` may see it (I3), in its proto form."""
        to_event = self.app.repo.mapper.to_event

        def show(se: StoredEvent) -> pb.Event:
            data = redact_record(seat, se.data)
            if data is None:
                data = to_dict(redact_for(meta, seat, to_event(se)))
            return event_dict_to_proto(data, se.version, se.ts)

        return show

    async def _admit_session(self, context: grpc.aio.ServicerContext) -> Any:
        try:
            return self.gate.admit(context)
        except ServiceError as exc:
            await abort(context, exc)

    @staticmethod
    async def _read(context: grpc.aio.ServicerContext) -> pb.SessionRequest | None:
        """The next request, or ``None`` when the client half-closed."""
        raw = await context.read()
        if raw is grpc.aio.EOF:
            return None
        try:
            request: pb.SessionRequest = pb.SessionRequest.FromString(raw)
            return request
        except Exception as exc:  # noqa: BLE001 - DecodeError, or anything a parser raises
            error = UndecodableRequest(METHOD, len(raw), str(exc) or type(exc).__name__)
        log.debug("refused an undecodable request: %s", error)
        await abort(context, error)

    async def _command(self, writer: _Writer, caller: str, game_id: str, token: str,
                       cmd: pb.SessionCommand) -> None:
        t0 = time.perf_counter()
        code = "OK"
        carried: set[int] = set()
        writer.begin()
        try:
            kind = KINDS.get(cmd.kind)
            if kind is None:
                raise BadRequest(f"unknown command kind {cmd.kind} (draw, pass, meld, knock "
                                 "or end_turn)")
            self.gate.commands.take(caller)
            opts = cmd.options
            expected = opts.expected_version if opts.HasField("expected_version") else None
            table = table_from_proto(cmd.table) if kind == "meld" else None
            out = await self.app.command(game_id, token, kind, table,
                                         expected_version=expected,
                                         request_id=opts.request_id, with_view=cmd.with_view)
        except Exception as exc:  # noqa: BLE001 - a refusal is a result; internal: abort
            error = session_error(exc)
            if error is None:
                raise
            code = _CODE_NAMES.get(error.code, "UNKNOWN")
            message = pb.SessionResponse(result=pb.SessionResult(tag=cmd.tag, error=error))
        else:
            carried = {t.version for t in out.events}
            message = pb.SessionResponse(result=pb.SessionResult(
                tag=cmd.tag, result=outcome_to_proto(out, cmd.with_view)))
        finally:
            label = _LABELS.get(cmd.kind, _UNKNOWN_LABEL)
            metrics.child(metrics.GRPC_SERVER_HANDLING_SECONDS, label).observe(
                time.perf_counter() - t0)
        metrics.child(metrics.GRPC_SERVER_HANDLED_TOTAL, label, code).inc()
        await writer.result(message, carried)

    async def _push(self, writer: _Writer, game_id: str, after_version: int) -> None:
        """Push the game's events after ``after_version`` to the seat (catch-up, then live,
        :meth:`rummy_store.base.EventStore.subscribe`), skipping those a result carried;
        ends after ``GameEnded``."""
        sub = self.app.store.subscribe(game_id, after_version)
        try:
            async for se in sub:
                await writer.push(se)
                if se.type == "GameEnded":
                    return
        finally:
            with contextlib.suppress(Exception):
                await sub.aclose()


__all__ = ["ClientGone", "KINDS", "METHOD", "SessionServicer", "outcome_to_proto", "session_error"]
