"""The game review (rummy/review.py, `rummy replay --analyse`, docs/review.md): classes and
accuracy by the documented thresholds, knock and draw-again decisions judged by rollouts
with their uncertainty, an equity graph per seat, each seat from its own view (I3), and the
same figures for the same seed."""

from __future__ import annotations

import json
import math

import pytest

from rummy.events import Event, GameEnded, Knocked, TurnEnded, dumps
from rummy.review import accuracy, classify, review
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy_cli.main import main


def _game(bots: tuple[str, ...], seed: int, **rules: int) -> tuple[Event, ...]:
    events = play_game(bots, seed, RuleSet(**rules), record=True).events  # type: ignore[arg-type]
    assert events is not None
    return events


def test_classes_and_accuracy_follow_the_documented_thresholds():
    assert [classify(x) for x in (0, 9.9, 10, 24.9, 25, 49.9, 50, 120)] == \
        ["", "", "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder", "blunder"]
    assert accuracy(0) == 100.0
    assert [round(accuracy(x)) for x in (10, 25, 50)] == [72, 43, 19]
    assert math.isclose(accuracy(30), 100 / math.e)


@pytest.fixture(scope="module")
def knocking_game() -> tuple[Event, ...]:
    # strategic holds back knocks (R6.3); basic melds without manipulating the table
    return _game(("strategic", "basic"), 2, target_score=60)


@pytest.fixture(scope="module")
def reviewed(knocking_game):
    return review(knocking_game, budget=2, seed=5)


def test_every_judged_decision_has_a_class_consistent_with_its_loss(knocking_game, reviewed):
    r = reviewed
    assert r.decisions and r.rollouts > 0
    for d in r.decisions:
        assert d.cls == classify(d.lost) and d.lost >= 0
        if d.kind == "meld":
            assert d.meld is not None and d.lost == d.meld.counted and d.choices == ()
        else:
            assert len(d.choices) == 2 and d.best in {c.label for c in d.choices}
            assert all(c.se >= 0 for c in d.choices)
    knocks = [d for d in r.decisions if d.kind == "knock"]
    assert knocks, "strategic had a knock to decide"
    for d in knocks:
        e = knocking_game[d.index - 1]
        assert isinstance(e, (Knocked, TurnEnded))
        assert {c.label for c in d.choices} == {"knock", "play on"}
        assert d.chosen == ("knock" if isinstance(e, Knocked) else "play on")
        assert ("missed knock" in d.marks) == (d.lost > 0 and d.chosen == "play on")
    for s in r.seats:
        mine = [d for d in r.decisions if d.seat == s.seat]
        assert s.judged == len(mine)
        assert math.isclose(s.accuracy, sum(d.accuracy for d in mine) / len(mine))
        assert s.blunders == sum(d.cls == "blunder" for d in mine)
        assert s.points_left == r.analysis.seats[s.seat].missed_points


def test_the_graph_has_a_point_after_every_turn_with_its_interval(knocking_game, reviewed):
    g = reviewed.graph
    turns = sum(1 for i, e in enumerate(knocking_game) if isinstance(e, TurnEnded))
    assert len(g) >= turns // 2
    for p in g:
        for s in (0, 1):
            c, lo, hi = p.chance[s], p.low[s], p.high[s]
            assert c is not None and lo is not None and hi is not None
            assert 0.0 <= lo <= c <= hi <= 1.0
    last = g[-1]
    end = knocking_game[-1]
    assert isinstance(end, GameEnded) and last.index == len(knocking_game)
    assert last.chance == tuple(1.0 / len(end.winners) if s in end.winners else 0.0
                                for s in (0, 1))


def test_the_same_seed_gives_the_same_review_and_a_seat_sees_only_its_part(knocking_game,
                                                                            reviewed):
    again = review(knocking_game, budget=2, seed=5)
    assert again.to_dict() == reviewed.to_dict()
    mine = review(knocking_game, seat=1, budget=2, seed=5)
    assert mine.decisions == tuple(d for d in reviewed.decisions if d.seat == 1)
    assert [p.chance[1] for p in mine.graph] == [p.chance[1] for p in reviewed.graph]
    assert all(p.chance[0] is None for p in mine.graph)


def test_budget_zero_is_the_solver_alone(knocking_game):
    r = review(knocking_game, budget=0)
    assert r.rollouts == 0 and r.graph == ()
    assert {d.kind for d in r.decisions} == {"meld"}
    with pytest.raises(ValueError, match="budget"):
        review(knocking_game, budget=-1)


def test_cli_review_text_json_and_seed(tmp_path, capsys, knocking_game):
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in knocking_game))
    out = tmp_path / "review.json"
    assert main(["replay", str(log), "--analyse", "--budget", "1", "--seed", "3",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Review (budget 1, seed 3" in text and "chance to win after each turn" in text
    data = json.loads(out.read_text())
    assert data["review"]["budget"] == 1 and data["review"]["seed"] == 3
    assert data["review"]["thresholds"]["blunder"] == 50.0
    assert [s["seat"] for s in data["review"]["seats"]] == [0, 1]
    assert data["seats"][0]["missed_points"] == data["review"]["seats"][0]["points_left"]
    assert main(["replay", str(log), "--analyse", "--budget", "-1"]) == 2


def test_the_review_reads_no_hidden_information(knocking_game):
    """A seat-true fork prefix changes every card the seat could not see (the other hand,
    the stock order) and nothing it saw: that seat's review of it is the same, decision
    for decision and point for point of the graph (I3)."""
    from rummy.fork import fork_prefix
    n = len(knocking_game) * 2 // 3
    for seat in (0, 1):
        honest = review(knocking_game[:n], seat, budget=2, seed=8)
        other = fork_prefix(knocking_game, n, seat, seed=1)
        assert other != list(knocking_game[:n])  # hidden cards really differ
        assert review(other, seat, budget=2, seed=8).to_dict() == honest.to_dict()


def test_a_seat_that_left_has_no_chance_to_win_whatever_its_total():
    """R13.4: a seat that resigned or left ranks below every seat that stayed, so the
    equity graph's completions give it no share of the win even far ahead; the seats that
    stayed share it (here seat 1, the highest of them). With nobody left the leader wins."""
    import random as _random

    from rummy.review import _finish

    rules = RuleSet()
    over = rules.target_score + 50  # the game is over: no completion is drawn
    totals, won = (over, over - 30, 10), (3, 1, 0)
    assert _finish(totals, won, 0, rules, [], _random.Random(1), 5) == 1.0
    assert _finish(totals, won, 0, rules, [], _random.Random(1), 5, left=(0,)) == 0.0
    assert _finish(totals, won, 1, rules, [], _random.Random(1), 5, left=(0,)) == 1.0
    # every seat left: ranked among all of them again (R13.4), no bonus for anyone
    assert _finish(totals, won, 0, rules, [], _random.Random(1), 5, left=(0, 1, 2)) == 1.0
    # a game still running: completions drawn from a pool of rounds never make the seat
    # that left a winner
    pool = [((5, 0, 0), (0,)), ((0, 5, 0), (1,)), ((0, 0, 5), (2,))]
    running = (rules.target_score - 1, 0, 0)
    assert _finish(running, (0, 0, 0), 0, rules, pool, _random.Random(2), 40, left=(0,)) == 0.0
    assert _finish(running, (0, 0, 0), 0, rules, pool, _random.Random(2), 40) > 0.3
