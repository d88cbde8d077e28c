"""``decide(state, command) -> events``: validate a command once and say what happened.

``decide`` never mutates and raises before producing any event, so a rejected command
changes nothing. Automatic consequences (the turn passing on, a round being scored, the
next deal, the game ending) are returned as events of the same command, so after any
command the game is in a stable phase (:data:`rummy.state.STABLE_PHASES`).

:func:`step` returns the new state together with the events (it has to evolve them anyway
to find the automatic consequences); it is the fast path for simulations.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from rummy.cards import decks_for, format_card, hand_points, physical, shuffled_deck
from rummy.commands import (
    Command,
    CreateGame,
    Draw,
    EndTurn,
    Knock,
    Leave,
    Meld,
    Pass,
    Reclaim,
    check_seat_name,
    check_turn_seconds,
    make_command,
)
from rummy.errors import (
    GameOverError,
    IllegalMoveError,
    NotationError,
    NotYourTurnError,
)
from rummy.events import (
    CardDrawn,
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    RoundEndReason,
    RoundScored,
    RoundStarted,
    StockExhausted,
    TurnEnded,
)
from rummy.evolve import _HANDLERS, evolve
from rummy.evolve import _turn_ended as _evolve_turn_ended
from rummy.fairness import seed_commitment
from rummy.lifecycle import (
    decide_leave,
    decide_reclaim,
    game_end,
    left_seats,
    pending_reclaim,
    timeout_events,
)
from rummy.melds import Table, check_and_canonical
from rummy.rules import RuleSet
from rummy.scoring import final_scores, game_over, score_round
from rummy.state import (
    DEALING,
    DRAW,
    GAME_OVER,
    KNOCK_OR_END,
    MELD_OR_PASS,
    ROUND_OVER,
    ROUND_SCORED,
    STABLE_PHASES,
    TURN_OVER,
    GameState,
)


def round_deck(seed: int | None, round_no: int, players: int) -> tuple[int, ...]:
    """The shuffled deck of round ``round_no`` of a game with ``seed`` (R2.2).

    Derived from the seed by a string-seeded ``random.Random`` (SHA-512 of the string, so
    stable for a given Python); the result is recorded in ``RoundStarted`` and replays never
    re-derive it (STYLE.md §7).
    """
    return shuffled_deck(decks_for(players), random.Random(f"rummy:{seed}:round:{round_no}"))


def first_dealer(seed: int, players: int) -> int:
    """The first dealer, chosen at random from the game's seed (R2.1)."""
    return random.Random(f"rummy:{seed}:dealer").randrange(players)


# Shared instances of the small events a step makes most. Events are immutable
# values, so a shared one equals a new one in every way but identity; building a frozen
# dataclass costs one object.__setattr__ per field. Seats 0..4 (R1.1), draws 1..3 (the
# default max_draws_per_turn), cards 0..52 (795 CardDrawn, <1 ms at import); anything
# else is built as usual.
_PASSED: tuple[Passed, ...] = tuple(Passed(seat) for seat in range(5))
_TURN_ENDED: tuple[TurnEnded, ...] = tuple(TurnEnded(seat) for seat in range(5))
_CARD_DRAWN: tuple[tuple[tuple[CardDrawn, ...], ...], ...] = tuple(
    tuple(tuple(CardDrawn(seat, card, draw) for card in range(53)) for draw in range(4))
    for seat in range(5))


def _passed(seat: int) -> Passed:
    return _PASSED[seat] if 0 <= seat < 5 else Passed(seat)


def _turn_ended(seat: int) -> TurnEnded:
    return _TURN_ENDED[seat] if 0 <= seat < 5 else TurnEnded(seat)


def _card_drawn(seat: int, card: int, draw: int) -> CardDrawn:
    if 0 <= seat < 5 and 0 < draw <= 3 and 0 <= card <= 52:
        return _CARD_DRAWN[seat][draw][card]
    return CardDrawn(seat, card, draw)


