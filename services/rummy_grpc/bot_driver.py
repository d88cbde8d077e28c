"""The server's bot seats: after every command, bots play until a human must act.

Each bot command is its own append, with ``expected_version``, so two servers can never both
play the same bot move: the second gets a conflict and reloads (no request id is recorded:
the version check is enough, and request records would be most of a game's memory). A bot
that raises or proposes an illegal move plays the phase's default move instead
(``rummy.decide.default_command``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rummy_store.base import StoredEvent, VersionConflict

from rummy.bots import make_bot
from rummy.commands import command_kind
from rummy.decide import default_command, step
from rummy.events import Event
from rummy.state import GAME_OVER, GameState
from rummy.views import view
from rummy_grpc import metrics
from rummy_grpc.errors import GameLimitReached
from rummy_grpc.lifecycle import bot_strategy
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler

log = logging.getLogger("rummy_grpc")

INLINE_BOTS = frozenset({"random", "basic"})
"""Bot strategies cheap enough (well under a millisecond a move) to run on the event loop;
others run in a worker thread."""


def bot_seed(game_id: str, seat: int, version: int) -> int:
    """The seed of the bot of ``seat`` deciding at ``version`` (the same on every server)."""
    digest = hashlib.sha256(f"{game_id}:{seat}:{version}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class BotDriver:
    """Plays a game's bot seats.

    Args:
        repo: the games' repository.
        scheduler: the due games: the driver renews its lease while it drives, and writes
            the next due time (a turn deadline, or none) when a human seat is to act.
        finish: awaited when a bot move ended the game.
        stop: awaited when the game reached the cap of events (``GameLimitReached``).
        closing: returns True once the server is shutting down (stop driving).
        bot_delay: seconds between two bot commands (0: none; a demo pacing knob).
    """

    def __init__(self, repo: GameRepository, *,
                 scheduler: Scheduler,
                 finish: Callable[[str], Awaitable[object]],
                 stop: Callable[[str], Awaitable[None]], closing: Callable[[], bool],
                 bot_delay: float = 0.0) -> None:
        self._repo = repo
        self._sched = scheduler
        self._finish = finish
        self._closing = closing
        self._stop = stop
        self._bot_delay = bot_delay
        self._locks: dict[str, asyncio.Lock] = {}

    async def drive(self, game_id: str,
                    out: list[StoredEvent] | None = None) -> list[StoredEvent]:
        """Play bot seats while one is to act; each bot command is one append with
        ``expected_version`` (another server that moved first simply wins). While driving,
        the game's lease in the store is renewed (another replica takes over if this one
        dies); when a human seat is to act, its due time is written.

        Args:
            game_id: the game.
            out: a list the appended events are added to as they are appended (a caller
                that stops waiting reads the ones so far); default: a new list.

        Returns:
            The events appended by this call, in order (``out``).

        Raises:
            GameNotFound: no such game.
            Store errors (``redis.exceptions.ConnectionError`` ...): the game stays due, and
                a replica's poll resumes it after the lease.
        """
        lock = self._locks.setdefault(game_id, asyncio.Lock())
        out = [] if out is None else out
        async with lock:
            meta = await self._repo.meta(game_id)
            first = True
            while not self._closing():
                state, ts = await self._repo.load(game_id, fresh=first)
                first = False
                if state.phase == GAME_OVER:
                    break
                # a bot seat, or a human one a bot took over (R13.1)
                strategy = bot_strategy(meta, state, state.turn)
                if strategy is None:
                    await self._sched.after_append(game_id, meta, state, ts)
                    break
                seat = state.turn
                bot = make_bot(strategy, bot_seed(game_id, seat, state.version))
                new_state, events, kind = await self._move(game_id, strategy, bot, state)
                await self._sched.renew(game_id)
                epoch = self._repo.epoch()
                try:
                    # no request id: expected_version alone makes a bot move happen once,
                    # and request records would be most of a finished game's memory
                    result = await self._repo.append(game_id, events, state.version)
                except VersionConflict:
                    first = True  # another server moved: reload from the store
                    continue
                except GameLimitReached:
                    log.warning("game %s reached the cap of %d events; its bots stop",
                                game_id, self._repo.max_events)
                    await self._stop(game_id)
                    break
                if result.duplicate:  # another server played this very bot move first
                    first = True
                    continue
                metrics.child(metrics.COMMANDS_TOTAL, kind, "ok").inc()
                out.extend(result.events)
                self._repo.remember(game_id, new_state, result.events[-1].ts, epoch=epoch)
                await self._repo.maybe_snapshot(game_id, new_state)
                if new_state.phase == GAME_OVER:
                    await self._finish(game_id)
                    break
                await asyncio.sleep(self._bot_delay)
        if game_id in self._locks and not lock.locked():
            cached = self._repo.cached(game_id)
            if cached and cached[0].phase == GAME_OVER:
                self._locks.pop(game_id, None)
        return out

    async def _move(self, game_id: str, strategy: str, bot: Any,
                    state: GameState) -> tuple[GameState, list[Event], str]:
        """The bot's move in ``state`` as ``(new state, events, command kind)``.

        A bot that raises, or proposes a move the rules refuse, must not stop the game:
        the seat plays the phase's default move instead (draw, pass, end_turn,
        as a turn timer would), the failure is logged with the game id and counted in
        ``rummy_bot_failures_total``.
        """
        seat = state.turn
        reason = "raised"
        try:
            if strategy in INLINE_BOTS:
                cmd = bot.act(view(state, seat))
            else:  # a searching bot: keep the event loop serving other games
                cmd = await asyncio.to_thread(bot.act, view(state, seat))
            reason = "illegal_move"
            kind = command_kind(cmd)
            t0 = time.perf_counter()
            try:
                new_state, events = step(state, cmd)
            finally:
                metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
            return new_state, events, kind
        except Exception:  # noqa: BLE001 - any bot bug: the default move keeps the game going
            fallback = default_command(state)
            kind = command_kind(fallback)
            log.exception("bot %s at seat %d of game %s failed (%s) at version %d; playing "
                          "the default move %s", strategy, seat, game_id, reason,
                          state.version, kind)
            metrics.child(metrics.BOT_FAILURES_TOTAL, strategy, reason).inc()
            new_state, events = step(state, fallback)
            return new_state, events, kind


__all__ = ["BotDriver", "INLINE_BOTS", "bot_seed"]
