"""CI smoke test of an installed wheel: `rummy serve` from the installed package
serves one gRPC game. Run with the wheel venv's python, from outside the checkout:

    /tmp/rummy-ci-wheel/bin/python .ci/wheel_smoke.py

Exits 0 when CreateGame, GetView and Draw answer as they should.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.processes import wait_port_file


def main() -> int:
    # the API contract ships as package data for other languages' clients (docs/api.md)
    import importlib.resources
    shipped = importlib.resources.files("rummy_api")
    assert (shipped / "proto" / "rummy_api" / "v1" / "game_service.proto").is_file()
    assert (shipped / "docs" / "api.md").is_file()
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        server = subprocess.Popen(
            [str(bindir / "rummy"), "serve", "--store", "memory", "--host", "127.0.0.1",
             "--port", "0", "--port-file", str(port_file)], cwd=tmp,
            env={**os.environ, "RUMMY_LOG_LEVEL": "WARNING"})
        try:
            # the first start after an install compiles the solver bots' kernels (35 s
            # idle, longer under load): wait as long as `rummy serve --processes` does
            port = wait_port_file(port_file, server)
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.GameServiceStub(channel)
                created = stub.CreateGame(pb.CreateGameRequest(seats=[
                    pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="ci"),
                    pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="basic")]), timeout=30)
                token = created.tokens[0].token
                view = stub.GetView(pb.GetViewRequest(game_id=created.game_id, token=token),
                                    timeout=30).view
                assert view.phase == pb.PHASE_DRAW and len(view.hand) == 10, view
                result = stub.Draw(pb.DrawRequest(game_id=created.game_id, token=token),
                                   timeout=30).result
                assert result.version == view.version + 1 and len(result.view.hand) == 11
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wheel smoke test: a game served by the installed `rummy serve` on port {port}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
