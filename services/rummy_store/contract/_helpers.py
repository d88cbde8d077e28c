"""Shared markers and helpers of the contract suite (see ``rummy_store.contract``)."""

from __future__ import annotations

import asyncio
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

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

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
               timeout: float = 10.0) -> list[StoredEvent]:
    """The next ``n`` items of an async iterator (fails the test if they do not come)."""
    return [await asyncio.wait_for(anext(iterator), timeout) for _ in range(n)]
