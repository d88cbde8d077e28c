"""The ``random`` bot counts its candidates without building them: the lazy
sequence must equal the reference list item for item, so a seed picks the same move."""

from __future__ import annotations

import random

import pytest

from rummy.bots.random_bot import RandomBot
from rummy.cards import JOKER, TABLE_JOKER_BASE
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.melds import VALID_MELDS
from rummy.rules import RuleSet
from rummy.simulate import game_seed
from rummy.state import GAME_OVER, MELD_OR_PASS
from rummy.views import view

RULES = [RuleSet(), RuleSet(opening_meld_per_player=True),
         RuleSet(opening_meld_min_points=30),
         RuleSet(opening_meld_per_player=True, opening_meld_min_points=20)]


def _same(v) -> int:
    lazy = RandomBot.candidates(v)
    ref = RandomBot.candidate_list(v)
    assert len(lazy) == len(ref)
    assert list(lazy) == ref
    with pytest.raises(IndexError):
        lazy[len(ref)]
    return len(ref)


@pytest.mark.parametrize("rules", RULES, ids=range(len(RULES)))
def test_lazy_candidates_equal_the_reference_in_played_games(rules: RuleSet) -> None:
    seen = 0
    for g in range(6):
        players = 2 + g % 4
        seed = game_seed(151, g)
        bots = [RandomBot(seed * 8 + i) for i in range(players)]
        s, _ = step(None, CreateGame(players, seed, rules))
        while s.phase != GAME_OVER:
            v = view(s, s.turn)
            if s.phase == MELD_OR_PASS:
                seen += _same(v)
            s, _ = step(s, bots[s.turn].act(v))
    assert seen > 1000


def test_lazy_candidates_with_jokers_and_odd_tables() -> None:
    """Hands full of jokers and duplicates; tables with declared jokers; an illegal meld
    on the table (a view the engine never makes) takes the slow path and still agrees."""
    rng = random.Random(7)
    masks = list(VALID_MELDS)
    s, _ = step(None, CreateGame(3, 1))
    while s.phase != MELD_OR_PASS:
        s, _ = step(s, RandomBot(0).act(view(s, s.turn)))
    for _ in range(400):
        table = []
        for _ in range(rng.randrange(0, 9)):
            mask = rng.choice(masks)
            cards = [i for i in range(52) if mask >> i & 1] if rng.random() < 0.9 \
                else rng.sample(range(52), 3)
            if rng.random() < 0.3:
                j = rng.randrange(len(cards))
                cards[j] += TABLE_JOKER_BASE
            table.append(tuple(cards))
        hand = tuple(sorted(rng.choices(range(53), k=rng.randrange(0, 25))
                            + [JOKER] * rng.randrange(0, 3)))
        hands = s.hands[:s.turn] + (hand,) + s.hands[s.turn + 1:]
        v = view(s._replace(table=tuple(table), hands=hands), s.turn)
        _same(v)
