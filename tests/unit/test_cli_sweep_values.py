"""Found by a CLI tester: ``rummy sweep --rules knock_threshold=0,5,5`` ran value 5 twice.
A value given twice (or two values that are the same rule) is now an error."""

from __future__ import annotations

import pytest

from rummy_cli.main import main
from rummy_cli.sweep import parse_sweep


def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 1


def test_parse_sweep_refuses_a_value_given_twice() -> None:
    with pytest.raises(ValueError, match="value 5 given twice for knock_threshold"):
        parse_sweep(["knock_threshold=0,5,5"])
    with pytest.raises(ValueError, match="value 7 given twice for hand_size"):
        parse_sweep(["knock_threshold=0,5", "hand_size=7, 7"])


@pytest.mark.parametrize(("values", "says"), [
    ("0,5,5", "value 5 given twice for knock_threshold"),
    ("5,05", "knock_threshold=5 and knock_threshold=05 are the same rules"),
])
@pytest.mark.parametrize("command", [["sweep"], ["batch", "sweep"]])
def test_sweep_commands_refuse_a_value_given_twice(
        command: list[str], values: str, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _code([*command, "--rules", f"knock_threshold={values}", "--games", "1",
                  "--players", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err
