"""Shared fixtures and helpers for the test suite, and the harness rules every run keeps.

* The test Redis is resolved when this file is loaded (before any other conftest or test
  module copies ``REDIS_URL``): the one at ``RUMMY_TEST_REDIS_URL`` (default
  ``redis://127.0.0.1:6379/0``) if it answers, else a private ``redis-server`` started on a
  free port for the session (``tests/redis_helpers.py``). Without either, the tests that
  need Redis fail with the command that starts one; they never skip.
* Every test that needs Redis carries the ``needs_redis`` marker, given here (not by hand),
  so ``make test-fast`` (``-m "not needs_redis and not slow and not chaos"``) cannot drift:
  every test of a directory in :data:`SERVER_DIRS`, every test marked ``redis``, every test
  using a Redis fixture (:data:`REDIS_FIXTURES`). A test that reaches the test Redis through
  ``redis_unreachable()`` without the marker fails (it would run in test-fast otherwise),
  and ``tests/unit/test_harness.py`` checks that every test directory is listed in
  :data:`SERVER_DIRS` or :data:`FAST_DIRS`.
* A skip whose reason is a missing Redis or redis-server is turned into a failure; under
  ``CI=true`` so is a skip for a missing Node.js/npm (``tests/harness.py``).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from rummy.bots import make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.state import GAME_OVER
from rummy.views import view
from tests import redis_helpers

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "conformance" / "cases"

redis_helpers.ensure_test_redis()  # before any other conftest or test module is imported

#: directories of tests/ whose every test needs Redis or starts Redis servers (the game
#: service over Redis, the Celery workers, the Redis Cluster store)
SERVER_DIRS = frozenset({"service", "workers", "cluster"})
#: directories whose tests need no server, except those marked ``needs_redis`` or ``redis``
#: or using a fixture of :data:`REDIS_FIXTURES` (the Redis half of the contract suite, the
#: live tour of the README)
FAST_DIRS = frozenset({"unit", "solver", "conformance", "property", "golden", "record", "rl",
                       "contract", "deploy", "node"})
#: fixtures that hand a test the test Redis or a private redis-server
REDIS_FIXTURES = frozenset({"redis_url", "redis_prefix", "redis_store", "secured",
                            "password_file", "cluster_url", "rclient"})

#: skip reasons of a missing Redis or redis-server: turned into failures
REDIS_SKIP = re.compile(r"redis.*(unreachable|not installed|not on path)|no redis at",
                        re.IGNORECASE)


def pytest_configure(config: pytest.Config) -> None:
    """Register the harness's markers (pyproject.toml lists them too)."""
    config.addinivalue_line("markers", "needs_redis: needs the test Redis or a redis-server "
                            "(given by tests/conftest.py; make test-fast leaves these out)")


def pytest_report_header(config: pytest.Config) -> str:  # noqa: ARG001
    """Which Redis the tests use (and whether this session started it)."""
    if redis_helpers.private_server() is not None:
        return (f"test Redis: {redis_helpers.REDIS_URL} (a private redis-server started for "
                "this session: nothing answered at RUMMY_TEST_REDIS_URL/127.0.0.1:6379)")
    return f"test Redis: {redis_helpers.REDIS_URL}"


def pytest_unconfigure(config: pytest.Config) -> None:  # noqa: ARG001
    """Stop the private redis-server, if this session started one."""
    redis_helpers.stop_private_redis()


def tests_dir_of(item: pytest.Item) -> str:
    """The directory of tests/ an item belongs to (``""`` for tests/ itself)."""
    rel = Path(str(item.fspath)).resolve().relative_to(ROOT / "tests")
    return rel.parts[0] if len(rel.parts) > 1 else ""


def needs_redis(item: pytest.Item) -> bool:
    """Whether ``item`` needs the test Redis or a redis-server (see the module docstring)."""
    return (tests_dir_of(item) in SERVER_DIRS or item.get_closest_marker("redis") is not None
            or item.get_closest_marker("needs_redis") is not None
            or not REDIS_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give ``needs_redis`` to every test that needs Redis (before ``-m`` selects)."""
    for item in items:
        if needs_redis(item) and item.get_closest_marker("needs_redis") is None:
            item.add_marker(pytest.mark.needs_redis)


@pytest.hookimpl(tryfirst=True)  # before the fixtures are set up
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tell :func:`tests.redis_helpers.redis_unreachable` whether this test may use Redis."""
    redis_helpers.current_test_may_use_redis(item.get_closest_marker("needs_redis") is not None,
                                             item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # noqa: ARG001
    """A skip for a missing Redis/redis-server (or, under ``CI=true``, a missing Node.js or
    npm package) is a failure: a run without them must not pass."""
    outcome = yield
    report = outcome.get_result()
    if (not report.skipped or hasattr(report, "wasxfail")
            or not isinstance(report.longrepr, tuple)):
        return
    reason = str(report.longrepr[2])
    from tests.harness import ci_forbids_skip

    if REDIS_SKIP.search(reason) or ci_forbids_skip(reason):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid}: skipped for a missing dependency, which fails the "
                           f"run: {reason}")


def play_random_game(seed: int, players: int = 3, bots: tuple[str, ...] | None = None,
                     rules: RuleSet | None = None, max_steps: int = 100_000):
    """Play one bot game; returns (final_state, events, states_after_each_command)."""
    bots = bots or tuple(random.Random(seed).choice(["random", "basic"]) for _ in range(players))
    agents = [make_bot(b, seed + i) for i, b in enumerate(bots)]
    state, events = step(None, CreateGame(players, seed, rules or RuleSet(), tuple(bots)))
    log = list(events)
    states = [state]
    n = 0
    while state.phase != GAME_OVER and n < max_steps:
        state, events = step(state, agents[state.turn].act(view(state, state.turn)))
        log.extend(events)
        states.append(state)
        n += 1
    return state, log, states


@pytest.fixture
def cases_dir() -> Path:
    return CASES


@pytest.fixture
def pg_archive():
    """``(url, schema)`` of the test PostgreSQL (``RUMMY_TEST_PG_URL``, default
    127.0.0.1:5432, database ``test``) with a schema of this test's own, dropped after it.
    Fails (never skips) when PostgreSQL is unreachable: ``.ci/run`` starts one."""
    from tests import pg_helpers
    why = pg_helpers.pg_unreachable()
    if why:
        pytest.fail(why + " (start one: apt-get install postgresql; see .ci/run)")
    schema = pg_helpers.fresh_schema()
    yield pg_helpers.PG_URL, schema
    pg_helpers.drop_schema(schema)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    """After a run that included ``chaos`` tests (``make chaos``): one table of what each
    fault or flood test held and measured (its ``record_property`` values: load held,
    faults survived, events lost, leaks)."""
    rows = []
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", "call") != "call" or "chaos" not in report.keywords:
                continue
            props = ", ".join(f"{k}={v}" for k, v in report.user_properties)
            name = report.nodeid.split("::")[-1]
            rows.append((outcome.upper(), f"{report.duration:6.1f}s", name, props or "-"))
    if not rows:
        return
    terminalreporter.section("chaos summary: faults and floods on real processes")
    width = max(len(r[2]) for r in rows)
    for outcome, seconds, name, props in rows:
        terminalreporter.write_line(f"{outcome:6} {seconds} {name:<{width}}  {props}")
    failed = sum(r[0] != "PASSED" for r in rows)
    terminalreporter.write_line(f"{len(rows) - failed} of {len(rows)} faults survived; "
                                "events lost and leaks are 0 in every passing row")
