"""``export`` / store-backed ``replay`` subcommands and the Prometheus ``/metrics`` endpoint."""

from __future__ import annotations

import asyncio
import io
import urllib.request

import pytest
from rummy_grpc.__main__ import main
from rummy_grpc.app import GameApp, SeatSpec
from rummy_grpc.metrics import start_metrics_server
from rummy_store import RedisEventStore

from rummy.events import loads
from rummy_cli.replay import read_log, replay_events

from .conftest import REDIS_URL, delete_prefix, redis_unreachable

pytestmark = pytest.mark.redis


def _bot_game(prefix: str) -> tuple[str, int]:
    async def run():
        store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
        app = GameApp(store)
        created = await app.create_game([SeatSpec("bot", strategy="basic")] * 3,
                                        {"target_score": "30"}, seed=2)
        for _ in range(500):
            if not await store.list_games(active_only=True):
                break
            await asyncio.sleep(0.02)
        version = await store.version(created.game_id)
        await app.close()
        await store.close()
        return created.game_id, version

    return asyncio.run(run())


def test_export_writes_the_file_format_and_replays(prefix, tmp_path, capsys):
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    try:
        gid, version = _bot_game(prefix)
        out = tmp_path / "game.jsonl"
        assert main(["export", gid, "--redis-url", REDIS_URL, "--prefix", prefix,
                     "-o", str(out)]) == 0
        lines = out.read_text().splitlines()
        assert len(lines) == version
        assert loads(lines[-1]).TYPE == "GameEnded"
        buf = io.StringIO()
        assert replay_events(read_log(str(out)), out=buf) == 0  # the file replay accepts it
        assert main(["replay", gid, "--redis-url", REDIS_URL, "--prefix", prefix]) == 0
        assert "winner" in capsys.readouterr().out
        with pytest.raises(SystemExit, match="no events"):
            main(["export", "no-such-game", "--redis-url", REDIS_URL, "--prefix", prefix])
        # an output that cannot be written is an error line before Redis is read, never a
        # traceback after it (found by a tester, for every command's outputs)
        for bad, says in ((tmp_path / "no-dir" / "g.jsonl", "there is no directory"),
                          (tmp_path, "it is a directory")):
            assert main(["export", gid, "--redis-url", REDIS_URL, "--prefix", prefix,
                         "-o", str(bad)]) == 2
            assert f"error: cannot write {bad}: {says}" in capsys.readouterr().err
    finally:
        asyncio.run(delete_prefix(prefix))


def test_metrics_endpoint_serves_the_rummy_metrics():
    port = start_metrics_server(0, addr="127.0.0.1")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    for name in ("rummy_rule_validation_seconds_bucket", "rummy_event_append_seconds",
                 "rummy_games_active", "rummy_grpc_server_handling_seconds"):
        assert name in text
    assert 'le="1e-06"' in text  # microsecond buckets


def test_replay_and_export_read_rummy_redis_url_alike(prefix, tmp_path, capsys, monkeypatch):
    # `rummy replay GAME_ID` ignored RUMMY_REDIS_URL; `export -o` said nothing
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    from rummy_cli.main import main as rummy_main
    try:
        gid, version = _bot_game(prefix)
        monkeypatch.setenv("RUMMY_REDIS_URL", REDIS_URL)
        out = tmp_path / "g.jsonl"
        assert rummy_main(["export", gid, "--prefix", prefix, "-o", str(out)]) == 0
        assert f"wrote {version} events of game {gid} to {out}" in capsys.readouterr().err
        assert rummy_main(["replay", gid, "--prefix", prefix]) == 0
        assert "winner" in capsys.readouterr().out
        assert rummy_main(["replay", str(out)]) == 0  # a file is still a file
    finally:
        asyncio.run(delete_prefix(prefix))
