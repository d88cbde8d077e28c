"""Meld slots computed lazily, legal without trial steps, and ``auto_forced``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from rummy.bots.greedy import plan_play  # noqa: E402
from rummy.cards import JOKER  # noqa: E402
from rummy.commands import Meld  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.views import view  # noqa: E402
from rummy_env import _candidates  # noqa: E402
from rummy_env import manipulation_rummy_v0 as rummy_v0  # noqa: E402
from tests.rl.trusted import trusted_event_is_the_engines  # noqa: E402

VARIANTS = [RuleSet(), RuleSet(opening_meld_per_player=True),
            RuleSet(opening_meld_min_points=30)]


def _meld_states(players: int, rules: RuleSet, seed: int, limit: int = 60):
    """Meld phases of a random game (uniform over the mask)."""
    env = rummy_v0.raw_env(players=players, rules=rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    found = 0
    while env.state_.phase != "game_over" and found < limit:
        s = env.state_
        if s.phase == "meld_or_pass":
            found += 1
            yield env
        env.step(int(rng.choice(np.flatnonzero(env.legal_mask()))))


@pytest.mark.parametrize("rules", VARIANTS, ids=["default", "per_player", "min_points"])
@pytest.mark.parametrize("players", [2, 4])
def test_every_slot_is_legal_and_slot_zero_is_the_solver_play(players: int,
                                                              rules: RuleSet) -> None:
    """Every masked-in slot is accepted by the engine (the env never trial-steps; the test
    does), and slots 0/1 are legal exactly when the greedy bot's plan finds a play."""
    checked = 0
    for env in _meld_states(players, rules, seed=players * 10 + len(str(rules))):
        s = env.state_
        mask = env.legal_mask()
        planned = plan_play(view(s, s.turn))
        assert bool(mask[rummy_v0.N_FIXED]) == (planned is not None)
        assert bool(mask[rummy_v0.N_FIXED + 1]) == (planned is not None)
        for a in np.flatnonzero(mask[rummy_v0.N_FIXED:rummy_v0.EXACT_ACTION]):
            cmd = env.command_of(rummy_v0.N_FIXED + int(a))
            assert isinstance(cmd, Meld)
            step(s, cmd)  # raises if illegal
            checked += 1
        if planned is not None:
            assert env.candidates().table(0) == planned[0]
        assert mask[rummy_v0.EXACT_ACTION] == 0
    assert checked > 0


