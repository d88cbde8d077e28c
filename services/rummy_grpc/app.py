"""The application service: one :class:`GameApp` serves any number of games from one event
store. Its parts, one job each:

* :mod:`rummy_grpc.repository` — the event store behind one mapper, and the state cache;
* :mod:`rummy_grpc.auth` — who is calling (seat token, spectator, admin);
* :mod:`rummy_grpc.creation` — game creation (seat list, deal, idempotent request ids);
* :mod:`rummy_grpc.commands` — a seat's command: get → decide → append;
* :mod:`rummy_grpc.progress` — the work after an append (bots, the next due time, end of
  game) and the due games this replica claimed (bot turns, turn timeouts);
* :mod:`rummy_grpc.bot_driver` — the server's bot seats;
* :mod:`rummy_grpc.timers` — due games (bot turns, turn deadlines) held in the store and
  claimed by any replica;
* :mod:`rummy_grpc.reads` — views, events, the state at a version, the live stream;
* :mod:`rummy_grpc.clock` — the event store's clock on this host (deadlines run on it).

This module wires them together and owns the background tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncGenerator, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from rummy_store.base import EventStore

from rummy.bots import BOTS, check_bot
from rummy.views import PlayerView
from rummy_grpc import metrics
from rummy_grpc.auth import hash_token
from rummy_grpc.bot_driver import BotDriver
from rummy_grpc.callers import Identity
from rummy_grpc.clock import RESYNC_SECONDS, StoreClock
from rummy_grpc.commands import CommandHandler
from rummy_grpc.creation import GameCreator
from rummy_grpc.errors import log_failure
from rummy_grpc.listing import GameSummary, backfill_creators, list_games
from rummy_grpc.model import (
    BOT_WAIT,
    COMMAND_KINDS,
    LEASE_SECONDS,
    POLL_SECONDS,
    REQUEST_WINDOW,
    Created,
    Outcome,
    SeatSpec,
    StateAt,
    Timed,
)
from rummy_grpc.progress import RESUME_FIRST, GameProgress
from rummy_grpc.reads import ReadModels
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler

log = logging.getLogger("rummy_grpc")
T = TypeVar("T")

SERVED_BOTS = tuple(sorted(name for name in BOTS if name != "search"))
"""Bot strategies a server offers by default (``rummy serve --bot-strategies``): all but
``search`` (determinized rollouts, ~100x a ``strategic`` move's CPU: docs/security.md)."""


class GameApp:
    """The game service's application layer (no gRPC in here).

    Args:
        store: the event store.
        admin_token: the token that unlocks full information (``RUMMY_ADMIN_TOKEN``); ``None``
            or empty: no admin access.
        cache_size: games whose latest state is kept in memory (LRU).
        bot_delay: seconds to wait between two bot commands (0: none; a demo pacing knob).
        clock: the clock deadlines are compared on, epoch seconds; default (``None``): the
            store's clock (:class:`rummy_grpc.clock.StoreClock`, measured at start and
            every 30 s), the one that stamps the events' ``ts`` and keeps due times.
        lease: seconds a replica reserves a due game it claimed (``timers.LEASE_SECONDS``).
        poll: seconds between two polls of the store's due games (``timers.POLL_SECONDS``).
        max_events: cap of events per game (``repository.MAX_EVENTS``).
        request_window: seconds a ``CreateGame`` request id is remembered.
        bot_strategies: the bot strategies a ``CreateGame`` may seat (default
            :data:`SERVED_BOTS`: every registered bot but ``search``, whose moves cost ~100x
            a ``strategic`` move's CPU, so that an open server cannot be loaded by them).
        bot_wait: seconds a call waits for the server bots after its command (their moves
            by then are in the reply; the rest go on in the background).
        read_feed: answer ``GetView`` from memory while the store's append feed shows the
            cached state is the latest (``rummy_store.feed``; a single Redis only; reads
            then trail another process's appends by the notification's delay). Off by
            default: every ``GetView`` reads the store.
        retain_finished: seconds a finished game stays in Redis before it moves to the
            store's archive (:class:`rummy_grpc.archiving.ArchiveLoop`; 0: off).

    The store is wrapped in a :class:`rummy_store.sealed.GameStore` unless it is one: seat
    names are sealed at write time (:mod:`rummy_store.shred`).
    """

    def __init__(self, store: EventStore, *, admin_token: str | None = None,
                 cache_size: int = 4096, bot_delay: float = 0.0,
                 clock: Callable[[], float] | None = None, lease: float = LEASE_SECONDS,
                 poll: float = POLL_SECONDS, max_events: int = 0,
                 request_window: float = REQUEST_WINDOW, read_feed: bool = False,
                 bot_strategies: Sequence[str] | None = None,
                 bot_wait: float = BOT_WAIT, retain_finished: float = 0.0) -> None:
        from rummy_store.sealed import GameStore
        if not isinstance(store, GameStore):  # seat names sealed whatever store is given
            store = GameStore(store)
        self.store = store
        self.retain_finished = retain_finished
        self._archiving: asyncio.Task[None] | None = None
        self.repo = GameRepository(store, cache_size=cache_size, max_events=max_events)
        self._admin = admin_token or ""
        self.store_clock: StoreClock | None = None
        """The store's clock on this host (``None`` when a ``clock`` was given)."""
        if clock is None:
            self.store_clock = StoreClock(store)
            now: Callable[[], float] = self.store_clock.now
        else:
            now = clock
        self._clock = now
        self._resync: asyncio.Task[None] | None = None
        self._read_feed = read_feed
        self.bot_strategies = (frozenset(SERVED_BOTS) if bot_strategies is None
                               else frozenset(bot_strategies))
        for name in sorted(self.bot_strategies):
            check_bot(name)  # ValueError: unknown bot
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._poller: asyncio.Task[None] | None = None
        self.store_trouble = asyncio.Event()
        """Set when a store call of the background work failed (a refused connection, a
        timeout): the health watcher pings the store at once rather than at its next tick."""
        self.scheduler = Scheduler(store, process=lambda g: self.progress.process(g),
                                   clock=now, spawn=self._spawn,
                                   closing=lambda: self._closing, lease=lease, poll=poll,
                                   on_store_failure=lambda _exc: self.store_trouble.set())
        self.progress = GameProgress(store, self.repo, scheduler=self.scheduler,
                                     drive=lambda *a: self.bots.drive(*a), spawn=self._spawn,
                                     start=self._start, report=self._report, clock=now,
                                     bot_wait=bot_wait)
        self.bots = BotDriver(self.repo, scheduler=self.scheduler,
                              finish=self.progress.finish, stop=self.progress.stop,
                              closing=lambda: self._closing, bot_delay=bot_delay)
        self.creator = GameCreator(store, self.repo, scheduler=self.scheduler,
                                   progress=self.progress, drive=self.bots.drive,
                                   spawn=self._spawn, bot_strategies=self.bot_strategies,
                                   admin_token=self._admin, clock=now,
                                   request_window=request_window)
        self.commands = CommandHandler(self.repo, scheduler=self.scheduler,
                                       progress=self.progress)
        self.reads = ReadModels(self.repo, self._admin)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> int:
        """Start acting on due games: bot turns and turn deadlines are held in the store
        (``timers``), and this replica polls them from now on, with every other replica.

        Returns:
            The number of active games in the store's index (for the gauge).
        """
        if self.store_clock is not None:  # deadlines on the store's clock, from the start
            await self.store_clock.sync()
            self._resync = asyncio.get_running_loop().create_task(self._keep_clock())
        active = len(await self.store.list_games(limit=1_000_000, active_only=True))
        metrics.GAMES_ACTIVE.set(active)
        if self._read_feed:  # reads from memory while the store's append feed is live
            self.repo.start_feed()
        self._poller = asyncio.get_running_loop().create_task(self.scheduler.run())
        # games of an older release into the per-creator index (ListGames), in the background
        self._spawn(backfill_creators(self.store, secrets.token_hex(8)))
        if self.retain_finished:
            from rummy_grpc.archiving import ArchiveLoop
            loop = ArchiveLoop(self.store, self.retain_finished)
            self._archiving = asyncio.get_running_loop().create_task(loop.run())
        return active

    async def close(self) -> None:
        """Stop polling; cancel timers and background bot tasks (the store is left open).
        Due games stay due in the store: another replica, or this one restarted, goes on."""
        self._closing = True
        self.repo.stop_feed()
        self.scheduler.cancel_all()
        for loop_task in (self._poller, self._resync, self._archiving):
            if loop_task is not None:
                loop_task.cancel()
                with contextlib.suppress(BaseException):
                    await loop_task
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _keep_clock(self) -> None:
        """Measure the store clock's offset again every ``RESYNC_SECONDS`` (a host clock
        stepped by NTP); a store outage keeps the last offset."""
        assert self.store_clock is not None
        while not self._closing:
            await asyncio.sleep(RESYNC_SECONDS)
            try:
                await self.store_clock.sync()
            except Exception as exc:  # noqa: BLE001 - an outage: the last offset stays
                log.debug("cannot read the store's clock: %s", exc)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` in the background; its failure is logged (:meth:`_report`)."""
        task = self._start(coro)
        if task is not None:
            task.add_done_callback(self._report)

    def _start(self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T] | None:
        """Run ``coro`` as a task of this server (cancelled by :meth:`close`) and return it;
        ``None`` once closing (``coro`` is closed unrun)."""
        if self._closing:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @staticmethod
    def _report(task: asyncio.Task[Any]) -> None:
        """Log a background task's failure (never "Task exception was never retrieved"): a
        store outage in one line, anything else with its traceback. What failed stays due
        in the store, so a replica's poll resumes it after the lease."""
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            log_failure(log, f"background task {task.get_coro().__qualname__}",  # type: ignore[union-attr]
                        exc, "what it did stays due and is retried after the lease")

    # ------------------------------------------------------------------ commands

    async def create_game(self, seats: Sequence[SeatSpec], variants: dict[str, Any],
                          seed: int | None = None, turn_seconds: int = 0, *,
                          admin_token: str = "", request_id: str = "",
                          creator: str = "", lifecycle: dict[str, Any] | None = None
                          ) -> Created:
        """:meth:`rummy_grpc.creation.GameCreator.create`."""
        return await self.creator.create(seats, variants, seed, turn_seconds,
                                         admin_token=admin_token, request_id=request_id,
                                         creator=creator, lifecycle=lifecycle)

    async def list_games(self, who: Identity, admin_token: str, state: int, page_size: int,
                         page_token: str) -> tuple[list[GameSummary], str]:
        """:func:`rummy_grpc.listing.list_games` over this app's games."""
        return await list_games(self.repo, self._admin, who, admin_token, state, page_size,
                                page_token)

    async def command(self, game_id: str, token: str, kind: str, table: Any = None, *,
                      expected_version: int | None = None,
                      request_id: str = "", with_view: bool = True,
                      wait: bool = False) -> Outcome:
        """:meth:`rummy_grpc.commands.CommandHandler.command` (also the seat changes of
        §13: ``"resign"``, ``"leave"``, ``"reclaim"``)."""
        return await self.commands.command(game_id, token, kind, table,
                                           expected_version=expected_version,
                                           request_id=request_id, with_view=with_view,
                                           wait=wait)


    # ------------------------------------------------------------------ reads

    async def get_view(self, game_id: str, token: str) -> tuple[PlayerView, float]:
        """:meth:`rummy_grpc.reads.ReadModels.get_view`."""
        return await self.reads.get_view(game_id, token)

    async def get_events(self, game_id: str, token: str, admin_token: str = "",
                         after_version: int = 0,
                         to_version: int | None = None) -> tuple[list[Timed], bool]:
        """:meth:`rummy_grpc.reads.ReadModels.get_events`."""
        return await self.reads.get_events(game_id, token, admin_token, after_version,
                                           to_version)

    async def get_state(self, game_id: str, token: str, admin_token: str = "",
                        version: int = 0) -> StateAt:
        """:meth:`rummy_grpc.reads.ReadModels.get_state`."""
        return await self.reads.get_state(game_id, token, admin_token, version)

    def stream(self, game_id: str, token: str, admin_token: str = "",
               after_version: int = 0) -> AsyncGenerator[Timed, None]:
        """:meth:`rummy_grpc.reads.ReadModels.stream`."""
        return self.reads.stream(game_id, token, admin_token, after_version)


__all__ = [
    "COMMAND_KINDS",
    "RESUME_FIRST",
    "SERVED_BOTS",
    "Created",
    "GameApp",
    "Outcome",
    "SeatSpec",
    "StateAt",
    "Timed",
    "hash_token",
]
