"""R1: cards, decks, notation and point values."""

from __future__ import annotations

import pytest

from rummy.cards import (
    JOKER,
    POINTS,
    format_card,
    hand_points,
    new_deck,
    parse_card,
    parse_cards,
    parse_table_card,
)
from rummy.errors import NotationError


@pytest.mark.parametrize("text", ["7S", "TD", "AH", "KC", "2H", "QD", "JS", "9C"])
def test_r1_4_card_round_trip(text):
    assert format_card(parse_card(text)) == text


def test_r1_4_joker_notation():
    assert parse_card("*") == JOKER
    assert format_card(JOKER) == "*"
    assert format_card(parse_table_card("*7S")) == "*7S"


@pytest.mark.parametrize("bad", ["7X", "10S", "", "s7", "7s", "**", "*7", "ZZ", "7SS"])
def test_r1_4_malformed_card_names_token(bad):
    with pytest.raises(NotationError) as e:
        parse_card(bad)
    assert repr(bad) in str(e.value)
    assert e.value.token == bad
    assert isinstance(e.value, ValueError)


def test_r1_4_table_joker_must_declare():
    with pytest.raises(NotationError, match="declare"):
        parse_table_card("*")


def test_r1_2_deck_sizes():
    assert len(new_deck(1)) == 53
    assert len(new_deck(2)) == 106
    assert new_deck(2).count(JOKER) == 2
    assert new_deck(2).count(parse_card("7S")) == 2


def test_r1_5_points():
    assert hand_points(parse_cards("AS 2H TD JC QS KH *")) == 1 + 2 + 10 + 10 + 10 + 10 + 25
    assert POINTS[parse_card("9D")] == 9


def test_parse_cards_accepts_string_and_sorts():
    assert parse_cards("KD 7S *") == tuple(sorted([parse_card("KD"), parse_card("7S"), JOKER]))


def test_shuffled_deck_is_the_order_random_shuffle_gives() -> None:
    """shuffled_deck writes random.Random.shuffle's loop out: the same deck for every seed
    (a recorded game's decks depend on it), and a Random subclass uses its own shuffle."""
    import random

    from rummy.cards import new_deck, shuffled_deck

    def reference(decks: int, rng: random.Random) -> tuple[int, ...]:
        deck = list(new_deck(decks))
        rng.shuffle(deck)
        return tuple(deck)

    for seed in range(1500):
        for decks in (1, 2):
            key = f"rummy:{seed}:round:{decks}"
            assert shuffled_deck(decks, random.Random(key)) == \
                reference(decks, random.Random(key))

    class Reversing(random.Random):
        def shuffle(self, x, *args) -> None:  # type: ignore[override]
            x.reverse()

    assert shuffled_deck(1, Reversing(1)) == tuple(reversed(new_deck(1)))
