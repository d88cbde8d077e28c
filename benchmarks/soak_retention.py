"""Redis memory soak with retention: does a store's memory stay flat while finished games
move to the archive?

Without retention every finished game stays in Redis for good (about 120 KB for a full
two-seat game, docs/operations.md), so a store's memory grows with every game ever
played. This script starts a private ``redis-server`` (no persistence, so ``used_memory``
is this run's alone; ``--redis-url`` uses another), a real ``rummy serve
--retain-finished RETAIN --archive-url PG`` over it, and plays ``--games`` short games
through the gRPC API, ``--concurrency`` at a time, in the mix of
``benchmarks/soak_service.py`` (server bots, human seats played through the API with
request ids, spectator streams; ``target_score`` 10). Every ``--sample`` seconds it prints
Redis ``used_memory`` (``INFO memory``), its key count, the games done and the games in
the archive.

The verdict (:func:`verdict`), over the samples taken while games are played after the
warm-up (``--warmup`` games; by then the retention window is full and the allocator has
its working set): every ``used_memory`` within ``--band-mib`` (default 2 MiB) of their
median, and no drift: memory fitted to the keys held (how many games the retention window
holds follows the play rate, which the machine's load moves), the residual of the last
third of the samples is within 0.5 MiB of the first third's. At the end it waits for the
archive to drain (every game archived) and prints the last sample.

Usage::

    python benchmarks/soak_retention.py                       # 10,000 games
    python benchmarks/soak_retention.py --games 2000 --json out.json

Exit status: 0 when memory stayed in the band, 1 when it did not, 2 on an error.
Needs PostgreSQL (``--pg-url``, default ``$RUMMY_TEST_PG_URL`` or 127.0.0.1:5432/test); the
archive's tables go in a fresh schema, dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services"), str(ROOT / "benchmarks")]

import grpc  # noqa: E402
import redis  # noqa: E402
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc  # noqa: E402
from rummy_grpc.processes import wait_port_file  # noqa: E402
from soak_service import ADMIN, play_one, slope  # noqa: E402

PG_URL = os.environ.get("RUMMY_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass
class Sample:
    """One sample: seconds since the start, games done, Redis ``used_memory`` (bytes),
    its keys, and the games in the archive."""

    seconds: float
    games: int
    used_memory: int
    keys: int
    archived: int


def free_port() -> int:
    """A free TCP port of 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], str]:
    """A private ``redis-server`` without persistence; ``(process, url)``."""
    if shutil.which("redis-server") is None:
        raise SystemExit("error: redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", directory],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    for _ in range(100):
        with contextlib.suppress(redis.ConnectionError):
            client.ping()
            return proc, url
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("error: redis-server did not start")


def start_server(url: str, prefix: str, pg_url: str, schema: str, retain: float,
                 workdir: str) -> tuple[subprocess.Popen[bytes], int]:
    """``rummy serve`` with retention on; ``(process, port)``."""
    port_file = Path(workdir) / "port"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_ADMIN_TOKEN=ADMIN, RUMMY_LOG_LEVEL="WARNING")
    log = open(Path(workdir) / "server.log", "wb")  # noqa: SIM115 - the process keeps it
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy_grpc", "serve", "--redis-url", url, "--prefix", prefix,
         "--port", "0", "--host", "127.0.0.1", "--port-file", str(port_file),
         "--retain-finished", str(retain), "--archive-url", pg_url, "--archive-schema",
         schema, "--rate-commands", "0", "--rate-events", "0"],
        env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        return proc, wait_port_file(port_file, proc)
    except (ChildProcessError, TimeoutError) as e:
        proc.kill()
        raise SystemExit(f"error: {e}: "
                         + (Path(workdir) / "server.log").read_text()[-2000:]) from None


def archived_count(pg_url: str, schema: str) -> int:
    """Rows of the archive's ``games`` table (0 before it exists)."""
    import psycopg
    with psycopg.connect(pg_url) as conn:
        try:
            return int(conn.execute(f"SELECT count(*) FROM {schema}.games").fetchone()[0])
        except psycopg.errors.UndefinedTable:
            return 0


def sample(client: redis.Redis, started: float, games: int, pg_url: str,
           schema: str) -> Sample:
    """One :class:`Sample` now."""
    info = client.info("memory")
    return Sample(round(time.monotonic() - started, 1), games, int(info["used_memory"]),
                  int(client.dbsize()), archived_count(pg_url, schema))


