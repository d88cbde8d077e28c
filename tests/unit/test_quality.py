"""The game-quality metrics (rummy.quality, docs/metrics.md) on hand-checked games, and
their place in aggregates and reports."""

from __future__ import annotations

import json
import math

import pytest

from rummy.balance import BalanceReport
from rummy.quality import (
    DEFINITIONS,
    MARGIN_UNIT,
    QualityReport,
    drama,
    game_sums,
    games_needed,
    verdict,
)
from rummy.rules import RuleSet
from rummy.simulate import Aggregate, game_seed, lineup_for, play_game, play_range
from rummy.stats import Z95


def test_drama_counts_lead_changes_comeback_and_decided_round() -> None:
    # seat 0 leads, seat 1 takes the lead, seat 0 wins it back: 2 changes; the winner
    # trailed by 20 - 10 = 10 points after round 2 and led for good after round 3
    assert drama(((10, 0), (10, 20), (30, 20)), (30, 20), (0,)) == (2, 10, 3)


def test_drama_ties_have_no_leader_and_a_coleader_counts_as_leading() -> None:
    assert drama(((0, 0), (5, 5), (10, 5)), (10, 5), (0,)) == (0, 0, 1)


def test_drama_bonuses_that_flip_the_lead_count_as_a_change() -> None:
    # seat 1 led the only round; the final bonuses (R9.2-R9.3) put seat 0 ahead
    assert drama(((10, 20),), (130, 120), (0,)) == (1, 10, 1)


def _two_games() -> dict[str, int]:
    g1 = game_sums(bots=("a", "b", "a", "b"), winners=(1,), final=(0, 1, 0, 0),
                   positions=((0, 5, 0, 0),), turns=10, reasons=("knock",), plays=(2, 1),
                   meld_phases=7, win_unit=60)
    g2 = game_sums(bots=("b", "a", "b", "a"), winners=(1, 3), final=(0, 1, 0, 1),
                   positions=((0, 5, 0, 5), (0, 9, 3, 9)), turns=30,
                   reasons=("knock", "stock"), plays=(3,), meld_phases=12, win_unit=60)
    # b won game 1 alone on 2 seats: a's margin is 0 - 1/2 of a win per seat-game
    assert g1["margin:a|b:sum"] == -MARGIN_UNIT // 2
    # a shared game 2's win on both its seats: +1/2
    assert g2["margin:a|b:sum"] == MARGIN_UNIT // 2
    assert (g1["capped"], g2["capped"]) == (0, 1)
    return {k: g1.get(k, 0) + g2.get(k, 0) for k in g1.keys() | g2.keys()}


def test_quality_report_figures_and_intervals_by_hand() -> None:
    q = QualityReport.of(_two_games())
    assert q.games == 2
    (t,) = q.skill
    assert (t.margin.mean, t.margin.se) == (0.0, 0.5)  # margins -0.5 and +0.5
    assert t.margin.low == pytest.approx(-Z95 * 0.5)
    assert t.games_needed is None  # a zero margin is never detected
    assert q.rounds.mean.mean == 1.5 and q.rounds.sd == pytest.approx(math.sqrt(0.5))
    assert q.turns.mean.mean == 20.0 and q.turns.sd == pytest.approx(math.sqrt(200))
    assert q.capped.rate == 0.5
    # sampled meld phases: game 1 (2 plays, 1 play), game 2 (3 plays): 2 of 3 had a choice
    assert q.decision_share.rate == pytest.approx(2 / 3)
    assert q.branching.mean == 2.0
    assert q.sampled == 3 and q.meld_phases == 19
    assert {k for k, *_ in q.rows()} <= set(DEFINITIONS)


def test_games_needed_and_verdicts_in_words() -> None:
    # sd 0.2 per game, 2 points: ((1.96 + 0.84) * 0.2 / 0.02)^2 = 784.9 -> 785
    assert games_needed(0.2, 0.02) == 785
    assert verdict("x", 0.05, 0.01, 0.09, 100, "pp") == (
        "x: 5.0 points higher under A than under B (95% CI 1.0 to 9.0 points)")
    assert verdict("x", 0.0, -0.04, 0.04, 100, "pp") == (
        "x: no detectable change at this sample size (100 games, 95% CI -4.0 to 4.0 "
        "points); about 818 games would detect ±2.0 points")
    # a narrow interval: 2 points would have shown (sd 0.1: ((1.96+0.84)·5)² = 196.2)
    assert verdict("x", 0.001, -0.0088, 0.0108, 400, "pp").endswith(
        "a change of ±2.0 points would have been detected (about 197 games)")
    assert verdict("turns per game", -24.75, -40.3, -9.2, 20, "turns", a="A", b="B") == (
        "turns per game: 24.75 turns lower under A than under B (95% CI -40.30 to "
        "-9.20 turns)")


def test_play_game_without_metrics_plays_the_same_game() -> None:
    bots = lineup_for(("strategic", "greedy", "strategic", "greedy"), 0)
    seed = game_seed(1, 0)
    on, off = play_game(bots, seed), play_game(bots, seed, metrics=False)
    assert (on.final, on.winners, on.turns) == (off.final, off.winners, off.turns)
    assert off.plays == () and on.meld_phases == off.meld_phases
    assert on.positions == ((0, 87, 0, 0), (0, 161, 0, 0))
    assert len(on.plays) == sum(1 for k in range(on.meld_phases) if (k + seed) % 32 == 0)
    assert all(p >= 0 for p in on.plays)


