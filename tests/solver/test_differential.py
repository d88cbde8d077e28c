"""Differential test: ``best_play`` against an independent MILP model (HiGHS) of R5.

1,500 fixed-seed random positions (legal random two-deck tables of 0–45 cards with
declared jokers, hands of 3–12 cards, some with a hand joker), for both objectives. Every
play must also pass ``check_action``. Skipped when ``highspy`` is not installed (it is a dev
dependency; the core never imports it).
"""

from __future__ import annotations

import random

import pytest

from rummy.cards import JOKER, POINTS, format_cards
from rummy.melds import check_action, table_text
from rummy.solver import best_play
from rummy.solver.positions import random_position

pytest.importorskip("highspy")

from tests.solver.milp_reference import milp_best  # noqa: E402

CHUNKS = 6
PER_CHUNK = 250  # 1,500 positions in all


def positions(chunk: int) -> list[tuple[tuple, tuple]]:
    rng = random.Random(f"differential:{chunk}")
    out = []
    for _ in range(PER_CHUNK):
        size = rng.choice((0, 9, 15, 20, 30, 45))
        table, hand = random_position(rng, size, rng.randint(3, 12), joker_rate=0.3)
        if JOKER not in hand and rng.random() < 0.25:
            hand = tuple(sorted(hand + (JOKER,)))
        out.append((table, hand))
    return out


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_best_play_matches_milp(chunk: int) -> None:
    for i, (table, hand) in enumerate(positions(chunk)):
        where = f"table {table_text(table)!r} hand {' '.join(format_cards(hand))!r}"
        for objective in (("points", "cards") if i % 3 == 0 else ("points",)):
            play = best_play(table, hand, objective=objective)
            mine = 0
            if play is not None:
                added = check_action(table, hand, play.table)
                assert tuple(sorted(added)) == play.cards, where
                assert play.points == sum(POINTS[c] for c in play.cards), where
                assert play.optimal
                mine = play.points if objective == "points" else len(play.cards)
            assert mine == milp_best(table, hand, objective=objective), f"{objective}: {where}"
