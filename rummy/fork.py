"""What-if games: the log of a game up to event N, from which a new game goes on.

Pure (no I/O). ``rummy replay LOG --fork N`` starts a game at the state after event N:
:func:`fork_prefix` gives the events that lead there, and the new game's events follow
them, so a fork is an ordinary full-information log that every tool replays (its origin
is a header line, :func:`fork_header`).

Two modes:

* **omniscient** (``--omniscient``): the prefix is the original one; every hidden card (the
  other hands, the stock order) is the one the game really had.
* **seat-true** (the default): only what the forking seat saw is kept. The cards it could
  not see (the other hands and the stock at N, I3) are shuffled with ``seed`` and dealt
  again: each other seat gets as many as it held (public), the rest is the stock, as the
  ``search`` bot's determinization does (:func:`rummy.bots.search.determinize`). The
  current round's history is rewritten to match: the deck of its ``RoundStarted`` and the
  other seats' ``CardDrawn`` cards change, so that every card a seat melded in this round
  was dealt or drawn to it before (the earliest of its deal and draw places, in the order
  it melded them), and its new hand fills its other places. The forking seat's own deal,
  draws and every public event stay as they were, so its view of every step is the same
  (:func:`rummy.views.redact`). Earlier rounds, and the game seed that deals later rounds
  (R2.2), are untouched: later rounds deal as in the original game. A re-deal must also
  keep every view of the forking seat in this round (the phase after another seat's meld
  tells whether that hand may knock, R6.1): re-deals are tried until one does
  (:data:`MAX_REDEALS`), else the fork is exact.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rummy.events import CardDrawn, Event, GameStarted, Melded, RoundScored, RoundStarted
from rummy.evolve import evolve
from rummy.state import GAME_OVER, GameState
from rummy.views import view

#: the key of a fork log's header line (the first line, not an event)
HEADER_KEY = "fork"
#: re-deals tried until one keeps every view of the forking seat (the phase after another
#: seat's meld shows whether its hand may knock, R6.1); then the exact prefix is used
MAX_REDEALS = 200


def fork_header(source: str, after: int, seat: int | None, omniscient: bool, seed: int
                ) -> dict[str, Any]:
    """The header line of a fork log (JSON object, before the first event)::

        {"fork": {"source": str, "after": int, "seat": int | None,
                  "mode": "seat-true" | "omniscient", "seed": int}}

    ``after``: the fork starts at the state after this 1-based event of ``source``.
    """
    return {HEADER_KEY: {"source": source, "after": after, "seat": seat,
                         "mode": "omniscient" if omniscient else "seat-true", "seed": seed}}


def _state(events: Sequence[Event]) -> GameState:
    state: GameState | None = None
    for e in events:
        state = evolve(state, e)
    assert state is not None
    return state


def fork_prefix(events: Sequence[Event], after: int, seat: int | None, *,
                omniscient: bool = False, seed: int = 0) -> list[Event]:
    """The events that lead to the fork's start (module docstring).

    Args:
        events: a verified full-information log (:func:`rummy.invariants.verify_log`).
        after: fork at the state after this 1-based event (1..len(events)).
        seat: the seat whose view is kept (seat-true); ignored with ``omniscient``.
        omniscient: keep every hidden card as it was.
        seed: seeds the re-deal of the hidden cards (seat-true).

    Returns:
        ``after`` events; the last state they reach has the same public parts and the same
        hand of ``seat`` as the original's.

    Raises:
        ValueError: ``after`` outside the log or at the game's end (nothing to play on
            from), no ``GameStarted`` first, or a seat-true fork without a seat in range
            (R1.1). A fork inside a transient phase (a deal, a knock, a scored round) plays
            on after its automatic events (:func:`rummy.decide.settle`).
    """
    if not events or not isinstance(events[0], GameStarted):
        raise ValueError("a game log starts with GameStarted")
    if not 1 <= after <= len(events):
        raise ValueError(f"the fork point must be 1..{len(events)}, got {after}")
    if _state(list(events[:after])).phase == GAME_OVER:
        raise ValueError(f"after event {after} the game is over: there is nothing to play "
                         "on from; fork at an earlier event")
    prefix = list(events[:after])
    if omniscient:
        return prefix
    players = events[0].players
    if seat is None or not 0 <= seat < players:
        raise ValueError(f"a seat-true fork needs a seat 0..{players - 1} (R1.1), got {seat}")
    starts = [i for i, e in enumerate(prefix) if isinstance(e, RoundStarted)]
    if not starts or any(isinstance(e, RoundScored) for e in prefix[starts[-1]:]):
        return prefix  # before the first deal or after the round's end: nothing is hidden
    r0 = starts[-1]
    deal = prefix[r0]
    assert isinstance(deal, RoundStarted) and deal.deck is not None
    state = _state(prefix)
    rng = random.Random(f"fork:{seed}:{after}:{seat}")
    base = _state(prefix[:r0])
    seen = [view(x, seat) for x in _states(base, prefix[r0:])]
    for _try in range(MAX_REDEALS):
        out = _redeal(prefix, r0, deal, state, seat, rng)
        if [view(x, seat) for x in _states(base, out[r0:])] == seen:
            return out
    return prefix  # no re-deal keeps what the seat saw (e.g. a knock phase): exact


def _states(base: GameState, events: Sequence[Event]) -> list[GameState]:
    """The states after each of ``events``, starting from ``base``."""
    state = base
    out = []
    for e in events:
        state = evolve(state, e)
        out.append(state)
    return out


def _redeal(prefix: Sequence[Event], r0: int, deal: RoundStarted, state: GameState,
            seat: int, rng: random.Random) -> list[Event]:
    """One re-deal of the hidden cards of the current round (module docstring)."""
    after = len(prefix)
    players = state.players
    dealt = state.rules.hand_size * players
    assert deal.deck is not None
    places: list[tuple[int, int, int]] = [(k, (k + deal.dealer + 1) % players, r0)
                                          for k in range(dealt)]
    pos = dealt
    for i in range(r0 + 1, after):
        e = prefix[i]
        if isinstance(e, CardDrawn):
            places.append((pos, e.seat, i))
            pos += 1
    assert pos == state.stock_pos
    others = [p for p in range(players) if p != seat]
    pool = [c for p in others for c in state.hands[p]] + list(state.deck[state.stock_pos:])
    rng.shuffle(pool)
    new_hands: dict[int, list[int]] = {}
    k = 0
    for p in others:
        new_hands[p] = pool[k:k + len(state.hands[p])]
        k += len(state.hands[p])
    deck = list(deal.deck)
    deck[state.stock_pos:] = pool[k:]
    for p in others:
        mine = sorted((t, q) for q, owner, t in places if owner == p)
        melded: list[tuple[int, int]] = []
        for i in range(r0 + 1, after):
            m = prefix[i]
            if isinstance(m, Melded) and m.seat == p:
                melded.extend((i, c) for c in m.cards)
        slots = [q for _t, q in mine]
        times = [t for t, _q in mine]
        used = [False] * len(slots)
        for when, c in melded:  # the earliest free place before the meld
            j = next(j for j in range(len(slots)) if not used[j] and times[j] < when)
            used[j] = True
            deck[slots[j]] = c
        rest = iter(new_hands[p])
        for j, q in enumerate(slots):
            if not used[j]:
                deck[q] = next(rest)
    out = list(prefix)
    out[r0] = replace(deal, deck=tuple(deck))
    pos = dealt
    for i in range(r0 + 1, after):
        e = out[i]
        if isinstance(e, CardDrawn):
            if e.seat != seat:
                out[i] = replace(e, card=deck[pos])
            pos += 1
    if Counter(deck) != Counter(deal.deck):  # pragma: no cover - a bug guard (I1)
        raise AssertionError("the re-dealt deck lost or gained a card (I1)")
    return out


__all__ = ["HEADER_KEY", "fork_header", "fork_prefix"]
