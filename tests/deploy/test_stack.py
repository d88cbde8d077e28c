"""The compose stack run for real (``make deploy-test``): images built from deploy/'s
Dockerfiles, ``deploy/compose.yaml`` started with podman-compose, and on it what users do:
a game through the published gRPC port, a Celery batch on the worker containers, the
metrics through the compose Prometheus, a restart of each Redis, and the users, read-only
file systems and secrets the files declare.

Marked ``deploy``: collected by plain ``pytest`` but skipped unless ``-m`` selects
``deploy`` (tests/deploy/conftest.py), since it needs podman, root and a few minutes.
The compose file serves gRPC in plaintext (no TLS is configured there; ``rummy serve
--tls-cert`` is tested in tests/), so the client connects in plaintext.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import DEPLOY
from .stack import Stack, run
from .test_readme_commands import python_client

pytestmark = pytest.mark.deploy

SECRETS = ("redis_password", "broker_password", "admin_token")
RUMMY = str(Path(sys.executable).with_name("rummy"))
RUMMY_IN_IMAGE = "rummy"  # the images' entry point, on PATH there


def secret(name: str) -> str:
    """The value of ``deploy/secrets/<name>`` (made by ``make secrets``)."""
    return (DEPLOY / "secrets" / name).read_text().strip()


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    """The stack, built and healthy; removed with its volumes afterwards. Every container's
    log is kept in ``$RUMMY_DEPLOY_LOG_DIR`` (default ``<tmp>/rummy-deploy-test``)/<project>."""
    missing = [n for n in SECRETS if not (DEPLOY / "secrets" / n).is_file()]
    if missing:
        pytest.fail(f"deploy/secrets/{missing} missing: run `make secrets`")
    project = f"rummy-test-{uuid.uuid4().hex[:6]}"
    logs = Path(os.environ.get("RUMMY_DEPLOY_LOG_DIR")
                or Path(tempfile.gettempdir()) / "rummy-deploy-test") / project
    s = Stack(project, logs)
    try:
        s.build()
        s.up()
        yield s
    finally:
        s.down()
        print(f"\nstack {s.project}: {', '.join(f'{k} {v:.0f} s' for k, v in s.timings.items())}"
              f"; container logs in {s.log_dir}")


# ------------------------------------------------------------------ users, files, secrets

def test_containers_run_as_declared(stack: Stack) -> None:
    """Service and workers: user 10001, read-only root, writable tmpfs /tmp, no capabilities,
    only their own secrets (as files, never in the environment); both Redis: the redis user,
    a password demanded."""
    env_secrets = {secret(n) for n in SECRETS}
    mounted = {"service": {"redis_password", "admin_token"},
               "worker": {"redis_password", "broker_password"}}
    for service, own in mounted.items():
        names = stack.containers(service)
        assert len(names) == (2 if service == "worker" else 1), names
        for name in names:
            info = stack.inspect(name)
            assert info["Config"]["User"] == "10001:10001"
            assert info["HostConfig"]["ReadonlyRootfs"] is True
            assert stack.exec(name, "id", "-u").stdout.strip() == "10001"
            assert stack.exec(name, "id", "-g").stdout.strip() == "10001"
            status = stack.exec(name, "cat", "/proc/1/status").stdout
            caps = dict(re.findall(r"^(Cap\w+):\s+(\w+)$", status, re.MULTILINE))
            assert int(caps["CapEff"], 16) == 0 and int(caps["CapBnd"], 16) == 0, caps
            assert re.search(r"^NoNewPrivs:\s+1$", status, re.MULTILINE)
            ro = stack.exec(name, "touch", "/usr/local/x", check=False)
            assert ro.returncode != 0 and "Read-only file system" in ro.stderr
            stack.exec(name, "touch", "/tmp/x")  # numba's cache and the metrics files
            listed = set(stack.exec(name, "ls", "/run/secrets").stdout.split())
            assert listed == own, (name, listed)
            for n in own:
                assert stack.exec(name, "cat", f"/run/secrets/{n}").stdout.strip() == secret(n)
            environ = stack.exec(name, "cat", "/proc/1/environ").stdout
            assert not any(v in environ for v in env_secrets), f"a secret in {name}'s env"
    for service, own in (("redis-events", "redis_password"), ("broker", "broker_password")):
        (name,) = stack.containers(service)
        top = [line.split() for line in run(["podman", "top", name, "user", "comm"]
                                            ).stdout.splitlines()[1:] if line.strip()]
        # (a health check running meanwhile shows as root's sh, redis-cli and grep)
        assert [row for row in top if row[-1] == "redis-server"] == [["redis", "redis-server"]]
        ping = stack.exec(name, "redis-cli", "ping", check=False)
        assert "NOAUTH" in ping.stdout + ping.stderr
        authed = stack.exec(name, "sh", "-c",
                            f'REDISCLI_AUTH="$(cat /run/secrets/{own})" redis-cli ping')
        assert authed.stdout.strip() == "PONG"


def test_worker_pool_follows_the_cpu_limit(stack: Stack) -> None:
    """Each worker container runs as many pool processes as its CPU limit (2), whatever the
    host's core count."""
    for name in stack.containers("worker"):
        assert stack.inspect(name)["HostConfig"]["NanoCpus"] == 2_000_000_000
        procs = [line.split(None, 1) for line in run(
            ["podman", "top", name, "pid", "args"]).stdout.splitlines()[1:] if line.strip()]
        workers = [p for p in procs if "rummy worker" in p[1] or "celery" in p[1]]
        # the main process and its pool of 2 forked children
        assert len(workers) == 3, procs


