"""Found by a CLI tester: ``rummy batch submit --games 10`` said "10 games in 1 chunks of
200", and at 80 columns the by-bot table of the simulate report cut the win-rate interval
to "(22.4–29.4…"."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from rummy.balance import BalanceReport
from rummy.simulate import merge_all, play_range
from rummy_cli.main import main
from rummy_cli.options import chunks_text
from rummy_cli.report_format import render


@pytest.mark.parametrize(("games", "chunks", "size", "text"), [
    (10, 1, 200, "10 games in 1 chunk of 10"),
    (1, 1, 200, "1 game in 1 chunk of 1"),
    (400, 2, 200, "400 games in 2 chunks of 200"),
    (450, 3, 200, "450 games in 3 chunks of up to 200"),
])
def test_chunks_text(games: int, chunks: int, size: int, text: str) -> None:
    assert chunks_text(games, chunks, size) == text


def test_batch_submit_says_chunk_in_the_singular(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import rummy_worker.cli
    sent: list[Any] = []

    def create_and_send(store: Any, spec: Any, soft: float, hard: float) -> tuple[str, str]:
        sent.append(spec)
        return "b1", ""

    monkeypatch.setattr(rummy_worker.cli, "_store", lambda: object())
    monkeypatch.setattr(rummy_worker.cli, "_create_and_send", create_and_send)
    assert main(["batch", "submit", "--games", "10", "--players", "2", "--bots", "basic"]) == 0
    out, err = capsys.readouterr()
    assert out == "b1\n"
    assert err == "batch b1: 10 games in 1 chunk of 10\n"
    assert sent[0].chunks == 1


def test_by_bot_table_fits_80_columns_with_whole_intervals() -> None:
    # the tester's run is `--games 200 --players 4 --seed 7`; 40 games give the same widths
    bots = ["strategic", "greedy", "strategic", "greedy"]
    rep = BalanceReport.of(merge_all(4, [play_range(bots, 7, 0, 40)]))
    console = Console(file=io.StringIO(), width=80, color_system=None)
    render(rep, console)
    text = console.file.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for name, s in rep.bots.items():
        whole = f"({100 * s.win.low:.1f}–{100 * s.win.high:.1f}%)"
        row = next(line for line in text.splitlines() if f" {name} " in line)
        assert whole in row, row
        assert re.search(rf"{100 * s.win.naive_low:.1f}–{100 * s.win.naive_high:.1f}%", row)


@pytest.mark.parametrize("argv, usage", [
    (["simulate", "--bogus"], "usage: rummy simulate"),
    (["record", "import", "x.txt", "--zap"], "usage: rummy record import"),
    (["--zap"], "usage: rummy [-h]"),
])
def test_an_unknown_option_shows_the_usage_of_its_subcommand(argv, usage, capsys):
    # found by an attack: every unknown option printed rummy's own usage
    from rummy_cli.main import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(usage)
    assert f"unrecognized arguments: {argv[-1]}" in err


def test_simulate_help_explains_jobs_and_chunk_size_zero(capsys):
    from rummy_cli.main import main

    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default 0: one per CPU" in out and "default 0: about games" in out
    assert "issue" not in out
