"""A seat's command: authenticate, decide with the pure core, append, then let bots play.

A command is decided with ``rummy.decide.step`` on the game's latest state and appended with
``expected_version`` (the version it was decided on) and the client's ``request_id``, so two
servers can never both append turn N and a retried command returns the original outcome.
Everything a player receives goes through ``rummy.views`` (I3).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rummy_store.base import AppendResult, StoredEvent, VersionConflict, request_digest

from rummy.commands import Command, make_command
from rummy.decide import step
from rummy.errors import RummyError
from rummy.events import Event
from rummy.melds import parse_table
from rummy.state import GameState
from rummy.views import view
from rummy_grpc import metrics
from rummy_grpc.auth import authenticate
from rummy_grpc.creation import check_request_id
from rummy_grpc.errors import BadRequest, GameLimitReached, outcome, store_unavailable
from rummy_grpc.lifecycle import LIFECYCLE_KINDS, check_plays, core_command, named_view
from rummy_grpc.model import (
    COMMAND_KINDS,
    MAX_MELDS,
    MAX_TABLE_CARDS,
    Outcome,
    Timed,
)
from rummy_grpc.progress import GameProgress
from rummy_grpc.reads import redact_for
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler, deadline


def parse_command(kind: str, seat: int, table: Any = None) -> Command:
    """The core command of a request: for ``"meld"`` the table's size caps
    (:data:`~rummy_grpc.model.MAX_MELDS` melds, :data:`~rummy_grpc.model.MAX_TABLE_CARDS`
    cards) and its notation (R1.4) are checked first. Shared by ``Meld`` and its dry run
    ``CheckMeld`` (:mod:`rummy_grpc.help`), so both refuse the same requests.

    Raises:
        BadRequest: a table past the caps, or an unknown kind.
        NotationError: a malformed card token or an undeclared table joker (R1.4).
    """
    parsed = None
    if kind == "meld":
        if table is None or len(table) > MAX_MELDS \
                or sum(len(m) for m in table) > MAX_TABLE_CARDS:
            raise BadRequest(f"a table has at most {MAX_MELDS} melds and "
                             f"{MAX_TABLE_CARDS} cards")
        parsed = parse_table(table)
    try:
        return make_command(kind, seat, parsed)
    except ValueError as e:
        raise BadRequest(str(e)) from None


class CommandHandler:
    """Runs the seats' commands of every game.

    Args:
        repo: the games' repository.
        scheduler: the due games (a due time is written before an append that makes the
            game due).
        progress: the work after an append (bots, due time, end of game).
    """

    def __init__(self, repo: GameRepository, *, scheduler: Scheduler,
                 progress: GameProgress) -> None:
        self._repo = repo
        self._sched = scheduler
        self._progress = progress

    async def command(self, game_id: str, token: str, kind: str, table: Any = None, *,
                      expected_version: int | None = None,
                      request_id: str = "", with_view: bool = True,
                      wait: bool = False) -> Outcome:
        """Run one seat command: authenticate, decide, append, then let bots play.

        Args:
            game_id: the game.
            token: the caller's seat token (the seat acting is the token's seat).
            kind: ``"draw"``, ``"pass"``, ``"meld"``, ``"knock"`` or ``"end_turn"``; or a
                seat change of §13, ``"resign"``, ``"leave"`` or ``"reclaim"``
                (:mod:`rummy_grpc.lifecycle`).
            table: for ``"meld"``, the whole new table as lists of card tokens.
            expected_version: refuse unless the game is at this version.
            request_id: idempotency key; a retry returns the original outcome.
            with_view: build the caller's view for the outcome (False: ``view`` is None).
            wait: for ``"reclaim"``, a request made out of the seat's turn start takes effect
                at its next turn start (R13.3) instead of being refused.

        Raises:
            GameNotFound, Unauthenticated, PermissionDenied: unknown game, no or bad token.
            NotationError, BadRequest: malformed input (nothing appended).
            NotYourTurnError, GameOverError, IllegalMoveError: refused by the rules.
            VersionConflict: ``expected_version`` is not the game's version (or lost a race).
            RequestIdReused: ``request_id`` was used for a different command.
        """
        label = kind if kind in COMMAND_KINDS or kind in LIFECYCLE_KINDS else "unknown"
        try:
            out = await self._command(game_id, token, kind, table, expected_version,
                                      request_id, with_view, wait)
        except BaseException as exc:
            metrics.child(metrics.COMMANDS_TOTAL, label, outcome(exc)).inc()
            raise
        metrics.child(metrics.COMMANDS_TOTAL, label, "duplicate" if out.duplicate else "ok").inc()
        return out

    async def _command(self, game_id: str, token: str, kind: str, table: Any,
                       expected_version: int | None, client_request_id: str,
                       with_view: bool = True, wait: bool = False) -> Outcome:
        if expected_version is not None and expected_version < 0:
            raise BadRequest("expected_version must be >= 0")
        check_request_id(client_request_id)
        # client ids live in their own namespace: a client can never take the id of a
        # server-made move (bot:<v>, timeout:<v>, create)
        request_id = f"client:{client_request_id}" if client_request_id else ""
        meta = await self._repo.meta(game_id)
        seat = authenticate(meta, token, seat_required=True).seat
        assert seat is not None
        if kind in LIFECYCLE_KINDS:
            try:
                cmd = core_command(kind, seat, meta, wait)
            except ValueError as e:
                raise BadRequest(str(e)) from None
        else:
            cmd = parse_command(kind, seat, table)
        body = {"kind": kind, "seat": seat, "table": table, "expected": expected_version}
        if wait:
            body["wait"] = True
        # 64 bits of the digest tell a retry from another request under the same id
        rhash = request_digest(body)[:16] if request_id else None
        for attempt in range(5):
            # first attempt on the cached state; the store is asked only when the cache may
            # be behind (a conflict, or a client that expects another version)
            state, _ = await self._repo.load(game_id, fresh=attempt > 0)
            if expected_version is not None and expected_version != state.version \
                    and attempt == 0:
                state, _ = await self._repo.load(game_id)
            try:
                if expected_version is not None and expected_version != state.version:
                    raise VersionConflict(game_id, expected_version, state.version)
                if kind not in LIFECYCLE_KINDS:  # a seat a bot took over moves no more
                    check_plays(meta, state, seat)
                t0 = time.perf_counter()
                try:
                    new_state, events = step(state, cmd)
                finally:
                    metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
                await self._sched.before_append(game_id, meta, new_state)
                epoch = self._repo.epoch()
                result = await self._repo.append(
                    game_id, events, state.version, request_id=request_id or None,
                    request_hash=rhash, response=None)
            except GameLimitReached:
                # the game can take no more events (--max-events)
                await self._progress.stop(game_id)
                raise
            except (RummyError, VersionConflict) as exc:
                if request_id:  # a retry of a command that was applied: its original outcome
                    original = await self._repo.get_request(game_id, request_id, rhash)
                    if original is not None:
                        await self._progress.redrive(game_id)
                        return await self._outcome(game_id, meta, seat, original, [], True,
                                                   with_view)
                if isinstance(exc, VersionConflict) and attempt < 4 and (
                        expected_version is None or exc.actual == expected_version):
                    continue  # our cache was behind, or someone moved first: decide again
                if attempt == 0 and isinstance(exc, RummyError):
                    # refused on the cached state: make sure the refusal holds on the latest
                    latest, _ = await self._repo.load(game_id)
                    if latest.version != state.version:
                        continue
                raise
            if result.duplicate:
                await self._progress.redrive(game_id)
                return await self._outcome(game_id, meta, seat, result, [], True, with_view)
            self._repo.remember(game_id, new_state, result.events[-1].ts, epoch=epoch)
            more = await self._progress.follow_up(game_id, meta, new_state, result.events[-1].ts,
                                         previous=state)
            return await self._outcome(game_id, meta, seat, result, more, False, with_view,
                                       events, fallback=new_state)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _outcome(self, game_id: str, meta: dict[str, Any], seat: int,
                       result: AppendResult, more: list[StoredEvent],
                       duplicate: bool, with_view: bool = True,
                       appended: Sequence[Event] | None = None,
                       fallback: GameState | None = None) -> Outcome:
        """The command's outcome as ``seat`` may see it. ``appended``: the core events of
        ``result`` when the caller has them (no decoding of the stored records);
        ``fallback``: the state the append led to, for the view when the store cannot be
        read now (the command was applied: its outcome must not turn into an error)."""
        cached = self._repo.cached(game_id)
        if duplicate or more or cached is None:
            try:
                state, ts = await self._repo.load(game_id)
            except Exception as exc:
                if fallback is None or not store_unavailable(exc):
                    raise
                state, ts = fallback, result.events[-1].ts
        else:
            state, ts = cached
        to_event = self._repo.mapper.to_event
        mine = (list(appended) if appended is not None
                else [to_event(se) for se in result.events])
        events = [Timed(se.version, redact_for(meta, seat, e), se.ts)
                  for se, e in zip(result.events, mine, strict=True)]
        events += [Timed(se.version, redact_for(meta, seat, to_event(se)), se.ts)
                   for se in more]
        version = result.version if duplicate else max(result.version, state.version)
        return Outcome(seat, version, events,
                       named_view(meta, view(state, seat)) if with_view else None,
                       deadline(meta, state, ts), duplicate)


__all__ = ["CommandHandler", "parse_command"]