# ------------------------------------------------------------------ a game through gRPC

def test_readme_client_plays_a_game_through_the_published_port(stack: Stack,
                                                               tmp_path: Path) -> None:
    """The README's client, unchanged, against the stack's published gRPC port; the game is
    then exported from the event store's published port and replayed (every event checked)."""
    (tmp_path / "client.py").write_text(python_client())
    addr = f"127.0.0.1:{stack.ports['RUMMY_GRPC_PORT']}"
    out = run([sys.executable, "client.py"], timeout=600, env={**stack.env, "RUMMY_ADDR": addr},
              cwd=tmp_path)
    game_id = re.search(r"^game (\S+)$", out.stdout, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert "refused: FAILED_PRECONDITION R5." in out.stdout
    assert re.search(r"^final \[\d+, \d+\] winners \[", out.stdout, re.MULTILINE), out.stdout
    url = f"redis://:{secret('redis_password')}@127.0.0.1:{stack.ports['RUMMY_REDIS_PORT']}/0"
    run([RUMMY, "export", game_id, "--redis-url", url, "-o", str(tmp_path / "game.jsonl")])
    events = [json.loads(x) for x in (tmp_path / "game.jsonl").read_text().splitlines()]
    assert events[-1]["type"] == "GameEnded"
    run([RUMMY, "replay", str(tmp_path / "game.jsonl")])


# ------------------------------------------------------------------ a batch on the workers

BATCH = ["--games", "40", "--players", "4", "--bots", "basic,random", "--seed", "7"]


def test_batch_on_the_workers_equals_rummy_simulate(stack: Stack, tmp_path: Path) -> None:
    """``rummy batch submit --wait`` in a worker container (the broker is not published),
    run by both workers' pools; its report equals ``rummy simulate``'s, key for key. Sampled
    games land in the event store."""
    worker = stack.containers("worker")[0]
    sub = stack.exec(worker, RUMMY_IN_IMAGE, "batch", "submit", *BATCH, "--chunk-size", "5",
                     "--record-every", "20", "--wait", "--json", "/tmp/batch.json", timeout=900)
    batch_id = sub.stdout.split()[0]
    doc = json.loads(stack.exec(worker, "cat", "/tmp/batch.json").stdout)
    assert doc["batch_id"] == batch_id and doc["complete"] and doc["chunks"] == 8
    stack.batch_games += 40
    run([RUMMY, "simulate", *BATCH, "--jobs", "1", "--quiet", "--json",
         str(tmp_path / "local.json")], timeout=900)
    assert doc["report"] == json.loads((tmp_path / "local.json").read_text())
    url = f"redis://:{secret('redis_password')}@127.0.0.1:{stack.ports['RUMMY_REDIS_PORT']}/0"
    for index in (0, 20):
        run([RUMMY, "replay", "--redis-url", url, f"batch-{batch_id}-{index}"])


# ------------------------------------------------------------------ metrics via Prometheus

def test_prometheus_scrapes_the_service_and_every_worker(stack: Stack) -> None:
    """The compose Prometheus (its config and rules as shipped) finds the service and both
    worker replicas (DNS service discovery) up, and sums the workers' game counters."""
    deadline = time.monotonic() + 120
    while True:
        targets = stack.get_json("RUMMY_PROMETHEUS_PORT", "/api/v1/targets")["data"]
        up: dict[str, list[str]] = {}
        for t in targets["activeTargets"]:
            if t["health"] == "up":
                up.setdefault(t["labels"]["job"], []).append(t["scrapeUrl"])
        if (len(up.get("rummy-service", [])) == 1 and len(up.get("rummy-worker", [])) == 2
                and up.get("prometheus")):
            break
        assert time.monotonic() < deadline, targets
        time.sleep(2)
    assert up["rummy-service"] == ["http://service:9100/metrics"]
    (prom,) = stack.containers("prometheus")
    # promtool of the same Prometheus reads the config and the alert rules it names
    check = stack.exec(prom, "promtool", "check", "config", "/etc/prometheus/prometheus.yml")
    assert re.search(r"SUCCESS: [1-9]\d* rules found", check.stdout + check.stderr), check
    mounts = {m["Destination"]: m["Type"] for m in stack.inspect(prom)["Mounts"]}
    assert mounts["/prometheus"] == "volume"  # the TSDB is in the volume, not the container
    assert "wal" in stack.exec(prom, "ls", "/prometheus/data").stdout.split()
    rules = stack.get_json("RUMMY_PROMETHEUS_PORT", "/api/v1/rules")["data"]["groups"]
    assert rules and all(r["health"] == "ok" for g in rules for r in g["rules"]), rules

    def query(q: str) -> list[dict[str, Any]]:
        from urllib.parse import quote
        data = stack.get_json("RUMMY_PROMETHEUS_PORT", f"/api/v1/query?query={quote(q)}")
        result: list[dict[str, Any]] = data["data"]["result"]
        return result

    names = {r["metric"]["__name__"] for r in query('{__name__=~"rummy_.+"}')}
    assert {"rummy_games_active", "rummy_sim_games_total"} <= names, names
    while True:  # the batch test's games, as the workers counted them
        got = query("sum(rummy_sim_games_total)")
        if got and float(got[0]["value"][1]) == stack.batch_games:
            break
        assert time.monotonic() < deadline + 60, (got, stack.batch_games)
        time.sleep(2)


# ------------------------------------------------------------------ Redis restarts

class Player:
    """Plays the human seat of a game against a server bot like the README's client, with a
    request id per command, retried with the same id while the service answers UNAVAILABLE;
    keeps every event a command's reply acknowledged."""

    def __init__(self, addr: str) -> None:
        import grpc
        from rummy_api.v1 import game_service_pb2 as pb
        from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

        self.grpc, self.pb = grpc, pb
        self.channel = grpc.insecure_channel(addr)
        self.stub = pb_grpc.GameServiceStub(self.channel)
        game = self.stub.CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="me"),
                   pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="basic")],
            variants={"target_score": "50"}, request_id=str(uuid.uuid4())), timeout=30)
        self.me = {"game_id": game.game_id, "token": game.tokens[0].token}
        self.acked: dict[int, tuple[str, float]] = {}  # version -> (type, ts)
        self.unavailable = 0

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float = 180) -> Any:
        """``fn(*args)``, retried while UNAVAILABLE (the event store is away)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return fn(*args, timeout=10)
            except self.grpc.RpcError as e:
                if e.code() not in (self.grpc.StatusCode.UNAVAILABLE,
                                    self.grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                self.unavailable += 1
                assert time.monotonic() < deadline, "the service stayed unavailable"
                time.sleep(0.5)

    def view(self) -> Any:
        return self.call(self.stub.GetView, self.pb.GetViewRequest(**self.me)).view

    def step(self) -> bool:
        """One command of the human seat when it is to act; False once the game is over."""
        pb = self.pb
        view = self.view()
        if view.phase == pb.PHASE_GAME_OVER:
            return False
        if not view.actions:
            time.sleep(0.05)
            return True
        opts = pb.CommandOptions(request_id=str(uuid.uuid4()))
        for action, method, request in (
                (pb.ACTION_DRAW, self.stub.Draw, pb.DrawRequest),
                (pb.ACTION_PASS, self.stub.Pass, pb.PassRequest),
                (pb.ACTION_KNOCK, self.stub.Knock, pb.KnockRequest),
                (pb.ACTION_END_TURN, self.stub.EndTurn, pb.EndTurnRequest)):
            if action in view.actions:
                result = self.call(method, request(**self.me, options=opts)).result
                for e in result.events:
                    self.acked[e.version] = (e.type, e.ts)
                return True
        raise AssertionError(f"no command to play among {list(view.actions)}")

    def log(self) -> dict[int, tuple[str, float]]:
        """The game's whole event log as the service reads it now: version -> (type, ts)."""
        out: dict[int, tuple[str, float]] = {}
        after = 0
        while True:
            page = self.call(self.stub.GetEvents, self.pb.GetEventsRequest(
                **self.me, after_version=after))
            out.update({e.version: (e.type, e.ts) for e in page.events})
            if not page.next_after_version:
                return out
            after = page.next_after_version


