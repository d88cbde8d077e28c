"""Puzzles (rummy/puzzles.py, `rummy puzzles`): the biggest distinct misses of real games
become solver-proven best_play conformance cases and a page with hidden answers."""

from __future__ import annotations

import json

from rummy.analysis import analyse
from rummy.conformance import run_case
from rummy.events import dumps
from rummy.puzzles import find_puzzles
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.solver import solve
from rummy_cli.main import main


def _games() -> list[tuple[str, tuple]]:
    out = []
    for seed in (1, 3):
        events = play_game(("basic", "human"), seed, RuleSet(target_score=60),
                           record=True).events
        assert events is not None
        out.append((f"g{seed}.jsonl", events))
    return out


def test_puzzles_are_the_biggest_distinct_misses_and_solver_proven():
    games = _games()
    puzzles = find_puzzles(games, count=6, min_points=10)
    assert len(puzzles) == 6
    assert [p.id for p in puzzles] == [f"p-{i:03d}" for i in range(1, 7)]
    assert [p.missed for p in puzzles] == sorted((p.missed for p in puzzles), reverse=True)
    every = sorted((d.counted for _s, ev in games for d in analyse(ev).decisions),
                   reverse=True)
    assert puzzles[0].missed == every[0]
    positions = set()
    for p in puzzles:
        sol = solve(p.table, p.hand)  # no node limit: the value is proven
        assert sol.optimal and sol.play is not None and sol.play.points == p.best
        ok, msg = run_case(p.to_case())
        assert ok, msg
        assert p.question == f"find the play worth {p.best} points"
        positions.add((tuple(sorted(map(tuple, p.table))), tuple(sorted(p.hand))))
    assert len(positions) == len(puzzles)


def test_cli_writes_cases_conformance_accepts_and_a_page_with_hidden_answers(tmp_path,
                                                                            capsys):
    logs = []
    for name, events in _games():
        path = tmp_path / name
        path.write_text("".join(dumps(e) + "\n" for e in events))
        logs.append(str(path))
    cases, page = tmp_path / "puzzles.jsonl", tmp_path / "puzzles.html"
    assert main(["puzzles", *logs, "--count", "4", "--cases", str(cases),
                 "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert out.count("find the play worth") == 4
    lines = [json.loads(x) for x in cases.read_text().splitlines()]
    assert [c["kind"] for c in lines] == ["best_play"] * 4
    assert main(["conformance", str(cases)]) == 0
    assert "4 passed, 0 failed" in capsys.readouterr().out
    text = page.read_text()
    assert text.count("<details><summary>Answer</summary>") == 4
    for c in lines:  # each answer is inside its closed <details>, not before it
        section = text.split(f'<section id="{c["id"]}">')[1].split("</section>")[0]
        before, _, inside = section.partition("<details>")
        assert c["answer"] not in before and c["answer"] in inside.replace("&amp;", "&")
        assert f"find the play worth {c['best_points']} points" in before


def test_puzzles_of_one_seat_are_its_own_misses():
    games = _games()
    mine = find_puzzles(games, count=20, min_points=5, seat=1)
    assert mine and {p.seat for p in mine} == {1}
    assert find_puzzles(games, count=20, min_points=5, seat=4) == []  # no such seat
