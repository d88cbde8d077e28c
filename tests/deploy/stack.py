"""The compose stack of ``deploy/compose.yaml`` run with podman for the ``deploy`` tests.

:class:`Stack` builds the service and worker images (``podman-compose build``), starts the
services users start (``podman-compose up -d``), runs the health checks the files declare
and tears everything down with its volumes. Grafana is left out: its image comes only from a
registry, which these machines do not reach (its files are checked statically).

Images: the official ones unless ``RUMMY_BASE_IMAGE``, ``RUMMY_REDIS_IMAGE`` and
``RUMMY_PROMETHEUS_IMAGE`` name others (``make deploy-test`` sets them to the images
``deploy/local-base.sh`` builds from Debian packages). Every published host port is a free
port of this machine (``RUMMY_*_PORT``, see the compose file), so a local Redis on 6379 or
another stack does not clash.

Health checks: podman runs a container's health check from a systemd timer; without systemd
(a container host such as this one) nothing runs them, so :meth:`Stack.run_healthchecks`
does, as Docker's engine would, and a background thread repeats it every few seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from .conftest import DEPLOY

COMPOSE_FILE = DEPLOY / "compose.yaml"
#: the services started: every one of the compose file but Grafana (registry-only image)
SERVICES = ("redis-events", "broker", "service", "worker", "prometheus")
#: the published ports a test reaches, by their compose variable
PORT_VARS = ("RUMMY_REDIS_PORT", "RUMMY_GRPC_PORT", "RUMMY_METRICS_PORT",
             "RUMMY_PROMETHEUS_PORT", "RUMMY_GRAFANA_PORT")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def podman_compose() -> list[str]:
    """The ``podman-compose`` command: the one beside this interpreter (the ``deploy``
    extra), else the one on PATH."""
    here = Path(sys.executable).with_name("podman-compose")
    if here.exists():
        return [str(here)]
    found = shutil.which("podman-compose")
    if found is None:
        raise RuntimeError("podman-compose is not installed (pip install '.[deploy]')")
    return [found]


def run(argv: list[str], *, timeout: float = 120, check: bool = True,
        env: dict[str, str] | None = None, cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; raises ``AssertionError`` with its output when ``check`` and it fails."""
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                         env=env, cwd=cwd)
    if check and res.returncode != 0:
        raise AssertionError(f"{argv} exited {res.returncode}:\n{res.stdout}\n{res.stderr}")
    return res


