"""The A/B comparison per bot: a bot's paired win-rate difference over its line-up slots."""

from __future__ import annotations

import pytest
from rummy_worker.paired import Paired, compare, width


def _vector(seat_a: list[int], seat_b: list[int], rounds: int = 1, turns: int = 5) -> list[int]:
    # rotate=False: slot j is seat j
    return seat_a + seat_a + [rounds, turns] + seat_b + seat_b + [rounds, turns]


def test_bot_difference_is_the_mean_of_its_slots_paired_by_game() -> None:
    bots = ("x", "y", "x", "y")
    games = [_vector([60, 0, 0, 0], [0, 60, 0, 0]),   # x won under A, y under B
             _vector([0, 0, 60, 0], [0, 0, 60, 0]),   # x won under both
             _vector([0, 30, 0, 30], [0, 60, 0, 0])]  # shared by y under A
    p = Paired.empty(4)
    for v in games:
        assert len(v) == 2 * width(4)
        p = p.merge(Paired.of_vector(4, v))
    cmp = compare(p, bots, bots)
    x = cmp["bot_win_rate"]["x"]
    # x per seat-game: A (1/2 + 1/2 + 0)/3 = 1/3, B (0 + 1/2 + 0)/3 = 1/6
    assert (x["a"], x["b"], x["diff"]) == pytest.approx((1 / 3, 1 / 6, 1 / 6))
    # per-game differences 1/2, 0, 0: sd = sqrt(1/12), half-width z*sd/sqrt(3)
    half = 1.959963984540054 * (1 / 12) ** 0.5 / 3 ** 0.5
    assert (x["low"], x["high"]) == pytest.approx((1 / 6 - half, 1 / 6 + half))
    y = cmp["bot_win_rate"]["y"]
    assert y["diff"] == pytest.approx(-1 / 6)
