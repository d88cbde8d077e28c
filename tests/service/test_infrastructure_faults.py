"""Infrastructure faults are UNAVAILABLE, not INTERNAL, and `rummy serve` says why it cannot
start instead of printing a traceback (part of issue 12)."""

from __future__ import annotations

import socket
import subprocess
import sys

import grpc
import pytest
import redis.exceptions
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.errors import map_error

from .conftest import humans

pytestmark = [pytest.mark.redis]


@pytest.mark.asyncio
@pytest.mark.parametrize("exc", [redis.exceptions.ConnectionError("Connection refused"),
                                 redis.exceptions.TimeoutError("Timeout reading")])
async def test_store_faults_map_to_unavailable(exc):
    m = map_error(exc)
    assert m is not None and m.code == grpc.StatusCode.UNAVAILABLE
    assert m.reason == "STORE_UNAVAILABLE" and "same request_id is safe" in m.message


@pytest.mark.asyncio
async def test_a_store_outage_answers_unavailable_not_internal(running, store, monkeypatch):
    created = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2), seed=3))
    token = created.tokens[0].token

    async def down(*args, **kwargs):
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")

    monkeypatch.setattr(type(store), "read", down)
    monkeypatch.setattr(type(store), "append", down)
    running.server.app.repo._cache.clear()  # force a read
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await running.stub.GetView(pb.GetViewRequest(game_id=created.game_id, token=token))
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE, err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await running.stub.Draw(pb.DrawRequest(game_id=created.game_id, token=token))
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_with_an_unreachable_store_says_so():
    res = subprocess.run([sys.executable, "-m", "rummy", "serve", "--redis-url",
                          f"redis://127.0.0.1:{_free_port()}/0", "--port", "0"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "is unreachable" in res.stderr and "Traceback" not in res.stderr


def test_serve_on_a_taken_port_says_so():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "rummy", "serve", "--store", "memory",
                              "--host", "127.0.0.1", "--port", str(port)],
                             capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "cannot serve on" in res.stderr and "Traceback" not in res.stderr