def verdict(samples: list[Sample], warmup: int, band_mib: float) -> dict[str, Any]:
    """Whether ``used_memory`` stayed flat over the samples taken while games were played
    after ``warmup`` games (the drain at the end left out):

    - every sample within ``band_mib`` of their median, and
    - no drift: ``used_memory`` fitted to the keys held (the games in the retention window
      vary with the play rate), the mean residual of the last third minus that of the
      first third stays within 0.5 MiB.

    Also the slope over games (KiB per 1,000 games) and the fit (base, bytes per key)."""
    total = max(s.games for s in samples)
    after = [s for s in samples if warmup <= s.games < total]
    if len(after) < 6:
        return {"flat": None, "reason": f"only {len(after)} samples after the warm-up"}
    mem = [s.used_memory / 2**20 for s in after]
    median = statistics.median(mem)
    spread = max(abs(m - median) for m in mem)
    keys = [float(s.keys) for s in after]
    per_key = slope(list(zip(keys, mem, strict=True)))
    base = statistics.mean(mem) - per_key * statistics.mean(keys)
    residual = [m - (base + per_key * k) for m, k in zip(mem, keys, strict=True)]
    third = len(residual) // 3
    drift = statistics.mean(residual[-third:]) - statistics.mean(residual[:third])
    per_game = slope([(s.games, s.used_memory) for s in after])
    return {"flat": spread <= band_mib and abs(drift) <= 0.5, "median_mib": median,
            "max_deviation_mib": spread, "band_mib": band_mib, "min_mib": min(mem),
            "max_mib": max(mem), "drift_mib": drift, "base_mib": base,
            "bytes_per_key": per_key * 2**20,
            "slope_kib_per_1000_games": per_game * 1000 / 1024,
            "samples_after_warmup": len(after)}


async def play(port: int, games: int, concurrency: int, budget: float,
               done: list[int]) -> None:
    """Play ``games`` games (or until ``budget`` seconds), ``concurrency`` at a time."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.GameServiceStub(channel)
    deadline = time.monotonic() + budget
    counter = iter(range(games))

    async def worker() -> None:
        for n in counter:
            if time.monotonic() > deadline:
                return
            await play_one(stub, n, seed=n)
            done[0] += 1

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await channel.close()


async def main_async(args: argparse.Namespace) -> int:
    schema = f"soak_{uuid.uuid4().hex[:12]}"
    prefix = f"soak-{uuid.uuid4().hex[:8]}"
    workdir = tempfile.mkdtemp(prefix="soak-retention-")
    redis_proc = None
    if args.redis_url:
        url = args.redis_url
    else:
        redis_proc, url = start_redis(workdir)
    client = redis.Redis.from_url(url)
    server, port = start_server(url, prefix, args.pg_url, schema, args.retain, workdir)
    started = time.monotonic()
    done = [0]
    samples: list[Sample] = []

    def take() -> None:
        s = sample(client, started, done[0], args.pg_url, schema)
        samples.append(s)
        if not args.quiet:
            print(f"{s.seconds:8.1f} s  games {s.games:6d}  used_memory "
                  f"{s.used_memory / 2**20:8.2f} MiB  keys {s.keys:6d}  archived "
                  f"{s.archived:6d}", flush=True)

    try:
        take()
        player = asyncio.create_task(play(port, args.games, args.concurrency, args.budget,
                                          done))
        while not player.done():
            await asyncio.wait([player], timeout=args.sample)
            take()
        player.result()
        drain = time.monotonic() + args.retain + 120
        while samples[-1].archived < done[0] and time.monotonic() < drain:
            await asyncio.sleep(max(1.0, args.retain / 2))
            take()
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
        if redis_proc is not None:
            redis_proc.kill()
            redis_proc.wait()
        import psycopg
        with psycopg.connect(args.pg_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        shutil.rmtree(workdir, ignore_errors=True)
    result = verdict(samples, args.warmup or args.games // 5, args.band_mib)
    result.update(games=done[0], seconds=round(time.monotonic() - started, 1),
                  retain_seconds=args.retain, concurrency=args.concurrency,
                  drained=samples[-1].archived >= done[0],
                  last_used_memory_mib=samples[-1].used_memory / 2**20,
                  load_average=os.getloadavg())
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"verdict": result, "samples": [asdict(s) for s in samples]}, indent=1))
    return 0 if result.get("flat") and result["drained"] else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=10_000)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--retain", type=float, default=10.0,
                   help="--retain-finished of the server, seconds (default 10)")
    p.add_argument("--sample", type=float, default=15.0, help="seconds between samples")
    p.add_argument("--warmup", type=int, default=0,
                   help="games before the band is checked (default a fifth of --games)")
    p.add_argument("--band-mib", type=float, default=2.0)
    p.add_argument("--budget", type=float, default=3600.0, help="most seconds of play")
    p.add_argument("--redis-url", default=None,
                   help="a Redis of this run alone (default: a private redis-server)")
    p.add_argument("--pg-url", default=PG_URL)
    p.add_argument("--json", default=None, help="write the samples and verdict here")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        return asyncio.run(main_async(args))
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
