"""A game-creation request naming ``package.module:Class`` imports nothing: the service
checks client names with ``check_bot(..., imports=False)``, so only the operator's
configuration (``--bot-strategies``) can make the server import a tester's bot."""

from __future__ import annotations

import asyncio
import sys

import pytest
from rummy_grpc.app import GameApp, SeatSpec
from rummy_grpc.errors import BadRequest
from rummy_store import MemoryEventStore

from rummy.events import GameEnded
from rummy.invariants import verify_log

from .conftest import play_app_bot_game


def test_a_client_cannot_make_the_server_import_a_module() -> None:
    name = "examples.rl_random_vs_greedy:Bot"  # exists; importing it would run its code
    app = GameApp(MemoryEventStore())
    with pytest.raises(BadRequest, match=f"seat 0: unknown bot '{name}'; known bots: "):
        asyncio.run(app.create_game([SeatSpec("bot", strategy=name),
                                     SeatSpec("bot", strategy="basic")], {}, seed=1))
    assert "examples.rl_random_vs_greedy" not in sys.modules


def test_an_operator_configured_external_bot_plays_a_whole_game() -> None:
    events = asyncio.run(play_app_bot_game(["examples.my_bot:MyBot", "basic"]))
    assert isinstance(events[-1], GameEnded)
    assert list(verify_log(events))[-1].is_over
