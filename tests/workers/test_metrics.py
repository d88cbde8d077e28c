"""Worker metrics: names, the per-game hook, the solver timer hook."""

from __future__ import annotations

import sys
import types

from prometheus_client import REGISTRY
from rummy_worker import metrics

from rummy.simulate import game_seed, play_game


def _value(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def test_observe_game_counts_games_turns_and_seconds() -> None:
    r = play_game(("random", "random"), game_seed(1, 0))
    before = (_value("rummy_sim_games_total"), _value("rummy_sim_turns_total"),
              _value("rummy_sim_game_seconds_count"))
    metrics.observe_game(r, 0.02)
    after = (_value("rummy_sim_games_total"), _value("rummy_sim_turns_total"),
             _value("rummy_sim_game_seconds_count"))
    assert after == (before[0] + 1, before[1] + sum(r.turns), before[2] + 1)


def test_solver_timer_wraps_best_play_once(monkeypatch) -> None:
    mod = types.ModuleType("fake_solver_bot")
    calls = []
    mod.best_play = lambda *a: calls.append(a) or "play"
    monkeypatch.setitem(sys.modules, "fake_solver_bot", mod)
    before = _value("rummy_solver_seconds_count")
    assert metrics.install_solver_timer(("fake_solver_bot", "no.such.module")) == \
        ["fake_solver_bot"]
    assert metrics.install_solver_timer(("fake_solver_bot",)) == []  # idempotent
    assert mod.best_play(1, 2) == "play" and calls == [(1, 2)]
    assert _value("rummy_solver_seconds_count") == before + 1


def test_metric_names_follow_conventions() -> None:
    names = {m.name for m in REGISTRY.collect()}
    assert {"rummy_sim_games", "rummy_sim_turns", "rummy_sim_game_seconds",
            "rummy_solver_seconds", "rummy_sim_chunk_failures", "rummy_sim_chunks"} <= names
