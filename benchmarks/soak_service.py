"""Memory soak of the game service: does a long-running ``rummy serve`` level off?

A fault found by a review: the service's RSS grew from 59 to 106 MiB in a 20-minute mixed
soak of 3,820 games, which stayed below the 4,096-game state cache, so nobody had run past
the bound. This script runs a real ``rummy serve`` process over Redis and plays many short
games through its gRPC API until ``--games`` games are done or ``--budget`` seconds have
passed (whichever comes first; default 10,000 games in at most 60 minutes), with
``--concurrency`` games at once, in a fixed mix (by game number):

* ``bots``: two server bots (``random``, ``basic``); the client waits on ``GetView``.
* ``humans``: two human seats played by this client with the core's ``basic`` policy
  through ``GetView`` and the commands (``expected_version``, ``request_id``).
* ``spectated``: two server bots and one ``StreamEvents`` spectator that reads every event
  to ``GameEnded``.

Games are short: ``target_score`` 10 (a game ends after the first round with a score).
Every ``--sample`` seconds (default 30) it samples the server process (``/proc``): RSS
(MiB), open file descriptors, threads, and the Redis keys under the run's prefix, with
the games done. At the end it prints the table and whether RSS levelled off: the slope of
RSS over the last third of the samples (least squares, MiB per 1,000 games), and the
growth that slope gives over the last third, against a tolerance (``--tolerance`` MiB,
default 2, or 2 % of the RSS, whichever is larger).

``--cache N`` starts the server with a state cache of N games instead of 4,096 (``rummy
serve`` has no option for it: the server is started through ``python -c`` with the
default of ``GameApp``/``create_server`` changed, then ``rummy serve``'s own ``main``), so a
short run goes well past the cache's bound. ``--json FILE`` writes the samples and the
verdict. Keys live under a fresh ``soak-<hex>`` prefix, deleted at the end; the server is
stopped (SIGTERM, then SIGKILL) whatever happens.

Measured on 2 cores shared with other jobs (load 8-13): the default run played 10,000 games
in 1,290 s; RSS rose 58.8 -> 108.4 MiB while the 4,096-game cache filled (4,487 games),
then 108.4 -> 110.0 MiB over the other 5,500 games (+0.34 MiB per 1,000 games over the last
third: levelled off); 22 fds and 8 threads throughout; 53,727 Redis keys (finished games
are kept). The 3-minute run past a 256-game cache: 1,876 games, 61.5 -> 94.6 MiB, +1.13
MiB per 1,000 games over the last third (levelled off).

Usage::

    python benchmarks/soak_service.py                           # 10,000 games, <= 60 min
    python benchmarks/soak_service.py --budget 180 --cache 256  # the chaos test's version

Exit status: 0 when RSS levelled off, 1 when it did not, 2 on an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

import grpc  # noqa: E402
import redis  # noqa: E402
import rummy_grpc  # noqa: E402,F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb  # noqa: E402
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402
from rummy_grpc.convert import view_from_proto  # noqa: E402
from rummy_grpc.processes import wait_port_file  # noqa: E402

from rummy.bots import make_bot  # noqa: E402
from rummy.commands import Draw, EndTurn, Knock, Meld, Pass  # noqa: E402
from rummy.melds import format_table  # noqa: E402

SHORT = {"target_score": "10"}
"""Variants of every soak game: it ends after the first round that scores."""
KINDS = ("bots", "humans", "spectated")
"""The mix, by game number modulo 3."""
ADMIN = "soak-admin-token"

SERVE_WITH_CACHE = r'''
import sys
cache = int(sys.argv[1])
import rummy_grpc.app, rummy_grpc.server
rummy_grpc.app.GameApp.__init__.__kwdefaults__["cache_size"] = cache
rummy_grpc.server.create_server.__kwdefaults__["cache_size"] = cache
from rummy_cli.main import main
sys.exit(main(sys.argv[2:]))
'''
"""``rummy serve`` with another default state cache size (argv: cache, then serve's)."""


@dataclass
class Sample:
    """One sample of the server process and the store."""

    seconds: float
    games: int
    rss_mib: float
    fds: int
    threads: int
    redis_keys: int


def proc_status(pid: int) -> tuple[float, int, int]:
    """``(RSS MiB, open fds, threads)`` of process ``pid`` from ``/proc``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    rss = int(fields["VmRSS"].split()[0]) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"])


def count_keys(client: redis.Redis, prefix: str) -> int:
    """Keys under ``prefix:`` (SCAN)."""
    return sum(1 for _ in client.scan_iter(match=f"{prefix}:*", count=2000))


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``(x, y)`` points (0 for fewer than two distinct x)."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def verdict(samples: list[Sample], tolerance_mib: float) -> dict[str, Any]:
    """Whether RSS levelled off: the RSS slope over the last third of the samples, against
    games (MiB per 1,000 games), times the games of that third, within the tolerance
    (``max(tolerance_mib, 2 % of the last RSS)``). Needs at least 6 samples."""
    if len(samples) < 6:
        return {"levelled_off": None, "reason": f"only {len(samples)} samples (need 6)"}
    last = samples[len(samples) - len(samples) // 3:]
    per_game = slope([(s.games, s.rss_mib) for s in last])
    games = last[-1].games - last[0].games
    growth = per_game * games
    allowed = max(tolerance_mib, 0.02 * samples[-1].rss_mib)
    return {"levelled_off": growth <= allowed, "slope_mib_per_1000_games": per_game * 1000,
            "growth_last_third_mib": growth, "allowed_mib": allowed,
            "last_third_games": games,
            "fds_slope_per_1000_games": slope([(s.games, s.fds) for s in last]) * 1000,
            "threads_last_third": sorted({s.threads for s in last})}


async def send(stub: Any, game_id: str, token: str, cmd: Any, version: int) -> None:
    """One core command through the API, with ``expected_version`` and a request id."""
    opts = pb.CommandOptions(expected_version=version, request_id=f"{version}")
    if isinstance(cmd, Draw):
        await stub.Draw(pb.DrawRequest(game_id=game_id, token=token, options=opts))
    elif isinstance(cmd, Pass):
        await stub.Pass(pb.PassRequest(game_id=game_id, token=token, options=opts))
    elif isinstance(cmd, Meld):
        table = [pb.Cards(cards=m) for m in format_table(cmd.table)]
        await stub.Meld(pb.MeldRequest(game_id=game_id, token=token, options=opts,
                                       table=table))
    elif isinstance(cmd, Knock):
        await stub.Knock(pb.KnockRequest(game_id=game_id, token=token, options=opts))
    elif isinstance(cmd, EndTurn):
        await stub.EndTurn(pb.EndTurnRequest(game_id=game_id, token=token, options=opts))
    else:
        raise TypeError(cmd)


async def wait_over(stub: Any, game_id: str, deadline: float) -> None:
    """Poll ``GetView`` (public) until the game is over."""
    while True:
        v = (await stub.GetView(pb.GetViewRequest(game_id=game_id))).view
        if v.phase == pb.PHASE_GAME_OVER:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"game {game_id} not over after its deadline")
        await asyncio.sleep(0.05)


async def play_one(stub: Any, n: int, seed: int) -> None:
    """Play game number ``n`` of the mix to its end (a hang guard of 300 s per game)."""
    kind = KINDS[n % len(KINDS)]
    deadline = time.monotonic() + 300
    if kind in ("bots", "spectated"):
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy=s) for s in ("random", "basic")],
            variants=SHORT, seed=seed, admin_token=ADMIN))
        if kind == "spectated":
            async for msg in stub.StreamEvents(pb.StreamEventsRequest(game_id=created.game_id)):
                if msg.event.type == "GameEnded" or time.monotonic() > deadline:
                    break
        await wait_over(stub, created.game_id, deadline)
        return
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=f"p{i}") for i in range(2)],
        variants=SHORT, seed=seed, admin_token=ADMIN))
    tokens = {t.seat: t.token for t in created.tokens}
    agents = {s: make_bot("basic", seed + s) for s in tokens}
    while True:
        public = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id))).view
        if public.phase == pb.PHASE_GAME_OVER:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"game {created.game_id} not over after its deadline")
        seat = public.turn
        v = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                  token=tokens[seat]))).view
        await send(stub, created.game_id, tokens[seat], agents[seat].act(view_from_proto(v)),
                   v.version)


def start_server(redis_url: str, prefix: str, workdir: Path, cache: int | None,
                 ) -> tuple[subprocess.Popen[bytes], int]:
    """A real ``rummy serve`` on a free port over ``redis_url``; returns it and its port."""
    port_file = workdir / "port"
    serve = ["serve", "--redis-url", redis_url, "--prefix", prefix, "--host", "127.0.0.1",
             "--port", "0", "--port-file", str(port_file), "--rate-commands", "0",
             "--rate-create", "0"]
    argv = ([sys.executable, "-c", SERVE_WITH_CACHE, str(cache), *serve] if cache
            else [sys.executable, "-m", "rummy", *serve])
    env = dict(os.environ, RUMMY_ADMIN_TOKEN=ADMIN, RUMMY_LOG_LEVEL="WARNING",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "services")]))
    log = open(workdir / "server.log", "wb")  # noqa: SIM115 - the process keeps it
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        return proc, wait_port_file(port_file, proc)
    except (ChildProcessError, TimeoutError) as e:
        stop(proc)
        raise RuntimeError(f"rummy serve did not start ({e}): "
                           + (workdir / "server.log").read_text(errors="replace")[-3000:]
                           ) from None


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def soak(args: argparse.Namespace) -> tuple[list[Sample], int, dict[str, Any]]:
    """Run the soak; returns the samples, the games done and the server's arguments."""
    prefix = f"soak-{uuid.uuid4().hex[:10]}"
    workdir = Path(tempfile.mkdtemp(prefix="rummy-soak-"))
    admin = redis.Redis.from_url(args.redis_url)
    proc, port = start_server(args.redis_url, prefix, workdir, args.cache)
    samples: list[Sample] = []
    done = 0
    failures: list[str] = []
    t0 = time.monotonic()
    end = t0 + args.budget
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            started = 0

            async def player() -> None:
                nonlocal started, done
                while started < args.games and time.monotonic() < end:
                    n = started
                    started += 1
                    try:
                        await play_one(stub, n, args.seed + n)
                        done += 1
                    except (grpc.aio.AioRpcError, TimeoutError) as exc:
                        failures.append(f"game {n}: {exc}")
                        if len(failures) > 10:
                            raise RuntimeError("more than 10 games failed: "
                                               + "; ".join(failures)) from exc

            def take() -> None:
                rss, fds, threads = proc_status(proc.pid)
                s = Sample(round(time.monotonic() - t0, 1), done, round(rss, 1), fds, threads,
                           count_keys(admin, prefix))
                samples.append(s)
                if not args.quiet:
                    print(f"{s.seconds:8.0f} s {s.games:7d} games {s.rss_mib:8.1f} MiB "
                          f"{s.fds:5d} fds {s.threads:3d} threads {s.redis_keys:8d} keys",
                          flush=True)

            take()
            players = [asyncio.ensure_future(player()) for _ in range(args.concurrency)]
            while not all(p.done() for p in players):
                await asyncio.wait(players, timeout=args.sample)
                take()
            for p in players:
                p.result()  # raise a player's error
            if proc.poll() is not None:
                raise RuntimeError("rummy serve exited during the soak")
    finally:
        stop(proc)
        keys = list(admin.scan_iter(match=f"{prefix}:*", count=2000))
        for i in range(0, len(keys), 1000):
            admin.delete(*keys[i:i + 1000])
        admin.close()
    return samples, done, {"cache": args.cache or 4096, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis-url", default=os.environ.get("RUMMY_TEST_REDIS_URL",
                                                              "redis://127.0.0.1:6379/0"))
    parser.add_argument("--games", type=int, default=10_000, help="games to play (10,000)")
    parser.add_argument("--budget", type=float, default=3600.0,
                        help="seconds at most (3600); the soak stops at the first bound")
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--concurrency", type=int, default=8, help="games at once (8)")
    parser.add_argument("--cache", type=int, default=None,
                        help="the server's state cache in games (default: its own, 4096)")
    parser.add_argument("--seed", type=int, default=1, help="seed of game 0 (game n: +n)")
    parser.add_argument("--tolerance", type=float, default=2.0,
                        help="RSS growth over the last third still called level, MiB (2)")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--quiet", action="store_true", help="no line per sample")
    args = parser.parse_args(argv)
    try:
        samples, done, server = asyncio.run(soak(args))
    except (RuntimeError, redis.RedisError, OSError) as exc:
        print(f"soak failed: {exc}", file=sys.stderr)
        return 2
    result = verdict(samples, args.tolerance)
    print(f"\nsoak: {done} games ({', '.join(KINDS)} in turn), server state cache "
          f"{server['cache']} games, {len(server['failures'])} failed games")
    print(f"{'seconds':>8} {'games':>7} {'RSS MiB':>8} {'fds':>5} {'threads':>7} "
          f"{'Redis keys':>10}")
    for s in samples:
        print(f"{s.seconds:8.0f} {s.games:7d} {s.rss_mib:8.1f} {s.fds:5d} {s.threads:7d} "
              f"{s.redis_keys:10d}")
    if result["levelled_off"] is None:
        print(f"RSS levelled off: unknown ({result['reason']})")
    else:
        print(f"RSS over the last third: {result['slope_mib_per_1000_games']:+.2f} MiB per "
              f"1,000 games, {result['growth_last_third_mib']:+.1f} MiB over its "
              f"{result['last_third_games']} games (allowed {result['allowed_mib']:.1f}): "
              f"{'levelled off' if result['levelled_off'] else 'STILL GROWING'}")
    if args.json:
        args.json.write_text(json.dumps({"games": done, "server": server, "verdict": result,
                                         "samples": [asdict(s) for s in samples]}, indent=1))
    return 0 if result["levelled_off"] else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
