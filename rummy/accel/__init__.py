"""Ahead-of-time compiled copies of the hot pure-Python modules (mypyc), loaded when fresh.

The engine, the bots' meld planning and the RL environment are pure Python; every simulated
game and every environment step runs them. mypyc (https://mypyc.readthedocs.io, part of
mypy) compiles type-annotated Python to C extension modules from the same source: the
compiled module does exactly what the source says, about 1.5x faster on this code. Nothing is
written twice: the ``.py`` files stay the reference, and they run whenever no fresh build
is there.

* ``python -m rummy.accel build`` (run by ``make setup`` and ``python -m rummy_env.warmup``)
  compiles :data:`MODULES` into ``<cache>/<key>/``, where ``key`` is a hash of every source
  file of the packages involved (so an edited source, a checkout or another Python never
  loads a stale build: its key differs, the pure modules run until the next build). About
  a minute on a 2-core machine; needs mypy (the ``dev`` or ``fast`` extra) and a C compiler.
* :func:`install` (called first thing by ``import rummy``) puts a finder in front of
  ``sys.meta_path`` that loads those modules from the build whose key matches the sources
  on disk; without one it does nothing. ``RUMMY_ACCEL=0`` turns it off (pure Python).
* ``python -m rummy.accel status`` says which is in use and why.

The cache is ``$RUMMY_ACCEL_DIR``, else ``$XDG_CACHE_HOME/rummy/accel``, else
``~/.cache/rummy/accel``. This module reads files (the sources' hash, the build) only at
import and in the build command; the rules code itself stays free of I/O.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

#: the compiled modules (one mypyc group: they call each other natively): function-heavy
#: modules whose classes nothing subclasses (a compiled class refuses Python subclasses:
#: the bots' classes stay pure) and that no test patches from outside
MODULES: tuple[str, ...] = (
    "rummy.cards",
    "rummy.state",
    "rummy.melds",
    "rummy.evolve",
    "rummy.decide",
    "rummy.views",
    "rummy.bots._melding",
    "rummy_env._candidates",
    "rummy_env.manipulation_rummy_v0",
)

#: the file of the build's description, written last (a build without it is incomplete)
STAMP = "ACCEL.json"

#: the environment variable that turns the compiled modules off (``0``)
SWITCH = "RUMMY_ACCEL"

_EXT = importlib.machinery.EXTENSION_SUFFIXES[0]

#: what :func:`install` found: ``{"state": "compiled" | "pure", "why": str, "dir": str}``
STATUS: dict[str, str] = {"state": "pure", "why": "not installed yet", "dir": ""}


def cache_root() -> Path:
    """The directory holding the builds (see the module docstring).

    Raises:
        RuntimeError: none of the variables is set and the user has no home directory.
    """
    env = os.environ.get("RUMMY_ACCEL_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError) as e:
            raise RuntimeError("no home directory to keep the builds in (HOME unset): set "
                               "RUMMY_ACCEL_DIR") from e
    return Path(base) / "rummy" / "accel"


def _package_dirs(modules: Sequence[str]) -> dict[str, Path]:
    """The directory of each top-level package of ``modules`` and of ``rummy`` (found
    without importing them)."""
    out: dict[str, Path] = {"rummy": Path(__file__).resolve().parent.parent}
    for name in modules:
        top = name.split(".")[0]
        if top in out:
            continue
        spec = importlib.util.find_spec(top)
        if spec is None or not spec.submodule_search_locations:
            raise LookupError(f"package {top!r} of {name!r} not found")
        out[top] = Path(list(spec.submodule_search_locations)[0]).resolve()
    return out


def source_path(name: str, dirs: dict[str, Path]) -> Path:
    """The ``.py`` file of module ``name`` (``a.b.c`` -> ``<dir of a>/b/c.py``)."""
    top, *rest = name.split(".")
    return dirs[top].joinpath(*rest[:-1], rest[-1] + ".py") if rest else dirs[top] / "__init__.py"


def source_key(modules: Sequence[str] = MODULES) -> str:
    """A hash of everything a build depends on: the module list, this Python's extension
    suffix (its ABI) and the bytes of every ``.py`` file of the packages involved (a
    compiled module may have inlined a constant of any module it imports). 20 hex
    digits.

    Raises:
        LookupError: a package of ``modules`` is not importable.
    """
    h = hashlib.sha256()
    h.update(repr((tuple(modules), _EXT, sys.version_info[:2])).encode())
    for top, d in sorted(_package_dirs(modules).items()):
        for p in sorted(d.rglob("*.py")):
            h.update(f"{top}/{p.relative_to(d).as_posix()}\0".encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:20]


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules of one build (and its shared group library).

    Each file is checked against the size the build recorded just before it is loaded (a
    truncated extension module crashes the interpreter rather than raising). If a file is
    gone or damaged before any compiled module was loaded, the finder steps aside and the
    pure modules run; after that, a mix would be unsafe, so the import fails saying why."""

    def __init__(self, files: dict[str, Path], sizes: dict[str, int]) -> None:
        self.files = files
        self.sizes = sizes
        self.loaded = False

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        f = self.files.get(fullname)
        if f is None:
            return None
        fault = _damage(f, self.sizes.get(fullname))
        if fault:
            d = STATUS["dir"]
            if not self.loaded:
                uninstall()
                _pure(f"the build changed after start ({fault}); python -m rummy.accel build",
                      d)
                return None
            raise ImportError(f"compiled module {fullname} unusable ({fault}) after other "
                              f"compiled modules of {d} were loaded: restart the process "
                              f"(or set {SWITCH}=0)", name=fullname)
        self.loaded = True
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(f))
        return importlib.util.spec_from_file_location(fullname, str(f), loader=loader)


