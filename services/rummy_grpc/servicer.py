"""The thin ``rummy_api.v1.GameService`` servicer: admit the call (caller identity, known
callers, rate limits: :class:`rummy_grpc.callers.CallerGate`), parse the request, call
:class:`GameApp`, translate the result; every error goes through
:func:`rummy_grpc.errors.map_error`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

from rummy.cards import format_card
from rummy_grpc.aborts import abort, call
from rummy_grpc.app import GameApp, Outcome, SeatSpec
from rummy_grpc.callers import CallerGate, Identity
from rummy_grpc.convert import event_to_proto, table_from_proto, view_to_proto
from rummy_grpc.erasure import ErasureServicer
from rummy_grpc.errors import ServiceError
from rummy_grpc.help import HelpServicer
from rummy_grpc.lifecycle_rpc import LifecycleServicer
from rummy_grpc.limits import StreamLimits, client_key
from rummy_grpc.listing import page_to_proto
from rummy_grpc.model import READ_CHUNK
from rummy_grpc.reads import page_cost
from rummy_grpc.results_rpc import ResultsServicer
from rummy_grpc.review_rpc import review_game
from rummy_grpc.session import SessionServicer

log = logging.getLogger("rummy_grpc")
T = TypeVar("T")

_KINDS = {pb.SEAT_KIND_HUMAN: "human", pb.SEAT_KIND_BOT: "bot"}




def _result(out: Outcome) -> pb.CommandResult:
    result = pb.CommandResult(
        version=out.version,
        events=[event_to_proto(t.event, t.version, t.ts) for t in out.events],
        duplicate=out.duplicate)
    if out.view is not None:
        result.view.CopyFrom(view_to_proto(out.view, turn_deadline=out.turn_deadline))
    return result


def _options(request: Any) -> tuple[int | None, str]:
    opts = request.options
    expected = opts.expected_version if opts.HasField("expected_version") else None
    return expected, opts.request_id


class GameServicer(SessionServicer, HelpServicer, ResultsServicer, LifecycleServicer,
                   ErasureServicer, pb_grpc.GameServiceServicer):
    """``GameService`` over a :class:`GameApp`; ``streams`` bounds the open ``StreamEvents``
    calls (default: :class:`StreamLimits` with its default bounds); ``gate`` admits every
    call (default: an open :class:`CallerGate`, no rate limits); ``hints``: ``GetHint`` is
    served (False: refused, ``rummy serve --hints off``)."""

    def __init__(self, app: GameApp, streams: StreamLimits | None = None,
                 gate: CallerGate | None = None, *, hints: bool = True) -> None:
        self.app = app
        self.streams = streams if streams is not None else StreamLimits()
        self.gate = gate if gate is not None else CallerGate()
        self.hints = hints

    async def _admit(self, context: grpc.aio.ServicerContext, *, create: bool = False,
                     privileged: bool = False) -> Identity:
        """:meth:`CallerGate.admit`, aborting the call with the mapped status."""
        try:
            identity: Identity = self.gate.admit(context, create=create,
                                                 privileged=privileged)
            return identity
        except ServiceError as exc:
            await abort(context, exc)

    async def CreateGame(self, request: pb.CreateGameRequest,
                         context: grpc.aio.ServicerContext) -> pb.CreateGameResponse:
        who = await self._admit(context, create=True)
        seats = [SeatSpec(_KINDS.get(s.kind) or ("unspecified" if s.kind == pb.SEAT_KIND_UNSPECIFIED
                                                   else f"enum value {s.kind}"),
                          s.name, s.strategy)
                 for s in request.seats]
        seed = request.seed if request.HasField("seed") else None
        created = await call(context, lambda: self.app.create_game(
            seats, dict(request.variants), seed, request.turn_seconds,
            admin_token=request.admin_token, request_id=request.request_id,
            creator=who.key if who.known else "",
            lifecycle={"takeover": request.takeover_strategy,
                       "timeout_takeover": request.timeout_takeover,
                       "reclaim": request.allow_reclaim}))
        return pb.CreateGameResponse(
            game_id=created.game_id, version=created.version,
            tokens=[pb.SeatToken(seat=s, token=t) for s, t in sorted(created.tokens.items())])

    async def GetView(self, request: pb.GetViewRequest,
                      context: grpc.aio.ServicerContext) -> pb.GetViewResponse:
        await self._admit(context)
        v, deadline = await call(context, lambda: self.app.get_view(request.game_id,
                                                                     request.token))
        return pb.GetViewResponse(view=view_to_proto(v, turn_deadline=deadline))

    async def _command_rpc(self, request: Any, context: grpc.aio.ServicerContext, kind: str,
                           table: Any = None, *, admit: bool = True,
                           wait: bool = False) -> pb.CommandResult:
        if admit:
            await self._admit(context)
        expected, request_id = _options(request)
        out = await call(context, lambda: self.app.command(
            request.game_id, request.token, kind, table, expected_version=expected,
            request_id=request_id, with_view=not request.options.omit_view, wait=wait))
        return _result(out)

    async def Draw(self, request: pb.DrawRequest,
                   context: grpc.aio.ServicerContext) -> pb.DrawResponse:
        return pb.DrawResponse(result=await self._command_rpc(request, context, "draw"))

    async def Pass(self, request: pb.PassRequest,
                   context: grpc.aio.ServicerContext) -> pb.PassResponse:
        return pb.PassResponse(result=await self._command_rpc(request, context, "pass"))

    async def Meld(self, request: pb.MeldRequest,
                   context: grpc.aio.ServicerContext) -> pb.MeldResponse:
        await self._admit(context)  # before the table is parsed (a large request)
        table = table_from_proto(request.table)
        return pb.MeldResponse(result=await self._command_rpc(request, context, "meld", table,
                                                              admit=False))

    async def Knock(self, request: pb.KnockRequest,
                    context: grpc.aio.ServicerContext) -> pb.KnockResponse:
        return pb.KnockResponse(result=await self._command_rpc(request, context, "knock"))

    async def EndTurn(self, request: pb.EndTurnRequest,
                      context: grpc.aio.ServicerContext) -> pb.EndTurnResponse:
        return pb.EndTurnResponse(result=await self._command_rpc(request, context, "end_turn"))

    async def StreamEvents(self, request: pb.StreamEventsRequest,
                           context: grpc.aio.ServicerContext
                           ) -> AsyncIterator[pb.StreamEventsResponse]:
        who = await self._admit(context, privileged=bool(request.admin_token))
        game_id = request.game_id
        client = client_key(request.token, context.peer(), who.key)
        try:
            self.streams.acquire(game_id, client)  # before any work: refuse at once
        except ServiceError as exc:
            await abort(context, exc)
        try:
            stream = self.app.stream(game_id, request.token, request.admin_token,
                                     request.after_version)
            try:
                async for t in stream:
                    yield pb.StreamEventsResponse(
                        event=event_to_proto(t.event, t.version, t.ts))
            except grpc.aio.AbortError:
                raise
            except Exception as exc:  # noqa: BLE001
                await abort(context, exc)
            finally:
                await stream.aclose()
        finally:  # end of game, cancellation, deadline, error: the stream no longer counts
            self.streams.release(game_id, client)

    async def GetEvents(self, request: pb.GetEventsRequest,
                        context: grpc.aio.ServicerContext) -> pb.GetEventsResponse:
        who = await self._admit(context, privileged=bool(request.admin_token))
        to = request.to_version or None
        # priced by size before any work (the events rate limit), the unused part refunded
        cost = page_cost(request.after_version, to, request.page_size)
        try:
            self.gate.charge_events(who, cost)
        except ServiceError as exc:
            await abort(context, exc)
        try:
            page = await call(context, lambda: self.app.reads.get_events_page(
                request.game_id, request.token, request.admin_token, request.after_version,
                to, request.page_size))
        except BaseException:
            self.gate.refund_events(who, cost)
            raise
        self.gate.refund_events(who, cost - len(page.events))
        events: list[pb.Event] = []
        for i in range(0, len(page.events), READ_CHUNK):  # other calls run between chunks
            if i:
                await asyncio.sleep(0)
            events.extend(event_to_proto(t.event, t.version, t.ts)
                          for t in page.events[i:i + READ_CHUNK])
        return pb.GetEventsResponse(events=events, full_information=page.full,
                                    next_after_version=page.next_after_version)

    async def GetState(self, request: pb.GetStateRequest,
                       context: grpc.aio.ServicerContext) -> pb.GetStateResponse:
        await self._admit(context, privileged=bool(request.admin_token))
        st = await call(context, lambda: self.app.get_state(
            request.game_id, request.token, request.admin_token, request.version))
        msg = pb.GetStateResponse(version=st.version, full_information=st.full,
                                  view=view_to_proto(st.view))
        if st.full:
            assert st.hands is not None and st.stock is not None
            msg.hands.extend(pb.Cards(cards=[format_card(c) for c in h]) for h in st.hands)
            msg.stock.extend(format_card(c) for c in st.stock)
            if st.seed is not None:
                msg.seed = st.seed
        return msg

    async def ListGames(self, request: pb.ListGamesRequest,
                        context: grpc.aio.ServicerContext) -> pb.ListGamesResponse:
        who = await self._admit(context)
        games, token = await call(context, lambda: self.app.list_games(
            who, request.admin_token, request.state, request.page_size, request.page_token))
        return page_to_proto(games, token)

    async def ReviewGame(self, request: pb.ReviewGameRequest,
                         context: grpc.aio.ServicerContext) -> pb.ReviewGameResponse:
        await self._admit(context)
        seat = request.seat if request.HasField("seat") else None
        budget = request.budget if request.HasField("budget") else None
        text, version = await call(context, lambda: review_game(
            self.app.reads, request.game_id, request.token, seat, budget, request.seed))
        return pb.ReviewGameResponse(review_json=text, version=version)
