"""Every shared conformance ``action`` case through the API: ``CheckMeld`` (the dry run)
and ``Meld`` agree with each other and with the case (valid, or refused for the case's
rule), and the dry run appends nothing.

Each case becomes a real game log, recorded in the store as a game's events: three seats
(two decks, R1.2, so a case may hold two copies of a card), the case's rule set (its
``rules``, with ``hand_size`` large enough for the position), seat 0 melds the case's
table (when it has one) and ends its turn, seat 1 holds the case's hand plus fillers and
draws a filler: seat 1 is then to meld or pass (R3.2) with exactly the case's table. The
fillers are cards that appear nowhere in the case (table, hand, new table), so they
cannot take part in the action; whether the action is an opening one (R5.5, the case's
``opening`` as :func:`rummy.conformance.case_opening` reads it) follows from the position
and is checked before the case is sent.

A case whose table before the action holds an illegal meld (a-027) is a position no game
reaches (I2: every table the engine records is legal, so ``Meld`` checks only the melds an
action changes): it is still sent, and ``CheckMeld`` must agree with ``Meld`` on it, but
the case's own verdict is the engine's on arbitrary tables, not the game's.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.auth import hash_token
from rummy_store.memory import MemoryEventStore

from rummy.cards import JOKER, POINTS, new_deck, parse_cards, physical
from rummy.commands import Draw, EndTurn
from rummy.conformance import case_opening, case_rules
from rummy.decide import settle, step
from rummy.events import Event, GameStarted, Melded, RoundStarted
from rummy.evolve import evolve
from rummy.melds import is_valid_meld, parse_table
from rummy.state import KNOCK_OR_END, MELD_OR_PASS, GameState

from .conftest import rpc_error_rule, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(300)]

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"
PLAYERS = 3
SEAT = 1


def _action_cases() -> list[Any]:
    out = []
    for f in sorted(CASES.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                case = json.loads(line)
                if case["kind"] == "action":
                    out.append(pytest.param(case, id=f"{case['id']}-{case['rule']}"))
    return out


ACTION_CASES = _action_cases()


def _deck(hands: dict[int, list[int]], dealer: int, stock: list[int]) -> tuple[int, ...]:
    """The deck order that deals ``hands`` (R2.2: card i to seat (dealer + 1 + i) % n)."""
    size = len(hands[0])
    deck = []
    for i in range(size * PLAYERS):
        deck.append(hands[(dealer + 1 + i) % PLAYERS][i // PLAYERS])
    return tuple(deck + stock)


def position(case: dict[str, Any]) -> tuple[list[Event], GameState]:
    """The events of a game in which seat 1 is to meld or pass on the case's position."""
    rules = case_rules(case)
    table = parse_table(case["table"])
    hand = list(parse_cards(case["hand"]))
    new = parse_table(case["new_table"])
    table_cards = [physical(c) for m in table for c in m]
    seen = {physical(c) for c in [*table_cards, *hand, *(c for m in new for c in m)]}
    supply = Counter(new_deck(2)) - Counter(table_cards) - Counter(hand)
    fillers = sorted((c for c in supply.elements() if c != JOKER and c not in seen),
                     key=lambda c: (-POINTS[c], c))  # high cards: seat 0 cannot knock
    size = max(len(hand), len(table_cards)) + 1
    assert size <= 20, f"{case['id']}: position too large for hand_size (R2.2)"
    rules = dataclasses.replace(rules, hand_size=size)
    take = iter(fillers)
    hands = {0: table_cards + [next(take) for _ in range(size - len(table_cards))],
             SEAT: hand + [next(take) for _ in range(size - len(hand))],
             2: [next(take) for _ in range(size)]}
    stock = list(take)
    dealer = 2 if table else 0  # the first to act: seat 0 (it melds the table) or seat 1
    events: list[Event] = [
        GameStarted(players=PLAYERS, rules=rules, dealer=dealer, seed=0,
                    names=("s0", "s1", "s2")),
        RoundStarted(round=1, dealer=dealer, deck=_deck(hands, dealer, stock))]
    state: GameState | None = None
    for e in events:
        state = evolve(state, e)
    assert state is not None

    def run(more: list[Event]) -> None:
        nonlocal state
        for e in more:
            state = evolve(state, e)
        events.extend(more)

    if table:  # seat 0 draws, lays the case's table (as recorded, even an illegal one)
        run(step(state, Draw(0))[1])
        run([Melded(seat=0, cards=tuple(table_cards), table=table)])
        if state.phase == KNOCK_OR_END:
            run(step(state, EndTurn(0))[1])
        run(settle(state)[1])
    run(step(state, Draw(SEAT))[1])
    assert state.phase == MELD_OR_PASS and state.turn == SEAT and state.table == table
    per_player = state.rules.opening_meld_per_player
    opening = not state.table or (per_player and not state.opened[SEAT])
    assert opening == case_opening(case), (
        f"{case['id']}: opening={case_opening(case)} cannot be set up in a game position")
    return events, state


async def _record(app: Any, events: list[Event], state: GameState) -> tuple[str, str]:
    game_id, token = uuid.uuid4().hex, uuid.uuid4().hex
    meta = {"seats": [{"kind": "human", "name": f"s{i}", "strategy": ""}
                      for i in range(PLAYERS)],
            "tokens": {hash_token(token): SEAT}, "players": PLAYERS,
            "hand_size": state.rules.hand_size, "turn_seconds": 0, "created": time.time(),
            "creator": ""}
    await app.repo.put_meta(game_id, meta)
    await app.repo.append(game_id, events, 0, request_id="create", request_hash="create",
                          response=None)
    return game_id, token


async def _verdict(coro: Any) -> tuple[str, str, str]:
    """``("ok", "", "")`` or ``(status, reason, rule)`` of a refused call."""
    try:
        await coro
    except grpc.aio.AioRpcError as err:
        md = dict(err.trailing_metadata() or ())
        return err.code().name, md.get("rummy-reason", ""), rpc_error_rule(err)
    return "ok", "", ""


async def test_every_action_case_agrees_through_check_meld_and_meld() -> None:
    assert len(ACTION_CASES) >= 30  # every action case of every file
    async with serving(MemoryEventStore()) as running:
        stub, app = running.stub, running.server.app
        unreachable: list[str] = []
        for param in ACTION_CASES:
            case = param.values[0]
            events, state = position(case)
            game_id, token = await _record(app, events, state)
            table = [pb.Cards(cards=m) for m in case["new_table"]]
            dry = await _verdict(stub.CheckMeld(pb.CheckMeldRequest(
                game_id=game_id, token=token, table=table)))
            version = (await stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                            token=token))).view.version
            assert version == len(events), f"{case['id']}: the dry run appended"
            real = await _verdict(stub.Meld(pb.MeldRequest(game_id=game_id, token=token,
                                                           table=table)))
            assert dry == real, f"{case['id']}: CheckMeld {dry} but Meld {real}"
            if not all(is_valid_meld(m, state.rules.ace_high) for m in state.table):
                unreachable.append(case["id"])  # I2: see the module docstring
            elif case["valid"]:
                assert dry == ("ok", "", ""), f"{case['id']}: refused {dry}"
            else:
                assert dry == ("FAILED_PRECONDITION", "ILLEGAL_MOVE", case["rule"]), \
                    f"{case['id']}: {dry}, expected {case['rule']}"
    assert unreachable == ["a-027"]
