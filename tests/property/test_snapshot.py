"""Property tests of ``rummy.snapshot``: every state of random bot games (every version,
mid-round and transient states, jokers on the table, ``last_round`` and ``result`` set, rule
variants) survives ``state_to_dict`` -> JSON text -> ``state_from_dict`` exactly."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy.evolve import evolve
from rummy.rules import RuleSet
from rummy.snapshot import state_from_dict, state_to_dict
from rummy.state import GameState
from tests.conftest import play_random_game

games = st.tuples(
    st.integers(min_value=0, max_value=2**40),
    st.integers(min_value=2, max_value=5),
    st.lists(st.sampled_from(["random", "basic"]), min_size=5, max_size=5),
    st.sampled_from([{}, {"knock_threshold": 10}, {"max_draws_per_turn": 1},
                     {"hand_size": 7, "round_bonus_for_all": True},
                     {"opening_meld_per_player": True, "opening_meld_min_points": 20}]),
)


def _json_only(value: Any) -> bool:
    """True when ``value`` is made only of dict (str keys), list, str, int, bool and None."""
    if value is None or isinstance(value, (str, int, bool)):
        return True
    if isinstance(value, list):
        return all(_json_only(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_only(v) for k, v in value.items())
    return False


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games)
def test_every_version_of_a_random_game_round_trips_through_json(game):
    seed, players, bots, variants = game
    final, log, _ = play_random_game(seed, players, tuple(bots[:players]),
                                     RuleSet.from_dict(variants | {"target_score": 60}))
    state: GameState | None = None
    seen_last_round = False
    for event in log:
        state = evolve(state, event)
        data = state_to_dict(state)
        assert data["snapshot"] == 1 and _json_only(data)
        back = state_from_dict(json.loads(json.dumps(data)))
        assert back == state
        assert type(back.phase) is type(state.phase)  # noqa: E721 - the enum, not a str
        seen_last_round |= state.last_round is not None
    assert state == final and state.result is not None and seen_last_round
    assert state_from_dict(json.loads(json.dumps(state_to_dict(final)))) == final
