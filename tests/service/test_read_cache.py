"""GetView from memory while the store's append feed is live.

With ``read_feed`` (``rummy serve --read-feed``; off by default), a server answers
``GetView`` without reading Redis when its cached state is known to be the latest: read or
written while the append feed (``rummy_store.feed``) was live, with no newer version
announced since. These tests run two servers, each on its own store client and feed,
as two processes would be, over the real Redis, and attack the feed: a killed feed
connection, a silent one, an announcement that races a command.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.convert import view_from_proto
from rummy_grpc.server import create_server
from rummy_store import RedisEventStore
from rummy_store.feed import feed_channel

from rummy.bots import make_bot
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, humans, send, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def _until(predicate, seconds: float = HANG_GUARD) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


class Other:
    """A second server on its own store client (its own feed), like another process."""

    def __init__(self, prefix: str) -> None:
        self.store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
        self.server, port = create_server("127.0.0.1:0", self.store, admin_token=ADMIN_TOKEN,
                                          read_feed=True)
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.stub = pb_grpc.GameServiceStub(self.channel)

    @property
    def repo(self):
        return self.server.app.repo

    async def __aenter__(self) -> Other:
        await self.server.start()
        await _until(lambda: self.repo._feed is not None and self.repo._feed.live)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
        await self.server.stop(None)
        await self.store.close()


@pytest_asyncio.fixture
async def running(store):
    """Server A: a real GameService with ``read_feed`` over the test's store."""
    async with serving(store, read_feed=True) as r:
        yield r


async def _game(stub) -> tuple[str, dict[int, str]]:
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=7))
    return created.game_id, {t.seat: t.token for t in created.tokens}


async def _move(stub, game_id: str, tokens: dict[int, str]) -> int:
    """The seat to act plays one basic-bot command through ``stub``; the new version."""
    public = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[0]))).view
    seat = public.turn
    v = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[seat]))).view
    cmd = make_bot("basic", seat).act(view_from_proto(v))
    return (await send(stub, game_id, tokens[seat], cmd, expected_version=v.version)).version


async def test_views_come_from_memory_and_stay_exact(running):
    await _until(lambda: running.server.app.repo.epoch() is not None)
    repo = running.server.app.repo
    game_id, tokens = await _game(running.stub)
    before = repo.feed_reads
    for _ in range(6):
        version = await _move(running.stub, game_id, tokens)
        view = (await running.stub.GetView(pb.GetViewRequest(
            game_id=game_id, token=tokens[0]))).view
        assert view.version == version  # the latest, from memory
    assert repo.feed_reads - before >= 12  # every GetView of the loop (2 per move + 1)


async def test_another_servers_append_is_seen_after_its_announcement(running, prefix):
    async with Other(prefix) as b:
        game_id, tokens = await _game(running.stub)
        for _ in range(10):
            v_b = (await b.stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                          token=tokens[0]))).view.version
            heard = b.repo._feed.notifications
            version = await _move(running.stub, game_id, tokens)  # appended by server A
            assert version > v_b
            await _until(lambda h=heard: b.repo._feed.notifications > h)  # A's announcement
            seen = (await b.stub.GetView(pb.GetViewRequest(
                game_id=game_id, token=tokens[0]))).view.version
            assert seen == version


async def test_a_killed_feed_connection_sends_reads_to_the_store(running, prefix):
    async with Other(prefix) as b:
        game_id, tokens = await _game(running.stub)
        await b.stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[0]))
        await b.stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[0]))
        feed = b.repo._feed
        epoch = feed.epoch
        assert b.repo._trusted[game_id][0] == epoch  # served from memory so far
        admin = aioredis.Redis.from_url(REDIS_URL)
        try:
            for client in await admin.client_list():  # the feeds of this test's prefix
                if client.get("name") == f"rummy-feed:{prefix}":
                    await admin.client_kill_filter(_id=client["id"])
        finally:
            await admin.aclose()
        await _until(lambda: not feed.live or feed.epoch != epoch)
        # appended while B's feed was down or just back: B never heard of it
        version = await _move(running.stub, game_id, tokens)
        seen = (await b.stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                       token=tokens[0]))).view.version
        assert seen == version  # read from the store, not the stale memory
        await _until(lambda: feed.live and feed.epoch > epoch)  # it reconnects by itself
        version = await _move(running.stub, game_id, tokens)
        await _until(lambda: b.repo.cached(game_id) is not None)
        seen = (await b.stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                       token=tokens[0]))).view.version
        assert seen == version


async def test_a_silent_feed_is_not_trusted(running, prefix):
    async with Other(prefix) as b:
        game_id, tokens = await _game(running.stub)
        await b.stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[0]))
        feed = b.repo._feed
        # nothing heard from Redis for longer than 3 ping intervals (a dead link)
        feed._heard -= 10.0
        assert not feed.live and b.repo.epoch() is None
        reads = b.repo.feed_reads
        version = await _move(running.stub, game_id, tokens)
        seen = (await b.stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                       token=tokens[0]))).view.version
        assert seen == version
        assert b.repo.feed_reads == reads  # not from memory


