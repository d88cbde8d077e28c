"""best_play: the shared conformance cases, hand-made rule cases (R5.1–R5.9) and options.

Every returned play is checked with the engine's validator ``check_action`` (R5), so a
wrong table can never pass unnoticed; values are checked against the case files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rummy.cards import JOKER, POINTS, parse_cards
from rummy.melds import check_action, parse_table, table_text
from rummy.solver import Play, best_play, best_points, format_play

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases" / "best_play.jsonl"


def _cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def assert_legal(table, hand, play: Play) -> None:
    """The play passes the engine's validator and its fields agree with it."""
    added = check_action(table, hand, play.table)
    assert tuple(sorted(added)) == play.cards
    assert play.points == sum(POINTS[c] for c in play.cards)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_conformance_best_play(case: dict) -> None:
    table = parse_table(case["table"])
    hand = parse_cards(case["hand"])
    play = best_play(table, hand)
    assert (play.points if play else 0) == case["best_points"]
    assert best_points(table, hand) == case["best_points"]
    if play is not None:
        assert_legal(table, hand, play)
        assert play.optimal


def solve(table: str, hand: str, **kw) -> tuple[tuple, tuple, Play | None]:
    t = parse_table(table)
    h = parse_cards(hand)
    p = best_play(t, h, **kw)
    if p is not None:
        assert_legal(t, h, p)
    return t, h, p


def test_R5_1_no_play_returns_none() -> None:
    assert solve("5S 6S 7S", "KD 2C")[2] is None
    assert solve("", "")[2] is None


def test_R5_3_longer_sequence_uses_whole_run() -> None:
    _, _, p = solve("", "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS")
    assert p is not None and p.points == 85 and len(p.cards) == 13


def test_R4_3_no_wrap_around_corner() -> None:
    assert solve("QH KH AH", "2H 3H")[2] is None


def test_R4_3_high_ace_sequence() -> None:
    _, _, p = solve("", "QD KD AD")
    assert p is not None and p.points == 21


def test_R5_8_joker_freed_by_real_card_from_hand() -> None:
    # 7S frees *7S, which must be used again at once (R5.9) with KD QD
    _, _, p = solve("5S 6S *7S", "7S KD QD")
    assert p is not None and p.points == 27
    assert "*JD" in format_play(p) or "*" in format_play(p)


def test_R5_8_joker_not_freed_without_real_card() -> None:
    assert solve("5S 6S *7S", "KD QD")[2] is None


def test_R5_8_joker_freed_by_real_card_already_on_table() -> None:
    # the real 7S sits in another meld: the joker may be re-declared (R5.8)
    _, _, p = solve("5S 6S *7S | 7H 7D 7C 7S", "KD QD")
    assert p is not None and p.points == 20


def test_R5_6_hand_joker_takes_any_declaration() -> None:
    _, _, p = solve("", "* 5H 6H")
    assert p is not None and p.points == 36


def test_hand_joker_parked_on_a_sequence() -> None:
    _, _, p = solve("9S TS JS", "*")
    assert p is not None and p.cards == (JOKER,)


def test_hand_joker_beats_real_card_in_full_group() -> None:
    # a 4-group has room for one card: the joker (25) is worth more than the 7S (7)
    _, _, p = solve("7H 7D 7C", "7S *")
    assert p is not None and p.points == 25 and p.cards == (JOKER,)


def test_two_decks_duplicate_cards() -> None:
    _, _, p = solve("4S 5S 6S | 4H 5H 6H | 4D 5D 6D", "4C 5C 6C")
    assert p is not None and p.points == 15


def test_keep_holds_cards_back() -> None:
    t, h, p = solve("5S 6S 7S", "8S 9S 4S", keep=parse_cards("9S"))
    assert p is not None and 33 not in p.cards  # 9S (index 8) stays in hand
    assert p.cards == parse_cards("4S 8S")
    _, _, none = solve("5S 6S 7S", "8S", keep=parse_cards("8S"))
    assert none is None


def test_keep_must_be_in_hand() -> None:
    with pytest.raises(ValueError):
        best_play((), parse_cards("5S"), keep=parse_cards("6S"))


def test_objective_cards_prefers_more_cards() -> None:
    # points: KS KH KD (30) beats AS 2S 3S 4S (10); cards: 4 cards beat 3
    hand = "KS KH KD AS 2S 3S 4S"
    _, _, by_points = solve("", hand)
    _, _, by_cards = solve("", hand, objective="cards")
    assert by_points is not None and by_cards is not None
    assert by_points.points == 40 and len(by_points.cards) == 7
    _, _, p2 = solve("", "KS KH KD AS 2S 3S 4S", keep=parse_cards("4S"))
    assert p2 is not None and p2.points == 36
    _, _, p3 = solve("", "KS KH KD AS 2S 3S 4S 4H", objective="cards",
                     keep=parse_cards("KS"))
    assert p3 is not None and len(p3.cards) == 4 and p3.points == 10


def test_objective_unknown() -> None:
    with pytest.raises(ValueError):
        best_play((), (), objective="speed")


def test_node_limit_flags_non_optimal_but_legal() -> None:
    t = parse_table("AS 2S 3S 4S | 5H 6H 7H | 9D 9C 9H | JC QC KC | 2D 3D 4D")
    h = parse_cards("5S 6S 8H 9S TC 5D 7C 7D KD QD 3C 4H")
    exact = best_play(t, h)
    assert exact is not None and exact.optimal
    tiny = best_play(t, h, node_limit=3)
    if tiny is not None:
        assert_legal(t, h, tiny)
        assert tiny.points <= exact.points
    assert tiny is None or not tiny.optimal or tiny.points == exact.points
    big = best_play(t, h, node_limit=10**7)
    assert big == exact


def test_deterministic() -> None:
    t = parse_table("AS 2S 3S 4S | 5H 6H 7H | 9D 9C 9H | JC QC KC")
    h = parse_cards("5S 6S 8H 9S TC 5D 7C 7D KD QD *")
    assert best_play(t, h) == best_play(t, h)


def test_table_text_of_play() -> None:
    _, _, p = solve("5S 6S 7S", "8S KD")
    assert p is not None and format_play(p) == "5S 6S 7S 8S"
    assert table_text(p.table) == "5S 6S 7S 8S"
