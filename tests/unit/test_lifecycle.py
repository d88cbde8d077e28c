"""The seat lifecycle of a served game (docs/rules.md §13, R13.1–R13.5) in the pure core."""

from __future__ import annotations

import pytest

from rummy.bots import make_bot
from rummy.commands import CreateGame, Draw, EndTurn, Leave, Pass, Reclaim
from rummy.decide import default_command, step, timeout_step
from rummy.errors import GameOverError, IllegalMoveError
from rummy.events import (
    GameEnded,
    LeaveReason,
    ReclaimRequested,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    TimedOut,
)
from rummy.evolve import replay
from rummy.invariants import verify_log
from rummy.lifecycle import controllers, left_seats
from rummy.rules import RuleSet
from rummy.scoring import final_scores
from rummy.snapshot import state_from_dict, state_to_dict
from rummy.state import DRAW, GAME_OVER, MELD_OR_PASS, GameState
from rummy.views import view

HUMANS = (0, 1, 2, 3)


def _game(players: int = 4, seed: int = 11, **rules: object):
    state, events = step(None, CreateGame(players, seed, RuleSet(**rules)))  # type: ignore[arg-type]
    return state, events


def _play(state: GameState, events: list, cmd) -> GameState:
    state, new = step(state, cmd)
    events.extend(new)
    return state


def _to_end(state: GameState, events: list) -> GameState:
    """Every seat plays ``basic`` (a bot seat or a taken-over one alike) to the game's end."""
    while state.phase != GAME_OVER:
        bot = make_bot("basic", state.version)
        state = _play(state, events, bot.act(view(state, state.turn)))
    return state


def test_a_seat_leaves_out_of_turn_and_a_bot_takes_it_over():
    state, events = _game()
    mover = state.turn
    away = (mover + 2) % 4
    before = state
    state = _play(state, events, Leave(away, strategy="random", humans=HUMANS))
    assert events[-2:] == [SeatLeft(away, LeaveReason.LEAVE), SeatTakenOver(away, "random")]
    # R13.1: the deck, the turn order and the hands go on exactly as before
    assert (state.turn, state.phase, state.hands, state.deck, state.stock_pos) == (
        before.turn, before.phase, before.hands, before.deck, before.stock_pos)
    assert controllers(state)[away] == "random"
    assert view(state, mover).controllers[away] == "random"  # every seat sees it
    assert view(state, None).away[away] == "leave"
    assert state.control is not None and state.control.history == ((4, away, "random"),)


def test_a_seat_leaves_during_its_own_turn_in_the_meld_phase():
    state, events = _game()
    seat = state.turn
    state = _play(state, events, Draw(seat))
    assert state.phase == MELD_OR_PASS
    state = _play(state, events, Leave(seat, humans=HUMANS))
    assert events[-2:] == [SeatLeft(seat, LeaveReason.LEAVE), SeatTakenOver(seat, "basic")]
    assert (state.turn, state.phase, state.draws) == (seat, MELD_OR_PASS, 1)
    state = _play(state, events, Pass(seat))  # the bot finishes the turn as the seat
    assert state.draws == 1 and state.phase == DRAW
    assert replay(events) == state  # I4


def test_leaving_twice_or_a_bot_seat_leaving_is_refused():
    state, _ = _game()
    with pytest.raises(IllegalMoveError) as e:
        step(state, Leave(3, humans=(0, 1)))
    assert e.value.rule == "R13.1"
    state, _ = step(state, Leave(1, humans=(0, 1)))
    with pytest.raises(IllegalMoveError, match="already left") as e:
        step(state, Leave(1, humans=(0, 1)))
    assert e.value.rule == "R13.1"
    # a seat that left may still resign: no second takeover
    state, new = step(state, Leave(1, resign=True, humans=(0, 1)))
    assert new == [SeatLeft(1, LeaveReason.RESIGN)]
    with pytest.raises(IllegalMoveError, match="already resigned"):
        step(state, Leave(1, resign=True, humans=(0, 1)))


def test_a_reclaim_is_refused_when_the_game_does_not_allow_it():
    state, _ = _game()
    state, _ = step(state, Leave(2, humans=HUMANS))
    with pytest.raises(IllegalMoveError, match="does not allow") as e:
        step(state, Reclaim(2, allowed=False))
    assert e.value.rule == "R13.3"


