"""The session's pushed events shown straight from the stored record are byte-identical to
the decode -> redact -> encode path, for every event of whole seeded games and every seat
(I3: a seat never receives another seat's hidden cards), on both stores."""

from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest
from rummy_grpc.app import GameApp, SeatSpec
from rummy_grpc.convert import event_dict_to_proto, event_to_proto
from rummy_grpc.reads import redact_for, redact_record
from rummy_grpc.servicer import GameServicer
from rummy_store import MemoryEventStore
from rummy_store.base import StoredEvent

from rummy.events import EVENT_TYPES, from_dict

GAMES = [(seed, players, strategies)
         for seed, (players, strategies) in enumerate(
             [(2, ["random", "basic"]), (3, ["basic", "random", "basic"]),
              (4, ["random", "random", "basic", "basic"]), (2, ["basic", "basic"]),
              (5, ["random", "basic", "random", "basic", "random"]),
              (2, ["random", "random"]), (3, ["random", "random", "random"]),
              (4, ["basic", "basic", "basic", "basic"])], start=11)]


async def _played(store: Any, seed: int, strategies: list[str]) -> tuple[GameApp, str]:
    """A whole game of server bots on ``store``: the app and the game's id."""
    app = GameApp(store, bot_strategies=list(dict.fromkeys(strategies)))
    created = await app.create_game([SeatSpec("bot", strategy=s) for s in strategies],
                                    {"target_score": "40"}, seed=seed)
    for _ in range(3000):
        if not await store.list_games(active_only=True):
            break
        await asyncio.sleep(0.01)
    return app, created.game_id


def _reference(meta: dict[str, Any], seat: int | None, se: StoredEvent) -> bytes:
    """The event as the decode -> redact -> encode path shows it to ``seat``."""
    return event_to_proto(redact_for(meta, seat, from_dict(se.data)), se.version,
                          se.ts).SerializeToString()


async def _check_game(store: Any, seed: int, strategies: list[str]) -> Counter[str]:
    """Every stored event of one played game, shown to every seat (and, for
    ``redact_record``, a spectator), against the reference; returns the event types the
    record path showed without decoding."""
    app, gid = await _played(store, seed, strategies)
    try:
        meta = await app.repo.meta(gid)
        stored = await store.read(gid, 0)
        assert stored[-1].type == "GameEnded"
        servicer = SimpleNamespace(app=app)
        fast: Counter[str] = Counter()
        for seat in range(len(strategies)):
            show = GameServicer._shower(servicer, meta, seat)  # type: ignore[arg-type]
            for se in stored:
                assert show(se).SerializeToString() == _reference(meta, seat, se), (seat, se)
        for seat in (*range(len(strategies)), None):
            for se in stored:
                data = redact_record(seat, se.data)
                if data is None:
                    continue
                fast[se.type] += 1
                got = event_dict_to_proto(data, se.version, se.ts).SerializeToString()
                assert got == _reference(meta, seat, se), (seat, se)
                if se.type == "CardDrawn" and se.data["seat"] != seat:
                    assert data.get("card") is None  # I3: another seat's draw
        return fast
    finally:
        await app.close()


@pytest.mark.asyncio
async def test_pushed_events_match_the_decoding_path_memory() -> None:
    seen: Counter[str] = Counter()
    for seed, _players, strategies in GAMES:
        seen += await _check_game(MemoryEventStore(), seed, strategies)
    # the record path is taken for the common events, never for the deal or the seed
    for etype in ("CardDrawn", "Passed", "TurnEnded", "Melded", "RoundScored", "GameEnded"):
        assert seen[etype] > 0, etype
    assert seen["RoundStarted"] == 0 and seen["GameStarted"] == 0


@pytest.mark.redis
@pytest.mark.asyncio
async def test_pushed_events_match_the_decoding_path_redis(store: Any) -> None:
    seen: Counter[str] = Counter()
    for seed, _players, strategies in GAMES[:3]:
        seen += await _check_game(store, seed, strategies)
    assert seen["CardDrawn"] > 0 and seen["TurnEnded"] > 0


def test_old_schema_records_and_hidden_types_are_decoded() -> None:
    """A record at an older schema version (upcast on decoding) or of a type whose
    redaction needs the deal or hides the seed is not shown from the record."""
    old_end = {"type": "GameEnded", "v": 1, "totals": [10, 20], "winner": 1}
    assert redact_record(0, old_end) is None
    for etype in ("RoundStarted", "GameStarted"):
        assert redact_record(0, {"type": etype, "v": EVENT_TYPES[etype].VERSION}) is None
    assert redact_record(0, {"type": "Nope", "v": 1}) is None
    drawn = {"type": "CardDrawn", "v": 1, "seat": 1, "card": "7H"}
    assert redact_record(1, drawn) is drawn
    assert redact_record(0, drawn) == {**drawn, "card": None}
    assert redact_record(None, drawn) == {**drawn, "card": None}
    assert drawn["card"] == "7H"  # the stored record is not changed
