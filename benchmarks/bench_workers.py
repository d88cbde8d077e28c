"""Simulation-worker benchmarks: games per second through real Celery workers with
1 and 2 pool processes (the scaling ratio), for ``random`` bots and for the solver-based bot
(``greedy`` when registered in ``rummy.bots.BOTS``, else ``basic``).

Printed beside them, the anchor measured in the same run: the same games played in this
process by ``rummy.simulate.run_games`` (no broker, no Redis): the ceiling of one worker
process; "vs local" is the share of it a worker process keeps. Ideal scaling is 2.00 with
2 processes on 2 free cores; the figures are wall-clock from submit to the last chunk stored
(workers are started and warmed up first); every figure is the best of ``--repeat`` runs
of the same games (seed 2024, games 0..N-1), local and on the workers alike.

Usage: python benchmarks/bench_workers.py [--quick] [--games N] [--players P]
           [--redis-url URL]
Broker and state keys live under a fresh ``bench-<hex>`` prefix, deleted at the end; the
workers are this script's own child processes, stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAG = f"bench-{uuid.uuid4().hex[:8]}"


def _setup_env(redis_url: str) -> None:
    os.environ.update({
        "RUMMY_BROKER_URL": redis_url, "RUMMY_RESULT_URL": redis_url,
        "RUMMY_STATE_URL": redis_url, "RUMMY_BROKER_KEYPREFIX": f"{TAG}:",
        "RUMMY_KEY_PREFIX": TAG,
    })
    paths = [str(ROOT), str(ROOT / "services"), str(ROOT / "workers")]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)


class Worker:
    """``celery worker -c N`` on one queue, in its own process group."""

    def __init__(self, queue: str, processes: int, log: Path) -> None:
        self._log = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "rummy_worker.celery_app", "worker", "-Q",
             queue, "-c", str(processes), "-n", f"{queue}@%h", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-l", "warning"],
            cwd=ROOT, env=dict(os.environ), stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._log.close()


def _run_batch(store, spec, queue: str, timeout: float = 1800.0) -> float:
    from rummy_worker.tasks import submit

    t0 = time.perf_counter()
    bid = submit(spec, store=store, queue=queue)
    while True:
        st = store.status(bid)
        if st.complete:
            return time.perf_counter() - t0
        if st.failures:
            raise RuntimeError(f"chunks failed: {st.failures}")
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"batch {bid} timed out")
        time.sleep(0.02)


WRITES = frozenset(
    "SET SETEX SETNX PSETEX HSET HSETNX HMSET HDEL HINCRBY HINCRBYFLOAT INCR INCRBY DECR DEL "
    "UNLINK EXPIRE PEXPIRE EXPIREAT PEXPIREAT PERSIST LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LREM "
    "LTRIM LSET LMOVE BLMOVE RPOPLPUSH BRPOPLPUSH BRPOP BLPOP SADD SREM SPOP SMOVE ZADD ZREM "
    "ZINCRBY ZPOPMIN ZPOPMAX ZREMRANGEBYSCORE XADD XDEL XTRIM XACK PUBLISH EVAL EVALSHA FCALL "
    "GETDEL GETEX GETSET MSET RENAME COPY".split())
"""Redis commands counted as writes by :func:`count_commands` (a Lua script counts as one
write: it runs atomically, and what it does inside is shown on its own lines too, under
the script's name, so inner commands are counted apart as ``lua:<command>``)."""


def count_commands(store, client, redis_url: str, bots: tuple[str, ...], chunks: int,
                   chunk: int) -> None:
    """Run one batch of ``chunks`` chunks of ``chunk`` games on a 1-process worker while
    Redis MONITOR records every command on this run's keys and connections; print the
    commands per chunk by name, writes and reads (broker and state alike)."""
    import collections
    import threading

    import redis

    counts: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    mine = client.client_info()["addr"]  # this script's connection: submit, status polls
    stop = threading.Event()
    ready = threading.Event()

    def monitor() -> None:
        mon = redis.Redis.from_url(redis_url, decode_responses=True)
        with mon.monitor() as m:
            ready.set()
            for cmd in m.listen():
                if stop.is_set():
                    break
                text = cmd.get("command", "")
                if TAG not in text:
                    continue  # other tenants of this Redis
                name = text.split(" ", 1)[0].upper()
                if f"{cmd.get('client_address')}:{cmd.get('client_port')}" == mine:
                    own[name] += 1
                    continue
                counts[f"lua:{name}" if cmd.get("client_type") == "lua" else name] += 1
        mon.close()

    queue = f"{TAG}-count"
    w = Worker(queue, 1, Path(tempfile.mkdtemp(prefix="bench-count-")) / "w.log")
    thread = threading.Thread(target=monitor, daemon=True)
    try:
        from rummy_worker.batches import BatchSpec
        _run_batch(store, BatchSpec(games=2, bots=bots, seed=99, chunk_size=1), queue, 120)
        thread.start()
        ready.wait(10)
        t0 = time.perf_counter()
        secs = _run_batch(store, BatchSpec(games=chunks * chunk, bots=bots, seed=2024,
                                           chunk_size=chunk), queue)
        time.sleep(1.0)  # the last acknowledgements
        stop.set()
        client.set(f"{TAG}:monitor-stop", "1")  # one more command wakes the monitor
        thread.join(10)
    finally:
        w.stop()
    total = sum(v for k, v in counts.items() if not k.startswith("lua:"))
    writes = sum(v for k, v in counts.items() if k in WRITES)
    print(f"the submitting script's own connection (submit, a status poll every 20 ms), not "
          f"counted below: {dict(own.most_common())}")
    print(f"Redis commands per chunk ({chunks} chunks of {chunk} {bots[0]} games, 1 worker "
          f"process, {secs:.1f} s, broker and state on one Redis, Redis MONITOR; workers and "
          f"the task messages): "
          f"{total / chunks:.1f} commands, {writes / chunks:.1f} writes "
          f"(a Lua script counted once; t={time.perf_counter() - t0:.1f} s)")
    for name, n in counts.most_common():
        print(f"  {name:<22} {n / chunks:6.2f} per chunk{'  (write)' if name in WRITES else ''}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer games (a smoke run)")
    ap.add_argument("--games", type=int, help="games per measurement (default 400; quick 80)")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure; the best is kept")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/1")
    ap.add_argument("--count-commands", type=int, default=0, metavar="CHUNKS",
                    help="only count the Redis commands of a batch of CHUNKS chunks of 50 "
                    "random-bot games (Redis MONITOR), per chunk")
    args = ap.parse_args()
    _setup_env(args.redis_url)

    import redis
    from rummy_worker.batches import BatchSpec, BatchStore

    from rummy.bots import BOTS
    from rummy.simulate import run_games

    solver_bot = "greedy" if "greedy" in BOTS else "basic"
    games = args.games or (80 if args.quick else 400)
    client = redis.Redis.from_url(args.redis_url, decode_responses=True)
    store = BatchStore(client, TAG)
    logdir = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    note = " (greedy not registered yet)" if solver_bot == "basic" else ""
    if args.count_commands:
        try:
            count_commands(store, client, args.redis_url, ("random",) * args.players,
                           args.count_commands, 50)
        finally:
            keys = list(client.scan_iter(match=f"{TAG}*", count=1000))
            for i in range(0, len(keys), 500):
                client.delete(*keys[i:i + 500])
        return 0
    print(f"cores: {os.cpu_count()}  players: {args.players}  games per run: {games}  "
          f"solver-based bot: {solver_bot}{note}")
    print(f"load average before: {os.getloadavg()[0]:.2f} (other processes share the cores)")
    print(f"{'bots':<10} {'where':<28} {'games/s':>9} {'seconds':>8} {'vs local':>9} "
          f"{'scaling':>8}")
    rows = []
    try:
        for bot in ("random", solver_bot):
            bots = (bot,) * args.players
            run_games(bots, 7, 0, 3)  # warm-up: lazy tables, caches
            best = float("inf")
            for _ in range(args.repeat):  # the very games the workers play below
                t0 = time.perf_counter()
                run_games(bots, 2024, 0, games)
                best = min(best, time.perf_counter() - t0)
            local = games / best
            print(f"{bot:<10} {'local run_games, 1 proc':<28} {local:>9.1f} "
                  f"{best:>8.2f} {'1.00':>9} {'':>8}", flush=True)
            single = None
            for procs in (1, 2):
                queue = f"{TAG}-{bot}-{procs}"
                w = Worker(queue, procs, logdir / f"{queue}.log")
                try:
                    warm = BatchSpec(games=2 * procs, bots=bots, seed=99, chunk_size=1)
                    _run_batch(store, warm, queue, timeout=120)
                    chunk = max(1, games // (8 * procs))
                    spec = BatchSpec(games=games, bots=bots, seed=2024, chunk_size=chunk)
                    secs = min(_run_batch(store, spec, queue) for _ in range(args.repeat))
                finally:
                    w.stop()
                rate = games / secs
                single = single or rate
                scaling = f"{rate / single:.2f}" if procs == 2 else ""
                print(f"{bot:<10} {f'celery, {procs} proc(s), chunk {chunk}':<28} "
                      f"{rate:>9.1f} {secs:>8.2f} {rate / procs / local:>9.2f} {scaling:>8}",
                      flush=True)
                rows.append((bot, procs, rate))
    finally:
        keys = list(client.scan_iter(match=f"{TAG}*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i:i + 500])
        client.close()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("vs local: games/s per worker process over local run_games games/s (1.00 = no "
          "Celery/Redis overhead); scaling: 2 processes over 1 (ideal 2.00 on 2 free cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