def _phase_error(state: GameState, wanted: str) -> IllegalMoveError:
    phase = state.phase
    if phase == DRAW:
        return IllegalMoveError("R3.6", f"cannot {wanted} now: seat {state.turn} must draw "
                                "first (drawing is compulsory when due)")
    if phase == MELD_OR_PASS:
        return IllegalMoveError("R3.1", f"cannot {wanted} now: seat {state.turn} may meld or "
                                "pass")
    if phase == KNOCK_OR_END:
        return IllegalMoveError("R3.5", f"cannot {wanted} now: seat {state.turn}'s turn is over;"
                                " it may knock or end the turn")
    return IllegalMoveError("R3", f"cannot {wanted} in phase {phase}")


def _check_seat(state: GameState | None, seat: object) -> GameState:
    if state is not None and type(seat) is int and seat == state.turn \
            and state.phase != GAME_OVER:
        return state  # the seat to act (a valid seat number) in a running game
    if state is None:
        raise IllegalMoveError("R2", "no game: create the game first")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.players:
        raise NotationError(f"seat must be 0..{state.players - 1}, got {seat!r} (R1.1)",
                            token=seat)
    if state.phase == GAME_OVER:
        raise GameOverError()
    if seat != state.turn:
        raise NotYourTurnError(f"it is seat {state.turn}'s turn, not seat {seat}'s")
    return state


def _decide_draw(state: GameState | None, cmd: Any) -> list[Event]:
    """R3.1-R3.3, R3.6, R8.1: the card due from the stock (and the stock's end)."""
    seat = cmd.seat
    if state is None or type(seat) is not int or seat != state.turn or state.phase != DRAW:
        state = _check_seat(state, seat)  # an error, or a seat of an int subclass
        if state.phase != DRAW:
            if state.phase == MELD_OR_PASS and state.stock_pos >= len(state.deck):
                raise IllegalMoveError("R8.1", "the stock is empty: no more draws this round")
            if state.phase == MELD_OR_PASS:
                raise IllegalMoveError("R3.2", "meld or pass first; the next card is drawn "
                                       "only after a pass")
            raise _phase_error(state, "draw")
    pos = state.stock_pos
    deck = state.deck
    if pos + 1 == len(deck):  # R8.1
        return [_card_drawn(seat, deck[pos], state.draws + 1), StockExhausted(seat)]
    return [_card_drawn(seat, deck[pos], state.draws + 1)]


def _decide_pass(state: GameState | None, cmd: Any) -> list[Event]:
    """R3.2, R3.3, R8.2: a pass instead of a meld."""
    seat = cmd.seat
    if state is None or type(seat) is not int or seat != state.turn \
            or state.phase != MELD_OR_PASS:
        state = _check_seat(state, seat)  # an error, or a seat of an int subclass
        if state.phase != MELD_OR_PASS:
            raise _phase_error(state, "pass")
    return [_passed(seat)]


def _decide_meld(state: GameState | None, cmd: Any) -> list[Event]:
    """R5: one meld action, validated (R5.1-R5.9; the opening variants of R5.5)."""
    seat = cmd.seat
    if state is None or type(seat) is not int or seat != state.turn \
            or state.phase != MELD_OR_PASS:
        state = _check_seat(state, seat)  # an error, or a seat of an int subclass
        if state.phase != MELD_OR_PASS:
            if state.phase == KNOCK_OR_END and state.draws >= state.rules.max_draws_per_turn:
                raise IllegalMoveError("R3.3", "a player who has drawn a third card may not "
                                       "meld this turn")
            if state.phase == KNOCK_OR_END:
                raise IllegalMoveError("R3.4", "at most one meld action per turn")
            raise _phase_error(state, "meld")
    rules = state.rules
    added, new_table = check_and_canonical(state.table, state.hands[seat], cmd.table,
                                           rules)  # I2
    if rules.opening_meld_per_player or rules.opening_meld_min_points:
        check_opening(state, cmd, added)
    return [Melded(seat, added, new_table)]


