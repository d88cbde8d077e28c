"""``rummy serve --processes N`` (per host): N copies behind one port with
SO_REUSEPORT, each serving games of the shared Redis store; a killed copy is started again
while the others serve; ``--uvloop`` runs them on uvloop. Real processes only."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.processes import copy_argv, wait_port_file

from tests.chaos_helpers import ROOT, free_port, server_log, start_server
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

from .conftest import bots

pytestmark = [pytest.mark.timeout(120)]


def test_copies_get_every_flag_but_the_per_copy_ones() -> None:
    argv = ["rummy", "serve", "--redis-url", "redis://x", "--processes", "2", "--port=50051",
            "--port-file", "f", "--metrics-port", "9100", "--uvloop", "--read-feed"]
    assert copy_argv(argv) == ["--redis-url", "redis://x", "--uvloop", "--read-feed"]


def test_wait_port_file_returns_the_port_the_server_wrote(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    proc = subprocess.Popen([sys.executable, "-c", "import pathlib, sys, time; "
                             "time.sleep(0.3); pathlib.Path(sys.argv[1]).write_text('4242'); "
                             "time.sleep(60)", str(port_file)])
    try:
        assert wait_port_file(port_file, proc, HANG_GUARD) == 4242
    finally:
        proc.kill()
        proc.wait()


def test_wait_port_file_names_a_server_that_exited_or_did_not_serve(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    gone = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(ChildProcessError, match="exited with 3 before it wrote its port"):
        wait_port_file(port_file, gone, HANG_GUARD)
    hung = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(TimeoutError, match="did not write its port file .* within 0 s"):
            wait_port_file(port_file, hung, 0.2)
        assert hung.poll() is None  # left running: the caller stops it
    finally:
        hung.kill()
        hung.wait()


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.timeout(HANG_GUARD * 2 + 60)
async def test_the_first_copy_compiles_the_kernels_alone_and_the_others_load_them(
        tmp_path: Path) -> None:
    # found by CI: the first `rummy serve` after an install compiles the solver bots'
    # kernels (35 s of one core idle); the supervisor started every copy at once, so on a
    # 2-core machine N copies compiled side by side and missed its 60 s start limit
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"procs-{uuid.uuid4().hex[:8]}"
    port_file, log = tmp_path / "port", tmp_path / "sup.log"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_LOG_LEVEL="INFO", NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rummy_grpc", "serve", "--redis-url", REDIS_URL,
             "--prefix", prefix, "--host", "127.0.0.1", "--port", "0", "--processes", "2",
             "--port-file", str(port_file)], env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        await asyncio.to_thread(wait_port_file, port_file, proc, HANG_GUARD * 2)
        took = [float(s) for s in re.findall(r"warmed the .+? bots in ([0-9.]+) s",
                                             log.read_text())]
        assert len(took) == 2, log.read_text()
        # copy 0 compiled (tens of seconds); copy 1, started once copy 0 served, loaded
        # the compiled kernels from the cache (about a second)
        assert took[1] < took[0] / 3, took
    finally:
        proc.terminate()
        proc.wait(30)
        await delete_prefix(prefix)


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


async def _copies_up(pid: int, tmp_path: Path, n: int = 2) -> None:
    """Wait (the hang guard at most) until the supervisor ``pid`` has ``n`` copies running."""
    deadline = time.monotonic() + HANG_GUARD
    while len(_children(pid)) < n:
        assert time.monotonic() < deadline, server_log(tmp_path, "sup")
        await asyncio.sleep(0.1)


def _served(metrics_port: int) -> float:
    """Calls a copy has answered, from its Prometheus endpoint."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.decode().splitlines()
               if line.startswith("rummy_grpc_server_handled_total{"))


async def _play_on_new_channels(port: int, n: int) -> list[str]:
    """Create ``n`` bot games, each over a channel (a TCP connection) of its own."""
    games = []
    for i in range(n):
        async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            # wait_for_ready: a connection the kernel had queued on a copy that was just
            # killed is reset (SO_REUSEPORT), and the channel connects again, as a
            # client's retry would
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=bots("random", "random"), seed=i + 1), timeout=10, wait_for_ready=True)
            view = await stub.GetView(pb.GetViewRequest(game_id=created.game_id), timeout=10,
                                      wait_for_ready=True)
            assert view.view.version >= 2
            games.append(created.game_id)
    return games


