"""The commands, end to end: ``rummy worker`` (with its metrics exposition) and
``rummy batch submit|status|report|replay-game``, against the real Redis, compared with
``rummy simulate`` run locally with the same seed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from rummy_store import read_all_sync

from tests.workers.helpers import REDIS_URL, ROOT, worker_env

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rummy(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=check)


@pytest.fixture()
def cli_worker(tmp_path: Path, prefix: str, queue: str):
    """``rummy worker -c 2 --metrics-port P`` in its own process group; yields (env, port)."""
    port = _free_port()
    env = worker_env({"RUMMY_KEY_PREFIX": prefix, "RUMMY_QUEUE": queue,
                      "RUMMY_EVENT_STORE_URL": REDIS_URL, "RUMMY_EVENT_STORE_PREFIX": prefix,
                      "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")})
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy", "worker", "-c", "2", "--metrics-port", str(port),
         "--metrics-addr", "127.0.0.1", "-l", "info", "--", "--without-gossip",
         "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    yield env, port, tmp_path / "worker.log"
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    log.close()


def _scrape(port: int, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{}"):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not exposed:\n{text}")


def test_submit_wait_report_equals_rummy_simulate(cli_worker, tmp_path: Path, prefix: str):
    from rummy.bots import BOTS

    env, port, log = cli_worker
    solver_bot = "greedy" if "greedy" in BOTS else "basic"  # greedy calls best_play
    args = ["--games", "30", "--players", "3", "--bots", f"{solver_bot},random", "--seed", "5"]
    sub = _rummy("batch", "submit", *args, "--chunk-size", "7", "--record-every", "10",
                 "--wait", "--json", str(tmp_path / "batch.json"), env=env)
    batch_id = sub.stdout.split()[0]
    doc = json.loads((tmp_path / "batch.json").read_text())
    assert doc["batch_id"] == batch_id and doc["complete"] and doc["chunks"] == 5
    _rummy("simulate", *args, "--jobs", "2", "--quiet", "--json", str(tmp_path / "local.json"),
           env=env)
    local = json.loads((tmp_path / "local.json").read_text())
    assert doc["report"] == local  # the same report, key for key, as `rummy simulate`

    status = json.loads(_rummy("batch", "status", batch_id, "--json", env=env).stdout)
    assert (status["done"], status["complete"], status["failures"]) == (5, True, {})
    assert "batch.json" not in _rummy("batch", "report", batch_id, env=env).stdout
    csv_text = _rummy("batch", "report", batch_id, "--csv", "-", env=env).stdout
    assert csv_text.startswith("variant,metric,key_kind,key,value,low,high,n\n")
    _rummy("batch", "report", batch_id, "--html", str(tmp_path / "r.html"), env=env)
    assert "<svg" in (tmp_path / "r.html").read_text()

    # sampled replays: games 0, 10 and 20 are in the event store, replayable alone
    events = read_all_sync(REDIS_URL, f"batch-{batch_id}-10", prefix=prefix)
    assert events
    rep = _rummy("batch", "replay-game", batch_id, "10", "--events",
                 str(tmp_path / "g10.jsonl"), env=env)
    line = json.loads(rep.stdout.splitlines()[0])
    assert line["game_id"] == f"batch-{batch_id}-10"
    local_events = [json.loads(x) for x in (tmp_path / "g10.jsonl").read_text().splitlines()]
    assert [e.data for e in events] == local_events
    assert not read_all_sync(REDIS_URL, f"batch-{batch_id}-11", prefix=prefix)
    replay = _rummy("replay", "--redis-url", REDIS_URL, "--prefix", prefix,
                    f"batch-{batch_id}-20", env=env)
    assert replay.returncode == 0
    # the spec alone (from the report) replays the same game without Redis
    rep2 = _rummy("batch", "replay-game", str(tmp_path / "batch.json"), "10", env=env)
    assert {k: v for k, v in json.loads(rep2.stdout).items() if k != "game_id"} == \
        {k: v for k, v in line.items() if k != "game_id"}

    metrics = _scrape(port)
    assert _sample(metrics, "rummy_sim_games_total") == 30
    assert _sample(metrics, "rummy_sim_game_seconds_count") == 30
    assert _sample(metrics, "rummy_sim_turns_total") == doc["report"]["turns"]
    assert _sample(metrics, "rummy_sim_chunk_failures_total") == 0
    assert 'rummy_sim_chunks_total{outcome="stored"} 5.0' in metrics
    if solver_bot == "greedy":  # the worker's hook times the solver without touching it
        assert _sample(metrics, "rummy_solver_seconds_count") > 0


def test_ab_command_and_bad_input(cli_worker, tmp_path: Path):
    env, _, _ = cli_worker
    sub = _rummy("batch", "ab", "--games", "8", "--players", "2", "--bots", "basic,random",
                 "--seed", "3", "--chunk-size", "4", "--compare-bots", "random,random",
                 "--wait", "--json", "-", env=env)
    doc = json.loads(sub.stdout.split("\n", 1)[1])
    cmp = doc["report"]["compare"]
    assert cmp["games"] == 8 and cmp["slot_win_rate"][0]["bot_b"] == "random"
    bad = _rummy("batch", "ab", "--games", "8", "--players", "2", env=env, check=False)
    assert bad.returncode == 2 and "compare" in bad.stderr
    bad = _rummy("batch", "submit", "--bots", "nobody", env=env, check=False)
    assert bad.returncode == 2 and "unknown bot" in bad.stderr
    bad = _rummy("batch", "report", "no-such-batch", env=env, check=False)
    assert bad.returncode == 1 and "no batch" in bad.stderr  # a failure, not bad usage


def test_batch_sweep_equals_rummy_sweep(cli_worker, tmp_path: Path):
    """`rummy batch sweep` (one batch per value on the workers) writes the same document as
    `rummy sweep` (local processes) with the same options: every figure and interval of
    every value, and every value's whole report, equal."""
    env, _, _ = cli_worker
    args = ["--rules", "knock_threshold=0,10", "--games", "12", "--players", "3",
            "--bots", "greedy,human,random", "--seed", "11", "--quiet"]
    sub = _rummy("batch", "sweep", *args, "--chunk-size", "5", "--timeout", "100",
                 "--json", str(tmp_path / "batch.json"), "--html", str(tmp_path / "b.html"),
                 env=env)
    assert "knock_threshold=10" in sub.stderr  # one batch per value, named
    _rummy("sweep", *args, "--jobs", "2", "--json", str(tmp_path / "local.json"), env=env)
    batch = json.loads((tmp_path / "batch.json").read_text())
    local = json.loads((tmp_path / "local.json").read_text())
    ids = batch.pop("batches")
    assert len(ids) == 2 and len(set(ids)) == 2
    batch.pop("seconds")
    local.pop("seconds")
    # the one difference: the local sweep keeps each game's figures, so it adds the
    # game-by-game comparison of the values (the workers return aggregates only)
    assert "paired_compare" not in batch
    assert [e["paired"] for e in local.pop("paired_compare")[0]["diffs"]][:3] == [True] * 3
    assert batch == local
    assert [r["report"]["rules"] for r in batch["sweep"]] == [{"knock_threshold": 0},
                                                              {"knock_threshold": 10}]
    assert all(r["report"]["games"] == 12 for r in batch["sweep"])
    # each value's batch is an ordinary batch: its report is that value's row's report
    one = json.loads(_rummy("batch", "report", ids[1], "--json", "-", env=env).stdout)
    assert one["report"] == batch["sweep"][1]["report"]
    page = (tmp_path / "b.html").read_text()
    assert page.count("<svg ") == 9 and "knock_threshold" in page  # 5 + 4 quality charts
    bad = _rummy("batch", "sweep", "--rules", "knock_threshold=0,99999", "--games", "2",
                 env=env, check=False)
    assert bad.returncode == 2 and "knock_threshold" in bad.stderr
    assert "Traceback" not in bad.stderr


