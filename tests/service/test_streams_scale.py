"""Many open ``StreamEvents`` calls on a real server over the real Redis: the
commands of another client stay fast, a cancel storm leaves nothing behind, the stream bounds
answer RESOURCE_EXHAUSTED, and the old ~100-stream outage is gone."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from prometheus_client import REGISTRY
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.convert import view_from_proto
from rummy_grpc.server import RummyServer, create_server
from rummy_store import RedisEventStore

from rummy.bots import make_bot
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

from .conftest import ADMIN_TOKEN, bots, humans, send

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(120)]


@pytest_asyncio.fixture
async def named_store(prefix: str) -> AsyncIterator[RedisEventStore]:
    """A Redis store whose pool connections carry the name ``pool-<prefix>`` (CLIENT LIST);
    its hub's connection is ``rummy-hub:<prefix>``."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    s = RedisEventStore.from_url(REDIS_URL, prefix=prefix, client_name=f"pool-{prefix}")
    try:
        yield s
    finally:
        await s.close()
        await delete_prefix(prefix)


@contextlib.asynccontextmanager
async def serving(store: RedisEventStore, channels: int = 1,
                  **bounds: int) -> AsyncIterator[tuple[RummyServer, list[Any]]]:
    """A started server with the given stream bounds and ``channels`` stubs on own channels."""
    server, port = create_server("127.0.0.1:0", store, admin_token=ADMIN_TOKEN, **bounds)
    await server.start()
    chans = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(channels)]
    try:
        yield server, [pb_grpc.GameServiceStub(c) for c in chans]
    finally:
        for c in chans:
            await c.close()
        await server.stop(None)