@contextlib.asynccontextmanager
async def _supervisor(tmp_path: Path, *extra: str,
                      name: str = "sup") -> AsyncIterator[tuple[subprocess.Popen[bytes], int]]:
    """``rummy serve --processes 2 *extra`` over the test Redis with its two copies up:
    (supervisor process, port); killed and its keys deleted on exit."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"procs-{uuid.uuid4().hex[:8]}"
    proc, port = start_server(REDIS_URL, prefix, tmp_path, name, "--processes", "2", *extra)
    try:
        await _copies_up(proc.pid, tmp_path)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await delete_prefix(prefix)


async def _restarted(pid: int, victim: int, tmp_path: Path) -> None:
    """Wait (30 s at most) until the supervisor ``pid`` has replaced its copy ``victim``."""
    deadline = time.monotonic() + HANG_GUARD
    while victim in _children(pid) or len(_children(pid)) < 2:
        assert time.monotonic() < deadline, server_log(tmp_path, "sup")
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_two_uvloop_copies_share_one_port_and_survive_a_killed_one(
        tmp_path: Path) -> None:
    metrics = free_port(2)  # copy i serves metrics on metrics + i
    async with _supervisor(tmp_path, "--uvloop", "--metrics-port", str(metrics)) as (proc,
                                                                                    port):
        await _play_on_new_channels(port, 16)
        served = [_served(metrics), _served(metrics + 1)]
        assert all(s > 0 for s in served), served  # the kernel spread the connections
        # SIGKILL one copy: the port keeps serving, and the supervisor starts it again
        victim = _children(proc.pid)[0]
        os.kill(victim, signal.SIGKILL)
        games = await _play_on_new_channels(port, 6)
        assert len(games) == 6
        await _restarted(proc.pid, victim, tmp_path)
        assert "starting it again" in server_log(tmp_path, "sup")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert "Traceback" not in server_log(tmp_path, "sup")


@pytest.mark.asyncio
async def test_the_supervisor_s_death_takes_its_copies_and_metrics_port_0_is_not_port_1(
        tmp_path: Path) -> None:
    # found by an attack: SIGKILL of the supervisor left both copies serving, unsupervised,
    # and --metrics-port 0 gave copy 1 the port 0 + 1 = 1
    before = set(Path(tempfile.gettempdir()).glob("rummy-serve-*"))
    async with _supervisor(tmp_path, "--metrics-port", "0") as (proc, port):
        copies = _children(proc.pid)
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", 1)) != 0  # nothing serves metrics on port 1
        await _play_on_new_channels(port, 2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + HANG_GUARD
        while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in copies):
            assert time.monotonic() < deadline, "copies outlived their supervisor"
            await asyncio.sleep(0.1)
    # (a SIGKILLed supervisor cannot remove its directory; a SIGTERMed one does, below)
    async with _supervisor(tmp_path, name="sup2") as (proc, _port):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    after = set(Path(tempfile.gettempdir()).glob("rummy-serve-*"))
    assert len(after - before) <= 1  # only the SIGKILLed supervisor's


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.mark.asyncio
async def test_sigterm_during_a_restart_back_off_exits_at_once_and_cleanly(
        tmp_path: Path) -> None:
    # found by an attack: SIGTERM waited out the back-off (up to 30 s) and exited 1,
    # counting the dead copy's SIGKILL
    async with _supervisor(tmp_path) as (proc, _port):
        for _ in range(3):  # one copy dies three times in a row: back-offs 1, 2, 4 s
            victim = max(_children(proc.pid))  # the newest: the same copy each time
            os.kill(victim, signal.SIGKILL)
            await _restarted(proc.pid, victim, tmp_path)
        os.kill(max(_children(proc.pid)), signal.SIGKILL)
        await asyncio.sleep(0.5)  # the supervisor is in its 8 s back-off now
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        # it did not wait out the back-off: it exited before the 7.5 s left of it ended
        # (how much sooner is the machine's load, not a criterion)
        assert time.monotonic() - t0 < 7.5
        assert "again in 8.0 s" in server_log(tmp_path, "sup")
