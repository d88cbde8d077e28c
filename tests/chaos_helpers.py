"""Real processes for fault tests: a private ``redis-server`` (optionally with an
append-only file, so it can be SIGKILLed and started again on the same data) and ``rummy
serve`` in its own process. Shared by the service suite's outage, replica and flood tests
(``make chaos`` runs the ones marked ``chaos``)."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import HANG_GUARD

ROOT = Path(__file__).resolve().parents[1]
ADMIN_TOKEN = "test-admin-token"


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range of ephemeral ports (what ``connect`` and ``bind(0)`` take)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(count: int = 1) -> int:
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1 right now, outside the
    kernel's ephemeral range: a port from ``bind(0)`` could be taken by the next outgoing
    connection of any process before the server under test binds it (a test that gave a
    server ``--metrics-port P`` for copies at P and P + 1 failed that way under load).

    Raises:
        RuntimeError: no such ports found after many tries.
    """
    low, _high = _ephemeral_range()
    floor = 10_000 if low > 12_000 else 1024
    for _ in range(500):
        first = random.randrange(floor, low - count)
        if all(_bindable(first + i) for i in range(count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports below {low}")


def start_redis(port: int, data_dir: Path | None = None) -> subprocess.Popen[bytes]:
    """Start ``redis-server`` on ``port``; with ``data_dir``, an append-only file there,
    fsynced on every write (a restart on the same directory keeps every acknowledged
    write). Skips the test when redis-server is not installed.

    Raises:
        RuntimeError: it did not accept connections within 5 s.
    """
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    if data_dir is None:
        args += ["--appendonly", "no"]
    else:
        args += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(data_dir)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def start_server(redis_url: str, prefix: str, tmp_path: Path, name: str,
                 *extra: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``rummy serve`` (``python -m rummy_grpc serve``) on a free port over
    ``redis_url``, with the test admin token; returns the process and its port.

    Raises:
        AssertionError: the server exited or did not start within the hang guard
            (``RUMMY_TEST_HANG_GUARD``, 300 s).
    """
    port_file = tmp_path / f"port-{name}"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_ADMIN_TOKEN=ADMIN_TOKEN, RUMMY_LOG_LEVEL="WARNING")
    log = open(tmp_path / f"server-{name}.log", "wb")  # noqa: SIM115 - the process keeps it
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy_grpc", "serve", "--redis-url", redis_url,
         "--prefix", prefix, "--host", "127.0.0.1", "--port", "0",
         "--port-file", str(port_file), *extra],
        env=env, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + HANG_GUARD
    while not port_file.exists():
        if proc.poll() is not None:
            raise AssertionError("server exited: "
                                 + (tmp_path / f"server-{name}.log").read_text()[-2000:])
        if time.monotonic() >= deadline:  # not left running: a supervisor takes its copies
            proc.kill()
            proc.wait()
            raise AssertionError("server did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


@contextlib.contextmanager
def served_server(redis_url: str, prefix: str, tmp_path: Path, name: str,
                  *args: str) -> Iterator[int]:
    """A ``rummy serve`` process (:func:`start_server`, extra ``args``) for the ``with``
    block; yields its port and stops it after (SIGTERM, then SIGKILL after 10 s)."""
    proc, port = start_server(redis_url, prefix, tmp_path, name, *args)
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_log(tmp_path: Path, name: str) -> str:
    """What server ``name`` wrote to stderr so far."""
    return (tmp_path / f"server-{name}.log").read_text(errors="replace")


class RewindableRedis:
    """A private ``redis-server`` with an append-only file (:func:`start_redis`): ``save()``
    copies its data; ``rewind()`` kills it and starts it again on that copy, a Redis
    restarted from an older file, as a failover to a replica that lagged also leaves it.
    ``url`` is where it listens; :meth:`stop` kills it."""

    def __init__(self, data: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._live, self._saved = data / "live", data / "saved"
        self._live.mkdir()
        self._procs = [start_redis(self.port, self._live)]

    def save(self) -> None:
        shutil.rmtree(self._saved, ignore_errors=True)
        shutil.copytree(self._live, self._saved)

    def rewind(self) -> None:
        self._procs[-1].kill()
        self._procs[-1].wait()
        shutil.rmtree(self._live)
        shutil.copytree(self._saved, self._live)
        self._procs.append(start_redis(self.port, self._live))

    def stop(self) -> None:
        for p in self._procs:
            p.kill()
            p.wait()


@contextlib.asynccontextmanager
async def store_on_rewindable_redis(data: Path, prefix: str
                                    ) -> AsyncIterator[tuple[RewindableRedis, Any]]:
    """A :class:`RewindableRedis` under ``data`` and a ``RedisEventStore`` on it under
    ``prefix``; the store is closed and the Redis killed on exit."""
    from rummy_store import RedisEventStore

    redis_server = RewindableRedis(data)
    store = RedisEventStore.from_url(redis_server.url, prefix=prefix)
    try:
        yield redis_server, store
    finally:
        await store.close()
        redis_server.stop()
