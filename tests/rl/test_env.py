"""The PettingZoo environment rummy_env.manipulation_rummy_v0."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from rummy.events import GameEnded  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402


@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_api(players: int) -> None:
    api_test(rummy_v0.env(players=players), num_cycles=500)


def test_pettingzoo_seed() -> None:
    seed_test(lambda: rummy_v0.env(players=3), num_cycles=300)


def _play_out(env, rng: np.random.Generator, *, greedy: bool = False) -> dict[str, float]:
    """Play a whole game with masked random (or always-first-meld) actions; the summed
    rewards by agent."""
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.any()
        legal = np.flatnonzero(mask)
        if greedy and mask[rummy_v0.N_FIXED]:
            action = rummy_v0.N_FIXED
        else:
            action = int(rng.choice(legal))
        env.step(action)
    return total


@pytest.mark.parametrize("players", [2, 3, 5])
def test_whole_game_rewards(players: int) -> None:
    rules = RuleSet(target_score=40)
    env = rummy_v0.env(players=players, rules=rules)
    env.reset(seed=players)
    raw = env.unwrapped
    total = _play_out(env, np.random.default_rng(players), greedy=True)
    assert not env.agents  # every agent terminated and was removed
    result = raw.state_.result
    assert isinstance(result, GameEnded)
    for seat in range(players):
        expected = raw.state_.totals[seat] / 40 + (
            1 / len(result.winners) if seat in result.winners else 0.0)
        assert total[f"player_{seat}"] == pytest.approx(expected)


def test_observation_layout_and_hidden_information() -> None:
    """I3: an observation changes with the observer's own cards, never with another hand
    or the order of the stock."""
    env = rummy_v0.raw_env(players=3)
    env.reset(seed=5)
    s = env.state_
    me = s.turn
    obs = env.observe(f"player_{me}")["observation"]
    assert obs.shape == (rummy_v0.OBS_SIZE,) and obs.dtype == np.float32
    assert obs[:53].sum() == len(s.hands[me]) == obs[157]
    assert obs[162] == len(s.deck) - s.stock_pos
    assert obs[163] == 1.0  # phase draw
    other = (me + 1) % 3
    # give the other seat's hand the stock's first cards and shuffle the rest of the stock
    stock = list(s.deck[s.stock_pos:])
    hand = list(s.hands[other])
    k = len(hand)
    new_hand, rest = tuple(sorted(stock[:k])), stock[k:] + hand
    rest.reverse()
    hands = tuple(new_hand if i == other else h for i, h in enumerate(s.hands))
    env._state = s._replace(hands=hands, deck=s.deck[:s.stock_pos] + tuple(rest))
    same = env.observe(f"player_{me}")
    assert np.array_equal(same["observation"], obs)


def test_masked_action_is_refused() -> None:
    env = rummy_v0.raw_env(players=2)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="not legal"):
        env.step(rummy_v0.KNOCK_ACTION)


def test_candidates_follow_the_documented_order() -> None:
    """Slot 0 is the solver's best play (the greedy bot's meld) whenever one exists."""
    from rummy.bots.greedy import plan_play
    from rummy.views import view
    env = rummy_v0.raw_env(players=2)
    env.reset(seed=3)
    checked = 0
    for _ in range(400):
        s = env.state_
        if s.phase == "game_over":
            break
        mask = env._mask
        if s.phase == "meld_or_pass":
            planned = plan_play(view(s, s.turn))
            assert bool(mask[rummy_v0.N_FIXED]) == (planned is not None)
            if planned is not None:
                assert env._candidates[0] == planned[0]
                checked += 1
        legal = np.flatnonzero(mask)
        env.step(int(legal[-1]))
    assert checked > 0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="2 to 5"):
        rummy_v0.raw_env(players=6)
    with pytest.raises(ValueError, match="render_mode"):
        rummy_v0.raw_env(render_mode="rgb")
    env = rummy_v0.raw_env(players=2, render_mode="ansi")
    env.reset(seed=0)
    assert "table:" in str(env.render())
