"""Infrastructure faults are UNAVAILABLE, not INTERNAL, and `rummy serve` says why it cannot
start instead of printing a traceback."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator

import grpc
import pytest
import redis.exceptions
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.errors import map_error

from tests.harness import HANG_GUARD

from .conftest import ADMIN_TOKEN, humans

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
    created = await running.stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=3))
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


@contextlib.contextmanager
def _busy_port() -> Iterator[int]:
    """A port of 127.0.0.1 that another socket listens on while the block runs."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


def test_serve_on_a_taken_port_says_so():
    with _busy_port() as port:
        res = subprocess.run([sys.executable, "-m", "rummy", "serve", "--store", "memory",
                              "--host", "127.0.0.1", "--port", str(port)],
                             capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "cannot serve on" in res.stderr and "Traceback" not in res.stderr


def _start_redis(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


@pytest.mark.asyncio
@pytest.mark.chaos
async def test_health_follows_the_store_through_a_killed_redis(record_property):
    # with Redis down, health stayed SERVING and calls said INTERNAL.
    # A private redis-server is SIGKILLed and started again on the same port.
    import asyncio
    import shutil
    import signal

    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
    from rummy_grpc.server import create_server
    from rummy_store import RedisEventStore

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = _free_port()
    redis_proc = _start_redis(port)
    store = RedisEventStore.from_url(f"redis://127.0.0.1:{port}/0", prefix="health-test",
                                     socket_timeout=0.5, socket_connect_timeout=0.5)
    server, grpc_port = create_server("127.0.0.1:0", store, health_interval=0.2)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
    health = health_pb2_grpc.HealthStub(channel)
    stub = pb_grpc.GameServiceStub(channel)

    async def status() -> int:
        return (await health.Check(health_pb2.HealthCheckRequest(service=""))).status

    async def wait_for(want: int) -> float:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while await status() != want:
            assert loop.time() - t0 < HANG_GUARD, f"health did not become {want}"
            await asyncio.sleep(0.05)
        return loop.time() - t0

    try:
        created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
        assert await status() == health_pb2.HealthCheckResponse.SERVING
        redis_proc.send_signal(signal.SIGKILL)
        redis_proc.wait()
        await wait_for(health_pb2.HealthCheckResponse.NOT_SERVING)
        server.app.repo._cache.clear()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetView(pb.GetViewRequest(game_id=created.game_id))
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE, err.value.details()
        redis_proc = _start_redis(port)
        await wait_for(health_pb2.HealthCheckResponse.SERVING)
        record_property("fault", "redis SIGKILL")
        record_property("health", "NOT_SERVING while down, SERVING again")
    finally:
        await channel.close()
        await server.stop(None)
        await store.close()
        redis_proc.kill()
        redis_proc.wait()


@pytest.mark.parametrize("flags, says", [
    (["--port", "-5"], "a port is 0..65535, got -5"),
    (["--port", "0", "--metrics-port", "70000"], "a port is 0..65535, got 70000"),
    (["--grace", "-1"], "must be a finite number >= 0"),
    (["--bot-delay", "-1"], "must be a finite number >= 0"),
])
def test_serve_refuses_out_of_range_flags(flags, says):
    # newcomer review: --port -5 served on 65531, --metrics-port 70000 printed a traceback
    res = subprocess.run([sys.executable, "-m", "rummy", "serve", "--store", "memory", *flags],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and says in res.stderr and "Traceback" not in res.stderr


def test_a_taken_metrics_port_is_named_as_the_metrics_port():
    with _busy_port() as port:
        res = subprocess.run([sys.executable, "-m", "rummy", "serve", "--store", "memory",
                              "--host", "127.0.0.1", "--port", "0", "--metrics-port",
                              str(port)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert f"cannot serve metrics on port {port}" in res.stderr
