"""A throw-away local Redis Cluster for tests and benchmarks.

:func:`local_cluster` starts ``n`` ``redis-server --cluster-enabled yes`` processes on free
ports in a temporary directory, joins them with ``redis-cli --cluster create`` (masters only,
no replicas), waits for ``cluster_state:ok`` on every node and yields the cluster URL the
store takes (``redis+cluster://127.0.0.1:P1,127.0.0.1:P2,...``). On exit it kills the
processes it started (by pid) and removes the directory. Nothing is persisted (``--save ""
--appendonly no``).
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redis


def cluster_unavailable() -> str | None:
    """None if ``redis-server`` and ``redis-cli`` are on PATH, else why a cluster cannot
    start (the reason to skip with)."""
    missing = [b for b in ("redis-server", "redis-cli") if shutil.which(b) is None]
    return f"{' and '.join(missing)} not on PATH: cannot start a local Redis Cluster" \
        if missing else None


def _free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports free now, each with its cluster bus port (+10000) free too."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535 or port in ports:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        ports.append(port)
    return ports


def _wait_ping(port: int, deadline: float) -> None:
    while True:
        try:
            with redis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1) as r:
                r.ping()
                return
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _state(info: object) -> str:
    """``cluster_state`` of a ``CLUSTER INFO`` reply (redis-py parses it into a dict)."""
    if isinstance(info, dict):
        return str(info.get("cluster_state"))
    for line in str(info).splitlines():
        if line.startswith("cluster_state:"):
            return line.partition(":")[2].strip()
    return ""


def _start(ports: list[int], workdir: Path, procs: list[subprocess.Popen[bytes]],
           timeout: float, node_timeout_ms: int = 5000) -> None:
    deadline = time.monotonic() + timeout
    for port in ports:
        with open(workdir / f"redis-{port}.log", "wb") as log:
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                 "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
                 "--cluster-node-timeout", str(node_timeout_ms), "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--dir", str(workdir)],
                stdout=log, stderr=subprocess.STDOUT, cwd=workdir))
    for port in ports:
        _wait_ping(port, deadline)
    subprocess.run(
        ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in ports),
         "--cluster-replicas", "0", "--cluster-yes"],
        check=True, capture_output=True, timeout=timeout)
    for port in ports:
        with redis.Redis(port=port, decode_responses=True) as r:
            while _state(r.execute_command("CLUSTER INFO")) != "ok":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"cluster node {port} not ok in {timeout} s")
                time.sleep(0.05)


@contextlib.contextmanager
def local_cluster(n: int = 3, *, timeout: float = 30.0,
                  node_timeout_ms: int = 5000) -> Iterator[str]:
    """Start an ``n``-master local cluster (``n`` >= 3, the minimum ``redis-cli`` accepts)
    and yield its ``redis+cluster://`` URL; tear it down on exit. ``node_timeout_ms`` is
    the nodes' ``cluster-node-timeout`` (how long a silent node takes to be failed).

    Raises:
        RuntimeError: a binary is missing, or the cluster is not ``ok`` within ``timeout``
            seconds (the servers' logs are in the message).
    """
    reason = cluster_unavailable()
    if reason:
        raise RuntimeError(reason)
    workdir = Path(tempfile.mkdtemp(prefix="rummy-cluster-"))
    procs: list[subprocess.Popen[bytes]] = []
    ports = _free_ports(n)
    try:
        try:
            _start(ports, workdir, procs, timeout, node_timeout_ms)
        except (subprocess.SubprocessError, redis.RedisError, RuntimeError) as exc:
            logs = "\n".join(p.read_text(errors="replace")[-2000:]
                             for p in sorted(workdir.glob("*.log")))
            raise RuntimeError(f"local Redis Cluster failed to start: {exc}\n{logs}") from exc
        yield "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def local_redis(*, timeout: float = 30.0) -> Iterator[str]:
    """Start one plain ``redis-server`` (no cluster, nothing persisted) on a free port and
    yield its ``redis://`` URL; tear it down on exit (benchmarks compare it with
    :func:`local_cluster`).

    Raises:
        RuntimeError: ``redis-server`` is missing or does not answer within ``timeout`` s.
    """
    if shutil.which("redis-server") is None:
        raise RuntimeError("redis-server not on PATH")
    workdir = Path(tempfile.mkdtemp(prefix="rummy-redis-"))
    port = _free_ports(1)[0]
    with open(workdir / "redis.log", "wb") as log:
        proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--dir", str(workdir)],
            stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    try:
        try:
            _wait_ping(port, time.monotonic() + timeout)
        except redis.RedisError as exc:
            raise RuntimeError(f"redis-server on {port} did not start: {exc}") from exc
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
