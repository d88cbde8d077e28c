"""Known callers and per-caller rate limits: API keys (``authorization: Bearer``,
digests at rest, constant-time comparison) and allowed client-certificate names reserve
``CreateGame`` and admin requests; seat-token calls are unchanged; one caller flooding the
server is rate limited (``RESOURCE_EXHAUSTED`` / ``RATE_LIMITED`` with a ``RetryInfo``)
while another plays unharmed."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from prometheus_client import REGISTRY
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.callers import (
    ApiKey,
    CallerPolicy,
    hash_api_key,
    new_api_key,
    parse_api_keys,
)
from rummy_grpc.errors import RateLimited
from rummy_grpc.limits import RateLimiter
from rummy_grpc.tls import TlsConfig

from tests.chaos_helpers import ROOT

from .conftest import ADMIN_TOKEN, humans, play_turns
from .test_tls import channel_credentials, pki, serving  # noqa: F401 - pki is a fixture

pytestmark = [pytest.mark.timeout(120)]

KEY_A, KEY_B = new_api_key(), new_api_key()


def policy(*cns: str) -> CallerPolicy:
    """Two API keys, ``player`` (KEY_A) and ``flooder`` (KEY_B), and allowed names."""
    return CallerPolicy(parse_api_keys(f"player:{hash_api_key(KEY_A)}\n"
                                       f"# a comment\n\nflooder:{hash_api_key(KEY_B)}\n"),
                        cns)


def details(err: grpc.aio.AioRpcError) -> tuple[str, float | None]:
    """The ErrorInfo reason and the RetryInfo delay (seconds; None: no RetryInfo)."""
    md = dict(err.trailing_metadata() or ())
    status = status_pb2.Status.FromString(md["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info) and info.domain == "rummy"
    assert md["rummy-reason"] == info.reason
    delay = None
    for d in status.details[1:]:
        retry = error_details_pb2.RetryInfo()
        if d.Unpack(retry):
            delay = retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9
    return info.reason, delay


async def refused(call: Any) -> grpc.aio.AioRpcError:
    """The error a call fails with (it must fail)."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value


# ------------------------------------------------------------------------------- units

def test_api_key_files_hold_names_and_digests_only() -> None:
    keys = parse_api_keys(f"a:{hash_api_key('k1')}\nb.c@d-e:{'A' * 64}\n")
    assert [k.name for k in keys] == ["a", "b.c@d-e"] and keys[1].digest == b"\xaa" * 32
    p = CallerPolicy(keys)
    assert p.match_key("k1") == "a" and p.match_key("k2") is None
    for bad in ("a", "a:xyz", f":{'0' * 64}", f"a b:{'0' * 64}", "# only a comment\n",
                f"a:{'0' * 64}\na:{'1' * 64}", f"a:{'0' * 64}\nb:{'0' * 64}"):
        with pytest.raises(ValueError) as err:
            parse_api_keys(bad, "keys.txt")
        assert "keys.txt" in str(err.value) and "0" * 64 not in str(err.value)
    with pytest.raises(ValueError):
        hash_api_key("has space")


def test_identity_never_trusts_an_unverified_name() -> None:
    p = CallerPolicy([ApiKey("a", bytes.fromhex(hash_api_key("k1")))], ["backend-a"])
    peer = "ipv4:10.0.0.7:5000"
    assert p.identify([("authorization", "Bearer k1")], None, peer).key == "key:a"
    for header in ("Bearer k2", "Basic k1", "k1", "Bearer "):
        who = p.identify([("authorization", header)], None, peer)
        assert (who.key, who.known, who.credentials) == ("host:10.0.0.7", False, "bad")
    cert = {"x509_common_name": [b"backend-a"], "x509_subject_alternative_name": [b"x"]}
    assert p.identify([], cert, peer).key == "cn:backend-a"
    who = p.identify([], {"x509_common_name": [b"other"]}, peer)
    assert (who.key, who.known, who.credentials) == ("cn:other", False, "bad")
    assert p.identify([], None, peer).credentials == "none"
    assert not CallerPolicy().enforced and p.enforced


