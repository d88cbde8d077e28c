"""``rummy sweep`` (issue 14): one balance batch per variant value on paired seeds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rummy_cli.sweep import parse_sweep

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
    assert [r["rules"] for r in doc["sweep"]] == [{"knock_threshold": "0"},
                                                  {"knock_threshold": "15"}]
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


def test_a_bad_value_is_a_usage_error_naming_the_rule() -> None:
    res = _rummy("sweep", "--rules", "knock_threshold=0,99999", "--games", "2", "--quiet")
    assert res.returncode == 2 and "knock_threshold" in res.stderr
    assert "Traceback" not in res.stderr
