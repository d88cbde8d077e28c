"""Game-service benchmark: what a client sees, against the gRPC floor.

Every figure is printed beside its reference, measured in the same run, interleaved and
repeated (the median of the rounds is printed; these machines are noisy):

* **Whole cycles.** Each concurrent game replays a two-seat game of the ``basic`` bot decided
  beforehand with the core (:func:`script`; the server deals the same game from its seed),
  so the clients spend no time thinking: one cycle is ``GetView`` then the command (Draw,
  Pass, Meld, Knock, EndTurn with ``expected_version`` and ``omit_view``), timed together
  from the client, as a client waits for them. The server's calls/s count both calls.
  Levels: 10 and 100 games at once, against one server process, against
  ``rummy serve --processes 2`` (SO_REUSEPORT), against one process with ``--no-batch``
  (every Redis command its own round trip: the gain of ``rummy_store.batching``), against
  one process with ``--uvloop`` beside the echo server on uvloop, and against one process
  over the embedded memory store (``--store memory``, no Redis: what the Redis round trips
  cost the server, by difference).
* **The echo floor** (the anchor): a bare ``grpc.aio`` server in its own process answering a
  unary call with a 600-byte payload (about a view), driven by the same client code with
  the same number of calls per cycle and the same channels. Ratio = our calls/s / echo's.
* **The store floor**: one raw ``XADD`` of an event (redis-py, no Lua, no request record)
  against one ``EventStore.append`` of the same event.
* **Server CPU per call**: the CPU seconds the server's processes used (``/proc``, the whole
  process tree for ``--processes 2``) divided by the calls they served, for the echo server
  and for ours in the same rounds. Its inverse is what **one server process** can serve on
  one core whatever the client costs: the per-process comparison with the echo floor. (The
  clients run in this process on the same 2-core machine, so at full load the calls/s of
  the echo rows are mostly the client's limit, not the echo server's.)
* **Paced games**: 100 games whose clients think between cycles (exponential, mean
  ``--think`` seconds, 0.25 s by default, seeded), the client-observed cycle latency at a
  load below saturation, for the echo server and ours.
  For our single process it also prints where one call's time goes on the server:
  the quantiles of ``rummy_grpc_server_handling_seconds`` over the paced rounds (scraped
  from its ``/metrics`` before and after each round; bucket bounds), so a cycle's tail can be
  split into the server's handling and the rest (transport, the client, the scheduler).
* **Polling clients**: 10 games whose waiting seat calls ``GetView`` 3 times after each
  command (clients polling for their turn); reads outnumber appends, which is where
  ``rummy serve --read-feed`` (``GetView`` from memory, ``rummy_store.feed``) pays: one
  process with it is measured beside one without.
* **Storage**: Redis ``MEMORY USAGE`` of every key of the games played, per event, beside the
  stored event text's own size (games cut off by the run; ``bench_storage.py`` measures
  whole games).

Usage: python benchmarks/bench_service.py [--quick] [--redis-url URL] [--rounds N]
Keys live under a fresh ``bench-<hex>`` prefix, deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

import grpc  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
import rummy_grpc  # noqa: E402,F401 - generates rummy_api when missing
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from rummy_api.v1 import game_service_pb2 as pb  # noqa: E402
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402
from rummy_grpc.processes import wait_port_file  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402

from rummy.bots import make_bot  # noqa: E402
from rummy.commands import CreateGame, Draw, EndTurn, Knock, Meld, Pass  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.melds import format_table  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.state import GAME_OVER  # noqa: E402
from rummy.views import view  # noqa: E402

ECHO_SERVER = r'''
import asyncio, sys, grpc
PAYLOAD = b"x" * 600
async def echo(request, context):
    return PAYLOAD
async def main():
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.unary_unary_rpc_method_handler(echo)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
(__import__("uvloop").run if sys.argv[1:] == ["uvloop"] else asyncio.run)(main())
'''
CHANNELS = 8
"""Client channels (HTTP/2 connections) per level, games spread over them round-robin."""
SCRIPTS = 120
"""Games decided beforehand (:func:`script`), replayed round-robin by the clients."""
ADMIN = "bench-admin-token"
"""The servers' admin token: a chosen seed with human seats needs it."""
COMMANDS = {"Draw", "Pass", "Meld", "Knock", "EndTurn"}
"""The command methods of ``GameService`` that the scripted games call."""


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (0..100) of ``xs`` (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


async def _send(stub: Any, gid: str, token: str, cmd: Any, version: int) -> Any:
    opts = pb.CommandOptions(expected_version=version, omit_view=True)
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


def script(seed: int) -> list[tuple[int, int, Any]]:
    """A whole two-seat game of the ``basic`` bot decided with the core beforehand:
    ``[(version, seat, command), ...]`` (the server deals the same game from the seed), so
    the clients spend no time thinking while they are timed."""
    agents = {s: make_bot("basic", seed * 8 + s) for s in (0, 1)}
    state, _ = step(None, CreateGame(2, seed, RuleSet(), ("p0", "p1")))
    out = []
    while state.phase != GAME_OVER:
        seat = state.turn
        cmd = agents[seat].act(view(state, seat))
        out.append((state.version, seat, cmd))
        state, _ = step(state, cmd)
    return out


async def play(stub: Any, scripts: list[tuple[int, list[tuple[int, int, Any]]]],
               first: int, stop_at: float, cycles: list[float], think: float = 0.0,
               polls: int = 0) -> int:
    """Play scripted two-seat games (one after another, from ``scripts[first]`` on) until
    ``stop_at``; returns the calls made. ``think``: mean seconds (exponential) the client
    waits before each cycle (0: none); ``polls``: ``GetView`` calls of the waiting seat after
    each command (a client polling for its turn), inside the cycle."""
    calls = 0
    rng = random.Random(first)
    n = first
    while time.monotonic() < stop_at:
        seed, moves = scripts[n % len(scripts)]
        n += 1
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=f"p{i}") for i in (0, 1)],
            seed=seed, admin_token=ADMIN))
        calls += 1
        tokens = {t.seat: t.token for t in created.tokens}
        gid = created.game_id
        for version, seat, cmd in moves:
            if time.monotonic() >= stop_at:
                break
            if think:
                await asyncio.sleep(rng.expovariate(1 / think))
            t0 = time.perf_counter()
            v = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[seat]))).view
            waited = time.perf_counter() - t0
            calls += 1
            if v.version != version:
                raise SystemExit(f"game {gid} (seed {seed}) is at version {v.version}, the "
                                 f"script at {version}: the server dealt another game")
            t0 = time.perf_counter()
            await _send(stub, gid, tokens[seat], cmd, version)
            for _ in range(polls):
                await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[1 - seat]))
            calls += 1 + polls
            cycles.append(waited + time.perf_counter() - t0)
    return calls


