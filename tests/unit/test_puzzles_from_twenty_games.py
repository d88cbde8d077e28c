"""Puzzles made from 20 games all have a best value the solver proves: each puzzle is a
best_play conformance case that `rummy conformance` passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _rummy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy_cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_puzzles_from_twenty_games_are_all_solver_proved(tmp_path: Path) -> None:
    sim = _rummy("simulate", "--games", "20", "--players", "2", "--bots", "greedy,human",
                 "--seed", "5", "--events-dir", "logs", "--quiet", "--jobs", "1", cwd=tmp_path)
    assert sim.returncode == 0, sim.stderr
    logs = sorted(str(p) for p in (tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 20
    made = _rummy("puzzles", *logs, "--count", "20", "--cases", "p.jsonl", "--html", "p.html",
                  cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    cases = (tmp_path / "p.jsonl").read_text().splitlines()
    assert len(cases) == 20
    checked = _rummy("conformance", "p.jsonl", cwd=tmp_path)
    assert checked.returncode == 0 and checked.stdout.strip().splitlines()[-1] == \
        "20 passed, 0 failed"
    page = (tmp_path / "p.html").read_text()
    assert page.count("<details") >= 20  # every answer hidden until asked for