async def test_an_announcement_during_an_append_is_not_lost(store):
    """The race of the design: another process's append is announced while this process's
    own append is in flight; the state this process then remembers is not trusted."""
    from rummy_grpc.repository import GameRepository

    from rummy.commands import CreateGame
    from rummy.decide import step
    from rummy.rules import RuleSet

    repo = GameRepository(store)
    assert repo.start_feed()
    await _until(lambda: repo.epoch() is not None)
    state, events = step(None, CreateGame(2, 3, RuleSet(), ("a", "b")))
    epoch = repo.epoch()
    result = await repo.append("g1", events, 0)
    repo.remember("g1", state, result.events[-1].ts, epoch=epoch)
    assert "g1" not in repo._trusted  # not cached during the append: not trusted
    loaded, _ = await repo.load("g1")
    assert loaded.version == state.version and repo._trusted["g1"][0] == epoch
    # an announcement of a newer version (as from another process) arrives mid-append
    repo._enter("g1")
    repo._on_appended("g1", state.version + 5)
    repo._leave("g1")
    assert "g1" not in repo._trusted
    repo.remember("g1", state, result.events[-1].ts, epoch=repo.epoch())
    assert "g1" not in repo._trusted  # announced 5 versions later: not trusted
    repo.stop_feed()


async def test_a_writer_that_does_not_announce_is_caught_up_within_trust_seconds(store,
                                                                                prefix):
    """A process of a release before the feed appends without publishing (found by the
    newcomer review: views froze during a rolling upgrade): a cached state is read from
    the store again at least every ``trust_seconds``."""
    old = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    old._feed_channel = f"{prefix}:nobody-listens"  # its appends are announced nowhere
    try:
        async with serving(old) as a, Other(prefix) as b:
            b.repo.trust_seconds = 0.3
            game_id, tokens = await _game(a.stub)
            for _ in range(4):
                seen = (await b.stub.GetView(pb.GetViewRequest(
                    game_id=game_id, token=tokens[0]))).view.version
                version = await _move(a.stub, game_id, tokens)
                assert version > seen
                # nothing announces the append, so only the trust_seconds re-read can bring
                # the view up to date; how soon is load-dependent, so the wait is a hang
                # guard (without the re-read the view stays behind for good)
                t0 = time.monotonic()
                while seen != version:
                    assert time.monotonic() - t0 < HANG_GUARD, "the view never caught up"
                    await asyncio.sleep(0.02)
                    seen = (await b.stub.GetView(pb.GetViewRequest(
                        game_id=game_id, token=tokens[0]))).view.version
    finally:
        await old.close()


async def test_a_foreign_message_on_the_channel_is_ignored(running, prefix):
    feed = running.server.app.repo._feed
    await _until(lambda: feed.live)
    epoch = feed.epoch
    admin = aioredis.Redis.from_url(REDIS_URL)
    try:
        for junk in ("", "no-version", "g x", " 5"):
            await admin.publish(feed_channel(prefix), junk)
    finally:
        await admin.aclose()
    game_id, tokens = await _game(running.stub)
    heard = feed.notifications
    await _move(running.stub, game_id, tokens)
    await _until(lambda: feed.notifications > heard)  # still listening, same epoch
    assert feed.live and feed.epoch == epoch


async def test_off_by_default_every_view_reads_the_store(store):
    async with serving(store) as r:
        game_id, tokens = await _game(r.stub)
        for _ in range(3):
            await _move(r.stub, game_id, tokens)
        assert r.server.app.repo.epoch() is None and r.server.app.repo.feed_reads == 0


async def test_the_channel_is_per_prefix(store):
    assert feed_channel(store.prefix) == f"{store.prefix}:appended"
    client = store.client
    pubsub = client.pubsub()
    await pubsub.subscribe(feed_channel(store.prefix))
    try:
        from rummy.commands import CreateGame
        from rummy.decide import step
        from rummy.events import to_dict
        from rummy.rules import RuleSet

        _, events = step(None, CreateGame(2, 3, RuleSet(), ("a", "b")))
        await store.append("g2", [to_dict(e) for e in events], 0)
        got = []
        deadline = time.monotonic() + HANG_GUARD
        while len(got) < 1 and time.monotonic() < deadline:
            m = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
            if m is not None:
                got.append(m["data"])
        assert got == [f"g2 {len(events)}"]
    finally:
        await pubsub.aclose()


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_read_feed_without_redis_is_refused() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'services'}"}
    out = subprocess.run([sys.executable, "-m", "rummy_grpc", "serve", "--read-feed",
                          "--port", "0"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2
    assert "--read-feed needs the Redis store (--redis-url)" in out.stderr
    assert "Traceback" not in out.stderr
