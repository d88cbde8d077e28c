"""Due games: bot turns and turn deadlines, held in the event store so that any replica can
act on them.

A game is *due* when the server must act on it without a client: a server bot is to act, or
a seat with a turn time limit has run out of time (it then gets the phase's default move,
``rummy.decide.default_command``). The store keeps one due time per game
(``EventStore.schedule``); every replica polls the due games (``EventStore.claim_due``),
which atomically leases each one to the replica that claims it. A replica that dies while
driving bots or before a deadline simply lets its lease lapse, and another replica claims
the game: nothing waits for a restart.

The invariant kept: *every game on which the server has something to do has a due time no
later than when it must act* (earlier is harmless: the claimer reloads the game and
reschedules it). Writers:

* before an append whose new state is due (a bot is to act, or a timed seat), the due time
  is moved *earlier* only (``only_earlier``), so a crash right after the append loses
  nothing (:meth:`Scheduler.before_append`);
* after an append, the exact next due time is written, or the game is unscheduled when
  nothing is due (:meth:`Scheduler.after_append`);
* a replica driving bots renews its lease every third of it (:meth:`Scheduler.renew`).

Besides polling, a replica that knows a deadline arms a local timer for it, so a timeout is
applied on time (within milliseconds) without waiting for the next poll. Every background
step retries store failures with exponential backoff and jitter: a store outage pauses
games, it never stops them.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from rummy_store.base import EventStore

from rummy.state import GAME_OVER, GameState
from rummy_grpc.errors import log_failure
from rummy_grpc.lifecycle import bot_to_act
from rummy_grpc.model import LEASE_SECONDS, POLL_SECONDS

log = logging.getLogger("rummy_grpc")

MAX_BACKOFF = 2.0
"""Longest wait between two retries of a failing store (seconds)."""


def deadline(meta: dict[str, Any], state: GameState, ts: float) -> float:
    """When the seat to act times out, in epoch seconds (0: no time limit, or game over)."""
    seconds = meta.get("turn_seconds", 0)
    if not seconds or state.phase == GAME_OVER:
        return 0.0
    return float(ts + seconds)


def pending(meta: dict[str, Any], state: GameState) -> float | None:
    """Seconds after the state's last event at which the server must act on the game:
    ``0.0`` when a server bot is to act, the turn time limit when a timed seat is to act,
    ``None`` when nothing is due (an untimed human seat, or the game is over)."""
    if state.phase == GAME_OVER:
        return None
    if bot_to_act(meta, state):  # a bot seat, or one a bot took over (R13.1)
        return 0.0
    seconds = meta.get("turn_seconds", 0)
    return float(seconds) if seconds else None


def backoff(attempt: int, *, first: float = 0.1, cap: float = MAX_BACKOFF) -> float:
    """Exponential backoff with full jitter: a random wait in ``[d/2, d]`` seconds where
    ``d = min(cap, first * 2**attempt)``."""
    d = min(cap, first * (2 ** min(attempt, 16)))
    return random.uniform(d / 2, d)


class Scheduler:
    """The due games of one replica: store-held due times, local deadline timers and the
    poll loop that claims due games.

    Args:
        store: the event store (holds the due times).
        process: awaited with a claimed game id: act on the game (drive its bots, apply a
            timeout) and reschedule it. Errors are logged; the lease retries it.
        clock: wall clock in epoch seconds.
        spawn: starts a background task (the server's task set).
        closing: returns True once the server is shutting down.
        lease: seconds a claim reserves a game (:data:`LEASE_SECONDS`).
        poll: seconds between two polls (:data:`POLL_SECONDS`).
        on_store_failure: called with the error when a poll of the store fails (the health
            watcher pings the store at once: a refused connection is seen within a poll).
    """

    def __init__(self, store: EventStore, *,
                 process: Callable[[str], Awaitable[None]],
                 clock: Callable[[], float],
                 spawn: Callable[[Coroutine[Any, Any, None]], None],
                 closing: Callable[[], bool],
                 lease: float = LEASE_SECONDS, poll: float = POLL_SECONDS,
                 on_store_failure: Callable[[BaseException], None] | None = None) -> None:
        self._store = store
        self._on_store_failure = on_store_failure
        self._process = process
        self._clock = clock
        self._spawn = spawn
        self._closing = closing
        self.lease = lease
        self.poll = poll
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._inflight: set[str] = set()
        self._renewed: dict[str, float] = {}

    # ------------------------------------------------------------------ due times

    async def before_append(self, game_id: str, meta: dict[str, Any],
                            state: GameState) -> None:
        """Before appending the events that lead to ``state``: if ``state`` is due, make
        sure the store's due time is no later than it must be (a bot: one lease from now,
        since this replica drives it at once; a timed seat: its turn limit). A game that
        ends is due one lease from now too: finishing it (unschedule, leave the active
        games) is work after the append, and should this replica fail to do it (Redis
        refusing writes, a crash), the due time makes any replica's poll finish it."""
        if state.phase == GAME_OVER:
            await self._store.schedule(game_id, self.lease, only_earlier=True)
            return
        due = pending(meta, state)
        if due is None:
            return
        if due == 0.0:
            self._renewed[game_id] = time.monotonic()
        await self._store.schedule(game_id, due if due else self.lease, only_earlier=True)

    async def after_append(self, game_id: str, meta: dict[str, Any], state: GameState,
                           ts: float) -> None:
        """After an append that led to ``state`` (last event at ``ts``): write the exact
        next due time (and arm the local timer of a deadline), or unschedule the game."""
        due = pending(meta, state)
        if due is None:
            self.cancel(game_id)
            self._renewed.pop(game_id, None)
            await self._store.unschedule(game_id)
        elif due > 0.0:
            self._renewed.pop(game_id, None)
            when = ts + due
            await self._store.schedule(game_id, max(0.0, when - self._clock()))
            self.arm(game_id, when)

    async def renew(self, game_id: str) -> None:
        """While driving a game's bots: extend this replica's lease when a third of it has
        passed since the last renewal (one store call per ``lease / 3`` seconds)."""
        now = time.monotonic()
        if now - self._renewed.get(game_id, 0.0) >= self.lease / 3:
            self._renewed[game_id] = now
            await self._store.schedule(game_id, self.lease)

    async def resume(self, game_id: str) -> None:
        """Mark a game due now (a retried command found bots to drive, or a game found
        active at start): the next poll of any replica acts on it."""
        await self._store.schedule(game_id, 0.0, only_earlier=True)

    # ------------------------------------------------------------------ local timers

    def arm(self, game_id: str, when: float) -> None:
        """Arm this replica's timer for a deadline at ``when`` (epoch seconds): at that time
        it claims the game (if no other replica did) and processes it."""
        self.cancel(game_id)
        if self._closing():
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, when - self._clock()) + 0.005
        self._timers[game_id] = loop.call_later(
            delay, lambda: self._spawn(self._fire(game_id)))

    def cancel(self, game_id: str) -> None:
        """Cancel the game's local timer, if any."""
        handle = self._timers.pop(game_id, None)
        if handle:
            handle.cancel()

    def cancel_all(self) -> None:
        """Cancel every local timer (shutdown)."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()

    async def _fire(self, game_id: str) -> None:
        self._timers.pop(game_id, None)
        try:
            claimed = await self._store.claim_due(self.lease, game_id=game_id)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the store is down: the poll loop retries
            log.warning("could not claim the due game %s; the poll loop will retry", game_id)
            return
        if claimed:
            await self._run(game_id)

    # ------------------------------------------------------------------ polling

    async def run(self) -> None:
        """Poll the store for due games until cancelled: claim up to 64 at a time and
        process each one (once per replica at a time). A failing store is retried with
        exponential backoff and jitter, logged once per outage."""
        failures = 0
        while not self._closing():
            try:
                claimed = await self._store.claim_due(self.lease, limit=64)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an outage: wait and retry
                if self._on_store_failure is not None:
                    self._on_store_failure(exc)
                if failures == 0:
                    log.warning("cannot poll due games (%s: %s); retrying with backoff",
                                type(exc).__name__, exc)
                await asyncio.sleep(backoff(failures))
                failures += 1
                continue
            if failures:
                log.warning("polling due games again after %d failed attempts", failures)
                failures = 0
            for game_id in claimed:
                if game_id not in self._inflight:
                    self._spawn(self._run(game_id))
            if len(claimed) < 64:
                await asyncio.sleep(self.poll * random.uniform(0.8, 1.2))

    async def _run(self, game_id: str) -> None:
        if game_id in self._inflight:
            return
        self._inflight.add(game_id)
        try:
            await self._process(game_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a background step must never crash the server
            log_failure(log, f"acting on due game {game_id}", exc,
                        f"it is retried after its lease ({self.lease:.1f} s)")
        finally:
            self._inflight.discard(game_id)


__all__ = ["LEASE_SECONDS", "POLL_SECONDS", "Scheduler", "backoff", "deadline", "pending"]
