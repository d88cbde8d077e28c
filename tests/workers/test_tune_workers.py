"""``rummy batch tune`` and restricted bots on two real Celery workers: the tune finds the
planted optimum within its budget and writes the same document as the local ``rummy tune``;
a restricted line-up gives the same report on the workers as locally; ``rummy batch
restrict`` gives the same costs as ``--local``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_tune import PLANTED
from tests.workers.helpers import REDIS_URL, ROOT, worker_env

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def _rummy(*args: str, env: dict[str, str], check: bool = True
           ) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900, check=False)
    if check and out.returncode:
        raise AssertionError(f"rummy {' '.join(args)} exited {out.returncode}:\n"
                             f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


@pytest.fixture()
def two_workers(tmp_path: Path, prefix: str, queue: str
                ) -> Iterator[tuple[dict[str, str], list[Path]]]:
    """Two ``rummy worker -c 1`` processes (two Celery nodes) on one queue; yields the
    environment of a client and the workers' logs."""
    env = worker_env({"RUMMY_KEY_PREFIX": prefix, "RUMMY_QUEUE": queue,
                      "RUMMY_EVENT_STORE_URL": REDIS_URL, "RUMMY_EVENT_STORE_PREFIX": prefix})
    procs, logs = [], []
    for k in range(2):
        path = tmp_path / f"worker-{k}.log"
        log = open(path, "w")  # noqa: SIM115
        procs.append((subprocess.Popen(
            [sys.executable, "-m", "rummy", "worker", "-c", "1", "-n", f"tune{k}@%h", "-l",
             "info", "--", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True), log))
        logs.append(path)
    yield env, logs
    for proc, _ in procs:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for proc, log in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        log.close()


def _chunks_done(log: Path) -> int:
    return sum(1 for line in log.read_text().splitlines()
               if "run_chunk" in line and "succeeded" in line)


def test_batch_tune_finds_the_planted_optimum_on_two_workers(two_workers, tmp_path: Path
                                                             ) -> None:
    env, logs = two_workers
    out = _rummy("batch", "tune", *PLANTED, "--chunk-size", "10", "--timeout", "600",
                 "--json", str(tmp_path / "w.json"), "--html", str(tmp_path / "w.html"),
                 env=env)
    doc = json.loads((tmp_path / "w.json").read_text())
    assert doc["best"]["rules"] == {"target_score": 150, "knock_threshold": 20}
    assert doc["games_played"] <= 500
    batches = doc.pop("batches")
    assert len(batches) == len(set(batches)) == doc["games_played"] // 20  # a block each
    # both workers played chunks of the tune's batches
    assert all(_chunks_done(log) > 0 for log in logs), [_chunks_done(x) for x in logs]
    # every block is 2 chunks of 10 games (a chunk sent again when it looked lost is
    # computed twice and counted once: at-least-once delivery)
    assert sum(_chunks_done(log) for log in logs) >= 2 * len(batches)
    assert "best: target_score=150, knock_threshold=20" in out.stdout
    # the same document as the local search, bar the wall time
    _rummy("tune", *PLANTED, "--jobs", "2", "--json", str(tmp_path / "l.json"), env=env)
    local = json.loads((tmp_path / "l.json").read_text())
    doc.pop("seconds")
    local.pop("seconds")
    assert doc == local


def test_restricted_bots_on_two_workers(two_workers, tmp_path: Path) -> None:
    env, logs = two_workers
    args = ["--games", "16", "--players", "3", "--bots",
            "greedy!no-rearrange,basic!knock-at-0,strategic!no-joker-free!no-wait",
            "--seed", "4"]
    sub = _rummy("batch", "submit", *args, "--chunk-size", "4", "--wait", "--json",
                 str(tmp_path / "b.json"), env=env)
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["complete"] and doc["report"]["failed_games"] == []
    local = _rummy("simulate", *args, "--jobs", "2", "--quiet", "--json", "-", env=env)
    assert doc["report"] == json.loads(local.stdout)
    assert set(doc["report"]["bot_win_rate"]) == {
        "greedy!no-rearrange", "basic!knock-at-0", "strategic!no-joker-free!no-wait"}
    assert sub.returncode == 0
    costs = []
    for extra in ([], ["--local", "--jobs", "2"]):
        _rummy("batch", "restrict", "greedy", "--restrictions", "no-rearrange,no-wait",
               "--games", "12", "--seed", "3", "--chunk-size", "4", "--quiet", "--json",
               str(tmp_path / "c.json"), *extra, env=env)
        c = json.loads((tmp_path / "c.json").read_text())
        c.pop("seconds")
        c.pop("batches", None)
        costs.append(c)
    assert costs[0] == costs[1]  # the workers and local processes: the same figures
    rows = {r["restriction"]: r for r in costs[0]["rows"]}
    assert rows["no-rearrange"]["cost"] > 0 and rows["no-rearrange"]["games"] == 12
    # greedy knocks whenever allowed already: no-wait changes no game
    assert (rows["no-wait"]["cost"], rows["no-wait"]["low"], rows["no-wait"]["high"]) == \
        (0.0, 0.0, 0.0)
