"""The compiled copies of the hot modules (rummy.accel): loaded only when built from the
sources on disk, never half, off with RUMMY_ACCEL=0, and playing exactly as the pure
modules do."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rummy
from rummy import accel
from tests.harness import in_ci

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, cwd: Path = REPO, **env: str) -> str:
    """Run ``code`` in a fresh interpreter (the packages of ``cwd``: this checkout's by
    default) and return stdout."""
    full = {**os.environ, "RUMMY_ACCEL": "1", **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=full, cwd=cwd, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_the_hot_modules_are_compiled_when_a_build_exists() -> None:
    """``make setup`` builds them; CI must test the compiled modules users run."""
    if accel.STATUS["state"] != "compiled":
        msg = f"the compiled modules are not in use: {accel.status()}"
        if in_ci() and os.environ.get(accel.SWITCH) != "0":
            pytest.fail(msg + " (make setup builds them)")
        pytest.skip(msg)
    for name in accel.MODULES:
        f = sys.modules[name].__file__ if name in sys.modules else None
        if f is None:
            __import__(name)
            f = sys.modules[name].__file__
        assert f is not None and f.endswith(accel._EXT), (name, f)
        assert Path(f).is_relative_to(accel.STATUS["dir"])


def test_rummy_accel_0_runs_the_pure_modules() -> None:
    out = _python("import rummy_env._candidates as c, rummy.accel as a, sys;"
                  "print(a.status()); print(sys.modules['rummy.decide'].__file__);"
                  "print(c.__file__)", RUMMY_ACCEL="0")
    status, decide, cands = out.splitlines()
    assert status == "pure: RUMMY_ACCEL=0"
    assert decide.endswith("rummy/decide.py") and cands.endswith("rummy_env/_candidates.py")


def test_a_module_imported_before_the_finder_keeps_every_module_pure() -> None:
    """Half compiled, half pure, a compiled module could call a compiled neighbour whose
    module was never initialised: all or nothing."""
    out = _python("import os, rummy, rummy.accel as a, rummy_env._candidates;"
                  "os.environ['RUMMY_ACCEL'] = '1'; print(a.install()); print(a.status())",
                  RUMMY_ACCEL="0")
    ok, status = out.splitlines()
    assert ok == "False"
    assert status.startswith("pure: imported before the finder: ['rummy.cards'")


def _copy_packages(tmp: Path) -> Path:
    for pkg in ("rummy", "rummy_env"):
        shutil.copytree(REPO / pkg, tmp / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.nbi", "*.nbc"))
    return tmp


def test_an_edited_source_has_another_key_and_its_build_is_not_loaded(tmp_path: Path) -> None:
    """A build is found by the hash of every source file of the packages involved: after
    an edit (here a comment in a module that is not compiled, whose constants a compiled
    module may have inlined) the old build is no longer loaded."""
    root = _copy_packages(tmp_path / "src")
    code = "import rummy.accel as a; print(a.source_key()); print(a.status())"
    env = {"RUMMY_ACCEL_DIR": str(tmp_path / "cache")}
    key1, status1 = _python(code, root, **env).splitlines()
    assert status1.startswith("pure: no build for these sources")
    # the copy's sources are this checkout's: this checkout's build is loaded ...
    if accel.STATUS["state"] == "compiled":
        assert key1 == accel.source_key()
        shutil.copytree(accel.STATUS["dir"], tmp_path / "cache" / key1)
        assert _python(code, root, **env).splitlines() == [
            key1, f"compiled: {len(accel.MODULES)} modules (mypyc) [{tmp_path / 'cache' / key1}]"]
    # ... until a source changes
    cards = root / "rummy" / "cards.py"
    cards.write_text(cards.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    key2, status2 = _python(code, root, **env).splitlines()
    assert key2 != key1
    assert status2 == f"pure: no build for these sources (python -m rummy.accel build) " \
                      f"[{tmp_path / 'cache' / key2}]"


def test_an_incomplete_build_is_never_loaded(tmp_path: Path) -> None:
    d = tmp_path / "k"
    for name in accel.MODULES:
        f = d.joinpath(*name.split(".")[:-1], name.split(".")[-1] + accel._EXT)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"")
    assert accel._build_files(d, accel.MODULES) is None  # no stamp: still being built
    (d / accel.STAMP).write_text("{}", encoding="utf-8")
    assert accel._build_files(d, accel.MODULES) is not None
    (d / "rummy" / ("melds" + accel._EXT)).unlink()
    assert accel._build_files(d, accel.MODULES) is None  # a module missing


def test_status_and_help_from_the_command_line() -> None:
    out = subprocess.run([sys.executable, "-m", "rummy.accel", "--help"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0 and "mypyc" in out.stdout and "RUMMY_ACCEL=0" in out.stdout
    out = subprocess.run([sys.executable, "-m", "rummy.accel", "status"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env={**os.environ, "RUMMY_ACCEL": "0"})
    assert out.stdout.strip() == "pure: RUMMY_ACCEL=0"


_GAMES = """
import hashlib, json, random
import numpy as np
from rummy_env import manipulation_rummy_v0 as rv
from rummy.simulate import play_game
h = hashlib.sha256()
env = rv.raw_env(players=3)
rng = random.Random(4)
for seed in (1, 2, 3):
    env.reset(seed=seed)
    while env.agents:
        obs, r, term, trunc, _ = env.last()
        h.update(obs["observation"].tobytes()); h.update(obs["action_mask"].tobytes())
        h.update(repr(r).encode())
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
for seed in (5, 6):
    h.update(repr(play_game(["greedy", "basic", "human"], seed)).encode())
import rummy.accel as a
print(a.STATUS["state"], h.hexdigest())
"""


def test_compiled_and_pure_modules_play_exactly_the_same() -> None:
    """Seeded environment games (observations, masks, rewards) and bot games, digested in
    a process with the compiled modules and one without."""
    compiled = _python(_GAMES).split()
    pure = _python(_GAMES, RUMMY_ACCEL="0").split()
    assert pure[0] == "pure"
    if compiled[0] != "compiled" and not in_ci():
        pytest.skip("no compiled build here (python -m rummy.accel build)")
    # in CI the build exists (make setup), also when this file runs under RUMMY_ACCEL=0
    assert compiled == ["compiled", pure[1]]


def test_the_key_covers_every_source_file_of_the_packages() -> None:
    h = hashlib.sha256()
    h.update(repr((tuple(accel.MODULES), accel._EXT, sys.version_info[:2])).encode())
    dirs = {"rummy": Path(rummy.__file__).parent, "rummy_env": REPO / "rummy_env"}
    for top, d in sorted(dirs.items()):
        for p in sorted(d.rglob("*.py")):
            h.update(f"{top}/{p.relative_to(d).as_posix()}\0".encode())
            h.update(p.read_bytes())
    assert accel.source_key() == h.hexdigest()[:20]
    assert json.dumps(accel.MODULES)  # one plain list, as the build writes it
