"""Property-based tests (hypothesis) over many random games: the invariants I1–I4 of
docs/rules.md §10 after every event, exact JSON round trips, and same-seed determinism."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy.cards import format_card
from rummy.events import CardDrawn, GameStarted, RoundStarted, dumps, loads, to_dict
from rummy.evolve import evolve, replay
from rummy.invariants import check_invariants, verify_log
from rummy.rules import RuleSet
from rummy.views import redact, view
from tests.conftest import play_random_game
from tests.invariant_helpers import i3_problems

games = st.tuples(
    st.integers(min_value=0, max_value=2**40),
    st.integers(min_value=2, max_value=5),
    st.lists(st.sampled_from(["random", "basic"]), min_size=5, max_size=5),
    st.sampled_from([{}, {"knock_threshold": 10}, {"max_draws_per_turn": 1},
                     {"target_score": 60}, {"opening_meld_per_player": True,
                                            "opening_meld_min_points": 20},
                     {"knock_timing": "start", "knock_threshold": 10},
                     {"joker_release": "hand"}, {"joker_moves": "locked"},
                     {"ace_high": False},
                     {"knock_timing": "start", "joker_release": "hand",
                      "joker_moves": "locked", "ace_high": False}]),
)
def _play(game, target_score):
    """Play one hypothesis-drawn game: (final state, event log, state after each command)."""
    seed, players, bots, variants = game
    return play_random_game(seed, players, tuple(bots[:players]),
                            RuleSet.from_dict(variants | {"target_score": target_score}))


SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(games)
def test_i1_i2_i3_hold_after_every_event(game):
    final, log, _ = _play(game, 60)
    state = None
    for e in log:
        state = evolve(state, e)
        assert check_invariants(state) == []
        assert i3_problems(state) == []
    assert state == final


def _mid_game_state():
    """A state in the middle of a 3-player round: cards in every hand and in the stock."""
    _, _, states = play_random_game(11, 3, ("basic", "basic", "basic"))
    state = next(s for s in states[5:] if s.round >= 1 and s.stock_size > 3
                 and all(len(h) > 1 for h in s.hands))
    assert i3_problems(state) == []
    return state


def test_i3_check_fails_on_another_seats_card_in_the_view():
    """A planted leak: the view's table also holds the next seat's hand."""
    state = _mid_game_state()

    def leaky(st, seat):
        v = view(st, seat)
        if seat is None:
            return v
        return v._replace(table=(*v.table, st.hands[(seat + 1) % st.players]))

    problems = i3_problems(state, leaky)
    assert problems and all(p.startswith("I3:") for p in problems)
    assert any("seat 0" in p and "table" in p for p in problems)


def test_i3_check_fails_on_the_stock_order_in_the_view():
    """A planted leak: the names of the public view spell the top three cards of the
    stock (right sizes, right own hand: only the order of the stock leaks)."""
    state = _mid_game_state()

    def leaky(st, seat):
        v = view(st, seat)
        top = tuple(format_card(c) for c in st.deck[st.stock_pos:st.stock_pos + 3])
        return v._replace(names=top) if seat is None else v

    problems = i3_problems(state, leaky)
    assert problems == ["I3: the public view depends on hidden state (other hands, stock "
                        "order, seed) through names"]


def test_i3_check_fails_on_a_wrong_own_hand():
    state = _mid_game_state()
    problems = i3_problems(state, lambda st, seat: view(st, 0 if seat is None else seat))
    assert any(p.startswith("I3: the public view shows hand") for p in problems)


@SETTINGS
@given(games)
def test_i4_replay_equals_live_state_and_log_verifies(game):
    final, log, _ = _play(game, 60)
    assert replay(log) == final
    states = list(verify_log(log))
    assert states[-1] == final
    assert final.is_over


@SETTINGS
@given(games)
def test_events_round_trip_through_json_exactly(game):
    _, log, _ = _play(game, 40)
    for e in log:
        assert loads(dumps(e)) == e
        d = to_dict(e)
        assert d["type"] == e.TYPE and d["v"] == e.VERSION


@SETTINGS
@given(games)
def test_i3_views_and_redacted_events_leak_nothing(game):
    final, log, states = _play(game, 40)
    players = final.players
    for s in states:
        for seat in range(players):
            v = view(s, seat)
            d = v.to_dict()
            assert d["hand"] == [format_card(c) for c in s.hands[seat]]
            assert "hands" not in d and "deck" not in d and "seed" not in d
            assert d["hand_sizes"] == [len(h) for h in s.hands]
    for seat in range(players):
        for e in log:
            r = redact(e, seat, players=players, hand_size=final.rules.hand_size)
            if isinstance(e, CardDrawn) and e.seat != seat:
                assert r.card is None
            if isinstance(e, RoundStarted):
                assert r.deck is None and r.hand is not None and len(r.hand) == 10
            if isinstance(e, GameStarted):
                assert r.seed is None


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=2**40), st.integers(min_value=2, max_value=5))
def test_same_seed_same_game_step_by_step(seed, players):
    a = play_random_game(seed, players, tuple(["basic", "random"] * 3)[:players])
    b = play_random_game(seed, players, tuple(["basic", "random"] * 3)[:players])
    assert a[1] == b[1]
    assert a[2] == b[2]
