"""Honest status codes and health: undecodable request bytes answer
INVALID_ARGUMENT (reason MALFORMED) on every GameService method, with nothing logged at ERROR;
the overall health status ``""`` and ``rummy_api.v1.GameService`` start NOT_SERVING, turn
SERVING together once the server has started, and always agree."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc import metrics
from rummy_grpc.decoding import decoding_handler, generated_handlers
from rummy_grpc.server import SERVICE_NAME, create_server

from tests.harness import HANG_GUARD

from .conftest import ADMIN_TOKEN, humans

pytestmark = [pytest.mark.redis]

METHODS = list(pb.DESCRIPTOR.services_by_name["GameService"].methods)
UNDECODABLE = {
    "corrupt wire format": b"\xff\xff\xff",
    "truncated field": b"\x0a\x05ab",  # field 1 says 5 bytes, 2 follow
    "invalid utf-8 in a string": b"\x0a\x02\xff\xfe",
}
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def call_raw(channel: grpc.aio.Channel, method: object, payload: bytes) -> None:
    """Send ``payload`` as the request of ``method`` (a MethodDescriptor), unparsed; read
    the whole response (every message of a stream)."""
    path = f"/{SERVICE_NAME}/{method.name}"  # type: ignore[attr-defined]
    if method.client_streaming:  # type: ignore[attr-defined] - Session: the first request
        call = channel.stream_stream(path)(timeout=10)
        await call.write(payload)
        async for _ in call:
            pass
    elif method.server_streaming:  # type: ignore[attr-defined]
        async for _ in channel.unary_stream(path)(payload, timeout=10):
            pass
    else:
        await channel.unary_unary(path)(payload, timeout=10)


def error_info(err: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of the rich status trailer (checked equal to ``rummy-reason``)."""
    md = dict(err.trailing_metadata() or ())
    status = status_pb2.Status.FromString(md["grpc-status-details-bin"])
    assert status.code == err.code().value[0] and status.message == err.details()
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.domain == "rummy" and md["rummy-reason"] == info.reason
    return info


def test_every_generated_method_is_wrapped():
    # the tables come from the generated add_GameServiceServicer_to_server: a method added
    # to the proto is covered without touching rummy_grpc
    tables = generated_handlers(pb_grpc.add_GameServiceServicer_to_server,
                                pb_grpc.GameServiceServicer())
    assert set(tables) == {SERVICE_NAME}
    assert set(tables[SERVICE_NAME]) == {m.name for m in METHODS}
    for name, handler in tables[SERVICE_NAME].items():
        wrapped = decoding_handler(f"/{SERVICE_NAME}/{name}", handler)
        assert handler.request_deserializer is not None
        assert wrapped.request_deserializer is None
        assert wrapped.response_serializer is handler.response_serializer
        assert (wrapped.unary_stream is None) == (handler.unary_stream is None)


def test_a_request_streaming_handler_is_refused():
    handler = grpc.stream_unary_rpc_method_handler(
        lambda it, ctx: None, request_deserializer=pb.GetViewRequest.FromString)
    with pytest.raises(TypeError, match="request-streaming"):
        decoding_handler("/x.Y/Z", handler)


@pytest.mark.asyncio
@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
async def test_undecodable_bytes_are_invalid_argument(running, method, caplog):
    caplog.set_level(logging.DEBUG)
    path = f"/{SERVICE_NAME}/{method.name}"
    counted = metrics.GRPC_SERVER_HANDLED_TOTAL.labels(path, "INVALID_ARGUMENT")
    before = counted._value.get()
    for kind, payload in UNDECODABLE.items():
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call_raw(running.channel, method, payload)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (kind, err.value)
        assert path in err.value.details()
        assert "could not be decoded" in err.value.details()
        assert f"({len(payload)} bytes)" in err.value.details()
        assert error_info(err.value).reason == "MALFORMED"
    # the metrics interceptor saw them, under the method and the honest code; it counts a
    # call once the call has ended on the server, which may come after the client saw the
    # error (a loaded machine showed 2 of 3): wait for the count, within a hang guard
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    while counted._value.get() - before < len(UNDECODABLE) and loop.time() - t0 < HANG_GUARD:
        await asyncio.sleep(0.01)
    assert counted._value.get() - before == len(UNDECODABLE)
    bad = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not bad, [r.getMessage() for r in bad]
    # and the server still answers the same method with a good request
    created = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
    view = await running.stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                        token=created.tokens[0].token))
    assert view.view.version == created.version


