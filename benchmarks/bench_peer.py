"""A served move against boardgame.io's: moves per server CPU-second, and move latency.

The reference is **boardgame.io 0.50.2** (pinned in ``benchmarks/peer/package-lock.json``):
its Node server (koa + socket.io, the library's in-memory storage, the lobby API, seat
credentials checked on every move) serving a small game with the same turn loop the Python
clients play on ``rummy serve`` (each phase's default move: draw, pass, draw, pass, draw; the
third draw ends the turn, R3.3; a stock that runs out is dealt again), hands and stock hidden
by ``playerView`` and the moves run on the server only (``benchmarks/peer/game.js``), driven
by boardgame.io's own client over socket.io in one Node process (``benchmarks/peer/load.js``):
every seat a client, every update pushed to both seats of the match, the seat to act moving
as soon as an update says so.

Measured against it, interleaved and repeated in the same run (median of the rounds):

* **rummy session**: ``rummy serve`` (one process) on the memory store and on Redis, each seat
  on its own ``GameService.Session`` stream (its commands and results on it, the opponent's
  events pushed to it: the socket.io pattern);
* **rummy unary**: the same servers, one client per game calling ``Draw`` / ``Pass`` /
  ``EndTurn`` for both seats (``expected_version``, ``omit_view``), nothing pushed;
* **rummy session, uv**: the same sessions on ``rummy serve --uvloop`` (libuv's event loop,
  as boardgame.io's Node server has);
* **echo**: a bare ``grpc.aio`` server answering a unary call, and a bidirectional stream
  echoing each message: what gRPC on asyncio costs per call, the floor of any Python design;
* **baseline** (``--baseline DIR``): ``rummy serve`` from another source tree (the code
  before a change), sessions on the memory store and on Redis, and the memory unary row; and
  its Redis sessions on ``--uvloop`` (``base_red_s_uv``, beside ``red_s_uv``).

Connections differ: the Python clients of a level share ``CHANNELS`` (8) HTTP/2 connections,
games spread over them round-robin and both seats of a game on the same one (a stream
each), so a move's result and the opponent's push leave on one connection; boardgame.io's
clients open one socket.io websocket per seat (20 seats at 10 games: about 37 established
connections on its server, ``ss``, the finished games' still closing), so its server
writes each update to as many sockets as seats it goes to.

The servers run with their per-caller command rate limit on (at a rate no client reaches: its
cost is counted) and the game's tokens checked on every move. A game is created (and, for
boardgame.io, joined) inside the measured window when the previous one ends.

Printed per level (10 and 100 games at once, closed loop): moves/s, **moves per server
CPU-second** (utime + stime of the server's process tree from ``/proc/<pid>/stat`` over the
window, divided into the moves completed in it) and its ratio to boardgame.io's; then move
latency p50/p99 at 100 paced games (exponential think time, mean ``--think`` s, before each
move) from the acting client: command sent -> its result (boardgame.io: move sent -> the
acting seat's update that contains it). Set-up is not timed: every client's first move must
have come back (its games created and joined, its connections open) before a second of
warm-up (not counted) and the measured window.

Usage: python benchmarks/bench_peer.py [--quick] [--rounds N] [--seconds S] [--think S]
         [--redis-url URL]
Needs node and npm (``npm ci`` is run in benchmarks/peer when node_modules is missing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "benchmarks" / "peer"
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

import grpc  # noqa: E402
import rummy_grpc  # noqa: E402,F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb  # noqa: E402
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402
from rummy_grpc.processes import wait_port_file  # noqa: E402

ECHO_SERVER = r'''
import asyncio, grpc
PAYLOAD = b"x" * 200
async def echo(request, context):
    return PAYLOAD
async def chat(request_iterator, context):
    while True:
        msg = await context.read()
        if msg is grpc.aio.EOF:
            return
        await context.write(PAYLOAD)
async def main():
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.unary_unary_rpc_method_handler(echo),
        "Chat": grpc.stream_stream_rpc_method_handler(chat)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
asyncio.run(main())
'''
CLK_TCK = os.sysconf("SC_CLK_TCK")
CHANNELS = 8
"""Client channels (HTTP/2 connections) per level, games spread over them round-robin."""
MOVES_PER_GAME = 627
"""Moves a client plays in one game before it starts another (a whole two-seat game of the
default moves, seed 7; boardgame.io's game ends there: ``MOVES_PER_GAME`` in game.js)."""
DRAW, MELD_OR_PASS, KNOCK_OR_END, WAIT = "draw", "meld_or_pass", "knock_or_end", "wait"
KIND = {DRAW: pb.SESSION_COMMAND_KIND_DRAW, MELD_OR_PASS: pb.SESSION_COMMAND_KIND_PASS,
        KNOCK_OR_END: pb.SESSION_COMMAND_KIND_END_TURN}


def tree_ticks(pid: int) -> int:
    """utime + stime clock ticks of ``pid`` and of its descendants (``/proc``)."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        stats[int(entry)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            total += int(stats[p][11]) + int(stats[p][12])
        todo.extend(children.get(p, ()))
    return total


def pct(xs: list[float], p: float) -> float:
    """The ``p``-th percentile (0..100) of ``xs`` (nearest rank); NaN for none."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))]


class Tracker:
    """What a seat knows of whose turn it is and what is due, from the events it sees
    (its results' and the pushed ones), for the two-seat default-move loop."""

    def __init__(self, turn: int, phase: int, version: int) -> None:
        self.turn = turn
        self.phase = {pb.PHASE_DRAW: DRAW, pb.PHASE_MELD_OR_PASS: MELD_OR_PASS,
                      pb.PHASE_KNOCK_OR_END: KNOCK_OR_END}.get(phase, WAIT)  # type: ignore[attr-defined]
        self.version = version
        self.stock_out = False
        self.final: int | None = None
        self.over = False

    def see(self, ev: pb.Event) -> None:
        """Take one event (older versions than the last seen are ignored)."""
        if ev.version <= self.version:
            return
        self.version = ev.version
        kind = ev.WhichOneof("payload")
        if kind == "card_drawn":
            self.phase = MELD_OR_PASS
        elif kind == "stock_exhausted":
            self.stock_out = True
            self.final = 3  # the view's final_turns_left: players + 1 turn ends (R8.2)
        elif kind == "passed":
            self.phase = KNOCK_OR_END if self.stock_out else DRAW
        elif kind == "turn_ended":
            self.turn = 1 - ev.turn_ended.seat
            if self.final is None:
                self.phase = DRAW
            else:  # the final turns (R8.2): no draw; the last one ends the round (R8.3)
                self.final -= 1
                self.phase = MELD_OR_PASS if self.final else WAIT
        elif kind == "round_started":
            self.turn, self.phase = 1 - ev.round_started.dealer, DRAW
            self.stock_out, self.final = False, None
        elif kind in ("round_scored", "knocked"):
            self.phase = WAIT
        elif kind == "game_ended":
            self.over = True

    def take(self, msg: pb.SessionResponse) -> bool:
        """Take one ``SessionResponse`` of the seat's stream: a pushed event is seen; a
        result's events are seen and ``True`` is returned (the command's answer came).

        Raises:
            RuntimeError: the result is a refusal (``SessionError``).
        """
        if msg.HasField("event"):
            self.see(msg.event)
            return False
        if msg.result.HasField("error"):
            raise RuntimeError(f"refused: {msg.result.error}")
        for ev in msg.result.result.events:
            self.see(ev)
        return True


class Window:
    """The measured window: moves and latencies counted only while ``counting``."""

    def __init__(self) -> None:
        self.counting = False
        self.stopped = False
        self.moves = 0
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.playing: set[int] = set()  # clients whose first move came back

    def done(self, t0: float, client: int = -1) -> None:
        self.playing.add(client)
        if self.counting:
            self.moves += 1
            self.latencies.append(time.perf_counter() - t0)


async def new_game(stub: Any) -> tuple[str, dict[int, str], Tracker]:
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=f"p{i}") for i in (0, 1)]))
    tokens = {t.seat: t.token for t in created.tokens}
    v = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                              token=tokens[0]))).view
    return created.game_id, tokens, Tracker(v.turn, v.phase, v.version)


