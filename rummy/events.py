"""Events: the only source of truth of a game (docs/architecture.md, core contract).

Every event is a frozen dataclass with a stable ``TYPE`` name and a schema ``VERSION``.
In memory, cards are the integers of :mod:`rummy.cards`; on the wire (JSON lines, the event
store, the API) they are written in the R1.4 notation. :func:`to_dict` / :func:`from_dict`
round-trip exactly; :func:`from_dict` upcasts older schema versions and rejects unknown
types and malformed payloads with a ``NotationError`` naming the field.

Schema evolution (the policy of ``docs/events.md``, after eventsourcing's ``class_version``
and upcasters): each event type has a schema ``VERSION``; a change to an event bumps it,
adds fields only with defaults, never reuses a field name, and registers an upcaster
``(type, n) -> dict`` in :data:`UPCASTERS` that turns a stored ``vn`` dict into ``vn+1``.
Reading applies the chain ``v1 -> v2 -> ...`` up to the current version, so every stored
game stays readable; events are always written at the current version. Each class declares
the encoding of each field (``ENCODING``); a new rule variant is a new ``GameStarted``
version (``GameStarted.VARIANTS``, :func:`variant_added`, :func:`variant_problems`).

Hidden fields (I3): ``GameStarted.seed`` and ``GameStarted.salt`` (until the game is over,
``rummy.fairness``), ``RoundStarted.deck`` and a ``CardDrawn.card`` of
another seat are ``None`` in the redacted copy a seat receives (:func:`rummy.views.redact`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar, get_args

from rummy.cards import format_card, parse_card, parse_table_card
from rummy.errors import NotationError
from rummy.melds import Table, format_table
from rummy.rules import RuleSet


class RoundEndReason(StrEnum):
    """How a round ended (``RoundScored.reason``): ``KNOCK`` (R6.1), ``GOING_OUT`` (R6.2),
    ``STOCK`` (the stock ran out and the final turns were played, R8.3). A ``StrEnum``:
    ``RoundEndReason.KNOCK == "knock"``, as stored in events; the proto enum
    ``RoundEndReason`` has one value per member."""

    KNOCK = "knock"
    GOING_OUT = "going_out"
    STOCK = "stock"


# ------------------------------------------------------------------------- field encodings


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotationError(f"field {name!r} must be an integer, got {value!r}", token=value)
    return value


def _list(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise NotationError(f"field {name!r} must be a list, got {value!r}", token=value)
    return value


@dataclass(frozen=True, slots=True)
class FieldCodec:
    """How one field of an event is written in its record and read back (the per-type
    transcoding of eventsourcing, declared on each event class as ``ENCODING``).

    Attributes:
        encode: value -> JSON value, or ``None`` when the value is written as it is (an
            ``int``, a ``str``).
        decode: ``(field name, JSON value) -> value``; raises ``NotationError`` naming the
            field for a malformed value (a ``ValueError`` of a rule set is reported too).
        nullable: the field may be ``None`` (a hidden field of a redacted copy, I3, or a
            value that may be absent); ``None`` is written and read as JSON ``null``.
    """

    encode: Callable[[Any], Any] | None
    decode: Callable[[str, Any], Any]
    nullable: bool = False


def optional(codec: FieldCodec) -> FieldCodec:
    """``codec`` for a field that may also be ``None``."""
    return FieldCodec(codec.encode, codec.decode, nullable=True)


def _strs(name: str, raw: Any) -> tuple[str, ...]:
    value = tuple(_list(name, raw))
    if not all(isinstance(x, str) for x in value):
        raise NotationError(f"field {name!r} must be a list of strings", token=raw)
    return value


def _str(name: str, raw: Any) -> str:
    if not isinstance(raw, str):
        raise NotationError(f"field {name!r} must be a string, got {raw!r}", token=raw)
    return raw


def _reason(name: str, raw: Any) -> RoundEndReason:
    if not isinstance(raw, str) or raw not in RoundEndReason.__members__.values():
        raise NotationError(f"unknown round end reason {raw!r}", token=raw)
    return RoundEndReason(raw)


def _rules(name: str, raw: Any) -> RuleSet:
    if not isinstance(raw, dict):
        raise NotationError(f"field {name!r} must be an object", token=raw)
    return RuleSet.from_json(raw)  # every variant of this release (strict, I4)


INT = FieldCodec(None, _int)
"""An integer (not a ``bool``)."""
STR = FieldCodec(None, _str)
"""A string, written as it is."""
INTS = FieldCodec(list, lambda name, raw: tuple(_int(name, x) for x in _list(name, raw)))
"""A tuple of integers, written as a JSON list."""
STRS = FieldCodec(list, _strs)
"""A tuple of strings, written as a JSON list."""
CARD = FieldCodec(format_card, lambda name, raw: parse_card(raw))
"""One card in the R1.4 notation (``"7S"``, ``"*"``)."""
CARDS = FieldCodec(lambda value: [format_card(c) for c in value],
                   lambda name, raw: tuple(parse_card(t) for t in _list(name, raw)))
"""A tuple of cards, a JSON list of card tokens."""
TABLE = FieldCodec(format_table, lambda name, raw: tuple(
    tuple(parse_table_card(t) for t in _list("meld", m)) for m in _list(name, raw)))
"""A table (``rummy.melds.format_table``: a list of melds, jokers declared)."""
HANDS = FieldCodec(lambda value: [[format_card(c) for c in h] for h in value],
                   lambda name, raw: tuple(tuple(parse_card(t) for t in _list("hand", h))
                                           for h in _list(name, raw)))
"""A tuple of hands, a JSON list of lists of card tokens."""
REASON = FieldCodec(None, _reason)
"""A :class:`RoundEndReason`, written as its string."""
RULES = FieldCodec(RuleSet.to_dict, _rules)
"""A :class:`~rummy.rules.RuleSet`, written as every variant (``RuleSet.to_dict``) and read
strictly (``RuleSet.from_json``): a record at the current ``GameStarted`` version names every
variant; older versions are upcast first (``GameStarted.VARIANTS``)."""


# ---------------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game was created (R1.1, R2.1, §11).

    ``seed`` drives the shuffles of later rounds and is hidden from players; ``dealer`` is
    the first dealer (R2.1); ``names`` labels the seats (bot strategy or player name);
    ``turn_seconds`` is the turn time limit a service enforces (0: none; not a rule of the
    game, recorded so that it survives restarts).

    ``salt`` and ``commitment`` make the deal provably fair (commit-reveal, version 3):
    ``commitment`` is ``rummy.fairness.seed_commitment(seed, salt)``, the lowercase hex
    SHA-256 of the salt's ASCII bytes followed by the seed in decimal ASCII, public to every
    seat from the first event on; ``salt`` (32 lowercase hex digits) is hidden like
    ``seed`` until the game is over. ``commitment == ""`` (and ``salt is None``): no
    commitment, as in every game recorded before version 3.

    ``VARIANTS`` declares, per schema version, the rule variants its ``rules`` record
    names: adding a variant to :class:`~rummy.rules.RuleSet` bumps ``VERSION``, declares
    the new set here and registers :func:`variant_added` in :data:`UPCASTERS`
    (docs/events.md, "How to add a variant"; :func:`variant_problems` checks it).
    """

    TYPE: ClassVar[str] = "GameStarted"
    VERSION: ClassVar[int] = 3
    VARIANTS: ClassVar[Mapping[int, frozenset[str]]] = MappingProxyType({
        1: frozenset({"target_score", "knock_threshold", "hand_size", "max_draws_per_turn",
                      "undercut_bonus", "going_out_bonus", "game_bonus", "round_bonus",
                      "round_bonus_for_all", "opening_meld_per_player",
                      "opening_meld_min_points"}),
        2: frozenset({"target_score", "knock_threshold", "hand_size", "max_draws_per_turn",
                      "undercut_bonus", "going_out_bonus", "game_bonus", "round_bonus",
                      "round_bonus_for_all", "opening_meld_per_player",
                      "opening_meld_min_points", "knock_timing", "joker_release",
                      "joker_moves", "ace_high"}),
        3: frozenset({"target_score", "knock_threshold", "hand_size", "max_draws_per_turn",
                      "undercut_bonus", "going_out_bonus", "game_bonus", "round_bonus",
                      "round_bonus_for_all", "opening_meld_per_player",
                      "opening_meld_min_points", "knock_timing", "joker_release",
                      "joker_moves", "ace_high"}),
    })
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "players": INT, "rules": RULES, "dealer": INT, "seed": optional(INT), "names": STRS,
        "turn_seconds": INT, "salt": optional(STR), "commitment": STR})
    players: int
    rules: RuleSet
    dealer: int
    seed: int | None
    names: tuple[str, ...] = ()
    turn_seconds: int = 0
    salt: str | None = None
    commitment: str = ""


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round was dealt (R2.2, R2.3): ``deck`` is the full shuffled order, top first.

    Card ``i`` of the deck goes to seat ``(dealer + 1 + i) % players`` for the first
    ``hand_size * players`` cards; the rest is the stock, drawn from the front.
    In a seat's redacted copy ``deck`` is ``None`` and ``hand`` holds that seat's deal.
    """

    TYPE: ClassVar[str] = "RoundStarted"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "round": INT, "dealer": INT, "deck": optional(CARDS), "hand": optional(CARDS)})
    round: int
    dealer: int
    deck: tuple[int, ...] | None
    hand: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class CardDrawn:
    """``seat`` drew ``card`` from the stock, its ``draw``-th draw of the turn (R3.1–R3.3).

    ``card`` is ``None`` in the copy sent to other seats.
    """

    TYPE: ClassVar[str] = "CardDrawn"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "card": optional(CARD), "draw": INT})
    seat: int
    card: int | None
    draw: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed instead of melding after a draw or in a final turn (R3.2, R8.2)."""

    TYPE: ClassVar[str] = "Passed"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({"seat": INT})
    seat: int


