"""The game service against an event-store user that lacks a permission (a private
``redis-server`` with ACL users, ``tests/private_redis.py``).

- At start-up ``rummy serve`` checks every command the service sends, the append script's
  included, and refuses to start with the missing one named (before: it served, and the
  first command failed half-way).
- A permission revoked while serving: the append script writes the events and the request
  record, then fails at its ``PUBLISH`` (Lua does not roll back). The client gets
  ``UNAVAILABLE`` (reason ``STORE_UNAVAILABLE``) naming its request id, and the retry with
  that id returns the applied command (before: ``INTERNAL`` for an applied command).
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import grpc
import pytest
import redis
import redis.asyncio as aioredis
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store import RedisEventStore, StoreAccessDenied

from tests.chaos_helpers import free_port
from tests.private_redis import PrivateRedis, private_redis, tls_supported
from tests.service.conftest import ADMIN_TOKEN, serving

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    """A private Redis with ACL users (skipped without ``redis-server``)."""
    if tls_supported() == "redis-server is not installed":
        pytest.skip("redis-server is not installed")
    with private_redis(tmp_path_factory.mktemp("redis-perm")) as server:
        yield server


def _user(server: PrivateRedis, *rules: str) -> tuple[str, str]:
    """A new ACL user with every key, channel and command, then ``rules``:
    ``(name, url)``."""
    name = f"u{uuid.uuid4().hex[:10]}"
    _acl(server, name, "on", f">{server.password}", "~*", "&*", "+@all", *rules)
    return name, f"redis://{name}:{quote(server.password, safe='')}@127.0.0.1:{server.port}/0"


def _acl(server: PrivateRedis, name: str, *rules: str) -> None:
    admin = redis.Redis.from_url(server.url())
    try:
        admin.execute_command("ACL", "SETUSER", name, *rules)
    finally:
        admin.close()


def test_serve_refuses_to_start_naming_the_missing_permission(
        server_redis: PrivateRedis) -> None:
    _, url = _user(server_redis, "-publish")
    out = subprocess.run(
        [sys.executable, "-m", "rummy_cli", "serve", "--host", "127.0.0.1",
         "--port", str(free_port()), "--redis-url", url, "--prefix", "permtest"],
        capture_output=True, text=True, timeout=90, check=False)
    assert out.returncode == 1, out.stderr
    assert "may not run PUBLISH permtest:appended" in out.stderr
    assert server_redis.password not in out.stderr and "Traceback" not in out.stderr


@pytest.mark.asyncio
async def test_server_start_checks_access_before_serving(server_redis: PrivateRedis) -> None:
    _, url = _user(server_redis, "-xadd")
    store = RedisEventStore.from_url(url, prefix=f"permtest:{uuid.uuid4().hex[:8]}")
    try:
        with pytest.raises(StoreAccessDenied, match="XADD"):
            async with serving(store):
                pass
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_command_that_fails_after_writing_is_unavailable_with_its_request_id(
        server_redis: PrivateRedis) -> None:
    name, url = _user(server_redis)
    prefix = f"permtest:{uuid.uuid4().hex[:8]}"
    store = RedisEventStore.from_url(url, prefix=prefix)
    admin = aioredis.Redis.from_url(server_redis.url())
    try:
        async with serving(store) as run:
            created = await run.stub.CreateGame(pb.CreateGameRequest(
                admin_token=ADMIN_TOKEN, seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2,
                seed=5))
            gid = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            view = (await run.stub.GetView(pb.GetViewRequest(game_id=gid,
                                                             token=tokens[0]))).view
            stream = f"{prefix}:{{{gid}}}:events"
            before = int(await admin.xlen(stream))
            draw = pb.DrawRequest(game_id=gid, token=tokens[view.turn],
                                  options=pb.CommandOptions(request_id="draw-1"))
            _acl(server_redis, name, "-publish")  # revoked while serving
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await run.stub.Draw(draw)
            err = info.value
            assert err.code() == grpc.StatusCode.UNAVAILABLE, err.details()
            assert dict(err.trailing_metadata())["rummy-reason"] == "STORE_UNAVAILABLE"
            assert "draw-1'" in (err.details() or "")  # the id to retry with
            assert int(await admin.xlen(stream)) == before + 1  # the draw was applied
            _acl(server_redis, name, "+publish")
            again = (await run.stub.Draw(draw)).result
            assert again.duplicate and again.version == before + 1
            assert int(await admin.xlen(stream)) == before + 1
    finally:
        await store.close()
        await admin.aclose()
