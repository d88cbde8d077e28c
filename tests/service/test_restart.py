"""The server is killed with SIGKILL mid-game and restarted: every game continues from the same
version and nothing acknowledged is lost (the event store is the only state)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

from tests.harness import HANG_GUARD

from .conftest import ADMIN_TOKEN, REDIS_URL, bots, humans, play_turns

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.slow, pytest.mark.chaos]

ROOT = Path(__file__).resolve().parents[2]


def _start(prefix: str, tmp_path: Path, n: int) -> tuple[subprocess.Popen, int]:
    port_file = tmp_path / f"port{n}"
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_ADMIN_TOKEN=ADMIN_TOKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy_grpc", "serve", "--redis-url", REDIS_URL,
         "--prefix", prefix, "--host", "127.0.0.1", "--port", "0",
         "--port-file", str(port_file), "--bot-delay", "0.02"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + HANG_GUARD
    while not port_file.exists():
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    return proc, int(port_file.read_text())


async def test_sigkill_mid_game_then_restart_continues_from_the_same_version(
        store, prefix, tmp_path, record_property):
    proc, port = _start(prefix, tmp_path, 1)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            duel = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
                seats=humans(2), variants={"target_score": "40"}, seed=17))
            tokens = {t.seat: t.token for t in duel.tokens}
            watched = await stub.CreateGame(pb.CreateGameRequest(
                seats=bots("basic", "random", "basic"), variants={"target_score": "40"},
                seed=18))
            # play 25 acknowledged commands of the duel
            last = await play_turns(stub, duel.game_id, tokens, {0: "basic", 1: "basic"},
                                    max_commands=25)
            acked = last.version
            await asyncio.sleep(0.2)  # the bots are mid-game
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    bot_version = await store.version(watched.game_id)
    assert await store.version(duel.game_id) == acked  # nothing acknowledged lost
    assert bot_version > 2
    proc, port = _start(prefix, tmp_path, 2)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            view = (await stub.GetView(pb.GetViewRequest(game_id=duel.game_id,
                                                         token=tokens[0]))).view
            assert view.version == acked
            last = await play_turns(stub, duel.game_id, tokens, {0: "basic", 1: "basic"})
            assert last.phase == pb.PHASE_GAME_OVER
            # the server bots resumed by themselves; the watcher resumes its stream
            rest = [m.event async for m in stub.StreamEvents(pb.StreamEventsRequest(
                game_id=watched.game_id, after_version=bot_version))]
            assert rest[0].version == bot_version + 1 and rest[-1].type == "GameEnded"
    finally:
        proc.send_signal(signal.SIGTERM)  # graceful this time
        proc.wait(15)
    assert proc.returncode == 0
    record_property("fault", "server SIGKILL + restart")
    record_property("events_lost", 0)
    for gid in (duel.game_id, watched.game_id):
        events = await store.read(gid)
        assert [e.version for e in events] == list(range(1, len(events) + 1))