def test_aggregate_carries_quality_and_old_aggregates_load_without_it() -> None:
    agg = play_range(("strategic", "greedy"), 5, 0, 4)
    d = json.loads(json.dumps(agg.to_dict()))
    assert Aggregate.from_dict(d) == agg
    assert agg.quality["games"] == 4 and agg.quality["rounds"] == agg.rounds
    del d["quality"]
    old = Aggregate.from_dict(d)
    assert old.quality == {}
    rep = BalanceReport.of(old)
    assert rep.quality is not None and rep.quality.games == 0
    assert BalanceReport.of(old.merge(agg)).quality.games == 4  # type: ignore[union-attr]
    doc = BalanceReport.of(agg).to_dict()["quality"]
    assert doc["games"] == 4 and doc["rounds"]["value"] == agg.rounds / 4
    assert doc["definitions"] == DEFINITIONS


def test_terminal_report_prints_the_quality_table_and_the_skill_verdict() -> None:
    from rich.console import Console

    from rummy_cli.report_format import quality_rows, render

    rep = BalanceReport.of(play_range(("strategic", "greedy"), 5, 0, 4))
    rows = quality_rows(rep)
    assert [r[0] for r in rows][1:] == [
        "lead changes per game", "largest deficit a winner came back from",
        "games won from behind", "decided after round",
        "decided after (share of the game's rounds)", "meld phases with more than one play",
        "distinct plays per meld phase", "rounds per game", "turns per game",
        "games in which a round ran the stock out"]
    assert rows[0][0] in ("skill trace: strategic over greedy",
                          "skill trace: greedy over strategic")
    q = rep.quality
    assert q is not None
    assert rows[8][1] == f"{q.rounds.mean.mean:.2f} rounds (sd {q.rounds.sd:.2f})"
    console = Console(record=True, width=140)
    render(rep, console)
    text = console.export_text()
    assert "Game quality over 4 games" in text
    assert f"Skill trace: {q.skill[0].verdict}" in " ".join(text.split())


def test_ab_quality_verdicts_compare_a_minus_b() -> None:
    from rummy_worker.output import quality_verdicts

    bots = ("strategic", "greedy")
    a = BalanceReport.of(play_range(bots, 8, 0, 6))
    locked = RuleSet.from_dict({"joker_moves": "locked"})
    b = BalanceReport.of(play_range(bots, 8, 0, 6, locked))
    out = quality_verdicts(a, b, 6)
    assert [v.split(":")[0] for v in out][:3] == [
        "lead changes per game", "decided after (share of the game's rounds)",
        "meld phases with more than one play"]
    assert a.quality is not None and b.quality is not None
    d = a.quality.lead_changes.mean - b.quality.lead_changes.mean
    if d == 0:
        assert "no detectable change" in out[0] or "the same under" in out[0]
    else:
        assert f"{abs(d):.2f} changes" in out[0] or "no detectable change" in out[0]
    assert quality_verdicts(a, BalanceReport.of(Aggregate.empty(2)), 6) == []


def test_intervals_stay_in_the_range_a_figure_can_take() -> None:
    # lead changes 0 and 2 in two games: mean 1, se 1, normal interval -0.96..2.96
    q = QualityReport.of({"games": 2, "lead_changes": 2, "lead_changes_sq": 4})
    assert q.lead_changes.mean == 1.0
    assert q.lead_changes.low == 0.0
    assert q.lead_changes.high == pytest.approx(1 + Z95)
    # a margin of a whole win in each of 3 games: no spread, said in words
    sums = {"games": 3, "margin:a|b:n": 3, "margin:a|b:sum": 3 * MARGIN_UNIT,
            "margin:a|b:sq": 3 * MARGIN_UNIT ** 2}
    (t,) = QualityReport.of(sums).skill
    assert (t.margin.low, t.margin.high) == (1.0, 1.0)
    assert t.verdict == ("a beat b by 100.0 points in every one of the 3 games (no spread: "
                         "more games would tell more)")


def test_rummy_simulate_prints_and_writes_the_quality_figures(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "rummy", "simulate", "--games", "6",
                           "--players", "2", "--seed", "3", "--jobs", "1", "--quiet",
                           "--json", str(out)], capture_output=True, text=True, cwd=root,
                          timeout=300, check=True)
    assert "Game quality over 6 games" in done.stdout
    q = json.loads(out.read_text())["quality"]
    expected = BalanceReport.of(play_range(("strategic", "greedy"), 3, 0, 6)).to_dict()
    assert q == json.loads(json.dumps(expected["quality"]))
    assert q["games"] == 6 and q["turns"]["unit"] == "turns"


def test_a_failed_play_count_is_counted_apart_and_fails_no_game(monkeypatch) -> None:
    import rummy.simulate as simulate

    def broken(view):  # type: ignore[no-untyped-def]
        raise ValueError("solver refused")

    monkeypatch.setattr(simulate, "count_plays", broken)
    bots = lineup_for(("strategic", "greedy"), 0)
    r = play_game(bots, game_seed(1, 0))
    assert r.plays and set(r.plays) == {-1}
    agg = Aggregate.of_game(r)
    assert agg.failed == {} and agg.quality["sample_errors"] == len(r.plays)
    assert agg.quality["sampled"] == 0
    q = QualityReport.of(agg.quality)
    assert q.sample_errors == len(r.plays) and q.to_dict()["sample_errors"] == len(r.plays)


def test_sampling_interval_grows_as_fewer_seats_run_the_solver() -> None:
    from rummy.quality import sample_every

    assert sample_every(("strategic", "greedy", "strategic", "greedy")) == 32
    assert sample_every(("greedy", "basic", "greedy", "basic")) == 128
    assert sample_every(("greedy", "random", "random")) == 192
    assert sample_every(("basic", "random")) == 1280
    r = play_game(("basic", "random"), game_seed(2, 0))
    assert len(r.plays) == sum(1 for k in range(r.meld_phases)
                               if (k + r.seed) % 1280 == 0)
