"""Game creation: check the seat list, deal the game, remember the request id.

A ``CreateGame`` with a ``request_id`` is idempotent within the request window: the first
attempt records the game id, tokens and seed under the id (``EventStore.put_if_absent``),
and a retry of the same request returns them.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from rummy_store.base import EventStore, RequestIdReused, StoredEvent, request_digest
from rummy_store.creators import CreatorIndex

from rummy.bots import check_bot
from rummy.commands import CreateGame, check_seat_name
from rummy.decide import step
from rummy.errors import NotationError, RummyError
from rummy.rules import RuleSet
from rummy_grpc import metrics
from rummy_grpc.auth import check_admin, hash_token
from rummy_grpc.errors import BadRequest, SeedNotAllowed, outcome
from rummy_grpc.lifecycle import options
from rummy_grpc.model import MAX_NAME, MAX_REQUEST_ID, Created, SeatSpec
from rummy_grpc.progress import GameProgress
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import Scheduler


class GameCreator:
    """Creates games.

    Args:
        store: the event store (request-id records).
        repo: the games' repository.
        scheduler: the due games.
        progress: the work after the first append (a turn deadline).
        drive: awaited in the background with a game id whose seats are all bots.
        spawn: starts a background task (the server's task set).
        bot_strategies: the bot strategies a game may seat.
        admin_token: the server's admin token (``""``: no admin access).
        clock: wall clock in epoch seconds (the game's ``created`` time).
        request_window: seconds a request id is remembered.
    """

    def __init__(self, store: EventStore, repo: GameRepository, *, scheduler: Scheduler,
                 progress: GameProgress,
                 drive: Callable[[str], Coroutine[Any, Any, list[StoredEvent]]],
                 spawn: Callable[[Coroutine[Any, Any, Any]], None],
                 bot_strategies: frozenset[str], admin_token: str,
                 clock: Callable[[], float], request_window: float) -> None:
        self._store = store
        self._repo = repo
        self._sched = scheduler
        self._progress = progress
        self._drive = drive
        self._spawn = spawn
        self.bot_strategies = bot_strategies
        self._admin = admin_token
        self._clock = clock
        self._request_window = request_window

    async def create(self, seats: Sequence[SeatSpec], variants: dict[str, Any],
                          seed: int | None = None, turn_seconds: int = 0, *,
                          admin_token: str = "", request_id: str = "",
                          creator: str = "", lifecycle: dict[str, Any] | None = None
                          ) -> Created:
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
            creator: the calling identity (``rummy_grpc.callers.Identity.key``), kept in the
                game's meta as ``"creator"`` for ``ListGames`` (``""``: not known).
            lifecycle: the seat lifecycle options (§13) as keyword arguments of
                :func:`rummy_grpc.lifecycle.options` without ``offered``
                (``takeover``, ``timeout_takeover``, ``reclaim``); ``None``: the defaults.

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
            check_request_id(request_id)
            try:
                RuleSet().check_players(len(seats))  # R1.1: the core's check
            except RummyError as e:
                raise BadRequest(str(e), rule="R1.1") from None
            names = []
            for i, s in enumerate(seats):
                if s.kind == "bot":
                    try:
                        check_bot(s.strategy, imports=False)  # no import by a client
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
            life = options(**{"takeover": "", "timeout_takeover": 0, "reclaim": False,
                              **(lifecycle or {})}, offered=self.bot_strategies)
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
            chosen = seed  # what the client sent (None: the server draws one)
            if seed is None:
                seed = secrets.randbits(62)
            salt = secrets.token_hex(16)  # the seed commitment's (rummy.fairness)
            if request_id:  # a retry gets the original game id, tokens and seed
                # the digest covers what the client sent, never what this attempt drew
                # (a drawn seed, game id or tokens): a retry of the same request matches
                body = {"seats": [[s.kind, s.name, s.strategy] for s in seats],
                        "variants": {str(k): str(v) for k, v in variants.items()},
                        "seed": chosen, "turn_seconds": turn_seconds}
                if life != {"takeover": "basic", "timeout_takeover": 0, "reclaim": False}:
                    body["lifecycle"] = life  # the defaults digest as before the options
                digest = request_digest(body)
                record = await self._store.put_if_absent(
                    f"create:{request_id}",
                    {"hash": digest, "game_id": game_id, "seed": seed, "salt": salt,
                     "tokens": {str(k): v for k, v in tokens.items()}},
                    self._request_window)
                if record["hash"] != digest:  # names the game the id created
                    raise RequestIdReused(str(record["game_id"]), request_id)
                game_id, seed = record["game_id"], int(record["seed"])
                salt = str(record.get("salt", salt))  # a record of an older release has none
                tokens = {int(k): v for k, v in record["tokens"].items()}
            t0 = time.perf_counter()
            state, events = step(None, CreateGame(len(seats), seed, rules, tuple(names),
                                                  turn_seconds, salt))
            metrics.RULE_VALIDATION_SECONDS.observe(time.perf_counter() - t0)
        except (RummyError, BadRequest, SeedNotAllowed, RequestIdReused) as exc:
            metrics.child(metrics.COMMANDS_TOTAL, "create_game", outcome(exc)).inc()
            raise
        created = self._clock()
        meta = {
            "seats": [{"kind": s.kind, "name": n, "strategy": s.strategy}
                      for s, n in zip(seats, names, strict=True)],
            "tokens": {hash_token(t): i for i, t in tokens.items()},
            "players": len(seats), "hand_size": rules.hand_size,
            "turn_seconds": turn_seconds, "created": created,
            "creator": creator, "lifecycle": life,
        }
        await self._repo.put_meta(game_id, meta)
        await self._sched.before_append(game_id, meta, state)
        epoch = self._repo.epoch()
        result = await self._repo.append(game_id, events, 0, request_id="create",
                                        request_hash="create", response=None)
        metrics.child(metrics.COMMANDS_TOTAL, "create_game",
                                      "duplicate" if result.duplicate else "ok").inc()
        if not result.duplicate:
            metrics.GAMES_ACTIVE.inc()
        if creator and isinstance(self._store, CreatorIndex):
            # after the append (a game the index lists has events); a retry of a create cut
            # short here completes it (duplicate appends come this way too)
            await self._store.add_created(creator, game_id, created)
        ts = result.events[-1].ts if result.events else self._clock()
        self._repo.remember(game_id, state, ts,
                           epoch=None if result.duplicate else epoch)
        if all(s.kind == "bot" for s in seats):
            self._spawn(self._drive(game_id))
        elif not result.duplicate:
            await self._progress.follow_up(game_id, meta, state, ts, snapshot=False)
        return Created(game_id, tokens, result.version)


def check_request_id(request_id: str) -> None:
    """The one check of a client's request id, on every RPC that takes one: ``""`` (none)
    or at most ``MAX_REQUEST_ID`` printable characters without whitespace.

    Raises:
        BadRequest: any other id (nothing is read or appended).
    """
    if request_id and (len(request_id) > MAX_REQUEST_ID or not request_id.isprintable()
                       or any(c.isspace() for c in request_id)):
        raise BadRequest(f"request_id must be at most {MAX_REQUEST_ID} printable "
                         "characters without spaces")


__all__ = ["GameCreator", "check_request_id"]
