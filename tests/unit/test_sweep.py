"""``rummy sweep``: one balance batch per variant value on paired seeds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rummy_cli.sweep import parse_sweep, render_html

ROOT = Path(__file__).resolve().parents[2]


def test_parse_sweep_gives_every_combination_in_order() -> None:
    assert parse_sweep(["knock_threshold=0,5"]) == [{"knock_threshold": "0"},
                                                    {"knock_threshold": "5"}]
    grid = parse_sweep(["hand_size=7,10", "knock_threshold=5, 10"])
    assert grid == [{"hand_size": "7", "knock_threshold": "5"},
                    {"hand_size": "7", "knock_threshold": "10"},
                    {"hand_size": "10", "knock_threshold": "5"},
                    {"hand_size": "10", "knock_threshold": "10"}]


@pytest.mark.parametrize("specs", [[], ["knock_threshold"], ["knock_threshold="],
                                   ["a=1", "a=2"]])
def test_bad_sweeps_are_refused(specs: list[str]) -> None:
    with pytest.raises(ValueError):
        parse_sweep(specs)


def _rummy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)


def test_each_value_equals_rummy_simulate_with_that_rule(tmp_path: Path) -> None:
    common = ["--games", "8", "--players", "2", "--bots", "greedy,random", "--seed", "5",
              "--jobs", "1", "--quiet"]
    res = _rummy("sweep", "--rules", "knock_threshold=0,15", *common, "--json",
                 str(tmp_path / "s.json"), "--html", str(tmp_path / "s.html"))
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    # the values as the rules read them, not the command line's strings (found by an attack)
    assert [r["rules"] for r in doc["sweep"]] == [{"knock_threshold": 0},
                                                  {"knock_threshold": 15}]
    for row in doc["sweep"]:  # paired: each value is `rummy simulate` with that rule
        sim = _rummy("simulate", *common, "--rules",
                     f"knock_threshold={row['rules']['knock_threshold']}", "--json", "-")
        assert sim.returncode == 0, sim.stderr
        local = json.loads(sim.stdout)
        assert row["games"] == local["games"] == 8
        assert row["round_end_share"] == pytest.approx(local["round_end_share"])
    assert doc["sweep"][0]["round_end_share"]["knock"] == 0.0  # threshold 0: no knock
    page = (tmp_path / "s.html").read_text()
    assert page.startswith("<!doctype html>") and "knock_threshold=15" in page
    for row in doc["sweep"]:  # each value's whole report, and the intervals it plots
        assert row["report"]["rules"] == row["rules"]
        ci = row["rounds_per_game_ci"]
        assert ci["low"] <= ci["value"] == row["rounds_per_game"] <= ci["high"]
        for b in row["bots"].values():
            assert b["points_left_low"] <= b["points_left"] <= b["points_left_high"]


def _doc() -> dict:
    from rummy.balance import BalanceReport
    from rummy.rules import RuleSet
    from rummy.simulate import play_range
    from rummy_cli.sweep import sweep_document

    combos = parse_sweep(["knock_threshold=0,10", "hand_size=7,10"])
    bots = ["greedy", "random"]
    reports = [BalanceReport.of(play_range(bots, 2, 0, 4, RuleSet.from_dict(c)))
               for c in combos]
    return sweep_document(combos, reports, games=4, players=2, seed=2, bots=bots, seconds=0)


def test_html_charts_each_metric_against_the_values() -> None:
    """Nine matplotlib charts, inline: win rate by seat and by bot (with the 1/n line),
    game length, round ends, points left, then the game-quality figures (skill trace,
    turns, lead changes, decisiveness and decisions); the grid's values label the x
    axis."""
    pytest.importorskip("matplotlib")
    page = render_html(_doc())
    svgs = re.findall(r"<svg .*?</svg>", page, flags=re.DOTALL)
    labels = [ET.fromstring(s).get("aria-label") for s in svgs]  # well-formed XML each
    assert labels == ["Win rate by seat", "Win rate by bot (per seat-game)", "Game length",
                      "How rounds ended", "Mean points left at a round's end",
                      "Skill trace: win-rate margin", "Turns per game",
                      "Drama: lead changes per game", "Decisiveness and decisions"]
    assert "knock_threshold / hand_size" in svgs[0] and "0 / 7" in svgs[0]
    assert "1/2 = 50.0%" in svgs[0] and "1/2 = 50.0%" in svgs[1]  # the fair-share line
    assert "1/2" not in svgs[2]
    assert not re.search(r"<script|<link|<img|src=", page)
    assert page == render_html(_doc())  # deterministic, byte for byte
    # the table has the terminal table's seat-fairness p (newcomer review)
    doc = _doc()
    assert "seat fairness p (chi-square)</th>" in page
    for row in doc["sweep"]:
        p = row["seat_fairness_p"]
        assert ("–" if p is None else f"<td>{p:.3f}</td>") in page


def test_html_without_matplotlib_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    page = render_html(_doc())
    assert "<svg" not in page and "matplotlib is not installed" in page
    assert "knock_threshold=10, hand_size=7" in page  # the table is still there


def test_a_bad_value_is_a_usage_error_naming_the_rule() -> None:
    res = _rummy("sweep", "--rules", "knock_threshold=0,99999", "--games", "2", "--quiet")
    assert res.returncode == 2 and "knock_threshold" in res.stderr
    assert "Traceback" not in res.stderr


def test_the_terminal_table_names_every_value_in_80_columns(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Newcomer review: at 80 columns the rules column read `knock…` on every row."""
    from rummy_cli.main import main
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["sweep", "--rules", "knock_threshold=5,10", "--games", "2", "--players", "2",
                 "--quiet", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "knock_threshold=5" in out and "knock_threshold=10" in out
    assert "rounds ended by knock" in out and "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_segments_are_the_runs_of_equal_keys() -> None:
    from rummy_cli.charts import segments
    assert segments([None, None, None]) == [[0, 1, 2]]
    assert segments([("0",), ("0",), ("10",), ("10",)]) == [[0, 1], [2, 3]]
    assert segments(["a", "a", "b", "b", "a"]) == [[0, 1], [2, 3], [4]]
    assert segments([]) == []


def test_a_grid_chart_joins_only_combinations_that_differ_in_the_last_variant() -> None:
    # noticed in an earlier session: a 2x2 grid was drawn as one line through
    # "0 / 7", "0 / 10", "10 / 7", "10 / 10", a trend across unrelated combinations
    pytest.importorskip("matplotlib")
    from rummy_cli.charts import Charts
    drawn: list[list[float]] = []
    charts = Charts()
    real_svg = charts._svg

    def svg(fig: object, title: str) -> str:  # the drawn lines, before the SVG is written
        for line in fig.axes[0].get_lines():  # type: ignore[attr-defined]
            if line.get_linestyle() == "-" and len(line.get_xdata()) > 1:
                drawn.append([round(x) for x in line.get_xdata()])
        return real_svg(fig, title)
    charts._svg = svg  # type: ignore[method-assign]
    points = [(0.5, 0.4, 0.6)] * 4
    charts.sweep(["0 / 7", "0 / 10", "10 / 7", "10 / 10"], "knock / hand",
                 {"seat 0": points}, "t", "y", groups=[("0",), ("0",), ("10",), ("10",)])
    assert drawn == [[0, 1], [2, 3]]
    drawn.clear()
    charts.sweep(["7", "10", "12"], "hand", {"seat 0": [(0.5, 0.4, 0.6)] * 3}, "t", "y")
    assert drawn == [[0, 1, 2]]  # one variant: one line, as before


@pytest.mark.parametrize("specs, says", [
    (["knock_threshold=1,,2"], "an empty value"),
    (["knock_threshold=1,2,"], "an empty value"),
    (["knock_threshold="], "expected VARIANT=V1,V2"),
])
def test_an_empty_value_is_refused_not_dropped(specs, says):
    # found by an attack: `knock_threshold=1,,2,` ran two values silently
    with pytest.raises(ValueError, match=says):
        parse_sweep(specs)


def test_several_variants_after_one_rules_flag(tmp_path):
    # found by an attack: `--rules a=0,5 b=0` said "unrecognized arguments: b=0"
    res = _rummy("sweep", "--rules", "knock_threshold=0,5", "round_bonus_for_all=true",
                 "--games", "2", "--players", "2", "--bots", "random", "--json",
                 str(tmp_path / "s.json"))
    assert res.returncode == 0, res.stderr
    rows = json.loads((tmp_path / "s.json").read_text())["sweep"]
    assert [r["rules"] for r in rows] == [
        {"knock_threshold": 0, "round_bonus_for_all": True},
        {"knock_threshold": 5, "round_bonus_for_all": True}]
