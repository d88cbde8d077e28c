"""A ``search`` bot seat played by the service: the server makes it with
``make_bot`` from the registry and plays it to the end of the game, every move legal."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY
from rummy_grpc.app import GameApp, SeatSpec
from rummy_store import MemoryEventStore

from rummy.events import GameEnded
from rummy.invariants import verify_log

from .conftest import play_app_bot_game


def _failures(strategy: str) -> float:
    """Bot moves of ``strategy`` replaced by the default move (rummy_bot_failures_total)."""
    return sum(REGISTRY.get_sample_value("rummy_bot_failures_total",
                                         {"strategy": strategy, "reason": reason}) or 0.0
               for reason in ("raised", "illegal_move"))


def test_a_search_bot_seat_plays_a_whole_game() -> None:
    before = _failures("search")
    events = asyncio.run(play_app_bot_game(["search", "strategic"]))
    assert isinstance(events[-1], GameEnded)
    assert list(verify_log(events))[-1].is_over  # every event is what the rules allow
    assert _failures("search") == before  # no move fell back to the default move


def test_search_bots_are_not_offered_by_default() -> None:
    """Newcomer review: any caller could seat search bots (~100x a strategic move's CPU)
    on an open server and slow every game; a server offers them only when told to."""
    import pytest
    from rummy_grpc.app import SERVED_BOTS
    from rummy_grpc.errors import BadRequest

    assert "search" not in SERVED_BOTS and {"random", "basic", "strategic"} <= set(SERVED_BOTS)

    async def create(app: GameApp) -> None:
        await app.create_game([SeatSpec("bot", strategy="search"),
                               SeatSpec("bot", strategy="basic")], {}, seed=1)

    app = GameApp(MemoryEventStore())
    with pytest.raises(BadRequest, match="not offered bot strategy 'search'; this server "
                                         "offers: basic, greedy, human, random, strategic"):
        asyncio.run(create(app))
    with pytest.raises(BadRequest, match="seat 0: unknown bot 'nope'; known bots: "):
        asyncio.run(app.create_game([SeatSpec("bot", strategy="nope"),
                                     SeatSpec("bot", strategy="basic")], {}, seed=1))
    with pytest.raises(ValueError, match="unknown bot 'nope'; known bots: "):
        GameApp(MemoryEventStore(), bot_strategies=["nope"])
