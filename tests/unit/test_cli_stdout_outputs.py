"""Every file option of the console commands takes ``-`` for standard output: the
document goes to stdout, the human table (if any) to stderr, and no file named ``-`` is
left behind (a sweep used to write one)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rummy_cli.outputs import write_output

ROOT = Path(__file__).resolve().parents[2]


def _rummy(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env_path = f"{ROOT}:{ROOT / 'services'}:{ROOT / 'workers'}"
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=tmp, text=True,
                          capture_output=True, timeout=300,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin",
                               "COLUMNS": "120"})


def test_write_output_dash_is_stdout_and_a_path_is_a_file(tmp_path: Path) -> None:
    out = io.StringIO()
    write_output("-", '{"a": 1}', stdout=out)
    assert out.getvalue() == '{"a": 1}\n'
    write_output(str(tmp_path / "r.json"), "x\n")
    assert (tmp_path / "r.json").read_text() == "x\n"
    write_output(str(tmp_path / "empty"), "")
    assert (tmp_path / "empty").read_text() == ""


def test_write_output_raises_oserror_for_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_output(str(tmp_path / "no" / "such.json"), "{}")


@pytest.mark.parametrize("args", [
    ("sweep", "--rules", "hand_size=7,8", "--games", "2", "--players", "2",
     "--bots", "basic,basic", "--jobs", "1", "--quiet", "--json", "-"),
    ("simulate", "--games", "2", "--players", "2", "--jobs", "1", "--quiet", "--json", "-"),
])
def test_json_dash_prints_the_document_on_stdout_and_writes_no_file(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    r = _rummy(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # stdout is the document alone, not a table before it
    assert isinstance(doc, dict) and doc
    assert not (tmp_path / "-").exists()
