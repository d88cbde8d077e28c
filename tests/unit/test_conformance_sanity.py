"""Found by attacks: ``rummy conformance`` judged cases that describe positions the
rules never reach (a rule number that does not exist, more copies of a card than the decks
hold, an empty meld, a game that has not ended), printed two messages for a file that is
not UTF-8, refused a UTF-8 byte-order mark, and read a line without end until memory ran
out; ``rummy replay`` and ``rummy record import`` read any file whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rummy.conformance import RULE_IDS, run_case
from rummy_cli.inputs import InputTooLarge, read_bounded
from rummy_cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_rule_ids_are_the_numbered_rules_of_the_rules_document() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    numbered = set(re.findall(r"\*\*(R\d+\.\d+[a-z]?)\*\*", text))
    assert numbered == {r for r in RULE_IDS if "." in r}
    assert {"R5", "R11", "I1", "I4", "R9.3a"} <= RULE_IDS and "R12" not in RULE_IDS


@pytest.mark.parametrize("case, says", [
    ({"kind": "meld", "rule": "R99", "cards": ["AS", "2S", "3S"], "valid": True},
     "rule 'R99' is not a rule of docs/rules.md"),
    ({"kind": "action", "rule": "R5.3", "table": [[]], "hand": ["AS"],
      "new_table": [["AS"]], "valid": False},
     "meld 1 of the table before the action is empty"),
    ({"kind": "hand_value", "rule": "R6.1", "hand": ["*", "*", "*"], "points": 75,
      "may_knock": False}, "3 jokers in the hand; 2 decks hold 2 (R1.2)"),
    ({"kind": "best_play", "rule": "R5", "table": [["AS", "2S", "3S"]],
      "hand": ["AS", "AS"], "best_points": 0}, "3 copies of AS in the table and the hand"),
    ({"kind": "round_score", "rule": "R7", "hands": [["AS", "AS"], ["AS", "AS"]],
      "knocker": None, "scores": [0, 0], "winners": [0, 1]},
     "4 copies of AS in the 2 hands; 1 deck holds 1 (R1.2)"),
    ({"kind": "game_end", "rule": "R9", "totals": [10, 20], "rounds_won": [1, 1],
      "final": [0, 0], "winners": [1]}, "no total reaches 150: the game has not ended"),
    ({"kind": "game_end", "rule": "R9", "totals": [150, 20], "rounds_won": [1],
      "final": [0, 0], "winners": [0]}, "2 totals but 1 rounds_won"),
])
def test_an_impossible_case_is_malformed(case: dict, says: str) -> None:
    ok, message = run_case({"id": "x", **case})
    assert not ok and message.startswith("malformed case: ") and says in message


def test_two_copies_in_two_hands_of_three_players_are_possible() -> None:
    ok, message = run_case({"id": "x", "kind": "round_score", "rule": "R7",
                            "hands": [["AS"], ["AS"], ["KD"]], "knocker": None,
                            "scores": [0, 0, 0], "winners": [0, 1]})
    assert "malformed" not in message


def _run(capsys: pytest.CaptureFixture[str], *files: Path | str) -> tuple[int, list[str]]:
    code = main(["conformance", *map(str, files)])
    return code, capsys.readouterr().out.strip().splitlines()


MELD = b'{"id": "m", "kind": "meld", "rule": "R4.3", "cards": ["QS", "KS", "AS"], ' \
       b'"valid": true}\n'


def test_a_byte_order_mark_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bom.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + MELD)
    assert _run(capsys, f) == (0, ["1 passed, 0 failed"])


def test_a_file_that_is_not_utf8_fails_once(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b"\xff\xfe\n")
    code, lines = _run(capsys, f)
    assert code == 1 and len(lines) == 2 and "codec can't decode" in lines[0]
    assert lines[1] == "0 passed, 1 failed"


def test_a_line_without_end_is_refused_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "long.jsonl"
    f.write_bytes(MELD + b"x" * (2 * 1024 * 1024) + b"\n" + MELD)
    code, lines = _run(capsys, f)
    assert code == 1 and lines == [
        f"FAIL {f}:2: malformed line: longer than 1024 KiB; the rest of the file is skipped",
        "1 passed, 1 failed"]


def test_inputs_are_read_within_their_bound(tmp_path: Path) -> None:
    f = tmp_path / "big.jsonl"
    f.write_bytes(b"{" * 101)
    assert read_bounded(str(f), limit=101) == b"{" * 101
    with pytest.raises(InputTooLarge, match="big.jsonl is larger than"):
        read_bounded(str(f), limit=100)


@pytest.mark.parametrize("command", [["replay"], ["record", "import"]])
def test_replay_and_import_refuse_an_endless_input(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    args = [*command, "/dev/zero"] + (["-o", "/dev/null"] if command[0] == "record" else [])
    assert main(args) == 1
    assert "/dev/zero is larger than 256 MiB" in capsys.readouterr().err
