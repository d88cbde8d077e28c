"""A check the RL tests share: the env's trusted ``Melded`` event of a candidate slot is
the engine's (R5), and evolving it gives the engine's state."""

from __future__ import annotations

from typing import Any

from rummy.commands import Meld
from rummy.decide import settle, step
from rummy.evolve import evolve
from rummy.state import STABLE_PHASES, GameState


def trusted_event_is_the_engines(s: GameState, cands: Any, slot: int) -> bool:
    """Assert that slot ``slot`` of the env's candidates ``cands`` in state ``s`` has the
    ``Melded`` event (and, after settling, the state and events) that the engine's checked
    ``step`` of that slot's table gives. ``False`` when the slot has no trusted event
    (nothing checked); ``True`` when it was checked.

    Raises:
        AssertionError: the env's event, state or events differ from the engine's.
    """
    e = cands.meld_event(slot)
    if e is None:
        return False
    table = cands.table(slot)
    assert table is not None
    want_state, want_events = step(s, Meld(s.turn, table))
    assert e == want_events[0]
    got = evolve(s, e)
    events = [e]
    if got.phase not in STABLE_PHASES:
        got, more = settle(got)
        events += more
    assert (got, events) == (want_state, want_events)
    return True
