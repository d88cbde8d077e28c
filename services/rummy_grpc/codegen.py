"""Generate ``rummy_api`` from ``proto/`` with ``grpc_tools.protoc``: the one place protoc runs.

Every path that generates the gRPC code calls :func:`generate` (which also copies the
``.proto`` files and docs/api.md into the package, :func:`ship`): ``make proto`` (``python
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
API_GUIDE = SERVICES.parent / "docs" / "api.md"
"""The client authors' guide shipped beside the ``.proto`` files."""
SHIPPED = ("proto", "docs")
"""The data folders of the ``rummy_api`` package that :func:`ship` fills: ``proto/`` (an
include root: ``proto/rummy_api/v1/game_service.proto``) and ``docs/api.md``. Read them
from an installed package with ``importlib.resources.files("rummy_api") / "proto"``."""


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
    ship(proto_root, out)


def ship(proto_root: Path = PROTO_ROOT, out: Path = SERVICES,
         guide: Path = API_GUIDE) -> list[Path]:
    """Copy the ``.proto`` sources (under ``rummy_api/proto/``, the same layout as
    ``proto/``) and the API guide (``rummy_api/docs/api.md``, when ``guide`` exists) into
    the ``rummy_api`` package under ``out``, so that the wheel carries them as package
    data (pyproject.toml) for clients in other languages. Returns the files written."""
    written = []
    for src in protos(proto_root):
        dest = out / "rummy_api" / "proto" / src.relative_to(proto_root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
        written.append(dest)
    if guide.is_file():
        dest = out / "rummy_api" / "docs" / guide.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(guide.read_bytes())
        written.append(dest)
    return written


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