def test_a_reclaim_is_refused_out_of_the_turn_start_and_of_a_seat_not_taken_over():
    state, _ = _game()
    seat = state.turn
    with pytest.raises(IllegalMoveError, match="nothing to reclaim"):
        step(state, Reclaim(seat, allowed=True))
    state, _ = step(state, Draw(seat))
    state, _ = step(state, Leave(seat, humans=HUMANS))
    with pytest.raises(IllegalMoveError, match="only at the start") as e:
        step(state, Reclaim(seat, allowed=True))  # mid-turn (R13.3)
    assert e.value.rule == "R13.3"
    other = (seat + 1) % 4
    state, _ = step(state, Leave(other, humans=HUMANS))
    with pytest.raises(IllegalMoveError, match="only at the start"):
        step(state, Reclaim(other, allowed=True))  # out of turn


def test_a_reclaim_at_the_turn_start_and_a_pending_one_taking_effect_there():
    state, events = _game()
    first = state.turn
    nxt = (first + 1) % 4
    state = _play(state, events, Leave(first, humans=HUMANS))
    state = _play(state, events, Reclaim(first, allowed=True))  # its turn start: at once
    assert events[-1] == SeatReclaimed(first) and controllers(state)[first] == ""
    state = _play(state, events, Leave(nxt, humans=HUMANS))
    state = _play(state, events, Reclaim(nxt, allowed=True, wait=True))
    assert events[-1] == ReclaimRequested(nxt) and controllers(state)[nxt] == "basic"
    with pytest.raises(IllegalMoveError, match="already pending"):
        step(state, Reclaim(nxt, allowed=True, wait=True))
    state = _play(state, events, Draw(first))
    state = _play(state, events, Pass(first))
    state = _play(state, events, Draw(first))
    state = _play(state, events, Pass(first))
    state = _play(state, events, Draw(first))
    if state.phase != DRAW:
        state = _play(state, events, EndTurn(first))
    # the turn passed to nxt: the pending reclaim is applied before its first decision
    assert events[-1] == SeatReclaimed(nxt)
    assert state.turn == nxt and state.draws == 0 and controllers(state)[nxt] == ""
    list(verify_log(events))  # every event where the rules allow it
    assert replay(events) == state


def test_a_resigned_seat_cannot_be_reclaimed():
    state, _ = _game()
    seat = state.turn
    state, _ = step(state, Leave(seat, resign=True, humans=HUMANS))
    with pytest.raises(IllegalMoveError, match="resigned") as e:
        step(state, Reclaim(seat, allowed=True))
    assert e.value.rule == "R13.3"


def test_n_consecutive_timeouts_hand_the_seat_to_the_bot():
    state, events = _game()
    seat = state.turn
    # without the option (0, the default) a timeout is the default move alone
    s0, plain = timeout_step(state, 0)
    assert plain == step(state, default_command(state))[1]
    state, new = timeout_step(state, 2, "random")  # the draw timed out
    events += new
    assert new[-1] == TimedOut(seat, 1)
    state = _play(state, events, Pass(seat))  # a decision of its own: the count ends
    assert state.control is not None and state.control.timeouts[seat] == 0
    state, new = timeout_step(state, 2, "random")  # the second draw
    events += new
    assert new[-1] == TimedOut(seat, 1)
    state, new = timeout_step(state, 2, "random")  # pass: two in a row
    events += new
    assert new[-3:] == [TimedOut(seat, 2), SeatLeft(seat, LeaveReason.TIMEOUT),
                        SeatTakenOver(seat, "random")]
    assert controllers(state)[seat] == "random"
    assert left_seats(state) == ()  # a timeout is not leaving (R13.4)
    list(verify_log(events))
    assert replay(events) == state


def test_the_game_ends_at_once_when_every_human_seat_left():
    state, events = _game()
    humans = (0, 2)
    state = _play(state, events, Draw(state.turn))
    state = _play(state, events, Leave(0, humans=humans))
    totals = state.totals
    state = _play(state, events, Leave(2, resign=True, humans=humans))
    end = events[-1]
    assert events[-2] == SeatLeft(2, LeaveReason.RESIGN)
    assert isinstance(end, GameEnded) and state.phase == GAME_OVER
    # R13.5: totals stand, no bonus; R13.4: the seats that left rank below the bots
    assert end.totals == end.final == totals and end.bonuses == (0, 0, 0, 0)
    assert end.left == (0, 2) and set(end.winners) == {1, 3}
    with pytest.raises(GameOverError):
        step(state, Leave(1, humans=(1,)))
    list(verify_log(events))
    assert replay(events) == state