def test_event_store_restart_games_go_on_nothing_acknowledged_lost(stack: Stack) -> None:
    """Stop the event store's container mid-game and start it again: the game goes on to its
    end through the same service, and every event a reply acknowledged is in the log, at its
    version, unchanged (appendonly everysec, and a stop flushes the AOF)."""
    player = Player(f"127.0.0.1:{stack.ports['RUMMY_GRPC_PORT']}")
    for _ in range(6):
        assert player.step()
    (redis,) = stack.containers("redis-events")
    before = max(player.acked)
    restarted = threading.Event()

    def restart() -> None:
        run(["podman", "stop", "-t", "10", redis])
        time.sleep(3)  # commands meanwhile are answered UNAVAILABLE, then retried
        run(["podman", "start", redis])
        restarted.set()

    t = threading.Thread(target=restart)
    t.start()
    while not restarted.is_set():
        player.step()
    t.join()
    while player.step():
        pass
    assert player.unavailable > 0, "no command met the stopped event store"
    assert max(player.acked) > before
    log = player.log()
    assert sorted(log) == list(range(1, max(log) + 1)) and log[max(log)][0] == "GameEnded"
    assert {v: log[v] for v in player.acked} == player.acked
    stack.wait_healthy()


def test_broker_restart_keeps_a_queued_batch(stack: Stack, tmp_path: Path) -> None:
    """A batch submitted while both workers are paused (``compose run``, as a user submits
    from a one-off container) waits in the broker; stop and start the broker's container,
    unpause the workers: they reconnect, and the batch completes with the report ``rummy
    simulate`` gives (the queue and the batch state survive in the broker's AOF)."""
    workers = stack.containers("worker")
    spec = ["--games", "60", "--players", "3", "--bots", "basic,random", "--seed", "11"]

    def one_off(*argv: str) -> str:
        out = stack.compose("run", "--rm", "--no-deps", "worker", *argv, timeout=300)
        return out.stdout

    run(["podman", "pause", *workers])
    try:
        submitted = one_off("batch", "submit", *spec, "--chunk-size", "5")
        batch_id = re.search(r"^([0-9a-f]{8,})$", submitted, re.MULTILINE).group(1)  # type: ignore[union-attr]
        out = one_off("batch", "status", batch_id, "--json")
        status = json.loads(out[out.index("{"):])
        assert (status["done"], status["chunks"]) == (0, 12), status
        (broker,) = stack.containers("broker")
        run(["podman", "stop", "-t", "10", broker])
        time.sleep(2)
        run(["podman", "start", broker])
    finally:
        run(["podman", "unpause", *workers], check=False)
    stack.exec(workers[0], RUMMY_IN_IMAGE, "batch", "status", batch_id, "--wait", timeout=900)
    stack.exec(workers[0], RUMMY_IN_IMAGE, "batch", "report", batch_id, "--json",
               "/tmp/broker-restart.json")
    doc = json.loads(stack.exec(workers[0], "cat", "/tmp/broker-restart.json").stdout)
    run([RUMMY, "simulate", *spec, "--jobs", "1", "--quiet", "--json",
         str(tmp_path / "local.json")], timeout=900)
    assert doc.get("report", doc) == json.loads((tmp_path / "local.json").read_text())
    stack.wait_healthy()