async def think(rng: random.Random, mean: float) -> None:
    if mean:
        await asyncio.sleep(rng.expovariate(1 / mean))


async def session_seat(stub: Any, gid: str, token: str, seat: int, tracker: Tracker,
                       win: Window, rng: random.Random, mean: float, client: int) -> None:
    """One seat on its own Session stream until the game is over or the window stops."""
    call = stub.Session()
    await call.write(pb.SessionRequest(open=pb.SessionOpen(
        game_id=gid, token=token, after_version=tracker.version)))
    tag = 0
    moves = 0
    sent_at = 0.0
    try:
        while not win.stopped and not tracker.over and moves < MOVES_PER_GAME:
            if tracker.turn == seat and tracker.phase in KIND:
                await think(rng, mean)
                tag += 1
                sent_at = time.perf_counter()
                await call.write(pb.SessionRequest(command=pb.SessionCommand(
                    tag=tag, kind=KIND[tracker.phase],
                    options=pb.CommandOptions(expected_version=tracker.version))))
                while True:  # events pushed before the result are taken on the way
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        raise RuntimeError("the session ended")
                    if tracker.take(msg):
                        break
                win.done(sent_at, client)
                moves += 1
            else:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    raise RuntimeError("the session ended")
                tracker.see(msg.event)
    finally:
        call.cancel()


