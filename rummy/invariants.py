"""The invariants of docs/rules.md §10 and the verification of a recorded event log.

* :func:`check_invariants` — I1 (card conservation), I2 (legal table) and I3 (views hide
  other hands and the stock order) on one state.
* :func:`verify_log` — replays a log checking, before each event, that the event is what the
  rules allow in that state (the right seat and phase, the top card of the stock, a legal
  meld action, the right scores …) and the invariants after it; I4 holds by construction
  (the state is the fold of the events) and is tested against live games.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from rummy.cards import decks_for, hand_points, new_deck, physical
from rummy.commands import Meld, check_turn_seconds
from rummy.decide import _automatic, check_opening
from rummy.errors import RummyError
from rummy.events import (
    CardDrawn,
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    LeaveReason,
    Melded,
    Passed,
    ReclaimRequested,
    RoundStarted,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    StockExhausted,
    TimedOut,
    TurnEnded,
)
from rummy.evolve import evolve
from rummy.lifecycle import at_turn_start, control_of, game_end, pending_reclaim
from rummy.melds import check_action, is_valid_meld, table_text
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
)
from rummy.views import PlayerView, view


class ReplayError(RummyError):
    """A recorded event log is inconsistent; ``index`` is the 1-based event (or line)
    number, 0 for the log as a whole (the message then names no position)."""

    def __init__(self, index: int, message: str, unit: str = "event", sep: str = ":") -> None:
        super().__init__(f"{unit} {index}{sep} {message}" if index else message, rule="I4")
        self.index = index


def check_invariants(state: GameState) -> list[str]:
    """Problems with I1–I3 in ``state`` (an empty list when all hold)."""
    problems: list[str] = []
    if state.round == 0:
        return problems
    expected = Counter(new_deck(decks_for(state.players)))
    have: Counter[int] = Counter()
    for h in state.hands:
        have.update(h)
    have.update(physical(c) for m in state.table for c in m)
    have.update(state.deck[state.stock_pos:])
    if have != expected:  # I1
        extra = have - expected
        missing = expected - have
        problems.append(f"I1: cards not conserved (extra {sorted(extra)}, missing "
                        f"{sorted(missing)})")
    for m in state.table:  # I2
        if not is_valid_meld(m, state.rules.ace_high):
            problems.append(f"I2: illegal meld on the table: {table_text([m])}")
    problems += i3_problems(state)
    return problems


ViewFn = Callable[[GameState, int | None], PlayerView]


def _hidden_variants(state: GameState, seat: int | None) -> list[GameState]:
    """States equal to ``state`` except for what ``seat`` may not see (``None``: the public
    view, which sees no hand): the cards of the other hands and of the stock, moved
    round by one place and reversed (hand sizes and stock size kept; hands stay sorted),
    and another seed. Variants equal to ``state`` (nothing hidden to move) are left out."""
    others = [s for s in range(state.players) if s != seat]
    stock = list(state.deck[state.stock_pos:])
    pool = [c for s in others for c in state.hands[s]] + stock
    out: list[GameState] = []
    seed = (state.seed or 0) + 1
    for moved in (pool[1:] + pool[:1], pool[::-1]):
        hands = list(state.hands)
        at = 0
        for s in others:
            n = len(state.hands[s])
            hands[s] = tuple(sorted(moved[at:at + n]))
            at += n
        deck = state.deck[:state.stock_pos] + tuple(moved[at:])
        variant = state._replace(hands=tuple(hands), deck=deck, seed=seed)
        if variant != state:
            out.append(variant)
    if not out:  # nothing to move: the seed alone is hidden
        out.append(state._replace(seed=seed))
    return out


def _differing_fields(a: PlayerView, b: PlayerView) -> list[str]:
    return [name for name, x, y in zip(a._fields, a, b, strict=True) if x != y]


def i3_problems(state: GameState, view_fn: ViewFn = view) -> list[str]:
    """Problems with I3 (docs/rules.md §10) in ``state``, checked as non-interference: a
    seat's view must not change when everything hidden from that seat changes (the other
    hands' cards, the stock's cards and order, the seed), and it must show the seat exactly
    its own hand, every hand size and the stock size. Problems for every seat and the
    public view: a list of ``"I3: ..."`` messages, empty when I3 holds.

    Args:
        state: any state of a game (before the first deal there is nothing hidden).
        view_fn: the view under test, ``view_fn(state, seat) -> PlayerView``
            (default :func:`rummy.views.view`); a test passes a leaky one to see the check
            fail.
    """
    problems: list[str] = []
    if state.round == 0:
        return problems
    sizes = tuple(len(h) for h in state.hands)
    for seat in [*range(state.players), None]:
        v = view_fn(state, seat)
        who = "the public view" if seat is None else f"the view of seat {seat}"
        own = () if seat is None else state.hands[seat]
        if v.hand != own:
            problems.append(f"I3: {who} shows hand {v.hand}, not its own {own}")
        if v.hand_sizes != sizes or v.stock_size != state.stock_size:
            problems.append(f"I3: {who} has wrong hand sizes or stock size")
        for variant in _hidden_variants(state, seat):
            fields = _differing_fields(v, view_fn(variant, seat))
            if fields:
                problems.append(f"I3: {who} depends on hidden state (other hands, stock "
                                f"order, seed) through {', '.join(fields)}")
                break
    return problems


#: the rule of each event the engine writes by itself (rummy.decide), named when a log
#: holds another event in its place
_AUTOMATIC_RULE = {"TurnEnded": "R3.5", "RoundScored": "R7", "GameEnded": "R9",
                   "RoundStarted": "R2.1", "StockExhausted": "R8.1"}


def _expect(cond: bool, index: int, message: str) -> None:
    if not cond:
        raise ReplayError(index, message)


def _check_event(state: GameState | None, e: Event, i: int) -> None:
    """Raise ReplayError if event ``e`` (number ``i``) may not follow ``state``."""
    if state is None:
        _expect(isinstance(e, GameStarted), i, f"a log starts with GameStarted, not {e.TYPE}")
        assert isinstance(e, GameStarted)
        try:
            e.rules.check_players(e.players)
        except RummyError as err:
            raise ReplayError(i, str(err)) from None
        _expect(0 <= e.dealer < e.players, i, f"first dealer {e.dealer} is not a seat of "
                f"{e.players} (R2.1)")
        # as CreateGame checks them (rummy.decide): a name per seat (none in a log written
        # before names existed), a turn limit of 0..86400 s (0: none)
        _expect(not e.names or len(e.names) == e.players, i,
                f"{len(e.names)} names for {e.players} seats (one per seat)")
        try:
            check_turn_seconds(e.turn_seconds)
        except RummyError as err:
            raise ReplayError(i, str(err)) from None
        _expect(all(n.isprintable() for n in e.names), i,
                "a seat name has control or format characters (terminal escapes, line "
                "breaks, bidi overrides); names must be printable text")
        return
    _expect(not isinstance(e, GameStarted), i, "a second GameStarted: a game has one, its "
            "first event (I4)")
    phase = state.phase
    if (state.deck and state.stock_pos >= len(state.deck) and state.final_turns_left is None
            and phase not in (ROUND_OVER, ROUND_SCORED, DEALING)):
        _expect(isinstance(e, StockExhausted), i, f"expected StockExhausted after the last "
                f"card was drawn (R8.1), got {e.TYPE}")
    if isinstance(e, StockExhausted):  # follows the draw of the last card (R8.1)
        _expect(state.stock_pos == len(state.deck) and state.final_turns_left is None
                and e.seat == state.turn, i, "StockExhausted while cards remain (R8.1)")
        return
    if phase not in (TURN_OVER, ROUND_OVER, ROUND_SCORED, DEALING):
        due = pending_reclaim(state)
        if due is not None:
            _expect(e == due, i, f"expected {due!r} at the start of the seat's turn (R13.3), "
                    f"got {e!r}")
            return
        if isinstance(e, (SeatLeft, SeatTakenOver, ReclaimRequested, SeatReclaimed, TimedOut,
                          GameEnded)):
            _check_lifecycle(state, e, i)
            return
    if phase in (TURN_OVER, ROUND_OVER, ROUND_SCORED, DEALING):
        auto = _automatic(state)
        assert auto is not None
        if isinstance(auto, RoundStarted):
            _expect(isinstance(e, RoundStarted), i, f"expected RoundStarted, got {e.TYPE}")
            assert isinstance(e, RoundStarted)
            _expect(e.round == auto.round and e.dealer == auto.dealer, i,
                    f"round {e.round} dealt by seat {e.dealer}; expected round {auto.round} "
                    f"dealt by seat {auto.dealer} (R2.1)")
            _expect(e.deck is not None and sorted(e.deck) == sorted(new_deck(
                decks_for(state.players))), i, "the deck is not a full deck (R1.2, I1)")
        else:
            _expect(e == auto, i, f"expected {auto.TYPE} {auto!r}, got {e!r} "
                    f"({_AUTOMATIC_RULE.get(auto.TYPE, 'I4')})")
        return
    seat = getattr(e, "seat", None)
    _expect(seat == state.turn, i, f"{e.TYPE} by seat {seat}, but it is seat {state.turn}'s "
            "turn (R3)")
    if isinstance(e, CardDrawn):
        _expect(phase == DRAW, i, f"a draw is not due in phase {phase} (R3)")
        _expect(state.stock_pos < len(state.deck), i, "a draw from an empty stock (R8.1)")
        _expect(e.card == state.deck[state.stock_pos], i, "the card drawn is not the top of "
                "the stock, in the order RoundStarted dealt (R3.1, I4)")
        _expect(e.draw == state.draws + 1, i, f"draw number {e.draw}; this is draw "
                f"{state.draws + 1} of the turn (R3.1-R3.3)")
    elif isinstance(e, Passed):
        _expect(phase == MELD_OR_PASS, i, f"cannot pass in phase {phase} (R3)")
    elif isinstance(e, Melded):
        _expect(phase == MELD_OR_PASS, i, f"cannot meld in phase {phase} (R3.3, R3.4)")
        try:
            added = check_action(state.table, state.hands[e.seat], e.table, rules=state.rules)
        except RummyError as err:
            raise ReplayError(i, f"illegal meld action: {err}") from None
        _expect(tuple(sorted(added)) == tuple(sorted(e.cards)), i, "the cards from the hand do "
                "not match the new table (R5.4)")
        try:  # the opening variants of R5.5 (§11), as the engine checks them
            check_opening(state, Meld(e.seat, e.table), added)
        except RummyError as err:
            raise ReplayError(i, f"illegal meld action: {err}") from None
    elif isinstance(e, Knocked):
        worth = hand_points(state.hands[e.seat])
        if state.rules.knock_timing == "start":
            _expect(phase in (DRAW, MELD_OR_PASS) and state.draws == 0, i, "a knock only at "
                    "the start of the turn, before the first draw (R6.1, variant "
                    "knock_timing=start)")
            _expect(worth <= state.rules.knock_threshold, i, f"a knock with a hand worth "
                    f"{worth} points, over the threshold (R6.1)")
        else:
            _expect(phase == KNOCK_OR_END, i, "a knock only after the turn is over (R6.1)")
        _expect(e.points == worth, i, f"a knock with {e.points} points; the hand is worth "
                f"{worth} (R6.1, R1.5)")
    elif isinstance(e, TurnEnded):
        _expect(phase == KNOCK_OR_END, i, f"the turn cannot end in phase {phase} (R3.5)")
    else:
        raise ReplayError(i, f"{e.TYPE} cannot follow a player's move here (R3)")


def _check_lifecycle(state: GameState, e: Event, i: int) -> None:
    """Raise ReplayError if the lifecycle event ``e`` (§13), or a ``GameEnded`` in a stable
    phase (R13.5), may not follow ``state``."""
    _expect(state.phase != GAME_OVER, i, f"{e.TYPE} after the game ended (R9)")
    c = control_of(state)
    seat = getattr(e, "seat", 0)
    _expect(0 <= seat < state.players, i, f"seat {seat} is not a seat of the game (R1.1)")
    if isinstance(e, SeatLeft):
        _expect(c.away[seat] != LeaveReason.RESIGN, i, f"seat {seat} resigned before (R13.1)")
    elif isinstance(e, SeatTakenOver):
        _expect(bool(c.away[seat]) and not c.controllers[seat] and bool(e.strategy), i,
                f"a takeover of seat {seat}, which its player did not give up (R13.1)")
    elif isinstance(e, ReclaimRequested):
        _expect(bool(c.controllers[seat]) and not at_turn_start(state, seat), i,
                f"a reclaim request of seat {seat} out of place (R13.3)")
    elif isinstance(e, SeatReclaimed):
        _expect(bool(c.controllers[seat]) and at_turn_start(state, seat), i,
                f"seat {seat} reclaimed but not at the start of its turn (R13.3)")
    elif isinstance(e, TimedOut):
        # the default move's events before it ended the count; it is set again here
        _expect(not c.controllers[seat] and e.count >= 1, i,
                f"timeout {e.count} in a row of seat {seat}, a seat its player does not "
                "play or a count below 1 (R13.2)")
    elif isinstance(e, GameEnded):  # R13.5: every human seat left
        expected = game_end(state, e.left, abandoned=True)
        _expect(e == expected and bool(e.left) and all(c.left[x] for x in e.left), i,
                f"GameEnded {e!r} in the middle of a round; expected {expected!r} (R13.5)")


def verify_log(events: Sequence[Event]) -> Iterator[GameState]:
    """Replay ``events`` checking every event and I1–I3 after each; yields each state.

    Raises:
        ReplayError: the first inconsistent event, with its 1-based index.
    """
    state: GameState | None = None
    for i, e in enumerate(events, 1):
        if isinstance(e, RoundStarted) and e.deck is None:
            raise ReplayError(i, "the log is redacted (RoundStarted without its deck); a "
                              "full-information log is needed")
        if isinstance(e, CardDrawn) and e.card is None:
            raise ReplayError(i, "the log is redacted (CardDrawn without its card)")
        _check_event(state, e, i)
        state = evolve(state, e)
        problems = check_invariants(state)
        if problems:
            raise ReplayError(i, "; ".join(problems))
        yield state


__all__ = ["ReplayError", "check_invariants", "i3_problems", "verify_log"]
