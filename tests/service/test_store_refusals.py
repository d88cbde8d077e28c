"""Redis refusing writes (out of memory, a read-only replica) and work that fails after an
append: faults found by a tester.

- Redis's own refusals (``OOM`` under ``noeviction``, ``READONLY`` during a failover,
  ``MISCONF``, ...) are ``UNAVAILABLE`` with reason ``STORE`` (docs/api.md), not
  ``INTERNAL``; nothing is appended, and a retry with the same ``request_id`` works once
  Redis takes writes again.
- A command whose events were appended reports success even when the work after the append
  (bot moves, the next due time) fails; the bots go on from the due-games poll.
- A game refused at its cap of events (``--max-events``) by a client's command leaves the
  active games, as it does on the bot and timeout paths.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
import redis.asyncio as aioredis
import redis.exceptions
from prometheus_client import REGISTRY
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.app import GameApp
from rummy_grpc.errors import GameLimitReached, map_error, store_refusal
from rummy_grpc.model import SeatSpec
from rummy_store import MemoryEventStore, RedisEventStore

from rummy.bots import make_bot
from rummy.commands import command_kind
from rummy.melds import format_table
from tests.chaos_helpers import free_port, start_redis
from tests.harness import HANG_GUARD
from tests.service.conftest import ADMIN_TOKEN
from tests.service.test_streams_scale import serving

pytestmark = [pytest.mark.timeout(120)]

ADMIN = "refusal-admin"


@pytest.mark.parametrize("exc, code", [
    (redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'.",
                                       status_code="OOM"), "OOM"),
    (redis.exceptions.ReadOnlyError("You can't write against a read only replica.",
                                    status_code="READONLY"), "READONLY"),
    (redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots, but "
                                    "it's currently unable to persist to disk."), "MISCONF"),
    (redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write."),
     "NOREPLICAS"),
    (redis.exceptions.ResponseError("BUSY Redis is busy running a script."), "BUSY"),
    (redis.exceptions.NoPermissionError("this user has no permissions to run the 'xadd' "
                                        "command", status_code="NOPERM"), "NOPERM"),
])
def test_redis_refusals_are_unavailable_store_not_internal(exc: Exception, code: str) -> None:
    assert store_refusal(exc) == code
    mapped = map_error(exc)
    assert mapped is not None
    assert (mapped.code, mapped.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE")
    assert f"Redis {code}" in mapped.message and "nothing was applied" in mapped.message


@pytest.mark.parametrize("exc", [
    redis.exceptions.ResponseError("WRONGTYPE Operation against a key holding the wrong kind "
                                   "of value"),  # our bug, not Redis's state
    redis.exceptions.ResponseError("ERR Error running script: user_script:3: bad argument"),
    redis.exceptions.NoScriptError("No matching script."),
    ValueError("OOM in a message of another kind"),
])
def test_other_errors_are_not_refusals(exc: Exception) -> None:
    assert store_refusal(exc) is None
    mapped = map_error(exc)
    assert mapped is None or mapped.reason != "STORE"


async def _stream_len(client: aioredis.Redis, prefix: str, game_id: str) -> int:
    return int(await client.xlen(f"{prefix}:{{{game_id}}}:events"))


async def _refused(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value


@pytest.mark.chaos
@pytest.mark.asyncio
async def test_a_full_or_read_only_redis_refuses_with_store_and_appends_nothing(
    tmp_path: Any, record_property: Any,
) -> None:
    port = free_port()
    proc = start_redis(port)
    url = f"redis://127.0.0.1:{port}/0"
    admin = aioredis.Redis.from_url(url)
    store = RedisEventStore.from_url(url, prefix="refusal")
    try:
        async with serving(store) as (_server, (stub,)):
            created = await stub.CreateGame(pb.CreateGameRequest(
                admin_token=ADMIN_TOKEN, seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2,
                seed=3))
            gid = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[0]))).view
            token = tokens[view.turn]
            before = await _stream_len(admin, "refusal", gid)
            draw = pb.DrawRequest(game_id=gid, token=token,
                                  options=pb.CommandOptions(request_id="d1"))
            for setting, code in ((("maxmemory", "1"), "OOM"),):
                await admin.config_set(*setting)
                err = await _refused(stub.Draw(draw))
                assert err.code() == grpc.StatusCode.UNAVAILABLE, err.details()
                assert dict(err.trailing_metadata())["rummy-reason"] == "STORE"
                assert f"Redis {code}" in err.details()
                err = await _refused(stub.CreateGame(pb.CreateGameRequest(
                    seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 2)))
                assert err.code() == grpc.StatusCode.UNAVAILABLE
                assert await _stream_len(admin, "refusal", gid) == before  # nothing applied
                await admin.config_set("maxmemory", "0")
            # a primary demoted to a replica (of nothing reachable) refuses writes: READONLY
            await admin.execute_command("REPLICAOF", "127.0.0.1", str(free_port()))
            err = await _refused(stub.Draw(draw))
            assert err.code() == grpc.StatusCode.UNAVAILABLE
            assert dict(err.trailing_metadata())["rummy-reason"] == "STORE"
            assert "Redis READONLY" in err.details()
            await admin.execute_command("REPLICAOF", "NO", "ONE")
            assert await _stream_len(admin, "refusal", gid) == before
            # Redis takes writes again: the same request goes through, once
            result = (await stub.Draw(draw)).result
            assert result.version == before + 1
            again = (await stub.Draw(draw)).result
            assert again.duplicate and again.version == before + 1
        record_property("fault", "maxmemory 1 (OOM), REPLICAOF (READONLY)")
        record_property("events_appended_by_refused", 0)
    finally:
        await store.close()
        await admin.aclose()
        proc.terminate()
        proc.wait(10)


class RefusingAfterAppend(MemoryEventStore):
    """A memory store that, once armed, refuses every write after the next append: Redis
    running out of memory between a human's append and the bots' moves after it."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.refusing = False

    def _refuse(self) -> None:
        if self.refusing:
            raise redis.exceptions.OutOfMemoryError("command not allowed when used memory > "
                                                    "'maxmemory'.", status_code="OOM")

    async def append(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse()
        result = await super().append(*args, **kwargs)
        self.refusing = self.armed
        return result

    async def schedule(self, *args: Any, **kwargs: Any) -> None:
        self._refuse()
        await super().schedule(*args, **kwargs)

    async def unschedule(self, *args: Any, **kwargs: Any) -> None:
        self._refuse()
        await super().unschedule(*args, **kwargs)


def _follow_up_failures() -> float:
    return REGISTRY.get_sample_value("rummy_follow_up_failures_total") or 0.0


async def _human_move(app: GameApp, gid: str, token: str, seed: int) -> tuple[int, Any]:
    """The ``basic`` bot's choice for the human seat, sent through the app: (version
    before, outcome)."""
    view, _ = await app.get_view(gid, token)
    cmd = make_bot("basic", seed).act(view)
    kind = command_kind(cmd)
    table = format_table(cmd.table) if kind == "meld" else None
    return view.version, await app.command(gid, token, kind, table)


@pytest.mark.asyncio
async def test_an_applied_command_reports_success_when_the_bots_after_it_cannot_move() -> None:
    store = RefusingAfterAppend()
    app = GameApp(store, admin_token=ADMIN, lease=0.3, poll=0.05)
    await app.start()
    try:
        created = await app.create_game([SeatSpec("human", "me"), SeatSpec("bot", "", "basic")],
                                        {}, seed=11, admin_token=ADMIN)
        gid, token = created.game_id, created.tokens[0]
        for move in range(200):  # until a human move hands the turn to the bot
            state, _ = await app.repo.load(gid, fresh=True)
            assert state.turn == 0
            failures = _follow_up_failures()
            store.armed = True
            version, out = await _human_move(app, gid, token, move)
            store.armed = store.refusing = False
            assert out.version > version  # applied, and reported applied
            if (await app.repo.load(gid, fresh=True))[0].turn == 1:
                break
            while (await app.repo.load(gid, fresh=True))[0].turn != 0:
                await asyncio.sleep(0.01)
        else:
            pytest.fail("the human never handed the turn to the bot")
        assert _follow_up_failures() == failures + 1  # the bot's move was refused
        assert (await store.read(gid))[-1].version == out.version
        # Redis takes writes again: the due-games poll moves the bot within the lease
        deadline = time.monotonic() + HANG_GUARD
        while (await app.repo.load(gid, fresh=True))[0].turn != 0:
            assert time.monotonic() < deadline, "the bot's turn was never resumed"
            await asyncio.sleep(0.05)
    finally:
        await app.close()


@pytest.mark.asyncio
async def test_a_client_command_refused_at_the_cap_of_events_ends_the_game_once() -> None:
    store = MemoryEventStore()
    app = GameApp(store, admin_token=ADMIN, max_events=8)
    await app.start()
    try:
        created = await app.create_game([SeatSpec("human"), SeatSpec("human")], {}, seed=5,
                                        admin_token=ADMIN)
        gid = created.game_id
        assert await store.list_games(active_only=True) == [gid]
        active = REGISTRY.get_sample_value("rummy_games_active")
        refused = 0
        for move in range(40):  # play until the cap refuses, then twice more
            state, _ = await app.repo.load(gid)
            try:
                await _human_move(app, gid, created.tokens[state.turn], move)
            except GameLimitReached:
                refused += 1
                if refused == 3:
                    break
        assert refused == 3
        assert await store.list_games(active_only=True) == []
        assert await store.list_games() == [gid]  # its log stays readable
        # the gauge went down once, not once per refusal
        assert REGISTRY.get_sample_value("rummy_games_active") == active - 1
    finally:
        await app.close()


def test_a_refusal_inside_a_pipeline_or_multi_exec_is_still_a_refusal() -> None:
    # found by a tester: redis-py rewrites a queued command's error, and
    # NOREPLICAS or MISCONF while finishing a game (MULTI/EXEC) answered INTERNAL
    exc = redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write.")
    exc.args = (f"Command # 1 (ZREM rummy:games:active abc) of pipeline caused error: "
                f"{exc.args}",)
    assert store_refusal(exc) == "NOREPLICAS"
    mapped = map_error(exc)
    assert mapped is not None and mapped.reason == "STORE"
    # the code once, the refusal's own words, no pipeline wrapping
    assert "(Redis NOREPLICAS: Not enough good replicas to write.)" in mapped.message


class RefusingToFinish(MemoryEventStore):
    """A memory store that refuses to take a game off the active list until ``until``
    (time.monotonic()): Redis refusing writes right after a game-ending command, for
    longer than the replica's own retries last."""

    until = 0.0

    async def set_active(self, game_id: str, active: bool) -> bool:
        if not active and time.monotonic() < self.until:
            raise redis.exceptions.ReadOnlyError("You can't write against a read only "
                                                 "replica.", status_code="READONLY")
        return await super().set_active(game_id, active)


@pytest.mark.asyncio
async def test_a_finished_game_leaves_the_active_list_after_a_long_refusal() -> None:
    # found by a tester: refused for ~7 s after a human's game-ending
    # command, the game stayed active for good (the replica's retries gave up at the lease
    # and a finished game had no due time). Now the game-ending append writes a due time
    # first, and any replica's poll finishes the game once Redis takes writes again.
    store = RefusingToFinish()
    app = GameApp(store, admin_token=ADMIN, lease=0.3, poll=0.05)
    await app.start()
    try:
        created = await app.create_game([SeatSpec("human"), SeatSpec("human")],
                                        {"target_score": "1"}, seed=2, admin_token=ADMIN)
        gid = created.game_id
        store.until = time.monotonic() + 1e9  # refuse from the game's last command on
        for move in range(2000):
            state, _ = await app.repo.load(gid)
            if state.phase == "game_over":
                break
            await _human_move(app, gid, created.tokens[state.turn], move)
        else:
            pytest.fail("the game did not end")
        store.until = time.monotonic() + 2.0  # the replica's retries give up before this
        assert await store.list_games(active_only=True) == [gid]
        await asyncio.sleep(2.5)
        deadline = time.monotonic() + HANG_GUARD
        while await store.list_games(active_only=True):
            assert time.monotonic() < deadline, "the finished game stayed active"
            await asyncio.sleep(0.05)
        assert await store.due(gid) is None  # nothing left due on it
    finally:
        await app.close()


@pytest.mark.redis
@pytest.mark.asyncio
async def test_a_game_written_but_not_listed_says_so_and_its_retry_lists_it() -> None:
    # found by a tester: Redis ran out of memory between the append script
    # and the games-index call of a CreateGame, which answered "nothing was applied"
    from rummy_store import GameUnlisted

    from tests.redis_helpers import REDIS_URL
    prefix = f"rummy-test-unlisted-{time.monotonic_ns()}"
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    real = store._register
    calls = {"n": 0}

    async def refused_once(game_id: str, ts: float) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise redis.exceptions.OutOfMemoryError("command not allowed when used memory > "
                                                    "'maxmemory'.", status_code="OOM")
        await real(game_id, ts)

    store._register = refused_once  # type: ignore[method-assign]
    try:
        events = [{"type": "Knocked", "v": 1, "seat": 0, "points": 1}]
        with pytest.raises(GameUnlisted) as err:
            await store.append("g", events, 0, request_id="create", request_hash="h")
        mapped = map_error(err.value)
        assert mapped is not None
        assert (mapped.code, mapped.reason) == (grpc.StatusCode.UNAVAILABLE,
                                                "STORE_UNAVAILABLE")
        assert "its events were written (version 1)" in mapped.message
        assert await store.version("g") == 1 and await store.list_games() == []
        again = await store.append("g", events, 0, request_id="create", request_hash="h")
        assert again.duplicate and again.version == 1
        assert await store.list_games(active_only=True) == ["g"]
    finally:
        keys = await store.client.keys(f"{prefix}:*")
        if keys:
            await store.client.delete(*keys)
        await store.close()
