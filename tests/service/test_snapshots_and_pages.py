""""No limits": GetState at an old version of a long game starts from a
snapshot and evolves about ``snapshot_every`` events, off the event loop; GetEvents returns
pages of at most 1000 events and the ``after_version`` of the next page. A real server over
the real Redis, a long all-bot game played by the server itself."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
import pytest_asyncio
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc import repository as repo_module
from rummy_grpc.convert import view_to_proto
from rummy_grpc.repository import EVOLVE_INLINE, GameRepository
from rummy_store import RedisEventStore
from rummy_store.sealed import GameStore

from rummy.cards import format_card
from rummy.events import Event, from_dict
from rummy.evolve import replay
from rummy.snapshot import state_from_dict, state_to_dict
from rummy.state import GameState
from rummy.views import view

from .conftest import ADMIN_TOKEN, Running, bots

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(120)]

N = 256  # GameRepository's default snapshot_every
SLACK = 2  # a snapshot is written after the command that crosses a multiple of N; one
#            command appends at most 3 events, so consecutive snapshots are <= N + 2 apart


class Long:
    """The long game: its id and its full event log."""

    def __init__(self, game_id: str, log: list[Event]) -> None:
        self.game_id = game_id
        self.log = log

    def state(self, version: int) -> GameState:
        state = replay(self.log[:version])
        assert state is not None
        return state


@pytest_asyncio.fixture
async def long_game(running: Running, store: RedisEventStore) -> AsyncIterator[Long]:
    """An all-bot game of 3,000+ events, played by the server (snapshots written as it
    goes)."""
    created = await running.stub.CreateGame(pb.CreateGameRequest(
        seats=bots("basic", "basic", "basic"), variants={"target_score": "500"}, seed=12))
    gid = created.game_id
    for _ in range(600):
        v = (await running.stub.GetView(pb.GetViewRequest(game_id=gid))).view
        if v.phase == pb.PHASE_GAME_OVER:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the bot game did not end in 30 s")
    # the names as the service reads them (sealed in Redis: rummy_store.shred)
    log = [from_dict(se.data) for se in await GameStore(store).read(gid)]
    assert len(log) >= 3000, len(log)
    yield Long(gid, log)


class EvolveSpy:
    """Counts the evolves of ``rummy_grpc.repository`` and the threads they ran in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.threads: set[int] = set()
        real: Callable[..., GameState] = repo_module.evolve

        def counting(state: Any, event: Any) -> GameState:
            self.count += 1
            self.threads.add(threading.get_ident())
            return real(state, event)

        monkeypatch.setattr(repo_module, "evolve", counting)

    def reset(self) -> None:
        self.count = 0
        self.threads.clear()


async def _get_state(running: Running, gid: str, version: int) -> pb.GetStateResponse:
    return await running.stub.GetState(pb.GetStateRequest(game_id=gid, version=version,
                                                          admin_token=ADMIN_TOKEN))


def _assert_is(msg: pb.GetStateResponse, state: GameState) -> None:
    """The GetState response shows exactly ``state`` (full information)."""
    assert msg.version == state.version and msg.full_information
    # a served view names who plays each seat (these games' seats are all basic bots)
    served = view(state, None)._replace(controllers=("bot:basic",) * state.players)
    assert msg.view == view_to_proto(served)
    assert [list(h.cards) for h in msg.hands] == \
        [[format_card(c) for c in h] for h in state.hands]
    assert list(msg.stock) == [format_card(c) for c in state.deck[state.stock_pos:]]
    assert msg.seed == state.seed


