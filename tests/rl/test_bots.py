"""Training against the project's bots: the opponents hook, single_agent (Gymnasium),
step_command and the mapping of any legal command (a bot's, a record's) to an action."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from rummy.bots import make_bot  # noqa: E402
from rummy.commands import Meld, Pass  # noqa: E402
from rummy.errors import RummyError  # noqa: E402
from rummy.record import from_record, to_record  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.simulate import play_game  # noqa: E402
from rummy.views import view  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402
from rummy_env import single_agent  # noqa: E402
from rummy_env.single_agent import SingleAgentEnv  # noqa: E402


def test_single_agent_passes_gymnasium_check_env() -> None:
    env = single_agent(seat=0, opponents={1: "greedy"})
    assert isinstance(env, SingleAgentEnv)
    check_env(env, skip_render_check=True)
    check_env(single_agent(seat=1, opponents={0: "basic", 2: "random"}),
              skip_render_check=True)


@pytest.mark.parametrize("seat,opponents", [(0, {1: "greedy"}),
                                            (2, {0: "human", 1: "strategic"})])
def test_single_agent_whole_game_rewards(seat: int, opponents: dict) -> None:
    rules = RuleSet(target_score=40)
    env = single_agent(seat=seat, opponents=opponents, rules=rules, normalize=False)
    obs, info = env.reset(seed=9)
    rng = np.random.default_rng(2)
    total, done, steps = 0.0, False, 0
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.sum() >= 2  # auto_forced: only real choices
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        assert env.aec.state_.turn == seat
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not info["illegal_action"]
        total += reward
        done = term or trunc
        steps += 1
    s = env.aec.state_
    expected = s.totals[seat] / 40 + (1 / len(s.result.winners)
                                     if seat in s.result.winners else 0.0)
    assert total == pytest.approx(expected)
    assert not env.action_masks().any()


def test_single_agent_illegal_action_plays_the_default_or_raises() -> None:
    env = single_agent(seat=0, opponents={1: "greedy"})
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, _, _, _, info = env.step(illegal)
    assert info["illegal_action"]
    strict = single_agent(seat=0, opponents={1: "greedy"}, illegal="raise")
    strict.reset(seed=1)
    with pytest.raises(ValueError, match="not legal"):
        strict.step(illegal)


def test_single_agent_seeding_is_reproducible() -> None:
    a, b = single_agent(opponents={1: "greedy"}), single_agent(opponents={1: "greedy"})
    for seed in (4, None, None):
        oa, _ = a.reset(seed=seed)
        ob, _ = b.reset(seed=seed)
        assert np.array_equal(oa, ob)
        assert a.aec.state_ == b.aec.state_


def test_opponents_hook_in_the_aec_env() -> None:
    """Bot seats are played inside step and are not agents; the game is the game the bots
    and the agent's choices make."""
    from pettingzoo.test import api_test
    api_test(rummy_v0.env(players=3, opponents={1: "greedy", 2: "basic"}), num_cycles=200)
    env = rummy_v0.env(players=3, opponents={1: "greedy"}, rules=RuleSet(target_score=40))
    env.reset(seed=2)
    assert env.possible_agents == ["player_0", "player_2"]
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert agent != "player_1"
        if term or trunc:
            env.step(None)
            continue
        assert env.unwrapped.state_.turn == int(agent[-1])
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.unwrapped.state_.result is not None
    with pytest.raises(ValueError, match="not a seat"):
        rummy_v0.raw_env(players=2, opponents={2: "greedy"})
    with pytest.raises(ValueError, match="unknown bot"):
        rummy_v0.raw_env(players=2, opponents={1: "nobot"})
    with pytest.raises(ValueError, match="every seat"):
        rummy_v0.raw_env(players=2, opponents={0: "greedy", 1: "greedy"})


@pytest.mark.parametrize("bots", [("basic", "human"), ("greedy", "strategic", "random")])
def test_every_bot_move_maps_to_an_action(bots: tuple[str, ...]) -> None:
    """Each bot move is played with step_command; action_of gives its slot, or
    EXACT_ACTION for a meld in no slot; a slot's command has the same table."""
    from rummy.melds import canonical_table
    rules = RuleSet(target_score=60)
    env = rummy_v0.raw_env(players=len(bots), rules=rules)
    env.reset(seed=21)
    players = [make_bot(b, 21 * 8 + i) for i, b in enumerate(bots)]
    melds = exact = 0
    while env.state_.phase != "game_over":
        s = env.state_
        cmd = players[s.turn].act(view(s, s.turn))
        action = env.action_of(cmd)
        assert 0 <= action < rummy_v0.N_ACTIONS
        if isinstance(cmd, Meld):
            melds += 1
            if action == rummy_v0.EXACT_ACTION:
                exact += 1
            else:
                assert env.legal_mask()[action]
                assert (canonical_table(env.command_of(action).table)
                        == canonical_table(cmd.table))
        else:
            assert env.command_of(action) == cmd
        env.step_command(cmd)
    assert melds > 0
    assert exact < melds  # most bot melds are in a slot


def test_step_command_refuses_illegal_and_foreign_commands() -> None:
    env = rummy_v0.raw_env(players=2)
    env.reset(seed=1)
    seat = env.state_.turn
    with pytest.raises(RummyError):
        env.step_command(Pass(seat))  # a draw is due (R3.1)
    with pytest.raises(ValueError, match="not the seat to act"):
        env.step_command(Pass(1 - seat))


def test_every_record_line_maps_to_an_action() -> None:
    """A game written as a record and read back: every command in it maps to an action
    and replays through step_command to the same result."""
    game = play_game(["human", "basic"], seed=5, record=True)
    events = from_record(to_record(list(game.events)))
    cmds = rummy_v0.commands_of_events(events)
    env = rummy_v0.raw_env(players=2, rules=events[0].rules)
    env.reset(seed=events[0].seed)
    for cmd in cmds:
        assert 0 <= env.action_of(cmd) < rummy_v0.N_ACTIONS
        env.step_command(cmd)
    assert env.state_.result == events[-1]


def test_single_agent_reset_never_returns_a_finished_game() -> None:
    """With target_score 50 the greedy opponent sometimes goes out in its first turn and
    ends the game before the learner's first decision (MaskablePPO then stepped a finished
    game and the engine raised GameOverError); reset skips such a game."""
    rules = RuleSet(target_score=50)
    env = single_agent(seat=0, opponents={1: "greedy"}, rules=rules)
    rng = np.random.default_rng(0)
    skipped = 0
    for g in range(400):
        _, info = env.reset(seed=g)
        skipped += info["skipped_games"]
        assert env.action_masks().any() and env.aec.state_.phase != "game_over"
        env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    assert skipped > 0  # the case happens within these seeds


def test_importing_the_single_agent_module_leaves_the_function_in_place() -> None:
    """``import rummy_env.single_agent`` (a test or a user's code) once bound the package's
    name ``single_agent`` to the module, so ``rummy_env.single_agent(...)`` failed with
    'module' object is not callable, depending on import order."""
    import importlib

    import rummy_env
    importlib.import_module("rummy_env.single_agent")
    env = rummy_env.single_agent(seat=0, opponents={1: "basic"})
    assert callable(rummy_env.single_agent) and hasattr(env, "step")
