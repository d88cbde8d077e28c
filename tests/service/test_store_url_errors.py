"""One clear error for every store URL a command cannot use (found by a tester on a fresh
clone): no password in the text, no traceback, and no silent in-memory store where a
shared one is needed."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _rummy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy_cli", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", [("export", "g"), ("replay", "g")])
def test_a_malformed_url_never_shows_its_password(command: tuple[str, ...]) -> None:
    res = _rummy(*command, "--redis-url", "redis:/:secretpass@h")
    assert res.returncode != 0
    assert "secretpass" not in res.stderr + res.stdout
    assert "unknown event store url scheme 'redis' (no '://')" in res.stderr


def test_serve_refuses_a_malformed_url_without_its_password() -> None:
    res = _rummy("serve", "--redis-url", "redis:/:secretpass@h", "--port", "0")
    assert res.returncode == 2 and "secretpass" not in res.stderr + res.stdout
    assert "unknown event store url scheme 'redis' (no '://')" in res.stderr


@pytest.mark.parametrize("flags, needle", [
    (("--processes", "2"), "--processes needs a shared store"),
    (("--read-feed",), "--read-feed needs the Redis store"),
])
def test_serve_refuses_memory_where_a_shared_store_is_needed(flags: tuple[str, ...],
                                                             needle: str) -> None:
    res = _rummy("serve", "--redis-url", "memory://", "--port", "0", *flags)
    assert res.returncode == 2 and needle in res.stderr


def test_serve_names_an_unreachable_cluster_in_one_line() -> None:
    res = _rummy("serve", "--redis-url", "redis+cluster://127.0.0.1:1", "--port", "0")
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    assert "error: the event store at redis+cluster://127.0.0.1:1 is unreachable" in res.stderr
