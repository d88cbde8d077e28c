"""A bot failure never loses a batch: the game is recorded as failed, with its
index and error; the batch finishes, the report lists it, the exit code is non-zero."""

from __future__ import annotations

import pytest

from rummy.bots import BOTS
from rummy.bots.random_bot import RandomBot
from rummy.simulate import Aggregate, report, run_games
from rummy_cli.main import main


class CrashyBot(RandomBot):
    """A random bot that raises on its first action in one game of three (by its seed)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.crash = seed // 8 % 3 == 0  # play_game seeds a seat's bot with seed * 8 + seat

    def act(self, view):
        if self.crash:
            raise RuntimeError("no room to park a wildcard")
        return super().act(view)


@pytest.fixture
def crashy(monkeypatch):
    monkeypatch.setitem(BOTS, "crashy", CrashyBot)
    return "crashy"


def test_run_games_counts_failed_games_apart(crashy):
    agg = run_games([crashy, "random"], 11, 0, 12)
    assert agg.failed, "some game of twelve should fail"
    assert agg.games + len(agg.failed) == 12
    assert all(msg == "RuntimeError: no room to park a wildcard" for msg in agg.failed.values())
    rep = report(agg)
    assert rep["games"] == agg.games
    assert [f["index"] for f in rep["failed_games"]] == sorted(agg.failed)
    # failures survive the JSON round trip and merging (chunks on processes or workers)
    again = Aggregate.from_dict(agg.to_dict())
    assert again == agg
    assert Aggregate.empty(2).merge(agg).failed == agg.failed


def test_simulate_finishes_the_batch_lists_failures_and_exits_non_zero(crashy, capsys):
    code = main(["simulate", "--games", "12", "--players", "2", "--bots", f"{crashy},random",
                 "--seed", "11", "--jobs", "1", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "Failed games" in out and "no room to park a wildcard" in out
    assert "game(s) failed" in err and "--replay-game" in err
    failed = sorted(run_games([crashy, "random"], 11, 0, 12).failed)
    code = main(["simulate", "--games", "12", "--players", "2", "--bots", f"{crashy},random",
                 "--seed", "11", "--replay-game", str(failed[0])])
    assert code == 1
    assert f"game {failed[0]} of seed 11" in capsys.readouterr().err


def test_simulate_without_failures_exits_zero(capsys):
    assert main(["simulate", "--games", "3", "--players", "2", "--bots", "random",
                 "--jobs", "1", "--quiet"]) == 0