class Stack:
    """One running copy of the compose stack under the project name ``project``."""

    def __init__(self, project: str, log_dir: Path) -> None:
        self.project = project
        self.log_dir = log_dir
        self.ports = {var: free_port() for var in PORT_VARS}
        self.env = {**os.environ, **{k: str(v) for k, v in self.ports.items()}}
        self.timings: dict[str, float] = {}
        self._stop = threading.Event()
        self._checker: threading.Thread | None = None
        #: games played by batches on the workers so far (the metrics test sums them)
        self.batch_games = 0

    # ---- compose
    def compose(self, *args: str, timeout: float = 300,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        """``podman-compose -p PROJECT -f deploy/compose.yaml ARGS``."""
        return run([*podman_compose(), "-p", self.project, "-f", str(COMPOSE_FILE), *args],
                   timeout=timeout, check=check, env=self.env)

    def build(self) -> None:
        """Build the service and worker images as compose does (``build:`` sections), then
        remove the images these tags named before, when nothing else names or uses them
        (each source change makes new ones; a machine that runs this often fills up)."""
        tags = ("localhost/rummy-service:dev", "localhost/rummy-worker:dev")
        old = {t: self._image_id(t) for t in tags}
        t0 = time.monotonic()
        self.compose("build", "service", "worker", timeout=1800)
        self.timings["build"] = time.monotonic() - t0
        for tag, image in old.items():
            if image and image != self._image_id(tag):
                run(["podman", "rmi", image], check=False)  # refused while in use: kept
        for stage in ("service", "worker"):  # the build stages of older sources
            stale = run(["podman", "images", "-q", "--filter", "dangling=true", "--filter",
                         f"label=rummy.build-stage={stage}"]).stdout.split()[1:]  # newest kept
            if stale:
                run(["podman", "rmi", *stale], check=False)

    @staticmethod
    def _image_id(ref: str) -> str | None:
        res = run(["podman", "image", "inspect", "--format", "{{.Id}}", ref], check=False)
        return res.stdout.strip() or None if res.returncode == 0 else None

    def up(self, timeout: float = 300) -> None:
        """Start :data:`SERVICES` and wait until every container is running and healthy."""
        t0 = time.monotonic()
        self.compose("up", "-d", *SERVICES)
        self._checker = threading.Thread(target=self._check_health_forever, daemon=True)
        self._checker.start()
        self.wait_healthy(timeout=timeout)
        self.timings["up"] = time.monotonic() - t0

    def down(self) -> None:
        """Keep every container's log in ``log_dir``, then remove containers and volumes."""
        self._stop.set()
        if self._checker is not None:
            self._checker.join(timeout=30)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for name in self.containers():
            logs = run(["podman", "logs", name], check=False, timeout=60)
            (self.log_dir / f"{name}.log").write_text(logs.stdout + logs.stderr)
        self.compose("down", "-v", "-t", "20", check=False, timeout=300)

    # ---- containers
    def containers(self, service: str | None = None, *, running: bool = False) -> list[str]:
        """Names of this project's containers (of ``service``), sorted."""
        argv = ["podman", "ps", "--format", "{{.Names}}",
                "--filter", f"label=com.docker.compose.project={self.project}"]
        if service:
            argv += ["--filter", f"label=com.docker.compose.service={service}"]
        if not running:
            argv.append("-a")
        return sorted(n for n in run(argv).stdout.split() if n)

    def inspect(self, name: str) -> dict[str, Any]:
        """``podman inspect`` of container ``name``."""
        out: list[dict[str, Any]] = json.loads(run(["podman", "inspect", name]).stdout)
        return out[0]

    def exec(self, name: str, *argv: str, timeout: float = 300,
             check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in container ``name`` (as its user)."""
        return run(["podman", "exec", name, *argv], timeout=timeout, check=check)

    def run_healthchecks(self) -> dict[str, str]:
        """Run each running container's declared health check once; name -> status."""
        status = {}
        for name in self.containers(running=True):
            res = run(["podman", "healthcheck", "run", name], check=False, timeout=60)
            status[name] = "healthy" if res.returncode == 0 else (
                res.stdout + res.stderr).strip() or "unhealthy"
        return status

    def _check_health_forever(self) -> None:
        while not self._stop.wait(5):
            try:
                self.run_healthchecks()
            except Exception:  # a container removed mid-check: the next round sees it
                pass

    def wait_healthy(self, timeout: float = 300) -> None:
        """Wait until every container of :data:`SERVICES` runs and passes its check."""
        deadline = time.monotonic() + timeout
        while True:
            names = self.containers()
            status = self.run_healthchecks()
            bad = {n: status.get(n, "not running") for n in names if status.get(n) != "healthy"}
            services = {self.inspect(n)["Config"]["Labels"]["com.docker.compose.service"]
                        for n in names}
            if not bad and services >= set(SERVICES):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"not healthy after {timeout} s: {bad}")
            time.sleep(2)

    # ---- endpoints
    def url(self, var: str, path: str = "") -> str:
        """``http://127.0.0.1:<published port of var><path>``."""
        return f"http://127.0.0.1:{self.ports[var]}{path}"

    def get_json(self, var: str, path: str) -> Any:
        """GET a published HTTP endpoint and parse its JSON."""
        with urllib.request.urlopen(self.url(var, path), timeout=10) as r:
            return json.loads(r.read().decode())
