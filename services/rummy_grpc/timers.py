"""Turn timers: a seat that has not acted ``turn_seconds`` after the last event gets the
phase's default move (draw, pass, end the turn; ``rummy.decide.default_command``).

The move is appended with ``expected_version`` = the version the timer was armed at and the
request id ``timeout:<version>``, so a late move and the timeout can never both win, and
two servers apply a timeout once. Timers are re-armed from the stored events when a server
starts (``GameApp.start``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rummy_store.base import StoredEvent, VersionConflict

from rummy.commands import command_kind
from rummy.decide import default_command, step
from rummy.state import GAME_OVER, GameState
from rummy_grpc import metrics
from rummy_grpc.repository import GameRepository

log = logging.getLogger("rummy_grpc")


def deadline(meta: dict[str, Any], state: GameState, ts: float) -> float:
    """When the seat to act times out, in epoch seconds (0: no time limit, or game over)."""
    seconds = meta.get("turn_seconds", 0)
    if not seconds or state.phase == GAME_OVER:
        return 0.0
    return float(ts + seconds)


class TurnTimers:
    """The turn timers of the games a server knows.

    Args:
        repo: the games' repository.
        clock: wall clock in epoch seconds (compared to the stored ``ts``).
        spawn: starts a background task (the server's task set).
        after: awaited after a timeout's append: ``(game_id, meta, state, ts)`` (finish the
            game, or let bots play and arm the next timer).
        closing: returns True once the server is shutting down (arm nothing).
    """

    def __init__(self, repo: GameRepository, *, clock: Callable[[], float],
                 spawn: Callable[[Coroutine[Any, Any, None]], None],
                 after: Callable[[str, dict[str, Any], GameState, float],
                                 Awaitable[list[StoredEvent]]],
                 closing: Callable[[], bool]) -> None:
        self._repo = repo
        self._clock = clock
        self._spawn = spawn
        self._after = after
        self._closing = closing
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def arm(self, game_id: str, meta: dict[str, Any], state: GameState, ts: float) -> None:
        """(Re)arm the turn timer of the seat to act at ``ts + turn_seconds``."""
        self.cancel(game_id)
        when = deadline(meta, state, ts)
        if not when or self._closing():
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, when - self._clock())
        version = state.version
        self._timers[game_id] = loop.call_later(
            delay, lambda: self._spawn(self.expire(game_id, version)))

    def cancel(self, game_id: str) -> None:
        """Cancel the game's timer, if any."""
        handle = self._timers.pop(game_id, None)
        if handle:
            handle.cancel()

    def cancel_all(self) -> None:
        """Cancel every timer (shutdown)."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()

    async def expire(self, game_id: str, version: int) -> None:
        """A turn timer fired for ``version``: apply the phase's default move with
        ``expected_version=version`` and request id ``timeout:<version>`` (exactly once, even
        with several servers; a move that came first makes this a no-op)."""
        self._timers.pop(game_id, None)
        try:
            meta = await self._repo.meta(game_id)
            state, ts = await self._repo.load(game_id)
            if state.version != version or state.phase == GAME_OVER:
                return  # someone moved; the mover re-armed the timer
            if self._clock() < ts + meta.get("turn_seconds", 0) - 0.001:
                self.arm(game_id, meta, state, ts)  # woke early (clock skew)
                return
            cmd = default_command(state)
            kind = command_kind(cmd)
            t0 = time.perf_counter()
            new_state, events = step(state, cmd)
            metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
            try:
                result = await self._repo.append(game_id, events, version,
                                                 request_id=f"timeout:{version}",
                                                 request_hash="timeout", response=None)
            except VersionConflict:
                metrics.COMMANDS_TOTAL.labels(kind, "timeout_lost").inc()
                return
            if result.duplicate:
                return
            metrics.COMMANDS_TOTAL.labels(kind, "timeout").inc()
            self._repo.remember(game_id, new_state, result.events[-1].ts)
            await self._repo.maybe_snapshot(game_id, new_state)
            await self._after(game_id, meta, new_state, result.events[-1].ts)
        except asyncio.CancelledError:
            raise
        except Exception:  # a timer must never crash the server
            log.exception("turn timer of game %s failed", game_id)


__all__ = ["TurnTimers", "deadline"]
