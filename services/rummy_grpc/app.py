"""The application service: a command's path get → decide → append, and game creation.

One :class:`GameApp` serves any number of games from one event store. Its parts, one job
each:

* :mod:`rummy_grpc.repository` — the event store behind one mapper, and the state cache;
* :mod:`rummy_grpc.auth` — who is calling (seat token, spectator, admin);
* :mod:`rummy_grpc.bot_driver` — the server's bot seats;
* :mod:`rummy_grpc.timers` — due games (bot turns, turn deadlines) held in the store and
  claimed by any replica; the default move when a seat runs out of time;
* :mod:`rummy_grpc.reads` — views, events, the state at a version, the live stream.

A command is decided with the pure core (``rummy.decide.step``) on the game's latest state
and appended with ``expected_version`` (the version it was decided on) and the client's
``request_id``, so two servers can never both append turn N and a retried command returns
the original outcome. Everything a player receives goes through ``rummy.views`` (I3).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
import uuid
from collections.abc import AsyncGenerator, Coroutine, Sequence
from typing import Any

from rummy_store.base import (
    AppendResult,
    EventStore,
    RequestIdReused,
    StoredEvent,
    VersionConflict,
    request_digest,
)

from rummy.bots import BOTS, check_bot
from rummy.commands import CreateGame, check_seat_name, command_kind, make_command
from rummy.decide import default_command, step
from rummy.errors import NotationError, RummyError
from rummy.events import Event
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.state import GAME_OVER, GameState
from rummy.views import PlayerView, view
from rummy_grpc import metrics
from rummy_grpc.auth import authenticate, check_admin, hash_token
from rummy_grpc.bot_driver import BotDriver
from rummy_grpc.errors import (
    BadRequest,
    GameLimitReached,
    GameNotFound,
    SeedNotAllowed,
    log_failure,
    outcome,
    store_unavailable,
)
from rummy_grpc.model import (
    COMMAND_KINDS,
    LEASE_SECONDS,
    MAX_MELDS,
    MAX_NAME,
    MAX_REQUEST_ID,
    MAX_TABLE_CARDS,
    POLL_SECONDS,
    REQUEST_WINDOW,
    Created,
    Outcome,
    SeatSpec,
    StateAt,
    Timed,
)
from rummy_grpc.reads import ReadModels, redact_for
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler, deadline, pending

log = logging.getLogger("rummy_grpc")

RESUME_FIRST = 0.25
"""Seconds before this replica first retries the work after an append that failed
(:meth:`GameApp._resume`); the wait doubles up to the lease."""

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
        clock: wall clock in epoch seconds (deadlines compare it to stored ``ts``).
        lease: seconds a replica reserves a due game it claimed (``timers.LEASE_SECONDS``).
        poll: seconds between two polls of the store's due games (``timers.POLL_SECONDS``).
        max_events: cap of events per game (``repository.MAX_EVENTS``).
        request_window: seconds a ``CreateGame`` request id is remembered.
        bot_strategies: the bot strategies a ``CreateGame`` may seat (default
            :data:`SERVED_BOTS`: every registered bot but ``search``, whose moves cost ~100x
            a ``strategic`` move's CPU, so that an open server cannot be loaded by them).
        read_feed: answer ``GetView`` from memory while the store's append feed shows the
            cached state is the latest (``rummy_store.feed``; a single Redis only; reads
            then trail another process's appends by the notification's delay). Off by
            default: every ``GetView`` reads the store.
    """

    def __init__(self, store: EventStore, *, admin_token: str | None = None,
                 cache_size: int = 4096, bot_delay: float = 0.0,
                 clock: Any = time.time, lease: float = LEASE_SECONDS,
                 poll: float = POLL_SECONDS, max_events: int = 0,
                 request_window: float = REQUEST_WINDOW, read_feed: bool = False,
                 bot_strategies: Sequence[str] | None = None) -> None:
        self.store = store
        self.repo = GameRepository(store, cache_size=cache_size, max_events=max_events)
        self._admin = admin_token or ""
        self._clock = clock
        self._request_window = request_window
        self._read_feed = read_feed
        self.bot_strategies = (frozenset(SERVED_BOTS) if bot_strategies is None
                               else frozenset(bot_strategies))
        for name in sorted(self.bot_strategies):
            check_bot(name)  # ValueError: unknown bot
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._poller: asyncio.Task[None] | None = None
        self.scheduler = Scheduler(store, process=self._process, clock=clock,
                                   spawn=self._spawn, closing=lambda: self._closing,
                                   lease=lease, poll=poll)
        self.bots = BotDriver(self.repo, scheduler=self.scheduler, finish=self._finish,
                              stop=self._stop, closing=lambda: self._closing,
                              bot_delay=bot_delay)
        self.reads = ReadModels(self.repo, self._admin)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> int:
        """Start acting on due games: bot turns and turn deadlines are held in the store
        (``timers``), and this replica polls them from now on, with every other replica.

        Returns:
            The number of active games in the store's index (for the gauge).
        """
        active = len(await self.store.list_games(limit=1_000_000, active_only=True))
        metrics.GAMES_ACTIVE.set(active)
        if self._read_feed:  # reads from memory while the store's append feed is live
            self.repo.start_feed()
        self._poller = asyncio.get_running_loop().create_task(self.scheduler.run())
        return active

    async def close(self) -> None:
        """Stop polling; cancel timers and background bot tasks (the store is left open).
        Due games stay due in the store: another replica, or this one restarted, goes on."""
        self._closing = True
        self.repo.stop_feed()
        self.scheduler.cancel_all()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(BaseException):
                await self._poller
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        if self._closing:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._report)

    @staticmethod
    def _report(task: asyncio.Task[Any]) -> None:
        """Log a background task's failure (never "Task exception was never retrieved"): a
        store outage in one line, anything else with its traceback. What failed stays due
        in the store, so a replica's poll resumes it after the lease."""
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            log_failure(log, f"background task {task.get_coro().__qualname__}",  # type: ignore[union-attr]
                        exc, "what it did stays due and is retried after the lease")

    # ------------------------------------------------------------------ due games

    async def _process(self, game_id: str) -> None:
        """Act on a due game this replica claimed: drive its bots, apply a timeout whose
        deadline passed, or write its exact next due time (none when nothing is due)."""
        try:
            meta = await self.repo.meta(game_id)
            state, ts = await self.repo.load(game_id)
        except GameNotFound:  # expired, or meta without events: nothing to act on
            await self.store.unschedule(game_id)
            return
        if state.phase == GAME_OVER:
            await self._finish(game_id)
            return
        due = pending(meta, state)
        if due == 0.0:
            await self.bots.drive(game_id)
        elif due is not None and self._clock() + 0.001 >= ts + due:
            await self._timeout(game_id, meta, state)
        else:  # not due yet (an early due time) or nothing to do
            await self.scheduler.after_append(game_id, meta, state, ts)

    async def _timeout(self, game_id: str, meta: dict[str, Any], state: GameState) -> None:
        """The seat to act ran out of time: apply the phase's default move with
        ``expected_version`` = this version and request id ``timeout:<version>`` (exactly
        once, even with several replicas; a move that came first makes this a no-op)."""
        cmd = default_command(state)
        kind = command_kind(cmd)
        t0 = time.perf_counter()
        new_state, events = step(state, cmd)
        metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
        await self.scheduler.before_append(game_id, meta, new_state)
        epoch = self.repo.epoch()
        try:
            result = await self.repo.append(game_id, events, state.version,
                                            request_id=f"timeout:{state.version}",
                                            request_hash="timeout", response=None)
        except VersionConflict:  # the seat moved first: it rescheduled the game
            metrics.child(metrics.COMMANDS_TOTAL, kind, "timeout_lost").inc()
            return
        except GameLimitReached:
            await self._stop(game_id)
            return
        if result.duplicate:
            return
        metrics.child(metrics.COMMANDS_TOTAL, kind, "timeout").inc()
        self.repo.remember(game_id, new_state, result.events[-1].ts, epoch=epoch)
        await self._follow_up(game_id, meta, new_state, result.events[-1].ts)

    # ------------------------------------------------------------------ create

    async def create_game(self, seats: Sequence[SeatSpec], variants: dict[str, Any],
                          seed: int | None = None, turn_seconds: int = 0, *,
                          admin_token: str = "", request_id: str = "") -> Created:
        """Create and deal a game; bot seats that are due start playing at once.

        Args:
            seats: 2..5 seat specs, in seat order.
            variants: rule variants of docs/rules.md §11 (``{"target_score": "100"}``).
            seed: the game's seed; ``None``: drawn from a CSPRNG (``secrets``). A chosen
                seed gives away every hand and the stock order, so it is accepted only with
                the admin token or for a game without human seats.
            turn_seconds: turn time limit per decision in seconds (0: none), 0..86400.
            admin_token: the admin token (needed for a chosen seed with human seats).
            request_id: idempotency key: a retry within the request window returns the
                original game and tokens (``""``: none).

        Returns:
            The game id, ``{seat: token}`` for the human seats, and the version (2: the
            ``GameStarted`` and ``RoundStarted`` events).

        Raises:
            BadRequest: a bad seat list (count, kind, unknown bot strategy, long name), or a
                bad request id.
            SeedNotAllowed: a chosen seed for a game with a human seat, without the admin
                token.
            PermissionDenied: a wrong admin token.
            RequestIdReused: the request id was used for a different CreateGame.
            InvalidRuleSetError: an unknown variant or a value out of range.
            NotationError: a bad ``turn_seconds`` or seed.
        """
        try:
            self._check_request_id(request_id)
            try:
                RuleSet().check_players(len(seats))  # R1.1: the core's check
            except RummyError as e:
                raise BadRequest(str(e), rule="R1.1") from None
            names = []
            for i, s in enumerate(seats):
                if s.kind == "bot":
                    try:
                        check_bot(s.strategy)
                    except ValueError as e:
                        raise BadRequest(f"seat {i}: {e}") from None
                    if s.strategy not in self.bot_strategies:
                        raise BadRequest(
                            f"seat {i}: not offered bot strategy {s.strategy!r}; this server "
                            f"offers: {', '.join(sorted(self.bot_strategies))}")
                elif s.kind != "human":
                    raise BadRequest(f"seat {i}: kind must be human or bot, got {s.kind!r}")
                if len(s.name) > MAX_NAME:
                    raise BadRequest(f"seat {i}: name longer than {MAX_NAME} characters")
                try:
                    check_seat_name(i, s.name)  # the core's check, before anything is stored
                except NotationError as e:
                    raise BadRequest(str(e)) from None
                names.append(s.name or (f"{s.strategy}-bot" if s.kind == "bot" else f"seat{i}"))
            admin = check_admin(admin_token, self._admin)
            if seed is not None and not admin and any(s.kind == "human" for s in seats):
                raise SeedNotAllowed(
                    "a client-chosen seed lets the creator compute every hand and the stock "
                    "order; omit the seed (the server draws a secret one) or send the admin "
                    "token (seeds are accepted without it only for games with no human seat)")
            rules = RuleSet.from_dict(variants)
            game_id = uuid.uuid4().hex
            tokens = {i: secrets.token_urlsafe(24) for i, s in enumerate(seats)
                      if s.kind == "human"}
            if seed is None:
                seed = secrets.randbits(62)
            if request_id:  # a retry gets the original game id, tokens and seed
                body = {"seats": [[s.kind, s.name, s.strategy] for s in seats],
                        "variants": {str(k): str(v) for k, v in variants.items()},
                        "seed": seed if admin or not tokens else None,
                        "turn_seconds": turn_seconds}
                digest = request_digest(body)
                record = await self.store.put_if_absent(
                    f"create:{request_id}",
                    {"hash": digest, "game_id": game_id, "seed": seed,
                     "tokens": {str(k): v for k, v in tokens.items()}},
                    self._request_window)
                if record["hash"] != digest:  # names the game the id created
                    raise RequestIdReused(str(record["game_id"]), request_id)
                game_id, seed = record["game_id"], int(record["seed"])
                tokens = {int(k): v for k, v in record["tokens"].items()}
            t0 = time.perf_counter()
            state, events = step(None, CreateGame(len(seats), seed, rules, tuple(names),
                                                  turn_seconds))
            metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
        except (RummyError, BadRequest, SeedNotAllowed, RequestIdReused) as exc:
            metrics.child(metrics.COMMANDS_TOTAL, "create_game", outcome(exc)).inc()
            raise
        meta = {
            "seats": [{"kind": s.kind, "name": n, "strategy": s.strategy}
                      for s, n in zip(seats, names, strict=True)],
            "tokens": {hash_token(t): i for i, t in tokens.items()},
            "players": len(seats), "hand_size": rules.hand_size,
            "turn_seconds": turn_seconds, "created": self._clock(),
        }
        await self.repo.put_meta(game_id, meta)
        await self.scheduler.before_append(game_id, meta, state)
        epoch = self.repo.epoch()
        result = await self.repo.append(game_id, events, 0, request_id="create",
                                        request_hash="create", response=None)
        metrics.child(metrics.COMMANDS_TOTAL, "create_game",
                                      "duplicate" if result.duplicate else "ok").inc()
        if not result.duplicate:
            metrics.GAMES_ACTIVE.inc()
        ts = result.events[-1].ts if result.events else self._clock()
        self.repo.remember(game_id, state, ts,
                           epoch=None if result.duplicate else epoch)
        if all(s.kind == "bot" for s in seats):
            self._spawn(self.bots.drive(game_id))
        elif not result.duplicate:
            await self._follow_up(game_id, meta, state, ts, snapshot=False)
        return Created(game_id, tokens, result.version)

    @staticmethod
    def _check_request_id(request_id: str) -> None:
        """The one check of a client's request id, on every RPC that takes one: ``""``
        (none) or at most ``MAX_REQUEST_ID`` printable characters without whitespace.

        Raises:
            BadRequest: any other id (nothing is read or appended).
        """
        if request_id and (len(request_id) > MAX_REQUEST_ID or not request_id.isprintable()
                           or any(c.isspace() for c in request_id)):
            raise BadRequest(f"request_id must be at most {MAX_REQUEST_ID} printable "
                             "characters without spaces")

    # ------------------------------------------------------------------ commands

    async def command(self, game_id: str, token: str, kind: str, table: Any = None, *,
                      expected_version: int | None = None,
                      request_id: str = "", with_view: bool = True) -> Outcome:
        """Run one seat command: authenticate, decide, append, then let bots play.

        Args:
            game_id: the game.
            token: the caller's seat token (the seat acting is the token's seat).
            kind: ``"draw"``, ``"pass"``, ``"meld"``, ``"knock"`` or ``"end_turn"``.
            table: for ``"meld"``, the whole new table as lists of card tokens.
            expected_version: refuse unless the game is at this version.
            request_id: idempotency key; a retry returns the original outcome.
            with_view: build the caller's view for the outcome (False: ``view`` is None).

        Raises:
            GameNotFound, Unauthenticated, PermissionDenied: unknown game, no or bad token.
            NotationError, BadRequest: malformed input (nothing appended).
            NotYourTurnError, GameOverError, IllegalMoveError: refused by the rules.
            VersionConflict: ``expected_version`` is not the game's version (or lost a race).
            RequestIdReused: ``request_id`` was used for a different command.
        """
        label = kind if kind in COMMAND_KINDS else "unknown"
        try:
            out = await self._command(game_id, token, kind, table, expected_version,
                                      request_id, with_view)
        except BaseException as exc:
            metrics.child(metrics.COMMANDS_TOTAL, label, outcome(exc)).inc()
            raise
        metrics.child(metrics.COMMANDS_TOTAL, label, "duplicate" if out.duplicate else "ok").inc()
        return out

    async def _command(self, game_id: str, token: str, kind: str, table: Any,
                       expected_version: int | None, client_request_id: str,
                       with_view: bool = True) -> Outcome:
        if expected_version is not None and expected_version < 0:
            raise BadRequest("expected_version must be >= 0")
        self._check_request_id(client_request_id)
        # client ids live in their own namespace: a client can never take the id of a
        # server-made move (bot:<v>, timeout:<v>, create)
        request_id = f"client:{client_request_id}" if client_request_id else ""
        meta = await self.repo.meta(game_id)
        seat = authenticate(meta, token, seat_required=True).seat
        assert seat is not None
        parsed = None
        if kind == "meld":
            if table is None or len(table) > MAX_MELDS \
                    or sum(len(m) for m in table) > MAX_TABLE_CARDS:
                raise BadRequest(f"a table has at most {MAX_MELDS} melds and "
                                 f"{MAX_TABLE_CARDS} cards")
            parsed = parse_table(table)
        try:
            cmd = make_command(kind, seat, parsed)
        except ValueError as e:
            raise BadRequest(str(e)) from None
        body = {"kind": kind, "seat": seat, "table": table, "expected": expected_version}
        # 64 bits of the digest tell a retry from another request under the same id
        rhash = request_digest(body)[:16] if request_id else None
        for attempt in range(5):
            # first attempt on the cached state; the store is asked only when the cache may
            # be behind (a conflict, or a client that expects another version)
            state, _ = await self.repo.load(game_id, fresh=attempt > 0)
            if expected_version is not None and expected_version != state.version \
                    and attempt == 0:
                state, _ = await self.repo.load(game_id)
            try:
                if expected_version is not None and expected_version != state.version:
                    raise VersionConflict(game_id, expected_version, state.version)
                t0 = time.perf_counter()
                try:
                    new_state, events = step(state, cmd)
                finally:
                    metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
                await self.scheduler.before_append(game_id, meta, new_state)
                epoch = self.repo.epoch()
                result = await self.repo.append(
                    game_id, events, state.version, request_id=request_id or None,
                    request_hash=rhash, response=None)
            except GameLimitReached:
                await self._stop(game_id)  # the game can take no more events (--max-events)
                raise
            except (RummyError, VersionConflict) as exc:
                if request_id:  # a retry of a command that was applied: its original outcome
                    original = await self.repo.get_request(game_id, request_id, rhash)
                    if original is not None:
                        await self._redrive(game_id)
                        return await self._outcome(game_id, meta, seat, original, [], True,
                                                   with_view)
                if isinstance(exc, VersionConflict) and attempt < 4 and (
                        expected_version is None or exc.actual == expected_version):
                    continue  # our cache was behind, or someone moved first: decide again
                if attempt == 0 and isinstance(exc, RummyError):
                    # refused on the cached state: make sure the refusal holds on the latest
                    latest, _ = await self.repo.load(game_id)
                    if latest.version != state.version:
                        continue
                raise
            if result.duplicate:
                await self._redrive(game_id)
                return await self._outcome(game_id, meta, seat, result, [], True, with_view)
            self.repo.remember(game_id, new_state, result.events[-1].ts, epoch=epoch)
            more = await self._follow_up(game_id, meta, new_state, result.events[-1].ts,
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
        cached = self.repo.cached(game_id)
        if duplicate or more or cached is None:
            try:
                state, ts = await self.repo.load(game_id)
            except Exception as exc:
                if fallback is None or not store_unavailable(exc):
                    raise
                state, ts = fallback, result.events[-1].ts
        else:
            state, ts = cached
        to_event = self.repo.mapper.to_event
        mine = (list(appended) if appended is not None
                else [to_event(se) for se in result.events])
        events = [Timed(se.version, redact_for(meta, seat, e), se.ts)
                  for se, e in zip(result.events, mine, strict=True)]
        events += [Timed(se.version, redact_for(meta, seat, to_event(se)), se.ts)
                   for se in more]
        version = result.version if duplicate else max(result.version, state.version)
        return Outcome(seat, version, events, view(state, seat) if with_view else None,
                       deadline(meta, state, ts), duplicate)

    async def _follow_up(self, game_id: str, meta: dict[str, Any], state: GameState,
                         ts: float, previous: GameState | None = None, *,
                         snapshot: bool = True) -> list[StoredEvent]:
        """The work after an append that led to ``state`` (a snapshot when one is due, then
        :meth:`_after`): the bots' events, or ``[]``. The append stands whatever happens
        here, so a failure (Redis refusing writes, an outage, a bug) is logged, not raised:
        a call whose command was applied reports it applied. What is left stays due:
        ``before_append`` wrote the game's due time before the append, so the due-games
        poll of any replica drives the bots or the deadline once the store is back."""
        try:
            if snapshot:
                await self.repo.maybe_snapshot(game_id, state)
            return await self._after(game_id, meta, state, ts, previous=previous)
        except Exception as exc:  # noqa: BLE001 - logged; the command stands
            metrics.FOLLOW_UP_FAILURES.inc()
            log_failure(log, f"the work after an append to game {game_id} (snapshot, bots, "
                        "due time)", exc, "the events stand; this replica retries it, and "
                        "what is due stays due for every replica's poll")
            self._spawn(self._resume(game_id))
            return []

    async def _resume(self, game_id: str) -> None:
        """Retry :meth:`_redrive` after a follow-up failure, with a doubling back-off (from
        :data:`RESUME_FIRST` seconds up to the lease) while the store is unavailable or
        refusing writes: the bots go on as soon as the store takes writes again, rather
        than after the lease that ``before_append`` wrote. Any replica's poll may move the
        game first; the moves are decided once (expected versions)."""
        delay = RESUME_FIRST
        while True:
            await asyncio.sleep(delay)
            try:
                await self._redrive(game_id)
                return
            except GameNotFound:  # gone with the store's data (a Redis restarted empty)
                log.warning("game %s is no longer in the store: nothing to resume", game_id)
                return
            except Exception as exc:
                if not store_unavailable(exc) or delay >= self.scheduler.lease:
                    raise  # logged by _report; the game stays due in the store
                delay = min(2 * delay, self.scheduler.lease)

    async def _after(self, game_id: str, meta: dict[str, Any], state: GameState,
                     ts: float, previous: GameState | None = None) -> list[StoredEvent]:
        """After an append that led to ``state``: finish the game, or let bots play
        (returning their events), or write the next due time (a turn deadline; none for an
        untimed seat, skipped when ``previous`` had nothing due either)."""
        if state.phase == GAME_OVER:
            await self._finish(game_id)
            return []
        if meta["seats"][state.turn]["kind"] == "bot":
            return await self.bots.drive(game_id)
        if previous is None or pending(meta, previous) is not None \
                or pending(meta, state) is not None:
            await self.scheduler.after_append(game_id, meta, state, ts)
        return []

    async def _redrive(self, game_id: str) -> None:
        """A retried command, or a follow-up that failed (:meth:`_resume`): finish a game
        that is over, or drive the bots if they are due (their driving was cut short, e.g.
        by a store outage after the original append)."""
        meta = await self.repo.meta(game_id)
        state, _ = await self.repo.load(game_id)
        if state.phase == GAME_OVER:
            await self._finish(game_id)
        elif meta["seats"][state.turn]["kind"] == "bot":
            await self.bots.drive(game_id)

    async def _finish(self, game_id: str) -> bool:
        """Nothing more is due on the game and it leaves the active games; True for the one
        call that took it off the list (two replicas, or a capped game refused again). The
        due time goes last: until it is gone, a replica's poll finishes the game again
        (``Scheduler.before_append`` wrote it before the game-ending append)."""
        self.scheduler.cancel(game_id)
        was_active = await self.store.set_active(game_id, False)
        if was_active:
            metrics.GAMES_ACTIVE.dec()
        await self.store.unschedule(game_id)
        return was_active

    async def _stop(self, game_id: str) -> None:
        """The game reached the cap of events: nothing more is due on it, and it leaves the
        active games (its log stays readable). Every path that appends calls it on
        ``GameLimitReached`` (a client's command, a bot's move, a turn timeout)."""
        if await self._finish(game_id):
            log.warning("game %s reached the cap of %d events; it is no longer active",
                        game_id, self.repo.max_events)

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
    "SERVED_BOTS",
    "Created",
    "GameApp",
    "Outcome",
    "SeatSpec",
    "StateAt",
    "Timed",
    "hash_token",
]
