"""The Go and Node.js recipes of docs/api.md ("Generating a client"), run as written against
a real server: the shell blocks and the client files are taken from the guide itself (the
blocks after ``<!-- recipe:NAME -->``), with ``PROTO`` the checkout's proto/ and the
server's address in place of ``127.0.0.1:50051``.

Where a step needs the network or a toolchain this machine may lack, the test says so:

* Node.js: ``npm install`` of the three packages is answered from tests/node/node_modules
  (``npm ci --prefix tests/node``), after checking that the guide pins the same versions
  as tests/node/package.json; ``npm init`` and ``npm pkg set`` run for real.
* Go: with Go >= 1.24 (what the current google.golang.org/grpc needs), ``protoc`` and both
  plugins, every line runs (``go mod tidy`` fetches the modules). With Debian's Go (1.19)
  and its Go libraries (``golang-google-grpc-dev``, ``golang-google-genproto-dev``,
  ``golang-google-protobuf-dev``), the protoc step runs as written and the same
  ``main.go`` is compiled against those libraries in GOPATH mode instead of
  ``go mod tidy``; the test then skips, saying why it cannot run it there (Debian 12's
  ``golang-goprotobuf-dev`` 1.3 cannot decode messages of the current generator).
  Otherwise the test skips and names what is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rummy_store.memory import MemoryEventStore

from .conftest import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "api.md"
NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
DEBIAN_GOCODE = Path("/usr/share/gocode/src")
ADDRESS = "127.0.0.1:50051"
REFUSED = re.compile(r"refused: (FailedPrecondition|FAILED_PRECONDITION) ILLEGAL_MOVE rule "
                     r"R3\.6|refused: (PermissionDenied|PERMISSION_DENIED) NOT_YOUR_TURN rule R3")


def recipe(name: str) -> str:
    """The fenced block after ``<!-- recipe:NAME -->`` in docs/api.md."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- recipe:{name} -->\n```\w*\n(.*?)```", text, re.S)
    assert found, f"docs/api.md has no recipe {name}"
    return found.group(1)


def halves(script: str) -> tuple[str, str]:
    """A shell recipe split at its ``# write ... here, then:`` line."""
    before, marker, after = script.partition("# write ")
    assert marker, "the recipe says where the client file is written"
    return before, after.split("\n", 1)[1]


async def run(script: str, cwd: Path, env: dict[str, str], *, offline_skip: bool = False
              ) -> str:
    """Run a shell recipe (the server answers meanwhile: this loop serves it);
    ``offline_skip``: skip the test when it failed for want of the network."""
    proc = await asyncio.create_subprocess_exec(
        "bash", "-euo", "pipefail", "-c", script, cwd=cwd, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=500)
    if proc.returncode and offline_skip and re.search(
            r"dial tcp|no such host|connection refused|i/o timeout", err.decode()):
        pytest.skip("the protoc step ran as written; `go mod tidy` cannot reach the Go "
                    "module proxy from this machine")
    assert proc.returncode == 0, \
        f"{script}\n--- stdout\n{out.decode()}\n--- stderr\n{err.decode()}"
    return out.decode()


def check_output(out: str) -> None:
    assert REFUSED.search(out), out
    assert re.search(r"actions: \[?(ACTION_DRAW)?\]? meld: MELD_AVAILABILITY_NOT_NOW", out), out