@dataclass(frozen=True, slots=True)
class Melded:
    """``seat`` made a meld action (R5): ``cards`` left the hand, ``table`` is the new table
    (canonical form, every joker declared)."""

    TYPE: ClassVar[str] = "Melded"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "cards": CARDS, "table": TABLE})
    seat: int
    cards: tuple[int, ...]
    table: Table


@dataclass(frozen=True, slots=True)
class StockExhausted:
    """``seat`` drew the last card of the stock (R8.1); final turns follow (R8.2)."""

    TYPE: ClassVar[str] = "StockExhausted"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({"seat": INT})
    seat: int


@dataclass(frozen=True, slots=True)
class Knocked:
    """``seat`` knocked with a hand worth ``points`` (R6.1)."""

    TYPE: ClassVar[str] = "Knocked"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "points": INT})
    seat: int
    points: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """``seat``'s turn is over and it did not knock (R3.5, R6.3)."""

    TYPE: ClassVar[str] = "TurnEnded"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({"seat": INT})
    seat: int


@dataclass(frozen=True, slots=True)
class RoundScored:
    """A round ended and was scored (§7, §8.3).

    ``reason`` is ``"knock"``, ``"going_out"`` (R6.2) or ``"stock"`` (R8.3); ``knocker`` the
    knocking or going-out seat or ``None``; ``hands`` the hands shown at the end (public);
    ``points`` their values; ``scores`` the round's scores; ``winners`` the round's winners;
    ``totals`` the running totals after the round.
    """

    TYPE: ClassVar[str] = "RoundScored"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "round": INT, "reason": REASON, "knocker": optional(INT), "hands": HANDS,
        "points": INTS, "scores": INTS, "winners": INTS, "totals": INTS})
    round: int
    reason: RoundEndReason
    knocker: int | None
    hands: tuple[tuple[int, ...], ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game ended (§9): running ``totals``, ``rounds_won``, ``bonuses``, ``final``
    totals and the ``winners`` (highest final total, R9.4).

    ``left`` (version 2): the seats that resigned or left the game (R13.4), ascending; they
    take no bonus and rank below every other seat, so ``winners`` are the highest final
    totals among the others (among all seats when every seat left). Empty in every game
    recorded before version 2."""

    TYPE: ClassVar[str] = "GameEnded"
    VERSION: ClassVar[int] = 2
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "totals": INTS, "rounds_won": INTS, "bonuses": INTS, "final": INTS, "winners": INTS,
        "left": INTS})
    totals: tuple[int, ...]
    rounds_won: tuple[int, ...]
    bonuses: tuple[int, ...]
    final: tuple[int, ...]
    winners: tuple[int, ...]
    left: tuple[int, ...] = ()


class LeaveReason(StrEnum):
    """Why a seat's player gave it up (``SeatLeft.reason``): ``RESIGN`` and ``LEAVE``
    (R13.1; a resigned seat cannot be reclaimed, a left one can where the game allows it,
    R13.3), ``TIMEOUT`` (N consecutive decisions timed out, R13.2)."""

    RESIGN = "resign"
    LEAVE = "leave"
    TIMEOUT = "timeout"


def _leave_reason(name: str, raw: Any) -> LeaveReason:
    if not isinstance(raw, str) or raw not in LeaveReason.__members__.values():
        raise NotationError(f"unknown leave reason {raw!r}", token=raw)
    return LeaveReason(raw)


LEAVE_REASON = FieldCodec(None, _leave_reason)
"""A :class:`LeaveReason`, written as its string."""


@dataclass(frozen=True, slots=True)
class SeatLeft:
    """``seat``'s player gave the seat up (R13.1: ``"resign"`` or ``"leave"``, at any time,
    even out of turn) or let ``limit`` consecutive decisions time out (R13.2:
    ``"timeout"``). A server bot plays the seat from then on (:class:`SeatTakenOver`,
    unless the game ends at once, R13.5)."""

    TYPE: ClassVar[str] = "SeatLeft"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "reason": LEAVE_REASON})
    seat: int
    reason: LeaveReason


@dataclass(frozen=True, slots=True)
class SeatTakenOver:
    """A server bot of ``strategy`` (a name of ``rummy.bots.BOTS``) plays ``seat`` from now
    on (R13.1, R13.2), recorded before its first decision for the seat."""

    TYPE: ClassVar[str] = "SeatTakenOver"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "strategy": STR})
    seat: int
    strategy: str


@dataclass(frozen=True, slots=True)
class ReclaimRequested:
    """``seat``'s player asked for the seat back while it was not at the start of one of
    its turns: the bot plays on, and the seat is reclaimed (:class:`SeatReclaimed`) at the
    start of its next turn (R13.3)."""

    TYPE: ClassVar[str] = "ReclaimRequested"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({"seat": INT})
    seat: int


@dataclass(frozen=True, slots=True)
class SeatReclaimed:
    """``seat``'s player took the seat back from the bot at the start of one of its turns
    (R13.3); the player decides for it from this event on."""

    TYPE: ClassVar[str] = "SeatReclaimed"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({"seat": INT})
    seat: int


@dataclass(frozen=True, slots=True)
class TimedOut:
    """``seat``'s decision timed out and the events before this one are its default move;
    ``count`` is its number of consecutive timed-out decisions (R13.2). Recorded only in
    games created with a timeout takeover."""

    TYPE: ClassVar[str] = "TimedOut"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType({
        "seat": INT, "count": INT})
    seat: int
    count: int


Event = (GameStarted | RoundStarted | CardDrawn | Passed | Melded | StockExhausted | Knocked
         | TurnEnded | RoundScored | GameEnded | SeatLeft | SeatTakenOver | ReclaimRequested
         | SeatReclaimed | TimedOut)
"""Every event type: the one list of them. A new event type is added here (and nowhere
else in this module); renderers ``match`` over it with ``assert_never``, so mypy names
every one that does not handle it (docs/events.md, "How to add an event")."""

EVENT_TYPES: Mapping[str, type] = MappingProxyType(
    {cls.TYPE: cls for cls in get_args(Event)})
"""``TYPE -> class`` of every event type of :data:`Event`, at its current version."""

# ------------------------------------------------------------------------------ JSON codec

_Plan = tuple[tuple[str, FieldCodec], ...]


def _plan(cls: type) -> _Plan:
    """``(field name, codec)`` of each field of an event class, in order, from its
    ``ENCODING``.

    Raises:
        TypeError: a field without a declared encoding, or an encoding of no field.
    """
    encoding: Mapping[str, FieldCodec] = getattr(cls, "ENCODING", {})
    names = [f.name for f in fields(cls)]
    undeclared = [n for n in names if n not in encoding]
    unknown = sorted(set(encoding) - set(names))
    if undeclared or unknown:
        raise TypeError(f"{cls.__name__}.ENCODING must declare exactly its fields: "
                        f"undeclared {undeclared}, not fields {unknown}")
    return tuple((n, encoding[n]) for n in names)


#: the encoding plan of every event class, computed once at import (so a class whose
#: ``ENCODING`` misses a field fails at import; ``dataclasses.fields`` on every call was a
#: third of ``to_dict``'s time); another class (a later release's, a test's) is planned on
#: the fly
_PLANS: Mapping[type, _Plan] = MappingProxyType(
    {cls: _plan(cls) for cls in EVENT_TYPES.values()})


def to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready dict of an event: ``{"type": ..., "v": ..., <fields>}``, each field
    written by its declared encoding (``ENCODING``; cards in notation)."""
    out: dict[str, Any] = {"type": event.TYPE, "v": event.VERSION}
    plan = _PLANS.get(type(event))
    for name, codec in plan if plan is not None else _plan(type(event)):
        value = getattr(event, name)
        out[name] = value if value is None or codec.encode is None else codec.encode(value)
    return out


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns the stored dict of one event at schema version n into the dict at n + 1 (its
``"v"`` included); pure, and must not change its argument."""


def variant_added(version: int, variant: str, value: int | bool | str) -> Upcaster:
    """The upcaster of ``GameStarted`` ``version`` -> ``version + 1`` when that version adds
    the rule variant ``variant``: the recorded rule set gets ``variant: value``, ``value``
    being the rule every older game was played under (the new variant's default when it is
    added; written here as a literal, so that a later change of the default does not change
    old games, I4). :func:`variants_added` is the same for several variants at once.

    The upcaster raises ``NotationError`` for a record of ``version`` that already names
    ``variant`` (it cannot have been written by that version); a record whose ``rules`` is
    not an object is passed on for the strict read to name the fault.
    """
    return variants_added(version, {variant: value})


def variants_added(version: int, values: Mapping[str, int | bool | str]) -> Upcaster:
    """:func:`variant_added` for a version that adds several variants: each of ``values``
    (``{variant: the rule older games were played under}``) is filled in.

    Raises (from the upcaster): ``NotationError`` for a record of ``version`` that already
    names one of them.
    """
    added = dict(values)

    def upcast(data: dict[str, Any]) -> dict[str, Any]:
        rules = data.get("rules")
        if not isinstance(rules, dict):
            return {**data, "v": version + 1}
        clash = sorted(set(added) & set(rules))
        if clash:
            raise NotationError(f"GameStarted v{version} names the rule variant {clash[0]!r}, "
                                f"which version {version + 1} added")
        return {**data, "v": version + 1, "rules": {**rules, **added}}
    upcast.__qualname__ = f"variants_added({version}, {added!r})"
    return upcast


def _no_commitment(data: dict[str, Any]) -> dict[str, Any]:
    """The upcaster of ``GameStarted`` v2 -> v3: a game recorded before the seed commitment
    has none (``salt: None``, ``commitment: ""``); its rules are unchanged.

    Raises ``NotationError`` for a v2 record that already names ``salt`` or ``commitment``.
    """
    if "salt" in data or "commitment" in data:
        raise NotationError("GameStarted v2 names salt or commitment, which version 3 added")
    return {**data, "v": 3, "salt": None, "commitment": ""}


def _no_seat_left(data: dict[str, Any]) -> dict[str, Any]:
    """The upcaster of ``GameEnded`` v1 -> v2: no seat of a game recorded before the seat
    lifecycle (§13) left it (``left: []``).

    Raises ``NotationError`` for a v1 record that already names ``left``.
    """
    if "left" in data:
        raise NotationError("GameEnded v1 names left, which version 2 added")
    return {**data, "v": 2, "left": []}


#: the upcasters of every event type, ``(TYPE, n) -> upcaster of vn to vn+1`` (see the module
#: docstring for the policy, and :func:`variant_added` for the upcaster of a new rule
#: variant). ``GameStarted`` v2 added the option variants of docs/rules.md §11; every game
#: recorded before them was played under their defaults. v3 added the seed commitment; no
#: game recorded before it has one. ``GameEnded`` v2 added the seats that left (§13).
UPCASTERS: Mapping[tuple[str, int], Upcaster] = MappingProxyType({
    ("GameStarted", 1): variants_added(1, {"knock_timing": "end", "joker_release": "table",
                                           "joker_moves": "free", "ace_high": True}),
    ("GameStarted", 2): _no_commitment,
    ("GameEnded", 1): _no_seat_left,
})


def variant_problems(started: type = GameStarted, rules: type = RuleSet,
                     upcasters: Mapping[tuple[str, int], Upcaster] = UPCASTERS) -> list[str]:
    """Why the rule variants ``started`` declares per version (``VARIANTS``) do not match
    the variants of ``rules`` and the upcasters (empty: they match). A test runs it, so that
    a variant added to ``RuleSet`` without a ``GameStarted`` version and upcaster fails at
    test time, not on the first stored game read (docs/events.md, "How to add a variant").

    Checks: ``VARIANTS`` has every version ``1..VERSION``; the current version's set is the
    fields of ``rules``; each version's set holds the previous one; and the upcaster of each
    older version turns a record naming its set into one naming the next set.
    """
    problems: list[str] = []
    current: int = started.VERSION  # type: ignore[attr-defined]
    declared: Mapping[int, frozenset[str]] = started.VARIANTS  # type: ignore[attr-defined]
    fields_now = frozenset(f.name for f in fields(rules))
    if set(declared) != set(range(1, current + 1)):
        problems.append(f"GameStarted.VARIANTS declares versions {sorted(declared)}, not "
                        f"1..{current}")
        return problems
    if declared[current] != fields_now:
        problems.append(
            f"RuleSet has variants {sorted(fields_now - declared[current])} not declared by "
            f"GameStarted v{current}, and GameStarted v{current} declares "
            f"{sorted(declared[current] - fields_now)} that RuleSet lacks: bump "
            f"GameStarted.VERSION, declare the new set in GameStarted.VARIANTS and register "
            f"variant_added in UPCASTERS")
    defaults = {f.name: f.default for f in fields(rules)}
    for n in range(1, current):
        if not declared[n] <= declared[n + 1]:
            problems.append(f"GameStarted v{n + 1} drops variants "
                            f"{sorted(declared[n] - declared[n + 1])}")
        up = upcasters.get((started.TYPE, n))  # type: ignore[attr-defined]
        if up is None:
            problems.append(f"no upcaster of GameStarted v{n} to v{n + 1}")
            continue
        record = {"type": started.TYPE, "v": n,  # type: ignore[attr-defined]
                  "rules": {k: defaults.get(k) for k in sorted(declared[n])}}
        try:
            named = set(up(record).get("rules", {}))
        except NotationError as e:
            problems.append(f"the upcaster of GameStarted v{n} fails: {e}")
            continue
        if named != declared[n + 1]:
            problems.append(f"the upcaster of GameStarted v{n} gives variants {sorted(named)}, "
                            f"not the {sorted(declared[n + 1])} v{n + 1} declares")
    return problems


@functools.lru_cache(maxsize=256)
def _reading(cls: type) -> tuple[_Plan, frozenset[str], frozenset[str]]:
    """What :func:`decode` needs of an event class, computed once per class: its plan, the
    keys a record may have (its fields, ``type``, ``v``) and the fields with a default."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _plan(cls)
    return (plan, frozenset(name for name, _ in plan) | {"type", "v"},
            frozenset(f.name for f in fields(cls) if f.default is not MISSING))