AMQP_URL = os.environ.get("RUMMY_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def _amqp_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _amqp_up(), reason="no RabbitMQ on 127.0.0.1:5672")
def test_rabbitmq_broker(tmp_path: Path, prefix: str, queue: str):
    """RabbitMQ as the broker (batch state stays in Redis): same report as locally."""
    env = worker_env({"RUMMY_BROKER_URL": AMQP_URL, "RUMMY_KEY_PREFIX": prefix,
                      "RUMMY_QUEUE": queue})
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy", "worker", "-c", "1", "-l", "info", "--",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        args = ["--games", "12", "--players", "2", "--bots", "random", "--seed", "8"]
        try:
            sub = _rummy("batch", "submit", *args, "--chunk-size", "5", "--wait", "--json", "-",
                         env=env)
        except subprocess.TimeoutExpired as e:
            raise AssertionError(f"{e}\nsubmit stderr: {e.stderr}\nworker log:\n"
                                 + (tmp_path / "worker.log").read_text()[-4000:]) from None
        doc = json.loads(sub.stdout.split("\n", 1)[1])
        local = _rummy("simulate", *args, "--jobs", "1", "--quiet", "--json", "-", env=env)
        assert doc["complete"] and doc["report"] == json.loads(local.stdout)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)
        log.close()
        from kombu import Connection

        with Connection(AMQP_URL) as conn:
            conn.default_channel.queue_delete(queue)


@pytest.mark.parametrize("args, needle", [
    (["batch", "status", "X", "--state-url", "http://bogus"], "RUMMY_STATE_URL"),
    (["worker", "--broker", "http://x"], "RUMMY_BROKER_URL"),
    (["batch", "submit", "--games", "4", "--broker", "http://x"], "RUMMY_BROKER_URL"),
])
def test_an_unusable_url_is_refused_in_one_line_before_anything(args, needle):
    # found by a tester: tracebacks (ValueError, KeyError 'No such transport'), or a batch
    # recorded before the broker URL's scheme typo was noticed
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "rummy_cli", *args], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr
