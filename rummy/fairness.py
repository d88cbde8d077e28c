"""A provably fair deal: the seed commitment of ``GameStarted`` and its check
(commit-reveal; docs/fairness.md).

At creation the service draws a secret ``seed`` and a random ``salt`` and records, public
to every seat from the first event on, ``commitment = seed_commitment(seed, salt)``: the
lowercase hex SHA-256 of the byte string ``salt || str(seed)`` (the salt's 32 ASCII hex
digits followed by the seed in decimal ASCII, no separator, no newline). Seed and salt
stay hidden (``rummy.views.redact``) until the game is over, when every full-information
copy of the log (``GetEvents`` after the end, an export) holds them. :func:`verify_deal`
then checks that the commitment matches and that every round's deck follows from the seed
(``rummy.decide.round_deck``, R2.2) and the first dealer from it (R2.1).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from rummy.events import Event, GameStarted, RoundStarted

SALT_PATTERN = re.compile(r"[0-9a-f]{32}")
"""A salt: 32 lowercase hex digits (16 random bytes, ``secrets.token_hex(16)``)."""


def seed_commitment(seed: int, salt: str) -> str:
    """The commitment to ``seed``: ``sha256(salt.encode("ascii") + str(seed).encode("ascii"))``
    as 64 lowercase hex digits.

    Raises:
        ValueError: ``salt`` is not 32 lowercase hex digits (:data:`SALT_PATTERN`).
    """
    if not isinstance(salt, str) or not SALT_PATTERN.fullmatch(salt):
        raise ValueError(f"salt must be 32 lowercase hex digits, got {salt!r}")
    return hashlib.sha256(salt.encode("ascii") + str(seed).encode("ascii")).hexdigest()


def local_salt(seed: int) -> str:
    """The salt of a game dealt on the user's own machine (``rummy simulate``, a batch's
    ``replay-game``): 32 hex digits of ``sha256("rummy-local-salt:" || str(seed))``.

    It is a function of the seed, so it hides nothing (whoever knows the seed deals the
    game anyway); it exists so that a local log carries a commitment and ``rummy verify``
    checks its deal like a served game's. A served game's salt is random
    (``secrets.token_hex(16)``) and secret until the end.
    """
    return hashlib.sha256(b"rummy-local-salt:" + str(seed).encode("ascii")).hexdigest()[:32]


def verify_deal(events: Iterable[Event]) -> list[str]:
    """Why the deal of a game's log is not provably fair (empty: it is).

    ``events`` is a full-information log from its ``GameStarted`` on (the seed and salt
    revealed, every ``RoundStarted.deck`` present). Checks: the log starts with a
    ``GameStarted`` that carries a commitment, its seed and salt; the commitment is
    :func:`seed_commitment` of them; the first dealer is ``first_dealer(seed, players)``
    (R2.1); every ``RoundStarted.deck`` is ``round_deck(seed, round, players)`` (R2.2).
    Each problem is one sentence naming the event's version (1-based) and what differs.
    """
    from rummy.decide import first_dealer, round_deck  # decide imports this module

    it = iter(events)
    first = next(it, None)
    if not isinstance(first, GameStarted):
        return ["the log does not start with GameStarted"]
    if not first.commitment:
        return ["GameStarted carries no seed commitment (a game recorded before "
                "commitments, or by a creator that did not commit)"]
    if first.seed is None or first.salt is None:
        return ["the seed or the salt is not revealed (a redacted log, or a game not over): "
                "verify a full-information log of a finished game"]
    try:
        expected = seed_commitment(first.seed, first.salt)
    except ValueError as e:
        return [f"GameStarted: {e}"]
    if expected != first.commitment:
        return [f"GameStarted: the commitment {first.commitment} is not sha256(salt || seed) "
                f"= {expected}: the seed or the salt was changed after the commitment"]
    problems = []
    if first.dealer != first_dealer(first.seed, first.players):
        problems.append(f"GameStarted: the first dealer {first.dealer} does not follow from "
                        f"the seed (R2.1: {first_dealer(first.seed, first.players)})")
    for version, event in enumerate(it, start=2):
        if not isinstance(event, RoundStarted):
            continue
        if event.deck is None:
            problems.append(f"event {version}: RoundStarted of round {event.round} has no "
                            "deck (a redacted log)")
            continue
        deck = round_deck(first.seed, event.round, first.players)
        if tuple(event.deck) != deck:
            at = next((i for i, (a, b) in enumerate(zip(event.deck, deck, strict=False))
                       if a != b), min(len(deck), len(event.deck)))
            problems.append(f"event {version}: the deck of round {event.round} does not "
                            f"follow from the seed (first difference at position {at})")
    return problems


__all__ = ["SALT_PATTERN", "local_salt", "seed_commitment", "verify_deal"]
