"""The low-level action mode ``actions="edits"`` (rummy_env._edit, docs/rl.md "Edit
actions"): whole games under PettingZoo's api_test and Gymnasium's check_env, FINISH
allowed exactly when the engine accepts the working table, every finished action a legal
core command."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from rummy.cards import JOKER, physical  # noqa: E402
from rummy.commands import Meld  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.errors import RummyError  # noqa: E402
from rummy.events import Melded  # noqa: E402
from rummy.melds import canonical_table  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.state import MELD_OR_PASS  # noqa: E402
from rummy_env import _edit  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402
from rummy_env.single_agent import single_agent  # noqa: E402

SHORT = RuleSet(target_score=40)


def _finishing_action(env: rummy_v0.raw_env, mask: np.ndarray) -> int | None:
    """An edit after which FINISH is legal (one step of lookahead), if any: a policy that
    finds lay-offs and simple manipulations that uniform random play rarely reaches."""
    editor = env.editor()
    assert editor is not None
    for a in np.flatnonzero(mask[_edit.PLAY_BASE:_edit.SPLIT_BASE]) + _edit.PLAY_BASE:
        trial = _edit.Editor(editor.state, editor.max_edits)
        trial.melds, trial.hand, trial.edits = list(editor.melds), list(editor.hand), \
            editor.edits
        trial.apply(int(a))
        if trial.command() is not None:
            return int(a)
    return None


def _play_games(players: int, rules: RuleSet, games: int, seed: int,
                max_edits: int = 10) -> tuple[int, int]:
    """Random legal play (finishing when it can) of whole games; every FINISH's command is
    checked against the engine, and the mask's FINISH bit against the engine's verdict on
    the working table. Returns (finished melds, edits)."""
    env = rummy_v0.raw_env(players=players, rules=rules, actions="edits",
                           max_edits=max_edits)
    rng = np.random.default_rng(seed)
    finished = edits = 0
    for g in range(games):
        env.reset(seed=seed * 100 + g)
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.shape == (rummy_v0.N_EDIT_ACTIONS,) and mask.any()
            s = env.state_
            editor = env.editor()
            if editor is not None:  # FINISH is in the mask exactly when the engine agrees
                table = editor.new_table()
                accepted = False
                if table is not None and editor.edits:
                    try:
                        step(s, Meld(s.turn, table))
                        accepted = True
                    except RummyError:
                        pass
                assert bool(mask[rummy_v0.FINISH]) == accepted
            if mask[rummy_v0.FINISH] and rng.random() < 0.8:
                action = rummy_v0.FINISH
            elif editor is not None and editor.edits < max_edits and rng.random() < 0.5 \
                    and (look := _finishing_action(env, mask)) is not None:
                action = look
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            if action == rummy_v0.FINISH:
                cmd = env.command_of(action)
                assert isinstance(cmd, Meld) and cmd.seat == s.turn
                after, events = step(s, cmd)  # a legal core command: the engine accepts it
                env.step(action)
                assert env.history[-1][1] == rummy_v0.KINDS.index("meld")
                melded = next(e for e in events if isinstance(e, Melded))
                assert melded.table == canonical_table(cmd.table, s.table)
                assert env.state_.table == after.table
                finished += 1
            else:
                edits += action > rummy_v0.FINISH
                env.step(action)
        assert env.state_.result is not None  # the game ran to its end
    return finished, edits


@pytest.mark.parametrize("players", [2, 3])
def test_random_edit_play_runs_whole_games(players: int) -> None:
    finished, edits = _play_games(players, SHORT, games=2, seed=players)
    assert finished > 5 and edits > 100


def test_edit_play_under_the_opening_variants() -> None:
    for rules in (RuleSet(target_score=40, opening_meld_per_player=True),
                  RuleSet(target_score=40, opening_meld_min_points=30)):
        _play_games(2, rules, games=1, seed=7)


def test_pettingzoo_api_in_the_edit_mode() -> None:
    api_test(rummy_v0.env(players=2, rules=SHORT, actions="edits", max_edits=6),
             num_cycles=300)


def test_gymnasium_check_env_in_the_edit_mode() -> None:
    env = single_agent(seat=0, opponents={1: "greedy"}, rules=SHORT, actions="edits",
                       max_edits=6)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (rummy_v0.OBS_SIZE + rummy_v0.EDIT_OBS_SIZE,)
    assert env.action_space.n == rummy_v0.N_EDIT_ACTIONS


def _edits_for(env: rummy_v0.raw_env, table: tuple[tuple[int, ...], ...]) -> list[int]:
    """The edits that build ``table`` when it keeps the current melds in place and only
    adds hand cards (new melds after them): the basic bot's plays, triples, lay-offs."""
    old = env.state_.table
    out: list[int] = []
    for i, m in enumerate(old):
        extra = Counter(map(physical, table[i])) - Counter(map(physical, m))
        out += [_edit.PLAY_BASE + c * _edit.MAX_MELDS + i for c in extra.elements()]
    for k, m in enumerate(table[len(old):]):
        out += [_edit.PLAY_BASE + physical(c) * _edit.MAX_MELDS + len(old) + k for c in m]
    return out


