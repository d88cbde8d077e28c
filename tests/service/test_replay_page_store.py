"""The store-backed replay writes the page and the analysis: ``rummy replay
GAME_ID --redis-url URL --html F --analyse``, through the core's ``rummy`` and through
``python -m rummy_grpc`` (whose own ``replay`` parser has the same options)."""

from __future__ import annotations

import asyncio
import json

import pytest
from rummy_grpc.__main__ import main as grpc_main

from rummy_cli.main import main as rummy_main

from .conftest import REDIS_URL, delete_prefix, redis_unreachable
from .test_cli_and_metrics import _bot_game

pytestmark = pytest.mark.redis


def test_store_backed_replay_writes_the_page_and_the_analysis(prefix, tmp_path, capsys):
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    try:
        gid, version = _bot_game(prefix)
        for main, name in ((rummy_main, "core"), (grpc_main, "grpc")):
            page, ana = tmp_path / f"{name}.html", tmp_path / f"{name}.json"
            assert main(["replay", gid, "--redis-url", REDIS_URL, "--prefix", prefix,
                         "--html", str(page), "--seat", "1", "--analyse",
                         "--json", str(ana)]) == 0
            assert f"{version} events, seat 1's view" in capsys.readouterr().err
            assert '"seat":1' in page.read_text()
            assert json.loads(ana.read_text())["seat"] == 1
            assert main(["replay", gid, "--redis-url", REDIS_URL, "--prefix", prefix,
                         "--html", str(page), "--seat", "3"]) == 2
            assert "seats 0..2" in capsys.readouterr().err
    finally:
        asyncio.run(delete_prefix(prefix))
