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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer games (a smoke run)")
    ap.add_argument("--games", type=int, help="games per measurement (default 400; quick 80)")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure; the best is kept")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/1")
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
