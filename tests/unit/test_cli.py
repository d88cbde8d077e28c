"""The command line: simulate determinism, replay of logs (good, corrupt, truncated),
conformance runner output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rummy.events import dumps
from rummy.simulate import game_seed, lineup_for, play_game
from rummy_cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummy", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)


def test_simulate_report_identical_for_any_jobs(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["simulate", "--games", "24", "--players", "4", "--seed", "7", "--jobs", "1",
                 "--quiet", "--json", str(a)]) == 0
    assert main(["simulate", "--games", "24", "--players", "4", "--seed", "7", "--jobs", "2",
                 "--chunk-size", "5", "--quiet", "--json", str(b)]) == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ra == rb
    assert ra["games"] == 24
    assert abs(sum(r["rate"] for r in ra["seat_win_rate"]) - 1.0) < 1e-9


def test_simulate_writes_events_and_replay_reproduces_scores(tmp_path, capsys):
    assert main(["simulate", "--games", "3", "--players", "3", "--seed", "5", "--jobs", "1",
                 "--bots", "basic,random", "--quiet", "--events-dir", str(tmp_path),
                 "--json", "-"]) == 0
    files = sorted(tmp_path.glob("game-*.jsonl"))
    assert len(files) == 3
    r = play_game(lineup_for(["basic", "random", "basic"], 1), game_seed(5, 1))
    capsys.readouterr()
    assert main(["replay", str(files[1])]) == 0
    out = capsys.readouterr().out
    assert "verified" in out
    for total in r.final:
        assert str(total) in out


def _log(tmp_path: Path) -> Path:
    r = play_game(["basic", "random"], 11, record=True)
    p = tmp_path / "game.jsonl"
    p.write_text("".join(dumps(e) + "\n" for e in r.events))
    return p


def test_replay_step_and_at(tmp_path):
    p = _log(tmp_path)
    res = run("replay", str(p), "--at", "3")
    assert res.returncode == 0, res.stderr
    assert "after event 3" in res.stdout
    res = run("replay", str(p), "--step")
    assert res.returncode == 0
    assert "CardDrawn" in res.stdout and "GameEnded" in res.stdout


def test_replay_corrupt_line_is_named_without_traceback(tmp_path):
    p = _log(tmp_path)
    lines = p.read_text().splitlines()
    lines[4] = lines[4][: len(lines[4]) // 2]  # truncated JSON on line 5
    p.write_text("\n".join(lines) + "\n")
    res = run("replay", str(p))
    assert res.returncode == 1
    assert "line 5" in res.stderr and "Traceback" not in res.stderr


def test_replay_tampered_event_is_rejected_with_its_number(tmp_path):
    p = _log(tmp_path)
    lines = p.read_text().splitlines()
    for i, line in enumerate(lines):
        d = json.loads(line)
        if d["type"] == "CardDrawn":
            d["card"] = "KS" if d["card"] != "KS" else "QS"
            lines[i] = json.dumps(d)
            break
    p.write_text("\n".join(lines) + "\n")
    res = run("replay", str(p))
    assert res.returncode == 1
    assert f"event {i + 1}" in res.stdout and "top of the stock" in res.stdout


def test_replay_truncated_log_is_an_error_unless_allowed(tmp_path):
    p = _log(tmp_path)
    lines = p.read_text().splitlines()[:30]
    p.write_text("\n".join(lines) + "\n")
    res = run("replay", str(p))
    assert res.returncode == 1 and "truncated log: it ends at event 30" in res.stdout
    res = run("replay", str(p), "--allow-incomplete")
    assert res.returncode == 0 and "not over" in res.stdout


@pytest.mark.parametrize("edit", [
    lambda d: d.update(dealer=None) if d["type"] == "GameStarted" else None,
    lambda d: d.update(rules=None) if d["type"] == "GameStarted" else None,
    lambda d: d.update(names=[{"a": 1}, "x"]) if d["type"] == "GameStarted" else None,
    lambda d: d.update(cards=None) if d["type"] == "CardDrawn" else None,
    lambda d: d.update(seat="0") if d["type"] == "CardDrawn" else None,
])
def test_replay_null_and_wrong_types_are_named_not_traced(tmp_path, edit):
    # found by the attack review: nulls and wrong types used to raise TypeError
    p = _log(tmp_path)
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    for d in lines:
        edit(d)
    p.write_text("".join(json.dumps(d) + "\n" for d in lines))
    res = run("replay", str(p))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "line " in res.stderr


def test_replay_binary_file(tmp_path):
    p = tmp_path / "junk.jsonl"
    p.write_bytes(b"\xff\xfe\x00junk\n")
    res = run("replay", str(p))
    assert res.returncode == 1 and "not UTF-8" in res.stderr and "Traceback" not in res.stderr


def test_replay_missing_file():
    res = run("replay", "/nonexistent/game.jsonl")
    assert res.returncode == 1 and "cannot read" in res.stderr


def test_conformance_cli_summary_and_exit_code(tmp_path):
    res = run("conformance", "tests/conformance/cases/melds.jsonl",
              "tests/conformance/cases/actions.jsonl")
    assert res.returncode == 0
    assert res.stdout.strip().splitlines()[-1] == "60 passed, 0 failed"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x-1", "kind": "meld", "rule": "R4.2", "cards": ["8S", "8S", "8H"],'
                   ' "valid": true}\nnot json\n')
    res = run("conformance", str(bad))
    assert res.returncode == 1
    assert "FAIL x-1" in res.stdout and res.stdout.strip().endswith("0 passed, 2 failed")


@pytest.mark.parametrize("case", [
    '{"id": "x", "kind": "round_score", "rule": "R7", "hands": [], "knocker": null, '
    '"scores": [], "winners": []}',
    '{"id": "x", "kind": "round_score", "rule": "R7", "hands": [["AS"]], "knocker": "0", '
    '"scores": [0], "winners": [0]}',
    '{"id": "x", "kind": "game_end", "rule": "R9", "totals": "abc", "rounds_won": [], '
    '"final": [], "winners": []}',
    '{"id": "x", "kind": "game_end", "rule": "R9", "totals": [150, 2], "rounds_won": [1], '
    '"final": [], "winners": []}',
    '{"id": "x", "kind": "best_play", "rule": "R5", "table": [], "hand": 7, "best_points": 0}',
    '{"id": "x", "kind": "action", "rule": "R5", "table": [], "hand": null, "new_table": [], '
    '"valid": false}',
])
def test_conformance_malformed_cases_fail_cleanly(tmp_path, case):
    f = tmp_path / "bad.jsonl"
    f.write_text(case + "\n")
    res = run("conformance", str(f))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stdout.strip().endswith("0 passed, 1 failed")


@pytest.mark.parametrize("args,msg", [
    (["simulate", "--chunk-size", "-1", "--games", "3"], "must not be negative"),
    (["simulate", "--replay-game", "99", "--games", "3"], "game index 0..2"),
    (["simulate", "--games", "1", "--events-dir", "/proc/nope"], "cannot create --events-dir"),
    (["simulate", "--players", "6"], "2..5"),
    (["simulate", "--bots", "nobody"], "unknown bot"),
    (["simulate", "--rules", "jokers=1"], "unknown rule variant"),
])
def test_simulate_bad_arguments(args, msg):
    res = run(*args)
    assert res.returncode != 0 and msg in res.stderr


def test_conformance_a_case_that_raises_fails_alone_and_the_run_goes_on(tmp_path, monkeypatch,
                                                                        capsys):
    # a case on which the engine raised used to abort the whole file with a traceback
    import rummy.conformance
    from rummy_cli.main import main

    def boom(table, hand, rules, opening):
        raise RuntimeError("no room to park a wildcard")

    monkeypatch.setattr(rummy.conformance, "_best_points", boom)
    f = tmp_path / "mixed.jsonl"
    f.write_text(
        '{"id": "b-x", "kind": "best_play", "rule": "R5", "table": [], "hand": ["AS"], '
        '"best_points": 0}\n'
        '{"id": "m-x", "kind": "meld", "rule": "R4.2", "cards": ["8S", "8H", "8D"], '
        '"valid": true}\n')
    assert main(["conformance", str(f)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0] == "FAIL b-x (best_play, R5): error: RuntimeError: no room to park a wildcard"
    assert out[-1] == "1 passed, 1 failed"


def test_a_subcommand_whose_extra_is_missing_is_listed_and_says_which(monkeypatch, capsys):
    # `rummy serve` vanished from `rummy --help` when grpc was not installed
    import sys

    from rummy_cli.main import build_parser, main
    monkeypatch.setitem(sys.modules, "rummy_grpc.cli", None)  # import fails
    monkeypatch.setitem(sys.modules, "rummy_worker.cli", None)
    help_text = build_parser().format_help()
    assert "serve" in help_text and "needs the 'service' extra" in help_text
    assert "batch" in help_text and "needs the 'worker' extra" in help_text
    assert main(["serve", "--port", "1"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'manipulation-rummy[service]'" in err


def test_a_missing_library_at_run_time_names_the_extra(monkeypatch, capsys):
    import sys

    from rummy_cli.main import main
    monkeypatch.setitem(sys.modules, "redis", None)  # `import redis` fails
    assert main(["batch", "status", "abc"]) == 1
    err = capsys.readouterr().err
    assert "needs the 'worker' extra" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["simulate", "--rules", "hand_size=0"],
    ["batch", "submit", "--games", "10", "--rules", "hand_size=0"],
    ["simulate", "--players", "9"],
    ["batch", "submit", "--bots", "nobody"],
])
def test_bad_arguments_exit_2_everywhere(argv):
    # found by a review: `simulate` exited 1 and `batch` 2 for the same error
    res = run(*argv)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("error: ") and "Traceback" not in res.stderr


def test_every_option_and_argument_has_a_help_text():
    # several options had no help
    import argparse

    from rummy_cli.main import build_parser

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    yield from walk(sp, [*path, name])
            elif not isinstance(a, argparse._HelpAction) and not a.help:
                yield " ".join(path), a.option_strings or a.dest

    assert list(walk(build_parser(), ["rummy"])) == []
