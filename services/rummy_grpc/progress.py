"""What the server does on a game without a client's command: the work after an append
(snapshot, bots, the next due time, finishing the game) and the due games this replica
claimed (bot turns, turn deadlines: :mod:`rummy_grpc.timers`).

An append stands whatever happens after it: :meth:`GameProgress.follow_up` logs a failure
instead of raising it, and what is left stays due in the store for any replica's poll.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rummy_store.base import EventStore, StoredEvent, VersionConflict

from rummy.commands import command_kind
from rummy.decide import default_command, timeout_step
from rummy.state import GAME_OVER, GameState
from rummy_grpc import metrics
from rummy_grpc.errors import GameLimitReached, GameNotFound, log_failure, store_unavailable
from rummy_grpc.lifecycle import bot_to_act, takeover, timeout_limit
from rummy_grpc.model import BOT_WAIT
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler, pending

log = logging.getLogger("rummy_grpc")

RESUME_FIRST = 0.25
"""Seconds before this replica first retries the work after an append that failed
(:meth:`GameProgress.resume`); the wait doubles up to the lease."""


class GameProgress:
    """Moves games on after an append and when they are due.

    Args:
        store: the event store (active games, due times).
        repo: the games' repository.
        scheduler: the due games (due times, local deadline timers).
        drive: called with a game id (and optionally a list to add events to): play its
            bot seats while one is to act (:meth:`rummy_grpc.bot_driver.BotDriver.drive`),
            returning their events.
        spawn: starts a background task (the server's task set); failures are logged.
        start: starts a task in the server's task set and returns it (``None`` once the
            server is closing); failures are the caller's to handle.
        report: logs the failure of a task from ``start`` (a done callback).
        clock: the store's clock, epoch seconds (deadlines compare it to stored ``ts``).
        bot_wait: seconds a call waits for the bots after its command (:data:`BOT_WAIT`).
    """

    def __init__(self, store: EventStore, repo: GameRepository, *, scheduler: Scheduler,
                 drive: Callable[..., Coroutine[Any, Any, list[StoredEvent]]],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None],
                 start: Callable[[Coroutine[Any, Any, list[StoredEvent]]],
                                 asyncio.Task[list[StoredEvent]] | None],
                 report: Callable[[asyncio.Task[Any]], None],
                 clock: Callable[[], float], bot_wait: float = BOT_WAIT) -> None:
        self._store = store
        self._repo = repo
        self._sched = scheduler
        self._drive = drive
        self._spawn = spawn
        self._start = start
        self._report = report
        self._clock = clock
        self.bot_wait = bot_wait

    # ------------------------------------------------------------------ due games

    async def process(self, game_id: str) -> None:
        """Act on a due game this replica claimed: drive its bots, apply a timeout whose
        deadline passed, or write its exact next due time (none when nothing is due)."""
        try:
            meta = await self._repo.meta(game_id)
            state, ts = await self._repo.load(game_id)
        except GameNotFound:  # expired, or meta without events: nothing to act on
            await self._store.unschedule(game_id)
            return
        if state.phase == GAME_OVER:
            await self.finish(game_id)
            return
        due = pending(meta, state)
        if due == 0.0:
            await self._drive(game_id)
        elif due is not None and self._clock() + 0.001 >= ts + due:
            await self.timeout(game_id, meta, state)
        else:  # not due yet (an early due time) or nothing to do
            await self._sched.after_append(game_id, meta, state, ts)

    async def timeout(self, game_id: str, meta: dict[str, Any], state: GameState) -> None:
        """The seat to act ran out of time: apply the phase's default move with
        ``expected_version`` = this version and request id ``timeout:<version>`` (exactly
        once, even with several replicas; a move that came first makes this a no-op). In a
        game with a timeout takeover the move is followed by ``TimedOut`` and, at the limit,
        the takeover (R13.2, ``rummy.decide.timeout_step``)."""
        kind = command_kind(default_command(state))
        t0 = time.perf_counter()
        new_state, events = timeout_step(state, timeout_limit(meta), takeover(meta))
        metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
        await self._sched.before_append(game_id, meta, new_state)
        epoch = self._repo.epoch()
        try:
            result = await self._repo.append(game_id, events, state.version,
                                            request_id=f"timeout:{state.version}",
                                            request_hash="timeout", response=None)
        except VersionConflict:  # the seat moved first: it rescheduled the game
            metrics.child(metrics.COMMANDS_TOTAL, kind, "timeout_lost").inc()
            return
        except GameLimitReached:
            await self.stop(game_id)
            return
        if result.duplicate:
            return
        metrics.child(metrics.COMMANDS_TOTAL, kind, "timeout").inc()
        self._repo.remember(game_id, new_state, result.events[-1].ts, epoch=epoch)
        await self.follow_up(game_id, meta, new_state, result.events[-1].ts)


    # ------------------------------------------------------------------ after an append

    async def follow_up(self, game_id: str, meta: dict[str, Any], state: GameState,
                         ts: float, previous: GameState | None = None, *,
                         snapshot: bool = True) -> list[StoredEvent]:
        """The work after an append that led to ``state`` (a snapshot when one is due, then
        :meth:`after`): the bots' events, or ``[]``. The append stands whatever happens
        here, so a failure (Redis refusing writes, an outage, a bug) is logged, not raised:
        a call whose command was applied reports it applied. What is left stays due:
        ``before_append`` wrote the game's due time before the append, so the due-games
        poll of any replica drives the bots or the deadline once the store is back."""
        try:
            if snapshot:
                await self._repo.maybe_snapshot(game_id, state)
            return await self.after(game_id, meta, state, ts, previous=previous)
        except Exception as exc:  # noqa: BLE001 - logged; the command stands
            metrics.FOLLOW_UP_FAILURES.inc()
            log_failure(log, f"the work after an append to game {game_id} (snapshot, bots, "
                        "due time)", exc, "the events stand; this replica retries it, and "
                        "what is due stays due for every replica's poll")
            self._spawn(self.resume(game_id))
            return []

    async def resume(self, game_id: str) -> None:
        """Retry :meth:`redrive` after a follow-up failure, with a doubling back-off (from
        :data:`RESUME_FIRST` seconds up to the lease) while the store is unavailable or
        refusing writes: the bots go on as soon as the store takes writes again, rather
        than after the lease that ``before_append`` wrote. Any replica's poll may move the
        game first; the moves are decided once (expected versions)."""
        delay = RESUME_FIRST
        while True:
            await asyncio.sleep(delay)
            try:
                await self.redrive(game_id)
                return
            except GameNotFound:  # gone with the store's data (a Redis restarted empty)
                log.warning("game %s is no longer in the store: nothing to resume", game_id)
                return
            except Exception as exc:
                if not store_unavailable(exc) or delay >= self._sched.lease:
                    raise  # logged by _report; the game stays due in the store
                delay = min(2 * delay, self._sched.lease)

    async def after(self, game_id: str, meta: dict[str, Any], state: GameState,
                     ts: float, previous: GameState | None = None) -> list[StoredEvent]:
        """After an append that led to ``state``: finish the game, or let bots play
        (returning their events), or write the next due time (a turn deadline; none for an
        untimed seat, skipped when ``previous`` had nothing due either)."""
        if state.phase == GAME_OVER:
            await self.finish(game_id)
            return []
        if bot_to_act(meta, state):
            return await self.drive_bounded(game_id)
        if previous is None or pending(meta, previous) is not None \
                or pending(meta, state) is not None:
            await self._sched.after_append(game_id, meta, state, ts)
        return []

    async def redrive(self, game_id: str) -> None:
        """A retried command, or a follow-up that failed (:meth:`resume`): finish a game
        that is over, or drive the bots if they are due (their driving was cut short, e.g.
        by a store outage after the original append)."""
        meta = await self._repo.meta(game_id)
        state, _ = await self._repo.load(game_id)
        if state.phase == GAME_OVER:
            await self.finish(game_id)
        elif bot_to_act(meta, state):
            await self.drive_bounded(game_id)

    async def drive_bounded(self, game_id: str) -> list[StoredEvent]:
        """Drive the game's bots in a task of their own and wait for them at most
        :attr:`bot_wait` seconds: the events they appended by then (all of them when they
        finished). A bot still thinking goes on in the background and its moves reach the
        clients by the stream; a failure after the wait is logged (the game stays due in
        the store, so any replica's poll resumes it). A failure within the wait is raised,
        as an awaited drive's would be.

        Raises:
            GameNotFound, store errors: as :meth:`rummy_grpc.bot_driver.BotDriver.drive`.
        """
        out: list[StoredEvent] = []
        task = self._start(self._drive(game_id, out))
        if task is None:  # the server is closing
            return []
        try:
            done, _ = await asyncio.wait({task}, timeout=self.bot_wait)
            if task in done:
                return task.result()
            return list(out)
        finally:
            if not task.done():  # the call returns (or is cancelled) first: log what fails
                task.add_done_callback(self._report)

    async def finish(self, game_id: str) -> bool:
        """Nothing more is due on the game and it leaves the active games; True for the one
        call that took it off the list (two replicas, or a capped game refused again). The
        due time goes last: until it is gone, a replica's poll finishes the game again
        (``Scheduler.before_append`` wrote it before the game-ending append)."""
        self._sched.cancel(game_id)
        was_active = await self._store.set_active(game_id, False)
        if was_active:
            metrics.GAMES_ACTIVE.dec()
        await self._store.unschedule(game_id)
        return was_active

    async def stop(self, game_id: str) -> None:
        """The game reached the cap of events: nothing more is due on it, and it leaves the
        active games (its log stays readable). Every path that appends calls it on
        ``GameLimitReached`` (a client's command, a bot's move, a turn timeout)."""
        if await self.finish(game_id):
            log.warning("game %s reached the cap of %d events; it is no longer active",
                        game_id, self._repo.max_events)

__all__ = ["RESUME_FIRST", "GameProgress"]
