"""The provably fair deal on a real server (rummy.fairness, docs/fairness.md): every seat
sees the seed commitment from the first event; the seed and salt stay hidden until the game
is over; then the full-information events reveal them and every deck checks out."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import pytest
from rummy_api.v1 import game_service_pb2 as pb

from rummy.cards import parse_card
from rummy.events import GameStarted, RoundStarted, dumps, from_dict
from rummy.fairness import verify_deal
from rummy.rules import RuleSet
from rummy_cli.main import main

from .conftest import humans, play_turns

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


def _deal_events(events: Any) -> list[GameStarted | RoundStarted]:
    """The GameStarted and RoundStarted events of a GetEvents page, as core events."""
    out: list[GameStarted | RoundStarted] = []
    for m in events:
        if m.type == "GameStarted":
            g = m.game_started
            rules = RuleSet(**{f.name: getattr(g.rules, f.name)
                               for f in dataclasses.fields(RuleSet)})
            out.append(GameStarted(g.players, rules, g.dealer,
                                   g.seed if g.HasField("seed") else None, tuple(g.names),
                                   g.turn_seconds, g.salt if g.HasField("salt") else None,
                                   g.commitment))
        elif m.type == "RoundStarted":
            r = m.round_started
            out.append(RoundStarted(r.round, r.dealer,
                                    tuple(parse_card(t) for t in r.deck) or None))
    return out


async def test_the_commitment_is_public_and_the_reveal_verifies(running, store, tmp_path,
                                                                 capsys) -> None:
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2),
                                                         variants={"target_score": "30"}))
    gid = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    early = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, token=tokens[1]))
    assert not early.full_information
    started = early.events[0].game_started
    assert len(started.commitment) == 64
    assert not started.HasField("seed") and not started.HasField("salt")

    await play_turns(stub, gid, tokens, {0: "greedy", 1: "greedy"})

    late = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, token=tokens[1]))
    assert late.full_information  # the game is over: seed and salt revealed to every seat
    revealed = late.events[0].game_started
    assert revealed.commitment == started.commitment
    assert revealed.HasField("seed") and len(revealed.salt) == 32
    assert started.commitment == hashlib.sha256(
        revealed.salt.encode("ascii") + str(revealed.seed).encode("ascii")).hexdigest()
    deal = _deal_events(late.events)
    assert sum(isinstance(e, RoundStarted) for e in deal) >= 1
    assert verify_deal(deal) == []
    # the store's own log verifies too, and a different seed is refused
    truth = [from_dict(se.data) for se in await store.read(gid)]
    assert verify_deal(truth) == []
    forged = dataclasses.replace(truth[0], seed=truth[0].seed + 1)  # type: ignore[union-attr]
    assert "changed after the commitment" in verify_deal([forged, *truth[1:]])[0]
    # `rummy verify` on the log as the store holds it (what `rummy export` writes)
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in truth))
    assert main(["verify", str(log)]) == 0
    assert f"fair deal: commitment {started.commitment}" in capsys.readouterr().out
