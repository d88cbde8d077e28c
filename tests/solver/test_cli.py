"""``rummy solve`` (rummy/solver/cli.py): notation in, best play out."""

from __future__ import annotations

import io
import json

import pytest

from rummy.solver.cli import main


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
