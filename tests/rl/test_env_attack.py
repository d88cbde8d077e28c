"""Adversarial checks of the environment's fast paths (cached slots, the mask's bytes, the
fixed commands, the plan cache) against the behaviour of the reference implementation
(main at f47e0ce, before those paths): what a caller can do that the random games of
test_env_differential.py do not, each with its configuration and seed."""

from __future__ import annotations

import copy
import gc
import pickle

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from rummy.commands import Draw, Pass  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy_env import _candidates  # noqa: E402
from rummy_env import manipulation_rummy_v0 as v0  # noqa: E402
from tests.rl import envdiff  # noqa: E402


def test_command_of_and_step_take_action_indices_only() -> None:
    """players=3, seed=11, seat 1 to draw: an integral float is its index (1.0 is pass,
    as the reference answered); 1.5, None and "0" are no action index, for ``command_of``
    (the reference's ValueError; the fixed-command table raised TypeError) and for
    ``step`` (which once played ``int(1.5)`` = pass and ``int("0")`` = draw)."""
    env = v0.raw_env(players=3)
    env.reset(seed=11)
    seat = env.state_.turn
    assert env.command_of(1.0) == Pass(seat)  # type: ignore[arg-type]
    assert env.command_of(np.float64(0.0)) == Draw(seat)  # type: ignore[arg-type]
    for bad in (1.5, None, "0", np.float32(0.5)):
        with pytest.raises(ValueError, match="is not an action index"):
            env.command_of(bad)  # type: ignore[arg-type]
    before = env.state_
    for bad in (1.5, "0", [0]):
        with pytest.raises(ValueError, match="is not an action index"):
            env.step(bad)  # type: ignore[arg-type]
    assert env.state_ is before
    env.step(np.float64(0.0))  # type: ignore[arg-type]
    assert env.state_.version == before.version + 1


def test_fixed_commands_equal_fresh_ones() -> None:
    """The shared command objects of actions 0..3 are the reference's values."""
    env = v0.raw_env(players=5)
    env.reset(seed=3)
    seat = env.state_.turn
    assert [env.command_of(a) for a in range(v0.N_FIXED)] == [
        Draw(seat), Pass(seat), v0.Knock(seat), v0.EndTurn(seat)]
    assert env.command_of(np.int64(1)) == Pass(seat)
    assert env.command_of(True) == Pass(seat)


@pytest.mark.parametrize("how", ["own", "clone", "deepcopy", "pickle"])
def test_a_mask_changed_by_the_caller_leaves_legality(how: str) -> None:
    """knock_timing="start" (a mask owned by the environment, whose writeable flag numpy
    lets a caller set again), players=2, seed=10; or a copied environment (its mask a
    writable copy in the reference; the shared read-only one here, so the test puts a
    writable copy in its cache): a caller who changes the mask does not make an action
    legal. (The reference read the changed mask: step(EXACT_ACTION) reached
    command_of.)"""
    env = v0.raw_env(players=2, rules=RuleSet(knock_timing="start") if how == "own" else None)
    env.reset(seed=10)
    env.legal_mask()
    if how == "clone":
        env = env.clone()
    elif how == "deepcopy":
        env = copy.deepcopy(env)
    elif how == "pickle":
        env = pickle.loads(pickle.dumps(env))
    mask = env.legal_mask()
    assert not mask[v0.EXACT_ACTION]
    if how != "own":  # a copy's mask is the shared one again: a view of immutable bytes
        with pytest.raises(ValueError, match="WRITEABLE"):
            mask.flags.writeable = True
        mask = mask.copy()
        env._mask = mask  # a caller reaching into the cache: legality still holds
    mask.flags.writeable = True
    mask[:] = 1
    with pytest.raises(ValueError, match="is not legal"):
        env.step(v0.EXACT_ACTION)


@pytest.mark.parametrize("how", ["clone", "deepcopy", "pickle"])
def test_a_copied_environment_keeps_its_mask_read_only(how: str) -> None:
    """players=2, seed=10, the mask read before the copy: the copy's mask is read-only
    too (the reference copied the cached mask, writable)."""
    env = v0.raw_env(players=2)
    env.reset(seed=10)
    env.legal_mask()
    other = (env.clone() if how == "clone" else copy.deepcopy(env) if how == "deepcopy"
             else pickle.loads(pickle.dumps(env)))
    assert not other.legal_mask().flags.writeable


