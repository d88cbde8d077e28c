"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rummy.bots import make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.state import GAME_OVER
from rummy.views import view

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "conformance" / "cases"


def play_random_game(seed: int, players: int = 3, bots: tuple[str, ...] | None = None,
                     rules: RuleSet | None = None, max_steps: int = 100_000):
    """Play one bot game; returns (final_state, events, states_after_each_command)."""
    bots = bots or tuple(random.Random(seed).choice(["random", "basic"]) for _ in range(players))
    agents = [make_bot(b, seed + i) for i, b in enumerate(bots)]
    state, events = step(None, CreateGame(players, seed, rules or RuleSet(), tuple(bots)))
    log = list(events)
    states = [state]
    n = 0
    while state.phase != GAME_OVER and n < max_steps:
        state, events = step(state, agents[state.turn].act(view(state, state.turn)))
        log.extend(events)
        states.append(state)
        n += 1
    return state, log, states


@pytest.fixture
def cases_dir() -> Path:
    return CASES


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    """After a run that included ``chaos`` tests (``make chaos``): one table of what each
    fault or flood test held and measured (its ``record_property`` values: load held,
    faults survived, events lost, leaks)."""
    rows = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call" or "chaos" not in report.keywords:
                continue
            props = ", ".join(f"{k}={v}" for k, v in report.user_properties)
            name = report.nodeid.split("::")[-1]
            rows.append((outcome.upper(), f"{report.duration:6.1f}s", name, props or "-"))
    if not rows:
        return
    terminalreporter.section("chaos summary: faults and floods on real processes")
    width = max(len(r[2]) for r in rows)
    for outcome, seconds, name, props in rows:
        terminalreporter.write_line(f"{outcome:6} {seconds} {name:<{width}}  {props}")
    failed = sum(r[0] != "PASSED" for r in rows)
    terminalreporter.write_line(f"{len(rows) - failed} of {len(rows)} faults survived; "
                                "events lost and leaks are 0 in every passing row")
