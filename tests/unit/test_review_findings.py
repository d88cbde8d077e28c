"""Findings of the newcomer/attacker review of the validation work, each kept as a test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rummy.errors import CommandError, InvalidRuleSetError
from rummy.events import dumps, from_dict, to_dict
from rummy.invariants import ReplayError, verify_log
from rummy.rules import RuleSet
from rummy.simulate import game_seed, play_game


def _forged_log():
    """A real game's log whose first event now claims the opening variants it broke."""
    r = play_game(["greedy", "basic", "basic"], game_seed(3, 3), record=True)
    first = to_dict(r.events[0])
    first["rules"].update(opening_meld_per_player=True, opening_meld_min_points=500)
    return [from_dict(first), *r.events[1:]]


def test_replay_checks_the_opening_variants():
    # `rummy replay` verified a log whose melds broke the opening variants
    with pytest.raises(ReplayError, match="R5.5") as e:
        for _ in verify_log(_forged_log()):
            pass
    assert "illegal meld action" in str(e.value)


def test_replay_cli_refuses_the_forged_log(tmp_path):
    path = tmp_path / "forged.jsonl"
    path.write_text("".join(dumps(ev) + "\n" for ev in _forged_log()))
    res = subprocess.run([sys.executable, "-m", "rummy", "replay", str(path)],
                         capture_output=True, text=True, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "R5.5" in out and "Traceback" not in out


def test_deeply_nested_json_is_a_malformed_line_not_a_crash(tmp_path):
    # RecursionError escaped the malformed-line handlers
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "\n")
    res = subprocess.run([sys.executable, "-m", "rummy", "conformance", str(deep),
                          "tests/conformance/cases/melds.jsonl"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "malformed line: JSON nested too deeply" in res.stdout
    assert res.stdout.strip().splitlines()[-1] == "31 passed, 1 failed"
    res = subprocess.run([sys.executable, "-m", "rummy", "replay", str(deep)],
                         capture_output=True, text=True, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode == 1 and "Traceback" not in out
    assert "line 1 of" in out and "nested too deeply" in out


@pytest.mark.parametrize("variants", [
    {"hand_size": "1_0"}, {"hand_size": "\u0661\u0660"}, {"round_bonus_for_all": "1"},
    {"round_bonus_for_all": "yes"}, {"target_score": "1e3"}, {1: 2},
])
def test_rule_strings_are_strict(variants):
    # "1_0" and Arabic-Indic digits were read as 10, "1" as true
    with pytest.raises(InvalidRuleSetError):
        RuleSet.from_dict(variants)


@pytest.mark.parametrize("not_a_mapping", ["x", [], [("hand_size", 5)], 7])
def test_rule_variants_must_be_a_mapping(not_a_mapping):
    with pytest.raises(InvalidRuleSetError, match="must be a mapping"):
        RuleSet.from_dict(not_a_mapping)


def test_rule_strings_that_are_accepted():
    rules = RuleSet.from_dict({"hand_size": " 8 ", "round_bonus_for_all": "TRUE",
                               "knock_threshold": "+7"})
    assert (rules.hand_size, rules.round_bonus_for_all, rules.knock_threshold) == (8, True, 7)


def test_turn_seconds_error_cites_no_card_rule():
    # a bad turn_seconds was reported as R1.4 (card notation)
    from rummy.commands import CreateGame
    from rummy.decide import step
    with pytest.raises(CommandError) as e:
        step(None, CreateGame(2, 1, turn_seconds=-5))
    assert e.value.rule == ""


@pytest.mark.parametrize("line, message", [
    ({"id": "h", "kind": "hand_value", "rule": "R6.1", "hand": ["AS"], "points": "1",
      "may_knock": True}, "field 'points' must be an integer"),
    ({"id": "m", "kind": "meld", "rule": "R4", "cards": ["8S", "8H", "8D"], "valid": 1},
     "field 'valid' must be true or false"),
    ({"id": "s", "kind": "round_score", "rule": "R7", "hands": [["AS"]] * 50, "knocker": None,
      "scores": [0] * 50, "winners": [0]}, "2 to 5 hands"),
    ({"id": "g", "kind": "game_end", "rule": "R9", "totals": [-5, 160], "rounds_won": [1, 1],
      "final": [0, 260], "winners": [1]}, "integers >= 0"),
])
def test_conformance_refuses_malformed_expected_values(line, message):
    # type mismatches and impossible cases ran instead of being malformed
    from rummy.conformance import run_case
    ok, msg = run_case(json.loads(json.dumps(line)))
    assert not ok and "malformed case" in msg and message in msg


def _tampered(change):
    """A real 3-seat game's log (``to_dict`` records) with ``change(records)`` applied."""
    r = play_game(["greedy", "basic", "basic"], game_seed(3, 3), record=True)
    records = [to_dict(e) for e in r.events]
    change(records)
    return [from_dict(d) for d in records]


def _first(records, etype):
    return next(i for i, d in enumerate(records) if d["type"] == etype)


def _swap_draw(records):
    i = _first(records, "CardDrawn")
    records[i]["draw"] = 2


def _wrong_card(records):
    i = _first(records, "CardDrawn")
    deck = records[_first(records, "RoundStarted")]["deck"]
    records[i]["card"] = next(c for c in deck if c != records[i]["card"])


def _second_start(records):
    records.insert(3, dict(records[0]))


def _dealer(records):
    records[0]["dealer"] = 7


def _pass_for_turn_end(records):
    i = _first(records, "TurnEnded")
    records[i] = {"type": "Passed", "v": 1, "seat": records[i]["seat"]}


@pytest.mark.parametrize("change, message", [
    (_swap_draw, r"draw number 2; this is draw 1 of the turn \(R3.1-R3.3\)"),
    (_wrong_card, r"not the top of the stock, in the order RoundStarted dealt \(R3.1, I4\)"),
    (_second_start, r"a second GameStarted: a game has one, its first event \(I4\)"),
    (_dealer, r"first dealer 7 is not a seat of 3 \(R2.1\)"),
    (_pass_for_turn_end, r"expected TurnEnded .*, got Passed\(seat=\d\) \(R3.5\)"),
])
def test_replay_refusals_name_the_rule(change, message):
    # found by an attack: these refusals named the event but no rule
    with pytest.raises(ReplayError, match=message):
        for _ in verify_log(_tampered(change)):
            pass