async def until(predicate: Any, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        await asyncio.sleep(0.02)
    return bool(predicate())


class Spectators:
    """Open spectator streams, each consumed by a task that counts what it receives."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.last: list[int] = []

    def open(self, stub: Any, game_id: str, token: str = "") -> int:
        i = len(self.calls)
        call = stub.StreamEvents(pb.StreamEventsRequest(game_id=game_id, token=token))
        self.calls.append(call)
        self.last.append(0)

        async def consume() -> None:
            async for msg in call:
                self.last[i] = msg.event.version

        self.tasks.append(asyncio.create_task(consume()))
        return i

    def cancel(self, i: int | None = None) -> None:
        for k in ([i] if i is not None else range(len(self.calls))):
            self.calls[k].cancel()

    async def close(self) -> None:
        self.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def new_spectated_games(stub: Any, n: int) -> list[tuple[str, str]]:
    """``n`` idle two-human games: ``(game_id, token of the seat to move)``."""
    out = []
    for i in range(n):
        created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=100 + i))
        tokens = {t.seat: t.token for t in created.tokens}
        v = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                  token=tokens[0]))).view
        out.append((created.game_id, tokens[v.turn]))
    return out


async def command_latencies(stub: Any, n: int, seed: int) -> list[float]:
    """Play human-vs-bot games (new ones as they end) and time ``n`` commands (seconds)."""
    agent = make_bot("basic", seed)
    out: list[float] = []
    game_id, token = "", ""
    while len(out) < n:
        if not game_id:
            created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
                seats=[*humans(1), *bots("basic")], variants={"target_score": "60"},
                seed=seed + len(out)))
            game_id, token = created.game_id, created.tokens[0].token
        v = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=token))).view
        if v.phase == pb.PHASE_GAME_OVER:
            game_id = ""
            continue
        cmd = agent.act(view_from_proto(v))
        t0 = time.perf_counter()
        await send(stub, game_id, token, cmd, expected_version=v.version,
                   request_id=f"{v.version}")
        out.append(time.perf_counter() - t0)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def xread_connections(store: RedisEventStore, prefix: str) -> list[dict]:
    admin = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        names = {f"pool-{prefix}", f"rummy-hub:{prefix}"}
        return [c for c in await admin.client_list()
                if c.get("name") in names and c.get("cmd") == "xread"]
    finally:
        await admin.aclose()


def gauge() -> float:
    return REGISTRY.get_sample_value("rummy_streams_open") or 0.0


@pytest.mark.chaos
async def test_a_thousand_spectator_streams_do_not_slow_another_clients_commands(
    named_store: RedisEventStore, record_property: Any,
) -> None:
    store = named_store
    async with serving(store, channels=5, max_streams_per_game=1000,
                       max_streams_per_client=2000) as (server, stubs):
        player, watchers = stubs[0], stubs[1:]
        await command_latencies(player, 30, seed=1)  # warm up
        base = await command_latencies(player, 300, seed=2)
        games = await new_spectated_games(player, 4)
        spectators = Spectators()
        try:
            for i in range(1000):
                spectators.open(watchers[i % 4], games[i % 4][0])
            assert await until(lambda: server.streams.open == 1000
                               and store.subscriber_count() == 1000), \
                (server.streams.open, store.subscriber_count())
            b50, b99 = p(base, 50) * 1e3, p(base, 99) * 1e3
            # the latencies are measured and reported, not a pass criterion: a p99 is at the
            # mercy of the host's load (a newcomer's run at load 8 failed a p99 bound). What
            # keeps the commands fast is checked instead: every command succeeds while the
            # 1,000 streams stay open, and they all share ONE XREAD connection (below).
            # benchmarks/bench_streams.py measures the p99 with and without the streams.
            with_streams = await command_latencies(player, 300, seed=3)
            assert len(with_streams) == 300
            s50, s99 = p(with_streams, 50) * 1e3, p(with_streams, 99) * 1e3
            assert server.streams.open == 1000 and store.subscriber_count() == 1000
            # the watched games still fan out: one move reaches its 250 streams
            game_id, token = games[0]
            t0 = time.perf_counter()
            result = (await player.Draw(pb.DrawRequest(game_id=game_id, token=token))).result
            watching = range(0, 1000, 4)
            assert await until(lambda: all(spectators.last[i] >= result.version
                                           for i in watching), timeout=HANG_GUARD)
            fan_out = time.perf_counter() - t0
            assert len(await xread_connections(store, store.prefix)) <= 1
        finally:
            await spectators.close()
        print(f"\ncommand latency, 0 streams: p50 {b50:.2f} ms, p99 {b99:.2f} ms; "
              f"1,000 streams: p50 {s50:.2f} ms, p99 {s99:.2f} ms; "
              f"one move to 250 streams of its game: {fan_out * 1e3:.0f} ms")
        record_property("load", "1000 open streams")
        record_property("p99_ms_before_after", f"{b99:.1f} -> {s99:.1f}")
        assert await until(lambda: server.streams.open == 0, timeout=HANG_GUARD)
        record_property("leaks", 0)


@pytest.mark.chaos
async def test_a_cancel_storm_leaves_no_subscriber_handler_or_blocked_connection(
    named_store: RedisEventStore, record_property: Any,
) -> None:
    store = named_store
    before = gauge()
    async with serving(store, channels=4, max_streams_per_game=1000,
                       max_streams_per_client=2000) as (server, stubs):
        games = await new_spectated_games(stubs[0], 2)
        spectators = Spectators()
        for i in range(1000):
            spectators.open(stubs[i % 4], games[i % 2][0])
        assert await until(lambda: store.subscriber_count() == 1000
                           and all(v >= 2 for v in spectators.last))
        assert server.streams.open == 1000 and gauge() == before + 1000
        spectators.cancel()
        await asyncio.sleep(5)
        left = (store.subscriber_count(), server.streams.open, gauge() - before)
        blocked = await xread_connections(store, store.prefix)
        print(f"\n5 s after cancelling 1,000 streams: {left[0]} subscribers, {left[1]} "
              f"handlers, gauge {left[2]:+.0f}, {len(blocked)} connection(s) in XREAD")
        record_property("load", "1000 streams cancelled")
        record_property("leaks", sum(left))
        assert left == (0, 0, 0)
        assert len(blocked) <= 1
        await spectators.close()


async def test_stream_bounds_per_game_and_per_client(store: RedisEventStore) -> None:
    async with serving(store, max_streams_per_game=3, max_streams_per_client=5) as (
            server, (stub,)):
        (a, _), (b, _) = await new_spectated_games(stub, 2)
        spectators = Spectators()
        try:
            for _ in range(3):
                spectators.open(stub, a)
            assert await until(lambda: server.streams.count(game_id=a) == 3)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id=a)):
                    pass
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            md = dict(err.value.trailing_metadata() or ())
            assert md["rummy-reason"] == "STREAM_LIMIT"
            assert "3 streams per game" in err.value.details()
            spectators.cancel(0)  # one ends: a new one is admitted
            assert await until(lambda: server.streams.count(game_id=a) == 2)
            again = spectators.open(stub, a)
            assert await until(lambda: spectators.last[again] >= 2)
            # per client (this host): 3 on a + 2 on b = 5
            for _ in range(2):
                spectators.open(stub, b)
            assert await until(lambda: server.streams.open == 5)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id=b)):
                    pass
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "5 streams per client" in err.value.details()
            # a seat token is a client of its own, whatever the host
            created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=7))
            mine = spectators.open(stub, created.game_id, created.tokens[0].token)
            assert await until(lambda: spectators.last[mine] >= 2)
            spectators.cancel(1)
            assert await until(lambda: server.streams.open == 5)
            spectators.open(stub, b)
            assert await until(lambda: server.streams.open == 6)
        finally:
            await spectators.close()
        assert await until(lambda: server.streams.open == 0, timeout=HANG_GUARD)


async def test_the_server_bound_and_release_after_the_game_ends(store: RedisEventStore) -> None:
    async with serving(store, max_streams=2) as (server, (stub,)):
        (a, _), = await new_spectated_games(stub, 1)
        spectators = Spectators()
        try:
            spectators.open(stub, a)
            spectators.open(stub, a)
            assert await until(lambda: server.streams.open == 2)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id=a)):
                    pass
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "2 streams per server" in err.value.details()
        finally:
            await spectators.close()
        assert await until(lambda: server.streams.open == 0)
        # a stream that ends with its game releases its count
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=bots("random", "random"), variants={"target_score": "20"}, seed=5))
        for _ in range(3):
            async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id=created.game_id)):
                pass
        assert server.streams.open == 0
        # an unknown game fails (NOT_FOUND) and releases its count too
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id="nope")):
                pass
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert server.streams.open == 0


async def test_150_open_streams_do_not_take_the_service_down(prefix: str) -> None:
    # ~100 spectator streams each held a pool connection and every other call
    # failed with INTERNAL MaxConnectionsError; here the pool has 50 connections only
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix, max_connections=50)
    try:
        async with serving(store) as (server, (stub,)):
            created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
                seats=[*humans(1), *bots("basic")], seed=21))
            gid, token = created.game_id, created.tokens[0].token
            spectators = Spectators()
            try:
                for _ in range(150):
                    spectators.open(stub, gid)
                assert await until(lambda: store.subscriber_count() == 150)
                v = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
                cmd = make_bot("basic", 1).act(view_from_proto(v))
                result = await send(stub, gid, token, cmd, expected_version=v.version)
                assert result.version > v.version
                assert await until(lambda: min(spectators.last) >= result.version)
            finally:
                await spectators.close()
            assert await until(lambda: server.streams.open == 0)
    finally:
        await store.close()
        await delete_prefix(prefix)




async def test_stream_bound_flags_of_rummy_serve(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from rummy_grpc.cli import add_serve_parser
    parser = argparse.ArgumentParser(prog="rummy")
    add_serve_parser(parser.add_subparsers())
    args = parser.parse_args(["serve", "--max-streams-per-game", "3",
                              "--max-streams-per-client", "4", "--max-streams", "5"])
    assert (args.max_streams_per_game, args.max_streams_per_client, args.max_streams) == \
        (3, 4, 5)
    defaults = parser.parse_args(["serve"])
    assert (defaults.max_streams_per_game, defaults.max_streams_per_client,
            defaults.max_streams) == (256, 512, 10_000)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--max-streams", "0"])
    assert "must be > 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--help"])
    helped = " ".join(capsys.readouterr().out.split())
    for flag, default in (("--max-streams-per-game", "256"),
                          ("--max-streams-per-client", "512"), ("--max-streams", "10000")):
        assert flag in helped and f"(default {default})" in helped


async def test_a_client_is_its_token_else_its_host() -> None:
    from rummy_grpc.limits import StreamLimits, client_key
    assert client_key("", "ipv4:10.0.0.7:53211") == "host:10.0.0.7"
    assert client_key("", "ipv6:[2001:db8::1]:443") == "host:2001:db8::1"
    assert client_key("", "unix:/tmp/s") == "host:unix:/tmp/s"
    assert client_key("secret", "ipv4:10.0.0.7:1").startswith("token:")
    assert "secret" not in client_key("secret", "ipv4:10.0.0.7:1")
    with pytest.raises(ValueError, match="per_game must be an integer > 0"):
        StreamLimits(per_game=0)
