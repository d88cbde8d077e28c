"""``ReviewGame``: the review of a finished game (:mod:`rummy.review`, docs/review.md).

The events are read as ``GetEvents`` returns them (:class:`rummy_grpc.reads.ReadModels`):
a finished game's log is full information for every caller, so the review may judge
every seat, each from its own view (I3). A game still being played is refused
(:class:`~rummy_grpc.errors.GameNotOver`): its hidden cards are not the caller's to read.

The review is CPU work of seconds: it runs in a worker thread, one at a time per server
(a lock taken in that thread, so it binds to no event loop), so the event loop keeps
serving the games; ``budget`` is capped at :data:`MAX_BUDGET`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence

from rummy.events import Event, GameEnded
from rummy.review import DEFAULT_BUDGET, review
from rummy_grpc.errors import BadRequest, GameNotOver
from rummy_grpc.reads import ReadModels

#: the largest ``budget`` a caller may ask for (determinizations per choice and point)
MAX_BUDGET = 8

_ONE_AT_A_TIME = threading.Lock()


def _review_json(events: Sequence[Event], seat: int | None, budget: int, seed: int) -> str:
    with _ONE_AT_A_TIME:
        rev = review(events, seat, budget=budget, seed=seed)
    return json.dumps(rev.to_dict(), separators=(",", ":"))


async def review_game(reads: ReadModels, game_id: str, token: str, seat: int | None,
                      budget: int | None, seed: int) -> tuple[str, int]:
    """The review of finished game ``game_id`` as JSON text (``GameReview.to_dict()``)
    and the version reviewed.

    Raises:
        BadRequest: ``budget`` outside 0..:data:`MAX_BUDGET`, or ``seat`` not a seat of
            the game (R1.1).
        GameNotOver: the game has not ended (R9).
        GameNotFound, PermissionDenied: as :meth:`ReadModels.get_events_page`.
    """
    budget = DEFAULT_BUDGET if budget is None else budget
    if not 0 <= budget <= MAX_BUDGET:
        raise BadRequest(f"budget must be 0..{MAX_BUDGET}, got {budget}")
    events: list[Event] = []
    after = 0
    while True:
        page = await reads.get_events_page(game_id, token, "", after)
        events.extend(t.event for t in page.events)
        if not page.next_after_version:
            break
        after = page.next_after_version
    if not events or not isinstance(events[-1], GameEnded) or not page.full:
        raise GameNotOver(f"game {game_id} is not over: only a finished game is reviewed "
                          "(R9)")
    players = len(events[-1].final)
    if seat is not None and not 0 <= seat < players:
        raise BadRequest(f"seat must be 0..{players - 1}, got {seat}", rule="R1.1")
    text = await asyncio.to_thread(_review_json, events, seat, budget, seed)
    return text, len(events)


__all__ = ["MAX_BUDGET", "review_game"]