def _decide_knock(state: GameState | None, cmd: Any) -> list[Event]:
    """R6.1 (and the §11 variant ``knock_timing="start"``)."""
    s = _check_seat(state, cmd.seat)
    if s.rules.knock_timing == "start":
        return [_knock_at_start(s, cmd.seat)]
    if s.phase != KNOCK_OR_END:
        points = hand_points(s.hands[cmd.seat])
        if s.phase in (DRAW, MELD_OR_PASS):
            raise IllegalMoveError("R6.1", "a player may knock only after the turn is over "
                                   "(after a meld, the last draw, or a pass with no draw due)")
        raise IllegalMoveError("R6.1", f"the hand is worth {points} points; knocking needs "
                               f"{s.rules.knock_threshold} or fewer")
    return [Knocked(cmd.seat, hand_points(s.hands[cmd.seat]))]


def _decide_end_turn(state: GameState | None, cmd: Any) -> list[Event]:
    """R6.3: the turn ends without a knock."""
    s = _check_seat(state, cmd.seat)
    if s.phase != KNOCK_OR_END:
        raise _phase_error(s, "end the turn")
    return [_turn_ended(cmd.seat)]


def _decide_create(state: GameState | None, cmd: Any) -> list[Event]:
    """R1.1, R2.1, §11: a new game."""
    if state is not None:
        raise IllegalMoveError("R2", "the game already exists")
    if not isinstance(cmd.rules, RuleSet):
        raise NotationError(f"rules must be a RuleSet, got {type(cmd.rules).__name__}")
    if not isinstance(cmd.names, (tuple, list)) or \
            not all(isinstance(n, str) for n in cmd.names):
        raise NotationError(f"names must be a list of strings, got {cmd.names!r}")
    for i, name in enumerate(cmd.names):
        check_seat_name(i, name)
    cmd.rules.check_players(cmd.players)
    if isinstance(cmd.seed, bool) or not isinstance(cmd.seed, int):
        raise NotationError(f"seed must be an integer, got {cmd.seed!r}", token=cmd.seed)
    names = tuple(cmd.names) or tuple(f"seat{i}" for i in range(cmd.players))
    if len(names) != cmd.players:
        raise NotationError(f"{len(names)} names for {cmd.players} seats")
    check_turn_seconds(cmd.turn_seconds)
    commitment = ""
    if cmd.salt is not None:
        try:
            commitment = seed_commitment(cmd.seed, cmd.salt)
        except ValueError as e:
            raise NotationError(str(e), token=cmd.salt) from None
    return [GameStarted(cmd.players, cmd.rules, first_dealer(cmd.seed, cmd.players),
                        cmd.seed, names, cmd.turn_seconds, cmd.salt, commitment)]


#: the decider of each command class (a subclass takes its first base's, in this order).
#: A decider takes its command as ``Any``: a command's fields are unchecked input (a seat
#: that is not an int, a table of lists), which the decider's own checks turn into rule
#: errors; annotated as the command's class, a build compiled ahead of time (mypyc) would
#: check each field's declared type on reading it and raise TypeError first.
_DECIDERS: dict[type, Callable[[Any, Any], list[Event]]] = {
    Draw: _decide_draw,
    Pass: _decide_pass,
    Meld: _decide_meld,
    Knock: _decide_knock,
    EndTurn: _decide_end_turn,
    Leave: decide_leave,
    Reclaim: decide_reclaim,
    CreateGame: _decide_create,
}


def _primary(state: GameState | None, cmd: Command) -> list[Event]:
    """The events a command causes directly (validation happens here)."""
    decider = _DECIDERS.get(type(cmd))
    if decider is None:
        decider = next((d for c, d in _DECIDERS.items() if isinstance(cmd, c)), None)
        if decider is None:
            raise NotationError(f"unknown command {cmd!r}")
    return decider(state, cmd)


def _knock_at_start(s: GameState, seat: int) -> Knocked:
    """A knock under the §11 variant ``knock_timing="start"``: only at the start of the
    seat's own turn, before its first draw (or, in a final turn of R8.2, before it melds or
    passes), with a hand worth at most ``knock_threshold`` points (R6.1 as the variant
    words it).

    Raises:
        IllegalMoveError: ``R6.1``, saying which condition failed.
    """
    points = hand_points(s.hands[seat])
    if s.draws or s.phase not in (DRAW, MELD_OR_PASS):
        raise IllegalMoveError("R6.1", "under the variant knock_timing=start a player may knock "
                               "only at the start of their own turn, before the first draw")
    if points > s.rules.knock_threshold:
        raise IllegalMoveError("R6.1", f"the hand is worth {points} points; knocking needs "
                               f"{s.rules.knock_threshold} or fewer")
    return Knocked(seat, points)


