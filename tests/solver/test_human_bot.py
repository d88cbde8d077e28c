"""The ``human`` bot: registered, legal in every variant, deterministic given
its seed, its softmax as specified, and weaker than ``strategic`` while stronger than
``basic`` (the measured table is in docs/strength.md)."""

from __future__ import annotations

import math
import random

import pytest

from rummy.balance import BalanceReport
from rummy.bots import BOTS, make_bot
from rummy.bots.human import MISS, TEMPERATURE, HumanBot, candidates, softmax_pick
from rummy.commands import CreateGame, Meld, Pass
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.simulate import game_seed, play_game, play_range
from rummy.state import GAME_OVER, MELD_OR_PASS
from rummy.views import view
from tests.solver.variants import OPENING_VARIANTS


def test_registered() -> None:
    assert BOTS["human"] is HumanBot
    assert make_bot("human", 1).name == "human"
    assert TEMPERATURE > 0 and 0 < MISS < 1


@OPENING_VARIANTS
def test_full_games_are_legal(rules: RuleSet) -> None:
    # play_game raises IllegalMoveError if a bot sends an illegal command (R5, R5.5)
    assert play_game(["human", "greedy", "basic"], seed=11, rules=rules).winners
    assert play_game(["human", "human"], seed=5, rules=rules).winners


def test_same_seed_same_game_and_seeds_matter() -> None:
    a = play_game(["human", "human", "human"], seed=3)
    assert a == play_game(["human", "human", "human"], seed=3)
    others = {play_game(["human", "human", "human"], seed=s).final for s in range(4, 9)}
    assert len(others) > 1


def test_softmax_pick_follows_its_probabilities() -> None:
    values, t = [10, 4, 0], 6.0
    z = sum(math.exp(v / t) for v in values)
    probs = [math.exp(v / t) / z for v in values]
    rng = random.Random(1)
    n = 20_000
    counts = [0, 0, 0]
    for _ in range(n):
        counts[softmax_pick(values, t, rng.random())] += 1
    for c, p in zip(counts, probs, strict=True):
        assert abs(c / n - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert softmax_pick([5], 1.0, 0.999) == 0
    with pytest.raises(ValueError):
        softmax_pick([], 1.0, 0.5)
    with pytest.raises(ValueError):
        softmax_pick([1, 2], 0.0, 0.5)


def test_candidates_seen_from_the_view_only() -> None:
    """Candidates are the solver's play first, each table once, passing last; the bot's
    choice is one of them (or passing), never anything else."""
    seen = manip = 0
    for g in range(4):
        seed = game_seed(14, g)
        s, _ = step(None, CreateGame(3, seed))
        bots = [make_bot("greedy", 1), make_bot("human", 2), make_bot("basic", 3)]
        while s.phase != GAME_OVER:
            v = view(s, s.turn)
            if s.phase == MELD_OR_PASS and s.turn == 1:
                opts = candidates(v)
                assert opts[-1] == (None, 0, False)
                tables = [t for t, _, _ in opts[:-1]]
                assert len(set(tables)) == len(tables)
                manip += any(m for _, _, m in opts)
                cmd = bots[1].act(v)
                assert isinstance(cmd, (Meld, Pass))
                if isinstance(cmd, Meld):
                    assert cmd.table in tables
                seen += 1
            s, _ = step(s, bots[s.turn].act(v))
    assert seen > 20 and manip > 0


def test_weaker_than_strategic_stronger_than_basic() -> None:
    """100 three-player games (docs/strength.md measures every bot in a bigger run): the
    intervals of this small run already separate human from strategic and from basic."""
    agg = play_range(["strategic", "human", "basic"], 2026, 0, 100)
    rep = BalanceReport.of(agg)
    human, strategic, basic = (rep.bots[b].win for b in ("human", "strategic", "basic"))
    assert human.high < strategic.low
    assert basic.high < human.rate
