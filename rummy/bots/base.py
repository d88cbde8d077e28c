"""The ``Bot`` protocol: a policy that sees only its seat's view (I3) and returns a command.

A bot is created per seat and per game with its own seed (``make_bot(name, seed)``) so a
seeded game is reproducible; it must be deterministic given that seed and the views it
receives. Bots never see the full state: the simulator passes ``view(state, seat)``.
"""

from __future__ import annotations

import random
from typing import Protocol

from rummy.commands import Command
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


class BotBase:
    """Convenience base: stores ``name`` and a seeded ``random.Random`` as ``self.rng``."""

    name = "base"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(f"bot:{self.name}:{seed}")
