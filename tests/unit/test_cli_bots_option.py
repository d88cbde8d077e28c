"""Found by a CLI tester: ``rummy simulate --bots ""`` silently played the default line-up,
and an empty name (``--bots basic,,random``) was silently dropped. Every ``--bots`` (and
``--compare-bots``) now refuses an empty list or name; leaving the option out still means
the default line-up."""

from __future__ import annotations

import json

import pytest

from rummy_cli.main import main
from rummy_cli.options import bot_names


def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # usage errors raise SystemExit(2)
        return int(e.code) if isinstance(e.code, int) else 1


def test_bot_names() -> None:
    assert bot_names(None) is None
    assert bot_names(" basic , random") == ["basic", "random"]
    with pytest.raises(ValueError, match=r"^--bots is empty"):
        bot_names("")
    with pytest.raises(ValueError, match=r"^--bots is empty"):
        bot_names(" , ")
    with pytest.raises(ValueError, match=r"name 2 of 3 is empty"):
        bot_names("basic,,random")
    with pytest.raises(ValueError, match=r"^--compare-bots 'basic,': name 2 of 2 is empty"):
        bot_names("basic,", "--compare-bots")


@pytest.mark.parametrize(("bots", "says"), [
    ("", "--bots is empty"),
    ("  ", "--bots is empty"),
    ("basic,,random", "--bots 'basic,,random': name 2 of 3 is empty"),
    (",basic", "name 1 of 2 is empty"),
])
@pytest.mark.parametrize("command", [
    ["simulate", "--games", "1", "--players", "2", "--quiet"],
    ["sweep", "--rules", "knock_threshold=1,2", "--games", "1", "--players", "2", "--quiet"],
    ["batch", "submit", "--games", "10"],
    ["play"],
    ["tournament", "--games", "1"],
    ["tune", "--space", "knock_threshold=0..2", "--objective", "minimise stock_rounds",
     "--budget-games", "10"],
])
def test_an_empty_bot_list_or_name_is_an_error(
        command: list[str], bots: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _code([*command, "--bots", bots]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and "Traceback" not in err


def test_batch_ab_empty_compare_bots_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    # was taken as "no --compare-bots" ("an A/B batch needs ...")
    assert _code(["batch", "ab", "--games", "10", "--compare-bots", ""]) == 2
    assert "--compare-bots is empty" in capsys.readouterr().err


def test_without_bots_the_default_line_up_plays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--games", "1", "--players", "2", "--jobs", "1", "--quiet",
                 "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["bots"] == ["strategic", "greedy"]