def _damage(f: Path, size: int | None) -> str:
    """Why file ``f`` is not the one the build wrote (its ``size`` in bytes), or ``""``."""
    try:
        actual = f.stat().st_size
    except OSError:
        return f"{f.name} missing"
    if size is not None and actual != size:
        return f"{f.name} has {actual} bytes, built with {size}"
    return ""


def _so(d: Path, name: str) -> Path:
    """The extension file of module ``name`` in build directory ``d``."""
    return d.joinpath(*name.split(".")[:-1], name.split(".")[-1] + _EXT)


def _check(d: Path, modules: Sequence[str], *, digests: bool = False
           ) -> tuple[dict[str, Path] | None, dict[str, int], str]:
    """The build in ``d``: its module name -> ``.so`` map (None if unusable), each file's
    size in bytes as the stamp records it, and why it is unusable (``""`` if usable).
    ``digests``: also compare every file's SHA-256 with the stamp (reads ~3 MB)."""
    stamp = d / STAMP
    if not stamp.is_file():
        return None, {}, "no build" if not d.exists() else "incomplete build (no stamp)"
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8")).get("files", {})
        if not isinstance(recorded, dict):
            raise ValueError(f"files: {recorded!r}")
    except (OSError, ValueError, AttributeError) as e:
        return None, {}, f"unreadable stamp ({e})"
    files: dict[str, Path] = {}
    for name in modules:
        files[name] = _so(d, name)
    for g in d.glob("*__mypyc" + _EXT):
        files[g.name[:-len(_EXT)]] = g
    sizes: dict[str, int] = {}
    for name, f in files.items():
        rel = f.relative_to(d).as_posix()
        if rel not in recorded:
            return None, {}, f"damaged build: {rel} not in the stamp"
        try:
            size, digest = int(recorded[rel][0]), str(recorded[rel][1])
        except (TypeError, ValueError, IndexError, KeyError) as e:
            return None, {}, f"unreadable stamp ({rel}: {e!r})"
        fault = _damage(f, size)
        if not fault and digests and hashlib.sha256(f.read_bytes()).hexdigest() != digest:
            fault = f"{rel} differs from the build"
        if fault:
            return None, {}, f"damaged build: {fault}"
        sizes[name] = size
    if len(recorded) != len(files):
        return None, {}, "damaged build: files missing"
    return files, sizes, ""


def _build_files(d: Path, modules: Sequence[str]) -> dict[str, Path] | None:
    """The module name -> ``.so`` map of the build in ``d``, or None if incomplete or
    damaged (a file missing, or not of the size its stamp records)."""
    return _check(d, modules)[0]