def test_a_seat_that_left_ranks_last_and_takes_no_bonus():
    # R13.4 by the scoring function: seat 0 has the highest total but left
    end = final_scores((160, 40, 90), (3, 1, 2), RuleSet(), left=(0,))
    assert end.bonuses == (0, 25, 50) and end.final == (160, 65, 140)
    assert end.winners == (2,)
    # every seat left: ranked among themselves
    assert final_scores((160, 40), (3, 1), RuleSet(), left=(0, 1)).winners == (0,)


def test_a_whole_game_with_a_leave_and_a_reclaim_ends_with_the_ranking():
    state, events = _game(3, seed=5, target_score=60)
    state = _play(state, events, Leave(1, humans=(0, 1, 2)))
    state = _to_end(state, events)
    end = state.result
    assert end is not None and end.left == (1,) and end.bonuses[1] == 0
    assert 1 not in end.winners
    top = max(f for i, f in enumerate(end.final) if i != 1)
    assert {i for i, f in enumerate(end.final) if f == top and i != 1} == set(end.winners)
    states = list(verify_log(events))
    assert states[-1] == state == replay(events)
    mid = states[len(states) // 2]
    assert state_from_dict(state_to_dict(mid)) == mid  # the snapshot keeps the control


def test_the_replay_and_the_review_show_who_played_each_seat():
    import io

    from rummy.review import review
    from rummy_cli.replay import replay_events

    state, events = _game(3, seed=7, target_score=40)
    state = _play(state, events, Leave(2, humans=(0, 1, 2)))
    _to_end(state, events)
    out = io.StringIO()
    assert replay_events(events, step=True, out=out) == 0
    text = out.getvalue()
    assert "played by: 0:player 1:player 2:bot basic" in text  # at every move after it
    assert "from event 4: seat 2 played by bot basic" in text
    assert "left the game, ranked below the others (R13.4): seat 2" in text
    rev = review(events, budget=0)
    assert {d.controller for d in rev.decisions if d.seat == 2} == {"basic"}
    assert {d.controller for d in rev.decisions if d.seat != 2} <= {""}


def test_the_replay_page_says_who_plays_each_seat_at_every_step():
    from rummy_cli.replay_page import page_data

    state, events = _game(3, seed=9, target_score=30)
    state = _play(state, events, Leave(1, resign=True, humans=(0, 1, 2)))
    _to_end(state, events)
    steps = page_data(events)["steps"]
    assert "b" not in steps[1]  # nothing changed hands yet (steps[i]: after event i + 1)
    assert steps[2]["e"] == "seat 1 (seat1) resigned (R13.1)"
    assert steps[3]["e"] == "the server bot basic plays seat 1 (seat1) from now on (R13.1)"
    assert all(s["b"] == ["player", "bot basic", "player"] for s in steps[3:])


def test_a_log_with_a_seat_change_out_of_place_is_refused():
    from rummy.invariants import ReplayError

    state, events = _game()
    seat = state.turn
    state = _play(state, events, Draw(seat))
    state = _play(state, events, Leave(seat, humans=HUMANS))
    good = list(events)
    with pytest.raises(ReplayError, match="R13.3"):  # reclaimed in the middle of a turn
        list(verify_log(good + [SeatReclaimed(seat)]))
    with pytest.raises(ReplayError, match="R13.1"):  # taken over twice
        list(verify_log(good + [SeatTakenOver(seat, "basic")]))
    with pytest.raises(ReplayError, match="R13.5"):  # a game ended mid-round by no one
        list(verify_log(good[:-2] + [GameEnded((0,) * 4, (0,) * 4, (0,) * 4, (0,) * 4,
                                               (0, 1, 2, 3), ())]))


def test_a_game_record_refuses_a_log_with_seat_changes():
    from rummy.errors import NotationError
    from rummy.record import to_record

    state, events = _game(2, seed=3)
    _play(state, events, Leave(1, humans=(0, 1)))
    with pytest.raises(NotationError, match="event 3 \\(SeatLeft\\)"):
        to_record(events)
