"""The env's fast paths under every §11 variant: the trusted ``Melded`` events equal the
engine's checked ones; the shared read-only masks cannot be written; copies still work."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from rummy.rules import RuleSet  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402
from tests.rl.trusted import trusted_event_is_the_engines  # noqa: E402

VARIANTS = {
    "ace_low": RuleSet(ace_high=False),
    "release_hand": RuleSet(joker_release="hand"),
    "locked": RuleSet(joker_moves="locked"),
    "knock_start": RuleSet(knock_timing="start"),
    "big_hands": RuleSet(hand_size=20, knock_threshold=1000, target_score=60),
    "all_restrictive": RuleSet(ace_high=False, joker_moves="locked", joker_release="hand",
                               opening_meld_min_points=10),
}


@pytest.mark.parametrize("rules", VARIANTS.values(), ids=VARIANTS.keys())
def test_trusted_meld_events_are_the_engines_under_every_variant(rules: RuleSet) -> None:
    """R5 under the §11 variants: every slot's trusted Melded event (or None) matches the
    engine's checked step of that slot's table, and every masked-in slot is legal."""
    checked = 0
    for players, seed in ((2, 0), (5, 1)):
        env = rummy_v0.raw_env(players=players, rules=rules)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        phases = 0
        while env.state_.phase != "game_over" and phases < 40:
            s = env.state_
            if s.phase == "meld_or_pass":
                phases += 1
                cands = env.candidates()
                assert cands is not None
                for slot in cands.legal_slots():
                    assert cands.table(slot) is not None
                    checked += trusted_event_is_the_engines(s, cands, slot)
            env.step(int(rng.choice(np.flatnonzero(env.legal_mask()))))
    assert checked > 0


def test_a_shared_mask_cannot_be_made_writable() -> None:
    """The slot mode's masks are shared by every env: numpy lets an array owning its
    memory be made writable again, which would corrupt every env's later steps; the masks
    are views of bytes, so that is refused."""
    env = rummy_v0.raw_env(players=2)
    env.reset(seed=3)
    other = rummy_v0.raw_env(players=2)
    other.reset(seed=4)
    for _ in range(30):
        mask = env.legal_mask()
        with pytest.raises(ValueError):
            mask[0] = 1
        with pytest.raises(ValueError):
            mask.flags.writeable = True
        obs = env.observe(env.agent_selection)["action_mask"]
        obs[:] = 1  # the observation's mask is the caller's copy
        assert not np.array_equal(env.legal_mask(), obs)
        env.step(int(np.flatnonzero(env.legal_mask())[0]))
    assert other.legal_mask().sum() >= 1


def test_copies_of_an_env_play_on_alike() -> None:
    """deepcopy and pickle of an env with shared masks and cached candidates give envs
    that play the same game as the original."""
    env = rummy_v0.raw_env(players=3)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(40):
        env.legal_mask()
        env.candidates()
        env.step(int(rng.choice(np.flatnonzero(env.legal_mask()))))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(60):
        if not env.agents:
            break
        obs, _, term, trunc, _ = env.last()
        a = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        for e in [env, *copies]:
            o, _, _, _, _ = e.last()
            assert np.array_equal(o["observation"], obs["observation"])
            assert np.array_equal(o["action_mask"], obs["action_mask"])
            e.step(a)
        assert copies[0].state_ == env.state_ == copies[1].state_
