"""Cards, decks and the card notation of docs/rules.md §1 (R1.2–R1.5).

Cards are small integers so that the hot path (validation, solver, engine) works on ints
and count vectors; the notation functions turn them into text and back.

Encoding (stable: it is used inside the core only, events carry the text notation):

* a real card is ``suit * 13 + rank`` with ``rank`` 0..12 for A,2,…,K and ``suit`` 0..3
  for S,H,D,C (the order of R1.4), so ``0`` is ``AS`` and ``51`` is ``KC``;
* ``JOKER`` (52) is a joker in a hand (``*``);
* a joker on the table declared as card ``c`` is ``TABLE_JOKER_BASE + c`` (53..104),
  written ``*`` + the declared card, e.g. ``*7S`` (R1.4, R4.4).

>>> parse_card("7S"), format_card(6)
(6, '7S')
>>> format_card(parse_table_card("*KD"))
'*KD'
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from operator import itemgetter

from rummy.errors import NotationError

RANKS = "A23456789TJQK"
SUITS = "SHDC"
JOKER = 52
TABLE_JOKER_BASE = 53
NUM_REAL = 52

#: Point value of each hand card index 0..52 (R1.5): ace 1, 2–10 face, J/Q/K 10, joker 25.
POINTS: tuple[int, ...] = tuple(min(r + 1, 10) for _s in range(4) for r in range(13)) + (25,)

_CARD_TEXT: tuple[str, ...] = tuple(RANKS[r] + SUITS[s] for s in range(4) for r in range(13))
_TEXT_CARD: dict[str, int] = {t: i for i, t in enumerate(_CARD_TEXT)}
_TABLE_TEXT: tuple[str, ...] = _CARD_TEXT + ("*",) + tuple("*" + t for t in _CARD_TEXT)
_TEXT_TABLE: dict[str, int] = {t: i for i, t in enumerate(_TABLE_TEXT) if i != JOKER}


def effective(tcard: int) -> int:
    """The card a table card stands for (R4.4): itself, or a joker's declared card."""
    return tcard - TABLE_JOKER_BASE if tcard >= TABLE_JOKER_BASE else tcard


def physical(tcard: int) -> int:
    """The physical card of a table card: a real card index, or ``JOKER`` for any joker."""
    return JOKER if tcard >= JOKER else tcard


def declare(card: int) -> int:
    """Table-card value of a joker declared as the real card ``card`` (0..51)."""
    return TABLE_JOKER_BASE + card


def parse_card(token: str) -> int:
    """Parse a hand card: ``7S``, ``TD``, ``AH`` or ``*`` (R1.4).

    Raises:
        NotationError: the token is not a card; the message names the token.
    """
    if token == "*":
        return JOKER
    try:
        return _TEXT_CARD[token]
    except (KeyError, TypeError):
        raise NotationError(f"malformed card {token!r}: expected rank {RANKS} + suit {SUITS}"
                            " (e.g. '7S', 'TD') or '*' for a joker in hand (R1.4)",
                            token=token) from None


def parse_table_card(token: str) -> int:
    """Parse a table card: a real card or a declared joker ``*7S`` (R1.4).

    Raises:
        NotationError: malformed token, or a joker without a declared card (a joker on the
            table always has one, R1.4).
    """
    try:
        return _TEXT_TABLE[token]
    except (KeyError, TypeError):
        if token == "*":
            raise NotationError("a joker on the table must declare its card, e.g. '*7S' (R1.4)",
                                token=token) from None
        raise NotationError(f"malformed table card {token!r}: expected e.g. '7S' or a declared "
                            "joker '*7S' (R1.4)", token=token) from None


def format_card(card: int) -> str:
    """Notation of a hand or table card index (inverse of the parse functions)."""
    return _TABLE_TEXT[card]


def parse_cards(tokens: Iterable[str]) -> tuple[int, ...]:
    """Parse a hand: an iterable of tokens or one whitespace-separated string.

    Returns:
        The cards sorted ascending (a hand's order carries no meaning).

    Raises:
        NotationError: naming the first malformed token.
    """
    if isinstance(tokens, str):
        tokens = tokens.split()
    return tuple(sorted(parse_card(t) for t in tokens))


def format_cards(cards: Iterable[int]) -> list[str]:
    """Notation of each card, in the given order."""
    return [_TABLE_TEXT[c] for c in cards]


#: point value of every card index 0..104: a declared joker on the table is a joker (25)
_POINTS_BY_INDEX: tuple[int, ...] = POINTS + (POINTS[JOKER],) * NUM_REAL


def hand_points(cards: Iterable[int]) -> int:
    """Point value (R1.5) of cards: joker 25, J/Q/K 10, 2–10 face value, ace 1.

    The one place card points are summed. ``cards`` are hand cards (0..52) or table cards
    (0..104: a declared joker counts 25 whatever it declares), e.g. a hand, the cards a
    meld action adds, or ``itertools.chain.from_iterable(table)``.

    Raises:
        IndexError: a card index outside 0..104.
    """
    if type(cards) is tuple and len(cards) > 1:  # a hand: one C call for every card
        return sum(itemgetter(*cards)(_POINTS_BY_INDEX))
    return sum(map(_POINTS_GET, cards))


_POINTS_GET = _POINTS_BY_INDEX.__getitem__


def new_deck(decks: int) -> tuple[int, ...]:
    """The unshuffled deck of R1.2: ``decks`` copies of 52 cards plus one joker each.

    Returns 53 cards for one deck, 106 for two.
    """
    return tuple(list(range(NUM_REAL)) * decks + [JOKER] * decks)


def decks_for(players: int) -> int:
    """Number of 53-card decks for a player count (R1.2): 1 for two players, else 2."""
    return 1 if players == 2 else 2


def shuffled_deck(decks: int, rng: random.Random) -> tuple[int, ...]:
    """A shuffled deck drawn from ``rng`` (the order is then recorded in an event): the
    order ``rng.shuffle`` gives, with the loop of ``random.Random.shuffle`` written out
    for a plain ``random.Random`` (its ``_randbelow`` inlined; a test compares the two)."""
    deck = list(new_deck(decks))
    if type(rng) is not random.Random:
        rng.shuffle(deck)
        return tuple(deck)
    getrandbits = rng.getrandbits
    for i in range(len(deck) - 1, 0, -1):  # Fisher-Yates, as random.Random.shuffle
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:  # rejection sampling, as random.Random._randbelow_with_getrandbits
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)
