"""The wheel ships the API contract for clients in other languages: the ``.proto`` files
(an include root at ``rummy_api/proto``) and docs/api.md, as package data of ``rummy_api``
read with ``importlib.resources`` (docs/api.md, "Generating a client")."""

from __future__ import annotations

import importlib.resources
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO = "rummy_api/v1/game_service.proto"


def test_the_wheel_carries_the_protos_and_the_guide(tmp_path: Path) -> None:
    for module in ("setuptools", "grpc_tools"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is needed to build the wheel (pyproject build-system)")
    # built from a copy: the build writes build/, the egg-info and the generated code
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "node_modules", "build", "*.egg-info", ".venv", "__pycache__", ".*_cache",
        "out", "events"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(src)], check=True, cwd=src,
                   capture_output=True, timeout=300)
    wheel, = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert f"rummy_api/proto/{PROTO}" in names
        assert "rummy_api/docs/api.md" in names
        assert z.read(f"rummy_api/proto/{PROTO}") == (ROOT / "proto" / PROTO).read_bytes()
        assert z.read("rummy_api/docs/api.md") == (ROOT / "docs" / "api.md").read_bytes()


def test_importlib_resources_finds_them_in_a_checkout() -> None:
    from rummy_grpc import codegen
    codegen.ship()  # what `make proto` and the wheel build do after protoc
    root = importlib.resources.files("rummy_api") / "proto"
    assert (root / PROTO).read_bytes() == (ROOT / "proto" / PROTO).read_bytes()
    guide = importlib.resources.files("rummy_api") / "docs" / "api.md"
    assert "importlib.resources" in guide.read_text(encoding="utf-8")
