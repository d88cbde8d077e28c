"""``rummy tournament``: schedule, ratings and the Markdown section."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("openskill")

from rummy_cli.main import main  # noqa: E402
from rummy_cli.tournament import (  # noqa: E402
    BEGIN,
    END,
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