async def test_node_recipe_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are not installed")
    if not (NODE_MODULES / "@grpc" / "grpc-js").is_dir():
        pytest.skip("run `npm ci --prefix tests/node` first (the recipe's packages, offline)")
    first, second = halves(recipe("node-sh"))
    pinned = json.loads((ROOT / "tests" / "node" / "package.json").read_text())["dependencies"]
    asked = dict(re.findall(r"(@?[\w./-]+)@(\d[\w.]*)", first.split("npm install", 1)[1]))
    assert asked == pinned, "docs/api.md and tests/node/package.json pin different versions"
    shim = tmp_path / "bin"
    shim.mkdir()
    real_npm = shutil.which("npm")
    (shim / "npm").write_text(  # `npm install`: the pinned packages of tests/node, offline
        f'#!/bin/sh\nif [ "$1" = install ]; then ln -s {NODE_MODULES} node_modules; '
        f'exit 0; fi\nexec {real_npm} "$@"\n')
    (shim / "npm").chmod(0o755)
    env = {**os.environ, "PROTO": str(ROOT / "proto"),
           "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    async with serving(MemoryEventStore()) as running:
        await run(first, tmp_path, env)
        (tmp_path / "rummynode" / "client.mjs").write_text(recipe("node-main"))
        out = await run(second.replace(ADDRESS, f"127.0.0.1:{running.port}"),
                  tmp_path / "rummynode", env)
    check_output(out)


def _go_version() -> tuple[int, int] | None:
    go = shutil.which("go")
    if go is None:
        return None
    text = subprocess.run([go, "version"], capture_output=True, text=True).stdout
    found = re.search(r"go(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


@pytest.mark.slow  # a cold Go build cache compiles grpc-go: about 100 s on 2 cores
async def test_go_recipe_runs_as_written(tmp_path: Path) -> None:
    version = _go_version()
    missing = [tool for tool in ("protoc", "protoc-gen-go", "protoc-gen-go-grpc")
               if shutil.which(tool) is None]
    if version is None:
        pytest.skip("Go is not installed (Debian: apt-get install golang-go)")
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (Debian: protobuf-compiler, "
                    "protoc-gen-go, protoc-gen-go-grpc)")
    modules = version >= (1, 24)
    debian = all((DEBIAN_GOCODE / p).is_dir() for p in (
        "google.golang.org/grpc", "google.golang.org/genproto/googleapis/rpc/errdetails",
        "google.golang.org/protobuf"))
    if not modules and not debian:
        pytest.skip(f"Go {version[0]}.{version[1]} is older than the 1.24 that "
                    "google.golang.org/grpc needs, and Debian's Go libraries are missing "
                    "(golang-google-grpc-dev, golang-google-genproto-dev, "
                    "golang-google-protobuf-dev)")
    first, second = halves(recipe("go-sh"))
    env = {**os.environ, "PROTO": str(ROOT / "proto"), "GOFLAGS": "",
           "HOME": os.environ.get("HOME", str(tmp_path))}  # Go's build cache: warm runs
    async with serving(MemoryEventStore()) as running:
        address = f"127.0.0.1:{running.port}"
        await run(first, tmp_path, env)
        client = tmp_path / "rummyclient"
        (client / "main.go").write_text(recipe("go-main"))
        assert (client / "rummyapiv1" / "game_service.pb.go").is_file()
        assert (client / "rummyapiv1" / "game_service_grpc.pb.go").is_file()
        if modules:
            out = await run(second.replace(ADDRESS, address), client, env,
                            offline_skip=True)
        else:  # Debian's Go: the same files, compiled against Debian's Go libraries
            gopath = tmp_path / "gopath"
            (gopath / "src" / "example.com").mkdir(parents=True)
            shutil.copytree(client, gopath / "src" / "example.com" / "rummyclient")
            await run("go build -o rummyclient .",
                      gopath / "src" / "example.com" / "rummyclient",
                      {**env, "GO111MODULE": "off",
                       "GOPATH": f"{gopath}{os.pathsep}{DEBIAN_GOCODE.parent}"})
            pytest.skip(f"the protoc step ran as written and main.go compiled (Go "
                        f"{version[0]}.{version[1]}, Debian's Go libraries); not run: "
                        "Debian 12's golang-goprotobuf-dev (1.3) cannot decode the messages "
                        "protoc-gen-go 1.28 generates, and `go mod tidy` needs the Go "
                        "module proxy and Go >= 1.24")
    check_output(out)
