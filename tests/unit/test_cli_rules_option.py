"""Found by a CLI tester: repeated ``--rules`` flags were silently dropped (only the last
flag counted) and a variant given twice kept its last value. Now every command that takes
one rule set through ``--rules`` merges the flags and refuses a variant given twice."""

from __future__ import annotations

import json

import pytest

from rummy.rules import parse_rule_pairs as rule_pairs
from rummy_cli.main import build_parser, main


def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # usage errors raise SystemExit(2)
        return int(e.code) if isinstance(e.code, int) else 1


def test_rule_pairs_merges_and_refuses_a_variant_given_twice() -> None:
    assert rule_pairs(["target_score=40", "knock_threshold=9"]) == {
        "target_score": "40", "knock_threshold": "9"}
    with pytest.raises(ValueError, match="variant knock_threshold given twice"):
        rule_pairs(["knock_threshold=7", "knock_threshold=900"])
    with pytest.raises(ValueError, match="--compare-rules: variant hand_size given twice"):
        rule_pairs(["hand_size=7", " hand_size =7"], "--compare-rules")


def test_simulate_merges_repeated_rules_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # the tester's example: the report said rules {'knock_threshold': 9}
    assert main(["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--jobs",
                 "1", "--quiet", "--rules", "target_score=40", "--rules", "knock_threshold=9",
                 "--json", "-"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rules"] == {"knock_threshold": 9, "target_score": 40}


@pytest.mark.parametrize("argv", [
    ["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--quiet",
     "--rules", "knock_threshold=7", "knock_threshold=900"],
    ["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--quiet",
     "--rules", "knock_threshold=7", "--rules", "knock_threshold=7"],
    ["play", "--rules", "knock_threshold=7", "--rules", "knock_threshold=9"],
    ["batch", "submit", "--games", "10", "--rules", "knock_threshold=7",
     "--rules", "knock_threshold=9"],
    ["batch", "ab", "--games", "10", "--compare-rules", "knock_threshold=7",
     "knock_threshold=9"],
])
def test_a_variant_given_twice_is_an_error_naming_it(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert _code(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "variant knock_threshold given twice" in err
    assert "Traceback" not in err


def test_batch_submit_and_ab_merge_repeated_flags() -> None:
    from rummy_worker.cli import spec_from_args
    args = build_parser().parse_args(
        ["batch", "ab", "--games", "10", "--players", "2", "--bots", "basic",
         "--rules", "target_score=40", "--rules", "knock_threshold=9",
         "--compare-rules", "knock_threshold=3", "--compare-rules", "hand_size=7"])
    spec = spec_from_args(args)
    assert dict(spec.rules) == {"target_score": 40, "knock_threshold": 9}
    assert dict(spec.compare_rules) == {"target_score": 40, "knock_threshold": 3,
                                        "hand_size": 7}


def test_play_merges_repeated_rules_flags() -> None:
    from rummy_cli.play import parse_rules
    args = build_parser().parse_args(["play", "--rules", "target_score=50",
                                      "--rules", "knock_threshold=3"])
    rules = parse_rules(args.rules)
    assert (rules.target_score, rules.knock_threshold) == (50, 3)
