"""``rummy play``: whole games driven by scripted input, rejected moves, the CLI options."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable

import pytest
from rich.console import Console

from rummy.bots.basic import BasicBot
from rummy.cards import format_card
from rummy.commands import Meld
from rummy.evolve import replay
from rummy.melds import is_valid_meld, parse_table
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER
from rummy.views import view
from rummy_cli.main import build_parser, main
from rummy_cli.play import PlaySession, scripted
from rummy_cli.replay import read_log


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=100, color_system=None, force_terminal=False), out


def _session(players: int = 2, seed: int = 11, bots: tuple[str, ...] = ("basic",),
             **rules: int) -> tuple[PlaySession, io.StringIO]:
    console, out = _console()
    session = PlaySession(players, bots, seed, RuleSet.from_dict(rules), console=console)
    return session, out


def _passive(prompt: str) -> str:
    """A person who never melds: draw, pass, end the turn (knock when allowed)."""
    if prompt.startswith("draw"):
        return "d"
    if prompt.startswith("meld or pass"):
        return "p"
    return "k"


def _like_basic(session: PlaySession) -> Callable[[str], str]:
    """A person who types, in notation, the table the basic bot would make."""
    def answer(prompt: str) -> str:
        v = view(session.state, 0)
        if "meld" in v.actions:
            table = BasicBot.plan(v)
            if table is None:
                return "p"
            return "m " + " | ".join(" ".join(format_card(c) for c in m) for m in table)
        return {"draw": "d", "knock": "k"}[v.actions[0]]
    return answer


def test_whole_game_scripted_passive_person_reaches_game_over() -> None:
    session, out = _session(seed=5, target_score=10)
    session.input_fn = _passive
    assert session.run() == 0
    text = out.getvalue()
    assert session.state.phase == GAME_OVER
    assert "Game over (R9)" in text and "Winner:" in text
    assert "basic (seat 1) draws" in text  # one line per bot action
    assert "Round 1 is over" in text
    assert "You pass (R3.2)." in text  # a pass is confirmed like a draw or a meld
    # the pass after the second draw is R3.3's (found by an attack: it said R3.2 too)
    assert "(draw 2 of 3)\nYou pass (R3.3)." in text
    assert "(draw 2 of 3)\nYou pass (R3.2)." not in text
    assert replay(session.events) == session.state  # the log is complete (I4)


@pytest.mark.parametrize("players,seed", [(2, 1), (3, 2), (4, 3), (5, 4)])
def test_whole_game_typed_melds_in_notation(players: int, seed: int) -> None:
    session, out = _session(players, seed, ("basic", "random")[:players - 1], target_score=30)
    session.input_fn = _like_basic(session)
    assert session.run() == 0
    text = out.getvalue()
    assert "You meld" in text
    assert "✗" not in text  # every typed table was legal
    assert replay(session.events) == session.state


def test_illegal_meld_cites_R5_3_and_changes_nothing() -> None:
    session, out = _session(seed=11)
    hand = session.state.hands[0]
    bad = next(t for t in itertools.combinations(sorted(set(hand) - {52}), 3)
               if not is_valid_meld(t))
    before: list[object] = []
    after: list[object] = []

    def answer(prompt: str) -> str:
        if prompt.startswith("draw") and not before:
            return "d"
        if prompt.startswith("meld or pass") and not before:
            before.append((session.state, len(session.events)))
            return "a " + " ".join(format_card(c) for c in bad)
        if before and not after:
            after.append((session.state, len(session.events)))
        return "q"

    session.input_fn = answer
    assert session.run() == 0  # q exits 0
    assert before and before == after
    text = out.getvalue()
    assert "R5.3" in text and "nothing was changed" in text
    assert "offending meld" in text


def test_card_not_in_hand_cites_R5_4() -> None:
    session, out = _session(seed=11)
    missing = next(c for c in range(52) if c not in session.state.hands[0])
    session.input_fn = scripted(["d", (f"a {format_card(missing)} {format_card(missing)} "
                                 f"{format_card(missing)}"), "q"])
    session.run()
    assert "R5.4" in out.getvalue()


def test_malformed_card_names_the_token() -> None:
    session, out = _session(seed=11)
    session.input_fn = scripted(["d", "a 5X 6S 7S", "x 9 5S", "q"])
    session.run()
    text = out.getvalue()
    assert "'5X'" in text and "R1.4" in text
    assert "meld number" in text or "table is empty" in text


def test_out_of_phase_command_cites_the_turn_rule() -> None:
    session, out = _session(seed=11)
    session.input_fn = scripted(["p", "k", "q"])
    session.run()
    text = out.getvalue()
    assert "R3.6" in text  # must draw first
    assert "R6.1" in text  # knocking only after the turn


def test_add_and_extend_shorthands_build_the_whole_new_table() -> None:
    session, _ = _session(seed=11)
    table = ((0, 1, 2), (13, 26, 39))
    session.state = session.state._replace(table=table)
    assert session.parse("a", "9H 9S 9C") == Meld(0, (*table, (21, 8, 47)))
    assert session.parse("x", "1 4S *5S") == Meld(0, ((0, 1, 2, 3, 53 + 4), (13, 26, 39)))
    assert session.parse("m", "5S 6S 7S | 8H 8D 8C") == Meld(0, ((4, 5, 6), (20, 33, 46)))
    assert session.parse("zz", "") is None


def test_help_hint_view_and_enter() -> None:
    session, out = _session(seed=11)
    session.input_fn = scripted(["h", "hint", "v", "", "", "q"])
    assert session.run() == 0
    text = out.getvalue()
    assert "x <n> <cards>" in text
    assert "the basic bot would type:" in text
    assert "You draw" in text  # Enter draws when drawing is due
    assert "you may: m/a/x meld, p pass" in text  # ... and otherwise lists the choices
    assert "You left the game" in text


def test_end_of_input_quits() -> None:
    session, _out = _session(seed=11)
    session.input_fn = scripted([])
    assert session.run() == 0


def test_rendering_numbers_melds_and_sorts_the_hand_with_points() -> None:
    session, out = _session(seed=11)
    session.state = session.state._replace(table=((0, 1, 2),), hands=((51, 3, 52), (4,)),
                                           turn=0, phase=DRAW)
    session.render()
    text = out.getvalue()
    assert "1. AS 2S 3S" in text
    assert "4S(4) KC(10) *(25)" in text and "39 points" in text
    assert "Your turn" in text


def test_cli_play_registered_and_saves_a_replayable_log(tmp_path, monkeypatch) -> None:
    parser = build_parser()
    args = parser.parse_args(["play", "--players", "3", "--bots", "basic,random", "--seed",
                              "9", "--rules", "target_score=10", "--save",
                              str(tmp_path / "g.jsonl")])
    console, _out = _console()
    assert args.func(args, console=console, input_fn=_passive) == 0
    events = read_log(str(tmp_path / "g.jsonl"))
    assert replay(events).phase == GAME_OVER
    assert main(["replay", str(tmp_path / "g.jsonl")]) == 0


@pytest.mark.parametrize("argv,needle", [
    (["play", "--players", "6"], "R1.1"),
    (["play", "--bots", "nosuch"], "unknown bot"),
    (["play", "--rules", "target_score=0"], "R11"),
    (["play", "--players", "2", "--bots", "basic,random"], "bot seat"),
])
def test_cli_play_bad_options(argv: list[str], needle: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2  # bad arguments: exit code 2, as every subcommand
    assert needle in capsys.readouterr().err


def test_meld_numbers_stay_while_melds_stay():
    # meld numbers changed every turn (the table is kept sorted by the engine)
    session, _out = _session(seed=11)
    s = session.state
    t1 = parse_table("9H 9S 9C | 2D 3D 4D")
    session.state = s._replace(table=t1)
    first = session.numbered_table()
    # a new meld that sorts first in the engine's order still gets the next number
    t2 = parse_table("AS 2S 3S | 9H 9S 9C | 2D 3D 4D")
    session.state = s._replace(table=tuple(sorted(t2)))
    second = session.numbered_table()
    assert second[:2] == first and second[2] == parse_table("AS 2S 3S")[0]
    assert isinstance(session, PlaySession)


def test_the_hint_is_the_shortest_pasteable_input():
    session, _out = _session(seed=11)
    s = session.state
    session.state = s._replace(table=parse_table("9H 9S 9C | 2D 3D 4D"))
    session.numbered_table()
    assert session.shortest_meld(parse_table("9H 9S 9C | 2D 3D 4D | KS KH KC")) == \
        "a KS KH KC"
    assert session.shortest_meld(parse_table("9H 9S 9C 9D | 2D 3D 4D")) == "x 1 9D"
    # taking a meld apart is one 'r' naming only the changed melds, not the whole table
    assert session.shortest_meld(parse_table("9H 9S 9C | 2D 3D | 4D 5D 6D")) == \
        "r 2 = 2D 3D | 4D 5D 6D"


def test_a_saved_unfinished_game_opens_with_the_printed_command(tmp_path):
    # the printed replay command failed on the unfinished log
    import shlex

    path = tmp_path / "left.jsonl"
    args = build_parser().parse_args(["play", "--seed", "9", "--save", str(path)])
    console, out = _console()
    assert args.func(args, console=console, input_fn=scripted(["q"])) == 0  # q exits 0
    printed = out.getvalue().split("(rummy ", 1)[1].split(")", 1)[0]
    argv = shlex.split(printed)
    assert argv[:2] == ["replay", str(path)] and "--allow-incomplete" in argv
    assert main(argv) == 0


def test_round_start_grammar():
    # "you plays first"
    said = ""
    for seed in range(12):
        session, out = _session(seed=seed)
        session.input_fn = scripted(["q"])
        session.run()
        said += out.getvalue()
    assert "you plays" not in said and "you play first" in said


def test_compound_and_rearranging_moves_are_one_meld_action():
    from rummy.cards import parse_cards
    from rummy.melds import table_text
    from rummy.state import MELD_OR_PASS
    session, out = _session(seed=11)
    s = session.state
    hand = parse_cards("9D KS KH KC 5D 7C")
    session.state = s._replace(table=parse_table("9H 9S 9C | 2D 3D 4D"),
                               hands=(hand, *s.hands[1:]), phase=MELD_OR_PASS, turn=0,
                               draws=1)
    session.numbered_table()
    # the hint form of two changes, typed back: one Melded event, both changes made
    assert session.handle("x 1 9D; x 2 5D; a KS KH KC") == "moved"
    assert table_text(session.state.table) == "9S 9H 9D 9C | KS KH KC | 2D 3D 4D 5D"
    assert sorted(session.state.hands[0]) == sorted(parse_cards("7C"))
    assert session.handle("r 1 = 9H 9S 9C") == "rejected"  # not the meld phase any more
    assert "not allowed" in out.getvalue() or "✗" in out.getvalue()
