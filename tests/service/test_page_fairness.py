"""One spectator looping over ``GetEvents`` pages of 1,000 costs another client of the same
``rummy serve`` at most 2x: pages are priced by their size in the rate limit (a
cost-weighted token bucket, ``--rate-events``) and read and encoded in chunks between which
the event loop serves other calls.

The fault: the page was built on the event loop in one stretch (70 ms for 1,000 events) and
the rate limit counted calls, not cost, so one spectator with no token looping over pages
slowed every other client 20-26x (quiet) to 34-65x (loaded); 75x on the median ``GetView``
measured here.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.model import RATE_EVENTS

from tests.chaos_helpers import served_server
from tests.redis_helpers import REDIS_URL, redis_unreachable

from .conftest import bots, humans

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.slow, pytest.mark.chaos]

WINDOW = 4.0
"""Seconds the other client's calls are timed, alone and beside the page loop."""


@pytest.fixture
def served(prefix: str, tmp_path: Path) -> Iterator[int]:
    """``rummy serve`` with its default limits over the real Redis; its port."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    with served_server(REDIS_URL, prefix, tmp_path, "pages") as port:
        yield port


def _retry_after(err: grpc.aio.AioRpcError) -> float:
    """The RetryInfo delay of a RESOURCE_EXHAUSTED reply, in seconds."""
    md = dict(err.trailing_metadata() or ())
    status = status_pb2.Status.FromString(md["grpc-status-details-bin"])
    for detail in status.details:
        info = error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            return info.retry_delay.seconds + info.retry_delay.nanos / 1e9
    raise AssertionError("no RetryInfo")


async def _views(stub: pb_grpc.GameServiceStub, gid: str, token: str) -> list[float]:
    """Latencies of back-to-back ``GetView`` calls for :data:`WINDOW` seconds."""
    out = []
    end = time.perf_counter() + WINDOW
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        await stub.GetView(pb.GetViewRequest(game_id=gid, token=token), timeout=30)
        out.append(time.perf_counter() - t0)
    return out


async def test_a_page_loop_costs_another_client_at_most_twice(served: int,
                                                              record_property) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served}") as ch_spectator, \
            grpc.aio.insecure_channel(f"127.0.0.1:{served}") as ch_player:
        spectator = pb_grpc.GameServiceStub(ch_spectator)
        player = pb_grpc.GameServiceStub(ch_player)
        # a long finished game of random bots (thousands of events) to page through
        long_game = await spectator.CreateGame(pb.CreateGameRequest(
            seats=bots("random", "random", "random", "random"),
            variants={"target_score": "1000"}, seed=3), timeout=30)
        last = 0
        async for m in spectator.StreamEvents(pb.StreamEventsRequest(
                game_id=long_game.game_id), timeout=120):
            last = m.event.version
        assert last > 2000, last
        mine = await player.CreateGame(pb.CreateGameRequest(seats=humans(2)), timeout=30)
        gid, token = mine.game_id, mine.tokens[0].token

        alone = await _views(player, gid, token)
        stop = asyncio.Event()
        read = {"events": 0, "refused": 0}

        async def page_loop() -> None:  # a spectator with no token, honouring RetryInfo
            after = 0
            while not stop.is_set():
                try:
                    page = await spectator.GetEvents(pb.GetEventsRequest(
                        game_id=long_game.game_id, after_version=after, page_size=1000),
                        timeout=30)
                except grpc.aio.AioRpcError as err:
                    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err
                    assert "events read" in (err.details() or "")
                    read["refused"] += 1
                    await asyncio.sleep(_retry_after(err))
                    continue
                read["events"] += len(page.events)
                after = page.next_after_version

        loop = asyncio.get_running_loop().create_task(page_loop())
        try:
            await asyncio.sleep(6.0)  # past the burst (ten pages) into the steady state
            before = dict(read)
            t0 = time.perf_counter()
            beside = await _views(player, gid, token)
            took = time.perf_counter() - t0
        finally:
            stop.set()
            await loop
    rate = (read["events"] - before["events"]) / took
    ratio = statistics.median(beside) / statistics.median(alone)
    print(f"\nGetView median {statistics.median(alone) * 1000:.2f} ms alone, "
          f"{statistics.median(beside) * 1000:.2f} ms beside the page loop ({ratio:.2f}x); "
          f"the loop read {rate:.0f} events/s, refused {read['refused']} times")
    record_property("fault", "GetEvents page loop beside a player")
    record_property("median_ratio", round(ratio, 2))
    record_property("loop_events_per_s", round(rate))
    assert read["refused"] > 0
    assert rate <= RATE_EVENTS * 1.25 + 1000 / took, rate  # one page of slack
    assert ratio <= 2.0, ratio