#: the values of :data:`SWITCH` that turn the compiled modules off
_OFF = ("0", "false", "no", "off")


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Loads :data:`MODULES` from their ``.py`` files: put in front when compiled files sit
    beside the sources (a manual ``mypyc`` run), which Python's own finder would prefer
    although nothing says they match the sources."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        f = self.files.get(fullname)
        return None if f is None else importlib.util.spec_from_file_location(fullname, str(f))


def stray_files(modules: Sequence[str] = MODULES) -> list[Path]:
    """Compiled extension files beside the ``.py`` files of ``modules`` (``rummy/cards.
    cpython-311-x86_64-linux-gnu.so`` from running ``mypyc`` in the checkout): Python
    would load them instead of the sources, however stale."""
    dirs = _package_dirs(modules)
    out = []
    for m in modules:
        src = source_path(m, dirs)
        out += [src.with_name(src.stem + suf) for suf in importlib.machinery.EXTENSION_SUFFIXES
                if src.with_name(src.stem + suf).is_file()]
    return out


def _pure(why: str, d: str) -> None:
    """Record in :data:`STATUS` that the pure modules run, and make sure they do: with
    :func:`stray_files` about, a :class:`_SourceFinder` loads the ``.py`` files."""
    try:
        stray = stray_files()
    except Exception:  # noqa: BLE001 - the lookup is a courtesy; import as usual
        stray = []
    if stray:
        dirs = _package_dirs(MODULES)
        sys.meta_path.insert(0, _SourceFinder({m: source_path(m, dirs) for m in MODULES}))
        why += (f"; ignoring {len(stray)} compiled file(s) beside the sources, remove them: "
                + " ".join(str(f) for f in stray))
    STATUS.update(state="pure", why=why, dir=d)


def uninstall() -> None:
    """Remove the finder :func:`install` added (modules already loaded stay loaded)."""
    sys.meta_path[:] = [f for f in sys.meta_path
                        if not isinstance(f, (_Finder, _SourceFinder))]


def install() -> bool:
    """Load :data:`MODULES` compiled from now on, when a build for the sources on disk
    exists (and ``RUMMY_ACCEL`` is not ``0``, ``false``, ``no`` or ``off``); returns
    whether it does. Never raises: anything unexpected leaves the pure modules in use, and
    :data:`STATUS` says why.
    Call before the modules are imported (``rummy/__init__.py`` does, first)."""
    if any(isinstance(f, (_Finder, _SourceFinder)) for f in sys.meta_path):
        return STATUS["state"] == "compiled"
    switch = os.environ.get(SWITCH, "1")
    if switch.strip().lower() in _OFF:
        _pure(f"{SWITCH}={switch}", "")
        return False
    already = [m for m in MODULES if m in sys.modules]
    if already:
        STATUS.update(state="pure", why=f"imported before the finder: {already}", dir="")
        return False
    try:
        key = source_key()
        d = cache_root() / key
        files, sizes, why = _check(d, MODULES)
    except Exception as e:  # noqa: BLE001 - whatever it is, the pure modules run
        _pure(f"no build looked up ({type(e).__name__}: {e})", "")
        return False
    if files is None:
        _pure(_why_not(d, why), str(d))
        return False
    sys.meta_path.insert(0, _Finder(files, sizes))
    STATUS.update(state="compiled", why=f"{len(MODULES)} modules (mypyc)", dir=str(d))
    return True


def _why_not(d: Path, why: str) -> str:
    """:data:`STATUS`'s reason when the build ``d`` for the sources on disk is unusable:
    ``why`` (from :func:`_check`), the other builds in the cache, and what to run."""
    if why != "no build":
        return f"{why}: python -m rummy.accel build"
    try:
        others = sum(1 for p in d.parent.iterdir() if (p / STAMP).is_file())
    except OSError:
        others = 0
    stale = (f"; the {others} build(s) in the cache are for other sources (one was edited, "
             "or another checkout)") if others else ""
    return f"no build for these sources{stale} (python -m rummy.accel build)"


def status() -> str:
    """One line: whether the compiled modules are in use, and why (or why not)."""
    s = STATUS
    return f"{s['state']}: {s['why']}" + (f" [{s['dir']}]" if s["dir"] else "")


