"""``evolve(state, event) -> state``: apply one recorded event. Trusts the event (it was
validated by :func:`rummy.decide.decide` when it was recorded) and never fails on one.

``replay(events)`` is a left fold of ``evolve`` from ``None`` (I4).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from rummy.cards import hand_points
from rummy.events import (
    CardDrawn,
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    ReclaimRequested,
    RoundEndReason,
    RoundScored,
    RoundStarted,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    StockExhausted,
    TimedOut,
    TurnEnded,
)
from rummy.lifecycle import (
    decided,
    reclaim_requested,
    seat_left,
    seat_reclaimed,
    seat_taken_over,
    timed_out,
)
from rummy.state import (
    DEALING,
    DRAW,
    GAME_OVER,
    KNOCK_OR_END,
    MELD_OR_PASS,
    ROUND_OVER,
    ROUND_SCORED,
    TURN_OVER,
    GameState,
    Phase,
)

#: positions of the fields the hot handlers set (they rebuild the state from a list: about
#: 3x faster than ``_replace``, which pops a keyword dict field by field)
(_VERSION, _TURN, _PHASE, _DRAWS, _HANDS, _TABLE, _STOCK_POS, _FINAL, _KNOCKER, _END, _OPENED,
 _CONTROL) = (
    GameState._fields.index(f) for f in (
        "version", "turn", "phase", "draws", "hands", "table", "stock_pos",
        "final_turns_left", "knocker", "end_reason", "opened", "control"))
_new_state = tuple.__new__
_T = TypeVar("_T")


def _turn_over_phase(state: GameState, hand: tuple[int, ...]) -> Phase:
    """R3.5/R6.1: a turn is over; the seat may knock iff its hand is worth <= threshold
    (never after a turn under the §11 variant ``knock_timing="start"``)."""
    if state.rules.knock_timing == "start":
        return TURN_OVER
    return KNOCK_OR_END if hand_points(hand) <= state.rules.knock_threshold else TURN_OVER


def _with_hand(hands: tuple[_T, ...], seat: int, hand: _T) -> tuple[_T, ...]:
    """``hands`` with item ``seat`` replaced by ``hand`` (any per-seat tuple)."""
    new = list(hands)  # two allocations; slicing and joining takes five
    new[seat] = hand
    return tuple(new)


def _game_started(_state: Any, e: GameStarted) -> GameState:
    n = e.players
    return GameState(
        rules=e.rules, players=n, names=e.names, seed=e.seed, version=1, round=0,
        dealer=e.dealer, turn=(e.dealer + 1) % n, phase=DEALING, draws=0,
        hands=((),) * n, table=(), deck=(), stock_pos=0, final_turns_left=None, knocker=None,
        end_reason=None, totals=(0,) * n, rounds_won=(0,) * n, opened=(False,) * n,
        last_round=None, result=None)


def _round_started(s: GameState, e: RoundStarted) -> GameState:
    n = s.players
    dealt = s.rules.hand_size * n
    deck = e.deck or ()
    hands = tuple(tuple(sorted(deck[(seat - e.dealer - 1) % n:dealt:n])) for seat in range(n))
    return s._replace(
        version=s.version + 1, round=e.round, dealer=e.dealer, turn=(e.dealer + 1) % n,
        phase=DRAW, draws=0, hands=hands, table=(), deck=deck, stock_pos=dealt,
        final_turns_left=None, knocker=None, end_reason=None, opened=(False,) * n)


def _card_drawn(s: GameState, e: CardDrawn) -> GameState:
    seat = e.seat
    hand = s.hands[seat]
    card = e.card if e.card is not None else s.deck[s.stock_pos]
    grown = list(hand)
    insort(grown, card)  # keeping the hand sorted
    new_hand = tuple(grown)
    phase = _turn_over_phase(s, new_hand) if e.draw >= s.rules.max_draws_per_turn \
        else MELD_OR_PASS
    x = list(s)
    x[_VERSION] = s.version + 1
    x[_HANDS] = _with_hand(s.hands, seat, new_hand)
    x[_STOCK_POS] = s.stock_pos + 1
    x[_DRAWS] = e.draw
    x[_PHASE] = phase
    if s.control is not None:  # R13.2: a decision ends the seat's timeouts in a row
        x[_CONTROL] = decided(s, seat)
    return _new_state(GameState, x)


def _stock_exhausted(s: GameState, _e: StockExhausted) -> GameState:
    # The drawer's own turn end, then one final turn each (R8.2).
    return s._replace(version=s.version + 1, final_turns_left=s.players + 1)


def _passed(s: GameState, e: Passed) -> GameState:
    if s.stock_pos >= len(s.deck):  # R3.5, R8.1/R8.2: no draw can fall due
        phase = _turn_over_phase(s, s.hands[e.seat])
    else:
        phase = DRAW
    x = list(s)
    x[_VERSION] = s.version + 1
    x[_PHASE] = phase
    if s.control is not None:
        x[_CONTROL] = decided(s, e.seat)
    return _new_state(GameState, x)


def _melded(s: GameState, e: Melded) -> GameState:
    seat = e.seat
    hands = s.hands
    hand = list(hands[seat])
    for c in e.cards:
        hand.remove(c)
    new_hand = tuple(hand)
    x = list(s)
    x[_VERSION] = s.version + 1
    x[_HANDS] = _with_hand(hands, seat, new_hand)
    x[_TABLE] = e.table
    opened = s.opened
    if not opened[seat]:
        x[_OPENED] = _with_hand(opened, seat, True)
    if s.control is not None:
        x[_CONTROL] = decided(s, seat)
    if not new_hand:  # R6.2: going out ends the round at once
        x[_PHASE] = ROUND_OVER
        x[_KNOCKER] = e.seat
        x[_END] = RoundEndReason.GOING_OUT
    else:
        x[_PHASE] = _turn_over_phase(s, new_hand)
    return _new_state(GameState, x)


def _knocked(s: GameState, e: Knocked) -> GameState:
    return s._replace(version=s.version + 1, phase=ROUND_OVER, knocker=e.seat,
                      end_reason=RoundEndReason.KNOCK, control=decided(s, e.seat))


def _turn_ended(s: GameState, e: TurnEnded) -> GameState:
    left = s.final_turns_left
    x = list(s)
    x[_VERSION] = s.version + 1
    if s.control is not None:
        s = s._replace(control=decided(s, e.seat))
        x[_CONTROL] = s.control
    if left is None:
        x[_TURN] = (e.seat + 1) % s.players
        x[_PHASE] = DRAW
        x[_DRAWS] = 0
        return _new_state(GameState, x)
    left -= 1
    if left == 0:  # R8.3: the final turns are over
        return s._replace(version=s.version + 1, final_turns_left=0, phase=ROUND_OVER,
                          end_reason=RoundEndReason.STOCK)
    x[_TURN] = (e.seat + 1) % s.players
    x[_PHASE] = MELD_OR_PASS
    x[_DRAWS] = 0
    x[_FINAL] = left
    return _new_state(GameState, x)


def _round_scored(s: GameState, e: RoundScored) -> GameState:
    won = tuple(w + (1 if i in e.winners else 0) for i, w in enumerate(s.rounds_won))
    return s._replace(version=s.version + 1, totals=e.totals, rounds_won=won,
                      phase=ROUND_SCORED, last_round=e)


def _game_ended(s: GameState, e: GameEnded) -> GameState:
    return s._replace(version=s.version + 1, phase=GAME_OVER, result=e)


_HANDLERS: dict[type, Callable[[Any, Any], GameState]] = {
    GameStarted: _game_started,
    RoundStarted: _round_started,
    CardDrawn: _card_drawn,
    StockExhausted: _stock_exhausted,
    Passed: _passed,
    Melded: _melded,
    Knocked: _knocked,
    TurnEnded: _turn_ended,
    RoundScored: _round_scored,
    GameEnded: _game_ended,
    SeatLeft: seat_left,
    SeatTakenOver: seat_taken_over,
    ReclaimRequested: reclaim_requested,
    SeatReclaimed: seat_reclaimed,
    TimedOut: timed_out,
}


def evolve(state: GameState | None, event: Event) -> GameState:
    """Apply one event and return the new state (the old one is unchanged).

    Args:
        state: the state before the event, ``None`` before ``GameStarted``.
        event: a full-information event as recorded (not a redacted copy).

    Returns:
        The state after the event, its ``version`` one higher.
    """
    handler = _HANDLERS.get(type(event))
    if handler is None:
        handler = _handler(type(event))
    return handler(state, event)


def _handler(cls: type) -> Callable[[Any, Any], GameState]:
    """The handler of an event class, or of its nearest base class with one (an event
    class of a later schema version may subclass today's)."""
    handler = _HANDLERS.get(cls)
    if handler is None:
        handler = next((_HANDLERS[b] for b in cls.__mro__ if b in _HANDLERS), None)
        if handler is None:
            raise TypeError(f"not an event: {cls.__name__}")
    return handler


def replay(events: Iterable[Event], state: GameState | None = None) -> GameState | None:
    """Fold ``evolve`` over ``events`` from ``state`` (default: an empty stream)."""
    for e in events:
        state = _handler(type(e))(state, e)
    return state
