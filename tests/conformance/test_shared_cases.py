"""Every shared conformance case (shared/cases/*.jsonl, copied here) must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rummy.conformance import run_case

CASES = Path(__file__).parent / "cases"


def _load() -> list:
    out = []
    for f in sorted(CASES.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                case = json.loads(line)
                out.append(pytest.param(case, id=f"{case['id']}-{case['rule']}"))
    return out


ALL = _load()


def test_every_kind_is_present():
    kinds = {p.values[0]["kind"] for p in ALL}
    assert kinds == {"meld", "action", "best_play", "round_score", "hand_value", "game_end"}
    assert len(ALL) == 261


@pytest.mark.parametrize("case", ALL)
def test_case(case):
    # no xfail or skip path: a kind whose runner is missing or broken fails every case of it
    ok, message = run_case(case)
    assert ok, f"{case['id']} ({case['rule']}): {message}"


def _first(kind: str) -> dict:
    return next(p.values[0] for p in ALL if p.values[0]["kind"] == kind)


#: per kind, the engine function its runner calls (rummy.conformance's module attribute,
#: or rummy.solver's for best_play)
RUNNER_PARTS = {"meld": "is_valid_meld", "action": "check_action", "round_score": "score_round",
                "hand_value": "hand_points", "game_end": "final_scores"}


@pytest.mark.parametrize("kind", sorted(RUNNER_PARTS))
def test_a_broken_runner_fails_its_cases(kind, monkeypatch):
    """A kind whose runner breaks (a renamed engine function) fails, never passes or skips."""
    import rummy.conformance

    monkeypatch.delattr(rummy.conformance, RUNNER_PARTS[kind])
    ok, message = run_case(_first(kind))
    assert not ok and RUNNER_PARTS[kind] in message


def test_a_renamed_solver_function_fails_the_best_play_cases(monkeypatch):
    """Renaming the solver's ``best_points`` once turned the 140 best_play cases into xfail;
    now every one of them fails and names what is missing."""
    import rummy.solver

    monkeypatch.delattr(rummy.solver, "best_points")
    best = [p.values[0] for p in ALL if p.values[0]["kind"] == "best_play"]
    assert len(best) == 140
    results = [run_case(case) for case in best]
    assert not any(ok for ok, _ in results)
    assert all("best_points" in message for _, message in results)


def test_shared_copy_is_current():
    shared = Path(__file__).resolve().parents[3] / "shared" / "cases"
    if not shared.is_dir():
        pytest.skip("../shared/cases is not beside the project")
    for f in shared.glob("*.jsonl"):
        assert (CASES / f.name).read_text() == f.read_text(), f"{f.name} differs from shared/"