@pytest.mark.asyncio
async def test_an_empty_request_is_a_valid_message(running):
    # zero bytes decode to the default message: the handler decides (no game "")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await running.channel.unary_unary(f"/{SERVICE_NAME}/GetView")(b"", timeout=10)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND, err.value.details()
    assert error_info(err.value).reason == "GAME_NOT_FOUND"


async def statuses(channel: grpc.aio.Channel) -> dict[str, int]:
    """``Health/List`` as ``{service: status}`` (exactly the two names)."""
    health = health_pb2_grpc.HealthStub(channel)
    listed = await health.List(health_pb2.HealthListRequest(), timeout=10)
    out = {name: r.status for name, r in listed.statuses.items()}
    assert set(out) == {"", SERVICE_NAME}
    return out


@pytest.mark.asyncio
async def test_health_is_not_serving_until_started_and_both_names_agree(store, monkeypatch):
    server, port = create_server("127.0.0.1:0", store, admin_token=ADMIN_TOKEN,
                                 health_interval=0.05)
    gate = asyncio.Event()
    real_start = server.app.start

    async def slow_start() -> int:  # resuming the store's games takes a while
        await gate.wait()
        return await real_start()

    monkeypatch.setattr(server.app, "start", slow_start)
    starting = asyncio.get_running_loop().create_task(server.start())
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    health = health_pb2_grpc.HealthStub(channel)
    try:
        # the port answers (grpc_server.start() ran) while the app is still starting
        await channel.channel_ready()
        for _ in range(3):
            for name in ("", SERVICE_NAME):
                got = await health.Check(health_pb2.HealthCheckRequest(service=name))
                assert got.status == NOT_SERVING, name
            assert await statuses(channel) == {"": NOT_SERVING, SERVICE_NAME: NOT_SERVING}
            await asyncio.sleep(0.02)
        assert not starting.done()
        watch = health.Watch(health_pb2.HealthCheckRequest(service=""))
        assert (await watch.read()).status == NOT_SERVING
        gate.set()
        await starting
        assert await statuses(channel) == {"": SERVING, SERVICE_NAME: SERVING}
        assert (await asyncio.wait_for(watch.read(), 5)).status == SERVING

        # the store stops answering: both flip together, and back
        calls = {"down": True}
        real_ping = store.ping

        async def ping() -> None:
            if calls["down"]:
                raise ConnectionError("store down")
            await real_ping()

        monkeypatch.setattr(store, "ping", ping)
        seen: list[dict[str, int]] = []
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while not seen or seen[-1][""] != NOT_SERVING:
            assert loop.time() - t0 < HANG_GUARD, "health did not become NOT_SERVING"
            seen.append(await statuses(channel))
        assert (await asyncio.wait_for(watch.read(), 5)).status == NOT_SERVING
        calls["down"] = False
        while seen[-1][""] != SERVING:
            assert loop.time() - t0 < HANG_GUARD, "health did not become SERVING again"
            seen.append(await statuses(channel))
        # at every step List showed both names with one status
        assert all(s[""] == s[SERVICE_NAME] for s in seen), seen
        watch.cancel()
    finally:
        gate.set()
        if not starting.done():
            await starting
        await server.stop(None)
        await channel.close()
    # after shutdown both are NOT_SERVING for good
    assert server.health._server_status[""] == NOT_SERVING
    assert server.health._server_status[SERVICE_NAME] == NOT_SERVING


@pytest.mark.asyncio
async def test_a_failed_start_leaves_health_not_serving(store, monkeypatch):
    server, port = create_server("127.0.0.1:0", store)

    async def unreachable() -> int:
        raise ConnectionError("store unreachable")

    monkeypatch.setattr(server.app, "start", unreachable)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        with pytest.raises(ConnectionError):
            await server.start()
        assert await statuses(channel) == {"": NOT_SERVING, SERVICE_NAME: NOT_SERVING}
    finally:
        await channel.close()
        await server.stop(None)