async def echo_play(call: Any, stop_at: float, cycles: list[float], seed: int = 0,
                    think: float = 0.0, polls: int = 0) -> int:
    """The echo reference: ``2 + polls`` unary calls per cycle, as ``play`` makes."""
    calls = 0
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        if think:
            await asyncio.sleep(rng.expovariate(1 / think))
        t0 = time.perf_counter()
        await call(b"g" * 60)
        await call(b"c" * 80)
        for _ in range(polls):
            await call(b"g" * 60)
        calls += 2 + polls
        cycles.append(time.perf_counter() - t0)
    return calls


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


async def level(port: int, games: int, seconds: float, echo: bool, pid: int,
                think: float = 0.0,
                scripts: list[tuple[int, list[tuple[int, int, Any]]]] | None = None,
                polls: int = 0) -> dict[str, float]:
    """``games`` concurrent clients for ``seconds`` against ``port`` (server process ``pid``);
    calls/s, the client-observed cycle latency (ms) and the server's CPU per call (us)."""
    cycles: list[float] = []
    scripts = scripts or []
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(CHANNELS)]
    try:
        stop_at = time.monotonic() + seconds
        cpu0 = tree_cpu(pid)
        t0 = time.monotonic()
        if echo:
            calls = [ch.unary_unary("/bench.Echo/Echo") for ch in channels]
            counts = await asyncio.gather(*(echo_play(calls[i % CHANNELS], stop_at, cycles,
                                                      i, think, polls)
                                            for i in range(games)))
        else:
            stubs = [pb_grpc.GameServiceStub(ch) for ch in channels]
            counts = await asyncio.gather(*(play(stubs[i % CHANNELS], scripts, i, stop_at,
                                                 cycles, think, polls)
                                            for i in range(games)))
        wall = time.monotonic() - t0
        cpu = tree_cpu(pid) - cpu0
    finally:
        for ch in channels:
            await ch.close()
    return {"cps": sum(counts) / wall, "p50": pct(cycles, 50) * 1e3,
            "p99": pct(cycles, 99) * 1e3, "cpu_us": cpu / max(sum(counts), 1) * 1e6}


