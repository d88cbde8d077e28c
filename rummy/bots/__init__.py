"""Bots: policies behind one :class:`~rummy.bots.base.Bot` protocol, by registry name.

``make_bot(name, seed)`` builds one for a seat; the registry ``BOTS`` maps names to classes.
"""

from __future__ import annotations

from rummy.bots.base import Bot, BotBase
from rummy.bots.basic import BasicBot
from rummy.bots.random_bot import RandomBot

BOTS: dict[str, type[BotBase]] = {
    "random": RandomBot,
    "basic": BasicBot,
}

try:  # solver-based bots register themselves when present
    from rummy.bots.greedy import GreedyBot
    BOTS["greedy"] = GreedyBot
except ImportError:  # pragma: no cover
    pass
try:
    from rummy.bots.strategic import StrategicBot
    BOTS["strategic"] = StrategicBot
except ImportError:  # pragma: no cover
    pass
try:  # human-like strength: misses manipulations, softmax over plays
    from rummy.bots.human import HumanBot
    BOTS["human"] = HumanBot
except ImportError:  # pragma: no cover
    pass
try:  # determinized rollouts over the solver's plays
    from rummy.bots.search import SearchBot
    BOTS["search"] = SearchBot
except ImportError:  # pragma: no cover
    pass


def check_bot(name: object) -> str:
    """Return ``name`` if it is a registered bot strategy (a key of :data:`BOTS`).

    The one "unknown bot" check: the command line, the simulator, the workers and the
    service all call it, so every entry point refuses the same names with the same message.

    Raises:
        ValueError: ``unknown bot 'name'; known bots: basic, greedy, ...`` (sorted).
    """
    if not isinstance(name, str) or name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(sorted(BOTS))}")
    return name


def make_bot(name: str, seed: int = 0) -> Bot:
    """A new bot of strategy ``name`` seeded with ``seed``.

    Raises:
        ValueError: unknown strategy name (:func:`check_bot`).
    """
    return BOTS[check_bot(name)](seed)  # type: ignore[return-value]


__all__ = ["Bot", "BotBase", "BOTS", "check_bot", "make_bot"]
