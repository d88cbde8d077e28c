"""``rummy batch restrict --local``: each restriction's win-rate cost against the
unrestricted bot on paired seeds, with real values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rummy(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)  # this checkout's packages first, the adapters' included
    paths = [str(ROOT), str(ROOT / "services"), str(ROOT / "workers")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, check=check)


@pytest.mark.slow
def test_restriction_costs_with_paired_intervals(tmp_path: Path) -> None:
    out = _rummy("batch", "restrict", "greedy", "--restrictions", "no-rearrange,knock-at-0",
                 "--players", "2", "--games", "40", "--seed", "7", "--chunk-size", "10",
                 "--local", "--jobs", "2", "--quiet", "--json", str(tmp_path / "c.json"))
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["lineup"] == ["greedy", "greedy"] and doc["games"] == 40
    rows = {r["restriction"]: r for r in doc["rows"]}
    rearrange, knock = rows["no-rearrange"], rows["knock-at-0"]
    assert rearrange["restricted"] == "greedy!no-rearrange"
    for r in (rearrange, knock):
        assert r["games"] == 40 and r["failed"] == 0  # legal commands only
        assert r["cost"] == pytest.approx(r["a"] - r["b"])
        assert r["low"] < r["cost"] < r["high"]
    # rearranging the table is worth most of greedy's wins against itself: restricted, it
    # won none of the 40 paired games (measured at seed 7)
    assert rearrange["b"] == 0.0 and rearrange["low"] > 0.3
    assert knock["low"] > 0  # never knocking costs too
    assert "no-rearrange costs greedy" in out.stdout
    # the same games with a restriction the bot already keeps cost exactly nothing:
    # basic never moves a table card, so every paired game is the same game
    _rummy("batch", "restrict", "basic", "--restrictions", "no-rearrange", "--against",
           "random", "--players", "3", "--games", "12", "--local", "--jobs", "1", "--quiet",
           "--json", str(tmp_path / "same.json"))
    row = json.loads((tmp_path / "same.json").read_text())["rows"][0]
    assert (row["cost"], row["low"], row["high"], row["games"]) == (0.0, 0.0, 0.0, 12)
    assert row["verdict"] == ("no-rearrange: no detectable cost at 12 paired games "
                              "(95% CI 0.0 to 0.0)")


def test_bad_restrictions_exit_2() -> None:
    for args, words in [
        (["greedy", "--restrictions", "no-melds"], "unknown restriction 'no-melds'"),
        (["greedy", "--restrictions", "no-wait,no-wait"], "'no-wait' given twice"),
        (["gredy", "--restrictions", "no-wait"], "unknown bot 'gredy'"),
        (["greedy", "--restrictions", "no-wait,"], "an empty name"),
        (["greedy", "--restrictions", "no-wait", "--players", "6"], "2..5"),
    ]:
        out = _rummy("batch", "restrict", *args, "--local", check=False)
        assert out.returncode == 2, out.stderr
        assert words in out.stderr and "Traceback" not in out.stderr