def test_token_buckets_refill_and_stay_bounded() -> None:
    now = [0.0]
    limiter = RateLimiter(10, 5, clock=lambda: now[0], max_callers=100)
    assert [limiter.delay("a") for _ in range(5)] == [0.0] * 5
    assert limiter.delay("a") == pytest.approx(0.1)  # one call per 100 ms
    assert limiter.delay("b") == 0.0  # another caller has its own bucket
    now[0] += 0.25
    assert limiter.delay("a") == 0.0 and limiter.delay("a") == 0.0
    assert limiter.delay("a") > 0
    with pytest.raises(RateLimited) as err:
        limiter.take("a")
    assert err.value.retry_after > 0 and "retry in" in str(err.value)
    for i in range(1000):
        limiter.delay(f"c{i}")
    assert len(limiter) == 100  # least recently used buckets dropped
    off = RateLimiter(0, 1)
    assert not off.enabled and all(off.delay("a") == 0 for _ in range(1000))
    assert len(off) == 0
    with pytest.raises(ValueError):
        RateLimiter(-1, 1)
    with pytest.raises(ValueError):
        RateLimiter(1, 0)


def test_rummy_serve_prints_api_key_lines() -> None:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}")
    run = [sys.executable, "-m", "rummy_grpc", "serve"]
    done = subprocess.run([*run, "--hash-api-key", "backend-a"], input="s3cret-key\n",
                          env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == f"backend-a:{hash_api_key('s3cret-key')}\n"
    done = subprocess.run([*run, "--new-api-key", "backend-b"], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    key, line = done.stdout.splitlines()
    assert line == f"backend-b:{hash_api_key(key)}" and len(key) >= 40
    bad = subprocess.run([*run, "--api-keys", str(ROOT / "README.md"), "--store", "memory"],
                         env=env, capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") \
        and "expected name:sha256hex" in bad.stderr


# ------------------------------------------------------------------------ over the wire

@pytest.mark.asyncio
async def test_create_game_and_admin_calls_need_a_known_caller(store, pki) -> None:  # noqa: F811
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key), str(pki["ca"].cert))
    target = "localhost:{}"
    async with serving(store, tls=tls, callers=policy("backend-a")) as (_, port):
        # mTLS: the client certificate backend-a is allowed; an API key works as well
        async with grpc.aio.secure_channel(target.format(port),
                                           channel_credentials(pki, "client")) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            game_id, token = created.game_id, created.tokens[0].token
            bad = await refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(2)),
                                                metadata=(("authorization", "Bearer no"),)))
            assert bad.code() == grpc.StatusCode.PERMISSION_DENIED
            assert details(bad) == ("BAD_CREDENTIALS", None)
            messages = {bad.details()}
            for header in ("Basic " + KEY_A, "Bearer", "Bearer " + KEY_A + "x"):
                bad = await refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(2)),
                                                    metadata=(("authorization", header),)))
                assert details(bad)[0] == "BAD_CREDENTIALS"
                messages.add(bad.details())
            assert len(messages) == 1  # never says which part was wrong
            ok = await stub.GetState(pb.GetStateRequest(game_id=game_id,
                                                        admin_token=ADMIN_TOKEN))
            assert ok.full_information
        # a CA-signed certificate whose name is not allowed, no key: refused
        async with grpc.aio.secure_channel(target.format(port),
                                           channel_credentials(pki, "client2")) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            err = await refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(2))))
            assert err.code() == grpc.StatusCode.PERMISSION_DENIED
            assert details(err) == ("BAD_CREDENTIALS", None)
            err = await refused(stub.GetEvents(pb.GetEventsRequest(
                game_id=game_id, admin_token=ADMIN_TOKEN)))
            assert details(err)[0] == "BAD_CREDENTIALS"
            # seat-token calls are unchanged: no caller credentials needed
            view = (await stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                         token=token))).view
            assert view.version == 2
            # an API key on the same connection makes it a known caller
            with_key = (("authorization", f"Bearer {KEY_A}"),)
            await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)), metadata=with_key)

    # API keys only, server-authenticated TLS: no credentials at all is UNAUTHENTICATED
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key))
    async with serving(store, tls=tls, callers=policy()) as (_, port):
        async with grpc.aio.secure_channel(target.format(port),
                                           channel_credentials(pki)) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            err = await refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(2))))
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED
            assert details(err) == ("NO_CREDENTIALS", None)
            assert "Bearer" in err.details()
            err = await refused(stub.GetState(pb.GetStateRequest(game_id=game_id,
                                                                 admin_token=ADMIN_TOKEN)))
            assert details(err)[0] == "NO_CREDENTIALS"
        async with grpc.aio.secure_channel(target.format(port),
                                           channel_credentials(pki, api_key=KEY_A)) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            assert len(created.tokens) == 2


