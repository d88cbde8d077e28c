"""The whole event-store contract against a Redis that demands credentials: a private
``redis-server`` (a free port) whose default user is off and whose ACL user ``rummy`` has a
password; once over plain TCP, once over TLS only (``rediss://``, a throwaway CA).

The stores of ``store_factory`` get the password from a secret file
(``RUMMY_REDIS_PASSWORD_FILE``, the URL has only the user); ``limited_store`` has it in the
URL. Also: a wrong password is a clear ``AuthenticationError`` whose text never holds the
password. The fixtures ``secured`` and ``password_file`` are in ``conftest.py``; the command
line and Celery against the same servers are in ``test_redis_credentials_cli.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
import redis
from rummy_store import EventStore, RedisEventStore
from rummy_store.contract import *  # noqa: F403 - the contract's tests and pytestmark

from tests.private_redis import WRONG_PASSWORD as WRONG
from tests.private_redis import PrivateRedis
from tests.private_redis import environ_for as _environ


def _timeouts(secured: PrivateRedis) -> dict[str, float]:
    """TLS: fifty clients' handshakes at once on a busy 2-core machine may take longer than
    redis-py's default connect timeout; the contract is not about handshake speed."""
    return {"socket_connect_timeout": 30.0, "socket_timeout": 30.0} if secured.tls else {}


@pytest_asyncio.fixture
async def store_factory(secured: PrivateRedis,
                        password_file: Path) -> AsyncIterator[Callable[[], EventStore]]:
    """Stores on the secured Redis, each on its own client; the password from a file."""
    prefix = f"rummytest:{uuid.uuid4().hex}"
    url = secured.url(password="")  # the user only: the secret file gives the password
    env = _environ(secured, password_file)
    opened: list[RedisEventStore] = []

    def make() -> EventStore:
        store = RedisEventStore.from_url(url, prefix=prefix, environ=env, **_timeouts(secured))
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for s in opened:
            await s.close()


@pytest_asyncio.fixture
async def store(store_factory: Callable[[], EventStore]) -> EventStore:
    """One store on the secured Redis."""
    return store_factory()


@pytest_asyncio.fixture
async def limited_store(secured: PrivateRedis) -> AsyncIterator[EventStore]:
    """A store with 0.4 s idle expiry and request window; the password in the URL."""
    store = RedisEventStore.from_url(secured.url(), prefix=f"rummytest:{uuid.uuid4().hex}",
                                     idle_ttl=0.4, request_ttl=0.4,
                                     environ=_environ(secured))
    try:
        yield store
    finally:
        await store.close()


# --------------------------------------------------------------------------- beyond the contract

async def test_the_default_user_and_no_password_are_refused(secured: PrivateRedis) -> None:
    store = RedisEventStore.from_url(secured.url(user="", password=""), prefix="rummytest",
                                     environ=_environ(secured))
    try:
        with pytest.raises(redis.exceptions.AuthenticationError):
            await store.read("g1")
    finally:
        await store.close()


async def test_a_wrong_password_is_a_clear_error_without_the_password(
        secured: PrivateRedis, tmp_path: Path) -> None:
    wrong_file = tmp_path / "wrong"
    wrong_file.write_text(WRONG, encoding="utf-8")
    for url, env in ((secured.url(password=WRONG), _environ(secured)),
                     (secured.url(password=""), _environ(secured, wrong_file))):
        store = RedisEventStore.from_url(url, prefix="rummytest", environ=env)
        try:
            with pytest.raises(redis.exceptions.AuthenticationError) as info:
                await store.append("g1", [{"type": "Passed", "v": 1, "seat": 0}], 0)
        finally:
            await store.close()
        text = f"{info.value!r} {info.value}"
        assert "invalid username-password pair" in text
        assert WRONG not in text and secured.password not in text


async def test_a_url_password_wins_over_the_file(secured: PrivateRedis, tmp_path: Path) -> None:
    wrong_file = tmp_path / "wrong"
    wrong_file.write_text(WRONG, encoding="utf-8")
    store = RedisEventStore.from_url(secured.url(), prefix=f"rummytest:{uuid.uuid4().hex}",
                                     environ=_environ(secured, wrong_file))
    try:
        assert (await store.append("g1", [{"type": "Passed", "v": 1, "seat": 0}], 0)).version == 1
    finally:
        await store.close()
