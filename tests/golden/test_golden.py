"""Golden playthroughs: stored logs replay cleanly and equal a fresh run of the same game."""

from __future__ import annotations

import pytest

from rummy.events import loads
from rummy.invariants import verify_log
from tests.golden.regenerate import GAMES, HERE, render


@pytest.mark.parametrize("name,bots,seed,variants", GAMES, ids=[g[0] for g in GAMES])
def test_golden_playthrough(name, bots, seed, variants):
    stored = (HERE / name).read_text()
    events = [loads(line) for line in stored.splitlines()]
    states = list(verify_log(events))
    assert states[-1].is_over
    fresh = render(bots, seed, variants)
    if fresh != stored:  # show the first differing event, not a wall of text
        for i, (a, b) in enumerate(zip(stored.splitlines(), fresh.splitlines(), strict=False)):
            assert a == b, f"{name}: event {i + 1} differs (run `make golden` if intended)"
        assert len(stored.splitlines()) == len(fresh.splitlines()), f"{name}: length differs"
