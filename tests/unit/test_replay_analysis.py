"""The game analysis (rummy/analysis.py, `rummy replay --analyse`): greedy misses nothing at
its meld decisions, basic misses points, strategic's held-back knocks are reported, and the
analysis depends on nothing a seat could not see (I3)."""

from __future__ import annotations

import json
import random

import pytest

from rummy.analysis import analyse, analyse_steps, seat_steps
from rummy.cards import JOKER
from rummy.events import Event, GameStarted, dumps
from rummy.evolve import evolve
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.state import GameState
from rummy.views import redact, view
from rummy_cli.main import main


def _game(bots: tuple[str, ...], seed: int, **rules: int | bool) -> tuple[Event, ...]:
    return play_game(bots, seed, RuleSet(**rules), record=True).events  # type: ignore[arg-type]


@pytest.mark.parametrize("seed,rules", [(1, {"target_score": 60}),
                                        (2, {"target_score": 40, "opening_meld_per_player": True,
                                             "opening_meld_min_points": 20})])
def test_greedy_leaves_no_points_at_its_meld_decisions(seed, rules):
    events = _game(("greedy", "greedy", "greedy"), seed, **rules)
    a = analyse(events)
    assert len(a.decisions) > 20
    assert all(d.proven for d in a.decisions)
    assert [d for d in a.decisions if d.missed] == []
    assert all(s.missed_points == 0 and s.biggest == () for s in a.seats)
    # greedy melds whenever the solver finds a play: every meld decision is a best play
    assert any(d.played > 0 for d in a.decisions)


def test_basic_leaves_points_on_the_table():
    events = _game(("basic", "basic"), 1, target_score=60)
    a = analyse(events)
    missed = [d for d in a.decisions if d.missed]
    assert missed, "basic never manipulates the table: it must miss some points"
    for s in a.seats:
        # each distinct miss once: the same missed play at the next draw is not re-added
        assert s.missed_points == sum(d.counted for d in a.decisions if d.seat == s.seat)
        assert s.missed_points < sum(d.missed for d in a.decisions if d.seat == s.seat)
        assert s.missed_points == sum(s.missed_by_round.values())
        assert list(s.biggest) == sorted(s.biggest, key=lambda d: -d.counted)
    worst = max(missed, key=lambda d: (d.counted, -d.index))
    assert worst.missed == worst.best - worst.played > 0
    assert worst in {d for s in a.seats for d in s.biggest}


def test_strategic_holding_back_a_knock_is_a_missed_knock():
    for seed in range(1, 12):
        events = _game(("strategic", "greedy"), seed, target_score=80)
        a = analyse(events)
        if a.knocks:
            break
    else:  # pragma: no cover - depends on the bots
        pytest.fail("no strategic game with a held-back knock in 11 seeds")
    k = a.knocks[0]
    assert k.seat == 0 and k.hand_points <= k.threshold == 5
    assert type(events[k.index - 1]).__name__ == "TurnEnded"
    assert a.seats[0].missed_knocks == len(a.knocks)  # greedy always knocks (R6.1)
    assert a.seats[1].missed_knocks == 0


def _scramble(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same position for ``seat`` with everything it cannot see changed: the other
    hands replaced (same sizes) and the stock reshuffled."""
    hands = tuple(h if p == seat else tuple(sorted(rng.choice([JOKER, *range(52)])
                                                   for _ in h))
                  for p, h in enumerate(state.hands))
    stock = list(state.deck[state.stock_pos:])
    rng.shuffle(stock)
    return state._replace(hands=hands, deck=state.deck[:state.stock_pos] + tuple(stock),
                          seed=rng.randrange(1 << 30))


def test_analysis_reads_no_hidden_information():
    """Rebuilt from positions whose hidden parts were replaced, the analysis is the same:
    each decision depends only on the deciding seat's view and its redacted events."""
    events = _game(("basic", "greedy", "basic"), 4, target_score=40)
    start = events[0]
    assert isinstance(start, GameStarted)
    rng = random.Random(9)
    honest = analyse(events)
    steps = list(seat_steps(events))
    assert steps and all(s.view.seat == s.view.turn for s in steps)
    # the same decisions, built from scrambled states
    scrambled = []
    state = None
    for i, e in enumerate(events, 1):
        match = [s for s in steps if s.index == i]
        if match:
            seat = match[0].view.seat
            assert seat is not None and state is not None
            v = view(_scramble(state, seat, rng), seat)
            assert v == match[0].view  # the seat's view does not show what was changed
            scrambled.append(type(match[0])(i, v, redact(e, seat, players=start.players,
                                                          hand_size=start.rules.hand_size)))
        state = evolve(state, e)
    other = analyse_steps(scrambled, players=start.players, names=start.names)
    assert other == honest
    # one seat's analysis is that seat's part of the whole
    for seat in range(start.players):
        mine = analyse(events, seat)
        assert mine.decisions == tuple(d for d in honest.decisions if d.seat == seat)
        assert mine.seats == (honest.seats[seat],)


def test_analyse_refuses_a_bad_seat():
    events = _game(("basic", "basic"), 1, target_score=20)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.1 \(R1\.1\)"):
        analyse(events, 2)


def test_cli_analysis_text_and_json(tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in _game(("basic", "greedy"), 3,
                                                            target_score=40)))
    out = tmp_path / "analysis.json"
    assert main(["replay", str(log), "--analyse", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Game analysis" in text and "biggest miss" in text
    data = json.loads(out.read_text())
    assert [s["seat"] for s in data["seats"]] == [0, 1]
    assert data["seats"][1]["missed_points"] == 0  # greedy
    assert data["seats"][0]["missed_points"] > 0  # basic
    assert all(d["missed"] == max(0, d["best"] - d["played"]) for d in data["decisions"])
    assert main(["replay", str(log), "--analyse", "--seat", "1", "--json", "-"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert only["seat"] == 1 and {d["seat"] for d in only["decisions"]} == {1}
