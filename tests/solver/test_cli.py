"""``rummy solve`` (rummy_cli/solve.py): notation in, best play out."""

from __future__ import annotations

import io
import json

import pytest

from rummy_cli.solve import main


def test_solve_prints_value_and_table(capsys) -> None:
    assert main(["solve", "--table", "5S 6S 7S", "--hand", "8S KD"]) == 0
    out = capsys.readouterr().out
    assert "value 8 points" in out and "new table: 5S 6S 7S 8S" in out


def test_solve_explain_marks_hand_cards_and_jokers(capsys) -> None:
    assert main(["solve", "--table", "5S 6S *7S", "--hand", "7S KD QD", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "value 27 points" in out
    assert "[7S]" in out and "re-declared (R5.8): *7S" in out


def test_solve_backends_print_the_same_play(capsys) -> None:
    outs = []
    for backend in ("pure", "auto"):
        assert main(["solve", "--table", "5S 6S *7S | 8H 8D 8C", "--hand", "7S KD QD 8S *",
                     "--backend", backend]) == 0
        outs.append(capsys.readouterr().out.split("[")[0])  # drop the timing
    assert outs[0] == outs[1] and "value" in outs[0]


def test_solve_unknown_backend_is_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["solve", "--table", "5S 6S 7S", "--hand", "8S", "--backend", "gpu"])
    assert e.value.code == 2
    assert "invalid choice: 'gpu'" in capsys.readouterr().err


def test_solve_no_play(capsys) -> None:
    assert main(["solve", "--table", "5S 6S 7S", "--hand", "KD"]) == 0
    assert "no legal meld action" in capsys.readouterr().out


def test_solve_json_lines_from_stdin(capsys, monkeypatch) -> None:
    line = json.dumps({"id": "x", "table": [["5S", "6S", "7S"]], "hand": ["8S", "KD"],
                       "best_points": 8})
    monkeypatch.setattr("sys.stdin", io.StringIO(line + "\n"))
    assert main(["solve", "--input", "-", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["points"] == 8 and out["expected"] == 8 and out["id"] == "x"


def test_solve_bad_card_is_exit_2(capsys) -> None:
    assert main(["solve", "--hand", "XX"]) == 2
    assert "XX" in capsys.readouterr().err


# --- found by the newcomer review ----------------------------------------------------------

def test_explain_does_not_list_jokers_of_kept_melds_as_redeclared(capsys) -> None:
    assert main(["solve", "--table", "5S 6S *7S | 9H 9D 9C", "--hand", "9S",
                 "--explain"]) == 0
    out = capsys.readouterr().out
    assert "kept     5S 6S *7S" in out
    assert "re-declared" not in out


def test_keep_error_names_the_card_in_notation(capsys) -> None:
    assert main(["solve", "--table", "5S 6S 7S", "--hand", "8S", "--keep", "9S"]) == 2
    assert "keep card 9S is not in the hand" in capsys.readouterr().err


def test_node_limit_without_a_play_is_not_reported_as_no_play(capsys) -> None:
    table = "3S 4S 5S 6S | 6S 6D *6C | JH QH KH AH | JD QD KD AD"
    hand = "8S QS QS AH 3H AC 8C JC"
    assert main(["solve", "--table", table, "--hand", hand]) == 0
    assert "value 10 points" in capsys.readouterr().out
    assert main(["solve", "--table", table, "--hand", hand, "--node-limit", "5"]) == 0
    assert "no play found within --node-limit 5" in capsys.readouterr().out
    assert main(["solve", "--table", table, "--hand", hand, "--node-limit", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["optimal"] is False


def test_missing_hand_is_a_usage_error(capsys) -> None:
    assert main(["solve"]) == 2
    assert "give the hand with --hand" in capsys.readouterr().err


def test_solve_tells_a_budget_stop_from_no_play() -> None:
    from rummy.cards import parse_cards
    from rummy.melds import parse_table
    from rummy.solver import best_play, solve

    table = parse_table("3S 4S 5S 6S | 6S 6D *6C | JH QH KH AH | JD QD KD AD")
    hand = parse_cards("8S QS QS AH 3H AC 8C JC")
    assert solve(table, hand, node_limit=5) == (None, False)
    assert best_play(table, hand, node_limit=5) is None
    full = solve(table, hand)
    assert full.optimal and full.play is not None and full.play.points == 10
    assert solve(parse_table("5S 6S 7S"), parse_cards("KD")) == (None, True)


def test_notation_strings_are_a_clear_error() -> None:
    from rummy.solver import best_play

    with pytest.raises(ValueError, match="card indices, not notation"):
        best_play("5S 6S *7S", "7S KD QD")
