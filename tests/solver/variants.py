"""The rule sets every bot's whole games are played under in the bot tests: the default
rules and the opening-meld variants (R5.5), one list for every bot's test."""

from __future__ import annotations

import pytest

from rummy.rules import RuleSet

OPENING_VARIANTS = pytest.mark.parametrize("rules", [
    RuleSet(),
    RuleSet(opening_meld_per_player=True),
    RuleSet(opening_meld_per_player=True, opening_meld_min_points=30),
    RuleSet(opening_meld_min_points=25, target_score=60),
], ids=["default", "per-player", "per-player-30", "first-meld-25"])
"""``@OPENING_VARIANTS`` parametrizes a test's ``rules`` argument."""
