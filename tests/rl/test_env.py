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
        mask = env.legal_mask()
        if s.phase == "meld_or_pass":
            planned = plan_play(view(s, s.turn))
            assert bool(mask[rummy_v0.N_FIXED]) == (planned is not None)
            if planned is not None:
                assert env.candidates().table(0) == planned[0]
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


def _first_hands(env, seed: int | None) -> tuple:
    env.reset(seed=seed)
    return env.unwrapped.state_.hands


def test_unseeded_reset_continues_the_seeded_generator() -> None:
    """Gymnasium's contract: after reset(seed=5), a reset() without a seed continues the
    generator seeded with 5, so the sequence of games repeats on every run."""
    a, b = rummy_v0.env(players=3), rummy_v0.env(players=3)
    first_a, first_b = _first_hands(a, 5), _first_hands(b, 5)
    assert first_a == first_b
    second_a, second_b = _first_hands(a, None), _first_hands(b, None)
    assert second_a == second_b and second_a != first_a
    assert a.unwrapped.game_seed == b.unwrapped.game_seed != 5
    third_a, third_b = _first_hands(a, None), _first_hands(b, None)
    assert third_a == third_b and third_a not in (first_a, second_a)
    # a seeded reset still plays the game of that seed
    assert _first_hands(a, 5) == first_a and a.unwrapped.game_seed == 5


def test_unseeded_first_reset_uses_entropy() -> None:
    seeds = set()
    for _ in range(3):
        env = rummy_v0.raw_env(players=2)
        env.reset()
        seeds.add(env.game_seed)
    assert len(seeds) == 3


@pytest.mark.parametrize("kwargs", [{"auto_forced": True},
                                    {"opponents": {1: "greedy"}, "auto_forced": True,
                                     "normalize": True, "history": 4}])
def test_pettingzoo_api_and_seed_with_options(kwargs: dict) -> None:
    api_test(rummy_v0.env(players=3, **kwargs), num_cycles=200)
    seed_test(lambda: rummy_v0.env(players=3, **kwargs), num_cycles=200)


@pytest.mark.parametrize("greedy", [False, True])
def test_every_masked_action_is_legal_under_the_option_variants(greedy: bool) -> None:
    # the env's candidates are built for the default meld rules; under the §11 variants
    # only the legal ones may be offered (an illegal one raises in step)
    rules = RuleSet(knock_timing="start", joker_release="hand", joker_moves="locked",
                    ace_high=False, target_score=40)
    env = rummy_v0.env(players=3, rules=rules)
    env.reset(seed=11)
    _play_out(env, np.random.default_rng(11), greedy=greedy)
    assert not env.agents and isinstance(env.unwrapped.state_.result, GameEnded)


@pytest.mark.parametrize("actions", ["slots", "edits"])
def test_knock_at_the_start_of_a_turn_is_in_the_mask(actions: str) -> None:
    """Under the §11 variant knock_timing="start" a knock is legal before the first draw
    (R6.1 as the variant words it): the mask offers it exactly when the engine allows it."""
    from rummy.views import legal_action_kinds
    rules = RuleSet(knock_timing="start", knock_threshold=60, target_score=40)
    env = rummy_v0.raw_env(players=2, rules=rules, actions=actions, max_edits=4)
    rng = np.random.default_rng(0)
    knocks = 0
    for seed in range(6):
        env.reset(seed=seed)
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            assert bool(mask[rummy_v0.KNOCK_ACTION]) == \
                ("knock" in legal_action_kinds(env.state_))
            knocks += int(mask[rummy_v0.KNOCK_ACTION])
            env.step(int(rng.choice(np.flatnonzero(mask))))
    assert knocks > 0


@pytest.mark.parametrize("size", [53, 104])
def test_count_part_equals_the_packed_counts(size: int) -> None:
    """The observation's count parts (hand 0:53, table 53:157) are ``struct.pack`` of the
    counts as float32, byte for byte: empty, single, repeated (up to 300 copies, beyond
    the held table of next counts) and random multisets."""
    import random
    import struct

    pack = struct.Struct(f"={size}f").pack
    zero = [rummy_v0._F32_ZERO] * size
    rng = random.Random(7)
    cases: list[list[int]] = [[], [0], [size - 1], [3] * 300, list(range(size)) * 2]
    for _ in range(2000):
        cases.append([rng.randrange(size) for _ in range(rng.randrange(30))])
    for places in cases:
        counts = [0] * size
        for i in places:
            counts[i] += 1
        assert rummy_v0._count_part(zero.copy(), places) == pack(*counts)
