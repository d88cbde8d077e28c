"""docs/rules.md §11: the variants, their ranges, and the opening variants as now defined."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy.cards import parse_cards
from rummy.commands import CreateGame, Draw, Meld
from rummy.decide import decide, step
from rummy.errors import IllegalMoveError, InvalidRuleSetError
from rummy.events import GameStarted, dumps, from_dict, loads, to_dict
from rummy.melds import parse_table
from rummy.rules import RuleSet
from tests.unit.test_engine import new_game, with_hands

# ------------------------------------------------------------------ ranges, however made


@pytest.mark.parametrize("variants", [
    {"max_draws_per_turn": 0}, {"target_score": -1}, {"hand_size": 0},
    {"knock_threshold": -3}, {"round_bonus_for_all": "yes"}, {"max_draws_per_turn": 99},
    {"target_score": 100_001}, {"knock_threshold": 1001}, {"hand_size": 21},
    {"undercut_bonus": 10_001}, {"game_bonus": -1}, {"opening_meld_per_player": 1},
    {"target_score": 150.0}, {"hand_size": True}, {"opening_meld_min_points": 1001},
])
def test_r11_out_of_range_refused_by_the_constructor(variants):
    # these all used to start games when made with RuleSet(...)
    (name, value), = variants.items()
    with pytest.raises(InvalidRuleSetError, match=name) as e:
        RuleSet(**variants)
    assert e.value.rule == "R11"
    with pytest.raises(InvalidRuleSetError):
        dataclasses.replace(RuleSet(), **variants)


def test_r11_message_names_the_range():
    with pytest.raises(InvalidRuleSetError, match=r"max_draws_per_turn=0 is out of range 1\.\.10"):
        RuleSet(max_draws_per_turn=0)


@pytest.mark.parametrize("name, lo, hi", [
    ("target_score", 1, 100_000), ("knock_threshold", 0, 1000), ("hand_size", 1, 20),
    ("max_draws_per_turn", 1, 10), ("undercut_bonus", 0, 10_000),
    ("going_out_bonus", 0, 10_000), ("game_bonus", 0, 10_000), ("round_bonus", 0, 10_000),
])
def test_r11_range_ends_are_accepted(name, lo, hi):
    assert getattr(RuleSet(**{name: lo}), name) == lo
    assert getattr(RuleSet(**{name: hi}), name) == hi
    assert getattr(RuleSet.from_dict({name: str(hi)}), name) == hi


def test_max_draws_one_means_one_draw():
    # max_draws_per_turn=0 used to start a game in which a player still drew once;
    # the smallest value is 1, and that one draw is the last (R3.3): the turn is over
    s, _ = new_game(3, max_draws_per_turn=1)
    seat = s.turn
    s, ev = step(s, Draw(seat))
    assert [type(e).__name__ for e in ev] == ["CardDrawn", "TurnEnded"]
    assert s.turn == (seat + 1) % 3


_VALUES = st.one_of(st.integers(-5, 100_005), st.booleans(), st.text(max_size=3),
                    st.none(), st.floats(allow_nan=False, max_value=1e6, min_value=-1e6))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from([f.name for f in dataclasses.fields(RuleSet)]),
                       _VALUES, max_size=4),
       st.integers(2, 5), st.integers(0, 2**62))
def test_every_accepted_game_has_a_first_event_that_round_trips(variants, players, seed):
    try:
        rules = RuleSet.from_dict(variants)
        state, events = step(None, CreateGame(players, seed, rules))
    except InvalidRuleSetError:
        return
    first = events[0]
    assert isinstance(first, GameStarted)
    assert from_dict(to_dict(first)) == first
    assert loads(dumps(first)) == first
    assert first.rules == rules


# ------------------------------------------------------------------ opening variants


def _opening_state(variants, table_text, hand_text):
    s, _ = new_game(3, **variants)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    hands = [list(h) for h in s.hands]
    hands[seat] = list(parse_cards(hand_text))
    return with_hands(s, hands, table=parse_table(table_text)), seat


def test_per_player_opening_may_lay_off_with_a_hand_meld():
    # this action was refused; §11 makes it legal
    s, seat = _opening_state({"opening_meld_per_player": True}, "7S 7H 7D", "7C 2C 3C 4C KD")
    s2, ev = step(s, Meld(seat, parse_table("7S 7H 7D 7C | 2C 3C 4C")))
    assert s2.opened[seat]
    assert sorted(ev[0].cards) == sorted(parse_cards("7C 2C 3C 4C"))


def test_per_player_opening_may_rearrange_with_a_hand_meld():
    s, seat = _opening_state({"opening_meld_per_player": True}, "5S 6S 7S 8S",
                             "9S TS JS KD")
    s2, _ = step(s, Meld(seat, parse_table("5S 6S 7S 8S | 9S TS JS")))
    assert s2.opened[seat]
    # the same cards, but no new meld is made only of hand cards: 8S 9S TS JS holds the
    # table's 8S
    with pytest.raises(IllegalMoveError) as e:
        decide(s, Meld(seat, parse_table("5S 6S 7S | 8S 9S TS JS")))
    assert e.value.rule == "R5.5"


def test_per_player_opening_needs_one_meld_from_the_hand():
    s, seat = _opening_state({"opening_meld_per_player": True}, "7S 7H 7D", "7C 2C 3C KD")
    with pytest.raises(IllegalMoveError, match="complete meld made only of cards from the hand") \
            as e:
        decide(s, Meld(seat, parse_table("7S 7H 7D 7C")))
    assert e.value.rule == "R5.5"


def test_per_player_opening_a_hand_joker_counts_as_from_the_hand():
    s, seat = _opening_state({"opening_meld_per_player": True}, "7S 7H 7D", "* 2C 3C KD")
    step(s, Meld(seat, parse_table("7S 7H 7D | 2C 3C *4C")))


def test_per_player_opening_meld_using_a_table_card_is_not_from_the_hand():
    # 6S 7S 8S uses the table's 7S: it is not made only of hand cards
    s, seat = _opening_state({"opening_meld_per_player": True}, "7S 7H 7D 7C",
                             "6S 8S KD")
    with pytest.raises(IllegalMoveError) as e:
        decide(s, Meld(seat, parse_table("7H 7D 7C | 6S 7S 8S")))
    assert e.value.rule == "R5.5"


def test_min_points_counts_every_card_the_action_adds():
    # 2C 3C 4C is 9 points, the laid-off 7C brings it to 16 (§11: every card added counts)
    variants = {"opening_meld_per_player": True, "opening_meld_min_points": 16}
    s, seat = _opening_state(variants, "7S 7H 7D", "7C 2C 3C 4C KD")
    step(s, Meld(seat, parse_table("7S 7H 7D 7C | 2C 3C 4C")))
    with pytest.raises(IllegalMoveError, match="adds 9 points; it must add at least 16") as e:
        decide(s, Meld(seat, parse_table("7S 7H 7D | 2C 3C 4C")))
    assert e.value.rule == "R5.5"


def test_min_points_jokers_count_25():
    s, seat = _opening_state({"opening_meld_min_points": 30}, "", "* 2C 3C KD")
    step(s, Meld(seat, parse_table("2C 3C *4C")))  # 2 + 3 + 25 = 30


def test_min_points_applies_to_the_rounds_first_meld_only_by_default():
    s, seat = _opening_state({"opening_meld_min_points": 30}, "7S 7H 7D", "7C 2C")
    step(s, Meld(seat, parse_table("7S 7H 7D 7C")))  # the table is not empty: no minimum


# -- a recorded rule set is read exactly (R11, I4): found by an attack on replayed logs --


def test_r11_unknown_keyword_is_an_invalid_rule_set():
    with pytest.raises(InvalidRuleSetError, match="unknown rule variant 'bogus'"):
        RuleSet(bogus=1)
    with pytest.raises(InvalidRuleSetError, match="15 variants, got 16 values"):
        RuleSet(*range(16))


@pytest.mark.parametrize("changes, message", [
    ({"round_bonus_for_all": "FALSE"},
     "round_bonus_for_all must be true or false, got the string 'FALSE'"),
    ({"target_score": " +150"}, "target_score must be an integer in 1..100000, got the string"),
    ({"knock_threshold": " 5"}, "knock_threshold must be an integer in 0..1000"),
    ({"round_bonus_for_all": 0}, "round_bonus_for_all must be true or false, got 0"),
    ({"target_score": 150.0}, "target_score must be an integer in 1..100000, got 150.0"),
])
def test_r11_a_logged_game_started_takes_json_types_only(changes, message):
    first = to_dict(step(None, CreateGame(2, 1, RuleSet(), ("a", "b")))[1][0])
    first["rules"] = {**first["rules"], **changes}
    with pytest.raises(Exception, match=message) as info:
        from_dict(first)
    assert "GameStarted.rules" in str(info.value)


@pytest.mark.parametrize("rules", [{}, {"target_score": 30}])
def test_r11_a_logged_rule_set_names_every_variant(rules):
    first = to_dict(step(None, CreateGame(2, 1, RuleSet(), ("a", "b")))[1][0])
    first["rules"] = rules
    with pytest.raises(Exception, match="GameStarted.rules: rule variants missing: "):
        from_dict(first)


def test_r11_a_logged_rule_set_round_trips():
    rules = RuleSet(target_score=30, round_bonus_for_all=True, opening_meld_min_points=12)
    assert RuleSet.from_json(rules.to_dict()) == rules
    assert RuleSet.from_json(json.loads(json.dumps(rules.to_dict()))) == rules