GET_VIEW = "/rummy_api.v1.GameService/GetView"
ECHO = "/bench.Echo/Echo"


def grpc_frame(message: bytes) -> bytes:
    """``message`` as the body of a unary gRPC request (uncompressed length-prefixed)."""
    return b"\x00" + struct.pack(">I", len(message)) + message


async def view_request(port: int) -> bytes:
    """A new two-seat game on the server at ``port`` and the framed ``GetView`` request of
    its seat 0, checked to be answered through a raw channel (h2load sees only HTTP
    statuses, not the gRPC status in the trailers)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        created = await pb_grpc.GameServiceStub(ch).CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=f"p{i}") for i in (0, 1)],
            seed=1, admin_token=ADMIN))
        message = pb.GetViewRequest(game_id=created.game_id,
                                    token=created.tokens[0].token).SerializeToString()
        raw = ch.unary_unary(GET_VIEW)
        reply = pb.GetViewResponse.FromString(await raw(message))
        assert reply.view.version == created.version, "GetView of the new game failed"
    return grpc_frame(message)


def h2load(port: int, pid: int, path: str, body: Path, seconds: float, *, clients: int,
           streams: int, rps: int = 0, log: Path | None = None) -> dict[str, float]:
    """Unary calls of ``path`` with the framed request ``body`` from h2load (nghttp2's C
    HTTP/2 load generator: a client that costs a fraction of a core, so the server
    processes get the machine's cores) for ``seconds``: ``clients`` connections with
    ``streams`` calls in flight each, or ``rps`` calls per second each when given (a paced
    load at h2load's fixed rate per connection, the connections opened about a
    millisecond apart; smoother than the exponential think times of :func:`play`).
    Returns calls/s, the server's CPU per call (us) and, with ``log``, the p50 and p99 call
    latency (ms) from h2load's per-request log.

    Raises:
        SystemExit: h2load failed, or a call did not get a 2xx answer.
    """
    cmd = ["h2load", "-c", str(clients), "-m", str(streams),
           "-H", "content-type: application/grpc", "-H", "te: trailers", "-d", str(body)]
    if rps:
        # the connections open one by one, spread over a period of the rate, so that the
        # clients' fixed-rate timers do not fire together (h2load's -r; it needs -n)
        spread = max(1, round(1000 / (rps * clients)))
        cmd += ["--rps", str(rps), "-n", str(round(clients * rps * seconds)), "-r", "1",
                "--rate-period", f"{spread}ms"]
    else:
        cmd += ["-D", f"{seconds:g}"]
    if log is not None:
        cmd += ["--log-file", str(log)]
    cpu0 = tree_cpu(pid)
    done = subprocess.run([*cmd, f"http://127.0.0.1:{port}{path}"], capture_output=True,
                          text=True, timeout=seconds + 60)
    cpu = tree_cpu(pid) - cpu0
    out = done.stdout
    try:
        finished = out.split("finished in ", 1)[1]
        calls = int(out.split(" succeeded", 1)[0].rsplit(" ", 1)[1])
        total = int(out.split("requests: ", 1)[1].split(" total", 1)[0])
        secs = float(finished.split("s,", 1)[0])
    except (IndexError, ValueError):
        raise SystemExit(f"h2load failed: {done.stderr or out}") from None
    failed = total - calls
    if done.returncode or failed > total * 0.001:
        raise SystemExit(f"h2load: {failed} of {total} calls failed: {out[-400:]}")
    got = {"cps": calls / secs, "cpu_us": cpu / max(calls, 1) * 1e6}
    if log is not None:
        latencies = [int(line.split("\t")[2]) / 1e3 for line in log.read_text().splitlines()
                     if line.count("\t") >= 2 and line.split("\t")[1].startswith("2")]
        got["p50"], got["p99"] = pct(latencies, 50), pct(latencies, 99)
    return got


def h2load_levels(pids: dict[str, int], ports: dict[str, int], bodies: dict[str, Path],
                  tmp: Path, rounds: int, seconds: float) -> dict[str, dict[str, float]]:
    """The process model and the paced latency without the Python client's cost: h2load
    calls ``GetView`` of one game on our servers (``one``, ``two``) and the echo method on
    the echo server, interleaved in ``rounds``; prints the table and returns the medians by
    ``"<server>"`` (saturated: 32 connections x 8 calls in flight) and
    ``"<server> paced"`` (100 connections x 7 calls/s, ~700 calls/s as the paced games)."""
    got: dict[str, list[dict[str, float]]] = {}
    for _ in range(rounds):
        for key in ("echo", "one", "two"):
            path = ECHO if key == "echo" else GET_VIEW
            got.setdefault(key, []).append(h2load(ports[key], pids[key], path, bodies[key],
                                                  seconds, clients=32, streams=8))
            got.setdefault(f"{key} paced", []).append(h2load(
                ports[key], pids[key], path, bodies[key], seconds, clients=100, streams=1,
                rps=7, log=tmp / f"h2load-{key}.log"))
    med = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in got.items()}
    names = {"echo": "echo (anchor)", "one": "rummy, 1 process", "two": "rummy, 2 processes"}
    print(f"h2load (C client), GetView of one game over Redis; echo method on the echo server; "
          f"{rounds} interleaved round(s) of {seconds:.0f} s, medians:")
    print(f"{'load':>22} {'server':<20} {'calls/s':>8} {'vs echo':>8} {'server CPU/call':>16} "
          f"{'vs echo':>8} {'call p50':>9} {'call p99':>9}")
    for load, suffix in (("saturated (32x8)", ""), ("paced (100 x 7/s)", " paced")):
        e = med[f"echo{suffix}"]
        for key in ("echo", "one", "two"):
            m = med[f"{key}{suffix}"]
            lat = (f"{m['p50']:>7.2f}ms {m['p99']:>7.2f}ms" if "p99" in m else "")
            print(f"{load:>22} {names[key]:<20} {m['cps']:>8.0f} {m['cps'] / e['cps']:>7.2f}x "
                  f"{m['cpu_us']:>13.0f} us {e['cpu_us'] / m['cpu_us']:>7.2f}x {lat}")
    print(f"{'':>5} 2 processes / 1 process under h2load: "
          f"{med['two']['cps'] / med['one']['cps']:.2f}x calls/s")
    return med


def start_server(args: argparse.Namespace, prefix: str, processes: int,
                 tmp: Path, *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """``rummy serve`` over the bench Redis (unless ``extra`` names a ``--store``) with
    ``processes`` processes and the options ``extra``; (process, port)."""
    port_file = tmp / f"port-{processes}{''.join(extra)}"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_LOG_LEVEL="WARNING", RUMMY_ADMIN_TOKEN=ADMIN)
    store = [] if "--store" in extra else ["--redis-url", args.redis_url]
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy_grpc", "serve", *store,
         "--prefix", prefix, "--host", "127.0.0.1", "--port", "0", "--processes",
         str(processes), "--port-file", str(port_file),
         # one client process makes every call: no per-caller rate limit in the way
         "--rate-commands", "0", "--rate-create", "0", *extra], env=env,
        stdout=subprocess.DEVNULL)
    try:
        return proc, wait_port_file(port_file, proc)
    except (ChildProcessError, TimeoutError) as e:
        raise SystemExit(f"the server did not start: {e}") from None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a server's ``--metrics-port``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


Buckets = dict[str, dict[float, float]]
"""``{method: {bucket upper bound (s): cumulative count}}`` of a histogram."""


def handling_buckets(metrics_port: int) -> Buckets:
    """The server's ``rummy_grpc_server_handling_seconds`` buckets by method, read from its
    Prometheus endpoint (prometheus-client's own text parser)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: Buckets = {}
    for family in text_string_to_metric_families(text):
        if family.name != "rummy_grpc_server_handling_seconds":
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                method = sample.labels["method"].rsplit("/", 1)[-1]
                out.setdefault(method, {})[float(sample.labels["le"])] = sample.value
    return out


def bucket_quantile(before: Buckets, after: Buckets, methods: set[str],
                    q: float) -> tuple[float, int]:
    """The ``q`` (0..1) quantile of the calls of ``methods`` handled between two scrapes, as
    the upper bound of its bucket in seconds (NaN when none was), and the calls counted."""
    counts: dict[float, float] = {}
    for method, buckets in after.items():
        if method not in methods:
            continue
        for le, n in buckets.items():
            counts[le] = counts.get(le, 0.0) + n - before.get(method, {}).get(le, 0.0)
    total = counts.get(float("inf"), 0.0)
    if not total:
        return float("nan"), 0
    return next(le for le in sorted(counts) if counts[le] >= q * total), int(total)


async def store_floor(store: RedisEventStore, client: aioredis.Redis,
                      n: int) -> tuple[float, float]:
    """Appends/s through ``EventStore.append`` and raw XADDs/s of the same event."""
    event = {"type": "Passed", "v": 1, "seat": 0}
    gid = f"floor-{uuid.uuid4().hex}"
    t0 = time.perf_counter()
    for i in range(n):
        await store.append(gid, [event], i)
    ours = n / (time.perf_counter() - t0)
    key = f"{store.prefix}:raw-{uuid.uuid4().hex}"
    text = json.dumps(event)
    t0 = time.perf_counter()
    for _ in range(n):
        await client.xadd(key, {"type": "Passed", "data": text})
    raw = n / (time.perf_counter() - t0)
    return ours, raw


async def round_trip_floor(client: aioredis.Redis, key: str, n: int) -> tuple[float, float]:
    """CPU microseconds of one ``XRANGE`` round trip (an empty reply, as most reads of a
    game's new events) through redis-py's asyncio client, and through a bare asyncio
    protocol with hiredis's packer and reader (the floor of any asyncio Redis client on
    this loop: a socket write, a wake-up, a parse). Sequential, alternating in 4 rounds."""
    import hiredis

    class Bare(asyncio.Protocol):
        def __init__(self) -> None:
            self.reader = hiredis.Reader()
            self.waiter: asyncio.Future[Any] | None = None

        def connection_made(self, transport: Any) -> None:
            self.transport = transport

        def data_received(self, data: bytes) -> None:
            self.reader.feed(data)
            reply = self.reader.gets()
            if reply is not False and self.waiter is not None:
                self.waiter.set_result(reply)

    kwargs = client.connection_pool.connection_kwargs
    loop = asyncio.get_running_loop()
    transport, bare = await loop.create_connection(Bare, kwargs.get("host", "127.0.0.1"),
                                                   kwargs.get("port", 6379))
    packed = hiredis.pack_command(("XRANGE", key, "(0-1", "+"))
    ours: list[float] = []
    floor: list[float] = []
    try:
        for _ in range(4):
            t0 = time.process_time()
            for _ in range(n):
                await client.execute_command("XRANGE", key, "(0-1", "+")
            ours.append((time.process_time() - t0) / n * 1e6)
            t0 = time.process_time()
            for _ in range(n):
                bare.waiter = loop.create_future()
                transport.write(packed)
                await bare.waiter
            floor.append((time.process_time() - t0) / n * 1e6)
    finally:
        transport.close()
    return statistics.median(ours), statistics.median(floor)


async def storage(client: aioredis.Redis, prefix: str) -> tuple[float, float, int]:
    """Bytes of Redis memory per event over every game of ``prefix`` (every key of a game:
    events, request-record buckets, meta, snapshots), the mean stored event text, and the
    events counted (``benchmarks/bench_storage.py`` measures whole games)."""
    games: dict[str, list[bytes]] = {}
    async for key in client.scan_iter(match=f"{prefix}:{{*", count=1000):
        games.setdefault(key.decode().split("{", 1)[1].split("}", 1)[0], []).append(key)
    memory = events = text_bytes = 0
    for g, keys in games.items():
        n = await client.xlen(f"{prefix}:{{{g}}}:events")
        if not n:
            continue
        events += n
        for key in keys:
            memory += await client.memory_usage(key) or 0
        for _, fields in await client.xrange(f"{prefix}:{{{g}}}:events", count=50):
            text_bytes += len(fields[b"data"]) * n / min(n, 50)
    return memory / max(events, 1), text_bytes / max(events, 1), events


def print_targets(summary: dict[str, dict[str, dict[str, float]]], think: float,
                  h2: dict[str, dict[str, float]] | None = None) -> None:
    """The service targets, each beside its measured figure and anchor:
    ``summary[level][server]`` holds the medians of :func:`level` (levels ``"10"``,
    ``"100"``, ``"paced"``), ``h2`` those of :func:`h2load_levels` (empty or ``None``:
    h2load was not run)."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print("targets:")
    for games in ("10", "100"):
        m = summary[games]
        ratio = m["echo"]["cpu_us"] / m["one"]["cpu_us"]
        print(f"  per process, calls per CPU-second >= 0.6x echo at {games:>3} games: "
              f"{ratio:.2f}x ({m['one']['cpu_us']:.0f} us/call, echo "
              f"{m['echo']['cpu_us']:.0f}) {verdict(ratio >= 0.6)}")
    closed, paced = summary["100"], summary["paced"]
    print(f"  p99 <= 10 ms at 100 games, closed loop: {closed['one']['p99']:.1f} ms (echo "
          f"{closed['echo']['p99']:.1f} ms: Little's law, 100 games x 2 calls / calls/s) "
          f"{verdict(closed['one']['p99'] <= 10)}")
    print(f"  p99 <= 10 ms at 100 games, paced ({think:g} s think): {paced['one']['p99']:.1f} "
          f"ms (echo {paced['echo']['p99']:.1f} ms) {verdict(paced['one']['p99'] <= 10)}")
    if h2:
        echo_p99, one_p99 = h2["echo paced"]["p99"], h2["one paced"]["p99"]
        print(f"  p99 <= 10 ms at 100 clients, paced (h2load, 100 x 7 GetView/s): "
              f"{one_p99:.1f} ms (echo {echo_p99:.1f} ms) {verdict(one_p99 <= 10)}")
        ratio = h2["echo"]["cpu_us"] / h2["one"]["cpu_us"]
        print(f"  per process, calls per CPU-second >= 0.6x echo under h2load (GetView): "
              f"{ratio:.2f}x ({h2['one']['cpu_us']:.0f} us/call, echo "
              f"{h2['echo']['cpu_us']:.0f}) {verdict(ratio >= 0.6)}")
    scale = closed["two"]["cps"] / closed["one"]["cps"]
    print(f"  2 processes >= 1.7x one at 100 games: {scale:.2f}x calls/s "
          f"{verdict(scale >= 1.7)} (on {os.cpu_count()} cores shared with the Python client "
          f"and Redis)")
    if h2:
        scale = h2["two"]["cps"] / h2["one"]["cps"]
        print(f"  2 processes >= 1.7x one under h2load (a C client, GetView): {scale:.2f}x "
              f"calls/s {verdict(scale >= 1.7)} (on {os.cpu_count()} cores shared with "
              f"h2load and Redis)")


async def main_async(args: argparse.Namespace) -> None:
    prefix = f"bench-{uuid.uuid4().hex[:10]}"
    seconds = 3.0 if args.quick else 6.0
    rounds = args.rounds or (1 if args.quick else 3)
    store = RedisEventStore.from_url(args.redis_url, prefix=prefix)
    client = aioredis.Redis.from_url(args.redis_url)
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        try:
            scripts = [(seed, script(seed)) for seed in range(1, SCRIPTS + 1)]
            echo = subprocess.Popen([sys.executable, "-c", ECHO_SERVER],
                                    stdout=subprocess.PIPE)
            procs.append(echo)
            assert echo.stdout is not None
            echo_port = int(echo.stdout.readline())
            one_metrics = free_port()
            one, one_port = start_server(args, prefix, 1, tmp, "--metrics-port",
                                         str(one_metrics))
            two, two_port = start_server(args, prefix, 2, tmp)
            feed, feed_port = start_server(args, prefix, 1, tmp, "--read-feed")
            single, single_port = start_server(args, prefix, 1, tmp, "--no-batch")
            uv, uv_port = start_server(args, prefix, 1, tmp, "--uvloop")
            mem, mem_port = start_server(args, prefix, 1, tmp, "--store", "memory")
            echo_uv = subprocess.Popen([sys.executable, "-c", ECHO_SERVER, "uvloop"],
                                       stdout=subprocess.PIPE)
            assert echo_uv.stdout is not None
            echo_uv_port = int(echo_uv.stdout.readline())
            procs += [one, two, feed, single, uv, echo_uv, mem]
            print(f"gRPC GameService over Redis, servers in their own processes; {rounds} "
                  f"interleaved round(s) of {seconds:.0f} s per configuration; {CHANNELS} "
                  f"channels; median of the rounds; load average before: "
                  f"{os.getloadavg()[0]:.2f}")
            print(f"{'games':>5} {'server':<22} {'calls/s':>8} {'cycle p50':>10} "
                  f"{'cycle p99':>10} {'vs echo':>8} {'server CPU/call':>16} "
                  f"{'calls/CPU-s':>12} {'vs echo':>8}")
            pids = {"echo": echo.pid, "one": one.pid, "two": two.pid, "feed": feed.pid,
                    "single": single.pid, "uv": uv.pid, "echo_uv": echo_uv.pid,
                    "mem": mem.pid}
            ports = {"echo": echo_port, "one": one_port, "two": two_port, "feed": feed_port,
                     "single": single_port, "uv": uv_port, "echo_uv": echo_uv_port,
                     "mem": mem_port}
            names = {"echo": "echo (anchor)", "one": "rummy, 1 process",
                     "two": "rummy, 2 processes", "feed": "rummy, 1, --read-feed",
                     "single": "rummy, 1, --no-batch", "echo_uv": "echo on uvloop",
                     "uv": "rummy, 1, --uvloop", "mem": "rummy, 1, memory store"}
            summary: dict[str, dict[str, dict[str, float]]] = {}
            levels = ((10, 0.0, 0, "10"), (100, 0.0, 0, "100"),
                      (100, args.think, 0, f"100 paced ({args.think:g} s think)"),
                      (10, 0.0, 3, "10 polling (the waiting seat calls GetView 3 times "
                       "after each command)"))
            for games, think, polls, name in levels:
                # the append feed pays where reads outnumber appends: the polling level
                keys = (("echo", "one", "feed") if polls else
                        ("echo", "one", "mem", "single", "two", "echo_uv", "uv") if not think
                        else
                        ("echo", "one", "two"))
                labels = [(k, names[k]) for k in keys]
                got: dict[str, list[dict[str, float]]] = {k: [] for k in keys}
                handled: list[tuple[Buckets, Buckets]] = []  # "one", paced rounds
                for _ in range(rounds):
                    for key, _label in labels:
                        watch = key == "one" and bool(think)
                        before = handling_buckets(one_metrics) if watch else {}
                        got[key].append(await level(ports[key], games, seconds,
                                                    echo=key.startswith("echo"),
                                                    pid=pids[key],
                                                    think=think, scripts=scripts,
                                                    polls=polls))
                        if watch:
                            handled.append((before, handling_buckets(one_metrics)))
                med = {k: {f: statistics.median(r[f] for r in v) for f in v[0]}
                       for k, v in got.items()}
                summary["paced" if think else "polling" if polls else str(games)] = med
                if think or polls:
                    print(f"{name}:")
                for key, label in labels:
                    m, e = med[key], med["echo"]
                    print(f"{games:>5} {label:<22} {m['cps']:>8.0f} {m['p50']:>8.2f}ms "
                          f"{m['p99']:>8.2f}ms {m['cps'] / e['cps']:>7.2f}x "
                          f"{m['cpu_us']:>13.0f} us {1e6 / m['cpu_us']:>12,.0f} "
                          f"{e['cpu_us'] / m['cpu_us']:>7.2f}x")
                if "mem" in med:
                    one_us, mem_us = med["one"]["cpu_us"], med["mem"]["cpu_us"]
                    print(f"{'':>5} the store's share: over Redis {one_us:.0f} us per call, "
                          f"over the embedded memory store (no Redis) {mem_us:.0f} us "
                          f"({med['echo']['cpu_us'] / mem_us:.2f}x the echo's calls per "
                          f"CPU-second): the Redis round trips through redis-py cost "
                          f"{one_us - mem_us:.0f} us of the server's CPU per call")
                if "single" in med:
                    print(f"{'':>5} batching (rummy_store.batching) / --no-batch: "
                          f"{med['single']['cpu_us'] / med['one']['cpu_us']:.2f}x calls per "
                          f"CPU-second, {med['one']['cps'] / med['single']['cps']:.2f}x "
                          f"calls/s")
                if "uv" in med:
                    uv_echo = med["echo_uv"]["cpu_us"] / med["uv"]["cpu_us"]
                    print(f"{'':>5} on uvloop: ours / echo {uv_echo:.2f}x calls per "
                          f"CPU-second; ours on uvloop / ours on asyncio "
                          f"{med['one']['cpu_us'] / med['uv']['cpu_us']:.2f}x")
                if handled:
                    parts = []
                    for what, methods in (("GetView", {"GetView"}),
                                          ("a command", COMMANDS)):
                        qs = [max(bucket_quantile(b, a, methods, q)[0] for b, a in handled)
                              for q in (0.5, 0.99)]
                        parts.append(f"{what} p50 <= {qs[0] * 1e3:g} ms, p99 <= "
                                     f"{qs[1] * 1e3:g} ms")
                    print(f"{'':>5} rummy, 1 process, server side (handling of one call, "
                          f"bucket bounds, worst round): {'; '.join(parts)}; the rest of a "
                          f"cycle is the transport, the client and the scheduler")
                if not think and not polls:
                    scale = med["two"]["cps"] / med["one"]["cps"]
                    print(f"{'':>5} 2 processes / 1 process: {scale:.2f}x calls/s (the "
                          f"client and Redis share the 2 cores); server CPU per call "
                          f"{med['two']['cpu_us'] / med['one']['cpu_us']:.2f}x")
            h2: dict[str, dict[str, float]] = {}
            if shutil.which("h2load"):
                bodies = {"echo": tmp / "echo.bin", "one": tmp / "one.bin",
                          "two": tmp / "two.bin"}
                bodies["echo"].write_bytes(grpc_frame(b"g" * 60))
                for key in ("one", "two"):
                    bodies[key].write_bytes(await view_request(ports[key]))
                h2 = h2load_levels(pids, ports, bodies, tmp, rounds, seconds)
            else:
                print("h2load levels skipped: h2load is not installed (Debian's "
                      "nghttp2-client; make bench installs it)")
            print_targets(summary, args.think, h2)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(30)
        ours, raw = await store_floor(store, client, 500 if args.quick else 3000)
        print(f"store floor: EventStore.append {ours:,.0f}/s, raw XADD {raw:,.0f}/s "
              f"({ours / raw:.2f}x)")
        rt_key = f"{prefix}:rt"
        await client.xadd(rt_key, {"data": "x"}, id="0-1")
        redis_py, bare = await round_trip_floor(store.client, rt_key,
                                                500 if args.quick else 3000)
        print(f"one Redis round trip (XRANGE, sequential): redis-py {redis_py:.0f} us of "
              f"client CPU, a bare asyncio protocol with hiredis {bare:.0f} us "
              f"({redis_py / bare:.2f}x; the server pays one or two per cycle)")
        per_event, json_size, events = await storage(client, prefix)
        print(f"storage: {per_event:.0f} bytes of Redis memory per event over {events:,} "
              f"events (every key of each game, games cut off by the run), stored event "
              f"text {json_size:.0f} bytes")
    await store.close()
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
    for i in range(0, len(keys), 1000):
        await client.delete(*keys[i:i + 1000])
    await client.aclose()


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s per configuration, 1 round")
    parser.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default 3)")
    parser.add_argument("--think", type=float, default=0.25,
                        help="mean think time of the paced level, seconds (default 0.25)")
    parser.add_argument("--redis-url", default=os.environ.get("RUMMY_TEST_REDIS_URL",
                                                              "redis://127.0.0.1:6379/0"))
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