_SETUP = """
import json, sys
from setuptools import setup
from mypyc.build import mypycify
args, lib, temp = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
setup(name="rummy-accel", py_modules=[], ext_modules=mypycify(args, opt_level="3",
      target_dir=temp + "/c"),
      script_args=["build_ext", "--build-lib", lib, "--build-temp", temp, "-j", "2"])
"""


def _top_of(path: Path, dirs: dict[str, Path]) -> str:
    """The top-level package (a key of ``dirs``) whose directory holds ``path``."""
    return next(top for top, d in dirs.items() if path.is_relative_to(d))


def _mypy_args(dirs: dict[str, Path]) -> list[str]:
    """mypy's options for the build: the checkout's own configuration when the packages
    sit in one (``pyproject.toml`` with ``[tool.mypy]`` beside ``rummy``), else defaults
    that tolerate untyped third-party packages."""
    root = dirs["rummy"].parent
    cfg = root / "pyproject.toml"
    if cfg.is_file() and "[tool.mypy]" in cfg.read_text(encoding="utf-8"):
        return ["--config-file", str(cfg)]
    return ["--ignore-missing-imports"]


def build(modules: Sequence[str] = MODULES, *, force: bool = False,
          out: Any = sys.stderr) -> Path:
    """Compile ``modules`` with mypyc into ``cache_root()/source_key()`` unless a complete
    build is there (``force``: build again). Builds in a temporary directory beside it and
    renames it into place, so a concurrent process never loads half a build; old builds
    beyond the newest four are removed. Progress goes to ``out``.

    Returns the build's directory.

    Raises:
        RuntimeError: mypy (mypyc) is not installed, or the compilation failed (its output
            is in the message).
    """
    dirs = _package_dirs(modules)
    key = source_key(modules)
    root = cache_root()
    final = root / key
    if not force and _check(final, modules, digests=True)[0] is not None:
        print(f"compiled modules up to date: {final}", file=out)
        return final
    if importlib.util.find_spec("mypyc") is None:
        raise RuntimeError("mypyc is not installed (it comes with mypy): pip install mypy, "
                           "or install the project's 'fast' extra")
    root.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(final, ignore_errors=True)  # an incomplete build, or one to replace
    work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
    paths = [str(source_path(m, dirs)) for m in modules]
    args = _mypy_args(dirs) + paths
    print(f"compiling {len(modules)} modules with mypyc (about a minute) ...", file=out,
          flush=True)
    t0 = time.monotonic()
    try:
        return _compile(modules, final, work, args, dirs, t0, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _compile(modules: Sequence[str], final: Path, work: Path, args: list[str],
             dirs: dict[str, Path], t0: float, out: Any) -> Path:
    """:func:`build`'s compilation in ``work`` and its move to ``final``."""
    lib, temp = work / "lib", work / "temp"
    cwd = dirs["rummy"].parent
    if args[0] != "--config-file":
        # an installed package: compiled from a copy of its packages (mypy run in
        # site-packages would take every module there for one of ours)
        cwd = work / "src"
        for top, d in dirs.items():
            shutil.copytree(d, cwd / top, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        args = [a if not a.endswith(".py") else
                str(cwd / Path(a).relative_to(dirs[_top_of(Path(a), dirs)].parent))
                for a in args]
    proc = subprocess.run([sys.executable, "-c", _SETUP, json.dumps(args), str(lib),
                           str(temp)], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, SWITCH: "0"})
    if proc.returncode != 0:
        raise RuntimeError("mypyc failed:\n"
                           + (proc.stdout + proc.stderr)[-4000:])
    seconds = time.monotonic() - t0
    made = [_so(lib, m) for m in modules] + list(lib.glob("*__mypyc" + _EXT))
    missing = [m for m in modules if not _so(lib, m).is_file()]
    if missing:
        raise RuntimeError(f"mypyc built no module for {missing}")
    (lib / STAMP).write_text(json.dumps({
        "key": final.name, "modules": list(modules), "python": sys.version.split()[0],
        "seconds": round(seconds, 1),
        "files": {f.relative_to(lib).as_posix(): [f.stat().st_size,
                                                  hashlib.sha256(f.read_bytes()).hexdigest()]
                  for f in made}}, indent=1) + "\n", encoding="utf-8")
    try:
        os.rename(lib, final)
    except OSError:
        if _build_files(final, modules) is None:  # not another process's build: a fault
            raise
    _prune(final)
    print(f"compiled {len(modules)} modules in {seconds:.0f} s: {final}", file=out)
    return final


_BUILD_NAME = re.compile(r"[0-9a-f]{20}(\.[A-Za-z0-9_]+)?")


def clean(root: Path | None = None) -> list[Path]:
    """Remove the builds (and interrupted builds) in ``root`` (default
    :func:`cache_root`), and ``root`` itself once empty; anything else there stays (the
    cache may be a directory shared with other files). Returns what was removed."""
    root = cache_root() if root is None else root
    gone: list[Path] = []
    if root.is_dir():
        for p in sorted(root.iterdir()):
            if p.is_dir() and not p.is_symlink() and _BUILD_NAME.fullmatch(p.name):
                shutil.rmtree(p, ignore_errors=True)
                gone.append(p)
        with contextlib.suppress(OSError):
            root.rmdir()
    return gone


_EPILOG = f"""\
import rummy loads the compiled modules by itself when a complete build for the sources on
disk exists; otherwise (never built, a source edited since, {SWITCH}=0) the pure .py
modules run, which behave the same, only slower. Builds live in $RUMMY_ACCEL_DIR, else
$XDG_CACHE_HOME/rummy/accel, else ~/.cache/rummy/accel, one directory per hash of the
sources. A build needs mypy (the 'fast' or 'dev' extra) and a C compiler.

examples:
  python -m rummy.accel build            # once after installing or editing a source (~1 min)
  python -m rummy.accel status           # compiled or pure, and why
  {SWITCH}=0 python -m rummy.accel status  # how a pure process sees it
"""


def _prune(final: Path, keep: int = 3, abandoned_hours: float = 6.0) -> None:
    """Remove the builds beside ``final`` but the newest ``keep``, and the temporary
    directories of builds that were killed (untouched for ``abandoned_hours``; a running
    build's is minutes old)."""
    olds, now = [], time.time()
    for p in final.parent.iterdir():
        if not p.is_dir() or p == final or not _BUILD_NAME.fullmatch(p.name):
            continue
        if (p / STAMP).is_file():
            olds.append(p)
        elif "." in p.name and now - p.stat().st_mtime > abandoned_hours * 3600:
            shutil.rmtree(p, ignore_errors=True)
    for p in sorted(olds, key=lambda p: p.stat().st_mtime)[:max(len(olds) - keep, 0)]:
        shutil.rmtree(p, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rummy.accel [build [--force] [--optional] | status | clean]``; returns
    the exit status (1: the build failed, unless ``--optional``)."""
    import argparse
    ap = argparse.ArgumentParser(
        prog="python -m rummy.accel", epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile the hot pure-Python modules with mypyc (same source, about "
                    "1.5x faster RL environment steps and simulations), or say which "
                    f"modules are in use. {SWITCH}=0 runs the pure modules.")
    sub = ap.add_subparsers(dest="cmd", metavar="{build,status,clean}")
    b = sub.add_parser("build", help="compile unless a build for these sources exists")
    b.add_argument("--force", action="store_true", help="compile again")
    b.add_argument("--optional", action="store_true",
                   help="a failure (no mypy, no C compiler) warns and exits 0")
    sub.add_parser("status", help="whether this process loads the compiled modules "
                                  "(the default command)")
    sub.add_parser("clean", help="remove every build in the cache")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        try:
            build(force=a.force)
        except (RuntimeError, OSError) as e:
            if isinstance(e, OSError):
                e = RuntimeError(f"cannot write the build cache {cache_root()} ({e}); set "
                                 "RUMMY_ACCEL_DIR to a writable directory")
            tail = " (--optional: exit status 0)" if a.optional else ""
            print(f"rummy.accel: {e}\nrummy.accel: not compiled; the pure-Python modules "
                  f"run (same results, slower){tail}", file=sys.stderr)
            return 0 if a.optional else 1
        return 0
    if a.cmd == "clean":
        gone = clean()
        print(f"removed {len(gone)} build(s) from {cache_root()}")
        return 0
    print(status())
    return 0
