"""An I3 check that can fail (docs/rules.md §10: a player's view never holds another
player's hand or the order of the stock).

``rummy.invariants.check_invariants``' I3 part compares the viewer's own hand and the hand
sizes and asks ``hasattr(view, "hands"/"deck"/"seed"/"stock")``, which a ``PlayerView``
(a named tuple of fixed fields) never has: a card of another hand or of the stock put in
any field (the table, the names, the stock size) passed it. :func:`i3_problems` checks I3
as non-interference instead: a seat's view must not change when everything hidden from
that seat changes (the other hands' cards, the stock's cards and order, the seed), and it
must show the seat exactly its own hand, every hand size and the stock size.
``tests/property/test_invariants.py`` runs it after every event of random games and plants
leaks to show that it fails on them.
"""

from __future__ import annotations

from collections.abc import Callable

from rummy.state import GameState
from rummy.views import PlayerView, view

ViewFn = Callable[[GameState, int | None], PlayerView]


def _hidden_variants(state: GameState, seat: int | None) -> list[GameState]:
    """States equal to ``state`` except for what ``seat`` may not see (``None``: the public
    view, which sees no hand): the cards of the other hands and of the stock, moved
    round by one place and reversed (hand sizes and stock size kept; hands stay sorted),
    and another seed. Variants equal to ``state`` (nothing hidden to move) are left out."""
    others = [s for s in range(state.players) if s != seat]
    stock = list(state.deck[state.stock_pos:])
    pool = [c for s in others for c in state.hands[s]] + stock
    out: list[GameState] = []
    seed = (state.seed or 0) + 1
    for moved in (pool[1:] + pool[:1], pool[::-1]):
        hands = list(state.hands)
        at = 0
        for s in others:
            n = len(state.hands[s])
            hands[s] = tuple(sorted(moved[at:at + n]))
            at += n
        deck = state.deck[:state.stock_pos] + tuple(moved[at:])
        variant = state._replace(hands=tuple(hands), deck=deck, seed=seed)
        if variant != state:
            out.append(variant)
    if not out:  # nothing to move: the seed alone is hidden
        out.append(state._replace(seed=seed))
    return out


def _differing_fields(a: PlayerView, b: PlayerView) -> list[str]:
    return [name for name, x, y in zip(a._fields, a, b, strict=True) if x != y]


def i3_problems(state: GameState, view_fn: ViewFn = view) -> list[str]:
    """Problems with I3 in ``state`` for every seat and the public view: a list of
    ``"I3: ..."`` messages, empty when I3 holds.

    Args:
        state: any state of a game (before the first deal there is nothing hidden).
        view_fn: the view under test, ``view_fn(state, seat) -> PlayerView``
            (default :func:`rummy.views.view`); a test passes a leaky one to see the check
            fail.
    """
    problems: list[str] = []
    if state.round == 0:
        return problems
    sizes = tuple(len(h) for h in state.hands)
    for seat in [*range(state.players), None]:
        v = view_fn(state, seat)
        who = "the public view" if seat is None else f"the view of seat {seat}"
        own = () if seat is None else state.hands[seat]
        if v.hand != own:
            problems.append(f"I3: {who} shows hand {v.hand}, not its own {own}")
        if v.hand_sizes != sizes or v.stock_size != state.stock_size:
            problems.append(f"I3: {who} has wrong hand sizes or stock size")
        for variant in _hidden_variants(state, seat):
            fields = _differing_fields(v, view_fn(variant, seat))
            if fields:
                problems.append(f"I3: {who} depends on hidden state (other hands, stock "
                                f"order, seed) through {', '.join(fields)}")
                break
    return problems
