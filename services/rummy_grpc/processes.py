"""``rummy serve --processes N``: N server processes behind one port (``SO_REUSEPORT``).

One Python process runs one event loop on one core. With ``--processes N`` the command
becomes a small supervisor: it starts N copies of ``rummy serve`` (the same flags, one
process each, all bound to the same port with ``SO_REUSEPORT``, so the kernel spreads new
connections across them), writes the port file once all of them serve, forwards SIGTERM and
SIGINT, and starts a copy again (after a back-off) when one dies. The first copy starts
alone, and the others once it serves: the first start after an install compiles the solver
bots' kernels (:mod:`rummy_grpc.warmup`, about 35 s of one core), and the copies after it
load them from numba's on-disk cache in about a second instead of each compiling them.
The copies are ordinary replicas: they share nothing but the event store (games, due bot
turns and turn deadlines live there), so any copy serves any game. gRPC keeps one HTTP/2
connection per channel, so spread load by opening several channels (or use a proxy that
balances per request).

Needs a shared store (``--redis-url``): N in-memory stores would be N separate services.
Each copy's Prometheus endpoint is ``--metrics-port`` + its index (``--metrics-port 0``: a
free port each, in its log). On Linux a copy gets SIGTERM when the supervisor dies, even by
SIGKILL, so no unsupervised copy keeps the port. A copy that has served a minute restarts
after 1 s again; a back-off is cut short by SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: seconds a copy must have served for its restart back-off to start again from 1 s
STABLE_SECONDS = 60.0

START_TIMEOUT = 600.0
"""Most seconds to wait for a starting server process to serve (write its port file).
The first start after an install compiles the solver bots' kernels before the server
serves: about 35 s of one core on an idle machine, several times that under load. A server
process that is still alive after this long is taken to hang."""


def _die_with_parent() -> None:
    """In a copy, before it runs (Linux): be sent SIGTERM when the supervisor dies, even by
    SIGKILL, so no unsupervised copy keeps the port."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _sleep(seconds: float, stop: Callable[[], bool]) -> None:
    """Sleep ``seconds`` in short steps, ending early once ``stop()`` is true."""
    end = time.monotonic() + seconds
    while not stop() and time.monotonic() < end:
        time.sleep(min(0.1, max(0.0, end - time.monotonic())))

#: flags that the supervisor sets per copy (value-taking; dropped from the copied argv)
_PER_COPY = ("--processes", "--port", "--port-file", "--metrics-port")


def copy_argv(argv: list[str]) -> list[str]:
    """The ``serve`` arguments of ``argv`` (everything after ``serve``) without the flags
    the supervisor sets per copy (:data:`_PER_COPY`, as ``--flag value`` or
    ``--flag=value``)."""
    rest = argv[argv.index("serve") + 1:] if "serve" in argv else list(argv)
    out: list[str] = []
    skip = False
    for arg in rest:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in _PER_COPY:
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def write_port_file(path: str, port: int) -> None:
    """Write ``port`` to ``path`` atomically (a reader never sees a partial file)."""
    part = path + ".tmp"
    with open(part, "w") as f:
        f.write(str(port))
    os.replace(part, path)


def wait_port_file(path: str | os.PathLike[str], proc: subprocess.Popen[bytes],
                   timeout: float = START_TIMEOUT) -> int:
    """Wait until the server process ``proc`` has written its ``--port-file`` ``path``
    (it does once it serves) and return the port in it.

    Args:
        path: the port file given to ``rummy serve --port-file``.
        proc: the ``rummy serve`` process.
        timeout: most seconds to wait (default :data:`START_TIMEOUT`).

    Raises:
        ChildProcessError: ``proc`` exited before it served (its exit code in the message).
        TimeoutError: it did not serve within ``timeout`` seconds (it is left running: the
            caller stops it).
    """
    file = Path(path)
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(FileNotFoundError, ValueError):
            return int(file.read_text())
        if proc.poll() is not None:
            raise ChildProcessError(f"the server exited with {proc.returncode} before it "
                                    f"wrote its port file {file}")
        if time.monotonic() >= deadline:
            raise TimeoutError(f"the server did not write its port file {file} within "
                               f"{timeout:.0f} s")
        time.sleep(0.05)