async def test_get_state_at_an_old_version_starts_from_a_snapshot_off_the_event_loop(
        running: Running, store: RedisEventStore, long_game: Long,
        monkeypatch: pytest.MonkeyPatch) -> None:
    gid, total = long_game.game_id, len(long_game.log)
    # the bot driver stored a snapshot each time the game crossed a multiple of N
    versions = [v for v in range(1, total + 1)
                if (found := await store.get_snapshot(gid, v)) is not None and found[0] == v]
    # (a read that evolved past a multiple may have stored it exactly, too)
    assert {v // N for v in versions} == set(range(1, total // N + 1))
    assert all(v % N <= SLACK for v in versions)
    found = await GameStore(store).get_snapshot(gid, total)
    assert found is not None and state_from_dict(found[1]) == long_game.state(found[0])

    spy = EvolveSpy(monkeypatch)
    loop_thread = threading.get_ident()
    for version in (10, N - 1, 1000, 2 * N + 1, total - 5, total - 1):
        spy.reset()
        msg = await _get_state(running, gid, version)
        _assert_is(msg, long_game.state(version))
        snap = await store.get_snapshot(gid, version)
        base = snap[0] if snap else 0
        assert spy.count == version - base <= N + SLACK, version
        if spy.count > EVOLVE_INLINE:  # off the event loop
            assert spy.threads and loop_thread not in spy.threads, version
    # in process, the states are equal field for field to a full replay (I4)
    app = running.server.app
    for version in (1, 2, 777, 1500, total):
        assert await app.repo.state_at(gid, version) == long_game.state(version)
    monkeypatch.undo()
    await _a_game_older_than_snapshots(running, store, long_game, monkeypatch)


async def _a_game_older_than_snapshots(running: Running, store: RedisEventStore,
                                       long_game: Long, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    """The same game with its snapshots deleted (as if played before snapshots existed):
    the first GetState at an old version replays the prefix in a thread, other calls are
    answered meanwhile, and it leaves snapshots behind, so the next call evolves fewer
    than N events."""
    gid, total = long_game.game_id, len(long_game.log)
    await store.client.delete(store.key(gid, "snapshots"))
    repo = GameRepository(GameStore(store))  # a restarted server that knows of no snapshot
    last_ts = (await store.read(gid, total - 1))[-1].ts
    repo.remember(gid, long_game.state(total), last_ts)  # (but has the latest state cached)
    running.server.app.repo = running.server.app.reads._repo = repo
    spy = EvolveSpy(monkeypatch)
    real: Callable[..., GameState] = repo_module.evolve
    slow_started = threading.Event()

    def slow(state: Any, event: Any) -> GameState:  # a replay long enough to overlap
        slow_started.set()
        threading.Event().wait(0.0002)
        return real(state, event)

    monkeypatch.setattr(repo_module, "evolve", slow)
    target = 2000
    rebuild = asyncio.ensure_future(_get_state(running, gid, target))
    while not slow_started.is_set():
        await asyncio.sleep(0.005)
    served = 0
    while not rebuild.done():  # GetView is served while the replay runs
        await running.stub.GetView(pb.GetViewRequest(game_id=gid))
        served += 1
    assert served >= 3
    _assert_is(await rebuild, long_game.state(target))
    kept = [v for v in range(N, total + 1, N) if (await GameStore(store).get_snapshot(gid, v)) == (
        v, state_to_dict(long_game.state(v)))]
    assert kept == list(range(N, target + 1, N))  # the replay stored what it passed
    monkeypatch.setattr(repo_module, "evolve", real)
    spy = EvolveSpy(monkeypatch)
    msg = await _get_state(running, gid, target - 1)
    _assert_is(msg, long_game.state(target - 1))
    assert spy.count == (target - 1) % N < N


async def test_get_events_pages_through_a_long_game(running: Running,
                                                    long_game: Long) -> None:
    gid, total = long_game.game_id, len(long_game.log)
    stub = running.stub
    first = await stub.GetEvents(pb.GetEventsRequest(game_id=gid))
    assert len(first.events) == 1000 and first.next_after_version == 1000
    assert first.full_information and first.ByteSize() < 1 << 20
    seen: list[int] = []
    after, pages = 0, 0
    while True:
        page = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=after))
        seen += [e.version for e in page.events]
        pages += 1
        if not page.next_after_version:
            break
        assert page.next_after_version == page.events[-1].version
        after = page.next_after_version
    assert seen == list(range(1, total + 1)) and pages == -(-total // 1000)
    # page_size is honoured, and capped at 1000
    small = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=5,
                                                     page_size=7))
    assert [e.version for e in small.events] == list(range(6, 13))
    assert small.next_after_version == 12
    big = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, page_size=5000))
    assert len(big.events) == 1000 and big.next_after_version == 1000
    # with to_version: pages end at to_version
    ranged = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=100,
                                                      to_version=1500))
    assert len(ranged.events) == 1000 and ranged.next_after_version == 1100
    rest = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=1100,
                                                    to_version=1500))
    assert [e.version for e in rest.events] == list(range(1101, 1501))
    assert rest.next_after_version == 0
    exact = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=total - 1000))
    assert len(exact.events) == 1000 and exact.next_after_version == 0  # ends at the end
    past = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, after_version=total + 5))
    assert not past.events and past.next_after_version == 0
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetEvents(pb.GetEventsRequest(game_id=gid, page_size=-1))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "page_size" in (info.value.details() or "")


async def test_a_failed_snapshot_write_does_not_fail_the_command(
        store: RedisEventStore, caplog: pytest.LogCaptureFixture) -> None:
    repo = GameRepository(store, snapshot_every=4)
    state = GameState(*long_state_fields())

    async def broken(*_: Any) -> None:
        raise ConnectionError("redis went away")

    store.put_snapshot = broken  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="rummy_grpc"):
        assert not await repo.maybe_snapshot("g", state._replace(version=9))
    assert "snapshot of game g at version 9 not stored: ConnectionError" in caplog.text


def long_state_fields() -> tuple[Any, ...]:
    """The fields of a small real state (two rounds into a game)."""
    from tests.conftest import play_random_game
    _, log, _ = play_random_game(3, 2)
    state = replay(log[:40])
    assert state is not None
    return tuple(state)


async def test_maybe_snapshot_writes_once_per_multiple(store: RedisEventStore) -> None:
    from tests.conftest import play_random_game
    _, log, _ = play_random_game(3, 2)
    repo = GameRepository(store, snapshot_every=10)
    state: GameState | None = None
    written = []
    for k, e in enumerate(log[:45], start=1):
        state = replay([e], state)
        assert state is not None and state.version == k
        if k % 3 == 0 and await repo.maybe_snapshot("g", state):  # appends of 3 events
            written.append(k)
    assert written == [12, 21, 30, 42]
    found = await store.get_snapshot("g", 29)
    assert found is not None and found[0] == 21
    assert state_from_dict(found[1]) == replay(log[:21])
    with pytest.raises(ValueError, match="snapshot_every"):
        GameRepository(store, snapshot_every=0)


async def test_an_unreadable_snapshot_is_ignored_and_the_events_replayed(
        store: RedisEventStore, caplog: pytest.LogCaptureFixture) -> None:
    from tests.conftest import play_random_game
    _, log, _ = play_random_game(3, 2)
    repo = GameRepository(store, snapshot_every=10)
    await repo.append("g", log[:30], 0)
    await store.put_snapshot("g", 20, {"snapshot": 99})  # a later release's schema
    with caplog.at_level("WARNING", logger="rummy_grpc"):
        assert await repo.state_at("g", 25) == replay(log[:25])
        assert (await repo.load("g"))[0] == replay(log[:30])
    assert "snapshot of game g at version 20 ignored" in caplog.text
    assert "schema version 99" in caplog.text
