"""OpenSpiel-grade state in the AEC env: public history, global state, normalised
observations, clone() and resample_from_infostate()."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from rummy.bots.search import unseen_cards  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.views import view  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402


def _play(env, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(n):
        if env.state_.phase == "game_over":
            return
        env.step(int(rng.choice(np.flatnonzero(env.legal_mask()))))


def test_history_is_public_and_in_the_observation() -> None:
    env = rummy_v0.raw_env(players=3, history=8)
    env.reset(seed=4)
    _play(env, 40)
    obs = env.observe("player_0")
    hist = obs["history"].reshape(8, rummy_v0.HISTORY_FEATURES)
    assert obs["history"].shape == (8 * rummy_v0.HISTORY_FEATURES,)
    assert env.observation_space("player_0")["history"].contains(obs["history"])
    last8 = env.history[-8:]
    for row, (seat, kind, added) in zip(hist, last8, strict=True):
        assert row[kind] == 1 and row[:5].sum() == 1
        assert row[5 + (seat - 0) % 3] == 1 and row[5:10].sum() == 1
        assert row[10:].sum() == len(added)
    # I3: a draw never shows the card; rows depend on the observer only by relative seats
    assert all(added == () for _, kind, added in env.history if kind == 0)
    other = env.observe("player_1")["history"].reshape(8, -1)
    assert np.array_equal(other[:, :5], hist[:, :5]) and np.array_equal(other[:, 10:],
                                                                         hist[:, 10:])
    early = rummy_v0.raw_env(players=2, history=8)
    early.reset(seed=1)
    assert not early.observe("player_0")["history"].any()  # nothing played yet


def test_global_state_holds_every_card() -> None:
    env = rummy_v0.raw_env(players=4)
    env.reset(seed=2)
    _play(env, 60)
    s = env.state_
    st = env.state()
    assert st.shape == (rummy_v0.STATE_SIZE,) and env.state_space.contains(st)
    hands = st[:rummy_v0.MAX_SEATS * 53].reshape(rummy_v0.MAX_SEATS, 53)
    for seat in range(4):
        assert hands[seat].sum() == len(s.hands[seat])
    stock = st[rummy_v0.MAX_SEATS * 53:rummy_v0.MAX_SEATS * 53 + 53]
    table = st[rummy_v0.MAX_SEATS * 53 + 53:rummy_v0.MAX_SEATS * 53 + 157]
    # I1: the cards dealt or drawn are in the hands or on the table, the rest in the stock
    assert hands.sum() + table.sum() == s.stock_pos
    assert stock.sum() == len(s.deck) - s.stock_pos


def test_normalised_observation() -> None:
    raw = rummy_v0.raw_env(players=2)
    norm = rummy_v0.raw_env(players=2, normalize=True)
    for e in (raw, norm):
        e.reset(seed=3)
        _play(e, 30)
    a = raw.observe("player_0")["observation"]
    b = norm.observe("player_0")["observation"]
    sc = rummy_v0.scales(2, RuleSet())
    assert np.allclose(b, a / sc)
    assert b[:157].max() <= 1.0 and b[162] <= 1.0
    assert b[157] == pytest.approx(len(raw.state_.hands[0]) / 10)


def test_clone_is_independent() -> None:
    env = rummy_v0.raw_env(players=2, opponents={1: "greedy"})
    env.reset(seed=8)
    _play(env, 10)
    twin = env.clone()
    assert twin.state_ == env.state_ and twin.history == env.history
    _play(twin, 20, seed=1)
    assert twin.state_ != env.state_
    before = env.state_
    _play(env, 20, seed=1)  # the same choices give the same game (bots copied too)
    assert env.state_ == twin.state_ and before != env.state_


def test_resample_from_infostate_keeps_what_the_seat_sees() -> None:
    env = rummy_v0.raw_env(players=3)
    env.reset(seed=6)
    _play(env, 50)
    me = env.state_.turn
    agent = f"player_{me}"
    seen = set()
    for seed in range(5):
        other = env.resample_from_infostate(agent, seed)
        assert np.array_equal(other.observe(agent)["observation"],
                              env.observe(agent)["observation"])
        assert np.array_equal(other.legal_mask(), env.legal_mask())
        v1, v2 = view(other.state_, me), view(env.state_, me)
        assert v1.hand == v2.hand and v1.table == v2.table
        assert sorted(unseen_cards(v1)) == sorted(unseen_cards(v2))
        seen.add(other.state_.hands)
        _play(other, 30, seed=seed)  # the resampled game plays on
    assert len(seen) > 1  # the hidden cards differ between samples
    with pytest.raises(ValueError):
        env.resample_from_infostate("player_7", 0)
