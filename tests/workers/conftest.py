"""Fixtures of the worker tests: the real Redis, real Celery worker processes.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

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
needs_redis = pytest.mark.skipif(not REDIS_UP, reason=f"no Redis at {REDIS_URL}")


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        if "workers" in str(item.fspath) and "redis" in item.keywords and not REDIS_UP:
            item.add_marker(pytest.mark.skip(reason=f"no Redis at {REDIS_URL}"))


@pytest.fixture(scope="session")
def celery_app() -> Any:
    """The app, configured for this session whatever imported it first."""
    from rummy_worker.celery_app import app

    opts = dict(app.conf.broker_transport_options or {})
    opts.update(visibility_timeout=4, unacked_restore_interval=1, unacked_restore_throttle=1,
                global_keyprefix=BROKER_PREFIX)
    app.conf.broker_transport_options = opts
    app.conf.broker_url = REDIS_URL
    yield app
    _delete_keys(BROKER_PREFIX)


@pytest.fixture()
def rclient() -> Any:
    """A sync client of the test Redis (``decode_responses=True``)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    yield client
    client.close()


def _delete_keys(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    for i in range(0, len(keys), 500):
        client.delete(*keys[i:i + 500])
    client.close()


@pytest.fixture()
def prefix() -> Iterator[str]:
    """A test-unique key prefix for batch state and the event store (deleted afterwards)."""
    p = f"rummy-test-{SESSION}-{uuid.uuid4().hex[:8]}"
    yield p
    _delete_keys(p)


@pytest.fixture()
def store(prefix: str, rclient: Any) -> Any:
    """A :class:`BatchStore` under the test prefix."""
    from rummy_worker.batches import BatchStore

    return BatchStore(rclient, prefix)


class Worker:
    """A real ``celery worker`` process group on one queue (killable with signals)."""

    def __init__(self, queue: str, concurrency: int, env: dict[str, str], log: Path,
                 name: str) -> None:
        self.queue = queue
        self.log = log
        cmd = [sys.executable, "-m", "celery", "-A", "rummy_worker.celery_app", "worker",
               "-Q", queue, "-c", str(concurrency), "-P", "prefork", "-n", f"{name}@%h",
               "--without-gossip", "--without-mingle", "--without-heartbeat",
               "-l", "info"]
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


@pytest.fixture()
def start_worker(tmp_path: Path, prefix: str) -> Iterator[Callable[..., Worker]]:
    """``start_worker(queue, concurrency=1, env=None) -> Worker``; all stopped afterwards.
    Workers record sampled games under the test prefix in the test Redis."""
    started: list[Worker] = []

    def start(queue: str, concurrency: int = 1, env: dict[str, str] | None = None) -> Worker:
        e = worker_env({"RUMMY_EVENT_STORE_URL": REDIS_URL,
                        "RUMMY_EVENT_STORE_PREFIX": prefix, **(env or {})})
        w = Worker(queue, concurrency, e, tmp_path / f"worker-{len(started)}.log",
                   f"{queue}-{len(started)}")
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


@pytest.fixture()
def queue() -> str:
    """A test-unique queue name."""
    return f"rummy-test-{SESSION}-{uuid.uuid4().hex[:8]}"


def wait_complete(store: Any, batch_id: str, timeout: float = 60.0,
                  workers: list[Worker] | None = None) -> None:
    """Wait until every chunk of the batch is stored; fail with the workers' logs if not."""
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
