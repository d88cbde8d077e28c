"""A server bot seat that fails keeps playing: it plays the phase's default move
(draw, pass, end_turn), the failure is logged with the game id and counted in
``rummy_bot_failures_total``. Real server, real Redis."""

from __future__ import annotations

import logging

import pytest
from prometheus_client import REGISTRY
from rummy_api.v1 import game_service_pb2 as pb

from rummy.bots import BOTS
from rummy.bots.random_bot import RandomBot
from rummy.commands import Meld
from rummy.events import from_dict
from rummy.evolve import replay
from rummy.melds import parse_table

from .conftest import bots, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


class RaisingBot(RandomBot):
    """Raises on every action (as the solver did on a 13-card sequence)."""

    def act(self, view):
        raise RuntimeError("no room to park a wildcard")


class IllegalBot(RandomBot):
    """Proposes a meld the rules refuse whenever it may meld, else plays as random."""

    def act(self, view):
        cmd = super().act(view)
        if view.phase == "meld_or_pass":
            return Meld(view.seat, parse_table("5S 6S 8S"))
        return cmd


def _failures(strategy: str, reason: str) -> float:
    return REGISTRY.get_sample_value("rummy_bot_failures_total",
                                     {"strategy": strategy, "reason": reason}) or 0.0


@pytest.mark.parametrize("name, cls, reason", [("raising", RaisingBot, "raised"),
                                               ("illegal", IllegalBot, "illegal_move")])
async def test_a_failing_bot_seat_plays_the_default_move_and_the_game_ends(
        store, monkeypatch, caplog, name, cls, reason):
    monkeypatch.setitem(BOTS, name, cls)
    before = _failures(name, reason)
    caplog.set_level(logging.ERROR)
    async with serving(store, bot_strategies=(name, "basic")) as running:
        created = await running.stub.CreateGame(pb.CreateGameRequest(
            seats=bots(name, "basic"), variants={"target_score": "40"}, seed=5))
        seen = []
        async for msg in running.stub.StreamEvents(
                pb.StreamEventsRequest(game_id=created.game_id)):
            seen.append(msg.event)
    assert seen[-1].type == "GameEnded"
    stored = await store.read(created.game_id)
    state = replay(from_dict(e.data) for e in stored)
    assert state is not None and state.is_over  # the log replays (I4)
    assert _failures(name, reason) > before
    assert any(created.game_id in r.getMessage() and "default move" in r.getMessage()
               for r in caplog.records)
    # the failing seat never melded: only draws, passes and turn ends
    melds = [e for e in stored if e.data["type"] == "Melded" and e.data["seat"] == 0]
    assert melds == []


@pytest.mark.asyncio
async def test_resuming_a_game_gone_from_the_store_is_a_warning_not_an_error(
        caplog: pytest.LogCaptureFixture) -> None:
    # found by an attack, aside: after Redis restarted empty, the retry of a follow-up logged an
    # ERROR with a traceback for GameNotFound, an expected end of the retry
    from rummy_grpc.app import GameApp
    from rummy_store import MemoryEventStore

    app = GameApp(MemoryEventStore())
    with caplog.at_level(logging.WARNING, logger="rummy_grpc"):
        await app.progress.resume("gone-game")  # returns: nothing to resume
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "game gone-game is no longer in the store: nothing to resume")]
