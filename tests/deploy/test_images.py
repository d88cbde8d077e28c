"""The Dockerfiles (static: no container engine here) and the health probe they run, which is
exercised for real against a live gRPC server and a live metrics endpoint."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import HANG_GUARD

from .conftest import DEPLOY, REPO

PROBE = DEPLOY / "healthcheck.py"


def _instructions(path: Path) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined and comments removed."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


@pytest.mark.parametrize("name,extra,probe", [("service", "service", "grpc"),
                                              ("worker", "worker", "http")])
def test_dockerfile(name: str, extra: str, probe: str) -> None:
    path = DEPLOY / f"{name}.Dockerfile"
    ins = _instructions(path)
    froms = [a for i, a in ins if i == "FROM"]
    # the base is a build argument, the official Python image unless deploy/local-base.sh's
    assert ins[0] == ("ARG", "BASE_IMAGE=python:3.11-slim")
    assert froms and all(f.startswith("${BASE_IMAGE}") for f in froms)
    runs = " ".join(a for i, a in ins if i == "RUN")
    # protoc runs from one place (services/rummy_grpc/codegen.py, through the wheel build)
    assert "grpc_tools.protoc" not in runs and "pip wheel" in runs
    assert f"[{extra}]" in runs, f"the image must install the [{extra}] extra"
    # the versions CI tests: every pip install in the runtime stage is constrained
    runtime = ins[[i for i, (w, _) in enumerate(ins) if w == "FROM"][-1]:]
    installs = [a for i, a in runtime if i == "RUN" and "pip install" in a]
    assert installs and all("-c /tmp/" in a and "constraints.txt" in a for a in installs)
    hc = [a for i, a in ins if i == "HEALTHCHECK"]
    assert len(hc) == 1 and f'"{probe}"' in hc[0]
    copied = [a for i, a in ins if i == "COPY" and "healthcheck.py" in a]
    assert copied and copied[0].split()[-1] in hc[0], "HEALTHCHECK runs the copied probe"
    assert ("USER", "10001:10001") in ins
    for _, a in ins:
        if _ == "COPY" and not a.startswith("--from"):
            for src in a.split()[:-1]:
                assert src == "." or (REPO / src).exists(), src
    assert (DEPLOY / f"{name}.Dockerfile.dockerignore").is_file()


def test_the_proto_sources_the_images_compile_exist() -> None:
    assert list((REPO / "proto" / "rummy_api" / "v1").glob("*.proto"))


def test_dockerignore_keeps_the_venv_and_generated_code_out() -> None:
    for name in ("service", "worker"):
        lines = (DEPLOY / f"{name}.Dockerfile.dockerignore").read_text().splitlines()
        assert ".venv" in lines and ".git" in lines
        assert "services/rummy_api/v1/*_pb2*" in lines


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PROBE), *args], check=False,
                          capture_output=True, text=True, timeout=30,
                          env={**os.environ, "RUMMY_HEALTH_TIMEOUT": "2"})


def test_probe_usage() -> None:
    assert _probe().returncode == 2
    assert _probe("nonsense").returncode == 2


def test_grpc_probe_against_a_live_server(tmp_path: Path) -> None:
    pytest.importorskip("grpc_health")
    pytest.importorskip("rummy_grpc")
    from rummy_grpc.processes import wait_port_file
    port_file = tmp_path / "port"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), str(REPO / "services"), str(REPO / "workers")])}
    proc = subprocess.Popen([sys.executable, "-m", "rummy_grpc", "serve", "--port", "0",
                             "--host", "127.0.0.1", "--port-file", str(port_file)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        try:
            port = wait_port_file(port_file, proc, HANG_GUARD)  # type: ignore[arg-type]
        except ChildProcessError:
            raise AssertionError(proc.stdout.read().decode()) from None  # type: ignore[union-attr]
        target = f"127.0.0.1:{port}"
        ok = _probe("grpc", target)
        assert ok.returncode == 0, ok.stderr
        assert _probe("grpc", target, "rummy_api.v1.GameService").returncode == 0
        unknown = _probe("grpc", target, "no.such.Service")
        assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    down = _probe("grpc", target)
    assert down.returncode == 1 and "UNAVAILABLE" in down.stderr


def test_http_probe_against_a_live_metrics_endpoint() -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    port = _free_port()
    server, thread = prometheus_client.start_http_server(port, addr="127.0.0.1")
    try:
        ok = _probe("http", f"http://127.0.0.1:{port}/metrics")
        assert ok.returncode == 0, ok.stderr
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert _probe("http", f"http://127.0.0.1:{port}/metrics").returncode == 1


def test_image_extras_and_pins_match_pyproject() -> None:
    import tomllib
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    tools_pin = next(d for d in extras["service"] if d.startswith("grpcio-tools"))
    # the images' protoc is the wheel build's (setup.py runs codegen.py in the isolated
    # build environment): the build requirement is pinned like the service extra
    assert tools_pin in pyproject["build-system"]["requires"]
    for name in ("service", "worker"):
        runs = " ".join(a for i, a in _instructions(DEPLOY / f"{name}.Dockerfile") if i == "RUN")
        assert name in extras
        assert "pip wheel" in runs, f"{name}.Dockerfile must build the wheel (and so its code)"
    assert project["requires-python"] == ">=3.11"


def _dockerignored(rel: str, patterns: list[str]) -> bool:
    """Whether BuildKit would leave ``rel`` (a posix path) out of the build context."""
    from fnmatch import fnmatch
    parts = rel.split("/")
    for pat in patterns:
        if pat.startswith("**/"):
            if any(fnmatch(p, pat[3:]) for p in parts):
                return True
        elif any(fnmatch("/".join(parts[:i]), pat) for i in range(1, len(parts) + 1)):
            return True
    return False


@pytest.mark.parametrize("name", ["service"])
def test_the_image_build_recipe_makes_a_complete_wheel(name: str, tmp_path: Path) -> None:
    """The build stage, replayed without Docker: the context (the working tree minus the
    .dockerignore), ``pip wheel`` (whose build hook runs protoc through codegen.py, the one
    place that does); the wheel alone must hold the generated gRPC code and every package,
    and its ``rummy`` must list the adapters' subcommands."""
    pytest.importorskip("grpc_tools")
    pytest.importorskip("setuptools")
    patterns = [ln.strip() for ln in
                (DEPLOY / f"{name}.Dockerfile.dockerignore").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    ctx = tmp_path / "src"
    for path in REPO.rglob("*"):
        rel = path.relative_to(REPO).as_posix()
        if path.is_file() and not _dockerignored(rel, patterns):
            (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
            (ctx / rel).write_bytes(path.read_bytes())
    assert not list((ctx / "services" / "rummy_api" / "v1").glob("*_pb2*"))
    # --no-build-isolation: no network here; the image build fetches setuptools itself.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(tmp_path / "wheels"), "."],
                   cwd=ctx, check=True, timeout=300, capture_output=True)
    import zipfile
    (wheel,) = (tmp_path / "wheels").glob("*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        z.extractall(site)
    assert "rummy_api/v1/game_service_pb2_grpc.py" in names
    for pkg in ("rummy", "rummy/bots", "rummy_api", "rummy_store", "rummy_grpc", "rummy_worker"):
        assert f"{pkg}/__init__.py" in names, pkg
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "rummy = rummy_cli.main:main" in (site / entry).read_text()
    out = subprocess.run([sys.executable, "-c", "import sys, rummy_api.v1.game_service_pb2, "
                          "rummy_grpc, rummy_worker\nfrom rummy_cli.main import main\n"
                          "print(rummy_grpc.__file__, rummy_worker.__file__)\n"
                          "sys.exit(main(['--help']))"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False,
                         env={**os.environ, "PYTHONPATH": str(site)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:2] == [str(site / "rummy_grpc" / "__init__.py"),
                                      str(site / "rummy_worker" / "__init__.py")]
    for sub in ("serve", "worker", "batch", "play", "simulate", "replay"):
        assert sub in out.stdout
