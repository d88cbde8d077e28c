"""Shared markers and helpers of the contract suite (see ``rummy_store.contract``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from rummy.cards import parse_card
from rummy.events import CardDrawn, Knocked, Passed, TurnEnded, to_dict
from rummy_store import (
    EventStore,
    StoredEvent,
    encode_events,
)

HANG_GUARD = float(os.environ.get("RUMMY_TEST_HANG_GUARD", "300"))
"""Seconds a contract test waits for what must come (an event, a subscriber count) before
it fails: a guard against a hang, never a timing bound (``RUMMY_TEST_HANG_GUARD``, as the
project's own suite reads it). A loaded machine is slow, not wrong."""

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(int(HANG_GUARD) + 60)]

StoreFactory = Callable[[], EventStore]
"""The ``store_factory`` fixture: a function returning stores on one backend."""


def turn(seat: int) -> list[dict[str, Any]]:
    """The dicts of one short turn of ``seat``: draw, pass, end."""
    return encode_events(
        [CardDrawn(seat=seat, card=parse_card("7S"), draw=1), Passed(seat=seat), TurnEnded(seat)]
    )


def numbered(n: int, start: int = 1) -> list[dict[str, Any]]:
    """``n`` distinct event dicts (Knocked with points start, start+1, ...)."""
    return [to_dict(Knocked(seat=0, points=p)) for p in range(start, start + n)]


async def take(iterator: AsyncIterator[StoredEvent], n: int,
               timeout: float = HANG_GUARD) -> list[StoredEvent]:
    """The next ``n`` items of an async iterator (fails the test if they do not come
    within ``timeout`` seconds, :data:`HANG_GUARD` by default)."""
    return [await asyncio.wait_for(anext(iterator), timeout) for _ in range(n)]
