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
    assert state == final


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
