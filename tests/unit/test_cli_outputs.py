"""Found by a CLI tester: an output path that cannot be written lost a finished run
(``rummy simulate --json /nonexistent/x.json`` played every game, then died with a
FileNotFoundError traceback; ``rummy batch report ID --csv /nonexistent/r.csv`` too).
Every output option is now checked before the work (:mod:`rummy_cli.outputs`), and a
write that still fails at the end is one ``error:`` line, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rummy.events import dumps
from rummy.simulate import play_game
from rummy_cli.main import main

MISSING = "/nonexistent-dir/x"


def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # usage errors raise SystemExit(2)
        return int(e.code) if isinstance(e.code, int) else 1


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    p = tmp_path / "game.jsonl"
    p.write_text("".join(dumps(e) + "\n" for e in play_game(["basic", "random"], 11,
                                                            record=True).events))
    return p


def _argvs(log: Path) -> list[list[str]]:
    return [
        ["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--quiet",
         "--json", MISSING + ".json"],
        ["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--quiet",
         "--replay-game", "0", "--json", MISSING + ".json"],
        ["replay", str(log), "--html", MISSING + ".html"],
        ["replay", str(log), "--analyse", "--json", MISSING + ".json"],
        ["play", "--save", MISSING + ".jsonl"],
        ["batch", "submit", "--games", "10", "--wait", "--csv", MISSING + ".csv"],
        ["batch", "submit", "--games", "10", "--json", MISSING + ".json"],
        ["batch", "report", "ID", "--csv", MISSING + ".csv"],
        ["batch", "report", "ID", "--html", MISSING + ".html"],
        ["batch", "replay-game", "ID", "1", "--events", MISSING + ".jsonl"],
    ]


@pytest.mark.parametrize("i", range(10))
def test_every_output_option_is_checked_before_the_work(
        i: int, log: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import rummy_worker.cli

    def no_store() -> Any:  # the check comes first: no Redis is ever asked
        raise AssertionError("the work started before the output check")

    monkeypatch.setattr(rummy_worker.cli, "_store", no_store)
    argv = _argvs(log)[i]
    assert _code(argv) == 2
    err = capsys.readouterr().err
    assert f"error: cannot write {MISSING}." in err
    assert "there is no directory /nonexistent-dir" in err and "Traceback" not in err


def test_a_directory_as_the_output_is_named(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # was IsADirectoryError after all the games
    assert _code(["simulate", "--games", "1", "--players", "2", "--bots", "basic", "--quiet",
                  "--json", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: cannot write {tmp_path}: it is a directory\n"


def test_simulate_write_failing_at_the_end_is_one_error_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import rummy_cli.outputs
    monkeypatch.setattr(rummy_cli.outputs, "output_problem", lambda *paths: None)
    assert main(["simulate", "--games", "2", "--players", "2", "--bots", "basic", "--jobs",
                 "1", "--quiet", "--json", MISSING + ".json"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"error: cannot write {MISSING}.json: No such file or directory")
    assert "Traceback" not in err
    assert "Balance report: 2 games" in out  # the finished run is not lost


def _batch_doc() -> dict[str, Any]:
    from rummy_worker.batches import BatchSpec, batch_report, merge_results
    from rummy_worker.chunks import compute_chunk
    spec = BatchSpec(games=4, bots=("basic", "random"), seed=1, chunk_size=4)
    merged = merge_results(spec.players, [compute_chunk(spec, i) for i in range(spec.chunks)])
    return {"batch_id": "t1", "spec": spec.to_dict(), "chunks": spec.chunks,
            "chunks_done": spec.chunks, "complete": True, "report": batch_report(spec, merged)}


def test_batch_report_write_failing_at_the_end_is_one_error_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import rummy_worker.cli

    import rummy_cli.outputs
    doc = _batch_doc()
    monkeypatch.setattr(rummy_worker.cli, "_store", lambda: object())
    monkeypatch.setattr(rummy_worker.cli, "document", lambda store, batch_id: doc)
    monkeypatch.setattr(rummy_cli.outputs, "output_problem", lambda *paths: None)
    monkeypatch.setattr(rummy_worker.cli, "output_problem", lambda *paths: None)
    good = tmp_path / "r.json"
    assert main(["batch", "report", "t1", "--csv", MISSING + ".csv", "--json",
                 str(good)]) == 1
    out, err = capsys.readouterr()
    assert f"error: cannot write {MISSING}.csv: No such file or directory" in err
    assert "Traceback" not in err
    assert good.exists()  # the other outputs are still written
    assert "Batch t1" in out  # and the report is printed