def from_dict(data: Any) -> Event:
    """Rebuild an event from :func:`to_dict` output, upcasting older schema versions
    through :data:`UPCASTERS`.

    Raises:
        NotationError: not an object, unknown type, a version newer than this release or
            with no upcaster chain, a missing or extra field, or a malformed value; the
            message names the field.
    """
    return decode(data, EVENT_TYPES, UPCASTERS)


def decode(data: Any, types: Mapping[str, type], upcasters: Mapping[tuple[str, int], Upcaster]
           ) -> Event:
    """:func:`from_dict` with another set of event classes and upcasters (a later release,
    or a test of the upcasting chain). ``types`` maps each ``TYPE`` to its current class;
    each field is read by the class's declared encoding (``ENCODING``).

    Raises:
        NotationError: as :func:`from_dict`.
    """
    if not isinstance(data, dict):
        raise NotationError(f"an event must be a JSON object, got {type(data).__name__}")
    etype = data.get("type")
    cls = types.get(etype) if isinstance(etype, str) else None
    if cls is None or not isinstance(etype, str):
        raise NotationError(f"unknown event type {etype!r}", token=etype)
    current: int = cls.VERSION  # type: ignore[attr-defined]
    version = data.get("v", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise NotationError(f"{etype} schema version {version!r} is not a positive integer")
    if version > current:
        raise NotationError(f"{etype} schema version {version} is newer than this release "
                            f"reads (version {current}); upgrade to read this game")
    while version < current:
        up = upcasters.get((etype, version))
        if up is None:
            raise NotationError(f"{etype} schema version {version} cannot be read: no "
                                f"upcaster to version {version + 1}")
        data = up(data)
        if data.get("v") != version + 1:
            raise NotationError(f"the upcaster of {etype} v{version} did not produce "
                                f"v{version + 1}")
        version += 1
    plan, names, defaults = _reading(cls)
    extra = set(data) - names
    if extra:
        raise NotationError(f"{etype} has unknown field(s) {sorted(extra)}")
    kwargs: dict[str, Any] = {}
    for name, codec in plan:
        if name not in data:
            if name in defaults:  # a field with a default may be left out
                continue
            raise NotationError(f"{etype} is missing field {name!r}")
        raw = data[name]
        try:
            if raw is None:
                if not codec.nullable:
                    raise NotationError(f"field {name!r} may not be null", token=raw)
                kwargs[name] = None
            else:
                kwargs[name] = codec.decode(name, raw)
        except NotationError as e:
            raise NotationError(f"{etype}.{name}: {e.message}", token=e.token) from None
        except ValueError as e:  # RuleSet errors
            raise NotationError(f"{etype}.{name}: {e}") from None
    return cls(**kwargs)  # type: ignore[no-any-return]


def dumps(event: Event) -> str:
    """One compact JSON line for an event."""
    return json.dumps(to_dict(event), separators=(",", ":"))


def loads(line: str) -> Event:
    """Parse one JSON line written by :func:`dumps`.

    Raises:
        NotationError: invalid JSON or an invalid event.
    """
    try:
        data = json.loads(line)
    except json.JSONDecodeError as e:
        raise NotationError(f"invalid JSON: {e.msg} (column {e.colno})") from None
    return from_dict(data)
