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
digest (the entries whose games hold a non-index action or a copied mask were recorded
again after the two deliberate fixes named at ``FAST``: only those lines differ). To see
where two implementations part, run ``python tests/rl/envdiff.py OUT.json`` under each and
compare the lines.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pettingzoo")

from tests.rl.envdiff import digest, lines_of  # noqa: E402

#: recorded from the reference implementation (main at f47e0ce), then again where two
#: deliberate fixes change a line: an action that is no index (``"x"``) is refused with
#: "is not an action index", and a copied environment's mask stays read-only
FAST = {
    "cands:1:5":
        "59836dfeeaf14c27764e20ccfb148901d1b47555fb6b4aa699fc3095629e9735",
    "play100:cfg0":
        "1c59d37d76813088745e848697e4c49f9f7d439394c61ca458cb601827aed01e",
    "play100:cfg1":
        "3da3f235e35fc2502b9089db0c6b155d936e8b1ef386bfca04c01c1fb6220a45",
    "play100:cfg2":
        "0dbffa205d70a979b7a5af99c87aa26146a6c2dbc6733b2d6855f42885a85e56",
    "play100:cfg3":
        "60520275c8692a7de5d48122cdf50840e711954bfc1685368a153a9939312513",
    "play100:cfg4":
        "e63c2a6fee590798f3b8921b046da7a4df71c64ce2ee6c01020c07c36d82b3ae",
    "play100:cfg5":
        "56f7d6ce56f0551ba36534d042532944d08a78d07a233caa6185c266eefd89a1",
    "play100:cfg6":
        "04629b832131390b3a4bb2906e98fe27994a65314759415c2aedc1143ef0b98b",
    "play100:cfg7":
        "0686675c1412f4a10b26240ab592a902e28b99e095760f90155988f31a4bd9ce",
    "play100:cfg8":
        "792dde4bbd6ba416089cb6b07d2989e35bad56c2324f3f5705c639b37a515d5e",
    "play100:cfg9":
        "f4ff86b809a83c1b6af93bd8a3562d57f50cded0d7c37998b70bad21ac6c7a85",
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
    "cands:16:1":
        "a6b659494674df544f9d8e103eeeec42ce97de8fee78ed6a93e2f872b5de0892",
    "cands:2:5":
        "f61156f842f5cc039f7126e10a93310ab5548668946b6f6ad052d198c575f104",
    "play100:inter2":
        "7bc9540576b8f5a764858593c2699c383f53784f4de54dd4727b92c2ca26151e",
    "play100:inter4":
        "85563df7a712a0b91e6a456a4087c36ce03b08d91349dc483e2609bab54f8986",
    "play1:cfg0":
        "5b363be390191fc5f0236500b72c338676b13a787a96c7c74e296b63a0115db2",
    "play1:cfg1":
        "0e6421d79be9485da03a90d4db8d8b580dd21ce966f6b24e03f391f649be6f99",
    "play1:cfg10":
        "b856b6d0d1bd80d3abd78d727d46e879e7967286ebb308c75cb4a07e6219967c",
    "play1:cfg11":
        "5780649f73552b84fe4276ecc8669d9d57a32b7878bce5e4d86a99bd257145e3",
    "play1:cfg12":
        "73e759d22c0c21d9ed50bbe8e686bcb4ef09a93dafd11b85e9a94bd73840f5a8",
    "play1:cfg13":
        "11b539ab093c5cd7a27fc6a5c1088f262bd751f35449a41b9892b92ff553d4f5",
    "play1:cfg14":
        "b2212e776f49f92bd4085704207ec6b482dab12349bf9529efd564fd0dea6f27",
    "play1:cfg15":
        "4687625ed77e9e336c46337392a12f48274b1025eb1e1582c4abedd166cdfcb8",
    "play1:cfg16":
        "2f9d7b9d617c5a8285e548f27293b55ffa15af0238fbeaf59c2f6c6f889fbc2a",
    "play1:cfg17":
        "ba3e2ca6dd498641bb28456c1c61f68bb7e5243ecc41bf0246c04d02b4ac7ef5",
    "play1:cfg18":
        "025ffa5fa9bbc6234182fd07c5aa43ba4a2fbc117ccac8974bdea35d1c001c36",
    "play1:cfg19":
        "ab17b58aecf072059e8ad2e951273f89994436cbe727e174b677f2ab06718a73",
    "play1:cfg2":
        "5d9ccb67eb052a7c76ff4d98953b368eda15bda9c65ca5f30aadceafdd332cf9",
    "play1:cfg20":
        "b1e8b1a09fa814dfdf9a0d7f1116224b7aaaae6bb155c6ec60c19c3b02f26b5d",
    "play1:cfg21":
        "6f75443184adef704b3c51238762c6ed607943e93be308b25ba3b7b836dcb02e",
    "play1:cfg22":
        "040021ceba8f2473541547fb8400095ff60bafd0c43793356cd0377835586116",
    "play1:cfg23":
        "2f8a1a8b8a55f13b37179cf52480e8aa9148fd5492f65d0018cd93b05e2fbf82",
    "play1:cfg24":
        "5a8824241109b74c1cd32c3d53fb6e76cc0c7338ade720d4c7b8b8be51182e46",
    "play1:cfg25":
        "03e839bd38bcc29541c38d2d6b070b941553909c77cf57f1dc5ce4c431be3518",
    "play1:cfg26":
        "e7c40c651d36d8762b3a40a35a5d5dd1237d3ed16f32f97baea6947f33c4a89b",
    "play1:cfg27":
        "2891a8435ada4c4d2bba767e304534e0a208ac48b7a59a86bee9ae382527a0b0",
    "play1:cfg28":
        "80f7551986623f21acc154ab6ed1a43fd94dcb568e233799e34a21f5f6893d43",
    "play1:cfg29":
        "9aebc155a22f992b4aa1a09d46fe824bb434686ba581c1f908772d7a88d3d450",
    "play1:cfg3":
        "c1b0ca697b5c3258b22ae902a318c035902288d2040eb889a099887b312d4f7d",
    "play1:cfg30":
        "9f620a37d4c4877add24a023f041f6a8841e2fd6e61692465683ef04591a962c",
    "play1:cfg31":
        "5be306c72d157897774e0a9011958aba904b0b2f8a81929853df8d0f4883dd5a",
    "play1:cfg32":
        "f6d38c349a1326937b32c2fb92aeb22fa5a5e8d516d7c5abc3f082ad95a6deba",
    "play1:cfg33":
        "495891fb4cc99782a1b6cc65fc618b046d109355a29bfabe0c21cbb834c750b1",
    "play1:cfg34":
        "4da5412ffbe3e5925000fa889053c542078ff0b2174a7256a7135e7fca16fc68",
    "play1:cfg35":
        "a32fef7b023505bab73c5094da3d384aa19555111537994082e2173297f7a22e",
    "play1:cfg36":
        "9d6318fe6a0dd95837da15f875f049c3e151fc3f5f516b6254472bc6c51a3112",
    "play1:cfg37":
        "d2d119b5e488f756a441a2843334f5ef09f13085439ce75834818492a2c58b1c",
    "play1:cfg38":
        "c72c245b75a4aa9609f71fd8112b81f487253ef28d71fe54ba2274e5ba24db8a",
    "play1:cfg39":
        "83846a45d633626f75db64ab56aea6d887712fccaeb81266edc90f21be47517d",
    "play1:cfg4":
        "c6ec65d475b9225b5b37e0e511d1324f12175384d98fb00c37fc8ccba6087e32",
    "play1:cfg5":
        "c62a3399d4328a791f4e4443ff38417c099e09438d0ddb07786699b86aaa30f2",
    "play1:cfg6":
        "b7abf2ef805af14fe242a4a90475dd1c92b4f34439a1a336239acf2b56cb0643",
    "play1:cfg7":
        "e7c3449f796ec2f0570aec3868b215dfec1f4386bef4e6270187b9f06a5043c4",
    "play1:cfg8":
        "f405afcc5480fb20a29fdb350298eba246538fdd879b064839a88dadfcadf52d",
    "play1:cfg9":
        "62e13dc27f23e2bcbf094094a7fee4a887894d40e94e81f0e9c46c2c4e5f18be",
    "play1:inter0":
        "124897f653de7de15fbd6aff0dfa286a3d1c62fa4b5e318f98e75d5252cbc82e",
    "play1:inter2":
        "50ba377a86432ff4c3a07f85da27869d16457b3c394f3766f8266d152a0617a0",
    "play1:inter4":
        "cde999d000dc0da96910da2b8fd70e59068f5ebbedd29afb07df89770edb2cb0",
    "play1:single0":
        "9f4afeff9f4e157bbf4c5063d7284c3aebe6996afa948207c288114b311c2637",
    "play1:single1":
        "56b16d8aca2c9a74556c6497eb7efb4856b2e0dfca868c8b18ee7ed7e7a13eba",
    "play1:single2":
        "4e1313b54421f9506ea3208697088dc9c297d1049c05d397ebb5916acde9a3ce",
    "solver:6:2":
        "e9cdc4e2dea957d5af6ed826acb6554cd88098f29d46bb3dbdbdcbc0d7c53f11",
}


@pytest.mark.parametrize("key", sorted(FAST))
def test_matches_the_reference(key: str) -> None:
    assert digest(lines_of(key)) == FAST[key]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(SLOW))
def test_matches_the_reference_slow(key: str) -> None:
    assert digest(lines_of(key)) == SLOW[key]
