"""Stored games in the real Redis read back after an event's schema version is bumped:
a golden game, stored in today's format (v1), decoded through the upcaster
chain of tests/unit/test_upcasting.py, replays to the same final state."""

from __future__ import annotations

import pytest

from rummy.events import decode, from_dict
from rummy.evolve import replay
from tests.unit.test_upcasting import GOLDEN, V2_TYPES, V2_UPCASTERS, TurnEndedV2, _lines

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def test_a_stored_v1_game_reads_back_through_the_upcasters(store):
    stored = _lines(GOLDEN[0])
    await store.append("golden-v1", stored, 0)
    back = await store.read("golden-v1")
    assert [e.data for e in back] == stored
    today = replay(from_dict(e.data) for e in back)
    upcast = [decode(e.data, V2_TYPES, V2_UPCASTERS) for e in back]
    assert any(type(e) is TurnEndedV2 for e in upcast)
    assert replay(upcast) == today and today is not None and today.is_over
