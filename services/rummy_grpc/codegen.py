"""Generate ``rummy_api`` from ``proto/`` with ``grpc_tools.protoc``: the one place protoc runs.

Every path that generates the gRPC code calls :func:`generate`: ``make proto`` (``python
services/rummy_grpc/codegen.py``), the wheel build (``setup.py`` loads this file by its path,
before any package is importable) and :func:`ensure_generated`, which ``rummy_grpc`` runs on
import so that a source checkout without ``make proto`` still works. Generated modules are
never committed or edited.

This module imports nothing of the project (``grpc_tools`` only, when it generates), so that
the build can load it on its own.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

SERVICES = Path(__file__).resolve().parent.parent
"""The ``services/`` source root (where ``rummy_api/`` lives)."""
PROTO_ROOT = SERVICES.parent / "proto"
"""The ``proto/`` include root of a source checkout."""
PROTO_GLOB = "rummy_api/v1/*.proto"
"""The ``.proto`` files generated, relative to :data:`PROTO_ROOT`."""


def protos(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """The ``.proto`` sources under ``proto_root`` (:data:`PROTO_GLOB`), sorted; empty
    outside a source checkout."""
    return sorted(proto_root.glob(PROTO_GLOB))


def generate(proto_root: Path = PROTO_ROOT, out: Path = SERVICES) -> None:
    """Run protoc on :func:`protos`, writing ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py``
    under ``out`` (imports come out as ``from rummy_api.v1 import ...``).

    Raises:
        RuntimeError: no ``.proto`` file under ``proto_root``, protoc failed (its exit
            status in the message) or grpcio-tools is missing.
    """
    sources = protos(proto_root)
    if not sources:
        raise RuntimeError(f"no {PROTO_GLOB} under {proto_root}")
    try:
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - the service extra pins grpcio-tools
        raise RuntimeError("grpcio-tools is needed to generate rummy_api") from exc
    include = Path(protoc.__file__).resolve().parent / "_proto"
    args = ["grpc_tools.protoc", f"-I{proto_root}", f"-I{include}",
            f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}",
            *map(str, sources)]
    status = protoc.main(args)
    if status != 0:
        raise RuntimeError(f"protoc exited with status {status}: {' '.join(args)}")


def ensure_generated() -> None:
    """Import ``rummy_api.v1.game_service_pb2``, generating it first if it is missing and the
    ``.proto`` sources are at hand (a source checkout). No-op for an installed build."""
    try:
        importlib.import_module("rummy_api.v1.game_service_pb2")
        return
    except ImportError:
        if not protos():
            raise
    generate()
    importlib.invalidate_caches()
    sys.modules.pop("rummy_api.v1.game_service_pb2", None)
    importlib.import_module("rummy_api.v1.game_service_pb2")


if __name__ == "__main__":
    generate()
