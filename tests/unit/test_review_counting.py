"""Points left on the table count each distinct miss once, and best plays read as melds and
as the shortest `rummy play` input (rummy/analysis.py, rummy/meld_commands.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from rummy.analysis import MeldDecision, analyse, distinct_misses
from rummy.cards import parse_cards
from rummy.errors import NotationError
from rummy.meld_commands import apply_meld_command, meld_command
from rummy.melds import check_action, parse_table, table_text
from rummy.rules import RuleSet
from rummy.simulate import play_game


def _d(index: int, rnd: int, hand: str, best: int, best_cards: str, played: int = 0,
       played_cards: str = "") -> MeldDecision:
    return MeldDecision(index, rnd, 0, 1, parse_cards(hand), best, parse_cards(best_cards),
                        played, parse_cards(played_cards))


def test_the_same_miss_passed_twice_counts_once():
    hand = "JS QS KS 2D 3D 4D 9C"
    first = _d(10, 1, hand, 39, "JS QS KS 2D 3D 4D")
    again = _d(12, 1, hand + " 5C", 39, "JS QS KS 2D 3D 4D")
    bigger = _d(20, 1, hand + " 5C 5D", 44, "JS QS KS 2D 3D 4D 5D")
    played = _d(22, 1, hand + " 5C 5D", 44, "JS QS KS 2D 3D 4D 5D", 44, "JS QS KS 2D 3D 4D 5D")
    out = distinct_misses([first, again, bigger, played])
    assert [d.missed for d in out] == [39, 39, 44, 0]
    assert [d.counted for d in out] == [39, 0, 5, 0]


def test_a_new_round_or_a_changed_hand_is_a_new_miss():
    a = _d(10, 1, "JS QS KS 9C", 30, "JS QS KS")
    next_round = _d(50, 2, "JS QS KS 9C", 30, "JS QS KS")
    other_cards = _d(52, 2, "2H 3H 4H 9C", 9, "2H 3H 4H")  # JS QS KS are gone
    assert [d.counted for d in distinct_misses([a, next_round, other_cards])] == [30, 30, 9]


def test_a_real_game_no_longer_adds_the_same_miss_at_every_draw():
    """Seat 0 of this basic-vs-basic game passed on a 17-point play (events 15, 17) it had
    already missed at event 7: before the fix the seat's total counted it three times."""
    events = play_game(("basic", "basic"), 1, RuleSet(target_score=60), record=True).events
    a = analyse(events)
    by_index = {d.index: d for d in a.decisions}
    assert [(by_index[i].missed, by_index[i].counted) for i in (7, 15, 17, 27)] == \
        [(17, 17), (17, 0), (17, 0), (27, 10)]
    assert [s.missed_points for s in a.seats] == [483, 502]
    assert [sum(d.missed for d in a.decisions if d.seat == s) for s in (0, 1)] == [2339, 2173]
    assert by_index[15].best_command == "r 2 = 8S 9S *TS | TH TD TC"


def test_meld_command_types_back_to_the_best_play_in_a_real_game():
    """Every best play of a real game, as typed text, parses back (rummy play's parser) to
    a table with the same melds, which the engine accepts as the same meld action (R5)."""
    events = play_game(("basic", "human"), 3, RuleSet(target_score=60), record=True).events
    seen = 0
    for d in analyse(events).decisions:
        if not d.best_table:
            continue
        text = d.best_command
        typed = apply_meld_command(d.table, text)
        assert Counter(map(lambda m: tuple(sorted(m)), typed)) == \
            Counter(map(lambda m: tuple(sorted(m)), d.best_table)), (text, table_text(d.table))
        assert sorted(check_action(d.table, d.hand, typed)) == sorted(d.best_cards)
        assert len(text) <= 2 + len(table_text(d.best_table))
        seen += 1
    assert seen > 20


THIRTEEN = ("AS 2S 3S | 5S 6S 7S | 9S TS JS | 2H 3H 4H | 6H 7H 8H | QH KH AH | 2D 2C 2H"
            " | 4D 5D 6D | 8D 9D TD | JD QD KD | 3C 4C 5C | 7C 8C 9C | JC QC KC")


def test_the_hint_on_a_thirteen_meld_table_is_short():
    old = parse_table(THIRTEEN)
    new = (*old[:1], (*old[1], parse_cards("8S")[0]), *old[2:9],
           (*old[9], parse_cards("AD")[0]), *old[10:], parse_table("5H 5S 5C")[0])
    text = meld_command(old, new)
    assert text == "x 2 8S; x 10 AD; a 5S 5H 5C"
    assert len("m " + table_text(new)) > 150  # the whole-table form it replaces
    assert Counter(map(lambda m: tuple(sorted(m)), apply_meld_command(old, text))) == \
        Counter(map(lambda m: tuple(sorted(m)), new))


def test_meld_command_text_errors_name_the_form():
    old = parse_table("9H 9S 9C | 2D 3D 4D")
    with pytest.raises(NotationError, match="meld number 1..2"):
        apply_meld_command(old, "x 3 9D")
    with pytest.raises(NotationError, match="named twice"):
        apply_meld_command(old, "x 1 9D; r 1 = 9H 9S 9C 9D")
    with pytest.raises(NotationError, match="r needs meld numbers"):
        apply_meld_command(old, "r = 2D 3D 4D")
    assert table_text(apply_meld_command(old, "r 2 = 2D 3D 4D 5D; a KS KH KC")) == \
        "9H 9S 9C | 2D 3D 4D 5D | KS KH KC"
