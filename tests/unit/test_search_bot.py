"""The ``search`` bot: registered, deterministic, blind to hidden cards (I3),
legal in whole games, and not weaker than ``strategic`` (the long check is ``slow``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from rummy.bots import BOTS, make_bot
from rummy.bots.greedy import plan_play
from rummy.bots.search import (
    DEFAULT_ITERATIONS,
    SearchBot,
    candidates,
    determinize,
    outcome,
    unseen_cards,
)
from rummy.bots.strategic import StrategicBot
from rummy.cards import JOKER, decks_for, new_deck, physical
from rummy.commands import CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.events import GameEnded, RoundEndReason, RoundScored
from rummy.invariants import check_invariants, verify_log
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS, GameState
from rummy.views import view


def _decision(seed: int, players: int = 2, *, phase: str = MELD_OR_PASS,
              min_candidates: int = 2) -> GameState:
    """The first state of a strategic-vs-strategic game in which seat 0 is to act in
    ``phase`` with at least ``min_candidates`` search candidates."""
    bots = [StrategicBot(i) for i in range(players)]
    state, _ = step(None, CreateGame(players, seed, RuleSet()))
    while state.phase != GAME_OVER:
        if state.turn == 0 and state.phase == phase and \
                len(candidates(view(state, 0))) >= min_candidates:
            return state
        state, _ = step(state, bots[state.turn].act(view(state, state.turn)))
    raise AssertionError("no such decision in this game")


def _reshuffle_hidden(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with every card ``seat`` cannot see (other hands, the stock) dealt anew:
    same hand sizes, same stock size, same view for ``seat``."""
    pool = [c for s, h in enumerate(state.hands) if s != seat for c in h]
    pool += state.deck[state.stock_pos:]
    rng.shuffle(pool)
    hands = []
    pos = 0
    for s, h in enumerate(state.hands):
        if s == seat:
            hands.append(h)
        else:
            hands.append(tuple(sorted(pool[pos:pos + len(h)])))
            pos += len(h)
    deck = state.deck[:state.stock_pos] + tuple(pool[pos:])
    return state._replace(hands=tuple(hands), deck=deck)


def test_registered_and_made_by_name() -> None:
    assert BOTS["search"] is SearchBot
    bot = make_bot("search", 3)
    assert isinstance(bot, SearchBot) and bot.name == "search"
    assert bot.iterations == DEFAULT_ITERATIONS == 4 and bot.seconds is None


def test_bad_budgets_are_refused() -> None:
    with pytest.raises(ValueError, match="iterations"):
        SearchBot(1, iterations=0)
    with pytest.raises(ValueError, match="seconds"):
        SearchBot(1, seconds=0.0)
    with pytest.raises(ValueError, match="rollout"):
        SearchBot(1, rollout="random")


def test_takes_only_a_player_view() -> None:
    state = _decision(5)
    bot = SearchBot(1)
    with pytest.raises(TypeError, match="PlayerView"):
        bot.act(state)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="own turn"):
        bot.act(view(state, 1))  # the other seat's view: not its turn
    with pytest.raises(ValueError, match="own turn"):
        bot.act(view(state, None))


def test_unseen_cards_and_determinization_respect_the_view() -> None:
    state = _decision(7, players=3)
    v = view(state, 0)
    unseen = unseen_cards(v)
    assert len(unseen) == sum(v.hand_sizes[1:]) + v.stock_size
    # I1: the unseen cards are exactly the other hands plus the stock
    hidden = Counter(c for h in state.hands[1:] for c in h)
    hidden.update(state.deck[state.stock_pos:])
    assert Counter(unseen) == hidden
    table = Counter(physical(c) for m in v.table for c in m)
    assert Counter(unseen) + Counter(v.hand) + table == Counter(new_deck(decks_for(3)))
    cards = list(unseen)
    random.Random(4).shuffle(cards)
    det = determinize(v, cards, 99)
    assert check_invariants(det) == []  # I1, I2, I3 hold in the sampled state
    assert view(det, 0) == v  # same view as the real state
    assert det.hands[0] == state.hands[0] and det.seed == 99
    assert [len(h) for h in det.hands] == [len(h) for h in state.hands]
    with pytest.raises(ValueError, match="hidden places"):
        determinize(v, cards[1:], 99)


def test_same_view_same_move_whatever_the_hidden_cards() -> None:
    # I3: two states that differ only in the other hand and the stock order give seat 0
    # the same view, so the bot (same seed) must make the same move in both
    state = _decision(5)
    other = _reshuffle_hidden(state, 0, random.Random(8))
    assert other.hands[1] != state.hands[1]
    assert other.deck[other.stock_pos:] != state.deck[state.stock_pos:]
    assert view(other, 0) == view(state, 0)
    a, b = SearchBot(11), SearchBot(11)
    move_a = a.act(view(state, 0))
    move_b = b.act(view(other, 0))
    assert move_a == move_b
    assert a.searched == b.searched == 1  # a real search, not a forced move
    assert a.rollouts == b.rollouts == DEFAULT_ITERATIONS * len(candidates(view(state, 0)))


