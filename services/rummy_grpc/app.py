"""The application service: everything the gRPC servicer does besides translating messages.

One :class:`GameApp` serves any number of games from one :class:`rummy_store.base.EventStore`:

* **load** a game's state by replaying its events onto a bounded in-process cache
  (game id -> state at its latest known version; a cache hit reads only the newer events);
* **decide** a command with the pure core (``rummy.decide.step``);
* **append** its events with ``expected_version`` (the version the command was decided on)
  and the client's ``request_id``, so two servers can never both append turn N and a retried
  command returns the original outcome;
* **play the server's bot seats** right after every command until a human must act (each bot
  command is its own append, with ``expected_version`` and a ``bot:<version>`` request id);
* **turn timers**: with ``turn_seconds`` set, a seat that has not acted ``turn_seconds`` after
  the last event gets the default move of the phase (draw / pass / end_turn), appended with
  the version the timer expired at, so a late move and the timeout can never both win. Timers
  are re-armed from the stored events on start (:meth:`GameApp.start`).

Everything a player receives goes through ``rummy.views.view`` / ``rummy.views.redact`` (I3).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from rummy_store.base import (
    AppendResult,
    EventStore,
    RequestIdReused,
    StoredEvent,
    VersionConflict,
    request_digest,
)

from rummy.bots import BOTS, make_bot
from rummy.commands import Command, CreateGame, command_kind, make_command
from rummy.decide import default_command, step
from rummy.errors import RummyError
from rummy.events import Event, GameEnded, from_dict, to_dict
from rummy.evolve import evolve
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.state import GAME_OVER, GameState
from rummy.views import PlayerView, redact, view
from rummy_grpc import metrics
from rummy_grpc.errors import (
    BadRequest,
    GameNotFound,
    PermissionDenied,
    Unauthenticated,
    outcome,
)

log = logging.getLogger("rummy_grpc")

COMMAND_KINDS = ("draw", "pass", "meld", "knock", "end_turn")
MAX_REQUEST_ID = 128  #: longest client request id (ids are kept with the game's stream)
MAX_MELDS = 60
"""Most melds a Meld request may carry (106 cards make at most 35 melds)."""
MAX_TABLE_CARDS = 120
"""Most card tokens a Meld request may carry (the deck has 106)."""
MAX_NAME = 40
INLINE_BOTS = frozenset({"random", "basic"})
"""Bot strategies cheap enough (well under a millisecond a move) to run on the event loop;
others run in a worker thread."""
_PROBE_VERSION = 2**40  # an expected_version no stream reaches: a probe that never appends


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """One seat of a new game: ``kind`` is ``"human"`` or ``"bot"``; ``strategy`` names a bot
    of ``rummy.bots.BOTS``; ``name`` labels the seat (default: ``seatN`` / the strategy)."""

    kind: str
    name: str = ""
    strategy: str = ""


@dataclass(frozen=True, slots=True)
class Created:
    """A new game: its id, one secret token per human seat (``{seat: token}``) and version."""

    game_id: str
    tokens: dict[int, str]
    version: int


@dataclass(frozen=True, slots=True)
class Timed:
    """An event as a caller may see it: stream ``version`` (1-based), the (redacted) event
    and its append time ``ts`` (seconds since the epoch)."""

    version: int
    event: Event
    ts: float


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did, as the caller may see it.

    Attributes:
        seat: the caller's seat.
        version: the game's version after the command and the bot moves that followed it
            (for a duplicate: after the original append).
        events: the events appended (the command's, then the bots'), redacted for ``seat``.
        view: the caller's view afterwards.
        turn_deadline: when the seat to act times out (epoch seconds; 0: no time limit).
        duplicate: the ``request_id`` had been applied before; nothing new was appended.
    """

    seat: int
    version: int
    events: list[Timed]
    view: PlayerView
    turn_deadline: float
    duplicate: bool