async def session_games(stub: Any, win: Window, seed: int, mean: float,
                        client: int) -> None:
    rng = random.Random(seed)
    while not win.stopped:
        gid, tokens, tracker = await new_game(stub)
        mirror = Tracker(0, 0, 0)
        mirror.__dict__.update(tracker.__dict__)
        await asyncio.gather(
            session_seat(stub, gid, tokens[0], 0, tracker, win, rng, mean, client),
            session_seat(stub, gid, tokens[1], 1, mirror, win, rng, mean, client))


async def unary_games(stub: Any, win: Window, seed: int, mean: float, client: int) -> None:
    """One client plays both seats with the unary calls (nothing is pushed)."""
    rng = random.Random(seed)
    calls = {DRAW: (stub.Draw, pb.DrawRequest), MELD_OR_PASS: (stub.Pass, pb.PassRequest),
             KNOCK_OR_END: (stub.EndTurn, pb.EndTurnRequest)}
    while not win.stopped:
        gid, tokens, t = await new_game(stub)
        moves = 0
        while not win.stopped and not t.over and moves < MOVES_PER_GAME:
            if t.phase not in calls:
                v = (await stub.GetView(pb.GetViewRequest(game_id=gid,
                                                          token=tokens[0]))).view
                t = Tracker(v.turn, v.phase, v.version)
                t.over = v.phase == pb.PHASE_GAME_OVER  # type: ignore[attr-defined]
                continue
            await think(rng, mean)
            method, request = calls[t.phase]
            t0 = time.perf_counter()
            res = await method(request(game_id=gid, token=tokens[t.turn], options=pb.CommandOptions(
                expected_version=t.version, omit_view=True)))
            win.done(t0, client)
            moves += 1
            for ev in res.result.events:
                t.see(ev)


async def echo_unary(channel: grpc.aio.Channel, win: Window, seed: int, mean: float,
                     client: int) -> None:
    rng = random.Random(seed)
    call = channel.unary_unary("/bench.Echo/Echo")
    while not win.stopped:
        await think(rng, mean)
        t0 = time.perf_counter()
        await call(b"c" * 80)
        win.done(t0, client)