def free_port(host: str) -> int:
    """A TCP port free on ``host`` now (for ``--port 0`` with several processes)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host if host not in ("0.0.0.0", "::") else "", 0))
        return int(s.getsockname()[1])


def supervise(args: argparse.Namespace, argv: list[str] | None = None) -> int:
    """Run ``args.processes`` copies of ``rummy serve`` on one port until SIGTERM/SIGINT.

    Args:
        args: the parsed ``serve`` arguments (``processes``, ``host``, ``port``,
            ``port_file``, ``metrics_port``, ``redis_url``, ``store``).
        argv: the command line to copy (default ``sys.argv``).

    Returns:
        The exit code: 0 after a clean shutdown, 1 when a copy could not start, 2 for an
        unusable combination of flags.
    """
    n = args.processes
    if (args.store or ("redis" if args.redis_url else "memory")) != "redis":
        print("error: --processes > 1 needs a shared event store (--redis-url): "
              "in-memory stores would be separate services", file=sys.stderr)
        return 2
    if args.metrics_port and args.metrics_port + n - 1 > 65535:
        print(f"error: --metrics-port {args.metrics_port} with --processes {n}: copy i "
              f"serves metrics on --metrics-port + i, past 65535", file=sys.stderr)
        return 2
    port = args.port or free_port(args.host)
    base = copy_argv(list(sys.argv if argv is None else argv))
    tmp = Path(tempfile.mkdtemp(prefix="rummy-serve-"))
    stop = False

    def start(i: int) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "rummy_grpc", "serve", *base, "--port", str(port),
               "--processes", "1", "--reuse-port", "--port-file", str(tmp / f"port{i}")]
        if args.metrics_port is not None:  # 0: each copy takes a free port (it logs it)
            cmd += ["--metrics-port", str(args.metrics_port + i if args.metrics_port else 0)]
        return subprocess.Popen(cmd, preexec_fn=_die_with_parent  # noqa: PLW1509
                                if sys.platform.startswith("linux") else None)

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stop
        stop = True
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signum)

    def serving(count: int) -> int | None:
        """Wait until copies 0..count-1 serve: None, or the command's exit code when one
        died, a stop was asked for, or :data:`START_TIMEOUT` passed (all are stopped)."""
        deadline = time.monotonic() + START_TIMEOUT
        while not all((tmp / f"port{i}").exists() for i in range(count)):
            dead = [p for p in procs if p.poll() is not None]
            if stop or dead or time.monotonic() > deadline:
                asked = stop  # asked to stop while starting: not an error
                on_signal(signal.SIGTERM, None)
                for p in procs:
                    p.wait(30)
                print("stopped before every server process was serving" if asked else
                      f"error: {len(dead) or count} of {n} server processes did not start"
                      + ("" if dead else f" within {START_TIMEOUT:.0f} s"), file=sys.stderr)
                return 0 if asked else 1
            time.sleep(0.05)
        return None

    procs = [start(0)]  # alone first: it compiles the kernels the others then load
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        failed = serving(1)
        if failed is None:
            procs.extend(start(i) for i in range(1, n))
            failed = serving(n)
        if failed is not None:
            return failed
        print(f"serving rummy_api.v1.GameService on {args.host}:{port} with {n} processes "
              f"(SO_REUSEPORT)", flush=True)
        if args.port_file:
            write_port_file(args.port_file, port)
        restarts = [0] * n
        started = [time.monotonic()] * n
        waiting: set[int] = set()  # copies that died and wait for their back-off
        while not stop:
            time.sleep(0.2)
            for i, proc in enumerate(procs):
                if proc.poll() is None or stop:
                    continue
                if time.monotonic() - started[i] >= STABLE_SECONDS:
                    restarts[i] = 0  # it had served a while: a new failure, a short wait
                restarts[i] += 1
                delay = min(30.0, 0.5 * 2 ** min(restarts[i], 6))
                print(f"server process {i} exited with {proc.returncode}; starting it "
                      f"again in {delay:.1f} s", file=sys.stderr, flush=True)
                waiting.add(i)
                _sleep(delay, lambda: stop)
                if not stop:
                    (tmp / f"port{i}").unlink(missing_ok=True)
                    procs[i] = start(i)
                    started[i] = time.monotonic()
                    waiting.discard(i)
        codes = [p.wait(60) for i, p in enumerate(procs) if i not in waiting]
        return 0 if all(c in (0, -signal.SIGTERM, -signal.SIGINT) for c in codes) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["START_TIMEOUT", "copy_argv", "supervise", "wait_port_file", "write_port_file"]