@pytest.mark.asyncio
async def test_without_keys_or_names_create_game_stays_open(store, pki) -> None:  # noqa: F811
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key))
    async with serving(store, tls=tls) as (_, port):
        async with grpc.aio.secure_channel(f"localhost:{port}",
                                           channel_credentials(pki, api_key="anything")) as ch:
            stub = pb_grpc.GameServiceStub(ch)
            created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            await stub.GetState(pb.GetStateRequest(game_id=created.game_id,
                                                   admin_token=ADMIN_TOKEN))


def _rate_limited(kind: str) -> float:
    return REGISTRY.get_sample_value("rummy_rate_limited_total", {"kind": kind}) or 0.0


@pytest.mark.asyncio
async def test_a_flooding_caller_is_rate_limited_and_another_plays_unharmed(
        store, pki, record_property: Any) -> None:  # noqa: F811
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key))
    before = {k: _rate_limited(k) for k in ("command", "create")}
    async with serving(store, tls=tls, callers=policy(), rate_commands=50, rate_burst=100,
                       rate_create=5, rate_create_burst=20) as (_, port):
        target = f"localhost:{port}"
        async with grpc.aio.secure_channel(target, channel_credentials(pki, api_key=KEY_A)) \
                as player_ch, grpc.aio.secure_channel(
                    target, channel_credentials(pki, api_key=KEY_B)) as flood_ch:
            player = pb_grpc.GameServiceStub(player_ch)
            flooder = pb_grpc.GameServiceStub(flood_ch)
            created = await player.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            game_id = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            stop = asyncio.Event()
            outcomes: dict[str, int] = {}
            retry_delays: list[float] = []

            async def one(call: Any) -> None:
                try:
                    await call
                    code = "OK"
                except grpc.aio.AioRpcError as err:
                    code = err.code().name
                    if err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                        reason, delay = details(err)
                        assert reason == "RATE_LIMITED" and delay is not None and delay > 0
                        assert "retry in" in (err.details() or "")
                        retry_delays.append(delay)
                outcomes[code] = outcomes.get(code, 0) + 1

            async def flood() -> None:
                while not stop.is_set():
                    await asyncio.gather(
                        *(one(flooder.GetView(pb.GetViewRequest(game_id=game_id)))
                          for _ in range(40)),
                        *(one(flooder.CreateGame(pb.CreateGameRequest(seats=humans(2))))
                          for _ in range(10)))

            latencies: list[float] = []

            class TimedStub:
                """The player's stub, every call timed (any failure fails the test)."""

                def __getattr__(self, name: str) -> Any:
                    method = getattr(player, name)

                    async def call(request: Any, **kw: Any) -> Any:
                        t0 = time.perf_counter()
                        reply = await method(request, **kw)
                        latencies.append(time.perf_counter() - t0)
                        return reply
                    return call

            # the player alone first (baseline), then under the flood
            await play_turns(TimedStub(), game_id, tokens, {0: "basic", 1: "basic"},
                             max_commands=6)
            baseline, latencies = latencies, []
            flooding = asyncio.create_task(flood())
            await asyncio.sleep(0.5)  # the flood is under way before the player goes on
            t0 = time.perf_counter()
            view = await play_turns(TimedStub(), game_id, tokens, {0: "basic", 1: "basic"},
                                    max_commands=20)
            played = time.perf_counter() - t0
            stop.set()
            await flooding
    assert view.version > 2
    flood_total = sum(outcomes.values())
    limited = outcomes.get("RESOURCE_EXHAUSTED", 0)
    assert limited > 0 and set(outcomes) <= {"OK", "RESOURCE_EXHAUSTED"}, outcomes
    assert _rate_limited("command") > before["command"]
    assert _rate_limited("create") > before["create"]
    p50 = statistics.median(latencies) * 1000
    p99 = sorted(latencies)[int(len(latencies) * 0.99) - 1] * 1000
    print(f"\nflooder: {flood_total} calls in {played:.1f} s, {limited} RATE_LIMITED "
          f"(retry delays {min(retry_delays) * 1000:.0f}-{max(retry_delays) * 1000:.0f} ms); "
          f"player: {len(latencies)} calls all OK, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
          f"max {max(latencies) * 1000:.1f} ms (alone: p50 "
          f"{statistics.median(baseline) * 1000:.1f} ms over {len(baseline)} calls)")
    record_property("flood_calls", flood_total)
    record_property("flood_limited", limited)
    record_property("player_p50_ms", round(p50, 2))


