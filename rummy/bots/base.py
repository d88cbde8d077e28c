"""The ``Bot`` protocol: a policy that sees only its seat's view (I3) and returns a command.

A bot is created per seat and per game with its own seed (``make_bot(name, seed)``) so a
seeded game is reproducible; it must be deterministic given that seed and the views it
receives. Bots never see the full state: the simulator passes ``view(state, seat)``.
"""

from __future__ import annotations

import random
from typing import Protocol

from rummy.commands import Command
from rummy.errors import IllegalMoveError
from rummy.melds import Table, check_action
from rummy.views import PlayerView


class Bot(Protocol):
    """A seat's policy.

    Attributes:
        name: the registry name of the strategy (``"random"``, ``"basic"``, …).
    """

    name: str

    def act(self, view: PlayerView) -> Command:
        """The command to send for ``view`` (the viewer is the seat to act).

        ``view.actions`` lists the kinds of command allowed now. Must return a legal command;
        the simulator treats an illegal one as a bug.
        """
        ...


def legal_for(view: PlayerView, new_table: Table) -> bool:
    """Whether ``new_table`` is a legal meld action for the viewer under the game's rule
    set (``check_action`` with the §11 variants, and the opening variants of R5.5). Bots
    whose plans are built for the default meld rules call it under a rule set that
    ``restricts_melds``."""
    from rummy.decide import check_opening_action
    rules = view.rules
    seat = view.seat if view.seat is not None else view.turn
    try:
        added = check_action(view.table, view.hand, new_table, rules=rules)
        opening = not view.table or (rules.opening_meld_per_player and not view.opened[seat])
        check_opening_action(rules, view.table, new_table, added, opening=opening)
    except IllegalMoveError:
        return False
    return True


class BotBase:
    """Convenience base: stores ``name`` and a seeded ``random.Random`` as ``self.rng``."""

    name = "base"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(f"bot:{self.name}:{seed}")
