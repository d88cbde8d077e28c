"""Generate ``rummy_api`` from ``proto/`` with ``grpc_tools.protoc`` (the ``make proto`` step).

Generated modules are never committed or edited; a source checkout regenerates them on demand
(:func:`ensure_generated`) so that tests and ``python -m rummy_grpc`` work from a fresh clone.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

SERVICES = Path(__file__).resolve().parent.parent
"""The ``services/`` source root (where ``rummy_api/`` lives)."""
PROTO_ROOT = SERVICES.parent / "proto"
"""The ``proto/`` include root of a source checkout."""
PROTOS = ("rummy_api/v1/game_service.proto",)


def generate(proto_root: Path = PROTO_ROOT, out: Path = SERVICES) -> None:
    """Run protoc on :data:`PROTOS`, writing ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py``
    under ``out`` (imports come out as ``from rummy_api.v1 import ...``).

    Raises:
        RuntimeError: protoc failed (its exit status in the message) or grpcio-tools is
            missing.
    """
    try:
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - the service extra pins grpcio-tools
        raise RuntimeError("grpcio-tools is needed to generate rummy_api") from exc
    include = Path(protoc.__file__).resolve().parent / "_proto"
    args = ["grpc_tools.protoc", f"-I{proto_root}", f"-I{include}",
            f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}",
            *(str(proto_root / p) for p in PROTOS)]
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
        if not (PROTO_ROOT / PROTOS[0]).exists():
            raise
    generate()
    importlib.invalidate_caches()
    sys.modules.pop("rummy_api.v1.game_service_pb2", None)
    importlib.import_module("rummy_api.v1.game_service_pb2")


if __name__ == "__main__":
    generate()
