"""The compiled copies of the hot modules (rummy.accel): loaded only when built from the
sources on disk, never half, off with RUMMY_ACCEL=0, and playing exactly as the pure
modules do."""

from __future__ import annotations

import hashlib
import importlib.util
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
    stale = ("; the 1 build(s) in the cache are for other sources (one was edited, or "
             "another checkout)") if accel.STATUS["state"] == "compiled" else ""
    assert status2 == f"pure: no build for these sources{stale} (python -m rummy.accel " \
                      f"build) [{tmp_path / 'cache' / key2}]"


def _fake_build(d: Path) -> dict[str, list[object]]:
    """Files where a build of :data:`accel.MODULES` puts them (not loadable), no stamp;
    returns what the stamp records of them."""
    files: dict[str, list[object]] = {}
    for name in [*accel.MODULES, "0123abc__mypyc"]:
        f = d.joinpath(*name.split(".")[:-1], name.split(".")[-1] + accel._EXT)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(name.encode() * 3)
        files[f.relative_to(d).as_posix()] = [f.stat().st_size,
                                              hashlib.sha256(f.read_bytes()).hexdigest()]
    return files


def test_an_incomplete_build_is_never_loaded(tmp_path: Path) -> None:
    d = tmp_path / "k"
    files = _fake_build(d)
    assert accel._check(d, accel.MODULES)[::2] == (None, "incomplete build (no stamp)")
    (d / accel.STAMP).write_text(json.dumps({"files": files}), encoding="utf-8")
    assert accel._build_files(d, accel.MODULES) is not None
    (d / "rummy" / ("melds" + accel._EXT)).unlink()
    assert accel._check(d, accel.MODULES)[::2] == (
        None, f"damaged build: melds{accel._EXT} missing")


def test_a_truncated_or_altered_file_is_a_damaged_build(tmp_path: Path) -> None:
    """A truncated extension module kills the interpreter (SIGBUS) when loaded: the
    stamp's sizes keep it from being loaded, and the build command (which compares
    digests too) replaces it."""
    d = tmp_path / "k"
    (d / accel.STAMP).parent.mkdir(parents=True)
    (d / accel.STAMP).write_text(json.dumps({"files": _fake_build(d)}), encoding="utf-8")
    lib = d / ("0123abc__mypyc" + accel._EXT)
    size = lib.stat().st_size
    lib.write_bytes(lib.read_bytes()[:5])
    files, _, why = accel._check(d, accel.MODULES)
    assert files is None and why == f"damaged build: {lib.name} has 5 bytes, built with {size}"
    lib.write_bytes(b"x" * size)  # same size, other bytes: only the digests tell
    assert accel._check(d, accel.MODULES)[0] is not None
    assert accel._check(d, accel.MODULES, digests=True)[::2] == (
        None, f"damaged build: {lib.name} differs from the build")
    (d / accel.STAMP).write_text("{not json", encoding="utf-8")
    assert accel._check(d, accel.MODULES)[2].startswith("unreadable stamp")


def test_a_truncated_build_leaves_import_rummy_working_and_says_so(tmp_path: Path) -> None:
    if accel.STATUS["state"] != "compiled":
        pytest.skip(f"no compiled build here: {accel.status()}")
    d = Path(shutil.copytree(accel.STATUS["dir"], tmp_path / Path(accel.STATUS["dir"]).name))
    lib = next(d.glob("*__mypyc" + accel._EXT))
    lib.write_bytes(lib.read_bytes()[:100_000])
    out = _python("import rummy.accel as a, rummy.decide; print(a.status())",
                  RUMMY_ACCEL_DIR=str(tmp_path)).strip()
    assert out.startswith(f"pure: damaged build: {lib.name} has 100000 bytes, built with")
    assert out.endswith(f"python -m rummy.accel build [{d}]")


_VANISH = """
import sys, rummy.accel as a
f = a._Finder({"colorsys": a.Path(sys.argv[1])}, {"colorsys": 10})
f.loaded = sys.argv[2] == "1"
sys.meta_path.insert(0, f)
a.STATUS.update(state="compiled", dir="D")
try:
    import colorsys
    print(colorsys.__file__.endswith("colorsys.py"), f in sys.meta_path, a.status())
except ImportError as e:
    print("ImportError", e)
"""


