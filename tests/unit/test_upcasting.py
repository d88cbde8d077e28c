"""Versioned events with upcasters: a game written at schema version 1 reads
back, through an upcaster chain, after an event type moved to version 2 (docs/events.md).

The fixture plays a later release: ``TurnEnded`` gains a field ``timeout`` (1 when a
service's turn timer ended the turn) at version 2, declared in its ``ENCODING``, with an
upcaster v1 -> v2 that adds it with its default. Every golden log, written in today's
format, must still replay to the same final state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rummy.errors import NotationError
from rummy.events import (
    EVENT_TYPES,
    INT,
    UPCASTERS,
    FieldCodec,
    GameEnded,
    TurnEnded,
    decode,
    from_dict,
    to_dict,
)
from rummy.evolve import evolve, replay

GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.jsonl"))


@dataclass(frozen=True, slots=True)
class TurnEndedV2(TurnEnded):
    """``TurnEnded`` at schema version 2: ``timeout`` is 1 when a turn timer ended it."""

    VERSION: ClassVar[int] = 2
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = {**TurnEnded.ENCODING, "timeout": INT}
    timeout: int = 0


def _v1_to_v2(d: dict[str, Any]) -> dict[str, Any]:
    return {**d, "v": 2, "timeout": 0}


V2_TYPES = {**EVENT_TYPES, "TurnEnded": TurnEndedV2}
V2_UPCASTERS = {**UPCASTERS, ("TurnEnded", 1): _v1_to_v2}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_a_v1_golden_log_replays_to_the_same_state_after_the_bump(path):
    stored = _lines(path)
    assert any(d["type"] == "TurnEnded" and d["v"] == 1 for d in stored)
    today = replay(from_dict(d) for d in stored)
    upcast = [decode(d, V2_TYPES, V2_UPCASTERS) for d in stored]
    ended = [e for e in upcast if isinstance(e, TurnEnded)]
    assert ended and all(type(e) is TurnEndedV2 and e.timeout == 0 for e in ended)
    assert replay(upcast) == today  # I4 across the schema change
    state = None
    for e in upcast:
        state = evolve(state, e)
    assert state == today


def test_the_new_version_round_trips_and_older_readers_refuse_it_clearly():
    e = TurnEndedV2(seat=2, timeout=1)
    d = to_dict(e)
    assert d == {"type": "TurnEnded", "v": 2, "seat": 2, "timeout": 1}
    assert decode(d, V2_TYPES, V2_UPCASTERS) == e
    with pytest.raises(NotationError, match="newer than this release reads"):
        from_dict(d)  # today's release reads version 1 only


def test_a_missing_upcaster_is_a_clear_error():
    with pytest.raises(NotationError, match="no upcaster to version 2"):
        decode({"type": "TurnEnded", "v": 1, "seat": 0}, V2_TYPES, UPCASTERS)


@pytest.mark.parametrize("v", [0, -1, True, "1", 1.0])
def test_bad_schema_versions_are_refused(v):
    with pytest.raises(NotationError, match="schema version"):
        from_dict({"type": "TurnEnded", "v": v, "seat": 0})


def test_an_upcaster_must_produce_the_next_version():
    broken = {("TurnEnded", 1): lambda d: {**d, "timeout": 0}}  # forgot "v"
    with pytest.raises(NotationError, match="did not produce v2"):
        decode({"type": "TurnEnded", "v": 1, "seat": 0}, V2_TYPES, broken)


def test_today_every_event_is_at_version_1_but_game_started_and_missing_v_means_1():
    assert {cls.VERSION for name, cls in EVENT_TYPES.items()
            if name not in ("GameStarted", "GameEnded")} == {1}
    # v2: the option variants of section 11; v3: the seed commitment (rummy.fairness)
    assert EVENT_TYPES["GameStarted"].VERSION == 3
    assert EVENT_TYPES["GameEnded"].VERSION == 2  # v2: the seats that left (R13.4)
    assert from_dict({"type": "TurnEnded", "seat": 1}) == TurnEnded(1)


def test_a_game_ended_of_version_1_reads_with_no_seat_left():
    # R13.4: no seat of a game recorded before the seat lifecycle left it
    old = {"type": "GameEnded", "v": 1, "totals": [150, 20], "rounds_won": [2, 1],
           "bonuses": [100, 25], "final": [250, 45], "winners": [0]}
    e = from_dict(old)
    assert e == GameEnded((150, 20), (2, 1), (100, 25), (250, 45), (0,), ())
    with pytest.raises(NotationError, match="version 2 added"):
        from_dict({**old, "left": [1]})
