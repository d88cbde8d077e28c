"""The whole event-store contract against a Redis that demands credentials: a private
``redis-server`` (a free port) whose default user is off and whose ACL user ``rummy`` has a
password; once over plain TCP, once over TLS only (``rediss://``, a throwaway CA).

The stores of ``store_factory`` get the password from a secret file
(``RUMMY_REDIS_PASSWORD_FILE``, the URL has only the user); ``limited_store`` has it in the
URL. Also: a wrong password is a clear ``AuthenticationError`` whose text never holds the
password. Then the permissions: :meth:`check_access` names the first command the store's user
may not run, and an append the script cannot finish is ``AppendInterrupted``. The fixtures
``secured`` and ``password_file`` are in ``conftest.py``; the command
line and Celery against the same servers are in ``test_redis_credentials_cli.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
import redis
from rummy_store import AppendInterrupted, EventStore, RedisEventStore, StoreAccessDenied
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


# --------------------------------------------------------------------------- permissions

def _user(secured: PrivateRedis, *rules: str) -> str:
    """A new ACL user of ``secured`` with the password of the test user, every key and
    channel, ``+@all`` and then ``rules``; returns its URL."""
    from urllib.parse import quote

    from rummy_store.urls import redis_tls_kwargs

    name = f"u{uuid.uuid4().hex[:10]}"
    admin = redis.Redis.from_url(secured.url(), **redis_tls_kwargs(secured.url(),
                                                                   _environ(secured)))
    try:
        admin.execute_command("ACL", "SETUSER", name, "on", f">{secured.password}", "~*",
                              "&*", "+@all", *rules)
    finally:
        admin.close()
    return (f"{secured.scheme}://{name}:{quote(secured.password, safe='')}@127.0.0.1:"
            f"{secured.port}/0")


@pytest.mark.parametrize(("rules", "named"), [
    (("-publish",), "PUBLISH rummytest:"),          # the append script's last command
    (("-xadd",), "XADD rummytest:"),                # inside the append script
    (("-evalsha",), "EVALSHA"),
    (("-subscribe",), "SUBSCRIBE rummytest:"),      # the append feed
    (("-zrangebyscore",), "ZRANGEBYSCORE rummytest:"),  # inside the claim script
    (("resetchannels",), "PUBLISH rummytest:"),     # no channel at all
])
async def test_check_access_names_the_first_command_the_user_may_not_run(
        secured: PrivateRedis, rules: tuple[str, ...], named: str) -> None:
    url = _user(secured, *rules, "-acl")  # no ACL command: the check needs none
    store = RedisEventStore.from_url(url, prefix=f"rummytest:{uuid.uuid4().hex}",
                                     environ=_environ(secured), **_timeouts(secured))
    try:
        with pytest.raises(StoreAccessDenied) as info:
            await store.check_access()
        assert info.value.command.startswith(named), info.value.command
        assert named.split()[0] in str(info.value)
        assert secured.password not in str(info.value)
    finally:
        await store.close()


async def test_check_access_passes_a_user_with_every_permission(secured: PrivateRedis) -> None:
    url = _user(secured, "-acl", "-flushall", "-keys")  # what the store never sends
    store = RedisEventStore.from_url(url, prefix="rummytest", environ=_environ(secured),
                                     **_timeouts(secured))
    try:
        await store.check_access()
    finally:
        await store.close()


async def test_an_append_that_fails_after_writing_is_interrupted_and_retry_is_safe(
        secured: PrivateRedis) -> None:
    # without PUBLISH the append script writes the events and the request record, then
    # stops at its PUBLISH (Lua does not roll back): a plain ResponseError before the fix,
    # which the service answered INTERNAL for an applied command
    prefix = f"rummytest:{uuid.uuid4().hex}"
    limited = RedisEventStore.from_url(_user(secured, "-publish"), prefix=prefix,
                                       environ=_environ(secured), **_timeouts(secured))
    full = RedisEventStore.from_url(secured.url(), prefix=prefix, environ=_environ(secured),
                                    **_timeouts(secured))
    event = {"type": "Passed", "v": 1, "seat": 0}
    try:
        with pytest.raises(AppendInterrupted) as info:
            await limited.append("g1", [event], 0, request_id="r1", request_hash="h")
        assert info.value.request_id == "r1" and "'r1'" in str(info.value)
        assert [e.data for e in await full.read("g1")] == [event]  # it was written
        again = await limited.append("g1", [event], 0, request_id="r1", request_hash="h")
        assert again.duplicate and again.version == 1  # the retry is answered, not re-run
        with pytest.raises(AppendInterrupted) as info:
            await limited.append("g1", [event], 1)
        assert info.value.request_id is None and "version" in str(info.value)
        assert await full.version("g1") == 2
    finally:
        await limited.close()
        await full.close()
