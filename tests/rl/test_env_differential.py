"""The environment against digests recorded from the reference implementation (main at
f47e0ce, before the environment's fast paths: cached and counted meld slots, legality from
the mask's bytes, the solver's flat path, observations packed as bytes, shared commands).

Each entry is the sha256 of the lines of :func:`tests.rl.envdiff.lines_of`: scripted games
over player counts 2-5, the slot and edit modes, the §11 variants, bot opponents,
``auto_forced``, ``normalize``, ``history``, random legal and illegal actions, clones,
deep copies and pickles stepped beside the original, observations changed by the caller,
actions on done agents, a second game on the same object, two environments interleaved,
the single-agent wrapper; every meld slot's table and event of
:class:`rummy_env._candidates.Candidates` on game and random hands; the solver under node
limits. A change of any observation, mask, reward, infos entry, state or error changes a
digest. To see where two implementations part, run ``python tests/rl/envdiff.py OUT.json``
under each and compare the lines.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

from tests.rl.envdiff import digest, lines_of  # noqa: E402

#: recorded from the reference implementation (main at f47e0ce)
FAST = {
    "cands:1:5":
        "59836dfeeaf14c27764e20ccfb148901d1b47555fb6b4aa699fc3095629e9735",
    "play100:cfg0":
        "1c59d37d76813088745e848697e4c49f9f7d439394c61ca458cb601827aed01e",
    "play100:cfg1":
        "71d33ded96c39f43cecc78e8491485a1d21cb2e220a4f3bc7139da6eee124136",
    "play100:cfg2":
        "fd9b822fb31f6df1e1568ab0bedbfce6862f63b4536992b1c9e1dd3c21d2fde4",
    "play100:cfg3":
        "60520275c8692a7de5d48122cdf50840e711954bfc1685368a153a9939312513",
    "play100:cfg4":
        "51a336d6211b534c1a0373604d3c09fe74606c2daef157c6d651763a1afa1c26",
    "play100:cfg5":
        "56f7d6ce56f0551ba36534d042532944d08a78d07a233caa6185c266eefd89a1",
    "play100:cfg6":
        "a0f73836b83f53ed451a8510616ceaec8bf16e829074d6581a9f8ec1ffa1b938",
    "play100:cfg7":
        "0686675c1412f4a10b26240ab592a902e28b99e095760f90155988f31a4bd9ce",
    "play100:cfg8":
        "792dde4bbd6ba416089cb6b07d2989e35bad56c2324f3f5705c639b37a515d5e",
    "play100:cfg9":
        "7b71760b0b1fd44ff4ee61f264fa10cf605c4e7be0efce3e82fbea7e21f9cc42",
    "play100:inter0":
        "fd4c791ee5d507b5f4fcadb940ef8793a11d8f70f20fd6bbce0838aed3e67959",
    "play100:single0":
        "9b71cc362f29f945ca462ad210b9d07704b399bf110ca6b0a7b3118a2939edbd",
    "play100:single1":
        "ef948f23804ac7fbe4157c2bb92c1dd737e3d5459053cca8f568051b90e38180",
    "play100:single2":
        "171bb001e6d3ac0ecfa7187e5778e3af0c6de31c8815d51c2259eba368de116e",
    "solver:1:6":
        "2aa5085654c391efc3057eada749b6eb0b4027f0d91be0a86d6fb60d33187902",
}

#: the same, over more games (``-m slow``)
SLOW = {
    "cands:2:5":
        "f61156f842f5cc039f7126e10a93310ab5548668946b6f6ad052d198c575f104",
    "play100:inter2":
        "7bc9540576b8f5a764858593c2699c383f53784f4de54dd4727b92c2ca26151e",
    "play100:inter4":
        "85563df7a712a0b91e6a456a4087c36ce03b08d91349dc483e2609bab54f8986",
}


@pytest.mark.parametrize("key", sorted(FAST))
def test_matches_the_reference(key: str) -> None:
    assert digest(lines_of(key)) == FAST[key]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(SLOW))
def test_matches_the_reference_slow(key: str) -> None:
    assert digest(lines_of(key)) == SLOW[key]