def test_solver_runs_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a cheap candidate in view the solver is not called for the mask; reading slot
    0 calls it once, and again for the same position only from the cache."""
    calls = []
    real = _candidates.slot_search

    def counting(v, slot):
        calls.append(slot)
        return real(v, slot)
    monkeypatch.setattr(_candidates, "slot_search", counting)
    _candidates._PLANNED.clear()
    for env in _meld_states(2, RuleSet(), seed=3, limit=200):
        c = env.candidates()
        if c.cheap:
            before = len(calls)
            env.legal_mask()
            assert len(calls) == before
            c.table(0)
            assert len(calls) == before + 1
            c2 = _candidates.Candidates(env.state_, rummy_v0.MELD_SLOTS)
            c2.table(0)
            assert len(calls) == before + 1  # remembered
            return
    pytest.fail("no meld phase with a cheap candidate")


def test_could_meld_never_denies_a_play() -> None:
    for rules in VARIANTS[:1]:
        for seed in range(4):
            for env in _meld_states(3, rules, seed=seed):
                s = env.state_
                if plan_play(view(s, s.turn)) is not None:
                    assert _candidates.could_meld(s.table, s.hands[s.turn])


@pytest.mark.parametrize("players", [2, 3])
def test_auto_forced_asks_only_real_choices(players: int) -> None:
    env = rummy_v0.env(players=players, rules=RuleSet(target_score=40), auto_forced=True)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    total = dict.fromkeys(env.possible_agents, 0.0)
    asked = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        assert obs["action_mask"].sum() >= 2
        assert obs["action_mask"][rummy_v0.DRAW_ACTION] == 0  # a draw is always forced
        asked += 1
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raw = env.unwrapped
    result = raw.state_.result
    assert asked > 0 and result is not None
    for seat in range(players):
        expected = raw.state_.totals[seat] / 40 + (
            1 / len(result.winners) if seat in result.winners else 0.0)
        assert total[f"player_{seat}"] == pytest.approx(expected)


def test_auto_forced_game_is_the_same_game() -> None:
    """Forced steps played inside the env change nothing: the same choices give the same
    final state as stepping every forced action by hand."""
    rules = RuleSet(target_score=40)
    a = rummy_v0.raw_env(players=2, rules=rules, auto_forced=True)
    b = rummy_v0.raw_env(players=2, rules=rules)
    a.reset(seed=4)
    b.reset(seed=4)
    rng = np.random.default_rng(1)
    while a.agents and a.state_.phase != "game_over":
        while b.state_ != a.state_:
            legal = np.flatnonzero(b.legal_mask())
            assert len(legal) == 1
            b.step(int(legal[0]))
        action = int(rng.choice(np.flatnonzero(a.legal_mask())))
        a.step(action)
        b.step(action)
    assert a.state_.result == b.state_.result


def _lay_off_reference(melds, left, *, jokers=True):
    """rummy.bots._melding.lay_off as first written (a dict look-up per card and meld)."""
    from rummy.cards import JOKER, TABLE_JOKER_BASE
    from rummy.melds import EFF_BIT, VALID_MELDS
    valid = VALID_MELDS.get
    changed, progress = False, True
    masks = [sum(map(EFF_BIT.__getitem__, meld)) for meld in melds]
    while progress and left:
        progress = False
        for i, meld in enumerate(melds):
            mm, n = masks[i], len(meld) + 1
            for c in left:
                if c == JOKER:
                    if not jokers:
                        continue
                    for d in range(52):
                        if valid(mm + (1 << d)) == n:
                            melds[i], masks[i] = meld + (TABLE_JOKER_BASE + d,), mm + (1 << d)
                            break
                    else:
                        continue
                elif valid(mm + (1 << c)) == n:
                    melds[i], masks[i] = meld + (c,), mm + (1 << c)
                else:
                    continue
                left.remove(c)
                progress = changed = True
                break
    return changed


def test_cached_lay_off_equals_the_reference() -> None:
    """The lay-off of the basic bot (and the basic slot) reads which cards fit a meld
    from a cache; it lays off exactly what the first version did."""
    from rummy.bots._melding import lay_off
    checked = 0
    for seed in range(3):
        for env in _meld_states(2, RuleSet(), seed=seed, limit=80):
            s = env.state_
            for jokers in (True, False):
                a, b = list(s.table), list(s.table)
                la, lb = list(s.hands[s.turn]) + [52], list(s.hands[s.turn]) + [52]
                assert lay_off(a, la, jokers=jokers) == \
                    _lay_off_reference(b, lb, jokers=jokers)
                assert (a, la) == (b, lb)
                checked += 1
    assert checked > 100


def _could_meld_reference(table, hand) -> bool:
    """_candidates.could_meld as first written (sets rather than bit masks)."""
    from rummy.cards import JOKER, TABLE_JOKER_BASE
    hand = tuple(hand)
    if JOKER in hand:
        return True
    held = set(hand)
    pool = set(held)
    for m in table:
        for t in m:
            if t >= TABLE_JOKER_BASE:
                d = t - TABLE_JOKER_BASE
                if d in held or any(d in x for x in table):
                    return True
                pool.add(d)
            else:
                pool.add(t)
    return any(a in pool and b in pool for c in held for a, b in _candidates._PARTNERS[c])


def _turn_hands():
    """(state, hand of the seat to act) at the meld phases of random games under the
    default rules: two and five seats (one and two decks), three seeds each."""
    for players in (2, 5):
        for seed in range(3):
            for env in _meld_states(players, RuleSet(), seed=seed, limit=150):
                s = env.state_
                yield s, s.hands[s.turn]


def test_could_meld_is_the_reference_and_triples_and_layoffs_too() -> None:
    """could_meld (bit masks), triples and the lay-offs by bit masks give the answers of
    the reference code on the meld phases of random games (one and two decks)."""
    answers = []
    for s, hand in _turn_hands():
        got = _candidates.could_meld(s.table, hand)
        assert got == _could_meld_reference(s.table, hand)
        answers.append(got)
        held = set(hand)
        assert _candidates.triples(hand) == [
            m for m in _candidates._TRIPLES if all(c in held for c in m)]
        assert _candidates._layoffs_by_bits(s.table, hand) == _candidates.layoffs(
            s.table, hand, with_index=True)
    assert any(answers) and not all(answers)


def test_the_unchecked_construction_is_the_checked_one() -> None:
    """Under the default meld rules play_exists skips check_action: the same answers as
    with every construction checked (two and five seats: one and two decks)."""
    answers = []
    for s, hand in _turn_hands():
        fast = _candidates.play_exists(s.table, hand, s.rules)
        assert fast == _candidates.play_exists(s.table, hand, s.rules, check=True)
        answers.append(fast)
    assert any(answers) and not all(answers)


def test_a_cheap_proof_of_a_play_is_never_wrong() -> None:
    """play_exists (a hand card with free table cards) is True only where the solver finds
    a play; could_meld False only where it finds none."""
    proved = 0
    for seed in range(4):
        for env in _meld_states(2, RuleSet(), seed=seed, limit=120):
            s = env.state_
            planned = plan_play(view(s, s.turn))
            if _candidates.play_exists(s.table, s.hands[s.turn], s.rules):
                assert planned is not None
                proved += 1
            if not _candidates.could_meld(s.table, s.hands[s.turn]):
                assert planned is None
    assert proved > 0


def _form_hand_melds_reference(hand):
    """rummy.bots._melding.form_hand_melds as first written (every meld of each card
    tested against the hand)."""
    from rummy.bots._melding import _BY_LOW, _mask
    left = list(hand)
    melds = []
    hm = _mask(left)
    candidates = sorted(x for c in {c for c in left if c < 52} for x in _BY_LOW[c]
                        if x[1] & hm == x[1])
    while candidates:
        _, _m, cards = candidates[0]
        melds.append(cards)
        for c in cards:
            left.remove(c)
        hm = _mask(left)
        candidates = [x for x in candidates if x[1] & hm == x[1]]
    return melds, left


def _basic_plan_reference(v):
    """BasicBot.plan as first written, from the reference melding above."""
    from rummy.bots._melding import joker_melds
    from rummy.cards import hand_points
    rules = v.rules
    melds, left = _form_hand_melds_reference(v.hand)
    melds += joker_melds(left)
    opening = rules.opening_meld_per_player and not v.opened[v.seat or 0]
    if opening or not v.table:
        if not melds or sum(map(hand_points, melds)) < rules.opening_meld_min_points:
            return None
        if opening:
            return v.table + tuple(melds)
    table = list(v.table) + melds
    laid = _lay_off_reference(table, left)
    if not melds and not laid:
        return None
    return tuple(table)


@pytest.mark.parametrize("rules", VARIANTS, ids=["default", "per_player", "min_points"])
@pytest.mark.parametrize("players", [2, 3])
def test_the_basic_bots_plan_is_the_reference_plan(players: int, rules: RuleSet) -> None:
    """BasicBot.plan (nested-meld chains, bit-mask lay-offs cached per table; also the
    environment's slot 2) makes the new table the first version made, on hands with and
    without jokers."""
    from rummy.bots._melding import form_hand_melds
    from rummy.bots.basic import BasicBot
    checked = 0
    for seed in range(3):
        for env in _meld_states(players, rules, seed=seed, limit=80):
            s = env.state_
            v = view(s, s.turn)
            assert BasicBot.plan(v) == _basic_plan_reference(v)
            with_jokers = v._replace(hand=tuple(sorted(v.hand + (52, 52))))
            assert BasicBot.plan(with_jokers) == _basic_plan_reference(with_jokers)
            assert form_hand_melds(v.hand) == _form_hand_melds_reference(v.hand)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("rules", VARIANTS, ids=["default", "per_player", "min_points"])
@pytest.mark.parametrize("players", [2, 3, 5])
def test_the_fast_meld_event_is_the_engines(players: int, rules: RuleSet) -> None:
    """Every slot's pre-validated Melded event (the env's fast path: cheap slots, the
    basic play and the solver's plays) is the event the engine makes for that meld, and
    evolving it gives the engine's state (five players: two decks, equal melds)."""
    checked = 0
    for seed in range(3):
        for env in _meld_states(players, rules, seed=seed, limit=80):
            s = env.state_
            cands = env.candidates()
            for slot in cands.legal_slots():
                checked += trusted_event_is_the_engines(s, cands, slot)
    assert checked > 100


@pytest.mark.parametrize("players", [2, 4])
def test_the_fast_path_and_the_checked_path_play_the_same_games(players: int) -> None:
    """The same random games, once with the fast path and once with every meld checked by
    the engine (each action played as its command through ``step_command``, which never
    takes a slot's pre-validated event): equal states, rewards and observations at every
    step."""
    def play(seed: int, checked: bool = False) -> list[object]:
        env = rummy_v0.raw_env(players=players)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out: list[object] = []
        while env.agents:
            obs, reward, term, trunc, _ = env.last()
            out.append((env.state_, reward, obs["observation"].tobytes(),
                        obs["action_mask"].tobytes()))
            if term or trunc:
                env.step(None)
                continue
            a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            if checked:
                env.step_command(env.command_of(a))
            else:
                env.step(a)
        return out
    fast = [play(seed) for seed in range(3)]
    checked = [play(seed, checked=True) for seed in range(3)]
    assert fast == checked
    assert sum(map(len, fast)) > 300


@pytest.mark.parametrize("players", [2, 3, 5])
def test_the_counted_slots_are_the_built_slots(players: int) -> None:
    """Under the default meld rules the mask's cheap slots are counted without building
    the candidates (:meth:`Candidates._count`): the count is the built list's length on
    every meld phase, the basic play equal to a triple or to a lay-off included."""
    counted = 0
    seen = {"triple": 0, "lay-off": 0}
    jokers = [0, 0, 0]  # hands with a joker: no twin, a triple's, a lay-off's
    for seed in range(6):
        for env in _meld_states(players, RuleSet(), seed=seed, limit=400):
            s = env.state_
            c = _candidates.Candidates(s, rummy_v0.MELD_SLOTS)
            n = c._count()
            built = _candidates.Candidates(s, rummy_v0.MELD_SLOTS)
            built._build()
            for k in range(c.n_cheap):  # each slot made alone, as the built list has it
                alone = _candidates.Candidates(s, rummy_v0.MELD_SLOTS)
                assert alone._item(k) == (built.cheap[k], built._origin[k])
                assert alone.meld_event(k + 2) == built.meld_event(k + 2)
            assert c.n_cheap == len(built.cheap) == len(c.cheap)
            if n is None:
                continue
            counted += 1
            assert n == len(built.cheap)
            if JOKER in s.hands[s.turn]:
                jokers[c._counted[1]] += 1
            v = view(s, s.turn)
            tri = len(_candidates.triples(v.hand))
            lay = len(_candidates.layoffs(tuple(v.table), v.hand))
            if built.cheap and built._origin[0] is None and n < 1 + tri + lay \
                    and n < rummy_v0.MELD_SLOTS - 2:
                added = sum(map(len, built.cheap[0])) - sum(map(len, v.table))
                seen["triple" if added == 3 else "lay-off"] += 1
    assert counted > 100
    assert seen["triple"] and seen["lay-off"]
    assert jokers[0]
    if players < 5:  # two decks: few such hands in these games
        assert jokers[1] or jokers[2]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_solver_slots_event_is_the_checked_paths(players: int) -> None:
    """A solver slot's event is made from the solver's play (its canonical table and the
    cards it adds): the same event as :func:`_candidates.melded_of` of its table."""
    checked = 0
    for seed in range(4):
        for env in _meld_states(players, RuleSet(), seed=seed, limit=150):
            s = env.state_
            c = _candidates.Candidates(s, rummy_v0.MELD_SLOTS)
            for slot in range(_candidates.SOLVER_SLOTS):
                event = c.meld_event(slot)
                table = c.table(slot)
                if table is None:
                    assert event is None
                    continue
                assert event == _candidates.melded_of(s.turn, s.table, table)
                checked += slot in c._cards
    assert checked > 100


@pytest.mark.parametrize("rules", VARIANTS + [RuleSet(ace_high=False)],
                         ids=["default", "per_player", "min_points", "ace_low"])
def test_the_solver_slots_search_is_plan_plays(rules: RuleSet) -> None:
    """solver_play (the flat path called directly when no variant applies) gives
    plan_play's table and cards for both slots, under every variant."""
    checked = 0
    for seed in range(3):
        for env in _meld_states(3, rules, seed=seed, limit=80):
            s = env.state_
            v = view(s, s.turn)
            for slot, objective in enumerate(("points", "cards")):
                planned = plan_play(v, node_limit=_candidates.NODE_LIMIT, objective=objective)
                want = None if planned is None else (planned[0], planned[1].cards)
                assert _candidates.solver_play(v, slot) == want
                checked += want is not None
    assert checked > 20


def test_the_triple_cover_is_the_legal_triples() -> None:
    """_triple_cards of every set of three real cards is the set itself exactly when it
    is a legal triple (_TRIPLES), else nothing; on random pools, the cards of the legal
    triples the pool holds."""
    import itertools
    import random
    legal = {sum(1 << c for c in m) for m in _candidates._TRIPLES}
    for m in itertools.combinations(range(52), 3):
        bits = sum(1 << c for c in m)
        assert _candidates._triple_cards(bits) == (bits if bits in legal else 0)
    rng = random.Random(5)
    for _ in range(3000):
        pool = sum(1 << c for c in rng.sample(range(52), rng.randrange(3, 30)))
        want = 0
        for t in legal:
            if t & pool == t:
                want |= t
        assert _candidates._triple_cards(pool) == want


def test_a_hand_without_a_triple_has_no_meld() -> None:
    """The count skips hand_meld_entries when no triple of the hand is legal: every
    legal meld of the hand holds one (random hands of one and two decks)."""
    import random

    from rummy.bots._melding import hand_meld_entries
    rng = random.Random(9)
    for _ in range(4000):
        hand = sorted(rng.choices(range(52), k=rng.randrange(1, 16)))
        bits = sum(1 << c for c in set(hand))
        assert bool(hand_meld_entries(hand)) == bool(_candidates._triple_cards(bits))
