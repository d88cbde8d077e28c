"""Meld actions as a player types them in ``rummy play``: the shortest text for a change.

Pure (no I/O, no solver). A meld action (R5) replaces the whole table; a person rarely
wants to type the whole table, so ``rummy play`` accepts the change instead, against the
table as numbered on screen (meld 1 first):

``a <cards>``
    lay a new meld from the hand (R5.4), e.g. ``a 9H 9S 9C``;
``x <n> <cards>``
    extend meld ``n`` with cards from the hand, e.g. ``x 2 8S``;
``r <n> [<n> ...] = <meld> | <meld> ...``
    take melds ``n ...`` apart and lay these melds in their place, built from their
    cards and hand cards (R5.2 rearranges the table), e.g. ``r 2 = 2D 3D | 4D 5D 6D``;
``m <meld> | <meld> ...``
    the whole new table.

Several of ``a``, ``x`` and ``r`` joined with ``;`` are ONE meld action; their numbers all
refer to the table as it was before the action (``x 1 9D; x 3 8S`` extends melds 1 and 3).
A joker is typed with the card it declares (``*4C``, R1.4).

:func:`meld_command` gives the shortest such text for a new table (what the hint of
``rummy play`` and the review print); :func:`apply_meld_command` is its parser, the one
``rummy play`` uses, so that a printed command always types back to the same table.

>>> from rummy.melds import parse_table, table_text
>>> old = parse_table("9H 9S 9C | 2D 3D 4D")
>>> meld_command(old, parse_table("9H 9S 9C 9D | 2D 3D 4D 5D"))
'x 1 9D; x 2 5D'
>>> table_text(apply_meld_command(old, "x 1 9D; x 2 5D"))
'9H 9S 9C 9D | 2D 3D 4D 5D'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rummy.errors import NotationError
from rummy.melds import MeldCards, Table, canonical_meld, format_meld, parse_meld, parse_table


def _text(meld: Sequence[int]) -> str:
    return " ".join(format_meld(meld))


def _key(meld: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(meld))


def table_change(old: Table, new: Table) -> tuple[list[int], list[MeldCards]]:
    """The melds of ``old`` that are gone (0-based indices, ascending) and the melds of
    ``new`` that are not in ``old`` (in ``new``'s order). Melds compare as card multisets,
    so their order inside a meld does not matter; two equal melds (two decks, R1.2) pair
    one to one."""
    left: dict[tuple[int, ...], list[int]] = {}
    for i, m in enumerate(old):
        left.setdefault(_key(m), []).append(i)
    added: list[MeldCards] = []
    for m in new:
        slot = left.get(_key(m))
        if slot:
            slot.pop(0)
        else:
            added.append(tuple(m))
    gone = sorted(i for idx in left.values() for i in idx)
    return gone, added


def meld_command(old: Table, new: Table) -> str:
    """The shortest ``rummy play`` input (module docstring) that turns ``old`` (numbered
    from 1 in the given order) into ``new``.

    ``x`` is used for a new meld that is a gone meld plus hand cards, ``a`` for a new meld
    when nothing else is taken apart; any other change becomes one ``r``; the whole-table
    ``m`` only when it is shorter. Returns ``""`` when the tables hold the same melds.
    """
    gone, added = table_change(old, new)
    if not gone and not added:
        return ""
    parts: list[str] = []
    left_gone = list(gone)
    rest: list[MeldCards] = []
    for m in added:
        have = Counter(m)
        pick = next((i for i in left_gone
                     if not Counter(old[i]) - have and len(old[i]) < len(m)), None)
        if pick is None:
            rest.append(m)
            continue
        left_gone.remove(pick)
        extra = Counter(m) - Counter(old[pick])
        ordered = []
        for c in canonical_meld(m):
            if extra[c] > 0:
                extra[c] -= 1
                ordered.append(c)
        parts.append(f"x {pick + 1} {_text(ordered)}")
    if left_gone:  # a meld was taken apart: one rearrangement names every change
        parts = [f"r {' '.join(str(i + 1) for i in gone)} = "
                 + " | ".join(_text(canonical_meld(m)) for m in added)]
    else:
        parts.extend(f"a {_text(canonical_meld(m))}" for m in rest)
    short = "; ".join(parts)
    whole = "m " + " | ".join(_text(m) for m in new)
    return whole if len(whole) < len(short) else short


def apply_meld_command(old: Table, text: str) -> Table:
    """The new table that ``text`` (``a``/``x``/``r`` parts joined by ``;``, or one ``m``;
    module docstring) makes from ``old`` (numbered from 1). Kept melds keep their places,
    extended melds stay where they were, new melds go last. Legality is not checked here:
    the engine does that (:func:`rummy.melds.check_action`, R5).

    Raises:
        NotationError: an unknown part, a bad meld number, a meld named twice, a malformed
            card or an empty meld; the message shows the expected form.
    """
    text = text.strip()
    word, _, rest = text.partition(" ")
    if word.lower() in ("m", "meld"):
        if not rest.strip():
            raise NotationError("m needs the whole new table, e.g. 'm 5S 6S 7S | 8H 8D 8C'"
                                " (R5)", token="")
        return parse_table(rest)
    slots: list[MeldCards | None] = list(old)
    touched: set[int] = set()
    appended: list[MeldCards] = []

    def number(tok: str, what: str) -> int:
        if not tok.isdigit() or not 1 <= int(tok) <= len(old):
            raise NotationError(
                f"{what} needs a meld number 1..{len(old)}; got {tok!r}" if old else
                f"{what} names a meld on the table, but the table is empty; use "
                "'a <cards>' for a new meld", token=tok)
        i = int(tok) - 1
        if i in touched:
            raise NotationError(f"meld {tok} is named twice in one meld action", token=tok)
        touched.add(i)
        return i

    for part in text.split(";"):
        word, _, rest = part.strip().partition(" ")
        word = word.lower()
        if word in ("a", "add"):
            meld = parse_meld(rest)
            if not meld:
                raise NotationError("a needs the cards of the new meld, e.g. 'a 9H 9S 9C'",
                                    token="")
            appended.append(meld)
        elif word in ("x", "extend"):
            num, _, cards = rest.strip().partition(" ")
            i = number(num, "x")
            extra = parse_meld(cards)
            if not extra:
                raise NotationError("x needs the cards to add, e.g. 'x 1 8S'", token="")
            base = slots[i]
            assert base is not None
            slots[i] = (*base, *extra)
        elif word in ("r", "rearrange"):
            nums, eq, melds = rest.partition("=")
            if not eq or not nums.split():
                raise NotationError("r needs meld numbers, '=' and the new melds, e.g. "
                                    "'r 2 3 = 2D 3D 4D | 5D 6D 7D'", token=rest.strip())
            for tok in nums.split():
                slots[number(tok, "r")] = None
            if melds.strip():
                appended.extend(m for m in parse_table(melds) if m)
        else:
            raise NotationError(f"unknown part {part.strip()!r}: a meld action is 'a', 'x' "
                                "or 'r' parts joined by ';', or one 'm'", token=part.strip())
    return (*(m for m in slots if m is not None), *appended)


__all__ = ["apply_meld_command", "meld_command", "table_change"]
