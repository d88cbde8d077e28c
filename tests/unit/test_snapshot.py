"""Unit tests of ``rummy.snapshot``: the schema, jokers on the table, and bad input refused
with a ``NotationError`` naming what was wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rummy.cards import TABLE_JOKER_BASE
from rummy.errors import NotationError
from rummy.evolve import evolve
from rummy.rules import RuleSet
from rummy.snapshot import SNAPSHOT_VERSION, state_from_dict, state_to_dict
from rummy.state import GameState
from tests.conftest import play_random_game


def _states(seed: int = 5, players: int = 3) -> list[GameState]:
    _, log, _ = play_random_game(seed, players)
    out: list[GameState] = []
    state: GameState | None = None
    for e in log:
        state = evolve(state, e)
        out.append(state)
    return out


STATES = _states()


def _round_trip(state: GameState) -> GameState:
    return state_from_dict(json.loads(json.dumps(state_to_dict(state))))


def test_the_schema_version_and_fields() -> None:
    data = state_to_dict(STATES[-1])
    assert data["snapshot"] == SNAPSHOT_VERSION == 1
    # control (§13) only once a seat changed hands: a game without one writes none
    assert set(data) == {"snapshot", *GameState._fields} - {"control"}
    assert data["phase"] == "game_over" and data["result"]["type"] == "GameEnded"
    assert data["last_round"]["type"] == "RoundScored"


def test_a_state_with_jokers_on_the_table_round_trips() -> None:
    with_jokers = [s for s in STATES if any(c >= TABLE_JOKER_BASE for m in s.table for c in m)]
    assert with_jokers
    s = with_jokers[len(with_jokers) // 2]
    assert any(t.startswith("*") for m in state_to_dict(s)["table"] for t in m)
    assert _round_trip(s) == s


def test_every_state_of_a_game_round_trips() -> None:
    for s in STATES:
        assert _round_trip(s) == s


def _broken(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(state_to_dict(STATES[len(STATES) // 2])))
    for k, v in changes.items():
        if v is KeyError:
            del data[k]
        else:
            data[k] = v
    return data


@pytest.mark.parametrize(("data", "message"), [
    ([], "must be a JSON object, got list"),
    (_broken(snapshot=KeyError), "field 'snapshot'"),
    (_broken(snapshot=2), "schema version 2 is not readable"),
    (_broken(snapshot=True), "field 'snapshot'"),
    (_broken(deck=KeyError), r"missing field\(s\) \['deck'\]"),
    (_broken(extra=1), r"unknown field\(s\) \['extra'\]"),
    (_broken(version="7"), "field 'version': expected an integer, got '7'"),
    (_broken(seed=1.5), "field 'seed': expected an integer"),
    (_broken(phase="dancing"), "field 'phase': unknown phase 'dancing'"),
    (_broken(end_reason="bored"), "field 'end_reason': unknown round end reason"),
    (_broken(hands=[["7S", "XX"], [], []]), "field 'hands': malformed card 'XX'"),
    (_broken(table=[["5S", "6S", "*"]]), "field 'table': a joker on the table must declare"),
    (_broken(table="5S 6S 7S"), "field 'table': expected a list"),
    (_broken(opened=[True, 1, False]), "field 'opened': expected true or false"),
    (_broken(totals=[0, 0]), "'totals' must have one entry per seat"),
    (_broken(rules={**RuleSet().to_dict(), "hand_size": 0}),
     "field 'rules': rule variant hand_size=0"),
    (_broken(rules={**RuleSet().to_dict(), "nope": 1}),
     "field 'rules': unknown rule variant 'nope'"),
    (_broken(rules={"hand_size": 7}), "field 'rules': rule variants missing: target_score"),
    (_broken(rules={**RuleSet().to_dict(), "target_score": "30"}),
     "field 'rules': rule variant target_score must be an integer in 1..100000, got the "
     "string '30'"),
    (_broken(last_round={"type": "Passed", "v": 1, "seat": 0}),
     "field 'last_round': expected a RoundScored event, got Passed"),
    (_broken(result={"type": "GameEnded", "v": 1}), "field 'result': GameEnded is missing"),
])
def test_bad_snapshots_are_notation_errors_naming_the_field(data: Any, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        state_from_dict(data)
