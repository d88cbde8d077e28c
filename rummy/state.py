"""The game state: a projection of the event stream, rebuilt by :func:`rummy.evolve.evolve`.

``GameState`` is an immutable named tuple (cheap to copy with ``_replace``, compared field
for field, so I4 ``replay(events) == live state`` is a plain ``==``). It holds hidden
information (every hand, the deck order, the seed); only :func:`rummy.views.view` output
may be shown to a player.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from rummy.events import GameEnded, RoundEndReason, RoundScored
from rummy.melds import Table
from rummy.rules import RuleSet

if TYPE_CHECKING:
    from rummy.lifecycle import Control


class Phase(StrEnum):
    """The phase of a game state. A ``StrEnum``: each member equals its name in lower case
    (``Phase.DRAW == "draw"``), so JSON and older code that compared strings still work.
    The proto enum ``rummy.api.v1.Phase`` has one value per member (``PHASE_DRAW``, ...).

    Stable phases (a state returned by ``decide``/``step`` is in one of these):
    ``DRAW`` the seat to act must draw (R3.1–R3.3, R3.6); ``MELD_OR_PASS`` after a draw or
    in a final turn, meld or pass (R3, R8.2); ``KNOCK_OR_END`` the turn is over with a hand
    worth at most the threshold (R6.1, R6.3); ``GAME_OVER`` the game has ended (R9).
    Transient phases (``step`` resolves them with automatic events within one command, so
    they are seen only in states rebuilt at a past version): ``DEALING`` before the first
    deal; ``TURN_OVER`` a turn ended and the next seat is due; ``ROUND_OVER`` a round ended
    (knock, going out, final turns done) and is to be scored (§7, §8); ``ROUND_SCORED`` a
    round was scored and the next round or the game's end is due (R9.1).
    """

    DRAW = "draw"
    MELD_OR_PASS = "meld_or_pass"
    KNOCK_OR_END = "knock_or_end"
    GAME_OVER = "game_over"
    DEALING = "dealing"
    TURN_OVER = "turn_over"
    ROUND_OVER = "round_over"
    ROUND_SCORED = "round_scored"


# the phases by their old names (module constants, kept for every caller)
DRAW = Phase.DRAW
MELD_OR_PASS = Phase.MELD_OR_PASS
KNOCK_OR_END = Phase.KNOCK_OR_END
GAME_OVER = Phase.GAME_OVER
DEALING = Phase.DEALING
TURN_OVER = Phase.TURN_OVER
ROUND_OVER = Phase.ROUND_OVER
ROUND_SCORED = Phase.ROUND_SCORED

__all__ = ["Phase", "RoundEndReason", "GameState", "DRAW", "MELD_OR_PASS", "KNOCK_OR_END",
           "GAME_OVER", "DEALING", "TURN_OVER", "ROUND_OVER", "ROUND_SCORED", "STABLE_PHASES"]

STABLE_PHASES = frozenset({DRAW, MELD_OR_PASS, KNOCK_OR_END, GAME_OVER})


class GameState(NamedTuple):
    """Full-information state of one game.

    Attributes:
        rules: the rule set (§11) recorded in ``GameStarted``.
        players: number of seats (R1.1).
        names: seat labels.
        seed: seed of the shuffles (hidden).
        version: number of events applied (the stream version).
        round: current round, 1-based (0 before the first deal).
        dealer: the current round's dealer (R2.1).
        turn: the seat to act (R2.3).
        phase: one of the phase constants of this module.
        draws: cards drawn in the current turn (R3.1–R3.3).
        hands: each seat's hand, ascending card indices.
        table: the melds on the table, canonical (I2).
        deck: this round's shuffled deck (hidden); the stock is ``deck[stock_pos:]``.
        stock_pos: index of the next card to draw.
        final_turns_left: ``None`` until the stock runs out; then turn ends still to come
            before the round ends (R8.2).
        knocker: the seat that knocked or went out this round, else ``None``.
        end_reason: ``"knock"``, ``"going_out"``, ``"stock"`` once the round is over.
        totals: running totals, by seat (R9.1).
        rounds_won: rounds won, by seat (R9.3).
        opened: whether each seat has melded this round (opening variants of R5.5).
        last_round: the previous ``RoundScored`` event, if any.
        result: the ``GameEnded`` event once the game is over.
        control: who plays each seat (:class:`rummy.lifecycle.Control`, §13); ``None``
            until the first lifecycle event: every seat is played as it was created.
    """

    rules: RuleSet
    players: int
    names: tuple[str, ...]
    seed: int | None
    version: int
    round: int
    dealer: int
    turn: int
    phase: Phase
    draws: int
    hands: tuple[tuple[int, ...], ...]
    table: Table
    deck: tuple[int, ...]
    stock_pos: int
    final_turns_left: int | None
    knocker: int | None
    end_reason: RoundEndReason | None
    totals: tuple[int, ...]
    rounds_won: tuple[int, ...]
    opened: tuple[bool, ...]
    last_round: RoundScored | None
    result: GameEnded | None
    control: Control | None = None

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return len(self.deck) - self.stock_pos

    @property
    def is_over(self) -> bool:
        """True once ``GameEnded`` has been applied."""
        return self.phase == GAME_OVER