def test_a_build_removed_under_a_running_process(tmp_path: Path) -> None:
    """Another process may prune or clean a build between ``import rummy`` and the first
    import of a compiled module: before any compiled module is loaded the pure ones take
    over; after, a mix is unsafe and the import error says what to do."""
    gone = str(tmp_path / "colorsys.so")
    out = subprocess.run([sys.executable, "-c", _VANISH, gone, "0"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env={**os.environ, "RUMMY_ACCEL": "0"})
    assert out.stdout.strip() == ("True False pure: the build changed after start (colorsys.so "
                                  "missing); python -m rummy.accel build [D]"), out.stderr
    out = subprocess.run([sys.executable, "-c", _VANISH, gone, "1"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env={**os.environ, "RUMMY_ACCEL": "0"})
    assert out.stdout.strip() == ("ImportError compiled module colorsys unusable (colorsys.so "
                                  "missing) after other compiled modules of D were loaded: "
                                  "restart the process (or set RUMMY_ACCEL=0)"), out.stderr


def test_clean_removes_builds_and_nothing_else(tmp_path: Path) -> None:
    """``RUMMY_ACCEL_DIR`` may name a directory that holds other things too."""
    root = tmp_path / "shared"
    keep = [root / "notes.txt", root / "project" / "a.py", root / "ab12" / "x"]
    for f in keep:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("mine", encoding="utf-8")
    builds = [root / ("0" * 20), root / ("a1" * 10 + ".k3_x9q")]
    for b in builds:
        (b / "rummy").mkdir(parents=True)
    assert accel.clean(root) == sorted(builds)
    assert all(f.is_file() for f in keep) and not any(b.exists() for b in builds)
    shutil.rmtree(root / "project"), shutil.rmtree(root / "ab12"), (root / "notes.txt").unlink()
    assert accel.clean(root) == [] and not root.exists()  # empty: removed too
    assert accel.clean(root) == []


def test_an_unwritable_cache_names_the_variable_to_set(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    env = {**os.environ, "RUMMY_ACCEL_DIR": str(tmp_path / "file" / "cache")}
    for flags, rc in (([], 1), (["--optional"], 0)):
        out = subprocess.run([sys.executable, "-m", "rummy.accel", "build", *flags],
                             capture_output=True, text=True, cwd=REPO, timeout=60, env=env)
        assert out.returncode == rc, out.stderr
        if importlib.util.find_spec("mypyc") is not None:
            assert "set RUMMY_ACCEL_DIR to a writable directory" in out.stderr, out.stderr
        assert "not compiled; the pure-Python modules run" in out.stderr
        assert out.stderr.rstrip().endswith("(--optional: exit status 0)") == bool(flags)


def test_no_home_directory_names_the_variable_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("RUMMY_ACCEL_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    with pytest.raises(RuntimeError, match="set RUMMY_ACCEL_DIR"):
        accel.cache_root()
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert accel.cache_root() == Path("/x/rummy/accel")


def test_status_and_help_from_the_command_line() -> None:
    out = subprocess.run([sys.executable, "-m", "rummy.accel", "--help"], capture_output=True,
                         text=True, cwd=REPO, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0 and "mypyc" in out.stdout and "RUMMY_ACCEL=0" in out.stdout
    assert "$RUMMY_ACCEL_DIR" in out.stdout and "python -m rummy.accel build " in out.stdout
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


_PICKLE = """
import hashlib, pickle, random, sys
import numpy as np
import rummy.accel as a
from rummy_env import manipulation_rummy_v0 as rv
def play(env, rng, n):
    h = hashlib.sha256()
    while env.agents and n:
        obs, r, term, trunc, _ = env.last()
        h.update(obs["observation"].tobytes()); h.update(obs["action_mask"].tobytes())
        h.update(repr(r).encode())
        if term or trunc:
            env.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
        n -= 1
    return h.hexdigest()
if sys.argv[1] == "dump":
    env = rv.raw_env(players=3); env.reset(seed=11); rng = random.Random(3)
    play(env, rng, 40)
    print(pickle.dumps((env, rng)).hex())
else:
    env, rng = pickle.loads(bytes.fromhex(sys.stdin.read()))
    print(a.STATUS["state"], play(env, rng, 10**6))
"""


def test_an_environment_pickled_compiled_plays_on_pure_and_back() -> None:
    """A mid-game environment pickled in a process of either mode (a worker, a
    checkpoint) resumes identically in the other."""
    def run(mode: str, *args: str, stdin: str = "") -> str:
        out = subprocess.run([sys.executable, "-c", _PICKLE, *args], input=stdin,
                             capture_output=True, text=True, cwd=REPO, timeout=300,
                             env={**os.environ, "RUMMY_ACCEL": mode})
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()
    if accel.STATUS["state"] != "compiled":
        pytest.skip(f"no compiled build here: {accel.status()}")
    dumps = {mode: run(mode, "dump") for mode in ("1", "0")}
    results = {(d, ld): run(ld, "load", stdin=dumps[d]) for d in "10" for ld in "10"}
    digest = results["0", "0"].split()[1]
    assert results == {(d, ld): f"{'compiled' if ld == '1' else 'pure'} {digest}"
                       for d in "10" for ld in "10"}


def test_warmup_help_explains_and_builds_nothing(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "rummy_env.warmup", "--help"],
                         capture_output=True, text=True, cwd=REPO, timeout=120,
                         env={**os.environ, "RUMMY_ACCEL_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m rummy_env.warmup") and "mypyc" in out.stdout
    assert not (tmp_path / "cache").exists()


def test_compiled_files_beside_the_sources_are_not_loaded_pure(tmp_path: Path) -> None:
    """A manual ``mypyc`` run leaves ``rummy/decide.cpython-*.so`` beside ``decide.py``,
    which Python's own finder prefers (a stale copy, here an unloadable one): the pure
    modules are the ``.py`` files, and status says which files to remove."""
    root = _copy_packages(tmp_path / "src")
    stray = root / "rummy" / ("decide" + accel._EXT)
    stray.write_bytes(b"not an extension module")
    code = ("import sys, rummy.decide, rummy.accel as a; print(sys.modules['rummy.decide']"
            ".__file__); print(a.status())")
    for switch in ("0", "off", "1"):
        f, status = _python(code, root, RUMMY_ACCEL=switch,
                            RUMMY_ACCEL_DIR=str(tmp_path / "cache")).splitlines()
        assert f == str(root / "rummy" / "decide.py")
        assert status.startswith("pure: ")
        assert f"compiled file(s) beside the sources, remove them: {stray}" in status
        assert (f"RUMMY_ACCEL={switch};" in status) == (switch != "1")


def test_a_killed_build_leaves_a_directory_the_next_build_removes(tmp_path: Path) -> None:
    final = tmp_path / ("f" * 20)
    old_temp, new_temp, old_build = (tmp_path / ("a" * 20 + ".x1"), tmp_path / ("b" * 20 + ".y2"),
                                     tmp_path / ("c" * 20))
    for d in (final, old_temp, new_temp, old_build, tmp_path / "other.z"):
        d.mkdir()
    (final / accel.STAMP).write_text("{}", encoding="utf-8")
    (old_build / accel.STAMP).write_text("{}", encoding="utf-8")
    os.utime(old_temp, (0, 0))
    accel._prune(final, keep=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [final.name, new_temp.name, old_build.name, "other.z"])
    accel._prune(final, keep=0)
    assert not old_build.exists() and final.exists()


def test_a_malformed_stamp_is_an_unusable_build(tmp_path: Path) -> None:
    d = tmp_path / "k"
    files = _fake_build(d)
    for bad in ({"files": {k: "x" for k in files}}, {"files": {k: [1] for k in files}},
                {"files": []}, []):
        (d / accel.STAMP).write_text(json.dumps(bad), encoding="utf-8")
        files_, _, why = accel._check(d, accel.MODULES, digests=True)
        assert files_ is None and why.startswith(("unreadable stamp", "damaged build")), why


def test_a_build_without_mypy_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mypyc" else real(name, *a))
    monkeypatch.setenv("RUMMY_ACCEL_DIR", str(tmp_path / "cache"))
    assert accel.main(["build"]) == 1
    assert accel.main(["build", "--optional"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == ("rummy.accel: mypyc is not installed (it comes with mypy): pip install "
                      "mypy, or install the project's 'fast' extra")
    assert err[1] == "rummy.accel: not compiled; the pure-Python modules run (same results, slower)"
    assert err[2:] == err[:1] + [err[1] + " (--optional: exit status 0)"]
    assert not (tmp_path / "cache").exists()
