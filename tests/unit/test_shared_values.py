"""Shared instances of small events and commands equal freshly built ones."""

from __future__ import annotations

from rummy.bots.random_bot import _DRAW, _PASS
from rummy.commands import Draw, Pass
from rummy.decide import _card_drawn, _passed, _turn_ended
from rummy.events import CardDrawn, Passed, TurnEnded


def test_shared_events_equal_new_ones_in_and_out_of_the_table() -> None:
    for seat in range(-1, 7):
        assert _passed(seat) == Passed(seat) and type(_passed(seat)) is Passed
        assert _turn_ended(seat) == TurnEnded(seat) and type(_turn_ended(seat)) is TurnEnded
        for draw in range(0, 12):
            for card in range(-1, 54):
                e = _card_drawn(seat, card, draw)
                assert e == CardDrawn(seat, card, draw) and type(e) is CardDrawn
    assert _DRAW == tuple(Draw(s) for s in range(5))
    assert _PASS == tuple(Pass(s) for s in range(5))
