"""Restricted play: switches that take a way of playing away from any bot.

A restricted bot is named ``BOT!RESTRICTION[!RESTRICTION...]`` (``greedy!no-rearrange``,
``strategic!no-joker-free!knock-at-0``, ``examples.my_bot:MyBot!no-rearrange``) wherever a
bot name is taken; :func:`rummy.bots.check_bot` and :func:`rummy.bots.make_bot` read it. The
bot ``BOT`` decides as usual; the switches act on its commands, so a restricted bot still
sends only legal commands (the engine checks them as any other, R5):

``no-rearrange``
    A meld action may only lay new melds and add cards to the melds on the table: every
    table meld ends inside its own new meld, whole (no table card moves to another meld,
    no meld is split or joined, every table joker keeps its declared card; R5.1–R5.3 as
    plain lay-offs).
``no-joker-free``
    No table joker is freed: every joker on the table keeps its declared card (the real
    card never replaces it, R5.8). Other rearranging stays allowed.
``knock-at-N``
    (N = 0..1000) Knocks only with a hand worth at most N points (R1.5, R6.1); otherwise
    it ends the turn (R6.3). ``knock-at-0`` never knocks: every hand holds at least one
    point, so the bot ends a round only by going out (R6.2).
``no-wait``
    Knocks whenever the rules allow it (R6.1), never playing on to let the pot grow (what
    ``strategic`` does, :mod:`rummy.bots.strategic`).

When the bot's meld action breaks ``no-rearrange`` or ``no-joker-free``, the restricted bot
sends instead the best of a few plays that keep its switches (:func:`restricted_play`: when
rearranging is allowed, the solver's best play keeping in the hand the real cards that
would free a table joker, and its best play with every table joker locked in place; the
solver's best new melds from the hand then single-card lay-offs; the lay-offs first; the
``basic`` bot's plan), by points added (R1.5); when none is legal, it passes (R3.2). The choice is
deterministic. There is no "never draw an extra card" switch: after a pass the next draw is
due (R3.2, R3.6), so a bot that cannot meld must draw again.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rummy.cards import TABLE_JOKER_BASE, hand_points, physical
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import Table
from rummy.views import PlayerView

#: separates a bot's name from its restrictions: ``greedy!no-rearrange``
SEP = "!"
#: the switches without a parameter, with their one-line meaning (docs/bots.md)
SWITCHES: dict[str, str] = {
    "no-rearrange": "only new melds and additions to table melds; no table card moves",
    "no-joker-free": "never frees a table joker (R5.8); other rearranging allowed",
    "no-wait": "knocks whenever allowed (R6.1)",
}
#: the parameterised switch and its meaning
KNOCK_AT = "knock-at-"
KNOCK_AT_HELP = "knock-at-N: knocks only with at most N points in hand (knock-at-0: never)"
KNOCK_AT_MAX = 1000  # the largest knock threshold of §11


def known_text() -> str:
    """The known switches, for error messages: ``no-rearrange, no-joker-free, ...``."""
    return ", ".join([*SWITCHES, "knock-at-N (N = 0..1000)"])


@dataclasses.dataclass(frozen=True, slots=True)
class Restrictions:
    """The switches of one restricted bot (all off: the bot unchanged).

    Attributes:
        no_rearrange: meld actions only add (see the module docstring).
        no_joker_free: no table joker is freed (R5.8).
        knock_at: the most hand points it knocks with (``None``: no limit).
        no_wait: knocks whenever allowed.
    """

    no_rearrange: bool = False
    no_joker_free: bool = False
    knock_at: int | None = None
    no_wait: bool = False

    @property
    def melds(self) -> bool:
        """Whether a switch restricts meld actions."""
        return self.no_rearrange or self.no_joker_free


def split_name(name: str) -> tuple[str, tuple[str, ...]]:
    """``"greedy!no-rearrange!knock-at-0"`` -> ``("greedy", ("no-rearrange",
    "knock-at-0"))``; a name without ``!`` has no restrictions."""
    base, *rest = name.split(SEP)
    return base, tuple(rest)


def parse_restrictions(items: Sequence[str], *, where: str = "") -> Restrictions:
    """The :class:`Restrictions` of switch names.

    Raises:
        ValueError: an empty, unknown or repeated switch, or a ``knock-at-N`` whose N is
            not an integer in 0..1000 (the knock threshold's range, R6.1, §11), naming it
            and ``where`` it was given.
    """
    at = f" in {where!r}" if where else ""
    seen: set[str] = set()
    r = Restrictions()
    for item in items:
        if not item:
            raise ValueError(f"empty restriction{at}: write BOT!RESTRICTION, e.g. "
                             f"greedy!no-rearrange; known: {known_text()}")
        key = KNOCK_AT if item.startswith(KNOCK_AT) else item
        if key in seen:
            raise ValueError(f"restriction {item!r} given twice{at}")
        seen.add(key)
        if item == "no-rearrange":
            r = dataclasses.replace(r, no_rearrange=True)
        elif item == "no-joker-free":
            r = dataclasses.replace(r, no_joker_free=True)
        elif item == "no-wait":
            r = dataclasses.replace(r, no_wait=True)
        elif item.startswith(KNOCK_AT):
            raw = item[len(KNOCK_AT):]
            if not raw.isdigit() or int(raw) > KNOCK_AT_MAX:
                raise ValueError(f"restriction {item!r}{at}: N of knock-at-N must be an "
                                 f"integer 0..{KNOCK_AT_MAX} (hand points, R6.1)")
            r = dataclasses.replace(r, knock_at=int(raw))
        else:
            raise ValueError(f"unknown restriction {item!r}{at}; known: {known_text()}")
    return r


def rearranges(table: Table, new_table: Table) -> bool:
    """Whether ``new_table`` moves a card of ``table``: True unless every meld of
    ``table`` lies whole (its cards, jokers with their declarations, as a multiset) inside
    a meld of ``new_table`` of its own (a matching: two table melds never end in one)."""
    olds = [Counter(m) for m in table]
    news = [Counter(m) for m in new_table]
    fits = [[j for j, n in enumerate(news) if not (o - n)] for o in olds]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:  # augmenting path (Kuhn's matching)
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return not all(place(i, set()) for i in range(len(olds)))


def frees_joker(table: Table, new_table: Table) -> bool:
    """Whether ``new_table`` frees a joker of ``table``: some table joker no longer stands
    for its declared card (R5.8)."""
    before = Counter(c for m in table for c in m if c >= TABLE_JOKER_BASE)
    after = Counter(c for m in new_table for c in m if c >= TABLE_JOKER_BASE)
    return bool(before - after)


def breaks(r: Restrictions, table: Table, new_table: Table) -> str | None:
    """The first switch of ``r`` that the meld action ``table`` -> ``new_table`` breaks,
    or ``None``."""
    if r.no_rearrange and rearranges(table, new_table):
        return "no-rearrange"
    if r.no_joker_free and frees_joker(table, new_table):
        return "no-joker-free"
    return None


def added_points(table: Table, new_table: Table) -> int:
    """Points (R1.5) of the cards a meld action adds from the hand."""
    old = Counter(physical(c) for m in table for c in m)
    new = Counter(physical(c) for m in new_table for c in m)
    return hand_points((new - old).elements())


def _without(hand: Sequence[int], used: Sequence[int]) -> list[int]:
    left = list(hand)
    for c in used:
        left.remove(c)
    return left


def restricted_play(view: PlayerView, r: Restrictions) -> Table | None:
    """A legal meld action for the viewer that keeps the meld switches of ``r``, or
    ``None`` (see the module docstring for the candidates). Deterministic."""
    from rummy.bots._melding import lay_off
    from rummy.bots.base import legal_for
    from rummy.bots.basic import BasicBot
    from rummy.bots.greedy import plan_play
    from rummy.solver import best_play

    table = tuple(view.table)
    candidates: list[Table] = []
    if not r.no_rearrange:
        # the solver's best play keeping in the hand the real cards of the table jokers'
        # declarations (all, then each), and with every table joker locked in place
        real = sorted({c - TABLE_JOKER_BASE for m in table for c in m
                       if c >= TABLE_JOKER_BASE} & set(view.hand))
        keeps = [tuple(real)] + [(c,) for c in real] if real else []
        for keep in keeps:
            planned = plan_play(view, keep=keep)
            if planned is not None:
                candidates.append(planned[0])
        locked = view._replace(rules=dataclasses.replace(view.rules, joker_moves="locked"))
        planned = plan_play(locked)
        if planned is not None:
            candidates.append(planned[0])
    play = best_play((), view.hand, rules=view.rules)  # new melds from the hand, then
    if play is not None:  # single cards laid off onto every meld
        melds = list(table) + list(play.table)
        left = _without(view.hand, [physical(c) for m in play.table for c in m])
        lay_off(melds, left)
        candidates.append(tuple(melds))
    melds = list(table)  # the lay-offs first, then new melds of what is left
    left = list(view.hand)
    if lay_off(melds, left):
        rest = best_play((), tuple(left), rules=view.rules)
        candidates.append(tuple(melds) + (rest.table if rest is not None else ()))
    planned_basic = BasicBot.plan(view)
    if planned_basic is not None:
        candidates.append(tuple(planned_basic))
    best: Table | None = None
    best_points = -1
    for t in candidates:
        if breaks(r, table, t) is None and legal_for(view, t):
            points = added_points(table, t)
            if points > best_points:
                best, best_points = t, points
    return best


def _first(view: PlayerView, kinds: Sequence[str]) -> Command:
    """The phase's default command among ``kinds`` (never a meld)."""
    seat = view.turn
    for k in kinds:
        if k == "draw":
            return Draw(seat)
        if k == "end_turn":
            return EndTurn(seat)
        if k == "pass":
            return Pass(seat)
    return Pass(seat)


class RestrictedBot:
    """A bot with switches: ``RestrictedBot(inner, restrictions, name)``; see the module
    docstring. ``name`` is the restricted name (``greedy!no-rearrange``)."""

    def __init__(self, inner: Any, restrictions: Restrictions, name: str) -> None:
        self.inner = inner
        self.restrictions = restrictions
        self.name = name

    def _may_knock(self, view: PlayerView) -> bool:
        limit = self.restrictions.knock_at
        return limit is None or hand_points(view.hand) <= limit

    def act(self, view: PlayerView) -> Command:
        """See :class:`rummy.bots.base.Bot`."""
        r = self.restrictions
        kinds = view.actions
        if "knock" in kinds:
            may = self._may_knock(view)
            if may and r.no_wait:
                return Knock(view.turn)
            if not may:
                others = tuple(k for k in kinds if k != "knock")
                if others == ("end_turn",):  # after the turn: the only other choice
                    return EndTurn(view.turn)
                view = view._replace(actions=others)  # knock_timing=start: ask without it
        cmd: Command = self.inner.act(view)
        if isinstance(cmd, Knock) and "knock" not in view.actions:
            return _first(view, view.actions)  # the bot ignored the switch's actions
        if isinstance(cmd, Meld) and r.melds and breaks(r, tuple(view.table),
                                                        tuple(cmd.table)) is not None:
            planned = restricted_play(view, r)
            if planned is not None:
                return Meld(view.turn, planned)
            return _first(view, [k for k in view.actions if k != "meld"])
        return cmd


def restricted_class(base: type[Any], restrictions: Restrictions, name: str) -> type[Any]:
    """A bot class whose instances (``cls(seed)``) are ``base(seed)`` with
    ``restrictions``, named ``name``."""

    def build(cls: type[Any], seed: int = 0) -> RestrictedBot:
        return RestrictedBot(base(seed), restrictions, name)

    return type(f"Restricted[{name}]", (), {"__new__": build, "name": name,
                                            "act": RestrictedBot.act,
                                            "__doc__": f"{name}: {base.__name__} with "
                                            "restrictions (rummy.bots.restrict)"})


__all__ = ["KNOCK_AT", "SEP", "SWITCHES", "RestrictedBot", "Restrictions", "added_points",
           "breaks", "frees_joker", "known_text", "parse_restrictions", "rearranges",
           "restricted_class", "restricted_play", "split_name"]
