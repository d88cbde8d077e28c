"""Build hook: generate the gRPC code from proto/ into the wheel.

The generated ``rummy_api/v1/*_pb2*.py`` modules are never committed (``make proto`` makes
them in a checkout). Building a wheel or an sdist-based install runs protoc first (through
``services/rummy_grpc/codegen.py``, the one place that runs it; ``grpcio-tools`` is a build
requirement in pyproject.toml), so that ``pip install '<wheel>[service]'`` gives a working
``rummy serve`` with no make and no codegen step. Everything else about the package is in
pyproject.toml.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CODEGEN = ROOT / "services" / "rummy_grpc" / "codegen.py"


class BuildPyWithProto(build_py):
    """``build_py`` that first generates the gRPC modules into ``services/rummy_api/v1``."""

    def run(self) -> None:
        # loaded by path: the packages are not importable while they are being built
        spec = importlib.util.spec_from_file_location("_rummy_codegen", CODEGEN)
        assert spec is not None and spec.loader is not None
        codegen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(codegen)
        if codegen.protos():  # an sdist or checkout with proto/; else the code is there
            codegen.generate()
        super().run()


setup(cmdclass={"build_py": BuildPyWithProto})
