"""What a seat may see (I3): ``view(state, seat)`` and ``redact(event, seat, ...)``.

These are the only things an adapter may send to a player: no other hand, no stock order,
no seed. Hands are public only in ``RoundScored`` (hands are shown when a round is scored).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from rummy.cards import format_card, hand_points
from rummy.events import CardDrawn, Event, GameEnded, GameStarted, RoundScored, RoundStarted
from rummy.melds import Table, format_table
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS, GameState


class PlayerView(NamedTuple):
    """One seat's view of a game (I3).

    An immutable named tuple (built once per decision, so it must be cheap; a
    frozen dataclass of 21 fields cost ~20 ``object.__setattr__`` calls). It holds copies
    of what the seat may see, never a reference to the state.

    Attributes:
        seat: the viewing seat, or ``None`` for a public (spectator) view without any hand.
        hand: the viewer's hand (ascending card indices); ``()`` for a spectator.
        hand_sizes: every seat's number of cards, by seat.
        table: the whole table.
        stock_size: cards left in the stock.
        actions: the commands the viewer may send now (``"draw"``, ``"meld"``, ``"pass"``,
            ``"knock"``, ``"end_turn"``); empty when it is not the viewer's turn.
        controllers: by seat, ``""`` when the seat's own player decides for it, else the
            strategy of the server bot that took it over (§13); public to every seat.
        away: by seat, ``""`` or why a bot plays it (``"resign"``, ``"leave"``,
            ``"timeout"``, §13).
        Other fields mirror :class:`rummy.state.GameState`.
    """

    seat: int | None
    players: int
    names: tuple[str, ...]
    rules: RuleSet
    version: int
    round: int
    dealer: int
    turn: int
    phase: str
    draws: int
    hand: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    table: Table
    stock_size: int
    final_turns_left: int | None
    totals: tuple[int, ...]
    rounds_won: tuple[int, ...]
    opened: tuple[bool, ...]
    actions: tuple[str, ...]
    last_round: RoundScored | None
    result: GameEnded | None
    controllers: tuple[str, ...] = ()
    away: tuple[str, ...] = ()

    @property
    def hand_points(self) -> int:
        """Point value of the viewer's hand (R1.5)."""
        return hand_points(self.hand)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, cards in notation."""
        from rummy.events import to_dict as event_dict
        return {
            "seat": self.seat, "players": self.players, "names": list(self.names),
            "rules": self.rules.to_dict(), "version": self.version, "round": self.round,
            "dealer": self.dealer, "turn": self.turn, "phase": self.phase, "draws": self.draws,
            "hand": [format_card(c) for c in self.hand], "hand_sizes": list(self.hand_sizes),
            "table": format_table(self.table), "stock_size": self.stock_size,
            "final_turns_left": self.final_turns_left, "totals": list(self.totals),
            "rounds_won": list(self.rounds_won), "actions": list(self.actions),
            "last_round": event_dict(self.last_round) if self.last_round else None,
            "result": event_dict(self.result) if self.result else None,
            "controllers": list(self.controllers), "away": list(self.away),
        }


def legal_action_kinds(state: GameState) -> tuple[str, ...]:
    """Kinds of command the seat to act may send in ``state`` (empty once the game is over).

    The phase's usual command comes first; under the §11 variant ``knock_timing="start"``
    ``"knock"`` is added at the start of a turn whose hand may knock (R6.1 as the variant
    words it)."""
    phase = state.phase
    if state.rules.knock_timing == "start" and state.draws == 0 and \
            phase in (DRAW, MELD_OR_PASS) and \
            hand_points(state.hands[state.turn]) <= state.rules.knock_threshold:
        # §11 knock_timing="start": a knock at the start of the turn, before the first draw
        return ("draw", "knock") if phase == DRAW else ("meld", "pass", "knock")
    if phase == DRAW:
        return ("draw",)
    if phase == MELD_OR_PASS:
        return ("meld", "pass")
    if phase == KNOCK_OR_END:
        return ("knock", "end_turn")
    return ()


def view(state: GameState, seat: int | None) -> PlayerView:
    """What ``seat`` may see of ``state`` (I3); ``seat=None`` gives the public view.

    Raises:
        ValueError: ``seat`` is not a seat of this game.
    """
    if seat is not None and not 0 <= seat < state.players:
        raise ValueError(f"seat must be 0..{state.players - 1}, got {seat}")
    (rules, players, names, _seed, version, round_, dealer, turn, phase, draws, hands, table,
     deck, stock_pos, final_turns_left, _knocker, _end_reason, totals, rounds_won, opened,
     last_round, result, control) = state  # one unpacking instead of 19 attribute reads
    acting = seat is not None and seat == turn and phase != GAME_OVER
    return _new_view(PlayerView, (
        seat, players, names, rules, version, round_, dealer, turn, phase, draws,
        hands[seat] if seat is not None else (), tuple(map(len, hands)), table,
        len(deck) - stock_pos, final_turns_left, totals, rounds_won, opened,
        legal_action_kinds(state) if acting else (), last_round, result,
        control.controllers if control is not None else ("",) * players,
        control.away if control is not None else ("",) * players))


#: builds a view from its fields in order, without the keyword handling of ``__new__``
_new_view = tuple.__new__


REDACTED_TYPES: frozenset[str] = frozenset({CardDrawn.TYPE, RoundStarted.TYPE, GameStarted.TYPE})
"""The event types :func:`redact` may change (I3); it returns an event of any other type
unchanged, for every seat and for a spectator."""


def redact(event: Event, seat: int | None, *, players: int, hand_size: int) -> Event:
    """The copy of ``event`` that ``seat`` may receive (I3); ``seat=None`` is a spectator.

    ``GameStarted.seed``, ``GameStarted.salt`` and ``RoundStarted.deck`` are removed (the
    seat's own deal is put in ``RoundStarted.hand``); another seat's ``CardDrawn.card`` is
    removed. ``GameStarted.commitment`` stays: it is public (``rummy.fairness``).
    """
    if isinstance(event, CardDrawn):
        return event if event.seat == seat else replace(event, card=None)
    if isinstance(event, RoundStarted):
        hand = None
        if seat is not None and event.deck is not None:
            dealt = hand_size * players
            hand = tuple(sorted(event.deck[(seat - event.dealer - 1) % players:dealt:players]))
        return replace(event, deck=None, hand=hand)
    if isinstance(event, GameStarted):
        return replace(event, seed=None, salt=None)  # the commitment stays public
    return event
