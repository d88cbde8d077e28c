"""The seat commands by kind, and each phase's default move, in the core."""

from __future__ import annotations

import pytest

from rummy.commands import (
    COMMAND_KINDS,
    CreateGame,
    Draw,
    EndTurn,
    Knock,
    Meld,
    Pass,
    command_kind,
    make_command,
)
from rummy.decide import DEFAULT_KIND, default_command, step
from rummy.errors import GameOverError, NotationError
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS
from tests.unit.test_engine import new_game


def test_kinds_round_trip():
    table = parse_table("5S 6S 7S")
    assert COMMAND_KINDS == ("draw", "pass", "meld", "knock", "end_turn")
    for kind in COMMAND_KINDS:
        cmd = make_command(kind, 2, table if kind == "meld" else None)
        assert command_kind(cmd) == kind and cmd.seat == 2
    assert make_command("meld", 1, table) == Meld(1, table)
    assert [type(make_command(k, 0)) for k in ("draw", "pass", "knock", "end_turn")] == \
        [Draw, Pass, Knock, EndTurn]


@pytest.mark.parametrize("kind, table, msg", [
    ("fold", None, "unknown command kind 'fold'; known: draw, pass, meld"),
    ("meld", None, "needs the whole new table"),
])
def test_bad_kinds(kind, table, msg):
    with pytest.raises(ValueError, match=msg):
        make_command(kind, 0, table)


def test_command_kind_refuses_create_game():
    with pytest.raises(ValueError, match="not a seat command: CreateGame"):
        command_kind(CreateGame(2, 1))


def test_default_command_of_every_stable_phase_is_legal():
    assert DEFAULT_KIND == {DRAW: "draw", MELD_OR_PASS: "pass", KNOCK_OR_END: "end_turn"}
    s, _ = new_game(2, seed=3, target_score=1)
    seen = set()
    while s.phase != GAME_OVER:
        seen.add(s.phase)
        cmd = default_command(s)
        assert command_kind(cmd) == DEFAULT_KIND[s.phase] and cmd.seat == s.turn
        s, _ = step(s, cmd)
    assert {DRAW, MELD_OR_PASS} <= seen
    with pytest.raises(GameOverError):
        default_command(s)


@pytest.mark.parametrize("name", ["\x1b[2J", "a\nb", "\x00", "\u202eevil", "tab\there"])
def test_a_seat_name_must_be_printable(name: str) -> None:
    # a name reaches terminals (rummy replay), logs and pages: no escapes or line breaks
    with pytest.raises(NotationError, match="printable"):
        step(None, CreateGame(2, 1, RuleSet(), (name, "bob")))
    state, _ = step(None, CreateGame(2, 1, RuleSet(), ("Zoë 🂡", "bob")))
    assert state.names == ("Zoë 🂡", "bob")