def test_deterministic_for_a_seed() -> None:
    state = _decision(5)
    v = view(state, 0)
    moves = {SearchBot(21, iterations=6).act(v) for _ in range(3)}
    assert len(moves) == 1
    rules = RuleSet(target_score=40)
    assert play_game(["search", "strategic"], 12, rules) == \
        play_game(["search", "strategic"], 12, rules)


def test_a_huge_margin_keeps_the_strategic_move() -> None:
    state = _decision(5)
    v = view(state, 0)
    assert SearchBot(11, margin=1e9).act(v) == candidates(v)[0] == StrategicBot(0).act(v)


def test_candidates_start_with_the_strategic_move() -> None:
    state = _decision(5)
    v = view(state, 0)
    cands = candidates(v)
    planned = plan_play(v)
    assert planned is not None
    assert cands[0] == Meld(0, planned[0])  # the greedy/strategic play first
    assert cands[-1] == Pass(0)
    assert all(isinstance(c, Meld) for c in cands[:-1])
    assert len({c.table for c in cands if isinstance(c, Meld)}) == len(cands) - 1
    assert StrategicBot(0).act(v) == cands[0]
    drawing = _decision(5, phase=DRAW, min_candidates=1)
    assert candidates(view(drawing, 0)) == [Draw(0)]
    knock = _decision(3, phase=KNOCK_OR_END)
    kv = view(knock, 0)
    first = StrategicBot(0).act(kv)
    assert candidates(kv) == ([Knock(0), EndTurn(0)] if first == Knock(0)
                              else [EndTurn(0), Knock(0)])


def test_joker_in_hand_adds_keep_joker_candidates() -> None:
    state = _decision(5)
    v = view(state, 0)
    with_joker = v if JOKER in v.hand else v._replace(hand=tuple(sorted((*v.hand, JOKER))))
    tables = [c.table for c in candidates(with_joker) if isinstance(c, Meld)]
    kept = plan_play(with_joker, keep=(JOKER,))
    assert kept is not None and kept[0] in tables


def test_outcome_values_round_and_game_ends() -> None:
    scored = RoundScored(1, RoundEndReason.KNOCK, 0, ((), ()), (3, 20), (17, 0), (0,),
                         (17, 0))
    assert outcome([scored], 0, 100.0) == 17.0
    assert outcome([scored], 1, 100.0) == -17.0
    assert outcome([], 0, 100.0) is None
    ended = GameEnded((160, 20), (1, 0), (100, 25), (260, 45), (0,))
    assert outcome([scored, ended], 0, 100.0) == 117.0
    assert outcome([scored, ended], 1, 100.0) == -117.0
    shared = GameEnded((150, 150), (1, 1), (100, 100), (250, 250), (0, 1))
    assert outcome([scored, shared], 1, 100.0) == -17.0  # a shared win: 2 * 1/2 - 1 = 0


def test_time_budget_still_plays_a_legal_move() -> None:
    state = _decision(5)
    bot = SearchBot(2, iterations=1000, seconds=1e-6)
    cmd = bot.act(view(state, 0))
    assert bot.rollouts == len(candidates(view(state, 0)))  # one determinization only
    step(state, cmd)  # legal: raises IllegalMoveError otherwise


@pytest.mark.parametrize(("lineup", "rules"), [
    (["search", "strategic"], RuleSet(target_score=60)),
    (["greedy", "search", "basic"], RuleSet(target_score=40)),
    (["search", "random"], RuleSet(target_score=30, opening_meld_per_player=True,
                                   opening_meld_min_points=20)),
], ids=["2p", "3p-two-decks", "2p-opening-variants"])
def test_whole_games_are_legal(lineup: list[str], rules: RuleSet) -> None:
    # play_game raises IllegalMoveError on an illegal command; the log is then re-checked
    r = play_game(lineup, seed=31, rules=rules, record=True)
    assert r.winners and max(r.final) >= rules.target_score
    states = list(verify_log(r.events))
    assert states[-1].phase == GAME_OVER


@pytest.mark.slow
def test_beats_strategic_in_a_short_match() -> None:
    # 16 games, seats rotated (play_game seeds per game); the full measurement with
    # intervals is in docs/strength.md
    wins = 0.0
    for g in range(16):
        lineup = ["search", "strategic"] if g % 2 == 0 else ["strategic", "search"]
        r = play_game(lineup, seed=1000 + g)
        me = lineup.index("search")
        if me in r.winners:
            wins += 1 / len(r.winners)
    assert wins >= 10