def test_every_cheap_slot_can_be_built_edit_by_edit() -> None:
    """The slot mode's cheap candidates (basic play, triples, lay-offs), built as edits,
    finish as a meld of the same cards (jokers may take another legal declaration)."""
    slots = rummy_v0.raw_env(players=2, rules=SHORT)
    edits = rummy_v0.raw_env(players=2, rules=SHORT, actions="edits", max_edits=40)
    rng = np.random.default_rng(0)
    built = 0
    for seed in range(3):
        slots.reset(seed=seed)
        edits.reset(seed=seed)
        while slots.agents and slots.state_.phase != "game_over" and built < 80:
            cands = slots.candidates()
            if cands is not None:
                for table in cands.cheap:
                    probe = edits.clone()
                    for a in _edits_for(probe, table):
                        assert probe.legal_mask()[a], _edit.describe(a)
                        probe.step(a)
                    assert probe.legal_mask()[rummy_v0.FINISH]
                    cmd = probe.command_of(rummy_v0.FINISH)
                    assert sorted(physical(c) for m in cmd.table for c in m) == \
                        sorted(physical(c) for m in table for c in m)
                    built += 1
            action = int(rng.choice(np.flatnonzero(slots.legal_mask())))
            cmd = slots.command_of(action)
            slots.step_command(cmd)
            edits.step_command(cmd)  # both modes play the same game
            assert edits.state_ == slots.state_
    assert built > 20


def test_manipulation_split_then_lay_off() -> None:
    """Split a run, lay a card off on one part: an action no slot offers directly."""
    from rummy.cards import parse_card
    from rummy.melds import parse_table
    env = rummy_v0.raw_env(players=2, rules=SHORT, actions="edits")
    env.reset(seed=0)
    s = env.state_
    table = parse_table([["4S", "5S", "6S", "7S", "8S", "9S"]])
    hand = tuple(sorted(map(parse_card, ["6S", "KD", "2C"])))
    env._state = s._replace(phase=MELD_OR_PASS, table=table, draws=1,
                            hands=s.hands[:s.turn] + (hand,) + s.hands[s.turn + 1:])
    env._mask = None
    split = _edit.SPLIT_BASE + 0 * (_edit.MAX_LEN - 1) + (3 - 1)  # 4S 5S 6S | 7S 8S 9S
    assert not env.legal_mask()[rummy_v0.FINISH]
    env.step(split)
    assert env.editor().melds == [table[0][:3], table[0][3:]]
    assert not env.legal_mask()[rummy_v0.FINISH]  # no card added yet (R5.1)
    play = _edit.PLAY_BASE + parse_card("6S") * _edit.MAX_MELDS + 1  # 6S 7S 8S 9S
    env.step(play)
    assert env.legal_mask()[rummy_v0.FINISH]
    env.step(rummy_v0.FINISH)
    assert sorted(env.state_.table) == sorted(parse_table([["4S", "5S", "6S"],
                                                           ["6S", "7S", "8S", "9S"]]))


def test_hand_jokers_are_declared_at_finish() -> None:
    assert _edit.resolve_meld((3, 4, JOKER)) is not None  # 4S 5S * -> a run
    resolved = _edit.resolve_meld((3, 16, JOKER))  # 4S 4H * -> a group of fours
    assert resolved is not None and sorted(c % 13 for c in map(physical, resolved)
                                           if c != JOKER) == [3, 3]
    assert _edit.resolve_meld((3, 20)) is None  # 4S 8H: no meld


def test_bad_edit_arguments() -> None:
    with pytest.raises(ValueError, match="actions must be"):
        rummy_v0.raw_env(actions="moves")
    with pytest.raises(ValueError, match="max_edits"):
        rummy_v0.raw_env(actions="edits", max_edits=0)
    env = rummy_v0.raw_env(players=2, actions="edits")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not legal"):
        env.step(rummy_v0.FINISH)
