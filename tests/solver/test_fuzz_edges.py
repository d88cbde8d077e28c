"""The edge-family differential fuzz (tests/solver/fuzz_edges.py) on a small sample, and
the examples that used to crash ``best_play`` (``RuntimeError: no room to park
a wildcard``). CI runs the full fuzz, 20,000 positions, from ``.ci/run``."""

from __future__ import annotations

import pytest

from rummy.cards import parse_cards
from rummy.melds import check_action, parse_table
from rummy.solver import best_play

pytest.importorskip("highspy")

from tests.solver.fuzz_edges import run_chunk  # noqa: E402


@pytest.mark.parametrize("chunk", range(2))
def test_edge_families_match_the_milp(chunk):
    t = run_chunk(seed=7, chunk=chunk, count=140)
    assert t.failures == []
    assert (t.positions, t.crashes, t.wrong) == (140, 0, 0)


@pytest.mark.parametrize("backend", ["pure", "compiled"])
@pytest.mark.parametrize("table, hand, points", [
    # R5.6: the second AS makes A..K..A (two sequences); the joker must still find a place
    ("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", "* AS", 26),
    # R5.8/R5.9: two real aces free the *AC, which must be used again at once
    ("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC *AC", "AC AC", 2),
    ("AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD | AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
     "AD AC *", 27),
    ("AS *2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", "AS *", 26),
])
def test_wildcards_find_room_beside_13_card_sequences(backend, table, hand, points):
    t, h = parse_table(table), parse_cards(hand)
    play = best_play(t, h, backend=backend)
    assert play is not None and play.points == points
    assert tuple(sorted(check_action(t, h, play.table))) == play.cards


def test_a_once_crashing_game_no_longer_crashes_the_greedy_bot():
    # 3 players, seat 0 dealt AS..9S KD, seat 1 dealt JS QS KS AS * 7H 7D 7C 7S QH, stock
    # starting TS 3D; greedy bots. Seat 1's bot crashed on its first meld.
    from collections import Counter

    from rummy.bots import make_bot
    from rummy.cards import new_deck
    from rummy.commands import CreateGame
    from rummy.decide import step
    from rummy.invariants import check_invariants
    from rummy.state import GAME_OVER
    from rummy.views import view

    state, _ = step(None, CreateGame(3, 1))
    h0 = parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S KD")
    h1 = parse_cards("JS QS KS AS * 7H 7D 7C 7S QH")
    rest = Counter(new_deck(2))
    rest.subtract(h0 + h1 + parse_cards("TS 3D"))
    rest_l = sorted(rest.elements())
    h2, stock = tuple(rest_l[:10]), parse_cards("TS 3D") + tuple(rest_l[10:])
    deck = h0 + h1 + h2 + stock
    state = state._replace(hands=(tuple(sorted(h0)), tuple(sorted(h1)), tuple(sorted(h2))),
                           deck=deck, stock_pos=30, turn=0, dealer=2, table=())
    assert check_invariants(state) == []
    bots = [make_bot("greedy", i) for i in range(3)]
    melds_by_seat1 = 0
    for _ in range(60):
        if state.phase == GAME_OVER or state.round > 1:
            break
        seat = state.turn
        cmd = bots[seat].act(view(state, seat))
        state, events = step(state, cmd)
        melds_by_seat1 += seat == 1 and any(type(e).__name__ == "Melded" for e in events)
    assert melds_by_seat1 >= 1
