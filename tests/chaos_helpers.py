"""Real processes for fault tests: a private ``redis-server`` (optionally with an
append-only file, so it can be SIGKILLed and started again on the same data) and ``rummy
serve`` in its own process. Shared by the service suite's outage, replica and flood tests
(``make chaos`` runs the ones marked ``chaos``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ADMIN_TOKEN = "test-admin-token"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    deadline = time.monotonic() + 5
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
        AssertionError: the server exited or did not start within 20 s.
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
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if proc.poll() is not None:
            raise AssertionError("server exited: "
                                 + (tmp_path / f"server-{name}.log").read_text()[-2000:])
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def server_log(tmp_path: Path, name: str) -> str:
    """What server ``name`` wrote to stderr so far."""
    return (tmp_path / f"server-{name}.log").read_text(errors="replace")
