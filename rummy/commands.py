"""Commands: what a seat (or the game's creator) asks the engine to do.

``decide(state, command)`` turns a command into events or raises (see :mod:`rummy.decide`).
Cards are the integers of :mod:`rummy.cards`; adapters parse the notation first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy.melds import Table
from rummy.rules import RuleSet


@dataclass(frozen=True, slots=True)
class CreateGame:
    """Create a game of ``players`` seats (R1.1) under ``rules``; ``seed`` drives every
    shuffle and the first dealer (R2.1); ``names`` labels the seats; ``turn_seconds`` is an
    optional turn time limit enforced by a service (0: none)."""

    players: int
    seed: int
    rules: RuleSet = field(default_factory=RuleSet)
    names: tuple[str, ...] = ()
    turn_seconds: int = 0


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw the card that is due from the stock (R3.1–R3.3, R3.6)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Do not meld after this draw (R3.2, R3.3) or in a final turn (R8.2)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Meld:
    """Make one meld action (R5): ``table`` is the whole new table (table cards)."""

    seat: int
    table: Table


@dataclass(frozen=True, slots=True)
class Knock:
    """Knock after the turn is over (R6.1)."""

    seat: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn without knocking when a knock was allowed (R6.3)."""

    seat: int


Command = CreateGame | Draw | Pass | Meld | Knock | EndTurn
