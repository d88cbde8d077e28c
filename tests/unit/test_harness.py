"""The test harness keeps its promises: ``make test-fast`` selects by marker every test
that needs no server (and no slow or chaos test), a missing Redis fails instead of
skipping (a private ``redis-server`` is started when nothing answers), and a test that
uses Redis without the ``needs_redis`` marker fails."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import conftest, harness, redis_helpers
from tests.private_redis import START_COMMAND

ROOT = Path(__file__).resolve().parents[2]
FAST = "not needs_redis and not slow and not chaos"
SMALL_SERVICE_TEST = "tests/service/test_play.py::test_two_clients_play_a_full_game"


def _pytest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p",
                           "no:cacheprovider", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env, check=False)


def test_every_test_directory_is_classified() -> None:
    """A new directory of tests must be listed as needing servers or not (conftest.py)."""
    dirs = {p.parent.relative_to(ROOT / "tests").parts[0]
            for p in (ROOT / "tests").glob("*/**/test_*.py")}
    assert conftest.SERVER_DIRS.isdisjoint(conftest.FAST_DIRS)
    assert dirs - conftest.SERVER_DIRS - conftest.FAST_DIRS == set()


def test_make_test_fast_selects_by_the_markers() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"FAST_MARKERS := {FAST}\n" in makefile
    recipe = makefile.split("\ntest-fast:", 1)[1].split("\n\n", 1)[0]
    assert '-m pytest -q -m "$(FAST_MARKERS)"' in recipe
    assert "tests/" not in recipe  # no directory list to drift


def test_the_fast_selection_has_the_solver_tests_and_no_server_or_slow_test() -> None:
    out = _pytest("--collect-only", "-q", "-m", FAST)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    top = {i.split("/")[1] for i in ids}
    assert {"solver", "unit", "conformance", "property"} <= top
    assert top.isdisjoint(conftest.SERVER_DIRS)
    slow = _pytest("--collect-only", "-q", "-m", f"({FAST}) and slow")
    assert re.search(r"no tests collected|0 selected|deselected", slow.stdout)
    assert not [line for line in slow.stdout.splitlines() if "::" in line]


def test_a_test_using_redis_without_the_marker_fails() -> None:
    redis_helpers.current_test_may_use_redis(False, "tests/x.py::test_unmarked")
    try:
        with pytest.raises(pytest.fail.Exception, match="not marked needs_redis"):
            redis_helpers.redis_unreachable()
    finally:
        redis_helpers.current_test_may_use_redis(True, "")


@pytest.mark.parametrize(("reason", "fails"), [
    ("Redis at redis://127.0.0.1:6379/0 is unreachable: Error 111", True),
    ("redis-server is not installed", True),
    ("redis-server and redis-cli not on PATH: cannot start a local Redis Cluster", True),
    ("no Redis at redis://127.0.0.1:6379/1", True),
    ("redis-server was built without TLS", False),
    ("no RabbitMQ on 127.0.0.1:5672", False),
])
def test_a_skip_for_a_missing_redis_is_a_failure(reason: str, fails: bool) -> None:
    assert bool(conftest.REDIS_SKIP.search(reason)) is fails


def test_ci_turns_a_missing_npm_into_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = "run `npm ci --prefix tests/node` first"
    monkeypatch.delenv("CI", raising=False)
    assert not harness.ci_forbids_skip(reason)
    monkeypatch.setenv("CI", "true")
    assert harness.ci_forbids_skip(reason)
    assert harness.ci_forbids_skip("Node.js is not installed")
    assert not harness.ci_forbids_skip("no RabbitMQ on 127.0.0.1:5672")


@pytest.mark.needs_redis  # starts a private redis-server
def test_nothing_at_the_redis_url_starts_a_private_redis_and_the_test_runs() -> None:
    """RUMMY_TEST_REDIS_URL at a closed port: the service test still runs, on a private
    redis-server of the session (named in the header), and passes; it is not skipped."""
    env = dict(os.environ, RUMMY_TEST_REDIS_URL="redis://127.0.0.1:1/0")
    out = _pytest("-rA", SMALL_SERVICE_TEST, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "a private redis-server started for this session" in out.stdout
    assert f"PASSED {SMALL_SERVICE_TEST}" in out.stdout
    assert "1 passed" in out.stdout and "skipped" not in out.stdout


@pytest.mark.needs_redis
def test_no_redis_and_no_redis_server_fails_with_the_command(tmp_path: Path) -> None:
    """Nothing answers and redis-server is not on PATH: the test fails (no skip) and says
    how to start Redis."""
    bin_dir = tmp_path / "bin"  # PATH with python only
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    assert shutil.which("redis-server", path=str(bin_dir)) is None
    env = dict(os.environ, RUMMY_TEST_REDIS_URL="redis://127.0.0.1:1/0", PATH=str(bin_dir))
    out = _pytest(SMALL_SERVICE_TEST, env=env)
    assert out.returncode == 1, out.stdout[-3000:]
    assert "1 error" in out.stdout and "skipped" not in out.stdout
    assert START_COMMAND in out.stdout
