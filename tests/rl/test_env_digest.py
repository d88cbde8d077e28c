"""The environment's observations, masks, rewards and meld candidates on seeded random
games, pinned by digest: a speed change to the environment must leave every one of them
as it was (the digests were recorded from the implementation before the fast paths)."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from rummy.rules import RuleSet  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402


def digest(players: int, rules: RuleSet, seeds: range, **kwargs: object) -> str:
    """sha256 over every ``env.last()`` of random games (uniform over the mask, the
    actions from a seeded generator): the agent, observation and mask bytes, reward,
    termination, truncation, the full game state (so every event the engine applied),
    and the candidates' tables in notation when in the infos."""
    env = rummy_v0.raw_env(players=players, rules=rules, **kwargs)
    h = hashlib.sha256()
    rng = random.Random(players)
    for seed in seeds:
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            h.update(agent.encode())
            h.update(repr(env.state_).encode())
            for key in sorted(obs):
                h.update(key.encode())
                h.update(np.ascontiguousarray(obs[key]).tobytes())
            h.update(repr((round(float(reward), 9), term, trunc)).encode())
            if "candidates" in info:
                h.update(repr(list(info["candidates"])).encode())
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
    return h.hexdigest()


CASES = {
    "2p-default": (2, RuleSet(), range(1, 9), {}),
    "3p-default": (3, RuleSet(), range(20, 24), {}),
    "4p-default-history": (4, RuleSet(), range(40, 42), {"history": 4, "normalize": True}),
    "2p-per-player": (2, RuleSet(opening_meld_per_player=True), range(60, 64), {}),
    "3p-min-points": (3, RuleSet(opening_meld_min_points=30), range(80, 83), {}),
    "2p-auto-forced": (2, RuleSet(), range(100, 104), {"auto_forced": True}),
}

EXPECTED: dict[str, str] = {
    '2p-auto-forced': '9f6ad7cd7268f36d221a9e1fe54b6e83e082967b623d9ce17344b9a12c06c88a',
    '2p-default': 'f3fe853cc28c9cca707539642ea40c06353cf6cc5dc543895ff807c6682ebe62',
    '2p-per-player': 'e0a703a0ee908e1bb0e07072829be8eb319d0de9e742f9fb86292ff94449e9fc',
    '3p-default': 'beb7e271fd755096ca616c6da52158be8763762ea6ca74b2581358ad6e843ae9',
    '3p-min-points': '9de0af4dc489ff0a54491c5c604ef32fa6780d036063f997d8815cd1c75c5f94',
    '4p-default-history': '3acd19ba234a99418d1df2861ab3ce741dfc5c208f71dc092cfb4f558f4a7371',
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_games_are_unchanged(case: str) -> None:
    players, rules, seeds, kwargs = CASES[case]
    assert digest(players, rules, seeds, **kwargs) == EXPECTED[case]


if __name__ == "__main__":  # print the digests (to pin a deliberate change)
    for name in sorted(CASES):
        p, r, s, kw = CASES[name]
        print(f"    {name!r}: {digest(p, r, s, **kw)!r},")
