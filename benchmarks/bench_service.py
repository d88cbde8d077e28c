"""Game-service benchmarks (issue 4): commands per second and command latency through the
real gRPC server over the local Redis event store, plus replay time of a long game.

The server runs as its own process (``python -m rummy_grpc serve``, as deployed); this
process is the clients. Each concurrency level plays that many two-seat games at once, every
seat driven by the ``basic`` bot on what ``GetView`` returns; only the commands (Draw, Pass,
Meld, Knock, EndTurn, each with ``expected_version``) are timed. Printed beside them, the
floors measured in the same run: one ``GetView`` round trip (gRPC + a store read) and one
bare event-store append (the Lua script on Redis, no gRPC).

Replay: a long game (bots, high target score) is written to the store, then loaded cold
(read every event from Redis + evolve), and evolved alone from decoded events.

Usage: python benchmarks/bench_service.py [--quick] [--redis-url URL]
Keys live under a fresh ``bench-<hex>`` prefix, deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

import grpc  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
import rummy_grpc  # noqa: E402,F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb  # noqa: E402
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402
from rummy_grpc.app import GameApp  # noqa: E402
from rummy_grpc.convert import view_from_proto  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402

from rummy.bots import make_bot  # noqa: E402
from rummy.commands import CreateGame, Draw, EndTurn, Knock, Meld, Pass  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.events import from_dict, to_dict  # noqa: E402
from rummy.evolve import replay  # noqa: E402
from rummy.melds import format_table  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.state import GAME_OVER  # noqa: E402
from rummy.views import view  # noqa: E402


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (0..100) of ``xs`` (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


async def _send(stub: pb_grpc.GameServiceStub, gid: str, token: str, cmd, version: int):
    opts = pb.CommandOptions(expected_version=version)
    if isinstance(cmd, Draw):
        return await stub.Draw(pb.DrawRequest(game_id=gid, token=token, options=opts))
    if isinstance(cmd, Pass):
        return await stub.Pass(pb.PassRequest(game_id=gid, token=token, options=opts))
    if isinstance(cmd, Meld):
        return await stub.Meld(pb.MeldRequest(
            game_id=gid, token=token, options=opts,
            table=[pb.Cards(cards=m) for m in format_table(cmd.table)]))
    if isinstance(cmd, Knock):
        return await stub.Knock(pb.KnockRequest(game_id=gid, token=token, options=opts))
    if isinstance(cmd, EndTurn):
        return await stub.EndTurn(pb.EndTurnRequest(game_id=gid, token=token, options=opts))
    raise TypeError(cmd)


ADMIN_TOKEN = "bench-admin-token"
"""The benchmark server's admin token: it lets the benchmark choose seeds (reproducible
games) for games with human seats."""


async def play_game(stub, seed: int, stop_at: float, latencies: list[float],
                    view_rtts: list[float]) -> int:
    """Play one two-seat game until it ends or ``stop_at`` (monotonic); returns commands."""
    created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2, seed=seed))
    tokens = {t.seat: t.token for t in created.tokens}
    agents = {s: make_bot("basic", seed + s) for s in tokens}
    gid, n, turn = created.game_id, 0, None
    v0 = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[0]))).view
    turn = v0.turn
    while time.monotonic() < stop_at:
        t0 = time.perf_counter()
        v = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[turn]))).view
        view_rtts.append(time.perf_counter() - t0)
        if v.phase == pb.PHASE_GAME_OVER:
            break
        cmd = agents[turn].act(view_from_proto(v))
        t0 = time.perf_counter()
        reply = await _send(stub, gid, tokens[turn], cmd, v.version)
        latencies.append(time.perf_counter() - t0)
        n += 1
        turn = reply.result.view.turn
    return n


async def level(port: int, games: int, seconds: float) -> dict[str, float]:
    """Run ``games`` concurrent games for about ``seconds``; returns the figures."""
    latencies: list[float] = []
    rtts: list[float] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.GameServiceStub(channel)
        start = time.monotonic()
        stop_at = start + seconds
        total = 0
        seed = 0
        while time.monotonic() < stop_at:  # start new games as games end
            counts = await asyncio.gather(*(play_game(stub, seed + i, stop_at, latencies, rtts)
                                            for i in range(games)))
            total += sum(counts)
            seed += games
        wall = time.monotonic() - start
    return {"games": games, "commands": total, "cps": total / wall,
            "p50_ms": pct(latencies, 50) * 1e3, "p99_ms": pct(latencies, 99) * 1e3,
            "view_p50_ms": pct(rtts, 50) * 1e3}


async def append_floor(store: RedisEventStore, n: int) -> tuple[float, float]:
    """p50 and p99 (ms) of one bare one-event append to the store."""
    gid = f"floor-{uuid.uuid4().hex}"
    times = []
    event = {"type": "Passed", "v": 1, "seat": 0}
    for i in range(n):
        t0 = time.perf_counter()
        await store.append(gid, [event], i, request_id=f"r{i}", request_hash="h")
        times.append(time.perf_counter() - t0)
    return pct(times, 50) * 1e3, pct(times, 99) * 1e3


def long_game(target: int) -> list:
    """Events of one 4-seat bot game played to ``target`` points."""
    rules = RuleSet(target_score=target)
    state, events = step(None, CreateGame(4, 12345, rules, ("basic",) * 4))
    bots = [make_bot("basic", i) for i in range(4)]
    log = list(events)
    while state.phase != GAME_OVER:
        state, events = step(state, bots[state.turn].act(view(state, state.turn)))
        log.extend(events)
    return log


async def replay_figures(store: RedisEventStore, target: int) -> dict[str, float]:
    events = long_game(target)
    gid = f"long-{uuid.uuid4().hex}"
    dicts = [to_dict(e) for e in events]
    for i in range(0, len(dicts), 500):
        await store.append(gid, dicts[i:i + 500], i)
    await store.put_meta(gid, {"seats": [], "tokens": {}, "players": 4, "hand_size": 10})
    cold = []
    for _ in range(5):
        app = GameApp(store)  # empty cache: read every event and evolve
        t0 = time.perf_counter()
        state, _ = await app._load(gid)  # noqa: SLF001 - the cold load path itself
        cold.append(time.perf_counter() - t0)
        assert state.version == len(events)
    decoded = [from_dict(d) for d in dicts]
    fold = []
    for _ in range(5):
        t0 = time.perf_counter()
        replay(decoded)
        fold.append(time.perf_counter() - t0)
    return {"events": len(events), "cold_ms": statistics.median(cold) * 1e3,
            "fold_ms": statistics.median(fold) * 1e3}


async def main_async(args: argparse.Namespace) -> None:
    prefix = f"bench-{uuid.uuid4().hex[:10]}"
    store = RedisEventStore.from_url(args.redis_url, prefix=prefix)
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
                   RUMMY_LOG_LEVEL="WARNING", RUMMY_ADMIN_TOKEN=ADMIN_TOKEN)
        server = subprocess.Popen(
            [sys.executable, "-m", "rummy_grpc", "serve", "--redis-url", args.redis_url,
             "--prefix", prefix, "--host", "127.0.0.1", "--port", "0",
             "--port-file", str(port_file)], env=env, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start")
                await asyncio.sleep(0.05)
            port = int(port_file.read_text())
            seconds = 3.0 if args.quick else 10.0
            print(f"gRPC GameService over Redis ({args.redis_url}), server in its own process, "
                  f"{seconds:.0f} s per level, two-seat games, basic bots on GetView")
            print(f"{'games':>6} {'commands':>9} {'cmd/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
                  f"{'GetView p50 ms':>15}")
            for games in (1, 10, 100):
                r = await level(port, games, seconds)
                print(f"{games:>6} {r['commands']:>9.0f} {r['cps']:>8.0f} {r['p50_ms']:>8.2f} "
                      f"{r['p99_ms']:>8.2f} {r['view_p50_ms']:>15.2f}")
        finally:
            server.terminate()
            server.wait(20)
        p50, p99 = await append_floor(store, 300 if args.quick else 2000)
        print(f"floor: one bare event-store append (Lua on Redis, no gRPC): p50 {p50:.2f} ms, "
              f"p99 {p99:.2f} ms")
        rep = await replay_figures(store, 300 if args.quick else 1000)
        print(f"replay of a long game ({rep['events']} events, 4 basic bots): cold load from "
              f"Redis + evolve {rep['cold_ms']:.1f} ms; evolve alone {rep['fold_ms']:.1f} ms "
              f"({rep['events'] / rep['fold_ms'] * 1e3:,.0f} events/s)")
    await store.close()
    client = aioredis.Redis.from_url(args.redis_url)
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


def main() -> None:
    """Parse arguments and run every benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s per level, shorter replay")
    parser.add_argument("--redis-url", default=os.environ.get("RUMMY_TEST_REDIS_URL",
                                                              "redis://127.0.0.1:6379/0"))
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
