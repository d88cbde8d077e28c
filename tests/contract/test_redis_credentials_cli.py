"""``rummy export`` and Celery against a Redis that demands credentials (the private servers
of ``conftest.py``: an ACL user with a password, plain and TLS-only): the password comes from
a secret file or the URL, a wrong one is a clear one-line error that never prints it, and
Celery's broker, result backend and the batch state log in (and verify TLS) with the URLs and
options of ``rummy_worker.config``.

The commands run in subprocesses with this worktree's packages first on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from rummy_store.urls import REDIS_PASSWORD_FILE, redact_url

from tests.private_redis import WRONG_PASSWORD as WRONG
from tests.private_redis import PrivateRedis
from tests.private_redis import environ_for as _environ

pytestmark = [pytest.mark.timeout(120)]

REPO = Path(__file__).resolve().parents[2]
PYTHONPATH = os.pathsep.join(str(REPO / p) for p in (".", "services", "workers"))


def _python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=90,
                          check=False, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": PYTHONPATH, **env})


def _rummy(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _python(["-m", "rummy", *args], env)


def test_rummy_export_with_a_wrong_password_names_the_store_but_not_the_password(
        secured: PrivateRedis, tmp_path: Path) -> None:
    url = secured.url(password=WRONG)
    out = _rummy(["export", "some-game", "--redis-url", url], _environ(secured))
    assert out.returncode == 1
    assert "invalid username-password pair" in out.stderr, out.stderr
    assert redact_url(url) in out.stderr
    assert WRONG not in out.stderr + out.stdout


def test_rummy_export_reads_the_password_file(secured: PrivateRedis, password_file: Path,
                                              tmp_path: Path) -> None:
    from rummy_store import append_sync, encode_events

    from rummy import step
    from rummy.commands import CreateGame

    _, events = step(None, CreateGame(players=2, seed=3))
    game = f"acl-{uuid.uuid4().hex[:8]}"
    env = _environ(secured, password_file)
    os.environ.update(env)
    try:
        append_sync(secured.url(password=""), game, encode_events(events), 0)
    finally:
        for k in env:
            os.environ.pop(k, None)
    out = _rummy(["export", game, "--redis-url", secured.url(password="")], env)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line)["type"] for line in out.stdout.splitlines()][:2] == [
        "GameStarted", "RoundStarted"]


def test_a_missing_password_file_is_named_without_a_traceback(secured: PrivateRedis) -> None:
    out = _rummy(["export", "g", "--redis-url", secured.url(password="")],
                 {REDIS_PASSWORD_FILE: "/nonexistent/redis_password"})
    assert out.returncode == 1
    assert "RUMMY_REDIS_PASSWORD_FILE=/nonexistent/redis_password" in out.stderr
    assert "Traceback" not in out.stderr


_CELERY_PROBE = """
import json
from rummy_worker import config
from rummy_worker.celery_app import app
with app.connection_for_write() as conn:
    conn.ensure_connection(max_retries=1)
    with conn.SimpleQueue("rummytest-probe") as q:
        q.put({"ok": 1})
        got = q.get(timeout=5)
        got.ack()
app.backend.set("rummytest-probe-key", "yes")
print(json.dumps({"queue": got.payload, "backend": app.backend.get("rummytest-probe-key")
                  .decode(), "state": config.state_client().ping(),
                  "banner": app.connection_for_write().as_uri()}))
"""


def test_celery_broker_result_and_state_log_in_with_the_password_file(
        secured: PrivateRedis, password_file: Path) -> None:
    env = {
        "RUMMY_BROKER_URL": secured.url(password="", db=1),
        "RUMMY_RESULT_URL": secured.url(password="", db=2),
        "RUMMY_BROKER_PASSWORD_FILE": str(password_file),
        **_environ(secured),
    }
    out = _python(["-c", _CELERY_PROBE], env)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["queue"] == {"ok": 1} and got["backend"] == "yes" and got["state"] is True
    assert secured.password not in got["banner"]  # Celery's own URL printing masks it
