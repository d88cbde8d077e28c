"""Melds (docs/rules.md §4) and the whole-table meld action (§5).

A meld is a tuple of *table cards* (see :mod:`rummy.cards`: real cards 0..51 and declared
jokers 53..104); a table is a tuple of melds. The fast path works on bit masks:

* Every legal meld, with each joker replaced by its declared card (R4.4), is a set of
  distinct real cards. All 369 such sets (65 groups, 304 sequences) are built once at
  import as 52-bit masks. A meld is legal iff the *sum* of ``1 << effective(card)`` over its
  cards is one of those masks and has as many bits as the meld has cards (a duplicate makes
  a carry, which loses a bit).
* Multisets of physical cards (hand, old table, new table) are packed into one integer with
  an 8-bit field per card (53 fields), so "no card leaves the table" (R5.2) and "every added
  card comes from the hand" (R5.4) are a few big-integer subtractions (SWAR).

:func:`check_action` is the validating entry point; :func:`check_action_slow` is an obviously
correct reference with the same contract, used by the tests on random positions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from rummy.cards import (
    JOKER,
    RANKS,
    SUITS,
    TABLE_JOKER_BASE,
    effective,
    format_card,
    parse_table_card,
    physical,
)
from rummy.errors import IllegalMoveError, NotationError
from rummy.rules import RuleSet

MeldCards = tuple[int, ...]
Table = tuple[MeldCards, ...]

# ---------------------------------------------------------------- tables built at import

#: bit of each table card's effective card (R4.4): index 0..104 (52, a hand joker, is 0).
EFF_BIT: tuple[int, ...] = tuple(
    (1 << effective(t)) if t != JOKER else 0 for t in range(TABLE_JOKER_BASE + 52)
)

_FIELD = 8
#: packed-multiset weight of each card index 0..104 by its physical card.
PHYS_W: tuple[int, ...] = tuple(1 << (_FIELD * physical(t)) for t in range(TABLE_JOKER_BASE + 52))
#: the guard bit of every field of a packed multiset.
_GUARD = sum(1 << (_FIELD * i + _FIELD - 1) for i in range(53))
_FMASK = (1 << _FIELD) - 1


def _build_valid(ace_high: bool = True) -> dict[int, int]:
    """Every legal meld's effective-card mask -> its number of cards (R4.2, R4.3); without
    ``ace_high`` (§11 variant ``ace_high=false``) no sequence reaches the high ace."""
    valid: dict[int, int] = {}
    top = 14 if ace_high else 13
    for r in range(13):  # groups, R4.2: 3 or 4 distinct suits of one rank
        for mask_suits in range(16):
            n = bin(mask_suits).count("1")
            if n >= 3:
                valid[sum(1 << (s * 13 + r) for s in range(4) if mask_suits >> s & 1)] = n
    for s in range(4):  # sequences, R4.3: positions 0..13 where 13 is the high ace
        for start in range(top):
            for end in range(start + 2, top):
                length = end - start + 1
                if length > 13:
                    continue
                mask = sum(1 << (s * 13 + (p % 13)) for p in range(start, end + 1))
                valid[mask] = length
    return valid


#: mask of every legal meld (as effective cards) -> its number of cards.
VALID_MELDS: dict[int, int] = _build_valid()
#: the same under the §11 variant ``ace_high=false`` (the ace is low only: no Q-K-A).
VALID_MELDS_ACE_LOW: dict[int, int] = _build_valid(ace_high=False)


def valid_melds(ace_high: bool = True) -> dict[int, int]:
    """:data:`VALID_MELDS`, or :data:`VALID_MELDS_ACE_LOW` when ``ace_high`` is false."""
    return VALID_MELDS if ace_high else VALID_MELDS_ACE_LOW


def is_valid_meld(meld: Sequence[int], ace_high: bool = True) -> bool:
    """True iff ``meld`` (table cards) is a legal group or sequence (R4.1–R4.4); with
    ``ace_high=False`` (§11 variant) no sequence may hold a high ace."""
    return valid_melds(ace_high).get(sum(map(EFF_BIT.__getitem__, meld))) == len(meld)


def meld_problem(meld: Sequence[int], ace_high: bool = True) -> tuple[str, str] | None:
    """Why a meld is not legal, as ``(rule, message)``; ``None`` if it is legal.

    Slower than :func:`is_valid_meld`; used to explain a rejection.
    """
    if is_valid_meld(meld, ace_high):
        return None
    if not ace_high and is_valid_meld(meld):
        text = " ".join(format_card(c) for c in meld)
        return "R4.3", (f"[{text}] is not a sequence under the variant ace_high=false: the "
                        "ace is low only (A-2-3), never high (Q-K-A)")
    if JOKER in meld:
        return "R1.4", "a joker on the table must declare its card"
    text = " ".join(format_card(c) for c in meld)
    if len(meld) < 3:
        return "R4.1", f"[{text}] has {len(meld)} card(s); a meld needs at least three"
    eff = [effective(c) for c in meld]
    dup = [c for c, k in Counter(eff).items() if k > 1]
    has_joker = any(c >= TABLE_JOKER_BASE for c in meld)
    if len({c % 13 for c in eff}) == 1:
        if dup:
            why = f"two cards stand for {format_card(dup[0])}"
            rule = "R4.4" if has_joker else "R4.2"
            return rule, f"[{text}] is not a group: {why} (no two of the same suit)"
        return "R4.2", f"[{text}] is not a group: a group has 3 or 4 cards"
    if len({c // 13 for c in eff}) == 1:
        if dup:
            rule = "R4.4" if has_joker else "R4.3"
            return rule, f"[{text}] is not a sequence: {format_card(dup[0])} appears twice"
        return "R4.3", (f"[{text}] is not a sequence: ranks must be consecutive; the ace is low "
                        "(A-2-3) or high (Q-K-A), never both, no wrap")
    rule = "R4.4" if has_joker else "R4.1"
    return rule, (f"[{text}] is neither a group (one rank, different suits) nor a sequence "
                  "(one suit, consecutive ranks)")


#: sort keys of canonical_meld for each table card 0..104 (and a hand joker, 52): the key
#: (suit; rank; rank with the ace high) in the high bits, the card itself in the low 8, so
#: one key per card sorts like the (key, card) pairs of the reference
_SUIT_KEY: tuple[int, ...] = tuple((effective(t) // 13) << 8 | t
                                   for t in range(TABLE_JOKER_BASE + 52))
_RANK_KEY: tuple[int, ...] = tuple((effective(t) % 13) << 8 | t
                                   for t in range(TABLE_JOKER_BASE + 52))
_HIGH_KEY: tuple[int, ...] = tuple((effective(t) % 13 or 13) << 8 | t
                                   for t in range(TABLE_JOKER_BASE + 52))
_RANK: tuple[int, ...] = tuple(effective(t) % 13 for t in range(TABLE_JOKER_BASE + 52))


def canonical_meld(meld: Iterable[int]) -> MeldCards:
    """A legal meld in display order (R4.5): groups by suit S,H,D,C; sequences by rank,
    each joker at the rank it declares, a high ace last.

    Does not validate; call :func:`is_valid_meld` first.
    """
    cards = tuple(meld)
    try:
        if min(cards) >= 0:  # table cards: one precomputed key per card
            ranks = set(map(_RANK.__getitem__, cards))
            if len(ranks) == 1 and len(cards) <= 4:
                key = _SUIT_KEY
            elif 0 in ranks and 12 in ranks and len(cards) < 13:
                key = _HIGH_KEY
            else:
                key = _RANK_KEY
            return tuple(sorted(cards, key=key.__getitem__))
    except (ValueError, IndexError, TypeError):  # empty, or not table cards
        pass
    return _canonical_meld_reference(cards)


def _canonical_meld_reference(cards: Sequence[int]) -> MeldCards:
    """:func:`canonical_meld` as first written (any integers; the tests compare both)."""
    effs = [effective(c) for c in cards]
    if len({e % 13 for e in effs}) == 1 and len(cards) <= 4:
        key = [e // 13 for e in effs]
    else:
        ranks = {e % 13 for e in effs}
        high = 0 in ranks and 12 in ranks and len(cards) < 13
        key = [(e % 13 or (13 if high else 0)) for e in effs]
    return tuple(c for _, c in sorted(zip(key, cards, strict=True)))


def canonical_table(table: Iterable[Iterable[int]], known: Iterable[MeldCards] = ()) -> Table:
    """Canonical form of a legal table: each meld in display order, melds sorted.

    Two arrangements with the same melds compare equal after this. Does not validate.
    ``known`` are melds already canonical (e.g. the previous table): a meld equal to one
    of them comes out as that known meld instead of being re-sorted. A meld may be any
    sequence of cards; each comes out a plain tuple.
    """
    keep: dict[Any, MeldCards] = {k: k for k in known}
    out: list[MeldCards] = []
    for m in table:
        try:
            same = keep.get(m)
        except TypeError:  # an unhashable meld (a list of cards)
            same = None
        out.append(tuple(same) if same is not None else canonical_meld(m))
    out.sort()
    return tuple(out)


# ---------------------------------------------------------------- notation of melds/tables

def parse_meld(tokens: Iterable[str] | str) -> MeldCards:
    """Parse a meld of table cards (``["5S", "6S", "*7S"]`` or ``"5S 6S *7S"``).

    Raises:
        NotationError: a malformed card or an undeclared joker, naming the token.
    """
    if isinstance(tokens, str):
        tokens = tokens.split()
    if not isinstance(tokens, (list, tuple)):
        raise NotationError(f"a meld is a list of cards, got {tokens!r}", token=tokens)
    return tuple(parse_table_card(t) for t in tokens)


def parse_table(melds: Iterable[Iterable[str] | str]) -> Table:
    """Parse a table: a list of melds. ``"5S 6S 7S | 8H 8D 8C"`` is also accepted.

    Raises:
        NotationError: naming the first malformed token.
    """
    if isinstance(melds, str):
        melds = [m for m in melds.split("|") if m.strip()]
    if not isinstance(melds, (list, tuple)):
        raise NotationError(f"a table is a list of melds, got {melds!r}", token=melds)
    return tuple(parse_meld(m) for m in melds)


def format_meld(meld: Iterable[int]) -> list[str]:
    """Notation of each card of a meld, in the given order."""
    return [format_card(c) for c in meld]


def format_table(table: Iterable[Iterable[int]]) -> list[list[str]]:
    """Notation of a table: a list of melds, each a list of card tokens."""
    return [format_meld(m) for m in table]


def table_text(table: Iterable[Iterable[int]]) -> str:
    """One-line text of a table, melds separated by `` | ``."""
    return " | ".join(" ".join(format_meld(m)) for m in table) or "(empty table)"


# ---------------------------------------------------------------- the meld action (R5)

def pack(cards: Iterable[int]) -> int:
    """Packed multiset of the physical cards of ``cards`` (hand or table cards)."""
    return sum(map(PHYS_W.__getitem__, cards))


def unpack(packed: int) -> list[int]:
    """Inverse of :func:`pack`: the physical cards (0..52), ascending.

    Visits only the non-empty fields (a meld action adds a few cards), lowest first.
    """
    out: list[int] = []
    while packed:
        card = ((packed & -packed).bit_length() - 1) >> 3  # the lowest non-empty field
        shift = card * _FIELD
        out += [card] * ((packed >> shift) & _FMASK)
        packed &= ~(_FMASK << shift)
    return out


def _field(packed: int, card: int) -> int:
    return (packed >> (card * _FIELD)) & _FMASK


def _first_missing(old: Iterable[int], new: Iterable[int]) -> int:
    lost = Counter(map(physical, old))
    lost.subtract(map(physical, new))
    return min(c for c, k in lost.items() if k > 0)


#: combined weight of each card index 0..104: its effective-card bit in the low 64 bits and
#: its packed physical card above (one sum per meld gives both; see module docstring).
_SHIFT = 64
_LOW = (1 << _SHIFT) - 1
_PHYS_BITS = _FIELD * 53
_PHYS_MASK = (1 << _PHYS_BITS) - 1
_JSHIFT = _SHIFT + _PHYS_BITS  #: declared-joker counts: an 8-bit field per declared card
_UNDECLARED_BIT = 1 << (_JSHIFT + _FIELD * 52)  #: marks an undeclared joker (JOKER) in a sum
COMBINED_W: tuple[int, ...] = tuple(
    EFF_BIT[t] | (PHYS_W[t] << _SHIFT)
    | ((1 << (_FIELD * (t - TABLE_JOKER_BASE) + _JSHIFT)) if t >= TABLE_JOKER_BASE else 0)
    | (_UNDECLARED_BIT if t == JOKER else 0)
    for t in range(TABLE_JOKER_BASE + 52))


def _table_problem(table: Sequence[Any]) -> NotationError:
    """The error of a table that :func:`check_table_value` refused, naming its first bad
    meld in notation (off the hot path: only a refused table gets here)."""
    for i, meld in enumerate(table, 1):
        if not isinstance(meld, (tuple, list)):
            return NotationError(f"meld {i} of the table is not a list of cards: "
                                 f"{meld!r}"[:200], token=meld)
        if not meld:
            return NotationError(f"meld {i} of the table is empty: a meld has at least "
                                 "three cards (R4.1)", token=meld, rule="R4.1")
        bad = [c for c in meld if type(c) is not int or not 0 <= c < TABLE_JOKER_BASE + 52]
        if bad:
            return NotationError(f"meld {i} of the table holds {bad[0]!r}, which is not a "
                                 "card"[:200], token=bad[0])
    return NotationError(f"not a table of cards: {table!r}"[:200], token=table)


def _not_in_hand(card: int, added: int, held: int) -> str:
    """The R5.4 message for ``card``, added ``added`` times from a hand holding ``held``."""
    if not held:
        return (f"{format_card(card)} is not in the hand; every added card must come from "
                "the acting player's hand")
    return (f"the new table adds {added} x {format_card(card)} but the hand holds {held}; "
            "every added card must come from the acting player's hand")


def check_table_value(table: object, *, jokers: bool = True) -> None:
    """Check that ``table`` is a sequence of non-empty melds of table-card indices.

    Cheap: C-level ``min``/``max`` over the melds; run before any arithmetic on the cards.
    ``jokers=False`` skips the search for undeclared jokers (``check_action`` finds them in
    its sums instead).

    Raises:
        NotationError: not a list of melds, an empty meld, a card that is not an index
            0..104, or an undeclared joker (``JOKER``, R1.4).
    """
    if not isinstance(table, (tuple, list)):
        raise NotationError(f"a table is a list of melds, got {type(table).__name__}",
                            token=table)
    if not table:
        return
    try:
        lo = min(map(min, table))
        hi = max(map(max, table))
    except (TypeError, ValueError):
        raise _table_problem(table) from None
    if type(lo) is not int or type(hi) is not int or lo < 0 or hi >= TABLE_JOKER_BASE + 52:
        raise _table_problem(table)
    if jokers and any(JOKER in m for m in table):
        raise NotationError(_UNDECLARED, token="*")


_UNDECLARED = "a joker on the table must declare its card, e.g. '*7S' (R1.4)"


def check_action(
    table: Sequence[Sequence[int]],
    hand: Sequence[int],
    new_table: Sequence[Sequence[int]],
    *,
    table_is_legal: bool = False,
    rules: RuleSet | None = None,
) -> tuple[int, ...]:
    """Validate one meld action (R5.1–R5.9) and return the cards it takes from the hand.

    Gives the same answer as :func:`check_action_slow` on every input (a property test
    checks it), whether or not the old table is legal.

    Args:
        table: the melds on the table before the action (table cards). Need not be legal:
            a meld that stands unchanged on the new table is checked like any other (R5.3).
        table_is_legal: the caller promises that every meld of ``table`` is legal (I2, as
            every table the engine records is); melds that stand unchanged are then left
            out of every check, which is faster when few melds change. The engine passes
            True; with an illegal ``table`` the answer is then undefined.
        hand: the acting player's hand (cards 0..52, ``JOKER`` for a joker).
        new_table: the proposed whole new table (table cards; every joker declared).
        rules: the game's rule set; ``None`` for the default rules. Three §11 variants
            change the check: ``ace_high`` (R4.3 inside R5.3), ``joker_release`` (R5.8:
            with ``"hand"`` only real cards the action adds free jokers) and
            ``joker_moves`` (R5.7: with ``"locked"`` no joker is freed and a table meld
            holding a joker stays whole).

    Returns:
        The hand cards the action adds to the table, ascending (jokers as ``JOKER``).

    Raises:
        IllegalMoveError: with the first rule broken, checked in the order R5.2, R5.1,
            R5.4, R5.3, R5.7 (``joker_moves="locked"`` only), R5.8
            (tests/conformance/cases/README.md). Nothing is changed.
        NotationError: an undeclared joker (``JOKER``) in ``new_table`` (R1.4).
    """
    return _check_action(table, hand, new_table, table_is_legal, rules)[0]


def check_and_canonical(table: Table, hand: Sequence[int], new_table: Sequence[Sequence[int]],
                        rules: RuleSet | None = None) -> tuple[tuple[int, ...], Table]:
    """The engine's check of a meld action on a legal table (I2): ``check_action(table,
    hand, new_table, table_is_legal=True, rules=rules)`` and ``canonical_table(new_table,
    table)`` in one pass (the melds that stand unchanged are matched once, for both).

    Returns:
        ``(added, canonical new table)``.

    Raises:
        As :func:`check_action`.
    """
    if type(new_table) is tuple or type(new_table) is list:
        done = _accept_fast(table, hand, new_table, rules)
        if done is not None:
            return done
    return _check_and_canonical_reference(table, hand, new_table, rules)


def _check_and_canonical_reference(
        table: Table, hand: Sequence[int], new_table: Sequence[Sequence[int]],
        rules: RuleSet | None = None) -> tuple[tuple[int, ...], Table]:
    """:func:`check_and_canonical` through :func:`_check_action` alone (every outcome,
    every error); the tests compare it with the fast path on random positions."""
    added, changed, kept = _check_action(table, hand, new_table, True, rules)
    if changed is None or kept is None:
        return added, canonical_table(new_table, table)
    melds: list[MeldCards] = [tuple(m) for m in kept]  # unchanged: canonical already
    melds.extend(map(canonical_meld, changed))
    melds.sort()
    return added, tuple(melds)


#: the physical card (0..52) of each table card index 0..104
_PHYS: tuple[int, ...] = tuple(physical(t) for t in range(TABLE_JOKER_BASE + 52))
_EFF_GET = EFF_BIT.__getitem__
_PHYS_GET = _PHYS.__getitem__


def _canonical_keys(valid: dict[int, int]) -> dict[int, tuple[int, Any]]:
    """Each legal meld's effective-card mask -> ``(cards, sort key)``: its number of cards
    (as ``valid``) and the ``__getitem__`` of the key table :func:`canonical_meld` picks
    for it (a group by suit; a sequence by rank, with the ace high when it holds an ace
    and a king). The key depends on the mask alone: a legal meld's ranks are its mask's."""
    out: dict[int, tuple[int, Any]] = {}
    for mask, n in valid.items():
        ranks = {i % 13 for i in range(52) if mask >> i & 1}
        if len(ranks) == 1 and n <= 4:
            key = _SUIT_KEY
        elif 0 in ranks and 12 in ranks and n < 13:
            key = _HIGH_KEY
        else:
            key = _RANK_KEY
        out[mask] = (n, key.__getitem__)
    return out


_CANON_KEYS = _canonical_keys(VALID_MELDS)
_CANON_KEYS_ACE_LOW = _canonical_keys(VALID_MELDS_ACE_LOW)


def _accept_fast(table: Table, hand: Sequence[int], new_table: Sequence[Sequence[int]],
                 rules: RuleSet | None) -> tuple[tuple[int, ...], Table] | None:
    """The result of :func:`check_and_canonical` for a meld action that breaks no rule,
    found on the few melds that changed with plain lists (no packed integers); ``None``
    when the action breaks a rule or is out of the ordinary (a variant's joker check, a
    value that is not a card), for the caller to take the reference path, which raises
    the error in its order (R5.2, R5.1, R5.4, R5.3, R5.7, R5.8).

    Accepts exactly what the reference accepts, with the same result: the melds of
    ``new_table`` equal to a meld of the legal old table (I2) cancel out; every other
    meld must be legal (R5.3); its physical cards less those of the old melds gone must
    leave no card behind (R5.2), add at least one (R5.1), and be in ``hand`` (R5.4); a
    joker of a gone meld whose declaration no longer stands needs the real card on the
    new table (R5.8).
    """
    left = list(table)
    changed: list[Sequence[int]] = []
    melds: list[MeldCards] = []  # the unchanged melds (canonical already), then the rest
    try:
        for m in new_table:
            if m in left:  # an unchanged meld (equality, as the reference's dict keys)
                melds.append(left.pop(left.index(m)))  # the old table's own, as the reference
            else:
                changed.append(m)
    except (TypeError, ValueError):  # a value whose == is not a truth value (an array)
        return None
    if not changed:
        return None  # R5.1
    # the values as given, untyped: a bool (an int subclass, no card) keeps its type here
    # in a build compiled ahead of time too, which would otherwise convert it to an int
    given: Any = changed
    try:
        lo = min(map(min, given))
        hi = max(map(max, given))
    except (TypeError, ValueError):
        return None  # an empty meld or a value that is not a card
    if type(lo) is not int or type(hi) is not int or lo < 0 or hi >= TABLE_JOKER_BASE + 52:
        return None
    keys = _CANON_KEYS if rules is None or rules.ace_high else _CANON_KEYS_ACE_LOW
    try:
        for m in changed:  # R5.3 (an undeclared joker has no bit: never legal)
            nk = keys.get(sum(map(_EFF_GET, m)))
            if nk is None or nk[0] != len(m):
                return None
            melds.append(tuple(sorted(m, key=nk[1])))  # canonical_meld(m)
        added = list(map(_PHYS_GET, chain.from_iterable(changed)))
    except TypeError:  # a value that is not an int between the smallest and largest
        return None
    if left:
        try:
            for c in map(_PHYS_GET, chain.from_iterable(left)):
                added.remove(c)  # R5.2: the cards of the old melds gone stay on the table
        except ValueError:
            return None
        if max(map(max, left)) >= TABLE_JOKER_BASE and not _jokers_stay(
                left, changed, new_table, rules):
            return None
    if not added:
        return None  # R5.1
    added.sort()
    rest = list(hand)
    try:
        for c in added:  # R5.4
            rest.remove(c)
    except ValueError:
        return None
    melds.sort()
    return tuple(added), tuple(melds)


def _jokers_stay(gone: list[MeldCards], changed: list[Sequence[int]],
                 new_table: Sequence[Sequence[int]], rules: RuleSet | None) -> bool:
    """R5.8 for :func:`_accept_fast`: each joker of the old melds ``gone`` that no changed
    meld declares as before has its real card on ``new_table``. ``False`` (take the
    reference path) when it has not, and under the joker variants of §11."""
    if rules is not None and (rules.joker_moves == "locked" or rules.joker_release == "hand"):
        return False
    jokers = [c for m in gone for c in m if c >= TABLE_JOKER_BASE]
    for tj in set(jokers):
        moved = jokers.count(tj) - sum(m.count(tj) for m in changed)
        if moved > 0 and moved > sum(m.count(tj - TABLE_JOKER_BASE) for m in new_table):
            return False
    return True


def _check_action(
    table: Sequence[Sequence[int]],
    hand: Sequence[int],
    new_table: Sequence[Sequence[int]],
    table_is_legal: bool,
    rules: RuleSet | None,
) -> tuple[tuple[int, ...], Sequence[Sequence[int]] | None, list[Sequence[int]] | None]:
    """:func:`check_action`; also returns the melds of ``new_table`` that do not stand
    unchanged from the legal old table and those that do (both ``None`` unless
    ``table_is_legal`` and the melds could be matched)."""
    # With a table known to be legal (I2, the engine's), melds that stand unchanged on both
    # tables cancel out of every check (R5.2/R5.4 count cards, R5.8 compares declarations,
    # and a meld of the legal old table is legal): only the melds that differ are checked
    # and summed. Otherwise every meld is checked (R5.3), and matching unchanged melds would
    # save nothing. Unhashable melds (lists) take the full path.
    changed: Sequence[Sequence[int]] = new_table
    gone: Sequence[Sequence[int]] = table
    kept: list[Sequence[int]] = []
    matched = False
    if table_is_legal and isinstance(new_table, (tuple, list)):
        try:
            # each old meld under its value; an unchanged meld is recorded as the old
            # table's own (canonical, plain ints), not as the value that equals it
            left: dict[Sequence[int], list[Sequence[int]]] = {}
            for m in table:
                left.setdefault(m, []).append(m)
            changed = []
            kept = []
            for m in new_table:
                same = left.get(m)
                if same:
                    kept.append(same.pop())
                else:
                    changed.append(m)
            gone = [m for same in left.values() for m in same]
            matched = True
        except TypeError:
            changed, gone = new_table, table
    if matched:
        try:  # an unchanged meld equals a meld of the legal old table: only the rest
            check_table_value(changed, jokers=False)
        except NotationError:
            check_table_value(new_table, jokers=False)  # the error naming the meld's place
            raise
    else:
        check_table_value(new_table, jokers=False)
    n_old = sum(map(len, table))
    n_new = n_old + sum(map(len, changed)) - sum(map(len, gone)) if matched \
        else sum(map(len, new_table))
    if n_new > n_old + len(hand) or n_new >= 128 or n_old >= 128:
        added_t = check_action_slow(table, hand, new_table, rules=rules)  # 8-bit fields
        return added_t, None, None
    get = COMBINED_W.__getitem__
    try:
        sums = [sum(map(get, m)) for m in changed]
    except TypeError:  # a non-integer card between the smallest and largest
        raise NotationError(f"not a table of cards: {new_table!r}"[:200]) from None
    old_all = sum(map(get, chain.from_iterable(gone)))
    new_all = sum(sums)
    if new_all >= _UNDECLARED_BIT:
        raise NotationError(_UNDECLARED, token="*")
    diff = ((new_all >> _SHIFT) & _PHYS_MASK) + _GUARD - ((old_all >> _SHIFT) & _PHYS_MASK)
    if diff & _GUARD != _GUARD:  # R5.2: some field went negative
        card = _first_missing([c for m in table for c in m], [c for m in new_table for c in m])
        raise IllegalMoveError("R5.2", f"{format_card(card)} would leave the table; every card "
                               "on the table must stay on it")
    added = diff - _GUARD
    if not added:
        raise IllegalMoveError("R5.1", "a meld action must add at least one card from the hand")
    added_cards = unpack(added)  # ascending
    prev = -1
    for c in added_cards:  # R5.4, the lowest card first
        if c != prev:
            prev = c
            n = added_cards.count(c)
            if n > 1 or c not in hand:
                held = hand.count(c)
                if n > held:
                    raise IllegalMoveError("R5.4", _not_in_hand(c, n, held))
    ace_high = rules is None or rules.ace_high
    valid = valid_melds(ace_high).get
    for m, sm in zip(changed, sums, strict=True):
        if valid(sm & _LOW) != len(m):
            rule_msg = meld_problem(m, ace_high)
            assert rule_msg is not None
            raise IllegalMoveError("R5.3", f"every card on the table must be in a legal meld: "
                                   f"{rule_msg[1]} ({rule_msg[0]})", meld=format_meld(m))
    old_j = old_all >> _JSHIFT
    if old_j:  # R5.7/R5.8: declared jokers that lost their declaration need the real card
        if rules is not None and rules.joker_moves == "locked":
            _check_locked(table, new_table)
        by_hand = rules is not None and rules.joker_release == "hand"
        new_j = new_all >> _JSHIFT
        while old_j:
            low = (old_j & -old_j).bit_length() - 1
            card = low // _FIELD
            moved = _field(old_j, card) - _field(new_j, card)
            if moved > 0:
                real = _field(added, card) if by_hand else \
                    sum(m.count(card) for m in new_table)
                if moved > real:
                    raise _release_error(card, by_hand)
            old_j &= ~(_FMASK << (card * _FIELD))
    return tuple(added_cards), (changed if matched else None), (kept if matched else None)


def _release_error(card: int, by_hand: bool) -> IllegalMoveError:
    """The R5.8 refusal of a joker declared ``card`` that changed its declaration."""
    tj = TABLE_JOKER_BASE + card
    if by_hand:
        return IllegalMoveError(
            "R5.8", f"the joker {format_card(tj)} may change its declared card only when this "
            f"action adds the real {format_card(card)} from the hand (variant "
            "joker_release=hand)")
    return IllegalMoveError(
        "R5.8", f"the joker {format_card(tj)} may change its declared card only when the "
        f"real {format_card(card)} replaces it on the table")


def _check_locked(table: Sequence[Sequence[int]], new_table: Sequence[Sequence[int]]) -> None:
    """§11 variant ``joker_moves="locked"`` (R5.7): every meld of ``table`` that holds a
    table joker has all of its cards (jokers with their declarations) inside one meld of
    ``new_table``, and no card serves two of them: several such melds may share a new meld
    (they were joined) only when it holds all of their cards together. So no joker is freed
    and such a meld only grows or joins another; a second copy of a joker meld (two decks)
    cannot hide inside the first one's meld while its own cards are spread.

    Raises:
        IllegalMoveError: ``R5.7``, naming the first meld that no meld of the new table
            holds, or else the first of those that cannot each have their own.
    """
    locked = [m for m in table if any(c >= TABLE_JOKER_BASE for c in m)]
    if not locked:
        return
    new_counts = [Counter(m) for m in new_table]
    needs = [Counter(m) for m in locked]
    for m, need in zip(locked, needs, strict=True):
        if not any(not (need - have) for have in new_counts):
            raise _locked_error(m, "")
    # each locked meld its own host, sharing one only with room for all: a small matching
    # (jokers are few, so locked melds are few)
    order = sorted(range(len(locked)), key=lambda i: -len(locked[i]))

    def assign(k: int) -> bool:
        if k == len(order):
            return True
        need = needs[order[k]]
        for have in new_counts:
            if not need - have:
                have.subtract(need)
                ok = assign(k + 1)
                have.update(need)
                if ok:
                    return True
        return False

    if not assign(0):
        raise _locked_error(locked[0], " (each meld holding a joker needs all of its own cards "
                            "in the new table's meld that holds it; two joker melds share a "
                            "meld only when it holds the cards of both)")


def _locked_error(m: Sequence[int], why: str) -> IllegalMoveError:
    """The R5.7 refusal under ``joker_moves="locked"`` of a joker meld broken up."""
    return IllegalMoveError(
        "R5.7", f"[{' '.join(format_card(c) for c in m)}] holds a joker, so it must "
        "stay whole, its jokers keeping their cards (variant joker_moves=locked); "
        f"cards may be added to it, none may leave it{why}", meld=format_meld(m))


def check_action_slow(
    table: Sequence[Sequence[int]],
    hand: Sequence[int],
    new_table: Sequence[Sequence[int]],
    *,
    rules: RuleSet | None = None,
) -> tuple[int, ...]:
    """Reference implementation of :func:`check_action` with plain counters.

    Same contract; written to be obviously correct, not fast.
    """
    check_table_value(new_table)
    # read untyped: compiled (mypyc), an int-typed loop variable would refuse a float
    given: Any = new_table
    if any(type(c) is not int for m in given for c in m):
        raise NotationError(f"not a table of cards: {new_table!r}"[:200])
    old = Counter(physical(c) for m in table for c in m)
    newc = Counter(physical(c) for m in new_table for c in m)
    for card in sorted(old):
        if newc[card] < old[card]:
            raise IllegalMoveError("R5.2", f"{format_card(card)} would leave the table; every "
                                   "card on the table must stay on it")
    added = newc - old
    if not added:
        raise IllegalMoveError("R5.1", "a meld action must add at least one card from the hand")
    hand_c = Counter(hand)
    for card in sorted(added):
        if added[card] > hand_c[card]:
            raise IllegalMoveError("R5.4", _not_in_hand(card, added[card], hand_c[card]))
    ace_high = rules is None or rules.ace_high
    for m in new_table:
        problem = meld_problem(m, ace_high)
        if problem is not None:
            raise IllegalMoveError("R5.3", f"every card on the table must be in a legal meld: "
                                   f"{problem[1]} ({problem[0]})", meld=format_meld(m))
    before = Counter(c for m in table for c in m if c >= TABLE_JOKER_BASE)
    if before and rules is not None and rules.joker_moves == "locked":
        _check_locked(table, new_table)
    after = Counter(c for m in new_table for c in m if c >= TABLE_JOKER_BASE)
    by_hand = rules is not None and rules.joker_release == "hand"
    real = added if by_hand else Counter(c for m in new_table for c in m if c < JOKER)
    for tj in sorted(before):
        changed = max(0, before[tj] - after[tj])
        if changed > real[tj - TABLE_JOKER_BASE]:
            raise _release_error(tj - TABLE_JOKER_BASE, by_hand)
    return tuple(sorted(added.elements()))


__all__ = [
    "MeldCards", "Table", "VALID_MELDS", "is_valid_meld", "meld_problem",
    "canonical_meld", "canonical_table", "parse_meld", "parse_table", "format_meld",
    "format_table", "table_text", "check_action", "check_action_slow", "pack", "unpack",
    "RANKS", "SUITS",
]
