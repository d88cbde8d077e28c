"""Found by a CLI tester: ``rummy replay`` accepted a GameStarted whose ``names`` did not
match ``players``, or with a negative ``turn_seconds``, and said "every event legal". Such
a log is now rejected with the event number, like any tampered log (as CreateGame refuses
them, rummy.decide)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rummy.events import dumps, from_dict
from rummy.invariants import ReplayError, verify_log
from rummy.simulate import play_game
from rummy_cli.main import main


def _log(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    lines = [json.loads(dumps(e)) for e in play_game(["basic", "random"], 11,
                                                      record=True).events]
    edit(lines[0])
    p = tmp_path / "game.jsonl"
    p.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return p


@pytest.mark.parametrize(("edit", "says"), [
    (lambda d: d.update(names=d["names"][:1]), "event 1: 1 names for 2 seats (one per seat)"),
    (lambda d: d.update(names=[*d["names"], "extra"]),
     "event 1: 3 names for 2 seats (one per seat)"),
    (lambda d: d.update(turn_seconds=-5), "event 1: turn_seconds must be 0..86400, got -5"),
    (lambda d: d.update(turn_seconds=86_401),
     "event 1: turn_seconds must be 0..86400, got 86401"),
    # found by a tester: a name that sets the window title and clears the screen
    (lambda d: d.update(names=["\x1b]0;PWNED\x07\x1b[2J", d["names"][1]]),
     "event 1: a seat name has control or format characters"),
    (lambda d: d.update(names=[d["names"][0], "eve\r\n12:00 seat 1 knocked"]),
     "event 1: a seat name has control or format characters"),
])
def test_replay_rejects_a_bad_game_started(tmp_path: Path, edit: Any, says: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(_log(tmp_path, edit))]) == 1
    out = capsys.readouterr().out
    assert f"error: inconsistent log: {says}" in out and "every event legal" not in out
    assert "\x1b" not in out and "PWNED" not in out  # the name itself is never printed


def test_verify_log_names_the_event(tmp_path: Path) -> None:
    p = _log(tmp_path, lambda d: d.update(turn_seconds=-1))
    events = [from_dict(json.loads(line)) for line in p.read_text().splitlines()]
    with pytest.raises(ReplayError, match="turn_seconds must be 0..86400, got -1") as e:
        list(verify_log(events))
    assert e.value.index == 1


def test_a_log_without_names_still_replays(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # ``names`` has a default (a log written before names existed): no names is no mismatch
    assert main(["replay", str(_log(tmp_path, lambda d: d.pop("names")))]) == 0
    assert "every event legal" in capsys.readouterr().out
