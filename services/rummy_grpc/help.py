"""Help for the seat to act: ``CheckMeld`` (a dry run of ``Meld``), ``GetLegalActions`` and
``GetHint``, a mixin of :class:`rummy_grpc.servicer.GameServicer`.

* ``CheckMeld`` runs exactly ``Meld``'s checks (:func:`rummy_grpc.commands.parse_command`,
  then ``rummy.decide.step`` on the game's latest state) and appends nothing: a table it
  accepts, ``Meld`` accepts on the same version; one it refuses gets ``Meld``'s status,
  reason and rule id.
* ``GetLegalActions`` and ``GetHint`` answer from the seat's own view only (I3,
  :mod:`rummy.advice`): ``rummy.views.view(state, seat)`` is all they are given.
* The solver runs in a worker thread (:func:`asyncio.to_thread`), at most
  :data:`SOLVER_THREADS` at a time per server, so that the event loop keeps serving games.
* Pricing: each call takes one game call of the caller's rate limit (as a command does);
  ``GetHint`` takes :data:`HINT_COST` in all. A server started with ``--hints off``
  refuses ``GetHint`` (``HintsDisabled``, FAILED_PRECONDITION ``HINTS_DISABLED``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store.base import VersionConflict

from rummy.advice import HINT_NODE_LIMIT, MOVES_NODE_LIMIT, Hint, LegalMoves, hint, legal_moves
from rummy.cards import format_card, hand_points
from rummy.decide import step
from rummy.errors import RummyError
from rummy.events import Melded
from rummy.melds import format_table
from rummy.views import PlayerView, view
from rummy_grpc.aborts import abort, call
from rummy_grpc.auth import authenticate
from rummy_grpc.callers import CallerGate
from rummy_grpc.commands import parse_command
from rummy_grpc.convert import table_from_proto
from rummy_grpc.errors import BadRequest, HintsDisabled, ServiceError
from rummy_grpc.lifecycle import check_plays, named_view
from rummy_grpc.repository import GameRepository

HINT_COST = 20
"""Game calls of the caller's rate limit one ``GetHint`` takes (a search of up to
:data:`rummy.advice.HINT_NODE_LIMIT` states costs about what 20 plain calls do)."""
SOLVER_THREADS = 2
"""Solver searches (``GetLegalActions``, ``GetHint``) run at once per server; more wait."""

_ACTION_CODES = {"draw": pb.ACTION_DRAW, "meld": pb.ACTION_MELD, "pass": pb.ACTION_PASS,
                 "knock": pb.ACTION_KNOCK, "end_turn": pb.ACTION_END_TURN}
_MELD_CODES = {"not_now": pb.MELD_AVAILABILITY_NOT_NOW,
               "possible": pb.MELD_AVAILABILITY_POSSIBLE,
               "impossible": pb.MELD_AVAILABILITY_IMPOSSIBLE,
               "unknown": pb.MELD_AVAILABILITY_UNKNOWN}


@dataclass(frozen=True, slots=True)
class MeldCheck:
    """A table ``CheckMeld`` accepts: the ``version`` it was checked at, the hand ``cards``
    that would leave the hand (ascending; a joker as ``JOKER``), their R1.5 ``points``,
    and ``goes_out``: the hand would be empty (R6.2)."""

    version: int
    cards: tuple[int, ...]
    points: int
    goes_out: bool


async def check_meld(repo: GameRepository, game_id: str, token: str, table: Any,
                     expected_version: int | None = None) -> MeldCheck:
    """Decide a ``Meld`` of ``table`` for the token's seat on the game's latest state, the
    way :meth:`rummy_grpc.commands.CommandHandler.command` does, and append nothing.

    Args:
        repo: the games' repository.
        game_id: the game.
        token: the seat's token (the seat acting is the token's).
        table: the whole new table as lists of card tokens.
        expected_version: refuse unless the game is at this version.

    Raises:
        BadRequest: a negative ``expected_version``, a table past the size caps.
        GameNotFound, Unauthenticated, PermissionDenied: unknown game, no or bad token.
        NotationError: malformed card tokens (R1.4).
        NotYourTurnError, GameOverError, IllegalMoveError: refused by the rules, with the
            rule id ``Meld`` would give.
        VersionConflict: ``expected_version`` is not the game's version.
    """
    if expected_version is not None and expected_version < 0:
        raise BadRequest("expected_version must be >= 0")
    meta = await repo.meta(game_id)
    seat = authenticate(meta, token, seat_required=True).seat
    assert seat is not None
    cmd = parse_command("meld", seat, table)
    state, _ = await repo.load(game_id, fresh=False)
    for attempt in range(2):  # the cached state first, the store's when it refuses
        try:
            if expected_version is not None and expected_version != state.version:
                raise VersionConflict(game_id, expected_version, state.version)
            check_plays(meta, state, seat)  # as Meld: a seat a bot plays now sends nothing
            _, events = step(state, cmd)
            break
        except (RummyError, VersionConflict):
            if attempt:
                raise
            latest, _ = await repo.load(game_id)
            if latest.version == state.version:
                raise
            state = latest
    melded = events[0]
    assert isinstance(melded, Melded)
    cards = tuple(sorted(melded.cards))
    return MeldCheck(state.version, cards, hand_points(cards),
                     len(state.hands[seat]) == len(cards))


async def seat_view(repo: GameRepository, game_id: str, token: str, *,
                    playing: bool = False) -> PlayerView:
    """The token's seat's view of the game's latest state (I3), as every read gives it
    (:func:`rummy_grpc.lifecycle.named_view`: no actions while a server bot plays a human
    seat that left). With ``playing`` (a hint), a seat a bot plays now is refused.

    Raises:
        GameNotFound, Unauthenticated (no token), PermissionDenied (a bad token).
        IllegalMoveError: ``R13.1``, with ``playing``: a server bot plays the seat now.
    """
    meta = await repo.meta(game_id)
    seat = authenticate(meta, token, seat_required=True).seat
    assert seat is not None
    state, _ = await repo.latest(game_id)
    if playing:
        check_plays(meta, state, seat)
    return named_view(meta, view(state, seat))


def hint_to_proto(version: int, h: Hint) -> pb.GetHintResponse:
    """The ``GetHintResponse`` of a :class:`rummy.advice.Hint` at ``version``."""
    return pb.GetHintResponse(
        version=version, action=_ACTION_CODES[h.kind],
        table=[pb.Cards(cards=m) for m in format_table(h.table)],
        cards=[format_card(c) for c in h.cards], points=h.points, optimal=h.optimal,
        reason=h.reason)


class HelpServicer:
    """``CheckMeld``, ``GetLegalActions`` and ``GetHint``; the servicer provides ``app``
    (its repository), ``gate`` (the rate limits), ``_admit`` and ``hints`` (False:
    ``GetHint`` is refused)."""

    app: Any
    gate: CallerGate
    hints: bool
    _solver_slots: asyncio.Semaphore | None = None

    async def _admit(self, context: grpc.aio.ServicerContext, *, create: bool = False,
                     privileged: bool = False) -> Any:
        raise NotImplementedError  # pragma: no cover - GameServicer's

    async def _solve(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in a worker thread, at most :data:`SOLVER_THREADS` at once."""
        if self._solver_slots is None:
            self._solver_slots = asyncio.Semaphore(SOLVER_THREADS)
        async with self._solver_slots:
            return await asyncio.to_thread(fn, *args)

    async def CheckMeld(self, request: pb.CheckMeldRequest,
                        context: grpc.aio.ServicerContext) -> pb.CheckMeldResponse:
        await self._admit(context)  # before the table is parsed (a large request)
        expected = request.expected_version if request.HasField("expected_version") else None
        table = table_from_proto(request.table)
        checked = await call(context, lambda: check_meld(
            self.app.repo, request.game_id, request.token, table, expected))
        return pb.CheckMeldResponse(version=checked.version,
                                    cards=[format_card(c) for c in checked.cards],
                                    points=checked.points, goes_out=checked.goes_out)

    async def GetLegalActions(self, request: pb.GetLegalActionsRequest,
                              context: grpc.aio.ServicerContext
                              ) -> pb.GetLegalActionsResponse:
        await self._admit(context)
        v = await call(context, lambda: seat_view(self.app.repo, request.game_id,
                                                  request.token))
        moves: LegalMoves = await call(context, lambda: self._solve(legal_moves, v,
                                                                   MOVES_NODE_LIMIT))
        return pb.GetLegalActionsResponse(
            version=v.version, actions=[_ACTION_CODES[a] for a in moves.actions],
            meld=_MELD_CODES[moves.meld])

    async def GetHint(self, request: pb.GetHintRequest,
                      context: grpc.aio.ServicerContext) -> pb.GetHintResponse:
        who = await self._admit(context)
        try:
            if not self.hints:
                raise HintsDisabled()
            self.gate.commands.take(who.key, HINT_COST - 1)  # the admission took one
        except ServiceError as exc:
            await abort(context, exc)
        v = await call(context, lambda: seat_view(self.app.repo, request.game_id,
                                                  request.token, playing=True))
        found: Hint = await call(context, lambda: self._solve(hint, v, HINT_NODE_LIMIT))
        return hint_to_proto(v.version, found)


__all__ = ["HINT_COST", "SOLVER_THREADS", "HelpServicer", "MeldCheck", "check_meld",
           "hint_to_proto", "seat_view"]
