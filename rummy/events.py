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
game stays readable; events are always written at the current version.

Hidden fields (I3): ``GameStarted.seed``, ``RoundStarted.deck`` and a ``CardDrawn.card`` of
another seat are ``None`` in the redacted copy a seat receives (:func:`rummy.views.redact`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

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


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game was created (R1.1, R2.1, §11).

    ``seed`` drives the shuffles of later rounds and is hidden from players; ``dealer`` is
    the first dealer (R2.1); ``names`` labels the seats (bot strategy or player name);
    ``turn_seconds`` is the turn time limit a service enforces (0: none; not a rule of the
    game, recorded so that it survives restarts).
    """

    TYPE: ClassVar[str] = "GameStarted"
    VERSION: ClassVar[int] = 1
    players: int
    rules: RuleSet
    dealer: int
    seed: int | None
    names: tuple[str, ...] = ()
    turn_seconds: int = 0


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round was dealt (R2.2, R2.3): ``deck`` is the full shuffled order, top first.

    Card ``i`` of the deck goes to seat ``(dealer + 1 + i) % players`` for the first
    ``hand_size * players`` cards; the rest is the stock, drawn from the front.
    In a seat's redacted copy ``deck`` is ``None`` and ``hand`` holds that seat's deal.
    """

    TYPE: ClassVar[str] = "RoundStarted"
    VERSION: ClassVar[int] = 1
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
    seat: int
    card: int | None
    draw: int


@dataclass(frozen=True, slots=True)
class Passed:
    """``seat`` passed instead of melding after a draw or in a final turn (R3.2, R8.2)."""

    TYPE: ClassVar[str] = "Passed"
    VERSION: ClassVar[int] = 1
    seat: int


@dataclass(frozen=True, slots=True)
class Melded:
    """``seat`` made a meld action (R5): ``cards`` left the hand, ``table`` is the new table
    (canonical form, every joker declared)."""

    TYPE: ClassVar[str] = "Melded"
    VERSION: ClassVar[int] = 1
    seat: int
    cards: tuple[int, ...]
    table: Table


@dataclass(frozen=True, slots=True)
class StockExhausted:
    """``seat`` drew the last card of the stock (R8.1); final turns follow (R8.2)."""

    TYPE: ClassVar[str] = "StockExhausted"
    VERSION: ClassVar[int] = 1
    seat: int


@dataclass(frozen=True, slots=True)
class Knocked:
    """``seat`` knocked with a hand worth ``points`` (R6.1)."""

    TYPE: ClassVar[str] = "Knocked"
    VERSION: ClassVar[int] = 1
    seat: int
    points: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """``seat``'s turn is over and it did not knock (R3.5, R6.3)."""

    TYPE: ClassVar[str] = "TurnEnded"
    VERSION: ClassVar[int] = 1
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
    totals and the ``winners`` (highest final total, R9.4)."""

    TYPE: ClassVar[str] = "GameEnded"
    VERSION: ClassVar[int] = 1
    totals: tuple[int, ...]
    rounds_won: tuple[int, ...]
    bonuses: tuple[int, ...]
    final: tuple[int, ...]
    winners: tuple[int, ...]


Event = (GameStarted | RoundStarted | CardDrawn | Passed | Melded | StockExhausted | Knocked
         | TurnEnded | RoundScored | GameEnded)

EVENT_TYPES: dict[str, type] = {cls.TYPE: cls for cls in (
    GameStarted, RoundStarted, CardDrawn, Passed, Melded, StockExhausted, Knocked, TurnEnded,
    RoundScored, GameEnded)}

# ------------------------------------------------------------------------------ JSON codec

_CARD_FIELDS = {"card"}
_CARDS_FIELDS = {"cards", "deck", "hand"}
_TABLE_FIELDS = {"table"}
_HANDS_FIELDS = {"hands"}
_NULLABLE = {"card", "deck", "hand", "seed", "knocker"}  #: fields that may be None (I3)
_INT_TUPLES = {"points", "scores", "winners", "totals", "rounds_won", "bonuses", "final"}


_CARD, _CARDS, _TABLE, _HANDS, _RULES, _PLAIN = range(6)


def _plan(cls: type) -> tuple[tuple[str, int], ...]:
    """``(field name, how to encode it)`` of each field of an event class, in order."""
    return tuple((f.name, _CARD if f.name in _CARD_FIELDS else _CARDS if f.name in _CARDS_FIELDS
                  else _TABLE if f.name in _TABLE_FIELDS else _HANDS if f.name in _HANDS_FIELDS
                  else _RULES if f.name == "rules" else _PLAIN) for f in fields(cls))


#: the encoding plan of every event class, computed once (``dataclasses.fields`` on every
#: call was a third of ``to_dict``'s time, issue 15); another class is planned on the fly
_PLANS: Mapping[type, tuple[tuple[str, int], ...]] = MappingProxyType(
    {cls: _plan(cls) for cls in EVENT_TYPES.values()})


def to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready dict of an event: ``{"type": ..., "v": ..., <fields>}``; cards in notation."""
    out: dict[str, Any] = {"type": event.TYPE, "v": event.VERSION}
    plan = _PLANS.get(type(event))
    for name, how in plan if plan is not None else _plan(type(event)):
        value = getattr(event, name)
        if value is None:
            out[name] = None
        elif how == _PLAIN:
            out[name] = list(value) if isinstance(value, tuple) else value
        elif how == _CARD:
            out[name] = format_card(value)
        elif how == _CARDS:
            out[name] = [format_card(c) for c in value]
        elif how == _TABLE:
            out[name] = format_table(value)
        elif how == _HANDS:
            out[name] = [[format_card(c) for c in h] for h in value]
        else:
            out[name] = value.to_dict()
    return out


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotationError(f"field {name!r} must be an integer, got {value!r}", token=value)
    return value


def _list(name: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise NotationError(f"field {name!r} must be a list, got {value!r}", token=value)
    return value


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns the stored dict of one event at schema version n into the dict at n + 1 (its
``"v"`` included); pure, and must not change its argument."""

#: the upcasters of every event type, ``(TYPE, n) -> upcaster of vn to vn+1``; none yet:
#: every event is at version 1 (see the module docstring for the policy)
UPCASTERS: Mapping[tuple[str, int], Upcaster] = MappingProxyType({})


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
    or a test of the upcasting chain). ``types`` maps each ``TYPE`` to its current class.

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
    kwargs: dict[str, Any] = {}
    names = {f.name for f in fields(cls)}
    extra = set(data) - names - {"type", "v"}
    if extra:
        raise NotationError(f"{etype} has unknown field(s) {sorted(extra)}")
    for f in fields(cls):
        if f.name not in data:
            if f.default is not MISSING:  # a field with a default may be left out
                continue
            raise NotationError(f"{etype} is missing field {f.name!r}")
        raw = data[f.name]
        try:
            if raw is None:
                if f.name not in _NULLABLE:
                    raise NotationError(f"field {f.name!r} may not be null", token=raw)
                value: Any = None
            elif f.name in _CARD_FIELDS:
                value = parse_card(raw)
            elif f.name in _CARDS_FIELDS:
                value = tuple(parse_card(t) for t in _list(f.name, raw))
            elif f.name in _TABLE_FIELDS:
                value = tuple(tuple(parse_table_card(t) for t in _list("meld", m))
                              for m in _list(f.name, raw))
            elif f.name in _HANDS_FIELDS:
                value = tuple(tuple(parse_card(t) for t in _list("hand", h))
                              for h in _list(f.name, raw))
            elif f.name == "rules":
                if not isinstance(raw, dict):
                    raise NotationError("field 'rules' must be an object", token=raw)
                value = RuleSet.from_json(raw)
            elif f.name in _INT_TUPLES and cls is not Knocked:
                value = tuple(_int(f.name, x) for x in _list(f.name, raw))
            elif f.name == "names":
                value = tuple(_list(f.name, raw))
                if not all(isinstance(x, str) for x in value):
                    raise NotationError("field 'names' must be a list of strings", token=raw)
            elif f.name == "reason":
                if not isinstance(raw, str) or raw not in RoundEndReason.__members__.values():
                    raise NotationError(f"unknown round end reason {raw!r}", token=raw)
                value = RoundEndReason(raw)
            else:
                value = _int(f.name, raw)
        except NotationError as e:
            raise NotationError(f"{etype}.{f.name}: {e.message}", token=e.token) from None
        except ValueError as e:  # RuleSet errors
            raise NotationError(f"{etype}.{f.name}: {e}") from None
        kwargs[f.name] = value
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
