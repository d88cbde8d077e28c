"""Helpers of the worker tests: the real Redis, real Celery worker processes.

Isolation: every test session uses its own broker key prefix (``RUMMY_BROKER_KEYPREFIX``),
every test its own queue, batch-state prefix and event-store prefix, so tests never see
each other's (or anybody else's) keys; the keys are deleted afterwards. The Redis broker's
visibility timeout is short (4 s, swept every second) so a task whose worker was SIGKILLed
is delivered again quickly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from tests.harness import HANG_GUARD

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("RUMMY_TEST_REDIS_URL", "redis://127.0.0.1:6379/1")
SESSION = uuid.uuid4().hex[:8]
BROKER_PREFIX = f"rummy-test-{SESSION}:"

# Must be set before rummy_worker.celery_app is imported (it reads them at import).
os.environ.update({
    "RUMMY_BROKER_URL": REDIS_URL,
    "RUMMY_RESULT_URL": REDIS_URL,
    "RUMMY_STATE_URL": REDIS_URL,
    "RUMMY_BROKER_KEYPREFIX": BROKER_PREFIX,
    "RUMMY_VISIBILITY_TIMEOUT": "4",
    "RUMMY_BROKER_RESTORE_INTERVAL": "1",
    "RUMMY_TASK_SOFT_TIME_LIMIT": "120",
    "RUMMY_TASK_TIME_LIMIT": "150",
})


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except Exception:  # noqa: BLE001 - any failure means "no Redis here"
        return False


REDIS_UP = _redis_up()


def delete_keys(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    for i in range(0, len(keys), 500):
        client.delete(*keys[i:i + 500])
    client.close()


class Worker:
    """A real ``celery worker`` process group on one queue (killable with signals)."""

    def __init__(self, queue: str, concurrency: int, env: dict[str, str], log: Path,
                 name: str, rummy: bool = False) -> None:
        self.queue = queue
        self.log = log
        opts = ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        if rummy:  # `rummy worker`, as deployments run it
            cmd = [sys.executable, "-m", "rummy", "worker", "-Q", queue, "-c",
                   str(concurrency), "-n", f"{name}@%h", "-l", "INFO", "--", *opts]
        else:
            cmd = [sys.executable, "-m", "celery", "-A", "rummy_worker.celery_app", "worker",
                   "-Q", queue, "-c", str(concurrency), "-P", "prefork", "-n", f"{name}@%h",
                   *opts, "-l", "info"]
        self._logf = open(log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self._logf,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def children(self) -> list[int]:
        """Pids of the pool processes."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            return [int(x) for x in path.read_text().split()]
        except OSError:
            return []

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the whole process group (the main process and its pool)."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGKILL:
            self.proc.wait(10)

    def stop(self) -> None:
        """Warm shutdown, then SIGKILL after 10 s."""
        if self.proc.poll() is None:
            self.kill(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill(signal.SIGKILL)
        try:  # pool processes left behind by a SIGKILLed parent
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._logf.close()

    def output(self) -> str:
        """The worker's log so far."""
        return self.log.read_text(errors="replace")


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker process of this session."""
    env = dict(os.environ)
    paths = [str(ROOT), str(ROOT / "services"), str(ROOT / "workers")]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra or {})
    return env


def wait_complete(store: Any, batch_id: str, timeout: float = HANG_GUARD,
                  workers: list[Worker] | None = None) -> None:
    """Wait until every chunk of the batch is stored; fail with the workers' logs if not
    after ``timeout`` seconds (a hang guard, not a pass criterion: a batch that took 60 s
    on a machine at load 8 is still a correct batch)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = store.status(batch_id)
        if st.complete:
            return
        if st.failures:
            raise AssertionError(f"chunks failed: {st.failures}")
        time.sleep(0.1)
    logs = "\n".join(w.output()[-3000:] for w in workers or [])
    raise AssertionError(f"batch {batch_id} not complete after {timeout} s: "
                         f"{store.status(batch_id)}\n{logs}")
