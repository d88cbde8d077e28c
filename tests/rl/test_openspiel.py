"""The OpenSpiel game python_manipulation_rummy: OpenSpiel's random-simulation test for
2-5 players and rule variants, information states, resampling, and IS-MCTS playing it."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
pytest.importorskip("pettingzoo")

import rummy_env.openspiel_game  # noqa: E402,F401 - registers the game
from rummy.rules import RuleSet  # noqa: E402


@pytest.mark.parametrize("params", [
    {"players": 2, "target_score": 30},
    {"players": 3, "target_score": 20, "opening_meld_per_player": True},
    {"players": 4, "target_score": 20, "opening_meld_min_points": 30},
    {"players": 5, "target_score": 20, "hand_size": 7, "knock_threshold": 10},
])
def test_openspiel_random_sim_test(params: dict) -> None:
    game = pyspiel.load_game("python_manipulation_rummy", params)
    assert game.num_players() == params["players"]
    assert game.num_distinct_actions() == 20
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 256
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


def test_rule_parameters_reach_the_engine() -> None:
    game = pyspiel.load_game("python_manipulation_rummy",
                             {"players": 3, "knock_threshold": 9, "round_bonus_for_all": True})
    assert game.rules == RuleSet(knock_threshold=9, round_bonus_for_all=True)
    state = game.new_initial_state()
    for b in (7, 0, 0, 0):
        state.apply_action(b)
    assert state.env.state_.rules.knock_threshold == 9 and state.env.game_seed == 7
    with pytest.raises(Exception, match="2 to 5"):
        pyspiel.load_game("python_manipulation_rummy", {"players": 6})


def _after_chance(game, seed: int):
    state = game.new_initial_state()
    for b in seed.to_bytes(4, "little"):
        state.apply_action(b)
    return state


def test_information_state_and_resampling() -> None:
    game = pyspiel.load_game("python_manipulation_rummy", {"players": 3})
    state = _after_chance(game, 99)
    rng = np.random.default_rng(0)
    for _ in range(60):
        state.apply_action(int(rng.choice(state.legal_actions())))
    p = state.current_player()
    info = state.information_state_string(p)
    tensor = np.asarray(state.information_state_tensor(p))
    assert tensor.shape == tuple(game.information_state_tensor_shape())
    hands = set()
    for i in range(4):
        other = state.resample_from_infostate(p, lambda i=i: (i + 0.5) / 4)
        assert other.information_state_string(p) == info
        assert np.array_equal(np.asarray(other.information_state_tensor(p)), tensor)
        assert other.legal_actions() == state.legal_actions()
        hands.add(other.env.state_.hands)
    assert len(hands) > 1
    # I3: another seat's information state does not show this seat's hand or draws
    from rummy.cards import format_card
    q = (p + 1) % 3
    mine = "hand " + " ".join(map(format_card, state.env.state_.hands[p]))
    assert mine in info and mine not in state.information_state_string(q)
    assert f" {p}draw:" in info and f" {p}draw:" not in state.information_state_string(q)


def test_ismcts_plays_a_whole_game() -> None:
    from open_spiel.python.algorithms import ismcts, mcts
    game = pyspiel.load_game("python_manipulation_rummy", {"players": 2, "target_score": 10})
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0,
                           max_simulations=4, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rs.randint(256)))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            searched += len(state.legal_actions()) > 1
            state.apply_action(action)
        else:
            state.apply_action(int(rs.choice(state.legal_actions())))
    assert searched > 0
    assert sum(state.returns()) == pytest.approx(1.0)
    assert state.env.state_.result is not None