def check_opening(s: GameState, cmd: Any, added: tuple[int, ...]) -> None:
    """The opening variants of R5.5 as docs/rules.md §11 defines them (no-ops by default),
    for ``cmd`` in ``s``: :func:`check_opening_action` with the action counted as an opening
    when it is the round's first (an empty table) or, under ``opening_meld_per_player``,
    the seat's first of the round.

    Raises:
        IllegalMoveError: ``R5.5``, saying which requirement failed.
    """
    rules = s.rules
    opening = not s.table or (rules.opening_meld_per_player and not s.opened[cmd.seat])
    check_opening_action(rules, s.table, cmd.table, added, opening=opening)


def check_opening_action(rules: RuleSet, table: Table, new_table: Table,
                         added: tuple[int, ...], *, opening: bool) -> None:
    """The opening variants of R5.5 (§11) for one meld action from ``table`` to
    ``new_table`` adding ``added`` (hand cards); nothing to check unless ``opening``.

    * ``opening_meld_per_player``: a seat's first meld action of the round must contain at
      least one complete legal meld made only of cards from that seat's hand, standing as
      a meld of the new table (§11 clarification); the same action may also lay off and
      rearrange. Copies being interchangeable (R1.3), a new meld qualifies when its
      physical cards (a joker as a joker) are all among the cards the action adds. On an
      empty table every meld is from the hand.
    * ``opening_meld_min_points``: the opening action adds at least this many points
      (R1.5), counting every card it adds, jokers at 25.

    Raises:
        IllegalMoveError: ``R5.5``, saying which requirement failed.
    """
    if not opening:
        return
    per_player = rules.opening_meld_per_player and bool(table)
    if per_player:
        pool = Counter(added)
        if not any(not (Counter(map(physical, m)) - pool) for m in new_table):
            raise IllegalMoveError(
                "R5.5", "a seat's first meld action of the round (variant "
                "opening_meld_per_player) must contain at least one complete meld made only "
                "of cards from the hand; no meld of the new table is made only of cards this "
                "action adds")
    if rules.opening_meld_min_points:
        points = hand_points(added)
        if points < rules.opening_meld_min_points:
            which = ("opening meld action" if rules.opening_meld_per_player
                     else "first meld of the round")
            raise IllegalMoveError(
                "R5.5", f"the {which} adds {points} points; it must add at least "
                f"{rules.opening_meld_min_points} (variant opening_meld_min_points)")


def _automatic(s: GameState) -> Event | None:
    """The event that a transient phase calls for, or ``None`` in a stable phase."""
    phase = s.phase
    if phase in STABLE_PHASES:
        return None if s.control is None or phase == GAME_OVER else pending_reclaim(s)
    if phase == TURN_OVER:
        return _turn_ended(s.turn)
    if phase == ROUND_OVER:
        knocker = s.knocker
        result = score_round(s.hands, knocker, s.rules)
        totals = tuple(t + x for t, x in zip(s.totals, result.scores, strict=True))
        return RoundScored(s.round, s.end_reason or RoundEndReason.STOCK, knocker, s.hands,
                           result.points, result.scores, result.winners, totals)
    if phase == ROUND_SCORED:
        if game_over(s.totals, s.rules):  # R9.1
            if s.control is not None:  # R13.4: the seats that left rank below the others
                return game_end(s, left_seats(s))
            end = final_scores(s.totals, s.rounds_won, s.rules)
            return GameEnded(s.totals, s.rounds_won, end.bonuses, end.final, end.winners)
        nxt = s.round + 1
        dealer = (s.dealer + 1) % s.players  # R2.1: the deal passes to the left
        return RoundStarted(nxt, dealer, round_deck(s.seed, nxt, s.players))
    if phase == DEALING:
        return RoundStarted(1, s.dealer, round_deck(s.seed, 1, s.players))
    return None


