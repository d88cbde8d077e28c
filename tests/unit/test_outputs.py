"""Output paths are checked before the work (newcomer review): a sweep, a tournament or a
record export with an output it cannot write stops at once with one line, no traceback, and
a log that does not replay is not exported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rummy.events import dumps
from rummy.simulate import play_game
from rummy_cli.main import main
from rummy_cli.outputs import output_problem


def test_output_problem_names_what_is_wrong(tmp_path: Path) -> None:
    assert output_problem(None, "", "-", str(tmp_path / "new.json")) is None
    assert output_problem(str(tmp_path)) == f"cannot write {tmp_path}: it is a directory"
    missing = tmp_path / "no" / "x.html"
    assert output_problem(str(missing)) == (
        f"cannot write {missing}: there is no directory {missing.parent}")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert "permission denied" in (output_problem(str(locked / "x")) or "")


@pytest.mark.parametrize("argv", [
    ["sweep", "--rules", "knock_threshold=5,10", "--games", "2", "--players", "2",
     "--quiet", "--html", "/nonexistent-dir/x.html"],
    ["sweep", "--rules", "knock_threshold=5,10", "--games", "2", "--players", "2",
     "--quiet", "--json", "/nonexistent-dir/x.json"],
    ["tournament", "--bots", "basic,random", "--games", "1", "--markdown",
     "/nonexistent-dir/x.md"],
])
def test_an_unwritable_output_stops_before_the_work(argv: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot write /nonexistent-dir/x." in err and "there is no directory" in err


@pytest.mark.parametrize(("bots", "players", "says"), [
    ("human,human", 2, "--bots lists human more than once"),
    ("human,strategic", 3, "--players 3 needs at least 3 bots"),
    ("human,strategic", 6, "--players must be 2..5, got 6 (R1.1)"),
])
def test_tournament_says_which_rule_was_broken(bots: str, players: int, says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "--bots", bots, "--players", str(players)]) == 2
    assert says in capsys.readouterr().err


def test_record_export_refuses_a_log_that_does_not_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = list(play_game(["basic", "basic"], 3, record=True).events)
    gap = tmp_path / "gap.jsonl"
    gap.write_text("".join(dumps(e) + "\n" for i, e in enumerate(events) if i != 2))
    out = tmp_path / "gap.txt"
    assert main(["record", "export", str(gap), "-o", str(out)]) == 1
    assert "corrupt event log: event 3" in capsys.readouterr().err
    assert not out.exists()  # nothing written
    log = tmp_path / "ok.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in events))
    assert main(["record", "export", str(log), "-o", str(tmp_path)]) == 1
    assert "it is a directory" in capsys.readouterr().err
