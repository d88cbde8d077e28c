"""What-if games (rummy/fork.py, `rummy replay LOG --fork N`): a seat-true fork re-deals
only what the forking seat could not see (its view of every step is unchanged, I3), an
omniscient fork is the exact prefix, and the fork is a log that replays and names its
origin in a header line."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from rummy.events import Event, GameStarted, dumps
from rummy.fork import fork_prefix
from rummy.invariants import verify_log
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.views import redact, view
from rummy_cli.fork import run_fork
from rummy_cli.main import build_parser, main
from rummy_cli.play import scripted
from rummy_cli.replay import read_log


@pytest.fixture(scope="module")
def game() -> tuple[Event, ...]:
    events = play_game(("basic", "greedy"), 7, RuleSet(target_score=60), record=True).events
    assert events is not None
    return events


def test_a_seat_true_fork_changes_only_what_the_seat_could_not_see(game):
    start = game[0]
    assert isinstance(start, GameStarted)
    truth = list(verify_log(game))
    changed = 0
    for n in range(2, len(game), 5):
        for seat in (0, 1):
            prefix = fork_prefix(game, n, seat, seed=4)
            states = list(verify_log(prefix))  # a legal log: every event, I1-I3
            assert len(prefix) == n
            assert [redact(e, seat, players=2, hand_size=start.rules.hand_size)
                    for e in prefix] == [redact(e, seat, players=2,
                                                hand_size=start.rules.hand_size)
                                         for e in game[:n]]
            assert view(states[-1], seat) == view(truth[n - 1], seat)
            assert states[-1].seed == truth[n - 1].seed  # later rounds deal the same
            changed += states[-1].hands[1 - seat] != truth[n - 1].hands[1 - seat]
            assert fork_prefix(game, n, seat, seed=4) == prefix  # the same seed, the same
    assert changed > 20  # the other hand really is re-dealt


def test_an_omniscient_fork_is_the_exact_prefix(game):
    assert fork_prefix(game, 40, None, omniscient=True) == list(game[:40])
    with pytest.raises(ValueError, match="seat 0..1"):
        fork_prefix(game, 40, None)
    with pytest.raises(ValueError, match=f"1..{len(game)}"):
        fork_prefix(game, 0, 0)


def test_a_fork_played_by_bots_is_a_log_that_replays(game, tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in game))
    fork = tmp_path / "fork.jsonl"
    assert main(["replay", str(log), "--fork", "50", "--auto", "--seed", "3",
                 "--save", str(fork)]) == 0
    assert f"fork written to {fork}" in capsys.readouterr().out
    header = json.loads(fork.read_text().splitlines()[0])
    seat = list(verify_log(game[:50]))[-1].turn
    assert header == {"fork": {"source": str(log), "after": 50, "seat": seat,
                               "mode": "seat-true", "seed": 3}}
    events = read_log(str(fork))  # the header line is skipped; old logs read as before
    assert isinstance(events[0], GameStarted) and len(events) > 50
    assert [redact(e, seat, players=2, hand_size=10) for e in events[:50]] == \
        [redact(e, seat, players=2, hand_size=10) for e in game[:50]]
    assert main(["replay", str(fork)]) == 0
    assert "verified" in capsys.readouterr().out
    assert main(["replay", str(fork), "--analyse", "--budget", "0"]) == 0


def test_a_fork_takes_typed_moves(game, tmp_path):
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in game))
    n = next(i for i, s in enumerate(verify_log(game), 1) if s.phase == "draw" and s.turn == 0
             and i > 30)
    fork = tmp_path / "typed.jsonl"
    args = build_parser().parse_args(["replay", str(log), "--fork", str(n), "--omniscient",
                                      "--save", str(fork)])
    out = io.StringIO()
    code = run_fork(game, args, console=Console(file=out, width=120),
                    input_fn=scripted(["d", "p", "q"]))
    assert code == 0
    text = out.getvalue()
    assert "you play seat 0" in text and "You draw" in text and "You pass" in text
    events = read_log(str(fork))
    assert events[:n] == list(game[:n])
    assert [type(e).__name__ for e in events[n:]] == ["CardDrawn", "Passed"]
    assert main(["replay", str(fork), "--allow-incomplete"]) == 0
    assert main(["replay", str(log), "--fork", str(len(game))]) == 2
