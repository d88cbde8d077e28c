"""The results feed through the gRPC service (``StreamResults``, ``AckResults``,
``ListParkedResults``): summaries of real games, consumer groups over real processes.

- in process: the admin token is required; a bot game's created and ended summaries carry
  the seats' names, controllers and the final scores of its ``GameEnded`` (R9); an
  unacknowledged entry is parked after ``max_deliveries`` and listed;
- real processes: ``rummy serve`` plays 300 bot games while a consumer process of group
  ``ratings`` is SIGKILLed in the middle of a batch; the other member of the group gets
  its unacknowledged entries after the lease; group ``payouts`` reads alongside. Per
  group, every game's two summaries are processed, none lost, none appended twice;
- an idle game that expires reaches the feed as abandoned (the stream's sweep);
- chaos (``-m chaos``): the same over a private Redis (append-only file, fsync always)
  with the service and Redis SIGKILLed and restarted while games are played.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_store import RedisEventStore

from tests.chaos_helpers import ROOT, free_port, start_redis, start_server
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

from .conftest import ADMIN_TOKEN, Running, bots, humans, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.redis]

NO_CREATE_LIMIT = ("--rate-create", "0")  # the test creates hundreds of games at once
SHORT = {"target_score": "1"}  # one round: a game ends within a few dozen events
KIND = {pb.RESULT_KIND_CREATED: "created", pb.RESULT_KIND_ENDED: "ended",
        pb.RESULT_KIND_ABANDONED: "abandoned"}


async def _wait_ended(store: RedisEventStore, game_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        events = await store.read(game_id)
        if events and events[-1].type == "GameEnded":
            return
        assert time.monotonic() < deadline, f"game {game_id} did not end"
        await asyncio.sleep(0.05)


async def test_results_need_the_admin_token(running: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await running.stub.AckResults(pb.AckResultsRequest(group="g", entry_ids=["1-0"]))
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    stream = running.stub.StreamResults(pb.StreamResultsRequest(
        admin_token="wrong", group="g", consumer="c"))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stream.read()
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await running.stub.ListParkedResults(pb.ListParkedResultsRequest(
            admin_token=ADMIN_TOKEN, group="bad group"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_games_summaries_carry_its_seats_and_final_scores(
        running: Running, store: RedisEventStore) -> None:
    created = await running.stub.CreateGame(pb.CreateGameRequest(
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="random", name="Ann"),
               pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="basic")],
        variants=SHORT, seed=5))
    await _wait_ended(store, created.game_id)
    ended = (await store.read(created.game_id))[-1]
    stream = running.stub.StreamResults(pb.StreamResultsRequest(
        admin_token=ADMIN_TOKEN, group="ratings", consumer="one", lease_seconds=1,
        max_deliveries=1))
    got: list[pb.GameResult] = []
    while len(got) < 2:
        got += (await asyncio.wait_for(stream.read(), 30)).results
    assert [(r.game_id, r.kind) for r in got] == [
        (created.game_id, pb.RESULT_KIND_CREATED), (created.game_id, pb.RESULT_KIND_ENDED)]
    first, last = got
    assert [(s.seat, s.name, s.controller) for s in first.seats] == [
        (0, "Ann", "bot:random"), (1, "basic-bot", "bot:basic")]
    assert first.version == 2 and last.version == ended.version  # GameStarted + RoundStarted
    assert [s.final_score for s in last.seats] == list(ended.data["final"])
    assert [s.rounds_won for s in last.seats] == list(ended.data["rounds_won"])
    assert [s.seat for s in last.seats if s.winner] == list(ended.data["winners"])
    assert json.loads(last.summary_json)["winners"] == list(ended.data["winners"])
    assert [r.deliveries for r in got] == [1, 1]
    # the ended one is processed; the created one is not acknowledged: after the lease it
    # has been delivered max_deliveries (1) times already, so the next read parks it
    ack = await running.stub.AckResults(pb.AckResultsRequest(
        admin_token=ADMIN_TOKEN, group="ratings", entry_ids=[last.entry_id, last.entry_id]))
    assert ack.acknowledged == 1
    deadline = time.monotonic() + 30
    while True:
        listed = await running.stub.ListParkedResults(pb.ListParkedResultsRequest(
            admin_token=ADMIN_TOKEN, group="ratings"))
        if listed.parked or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    stream.cancel()
    assert [(p.result.entry_id, p.result.game_id, p.result.deliveries, p.consumer)
            for p in listed.parked] == [(first.entry_id, created.game_id, 1, "one")]
    assert (listed.pending, listed.lag, listed.parked_total) == (0, 0, 1)
    assert listed.last_delivered == last.entry_id


async def _consume(stub_of: Callable[[], pb_grpc.GameServiceStub], group: str,
                   consumer: str, into: list[pb.GameResult], lease: int = 1) -> None:
    """Read and acknowledge every batch of ``group`` into ``into`` until cancelled;
    ``stub_of()`` is the current server's stub (reconnects to it after a failed stream or
    ack: a server or Redis killed; what was not acknowledged comes back after the lease)."""
    while True:
        try:
            stub = stub_of()
            async for msg in stub.StreamResults(pb.StreamResultsRequest(
                    admin_token=ADMIN_TOKEN, group=group, consumer=consumer, max_batch=50,
                    lease_seconds=lease)):
                into.extend(msg.results)
                await stub.AckResults(pb.AckResultsRequest(
                    admin_token=ADMIN_TOKEN, group=group,
                    entry_ids=[r.entry_id for r in msg.results]))
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.2)


async def _until(lists: list[list[pb.GameResult]], counts: list[int],
                 timeout: float = 600) -> None:
    """Wait until each list holds its count of distinct entries (fails after timeout, a
    hang guard: beside a CPU hog at load 7 the 300-game test needed more than 300 s)."""
    deadline = time.monotonic() + timeout
    while any(len({r.entry_id for r in x}) < n for x, n in zip(lists, counts, strict=True)):
        assert time.monotonic() < deadline, [len({r.entry_id for r in x}) for x in lists]
        await asyncio.sleep(0.1)


def _start_consumer(port: int, group: str, name: str, log: Path,
                    delay: float) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}")
    return subprocess.Popen([sys.executable, "-m", "tests.service.results_consumer",
                             str(port), group, name, str(log), str(delay)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def _create_game(stub: pb_grpc.GameServiceStub, seed: int) -> str:
    """One two-bot game; retried with its request id while the store is unavailable (a
    Redis restarting loads its append-only file: the service answers UNAVAILABLE)."""
    for _ in range(200):
        try:
            return (await stub.CreateGame(pb.CreateGameRequest(
                seats=bots("random", "random"), variants=SHORT, seed=seed,
                request_id=f"create-{seed}"))).game_id
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("the service stayed unavailable")


async def _create_games(stub: pb_grpc.GameServiceStub, n: int, seed: int) -> list[str]:
    ids: list[str] = []
    for start in range(0, n, 25):
        ids += await asyncio.gather(*(_create_game(stub, seed + i)
                                      for i in range(start, min(n, start + 25))))
    return ids


def _check_group(results: list[pb.GameResult], games: list[str], group: str) -> None:
    """Every game's created and ended summary processed in ``group``, each once in the
    feed (one entry id per summary)."""
    by_id = {r.entry_id: (r.game_id, KIND[r.kind]) for r in results}
    summaries = Counter(by_id.values())
    expected = {(g, k) for g in games for k in ("created", "ended")}
    lost = expected - set(summaries)
    twice = {s: n for s, n in summaries.items() if n > 1}
    assert not lost, f"{group}: {len(lost)} summaries lost, e.g. {sorted(lost)[:3]}"
    assert not twice, f"{group}: summaries appended twice: {list(twice)[:3]}"
    assert set(summaries) == expected


@pytest.mark.slow
@pytest.mark.timeout(1500)
async def test_300_games_a_consumer_killed_mid_batch_nothing_lost_or_twice(
        tmp_path: Path, prefix: str, record_property: Any) -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    games_n = 300
    server, port = start_server(REDIS_URL, prefix, tmp_path, "a", *NO_CREATE_LIMIT)
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.GameServiceStub(channel)
    log = tmp_path / "consumer-a.log"
    log.touch()
    victim = _start_consumer(port, "ratings", "a", log, 0.3)
    ratings: list[pb.GameResult] = []
    payouts: list[pb.GameResult] = []
    total = 2 * games_n
    tasks = [asyncio.create_task(_consume(lambda: stub, "payouts", "p", payouts,
                                          lease=60))]
    # payouts reads while the games are played
    try:
        games = await _create_games(stub, games_n, 1000)
        # ---- kill consumer a while it holds a batch it has not acknowledged
        deadline = time.monotonic() + 600  # a hang guard: slow under load, never a bound
        while True:
            lines = log.read_text().splitlines()
            got = [x.split()[1] for x in lines if x.startswith("got ")]
            acked = {x.split()[1] for x in lines if x.startswith("ack ")}
            if len(got) >= 60 and set(got) - acked:
                victim.send_signal(signal.SIGKILL)
                victim.wait()
                break
            assert victim.poll() is None, "consumer a exited"
            assert time.monotonic() < deadline, f"consumer a got {len(got)} entries only"
            await asyncio.sleep(0.01)
        lines = log.read_text().splitlines()  # what a wrote before it died
        got = [x.split()[1] for x in lines if x.startswith("got ")]
        # a writes its "ack" lines before its AckResults call: held entries were certainly
        # unacknowledged; an "ack" line whose call a died before makes b get one more
        acked = {x.split()[1] for x in lines if x.startswith("ack ")}
        held = set(got) - acked
        assert held
        for g in games:
            await _wait_ended(store, g, timeout=300)
        # b's lease is long enough for a loaded machine: a lease shorter than b's own time
        # to acknowledge sends b's batches to it again until they are parked (at the fifth
        # delivery), which a run beside CPU hogs at load 9 did to 60 of them; a's held
        # entries come back to b once idle for b's lease
        lease_b = 10
        tasks.append(asyncio.create_task(_consume(lambda: stub, "ratings", "b", ratings,
                                                  lease=lease_b)))
        await _until([ratings, payouts], [total - len(acked), total])
        await asyncio.sleep(lease_b + 0.5)  # one lease more: nothing else arrives (nothing twice)
        # ---- the dead member's held entries went to b, after the lease, redelivered
        b_ids = {r.entry_id: r for r in ratings}
        assert held <= set(b_ids)
        assert all(b_ids[i].deliveries >= 2 for i in held)
        a_results = [pb.GameResult(entry_id=x.split()[1], game_id=x.split()[2],
                                   kind=int(x.split()[3]))
                     for x in lines if x.startswith("got ")]
        _check_group(a_results + ratings, games, "ratings")
        _check_group(payouts, games, "payouts")
        assert all(r.deliveries == 1 for r in payouts)
        for group in ("ratings", "payouts"):
            status = await stub.ListParkedResults(pb.ListParkedResultsRequest(
                admin_token=ADMIN_TOKEN, group=group))
            assert (status.pending, status.lag, status.parked_total) == (0, 0, 0)
        print(f"\n{games_n} games, {total} summaries; consumer a SIGKILLed holding "
              f"{len(held)} unacknowledged entries, all redelivered to b; 0 lost, 0 twice")
        record_property("summaries", total)
        record_property("held_by_killed_consumer", len(held))
    finally:
        for t in tasks:
            t.cancel()
        if victim.poll() is None:
            victim.kill()
            victim.wait()
        await channel.close()
        await store.close()
        server.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(10)
        if server.poll() is None:
            server.kill()
            server.wait()
        await delete_prefix(prefix)


@pytest.mark.chaos
@pytest.mark.timeout(1200)
async def test_games_with_service_and_redis_killed_every_summary_once(
        tmp_path: Path, record_property: Any) -> None:
    games_n = 600
    port = free_port()
    data = tmp_path / "redis"
    data.mkdir()
    redis_proc = start_redis(port, data)  # append-only file, fsync always
    url = f"redis://127.0.0.1:{port}/0"
    prefix = "chaosfeed"
    server, grpc_port = start_server(url, prefix, tmp_path, "s1", *NO_CREATE_LIMIT)
    servers = [server]
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
    channels = [channel]  # closed at the end: closing one cancels the consumers' calls
    stub = pb_grpc.GameServiceStub(channel)
    store = RedisEventStore.from_url(url, prefix=prefix, socket_timeout=2,
                                     socket_connect_timeout=2)
    consumed: dict[str, list[pb.GameResult]] = {"ratings": [], "payouts": []}
    games: list[str] = []
    tasks = [asyncio.create_task(_consume(lambda: stub, group, "m", into))
             for group, into in consumed.items()]  # consumers read through every kill
    try:
        for wave in range(3):
            games += await _create_games(stub, games_n // 3, 10_000 * (wave + 1))
            if wave == 0:  # SIGKILL the service while its bots play; start another
                await asyncio.sleep(1.0)
                servers[-1].send_signal(signal.SIGKILL)
                servers[-1].wait()
                server, grpc_port = start_server(url, prefix, tmp_path, f"s{wave + 2}",
                                                 *NO_CREATE_LIMIT)
                servers.append(server)
                channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
                channels.append(channel)
                stub = pb_grpc.GameServiceStub(channel)
            elif wave == 1:  # SIGKILL Redis for 2 s, same append-only file after
                await asyncio.sleep(1.0)
                redis_proc.send_signal(signal.SIGKILL)
                redis_proc.wait()
                await asyncio.sleep(2.0)
                redis_proc = start_redis(port, data)
        for g in games:
            await _wait_ended(store, g, timeout=300)
        total = 2 * len(games)
        await _until(list(consumed.values()), [total, total])
        await asyncio.sleep(1.5)  # one lease more: nothing else arrives
        for group, into in consumed.items():
            _check_group(into, games, group)
        print(f"\n{len(games)} games, service and Redis SIGKILLed: {total} summaries per "
              "group, 0 lost, 0 twice")
        record_property("summaries", total)
    finally:
        for t in tasks:
            t.cancel()
        for c in channels:
            await c.close()
        await store.close()
        for s in servers:
            if s.poll() is None:
                s.kill()
                s.wait()
        redis_proc.kill()
        redis_proc.wait()


async def test_an_abandoned_game_reaches_the_feed_through_the_service(prefix: str) -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix, idle_ttl=0.5)
    try:
        async with serving(store) as running:
            created = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            await asyncio.sleep(1.5)  # idle past the expiry: its keys are gone
            assert not await store.exists(created.game_id)
            stream = running.stub.StreamResults(pb.StreamResultsRequest(
                admin_token=ADMIN_TOKEN, group="history", consumer="h"))
            got: list[pb.GameResult] = []
            while len(got) < 2:  # the stream's first sweep finds the expired game
                got += (await asyncio.wait_for(stream.read(), 30)).results
            stream.cancel()
        assert [(r.game_id, r.kind) for r in got] == [
            (created.game_id, pb.RESULT_KIND_CREATED),
            (created.game_id, pb.RESULT_KIND_ABANDONED)]
        assert await store.list_games(active_only=True) == []
    finally:
        await store.close()
        await delete_prefix(prefix)
