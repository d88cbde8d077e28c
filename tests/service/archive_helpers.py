"""Finished games written straight into a store, for the retention, archive and erasure
tests: real short games (one round, ``target_score`` 1) played by the core's bots, written
the way the service writes them (meta with seat names, events with the ``created`` and
``ended`` summaries, the game marked finished)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from rummy_grpc.results import summarize
from rummy_store.mapper import MAPPER

from rummy.events import Event, GameStarted
from rummy.rules import RuleSet
from tests.conftest import play_random_game


@functools.cache
def _played(seed: int) -> tuple[Any, tuple[Event, ...]]:
    state, log, _ = play_random_game(seed, players=2, bots=("basic", "basic"),
                                     rules=RuleSet(target_score=1))
    return state, tuple(log)


def short_game(seed: int, names: tuple[str, ...]) -> tuple[Any, tuple[Event, ...]]:
    """``(final state, events)`` of a one-round two-seat bot game with seat ``names``
    (the game of a seed is played once per process)."""
    state, log = _played(seed)
    first = log[0]
    assert isinstance(first, GameStarted)
    return state._replace(names=names), (dataclasses.replace(first, names=names), *log[1:])


async def write_game(store: Any, game_id: str, seed: int, names: tuple[str, str]) -> int:
    """Write one finished game into ``store`` (a ``GameStore`` seals the names, a raw
    store keeps them plaintext, as a release before sealing did); returns its events."""
    _, events = short_game(seed, names)
    meta = {"seats": [{"kind": "human", "name": n, "strategy": ""} for n in names],
            "tokens": {}, "players": 2, "hand_size": 10, "turn_seconds": 0}
    await store.put_meta(game_id, meta)
    records = MAPPER.to_records(events)
    head, tail = list(events[:1]), list(events[1:])
    await store.append(game_id, MAPPER.to_records(head), 0,
                       summary=summarize(game_id, head, 0, meta))
    await store.append(game_id, records[1:], 1,
                       summary=summarize(game_id, tail, 1, meta))
    await store.set_active(game_id, False)
    return len(records)


def digest(events: Sequence[Any]) -> str:
    """A hash of events as read back (version, type, data; ``ts`` left out)."""
    rows = [[e.version, e.type, e.data] for e in events]
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
