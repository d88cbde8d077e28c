"""``rummy tournament``: schedule, ratings and the Markdown section."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("choix")

from rummy_cli.main import main  # noqa: E402
from rummy_cli.tournament import (  # noqa: E402
    BEGIN,
    END,
    comparisons,
    markdown,
    percentile,
    play_timed,
    rate,
    schedule,
    write_section,
)


def test_schedule_rotates_seats_and_covers_every_pairing() -> None:
    games = schedule(["a", "b", "c"], 2, 2, seed=1)
    assert len(games) == 6
    assert {g[1] for g in games} == {("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"),
                                     ("b", "c"), ("c", "b")}


def test_ratings_order_a_clear_winner_first() -> None:
    results = [{"lineup": ["x", "y"] if i % 2 == 0 else ["y", "x"],
                "final": [200, 10] if i % 2 == 0 else [10, 200],
                "winners": [0] if i % 2 == 0 else [1], "moves": [5, 5],
                "secs": [0.01, 0.01]} for i in range(10)]
    table = rate(results, ["x", "y"])
    assert table["x"]["mu"] > table["y"]["mu"]
    assert table["x"]["win"] == 1.0 and table["y"]["win"] == 0.0
    assert table["x"]["games"] == 10 and table["x"]["ms"] == pytest.approx(2.0)


def test_cost_percentiles_per_move() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([5, 1, 3], 0.5) == 3.0
    assert percentile(list(range(1, 101)), 0.99) == 99.0
    assert percentile(list(range(1, 101)), 1.0) == 100.0
    results = [{"lineup": ["x", "y"], "final": [200, 10], "winners": [0], "moves": [3, 2],
                "secs": [0.0061, 0.0002], "us": [[1000, 2000, 3100], [100, 100]]}]
    table = rate(results, ["x", "y"])
    assert table["x"]["ms_p50"] == 2.0 and table["x"]["ms_p99"] == 3.1
    assert table["y"]["ms_p50"] == 0.1
    from rummy.rules import RuleSet
    game = play_timed(("random", "basic"), 5, RuleSet(target_score=30))
    assert [len(u) for u in game["us"]] == game["moves"]
    assert all(t >= 0 for u in game["us"] for t in u)


def test_command_writes_a_section_and_replaces_it(tmp_path: Path) -> None:
    md = tmp_path / "strength.md"
    md.write_text("# Bot strength\n\nearlier text\n")
    argv = ["tournament", "--bots", "random,basic", "--games", "2", "--seed", "3",
            "--markdown", str(md)]
    assert main(argv) == 0
    assert main(argv) == 0
    text = md.read_text()
    assert text.startswith("# Bot strength\n\nearlier text\n")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "| basic |" in text and "| random |" in text
    assert "| median | p99 |" in text
    assert main(["tournament", "--bots", "random,nobot"]) == 2
    write_section(str(md), f"{BEGIN}\nx\n{END}\n")
    assert md.read_text().endswith(f"{BEGIN}\nx\n{END}\n")


def _game(lineup: list[str], final: list[int], left: list[int], won: list[int]) -> dict:
    top = max(final)
    return {"lineup": lineup, "final": final, "left": left, "rounds_won": won,
            "winners": [i for i, f in enumerate(final) if f == top],
            "moves": [1] * len(lineup), "secs": [0.0] * len(lineup)}


def _three_player_games() -> list[dict]:
    """A 3-bot schedule in which the losers usually tie on final total (0), as 3-player
    games do: the order between them comes from the points left in the hand."""
    import random
    rng = random.Random(7)
    strength = {"greedy": 3.0, "basic": 1.5, "random": 0.2}
    games = []
    for i in range(120):
        lineup = ["greedy", "basic", "random"][i % 3:] + ["greedy", "basic", "random"][:i % 3]
        order = sorted(range(3), key=lambda s: -strength[lineup[s]] * rng.random())
        final, left, won = [0, 0, 0], [0, 0, 0], [0, 0, 0]
        final[order[0]] = 150
        left[order[1]], left[order[2]] = 10, 40
        won[order[0]] = 2
        games.append(_game(lineup, final, left, won))
    return games


def test_table_does_not_move_when_games_are_reordered() -> None:
    """The fit is one batch over every game: the same games in reverse or shuffled give
    the same ratings (an online update moved them by 14-21 points)."""
    import random
    games = _three_player_games()
    bots = ["random", "basic", "greedy"]
    base = rate(games, bots)
    rev = rate(list(reversed(games)), bots)
    shuffled = games[:]
    random.Random(3).shuffle(shuffled)
    mixed = rate(shuffled, bots)
    for b in bots:
        for key in ("rating", "sd", "conservative"):
            assert rev[b][key] == pytest.approx(base[b][key], abs=1e-9)
            assert mixed[b][key] == pytest.approx(base[b][key], abs=1e-9)
    assert markdown(base, "cmd", 1.0) == markdown(rev, "cmd", 1.0)


def test_losers_tied_on_total_are_ordered_by_points_left() -> None:
    """In 3-player games the losers often share a total of 0; the points left in the
    hand (then rounds won) order them, so a random bot is not rated above basic."""
    games = _three_player_games()
    table = rate(games, ["random", "basic", "greedy"])
    assert table["greedy"]["rating"] > table["basic"]["rating"] > table["random"]["rating"]
    # without the tie-breaks, the losers' pairs would all be level
    pairs = comparisons([{**g, "left": None, "rounds_won": None} for g in games],
                        ["random", "basic", "greedy"])
    level = sum(1 for a, b in pairs if (b, a) in set(pairs))
    assert level > 0


def test_tied_winners_stay_above_third_place() -> None:
    """Two seats sharing the win are each rated above the third seat (Plackett-Luce with
    shared ranks put third place above them: 26.556 against 26.000)."""
    games = [_game(["a", "b", "c"], [150, 150, 0], [0, 0, 30], [1, 1, 0]) for _ in range(5)]
    table = rate(games, ["a", "b", "c"])
    assert table["a"]["rating"] == pytest.approx(table["b"]["rating"])
    assert table["a"]["rating"] > table["c"]["rating"]
    text = markdown(table, "cmd", 1.0)
    assert text.index("| c |") > text.index("| a |") and text.index("| c |") > text.index("| b |")


def test_table_is_sorted_by_the_conservative_rating() -> None:
    table = {"few": {"rating": 1600.0, "sd": 200.0, "conservative": 1200.0},
             "many": {"rating": 1550.0, "sd": 20.0, "conservative": 1510.0}}
    for t in table.values():
        t.update(games=1, win=0.5, win_lo=0.1, win_hi=0.9, ms=0.0)
    text = markdown(table, "cmd", 1.0)
    assert text.index("| many |") < text.index("| few |")
