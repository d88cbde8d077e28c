"""Found by a CLI tester: ``rummy conformance`` passed an empty case file ("0 passed, 0
failed", exit 0), cases without an ``id`` or with an id used twice, and card lists given
as strings (``"cards": "AS 2S 3S"``) though the format has JSON arrays only
(tests/conformance/cases/README.md). Each is now a FAIL naming the file, line or field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rummy.conformance import run_case
from rummy_cli.main import main

ROOT = Path(__file__).resolve().parents[2]
MELD = '"kind": "meld", "rule": "R4.3", "cards": ["AS", "2S", "3S"], "valid": true'


def _run(capsys: pytest.CaptureFixture[str], *files: Path | str) -> tuple[int, list[str]]:
    code = main(["conformance", *map(str, files)])
    return code, capsys.readouterr().out.strip().splitlines()


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_a_file_with_no_cases_is_an_error(tmp_path: Path, text: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "empty.jsonl"
    f.write_text(text)
    code, out = _run(capsys, f)
    assert code == 1
    assert out == [f"FAIL {f}: no cases (the file is empty or holds only blank lines)",
                   "0 passed, 1 failed"]


@pytest.mark.parametrize(("line", "says"), [
    ("{" + MELD + "}", "no 'id'"),
    ('{"id": "", ' + MELD + "}", "'id' ''"),
    ('{"id": 7, ' + MELD + "}", "'id' 7"),
])
def test_a_case_without_an_id_names_file_and_line(tmp_path: Path, line: str, says: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": "m-1", ' + MELD + "}\n" + line + "\n")
    code, out = _run(capsys, f)
    assert code == 1
    assert out[0] == (f"FAIL {f}:2: malformed case: {says}; every case needs a non-empty "
                      "string id (tests/conformance/cases/README.md)")
    assert out[-1] == "1 passed, 1 failed"


def test_an_id_used_twice_in_a_run_names_both_places(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"id": "m-1", ' + MELD + '}\n{"id": "m-1", ' + MELD + "}\n")
    b.write_text('{"id": "m-1", ' + MELD + "}\n")
    code, out = _run(capsys, a, b)
    assert code == 1
    assert out == [
        f"FAIL {a}:2: malformed case: id 'm-1' given twice (first at {a}:1); ids must be "
        "unique within a run",
        f"FAIL {b}:1: malformed case: id 'm-1' given twice (first at {a}:1); ids must be "
        "unique within a run",
        "1 passed, 2 failed"]


@pytest.mark.parametrize(("case", "field"), [
    ({"kind": "meld", "cards": "AS 2S 3S", "valid": True}, "cards"),
    ({"kind": "hand_value", "hand": "AS AH 3D", "points": 5, "may_knock": True}, "hand"),
    ({"kind": "action", "table": "5S 6S 7S", "hand": ["8S"],
      "new_table": [["5S", "6S", "7S", "8S"]], "valid": True}, "table"),
    ({"kind": "action", "table": [["5S", "6S", "7S"]], "hand": ["8S"],
      "new_table": ["5S 6S 7S 8S"], "valid": True}, "new_table"),
    ({"kind": "best_play", "table": [], "hand": "8S KD", "best_points": 0}, "hand"),
    ({"kind": "round_score", "hands": ["2S AH", "KD"], "knocker": None, "scores": [0, 0],
      "winners": [0]}, "hands"),
])
def test_a_card_list_given_as_a_string_is_malformed(case: dict, field: str) -> None:
    ok, msg = run_case({"id": "x", "rule": "R1.4", **case})
    assert not ok
    assert msg.startswith(f"malformed case: field {field!r} must be a JSON array of ")


def test_the_testers_string_card_list_fails_in_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text('{"id": "m-s", "kind": "meld", "rule": "R4.3", "cards": "AS 2S 3S", '
                 '"valid": true}\n')
    code, out = _run(capsys, f)
    assert code == 1
    assert out == ["FAIL m-s (meld, R4.3): malformed case: field 'cards' must be a JSON "
                   "array of cards (R1.4), e.g. [\"AS\", \"2S\"], got 'AS 2S 3S'",
                   "0 passed, 1 failed"]


def test_the_shared_cases_still_all_pass() -> None:
    files = sorted(str(p) for p in (ROOT / "tests/conformance/cases").glob("*.jsonl"))
    res = subprocess.run([sys.executable, "-m", "rummy", "conformance", *files],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "261 passed, 0 failed"


def test_text_from_a_case_file_reaches_the_terminal_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # found by a tester: a case id that sets the window title and clears the
    # screen was printed raw in the FAIL line
    import json
    f = tmp_path / "esc.jsonl"
    f.write_text(json.dumps({"id": "a\x1b]0;PWNED\x07\x1b[2J", "kind": "meld\x1b[31m",
                             "rule": "R4\r\nforged", "cards": ["AS"], "valid": True}) + "\n")
    assert main(["conformance", str(f)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "FAIL a\\x1b]0;PWNED\\x07\\x1b[2J (meld\\x1b[31m, R4\\r\\nforged)" in out