@dataclass(frozen=True, slots=True)
class StateAt:
    """A game's state at a version for replays: ``view`` is the caller's (the spectator's
    when ``full``); ``hands`` (by seat), ``stock`` (top first) and ``seed`` only when
    ``full``."""

    version: int
    full: bool
    view: PlayerView
    hands: tuple[tuple[int, ...], ...] | None
    stock: tuple[int, ...] | None
    seed: int | None


def hash_token(token: str) -> str:
    """The SHA-256 hex digest under which a seat token is stored (tokens are 192-bit random,
    so a fast hash is enough; the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _bot_seed(game_id: str, seat: int, version: int) -> int:
    digest = hashlib.sha256(f"{game_id}:{seat}:{version}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _command(kind: str, seat: int, table: Any) -> Command:
    """The core's command of ``kind`` (:func:`rummy.commands.make_command`).

    Raises:
        BadRequest: an unknown kind.
    """
    try:
        return make_command(kind, seat, table)
    except ValueError as e:
        raise BadRequest(str(e)) from None


class GameApp:
    """The game service's application layer (no gRPC in here).

    Args:
        store: the event store.
        admin_token: the token that unlocks full information (``RUMMY_ADMIN_TOKEN``); ``None``
            or empty: no admin access.
        cache_size: games whose latest state is kept in memory (LRU).
        bot_delay: seconds to wait between two bot commands (0: none; a demo pacing knob).
        clock: wall clock in epoch seconds (timers compare it to stored ``ts``).
    """

    def __init__(self, store: EventStore, *, admin_token: str | None = None,
                 cache_size: int = 4096, bot_delay: float = 0.0,
                 clock: Any = time.time) -> None:
        self.store = store
        self._admin = admin_token or ""
        self._cache: OrderedDict[str, tuple[GameState, float]] = OrderedDict()
        self._cache_size = cache_size
        self._meta_cache: dict[str, dict[str, Any]] = {}
        self._bot_delay = bot_delay
        self._clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self, *, limit: int = 100_000) -> int:
        """Resume the active games after a (re)start: re-arm their turn timers from the last
        event's ``ts`` (an overdue timer fires at once) and resume bot seats that are due.

        Returns:
            The number of active games found.
        """
        games = await self.store.list_games(limit=limit, active_only=True)
        active = 0
        for game_id in games:
            try:
                meta = await self._meta(game_id)
                state, ts = await self._load(game_id)
            except GameNotFound:
                continue
            if state.phase == GAME_OVER:
                await self.store.set_active(game_id, False)
                continue
            active += 1
            self._schedule(game_id, meta, state, ts)
        metrics.GAMES_ACTIVE.set(active)
        return active

    async def close(self) -> None:
        """Cancel timers and background bot tasks (the store is left open)."""
        self._closing = True
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def _spawn(self, coro: Any) -> None:
        if self._closing:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ loading

    async def _meta(self, game_id: str) -> dict[str, Any]:
        meta = self._meta_cache.get(game_id)
        if meta is None:
            try:
                meta = await self.store.get_meta(game_id)
            except ValueError:  # a game id the store cannot hold: no such game
                meta = None
            if meta is None or "seats" not in meta:
                raise GameNotFound(f"no game {game_id!r}")
            self._meta_cache[game_id] = meta
        return meta

    async def _load(self, game_id: str, *, fresh: bool = True) -> tuple[GameState, float]:
        """The latest state of a game and the ``ts`` of its last event.

        With ``fresh=False`` a cached state is returned without asking the store (commands
        do this: their append carries the cached version as ``expected_version``, so a stale
        cache costs a retry, never a wrong append).

        Raises:
            GameNotFound: the game has no events.
        """
        cached = self._cache.get(game_id)
        if cached is not None and not fresh:
            self._cache.move_to_end(game_id)
            return cached
        after = cached[0].version if cached else 0
        new = await self.store.read(game_id, after_version=after)
        if cached is None and not new:
            raise GameNotFound(f"no game {game_id!r}")
        state: GameState | None = cached[0] if cached else None
        ts = cached[1] if cached else 0.0
        for se in new:
            state = evolve(state, from_dict(se.data))
            ts = se.ts
        assert state is not None
        self._remember(game_id, state, ts)
        return state, ts

    def _remember(self, game_id: str, state: GameState, ts: float) -> None:
        cached = self._cache.get(game_id)
        if cached is not None and cached[0].version > state.version:
            return
        self._cache[game_id] = (state, ts)
        self._cache.move_to_end(game_id)
        while len(self._cache) > self._cache_size:
            old, _ = self._cache.popitem(last=False)
            self._meta_cache.pop(old, None)

    # ------------------------------------------------------------------ access

    def _seat(self, meta: dict[str, Any], token: str, *, required: bool) -> int | None:
        if not token:
            if required:
                raise Unauthenticated("a seat token is required for this call")
            return None
        seat = meta["tokens"].get(hash_token(token))
        if seat is None:
            raise PermissionDenied("the token is not a seat token of this game")
        return int(seat)

    def _is_admin(self, admin_token: str) -> bool:
        if not admin_token:
            return False
        if not self._admin or not hmac.compare_digest(admin_token, self._admin):
            raise PermissionDenied("wrong admin token")
        return True

    @staticmethod
    def _redact(meta: dict[str, Any], seat: int | None, event: Event) -> Event:
        return redact(event, seat, players=meta["players"], hand_size=meta["hand_size"])

    def _deadline(self, meta: dict[str, Any], state: GameState, ts: float) -> float:
        seconds = meta.get("turn_seconds", 0)
        if not seconds or state.phase == GAME_OVER:
            return 0.0
        return ts + seconds

    # ------------------------------------------------------------------ create

    async def create_game(self, seats: Sequence[SeatSpec], variants: dict[str, Any],
                          seed: int | None = None, turn_seconds: int = 0) -> Created:
        """Create and deal a game; bot seats that are due start playing at once.

        Args:
            seats: 2..5 seat specs, in seat order.
            variants: rule variants of RULES.md §11 (``{"target_score": "100"}``).
            seed: the game's seed (random if ``None``).
            turn_seconds: turn time limit per decision in seconds (0: none), 0..86400.

        Returns:
            The game id, ``{seat: token}`` for the human seats, and the version (2: the
            ``GameStarted`` and ``RoundStarted`` events).

        Raises:
            BadRequest: a bad seat list (count, kind, unknown bot strategy, long name).
            InvalidRuleSetError: an unknown variant or a value out of range.
            NotationError: a bad ``turn_seconds`` or seed.
        """
        try:
            if not 2 <= len(seats) <= 5:
                raise BadRequest(f"a game has 2 to 5 seats, got {len(seats)} (R1.1)")
            names = []
            for i, s in enumerate(seats):
                if s.kind == "bot":
                    if s.strategy not in BOTS:
                        raise BadRequest(f"seat {i}: unknown bot strategy {s.strategy!r}; "
                                         f"known: {', '.join(sorted(BOTS))}")
                elif s.kind != "human":
                    raise BadRequest(f"seat {i}: kind must be human or bot, got {s.kind!r}")
                if len(s.name) > MAX_NAME:
                    raise BadRequest(f"seat {i}: name longer than {MAX_NAME} characters")
                names.append(s.name or (f"{s.strategy}-bot" if s.kind == "bot" else f"seat{i}"))
            rules = RuleSet.from_dict(variants)
            if seed is None:
                seed = secrets.randbits(62)
            t0 = time.perf_counter()
            state, events = step(None, CreateGame(len(seats), seed, rules, tuple(names),
                                                  turn_seconds))
            metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
        except (RummyError, BadRequest) as exc:
            metrics.COMMANDS_TOTAL.labels("create_game", outcome(exc)).inc()
            raise
        game_id = uuid.uuid4().hex
        tokens = {i: secrets.token_urlsafe(24) for i, s in enumerate(seats) if s.kind == "human"}
        meta = {
            "seats": [{"kind": s.kind, "name": n, "strategy": s.strategy}
                      for s, n in zip(seats, names, strict=True)],
            "tokens": {hash_token(t): i for i, t in tokens.items()},
            "players": len(seats), "hand_size": rules.hand_size,
            "turn_seconds": turn_seconds, "created": self._clock(),
        }
        await self.store.put_meta(game_id, meta)
        self._meta_cache[game_id] = meta
        result = await self._append(game_id, events, 0, request_id="create",
                                    request_hash="create", response=None)
        metrics.COMMANDS_TOTAL.labels("create_game", "ok").inc()
        metrics.GAMES_ACTIVE.inc()
        ts = result.events[-1].ts if result.events else self._clock()
        self._remember(game_id, state, ts)
        if all(s.kind == "bot" for s in seats):
            self._spawn(self._drive_bots(game_id))
        else:
            await self._drive_bots(game_id)
        return Created(game_id, tokens, result.version)

    # ------------------------------------------------------------------ commands

    async def _append(self, game_id: str, events: Sequence[Event], expected: int, *,
                      request_id: str | None, request_hash: str | None,
                      response: dict[str, Any] | None) -> AppendResult:
        t0 = time.perf_counter()
        result = await self.store.append(game_id, [to_dict(e) for e in events], expected,
                                         request_id=request_id, request_hash=request_hash,
                                         response=response)
        metrics.EVENT_APPEND_SECONDS.observe(time.perf_counter() - t0)
        if not result.duplicate:
            for se in result.events:
                metrics.EVENTS_APPENDED_TOTAL.labels(se.type).inc()
        return result

    async def command(self, game_id: str, token: str, kind: str, table: Any = None, *,
                      expected_version: int | None = None,
                      request_id: str = "") -> Outcome:
        """Run one seat command: authenticate, decide, append, then let bots play.

        Args:
            game_id: the game.
            token: the caller's seat token (the seat acting is the token's seat).
            kind: ``"draw"``, ``"pass"``, ``"meld"``, ``"knock"`` or ``"end_turn"``.
            table: for ``"meld"``, the whole new table as lists of card tokens.
            expected_version: refuse unless the game is at this version.
            request_id: idempotency key; a retry returns the original outcome.

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
                                      request_id)
        except BaseException as exc:
            metrics.COMMANDS_TOTAL.labels(label, outcome(exc)).inc()
            raise
        metrics.COMMANDS_TOTAL.labels(label, "duplicate" if out.duplicate else "ok").inc()
        return out

    async def _command(self, game_id: str, token: str, kind: str, table: Any,
                       expected_version: int | None, client_request_id: str) -> Outcome:
        if expected_version is not None and expected_version < 0:
            raise BadRequest("expected_version must be >= 0")
        if client_request_id and (len(client_request_id) > MAX_REQUEST_ID
                                  or not client_request_id.isprintable()):
            raise BadRequest(f"request_id must be at most {MAX_REQUEST_ID} printable "
                             "characters")
        # client ids live in their own namespace: a client can never take the id of a
        # server-made move (bot:<v>, timeout:<v>, create)
        request_id = f"client:{client_request_id}" if client_request_id else ""
        meta = await self._meta(game_id)
        seat = self._seat(meta, token, required=True)
        assert seat is not None
        parsed = None
        if kind == "meld":
            if table is None or len(table) > MAX_MELDS \
                    or sum(len(m) for m in table) > MAX_TABLE_CARDS:
                raise BadRequest(f"a table has at most {MAX_MELDS} melds and "
                                 f"{MAX_TABLE_CARDS} cards")
            parsed = parse_table(table)
        cmd = _command(kind, seat, parsed)
        body = {"kind": kind, "seat": seat, "table": table, "expected": expected_version}
        rhash = request_digest(body) if request_id else None
        for attempt in range(5):
            # first attempt on the cached state; the store is asked only when the cache may
            # be behind (a conflict, or a client that expects another version)
            state, _ = await self._load(game_id, fresh=attempt > 0)
            if expected_version is not None and expected_version != state.version \
                    and attempt == 0:
                state, _ = await self._load(game_id)
            try:
                if expected_version is not None and expected_version != state.version:
                    raise VersionConflict(game_id, expected_version, state.version)
                t0 = time.perf_counter()
                try:
                    new_state, events = step(state, cmd)
                finally:
                    metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
                result = await self._append(
                    game_id, events, state.version, request_id=request_id or None,
                    request_hash=rhash, response={"seat": seat, "command": kind})
            except (RummyError, VersionConflict) as exc:
                if request_id:  # a retry of a command that was applied: its original outcome
                    original = await self._probe(game_id, request_id, rhash)
                    if original is not None:
                        return await self._outcome(game_id, meta, seat, original, [], True)
                if isinstance(exc, VersionConflict) and attempt < 4 and (
                        expected_version is None or exc.actual == expected_version):
                    continue  # our cache was behind, or someone moved first: decide again
                if attempt == 0 and isinstance(exc, RummyError):
                    # refused on the cached state: make sure the refusal holds on the latest
                    latest, _ = await self._load(game_id)
                    if latest.version != state.version:
                        continue
                raise
            if result.duplicate:
                return await self._outcome(game_id, meta, seat, result, [], True)
            self._remember(game_id, new_state, result.events[-1].ts)
            more = await self._after(game_id, meta, new_state, result.events[-1].ts)
            return await self._outcome(game_id, meta, seat, result, more, False)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _probe(self, game_id: str, request_id: str,
                     rhash: str | None) -> AppendResult | None:
        """The original result of ``request_id`` if it was applied, else ``None``. Appends
        nothing: the store checks the request id before the (impossible) expected version."""
        try:
            result = await self.store.append(game_id, [], _PROBE_VERSION,
                                             request_id=request_id, request_hash=rhash)
        except VersionConflict:
            return None
        except RequestIdReused:
            raise
        return result if result.duplicate else None

    async def _outcome(self, game_id: str, meta: dict[str, Any], seat: int,
                       result: AppendResult, more: list[StoredEvent],
                       duplicate: bool) -> Outcome:
        cached = self._cache.get(game_id)
        state, ts = await self._load(game_id) if duplicate or more or cached is None else cached
        events = [Timed(se.version, self._redact(meta, seat, from_dict(se.data)), se.ts)
                  for se in (*result.events, *more)]
        version = result.version if duplicate else max(result.version, state.version)
        return Outcome(seat, version, events, view(state, seat),
                       self._deadline(meta, state, ts), duplicate)

    async def _after(self, game_id: str, meta: dict[str, Any], state: GameState,
                     ts: float) -> list[StoredEvent]:
        """After an append: finish the game, or let bots play (returning their events), and
        arm the timer of the seat to act."""
        if state.phase == GAME_OVER:
            await self._finish(game_id)
            return []
        if meta["seats"][state.turn]["kind"] == "bot":
            return await self._drive_bots(game_id)
        self._arm(game_id, meta, state, ts)
        return []

    async def _finish(self, game_id: str) -> None:
        handle = self._timers.pop(game_id, None)
        if handle:
            handle.cancel()
        await self.store.set_active(game_id, False)
        metrics.GAMES_ACTIVE.dec()

    def _schedule(self, game_id: str, meta: dict[str, Any], state: GameState,
                  ts: float) -> None:
        """On start: resume bots that are due, or arm the human's timer."""
        if meta["seats"][state.turn]["kind"] == "bot":
            self._spawn(self._drive_bots(game_id))
        else:
            self._arm(game_id, meta, state, ts)

    # ------------------------------------------------------------------ bots

    async def _drive_bots(self, game_id: str) -> list[StoredEvent]:
        """Play bot seats while one is to act; each bot command is one append with
        ``expected_version`` (another server that moved first simply wins).

        Returns:
            The events appended by this call, in order.
        """
        lock = self._locks.setdefault(game_id, asyncio.Lock())
        out: list[StoredEvent] = []
        async with lock:
            meta = await self._meta(game_id)
            first = True
            while not self._closing:
                state, ts = await self._load(game_id, fresh=first)
                first = False
                if state.phase == GAME_OVER:
                    break
                spec = meta["seats"][state.turn]
                if spec["kind"] != "bot":
                    self._arm(game_id, meta, state, ts)
                    break
                seat = state.turn
                bot = make_bot(spec["strategy"], _bot_seed(game_id, seat, state.version))
                new_state, events, kind = await self._bot_move(game_id, spec["strategy"], bot,
                                                               state)
                try:
                    result = await self._append(game_id, events, state.version,
                                                request_id=f"bot:{state.version}",
                                                request_hash="bot", response=None)
                except VersionConflict:
                    first = True  # another server moved: reload from the store
                    continue
                if result.duplicate:  # another server played this very bot move first
                    first = True
                    continue
                metrics.COMMANDS_TOTAL.labels(kind, "ok").inc()
                out.extend(result.events)
                self._remember(game_id, new_state, result.events[-1].ts)
                if new_state.phase == GAME_OVER:
                    await self._finish(game_id)
                    break
                if self._bot_delay:
                    await asyncio.sleep(self._bot_delay)
                else:
                    await asyncio.sleep(0)
        if game_id in self._locks and not lock.locked():
            state_over = self._cache.get(game_id)
            if state_over and state_over[0].phase == GAME_OVER:
                self._locks.pop(game_id, None)
        return out

    async def _bot_move(self, game_id: str, strategy: str, bot: Any,
                        state: GameState) -> tuple[GameState, list[Event], str]:
        """The bot's move in ``state`` as ``(new state, events, command kind)``.

        A bot that raises, or proposes a move the rules refuse, must not stop the game
        (issue 10): the seat plays the phase's default move instead (draw, pass, end_turn,
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
            metrics.BOT_FAILURES_TOTAL.labels(strategy, reason).inc()
            new_state, events = step(state, fallback)
            return new_state, events, kind

    # ------------------------------------------------------------------ timers

    def _arm(self, game_id: str, meta: dict[str, Any], state: GameState, ts: float) -> None:
        """(Re)arm the turn timer of the seat to act at ``ts + turn_seconds``."""
        old = self._timers.pop(game_id, None)
        if old:
            old.cancel()
        deadline = self._deadline(meta, state, ts)
        if not deadline or self._closing:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, deadline - self._clock())
        version = state.version
        self._timers[game_id] = loop.call_later(
            delay, lambda: self._spawn(self._expire(game_id, version)))

    async def _expire(self, game_id: str, version: int) -> None:
        """A turn timer fired for ``version``: apply the phase's default move with
        ``expected_version=version`` and request id ``timeout:<version>`` (exactly once, even
        with several servers; a move that came first makes this a no-op)."""
        self._timers.pop(game_id, None)
        try:
            meta = await self._meta(game_id)
            state, ts = await self._load(game_id)
            if state.version != version or state.phase == GAME_OVER:
                return  # someone moved; the mover re-armed the timer
            if self._clock() < ts + meta.get("turn_seconds", 0) - 0.001:
                self._arm(game_id, meta, state, ts)  # woke early (clock skew)
                return
            cmd = default_command(state)
            kind = command_kind(cmd)
            t0 = time.perf_counter()
            new_state, events = step(state, cmd)
            metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
            try:
                result = await self._append(game_id, events, version,
                                            request_id=f"timeout:{version}",
                                            request_hash="timeout", response=None)
            except VersionConflict:
                metrics.COMMANDS_TOTAL.labels(kind, "timeout_lost").inc()
                return
            if result.duplicate:
                return
            metrics.COMMANDS_TOTAL.labels(kind, "timeout").inc()
            self._remember(game_id, new_state, result.events[-1].ts)
            await self._after(game_id, meta, new_state, result.events[-1].ts)
        except asyncio.CancelledError:
            raise
        except Exception:  # a timer must never crash the server
            log.exception("turn timer of game %s failed", game_id)

    # ------------------------------------------------------------------ reads

    async def get_view(self, game_id: str, token: str) -> tuple[PlayerView, float]:
        """The caller's view (a spectator's without a token) and the turn deadline.

        Raises:
            GameNotFound, PermissionDenied.
        """
        meta = await self._meta(game_id)
        seat = self._seat(meta, token, required=False)
        state, ts = await self._load(game_id)
        return view(state, seat), self._deadline(meta, state, ts)

    async def get_events(self, game_id: str, token: str, admin_token: str = "",
                         after_version: int = 0,
                         to_version: int | None = None) -> tuple[list[Timed], bool]:
        """Events ``after_version < v <= to_version`` and whether they are full information
        (admin, or the game is over); otherwise redacted for the caller's seat / spectator.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (negative versions).
        """
        if after_version < 0 or (to_version is not None and to_version < 0):
            raise BadRequest("versions must be >= 0")
        meta = await self._meta(game_id)
        seat = self._seat(meta, token, required=False)
        admin = self._is_admin(admin_token)
        state, _ = await self._load(game_id)
        full = admin or state.phase == GAME_OVER
        stored = await self.store.read(game_id, after_version, to_version)
        out = []
        for se in stored:
            ev = from_dict(se.data)
            out.append(Timed(se.version, ev if full else self._redact(meta, seat, ev), se.ts))
        return out, full

    async def get_state(self, game_id: str, token: str, admin_token: str = "",
                        version: int = 0) -> StateAt:
        """The state at ``version`` (0: latest): full information for an admin or once the
        game is over, else the caller's view at that version.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (version out of range).
        """
        meta = await self._meta(game_id)
        seat = self._seat(meta, token, required=False)
        admin = self._is_admin(admin_token)
        latest, _ = await self._load(game_id)
        if version < 0 or version > latest.version:
            raise BadRequest(f"version must be 0..{latest.version}, got {version}")
        if version == 0 or version == latest.version:
            state = latest
        else:
            state = None
            for se in await self.store.read(game_id, 0, version):
                state = evolve(state, from_dict(se.data))
            assert state is not None
        full = admin or latest.phase == GAME_OVER
        if full:
            return StateAt(state.version, True, view(state, None), state.hands,
                           state.deck[state.stock_pos:], state.seed)
        return StateAt(state.version, False, view(state, seat), None, None, None)

    async def stream(self, game_id: str, token: str, admin_token: str = "",
                     after_version: int = 0) -> AsyncIterator[Timed]:
        """Events after ``after_version``, catch-up then live, redacted for the caller's seat
        (full information for an admin, or if the game was over when the stream started);
        ends after ``GameEnded``.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (negative version).
        """
        if after_version < 0:
            raise BadRequest("after_version must be >= 0")
        meta = await self._meta(game_id)
        seat = self._seat(meta, token, required=False)
        admin = self._is_admin(admin_token)
        state, _ = await self._load(game_id)
        if after_version > state.version:
            raise BadRequest(f"after_version {after_version} is beyond the stream's version "
                             f"{state.version}")
        full = admin or state.phase == GAME_OVER
        if state.phase == GAME_OVER and after_version >= state.version:
            return
        sub = self.store.subscribe(game_id, after_version)
        try:
            async for se in sub:
                ev = from_dict(se.data)
                yield Timed(se.version, ev if full else self._redact(meta, seat, ev), se.ts)
                if isinstance(ev, GameEnded):
                    return
        finally:
            aclose = getattr(sub, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()


__all__ = [
    "COMMAND_KINDS",
    "Created",
    "GameApp",
    "Outcome",
    "SeatSpec",
    "StateAt",
    "Timed",
    "hash_token",
]