def settle(state: GameState) -> tuple[GameState, list[Event]]:
    """The automatic events of a transient phase (a deal, the end of a turn, a round's
    scoring, the game's end), applied until a seat is to act or the game is over: what
    :func:`step` appends after a command, for a state taken from the middle of a log (a
    fork, a replay's cut). Returns ``(stable_state, events)``; nothing for a stable state.
    """
    events: list[Event] = []
    auto = _automatic(state)
    while auto is not None:
        events.append(auto)
        state = evolve(state, auto)
        auto = _automatic(state)
    return state, events


def step(state: GameState | None, command: Command) -> tuple[GameState, list[Event]]:
    """Decide a command and evolve its events.

    Returns:
        ``(new_state, events)``; ``new_state`` is in a stable phase.

    Raises:
        NotationError: a malformed command (bad seat number, undeclared joker, …).
        NotYourTurnError: the command's seat is not the seat to act.
        GameOverError: the game has ended.
        IllegalMoveError: the command breaks a rule; ``rule`` names it (e.g. ``"R5.8"``).
        InvalidRuleSetError: ``CreateGame`` with an invalid player count or rule set.
    """
    decider = _DECIDERS.get(type(command))
    events = decider(state, command) if decider is not None else _primary(state, command)
    s: GameState | None = state
    for e in events:
        handler = _HANDLERS.get(type(e))
        s = handler(s, e) if handler is not None else evolve(s, e)
    assert s is not None
    phase = s.phase
    if phase in STABLE_PHASES:  # the usual case: no automatic event
        return s, events
    if phase == TURN_OVER:  # the next usual case: the turn passes on (what _automatic says)
        ended = _turn_ended(s.turn)
        events.append(ended)
        s = _evolve_turn_ended(s, ended)
        if s.control is None and s.phase in STABLE_PHASES:
            return s, events
    auto = _automatic(s)
    while auto is not None:
        events.append(auto)
        s = _HANDLERS[type(auto)](s, auto)  # the engine's own event classes
        auto = _automatic(s)
    return s, events


#: the default move of each phase in which a seat must act (a turn timer's or a failed
#: bot's move): draw when a draw is due (R3.6), pass instead of melding (R3.2), end the
#: turn without knocking (R6.3)
DEFAULT_KIND: dict[str, str] = {DRAW: "draw", MELD_OR_PASS: "pass", KNOCK_OR_END: "end_turn"}


def default_command(state: GameState) -> Command:
    """The default move of the seat to act (see :data:`DEFAULT_KIND`); always legal.

    Raises:
        GameOverError: the game has ended (no seat is to act).
    """
    kind = DEFAULT_KIND.get(state.phase)
    if kind is None:
        raise GameOverError("the game is over: no seat is to act")
    return make_command(kind, state.turn)


def timeout_step(state: GameState, limit: int = 0,
                 strategy: str = "basic") -> tuple[GameState, list[Event]]:
    """The seat to act ran out of time: its default move (:func:`default_command`), then,
    in a game with a timeout takeover of ``limit`` consecutive decisions (0: none, the
    default), ``TimedOut`` and at the limit ``SeatLeft`` and ``SeatTakenOver`` by
    ``strategy`` (R13.2; :func:`rummy.lifecycle.timeout_events`).

    Returns:
        ``(new_state, events)`` as :func:`step`.

    Raises:
        GameOverError: the game has ended.
    """
    new_state, events = step(state, default_command(state))
    for e in timeout_events(state, new_state, limit, strategy):
        events.append(e)
        new_state = evolve(new_state, e)
    return new_state, events


def decide(state: GameState | None, command: Command) -> list[Event]:
    """The events that ``command`` causes in ``state`` (docs/architecture.md core contract).

    Raises the same errors as :func:`step`; on error nothing is produced.
    """
    return step(state, command)[1]


__all__ = ["decide", "step", "settle", "round_deck", "first_dealer", "format_card",
           "default_command", "timeout_step", "DEFAULT_KIND"]
