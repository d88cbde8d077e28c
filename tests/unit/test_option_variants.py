"""The four option variants of docs/rules.md §11 (knock_timing, joker_release, joker_moves,
ace_high): rule sets, the meld checks, the knock at the start of a turn, the solver and bots
under them, and old games that predate them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rummy.cards import parse_cards
from rummy.commands import CreateGame, Draw, EndTurn, Knock
from rummy.conformance import run_case
from rummy.decide import step
from rummy.errors import IllegalMoveError, InvalidRuleSetError
from rummy.events import GameStarted, from_dict, to_dict
from rummy.invariants import check_invariants, verify_log
from rummy.melds import (
    check_action,
    check_action_slow,
    is_valid_meld,
    parse_meld,
    parse_table,
    table_text,
)
from rummy.rules import RuleSet, parse_rule_pairs
from rummy.solver import best_play, solve
from rummy.state import DRAW, GAME_OVER, MELD_OR_PASS
from rummy.views import view
from tests.conftest import play_random_game

ALL_FOUR = RuleSet(knock_timing="start", joker_release="hand", joker_moves="locked",
                   ace_high=False)
PROJECT_CASES = Path(__file__).resolve().parents[1] / "conformance" / "project"


def test_defaults_are_the_rules_above_section_11():
    r = RuleSet()
    assert (r.knock_timing, r.joker_release, r.joker_moves, r.ace_high) == \
        ("end", "table", "free", True)
    assert not r.restricts_melds and ALL_FOUR.restricts_melds


@pytest.mark.parametrize("kwargs, needle", [
    ({"knock_timing": "middle"}, "knock_timing must be one of 'end', 'start'"),
    ({"joker_release": 1}, "joker_release must be one of 'table', 'hand'"),
    ({"joker_moves": "LOCKED"}, "joker_moves must be one of 'free', 'locked'"),
    ({"ace_high": "false"}, "ace_high must be true or false"),
    ({"opening_meld_min_points": 1001}, "out of range 0..1000"),
])
def test_option_variants_take_only_the_values_named(kwargs, needle):
    with pytest.raises(InvalidRuleSetError, match=needle):
        RuleSet(**kwargs)


def test_command_line_pairs_may_be_comma_separated():
    pairs = parse_rule_pairs(["knock_timing=start,joker_release=hand", "ace_high=false"])
    assert RuleSet.from_dict(pairs) == RuleSet(knock_timing="start", joker_release="hand",
                                               ace_high=False)
    assert RuleSet.from_dict({"opening_meld_min_points": "1000"}).opening_meld_min_points == 1000


def test_json_rule_sets_are_typed():
    assert RuleSet.from_json({"ace_high": False}, complete=False) == RuleSet(ace_high=False)
    with pytest.raises(InvalidRuleSetError, match="ace_high must be true or false"):
        RuleSet.from_json({"ace_high": "false"}, complete=False)


def test_ace_high_false_makes_the_ace_low_only():
    assert is_valid_meld(parse_meld("QS KS AS"))
    assert not is_valid_meld(parse_meld("QS KS AS"), ace_high=False)
    assert is_valid_meld(parse_meld("AS 2S 3S"), ace_high=False)
    with pytest.raises(IllegalMoveError) as err:
        check_action(parse_table(["JS QS KS"]), parse_cards("AS"),
                     parse_table(["JS QS KS AS"]), rules=RuleSet(ace_high=False))
    assert err.value.rule == "R5.3" and "ace_high=false" in str(err.value)


def _both(table, hand, new, rules):
    """check_action and its reference agree (same rule, or same cards)."""
    out = []
    for fn in (check_action, check_action_slow):
        try:
            out.append(fn(parse_table(table), parse_cards(hand), parse_table(new), rules=rules))
        except IllegalMoveError as e:
            out.append(e.rule)
    assert out[0] == out[1]
    return out[0]


def test_joker_release_hand_needs_the_real_card_from_the_hand():
    table = ["5S 6S *7S", "7H 7D 7C 7S"]
    from_table = ["5S 6S 7S 8S", "7H 7D 7C", "*JD QD KD"]
    assert _both(table, "8S QD KD", from_table, RuleSet()) == parse_cards("8S QD KD")
    assert _both(table, "8S QD KD", from_table, RuleSet(joker_release="hand")) == "R5.8"
    assert _both(["5S 6S *7S"], "7S QD KD", ["5S 6S 7S", "*JD QD KD"],
                 RuleSet(joker_release="hand")) == parse_cards("7S QD KD")


def test_joker_moves_locked_keeps_joker_melds_whole():
    locked = RuleSet(joker_moves="locked")
    # added to, and joined with another joker meld: legal
    assert _both(["5S 6S *7S", "8S *9S TS"], "JS", ["5S 6S *7S 8S *9S TS JS"], locked) \
        == parse_cards("JS")
    # split: R5.7 (legal by default)
    assert _both(["5S 6S *7S 8S"], "9S 4S", ["4S 5S 6S", "*7S 8S 9S"], RuleSet()) \
        == parse_cards("4S 9S")
    assert _both(["5S 6S *7S 8S"], "9S 4S", ["4S 5S 6S", "*7S 8S 9S"], locked) == "R5.7"
    # two copies of one joker meld (two decks): each must stay whole in a meld of its own;
    # one meld holding the first copy does not excuse breaking the second
    twins = ["5S 6S *7S", "5S 6S *7S"]
    assert _both(twins, "4S 8S 9S", ["5S 6S *7S", "4S 5S 6S", "*7S 8S 9S"], locked) == "R5.7"
    assert _both(twins, "4S 8S 9S", ["5S 6S *7S", "4S 5S 6S", "*7S 8S 9S"], RuleSet()) \
        == parse_cards("4S 8S 9S")
    assert _both(twins, "4S 8S 9S", ["5S 6S *7S", "4S 5S 6S *7S 8S 9S"], locked) \
        == parse_cards("4S 8S 9S")
    # a joker freed by its real card: R5.7 under locked
    assert _both(["5S 6S *7S"], "7S QD KD", ["5S 6S 7S", "*JD QD KD"], locked) == "R5.7"
    # melds without a joker still move freely
    assert _both(["5S 6S 7S 8S", "*4H 5H 6H"], "9S TS", ["5S 6S 7S", "8S 9S TS", "*4H 5H 6H"],
                 locked) == parse_cards("9S TS")
    assert _both(["5S 6S 7S 8S", "*4H 5H 6H"], "9S 4H", ["5S 6S 7S", "8S 9S *TS", "4H 5H 6H"],
                 locked) == "R5.7"


def _game(rules: RuleSet, seed: int = 11):
    state, _ = step(None, CreateGame(2, seed, rules, ("a", "b")))
    return state


def test_knock_at_the_start_of_the_turn_only():
    rules = RuleSet(knock_timing="start", knock_threshold=1000)
    s = _game(rules)
    seat = s.turn
    assert s.phase == DRAW and view(s, seat).actions == ("draw", "knock")
    s2, events = step(s, Knock(seat))
    assert events[0].TYPE == "Knocked" and events[0].points > 5
    assert s2.round == 2 or s2.phase == GAME_OVER or s2.round == 1 and s2.phase == DRAW
    # after a draw the knock has passed
    s3, _ = step(s, Draw(seat))
    assert s3.phase == MELD_OR_PASS and "knock" not in view(s3, seat).actions
    with pytest.raises(IllegalMoveError) as err:
        step(s3, Knock(seat))
    assert err.value.rule == "R6.1" and "start of their own turn" in str(err.value)


def test_no_knock_after_the_turn_under_start_timing():
    rules = RuleSet(knock_timing="start", knock_threshold=1000, max_draws_per_turn=1)
    s = _game(rules)
    seat = s.turn
    s2, events = step(s, Draw(seat))  # the only draw: the turn is over
    assert [e.TYPE for e in events] == ["CardDrawn", "TurnEnded"]  # no knock_or_end phase
    assert s2.turn != seat
    with pytest.raises(IllegalMoveError):
        step(s2, EndTurn(s2.turn))


def test_knock_over_the_threshold_is_refused_at_start():
    s = _game(RuleSet(knock_timing="start", knock_threshold=0))
    assert "knock" not in view(s, s.turn).actions
    with pytest.raises(IllegalMoveError) as err:
        step(s, Knock(s.turn))
    assert err.value.rule == "R6.1" and "knocking needs 0 or fewer" in str(err.value)


@pytest.mark.parametrize("bots", [("random", "basic", "greedy"), ("strategic", "human"),
                                  ("greedy", "basic", "random", "strategic")])
def test_whole_games_under_every_variant_replay_and_keep_the_invariants(bots):
    rules = RuleSet(knock_timing="start", joker_release="hand", joker_moves="locked",
                    ace_high=False, target_score=60)
    final, log, states = play_random_game(5, len(bots), bots, rules)
    assert final.phase == GAME_OVER
    assert list(verify_log(log))[-1] == final
    for s in states:
        assert check_invariants(s) == []
    assert any(e.TYPE == "Knocked" for e in log) or any(e.TYPE == "Melded" for e in log)


def test_solver_joker_release_hand_is_exact():
    table = parse_table(["5S 6S *7S", "7H 7D 7C 7S"])
    hand = parse_cards("8S QD KD")
    assert best_play(table, hand).points == 28
    sol = solve(table, hand, rules=RuleSet(joker_release="hand"))
    assert sol.optimal and sol.play is not None and sol.play.points == 8
    check_action(table, hand, sol.play.table, rules=RuleSet(joker_release="hand"))


def test_solver_plays_stay_legal_under_checked_variants():
    table = parse_table(["JS QS KS", "5H 6H *7H"])
    hand = parse_cards("AS 7H 8H")
    # the unrestricted best (16: JS QS KS AS and 5H 6H 7H 8H *9H) breaks both variants
    assert best_play(table, hand).points == 16
    low = solve(table, hand, rules=RuleSet(ace_high=False))  # modelled exactly
    assert low.optimal and low.play.points == 15 and 0 not in low.play.cards
    locked = solve(table, hand, rules=RuleSet(joker_moves="locked"))  # modelled exactly
    # AS ends the spade run, 8H extends the heart run round its joker (R5.7 locked: 7H may
    # not free *7H)
    assert locked.optimal and locked.play.points == 9
    assert table_text(locked.play.table) == "JS QS KS AS | 5H 6H *7H 8H"
    for rules, sol in ((RuleSet(ace_high=False), low), (RuleSet(joker_moves="locked"), locked)):
        check_action(table, hand, sol.play.table, rules=rules)
    both = solve(table, hand, rules=ALL_FOUR)  # no high ace, joker locked: 8H alone
    assert both.optimal and both.play.points == 8
    check_action(table, hand, both.play.table, rules=ALL_FOUR)


def test_solver_joker_moves_locked_extends_joins_and_keeps_joker_melds():
    locked = RuleSet(joker_moves="locked")
    cases = [
        # 7S cannot free *7S, so JD QD have no third card: no play
        (["5S 6S *7S"], "7S JD QD", None),
        # two joker melds joined by the card between them (R5.7: "may be joined")
        (["5S 6S *7S", "8S *9S TS"], "JS", "5S 6S *7S 8S *9S TS JS"),
        # a joker meld extended at both ends
        (["5S 6S *7S 8S"], "9S 4S", "4S 5S 6S *7S 8S 9S"),
        # 7S goes to the group; the joker meld only grows
        (["5S 6S *7S", "7H 7D 7C"], "7S QD KD 4S", "4S 5S 6S *7S | 7S 7H 7D 7C"),
        # a run without a joker joins the joker meld through the hand's 3S 4S ... QS
        (["5S 6S *7S", "8S 9S TS JS"], "4S 3S QS", "3S 4S 5S 6S *7S 8S 9S TS JS QS"),
        # the second copy of a joker meld (two decks) grows on its own
        (["5S 6S *7S", "5S 6S *7S"], "4S 8S 9S", "4S 5S 6S *7S 8S 9S | 5S 6S *7S"),
    ]
    for melds, cards, expected in cases:
        table, hand = parse_table(melds), parse_cards(cards)
        for backend in ("pure", "auto"):
            sol = solve(table, hand, rules=locked, backend=backend)
            assert sol.optimal, (melds, cards)
            if expected is None:
                assert sol.play is None
                continue
            assert table_text(sol.play.table) == expected, (melds, cards)
            check_action(table, hand, sol.play.table, rules=locked)


def test_a_game_started_before_the_option_variants_reads_with_their_defaults():
    old = {"type": "GameStarted", "v": 1, "players": 2, "dealer": 0, "seed": 3,
           "names": ["a", "b"], "turn_seconds": 0,
           "rules": {k: v for k, v in RuleSet().to_dict().items()
                     if k not in ("knock_timing", "joker_release", "joker_moves", "ace_high")}}
    event = from_dict(old)
    assert isinstance(event, GameStarted) and event.rules == RuleSet()
    assert to_dict(event)["v"] == 3  # written at the current version (v3: the seed commitment)
    assert (event.salt, event.commitment) == (None, "")  # an old game has no commitment
    # a current record must name every variant
    with pytest.raises(Exception, match="missing"):
        from_dict({**old, "v": 2})


def test_project_variant_cases_pass():
    lines = (PROJECT_CASES / "variants.jsonl").read_text().splitlines()
    for line in lines:
        case = json.loads(line)
        ok, message = run_case(case)
        assert ok, f"{case['id']}: {message}"
    assert len(lines) == 23


def test_a_case_with_an_unknown_variant_is_malformed():
    ok, message = run_case({"id": "x", "kind": "meld", "rule": "R4.3",
                            "rules": {"aces": "low"}, "cards": ["AS", "2S", "3S"],
                            "valid": True})
    assert not ok and "malformed case" in message and "unknown rule variant 'aces'" in message
    ok, message = run_case({"id": "x", "kind": "meld", "rule": "R4.3",
                            "rules": {"ace_high": "no"}, "cards": ["AS", "2S", "3S"],
                            "valid": True})
    assert not ok and "malformed case" in message


def test_the_analysis_judges_meld_decisions_under_the_games_rules():
    # found by a tester: --analyse offered "best plays" that the game's variants forbid
    # (Q-K-A under ace_high=false, a joker meld broken under joker_moves=locked)
    from rummy.analysis import analyse
    from rummy.melds import check_action

    rules = RuleSet(knock_timing="start", joker_release="hand", joker_moves="locked",
                    ace_high=False, target_score=60)
    _, log, _ = play_random_game(3, 2, ("greedy", "greedy"), rules)
    decisions = analyse(log).decisions
    assert decisions
    for d in decisions:
        if d.best_table:
            check_action(d.table, d.hand, d.best_table, rules=rules)  # legal, or raises


def test_a_record_of_a_game_with_option_variants_reads_back():
    # found by a tester: string variants were written quoted and could not be imported
    from rummy.record import from_record, to_record

    rules = RuleSet(knock_timing="start", joker_release="hand", joker_moves="locked",
                    ace_high=False, target_score=60)
    _, log, _ = play_random_game(4, 2, ("basic", "greedy"), rules)
    text = to_record(log)
    rules_line = next(line for line in text.splitlines() if line.startswith("[Rules "))
    assert '"' not in rules_line[len('[Rules "'):-2]  # no quotes inside the value
    assert "knock_timing=start" in rules_line and "ace_high=false" in rules_line
    assert from_record(text) == log


def test_rummy_solve_plays_under_rules_and_a_cases_own_rules(tmp_path):
    # found by a tester: rummy solve had no --rules and ignored a case's "rules"
    import subprocess
    import sys

    def solve_json(*args: str) -> dict:
        res = subprocess.run([sys.executable, "-m", "rummy_cli", "solve", *args, "--json"],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout.strip().splitlines()[-1])

    assert solve_json("--table", "JS QS KS", "--hand", "AS")["points"] == 1
    assert solve_json("--table", "JS QS KS", "--hand", "AS", "--rules", "ace_high=false")[
        "points"] == 0
    case = tmp_path / "c.jsonl"
    case.write_text(json.dumps({"id": "x", "table": [["5S", "6S", "*7S"]],
                                "hand": ["7S", "JD", "QD"],
                                "rules": {"joker_moves": "locked"}, "best_points": 0}) + "\n")
    out = solve_json("--input", str(case))
    assert out["points"] == 0 and out["expected"] == 0


def test_a_fork_inside_a_transient_phase_plays_on_and_one_at_the_end_is_refused():
    # found by a tester: --fork 1 (after GameStarted) and a fork after a round's scoring
    # crashed (IndexError, "cannot pass in phase round_over")
    from rummy.decide import settle
    from rummy.fork import fork_prefix
    from rummy.invariants import verify_log

    _, log, _ = play_random_game(2, 2, ("basic", "basic"))
    prefix = fork_prefix(log, 1, 0)
    state, automatic = settle(list(verify_log(prefix))[-1])
    assert [e.TYPE for e in automatic] == ["RoundStarted"] and state.phase == DRAW
    with pytest.raises(ValueError, match="the game is over: there is nothing to play on"):
        fork_prefix(log, len(log), 0)


def test_a_review_budget_past_its_cap_is_refused():
    # found by a tester: --analyse --budget 1000000000 was accepted and ran until killed
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "rummy_cli", "replay",
                          "tests/golden/basic-2p-seed1.jsonl", "--analyse", "--budget",
                          "1000000000"], capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "--budget must be 0..64" in res.stderr


def test_an_unprovable_best_play_case_is_not_called_malformed():
    # found by a tester: a well-formed case under a variant the solver checks rather than
    # models failed as "malformed"; a per-player opening on a non-empty table is still
    # checked (the run 5S..TS does not open: 8S 9S TS must stand alone)
    ok, message = run_case({"id": "u", "kind": "best_play", "rule": "R5.5",
                            "rules": {"opening_meld_per_player": True}, "opening": True,
                            "table": [["5S", "6S", "7S"]],
                            "hand": ["8S", "9S", "TS", "2H"], "best_points": 27})
    assert not ok and message.startswith("not proven: the solver cannot prove")


def test_a_locked_joker_best_play_case_is_proven():
    ok, message = run_case({"id": "u", "kind": "best_play", "rule": "R5.7",
                            "rules": {"joker_moves": "locked"},
                            "table": [["JS", "QS", "KS"], ["5H", "6H", "*7H"]],
                            "hand": ["AS", "7H", "8H"], "best_points": 9})
    assert ok, message