async def echo_stream(channel: grpc.aio.Channel, win: Window, seed: int, mean: float,
                      client: int) -> None:
    rng = random.Random(seed)
    call = channel.stream_stream("/bench.Echo/Chat")()
    try:
        while not win.stopped:
            await think(rng, mean)
            t0 = time.perf_counter()
            await call.write(b"c" * 80)
            await call.read()
            win.done(t0, client)
    finally:
        call.cancel()


async def run_python(kind: str, port: int, pid: int, games: int, warmup: float,
                     seconds: float, mean: float, seed: int) -> dict[str, Any]:
    """One measurement of a Python-served row: ``games`` clients of ``kind``."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(CHANNELS)]
    win = Window()
    play = {"session": session_games, "unary": unary_games}.get(kind)
    tasks = []
    for i in range(games):
        ch = channels[i % CHANNELS]
        if play is not None:
            coro = play(pb_grpc.GameServiceStub(ch), win, seed * 1000 + i, mean, i)
        else:
            coro = (echo_unary if kind == "echo" else echo_stream)(ch, win, seed * 1000 + i,
                                                                 mean, i)
        tasks.append(asyncio.create_task(coro))
    setup_until = time.monotonic() + 120  # every client playing before the clock runs
    while len(win.playing) < games and time.monotonic() < setup_until:
        if any(t.done() for t in tasks):
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(warmup)
    failed = [t for t in tasks if t.done() and t.exception() is not None]
    if failed:
        raise failed[0].exception()  # type: ignore[misc]
    c0, t0 = tree_ticks(pid), time.perf_counter()
    win.counting = True
    await asyncio.sleep(seconds)
    win.counting = False
    c1, elapsed = tree_ticks(pid), time.perf_counter() - t0
    win.stopped = True
    for t in tasks:
        t.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, Exception)
              and not isinstance(r, asyncio.CancelledError)]
    for ch in channels:
        await ch.close()
    if errors:
        raise errors[0]
    return {"moves": win.moves, "seconds": elapsed, "cpu": (c1 - c0) / CLK_TCK,
            "latencies": win.latencies}


def run_bgio(port: int, pid: int, games: int, warmup: float, seconds: float, mean: float,
             seed: int) -> dict[str, Any]:
    """One measurement of boardgame.io: its Node load generator."""
    out = subprocess.run(
        ["node", str(PEER / "load.js"), str(port), str(pid), str(games), str(warmup),
         str(seconds), str(mean), str(seed)], cwd=PEER, capture_output=True, text=True,
        timeout=warmup + seconds + 180)
    if out.returncode:
        raise SystemExit(f"load.js failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return {"moves": data["moves"], "seconds": data["seconds"],
            "cpu": data["cpu_ticks"] / CLK_TCK, "latencies": data["latencies"]}


def npm_ci() -> None:
    """Install the pinned boardgame.io into benchmarks/peer (``npm ci``) when missing."""
    if (PEER / "node_modules" / "boardgame.io" / "package.json").exists():
        return
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise SystemExit("bench_peer needs node and npm (apt-get install nodejs npm): "
                         "skipped")
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PEER,
                   check=True)


def start(cmd: list[str], env: dict[str, str] | None = None,
          port_file: Path | None = None) -> tuple[subprocess.Popen[str], int]:
    """Start a server; its port from its first stdout line, or from ``port_file``."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if port_file is None
                            else subprocess.DEVNULL, text=True, env=env)
    if port_file is None:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.strip():
            raise SystemExit(f"{cmd[:3]} did not start")
        return proc, int(line)
    try:
        return proc, wait_port_file(port_file, proc)  # type: ignore[arg-type]
    except (ChildProcessError, TimeoutError) as e:
        raise SystemExit(f"{cmd[:4]} did not start: {e}") from None