def test_shared_masks_bytes() -> None:
    """Every shared mask has its bytes in the table that step reads."""
    masks = [*v0._PHASE_MASKS.values(), v0._NO_MASK, *(m for ms in v0._MOP_MASKS for m in ms)]
    for m in masks:
        assert v0._MASK_BYTES[id(m)] == m.tobytes()
        assert not m.flags.writeable


def test_observations_are_fresh_and_writable() -> None:
    """players=4, normalize, seed=2: each observation is the caller's own (changing it
    changes no later observation), float32, C-contiguous, aligned."""
    env = v0.raw_env(players=4, normalize=True)
    env.reset(seed=2)
    a = env.agent_selection
    first = env.observe(a)
    keep = {k: v.copy() for k, v in first.items()}
    for v in first.values():
        v[:] = 9
    again = env.observe(a)
    for k in keep:
        assert again[k].tobytes() == keep[k].tobytes()
        assert again[k].flags.writeable and again[k].flags.c_contiguous
        assert again[k].flags.aligned
    assert again["observation"].dtype == np.float32
    assert not np.shares_memory(again["observation"], env.observe(a)["observation"])


def test_interleaved_environments_equal_each_alone() -> None:
    """Two environments (players 3 and 5, seeds 7 and 8) stepped in turn read as each
    stepped alone: no state shared through the module's caches."""
    a = {"seed": 7, "players": 3}
    b = {"seed": 8, "players": 5, "rules": {"opening_meld_per_player": True}}
    la, lb = envdiff.interleaved(a, b)
    assert la == envdiff.alone(a)
    assert lb == envdiff.alone(b)


def test_identity_cache_survives_id_reuse() -> None:
    """A table answered by identity, dropped, and another table made (maybe at the same
    address): the answer is the new table's."""
    t1 = ((0, 1, 2), (13, 14, 15))
    first = _candidates._table_layoff_fits(t1)
    assert first == _candidates._layoff_fits_of(t1)
    del t1
    gc.collect()
    for k in range(50):
        t2 = ((k % 9 + 26, k % 9 + 27, k % 9 + 28),)
        assert _candidates._table_layoff_fits(t2) == _candidates._layoff_fits_of(t2)
        assert _candidates._table_pool(t2) == _candidates._table_pool_of(t2)
        del t2


def test_plan_cache_tells_equal_hashes_apart() -> None:
    """Two plan-cache keys with equal hashes (``hash(-1) == hash(-2)``): the one not
    stored is searched, not answered with the other's plan."""
    env = v0.raw_env(players=2)
    env.reset(seed=4)
    while env.state_.phase != "meld_or_pass":
        env.step(int(np.flatnonzero(env.legal_mask())[0]))
    cands = env.candidates()
    assert cands is not None
    v = cands.view
    rules, table, hand = v.rules, v.table, v.hand
    key_a = (rules, table, hand + (-1,), v.opened[v.seat], 0)
    key_b = (rules, table, hand + (-2,), v.opened[v.seat], 0)
    assert hash(key_a) == hash(key_b) and key_a != key_b
    poison = (((0, 1, 2),), (0, 1, 2))
    _candidates._PLANNED[key_a] = poison
    try:
        got = _candidates._planned(rules, table, hand + (-2,), v.opened[v.seat], 0, v)
        assert got == _candidates.solver_play(v, 0)
        assert got is not poison
    finally:
        _candidates._PLANNED.pop(key_a, None)
        _candidates._PLANNED.pop(key_b, None)


def test_a_pickle_with_an_earlier_releases_caches_loads() -> None:
    """A pickled environment whose caches have the names and shapes of an earlier release
    (``_table_tmpl``, ``_hand_part`` rows holding arrays, no ``_mask_bytes``) loads with
    its caches empty and observes and steps as the original (players=2, seed=4)."""
    env = v0.raw_env(players=2)
    env.reset(seed=4)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.legal_mask())[0]))
    state = env.__getstate__()
    state["_table_tmpl"] = np.zeros(v0.OBS_SIZE, dtype=np.float32)
    state["_hand_part"] = [(None, np.zeros(53, dtype=np.float32), 0.0)] * 2
    old = v0.raw_env.__new__(v0.raw_env)
    old.__setstate__(copy.deepcopy(state))
    assert not hasattr(old, "_table_tmpl")
    for agent in env.agents:
        a, b = env.observe(agent), old.observe(agent)
        assert a["observation"].tobytes() == b["observation"].tobytes()
        assert a["action_mask"].tobytes() == b["action_mask"].tobytes()
    action = int(np.flatnonzero(env.legal_mask())[0])
    env.step(action)
    old.step(action)
    assert old.state_ == env.state_