def test_a_priced_bucket_takes_the_cost_and_gives_back_what_was_not_used() -> None:
    now = [0.0]
    events = RateLimiter(2000, 10_000, kind="events", clock=lambda: now[0])
    assert [events.delay("spectator", 1000) for _ in range(10)] == [0.0] * 10  # ten pages
    assert events.delay("spectator", 1000) == pytest.approx(0.5)  # then two a second
    events.refund("spectator", 600)  # the last page held 400 events
    assert events.delay("spectator", 600) == 0.0
    assert events.delay("spectator", 1) > 0
    assert events.delay("player", 50) == 0.0  # each caller its own bucket
    now[0] += 100.0
    events.refund("spectator", 10**9)  # never past the burst
    assert events.delay("spectator", 10_000) == 0.0
    assert events.delay("spectator", 1) > 0
    # a cost above the burst is capped at it: admitted once the bucket is full
    now[0] += 5.0
    assert events.delay("spectator", 50_000) == 0.0
    with pytest.raises(RateLimited) as err:
        events.take("spectator", 1000)
    assert err.value.kind == "events" and "events read" in str(err.value)
    off = RateLimiter(0, 1, kind="events")
    off.refund("x", 5)
    assert off.delay("x", 10**6) == 0.0 and len(off) == 0


@pytest.mark.asyncio
async def test_the_store_clock_keeps_the_offset_of_the_shortest_round_trip() -> None:
    from rummy_grpc.clock import StoreClock

    host = [1000.0]
    trips = iter([(0.2, 30.0), (0.02, 30.5), (0.1, 31.0)])  # (round trip, store - host)

    class Store:
        async def now(self) -> float:
            rtt, offset = next(trips)
            host[0] += rtt  # the read takes rtt seconds of host time
            return host[0] - rtt / 2 + offset

    clock = StoreClock(Store(), host=lambda: host[0])
    assert await clock.sync() == pytest.approx(30.5)
    assert clock.now() == pytest.approx(host[0] + 30.5)

    class HostClock:  # the in-memory store stamps with this host's clock
        async def now(self) -> float:
            return host[0]

    local = StoreClock(HostClock(), host=lambda: host[0])
    assert await local.sync() == 0.0 and local.now() == host[0]
