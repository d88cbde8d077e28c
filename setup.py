"""Build hook: generate the gRPC code from proto/ into the wheel (issue 13).

The generated ``rummy_api/v1/*_pb2*.py`` modules are never committed (``make proto`` makes
them in a checkout). Building a wheel or an sdist-based install runs ``grpc_tools.protoc``
(a build requirement in pyproject.toml) first, so that ``pip install '<wheel>[service]'``
gives a working ``rummy serve`` with no make and no codegen step. Everything else about the
package is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PROTO = "rummy_api/v1/game_service.proto"


class BuildPyWithProto(build_py):
    """``build_py`` that first generates the gRPC modules into ``services/rummy_api/v1``."""

    def run(self) -> None:
        if (ROOT / "proto" / PROTO).exists():
            from grpc_tools import protoc

            include = Path(protoc.__file__).resolve().parent / "_proto"
            out = ROOT / "services"
            status = protoc.main(["grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{include}",
                                  f"--python_out={out}", f"--pyi_out={out}",
                                  f"--grpc_python_out={out}", str(ROOT / "proto" / PROTO)])
            if status != 0:
                raise RuntimeError(f"protoc exited with status {status}")
        super().run()


setup(cmdclass={"build_py": BuildPyWithProto})
