"""Manipulation Rummy: the pure rules core (standard library only, no I/O).

Public API (see docs/architecture.md, "Core contract"):

* notation: :func:`parse_card`, :func:`format_card`, :func:`parse_cards`,
  :func:`parse_table`, :func:`format_table`
* rules: :class:`RuleSet` (docs/rules.md §11)
* engine: :func:`decide`, :func:`step`, :func:`evolve`, :func:`replay`, :func:`view`,
  :func:`redact`; commands in :mod:`rummy.commands`, events in :mod:`rummy.events`
* validation: :func:`check_action`, :func:`is_valid_meld`
* scoring: :func:`score_round`, :func:`final_scores`

Before anything else, :func:`rummy.accel.install` puts the compiled copies of the hot modules
in use when a fresh build of them exists (``python -m rummy.accel``; ``RUMMY_ACCEL=0``: pure).
"""

# ruff: noqa: E402 - the imports below come after the compiled modules' finder
from rummy import accel as _accel

_accel.install()

from rummy.cards import (
    JOKER,
    format_card,
    format_cards,
    hand_points,
    parse_card,
    parse_cards,
    parse_table_card,
)
from rummy.decide import decide, step
from rummy.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidRuleSetError,
    NotationError,
    NotYourTurnError,
    RummyError,
)
from rummy.evolve import evolve, replay
from rummy.melds import check_action, format_table, is_valid_meld, parse_meld, parse_table
from rummy.rules import RuleSet
from rummy.scoring import final_scores, score_round
from rummy.state import GameState
from rummy.views import PlayerView, redact, view

__version__ = "0.1.0"

__all__ = [
    "JOKER", "format_card", "format_cards", "hand_points", "parse_card", "parse_cards",
    "parse_table_card", "decide", "step", "evolve", "replay", "view", "redact", "PlayerView",
    "GameState", "RuleSet", "check_action", "is_valid_meld", "parse_meld", "parse_table",
    "format_table", "score_round", "final_scores", "RummyError", "NotationError",
    "IllegalMoveError", "NotYourTurnError", "GameOverError", "InvalidRuleSetError",
]