def rummy_server(store: list[str], prefix: str, tmp: Path, name: str,
                 root: Path = ROOT, *extra: str) -> tuple[subprocess.Popen[str], int]:
    """``rummy serve`` from the source tree ``root`` (default: this one)."""
    env = dict(os.environ, PYTHONPATH=f"{root}{os.pathsep}{root / 'services'}",
               RUMMY_LOG_LEVEL="WARNING")
    port_file = tmp / f"port-{name}"
    return start([sys.executable, "-m", "rummy_grpc", "serve", *store, "--prefix", prefix,
                  "--host", "127.0.0.1", "--port", "0", "--port-file", str(port_file),
                  # the limit is on (its cost counted) at a rate no client here reaches
                  "--rate-commands", "1000000", "--rate-burst", "1000000",
                  "--rate-create", "0", *extra], env, port_file)


async def main_async(args: argparse.Namespace) -> None:
    npm_ci()
    rounds = args.rounds or (1 if args.quick else 3)
    seconds = args.seconds or (2.0 if args.quick else 4.0)
    warmup = 1.0
    prefix = f"bench-peer-{uuid.uuid4().hex[:8]}"
    procs: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        try:
            bgio, bgio_port = start(["node", str(PEER / "server.js"), "0"],
                                    dict(os.environ, NODE_ENV="production"))
            echo, echo_port = start([sys.executable, "-c", ECHO_SERVER])
            mem, mem_port = rummy_server(["--store", "memory"], prefix, tmp, "mem")
            red, red_port = rummy_server(["--redis-url", args.redis_url], prefix, tmp, "red")
            # the same on libuv (rummy serve --uvloop), as Node's server runs
            mem_uv, mem_uv_port = rummy_server(["--store", "memory"], prefix, tmp, "mem-uv",
                                               ROOT, "--uvloop")
            red_uv, red_uv_port = rummy_server(["--redis-url", args.redis_url], prefix, tmp,
                                               "red-uv", ROOT, "--uvloop")
            procs += [bgio, echo, mem, red, mem_uv, red_uv]
            if args.baseline:  # another checkout of the project (e.g. before a change)
                base, base_port = rummy_server(["--store", "memory"], prefix, tmp, "base",
                                               Path(args.baseline).resolve())
                base_red, base_red_port = rummy_server(
                    ["--redis-url", args.redis_url], prefix, tmp, "base-red",
                    Path(args.baseline).resolve())
                base_red_uv, base_red_uv_port = rummy_server(
                    ["--redis-url", args.redis_url], prefix, tmp, "base-red-uv",
                    Path(args.baseline).resolve(), "--uvloop")
                procs += [base, base_red, base_red_uv]
            rows = {
                "bgio": ("boardgame.io 0.50.2", None, bgio_port, bgio.pid),
                "echo": ("grpc.aio echo, unary", "echo", echo_port, echo.pid),
                "chat": ("grpc.aio echo, stream", "chat", echo_port, echo.pid),
                "mem_s": ("rummy memory, session", "session", mem_port, mem.pid),
                "red_s": ("rummy Redis, session", "session", red_port, red.pid),
                "mem_s_uv": ("rummy memory, session, uv", "session", mem_uv_port,
                             mem_uv.pid),
                "red_s_uv": ("rummy Redis, session, uv", "session", red_uv_port, red_uv.pid),
                "mem_u": ("rummy memory, unary", "unary", mem_port, mem.pid),
                "red_u": ("rummy Redis, unary", "unary", red_port, red.pid),
            }
            if args.baseline:
                rows["base_s"] = ("baseline memory, session", "session", base_port, base.pid)
                rows["base_red_s"] = ("baseline Redis, session", "session", base_red_port,
                                      base_red.pid)
                rows["base_u"] = ("baseline memory, unary", "unary", base_port, base.pid)
                rows["base_red_s_uv"] = ("baseline Redis, sess, uv", "session",
                                         base_red_uv_port, base_red_uv.pid)
            order = [r for r in rows if r in args.only] if args.only else list(rows)
            print(f"boardgame.io against rummy serve, 1 process each; {rounds} interleaved "
                  f"round(s) of {warmup:.0f} s warm-up + {seconds:.0f} s per row; median of "
                  f"the rounds; load average before: "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            levels = [(10, 0.0), (100, 0.0), (100, args.think)]
            results: dict[tuple[str, int, float], list[dict[str, Any]]] = {}
            for r in range(rounds):
                for games, mean in levels:
                    rot = order[r % len(order):] + order[:r % len(order)]
                    for key in rot:
                        _, kind, port, pid = rows[key]
                        seed = r * 7 + games
                        if kind is None:
                            res = await asyncio.to_thread(run_bgio, port, pid, games, warmup,
                                                          seconds, mean, seed)
                        else:
                            res = await run_python(kind, port, pid, games, warmup, seconds,
                                                   mean, seed)
                        results.setdefault((key, games, mean), []).append(res)
            report(rows, order, results, levels)
            print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(30)
    await drop_keys(args.redis_url, prefix)


def report(rows: dict[str, tuple[str, Any, int, int]], order: list[str],
           results: dict[tuple[str, int, float], list[dict[str, Any]]],
           levels: list[tuple[int, float]]) -> None:
    def med(key: str, games: int, mean: float, f: Any) -> float:
        return statistics.median(f(x) for x in results[(key, games, mean)])

    per_cpu = {(k, g): med(k, g, 0.0, lambda x: x["moves"] / x["cpu"] if x["cpu"] else 0.0)
               for k in order for g, m in levels if m == 0.0}
    print(f"{'row':<24} {'games':>5} {'moves/s':>9} {'moves/CPU-s':>12} {'vs bgio':>8} "
          f"{'p50 ms':>8} {'p99 ms':>8}")
    for games, mean in levels:
        for key in order:
            label = rows[key][0]
            rate = med(key, games, mean, lambda x: x["moves"] / x["seconds"])
            p50 = med(key, games, mean, lambda x: pct(x["latencies"], 50) * 1000)
            p99 = med(key, games, mean, lambda x: pct(x["latencies"], 99) * 1000)
            if mean == 0.0:
                eff = per_cpu[(key, games)]
                ratio = (f"{eff / per_cpu[('bgio', games)]:.2f}x"
                         if ("bgio", games) in per_cpu and per_cpu[("bgio", games)] else "-")
                print(f"{label:<24} {games:>5} {rate:>9,.0f} {eff:>12,.0f} {ratio:>8} "
                      f"{p50:>8.2f} {p99:>8.2f}")
            else:
                print(f"{label:<24} {games:>5} {rate:>9,.0f} {'paced':>12} {'':>8} "
                      f"{p50:>8.2f} {p99:>8.2f}")


async def drop_keys(url: str, prefix: str) -> None:
    import redis.asyncio as aioredis
    client = aioredis.Redis.from_url(url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=1000)]
        for i in range(0, len(keys), 1000):
            await client.delete(*keys[i:i + 1000])
    finally:
        await client.aclose()


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 s per row, 1 round")
    parser.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="measured seconds per row (default 4, 2 with --quick)")
    parser.add_argument("--think", type=float, default=0.25,
                        help="mean think time of the paced level, seconds (default 0.25)")
    parser.add_argument("--only", nargs="*", default=[],
                        help="rows to run (bgio echo chat mem_s red_s mem_s_uv red_s_uv mem_u "
                        "red_u base_s base_red_s base_u base_red_s_uv; default all)")
    parser.add_argument("--baseline", default="",
                        help="also serve from this source tree (memory store: session row "
                        "base_s, unary row base_u; Redis: session rows base_red_s and, on "
                        "--uvloop, base_red_s_uv): a change measured against the code before "
                        "it, same run")
    parser.add_argument("--redis-url", default=os.environ.get("RUMMY_TEST_REDIS_URL",
                                                              "redis://127.0.0.1:6379/0"))
    args = parser.parse_args()
    try:  # the clients on libuv, as boardgame.io's Node clients are: more load per core
        import uvloop
        uvloop.run(main_async(args))
    except ImportError:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
