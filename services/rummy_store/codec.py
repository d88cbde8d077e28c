"""The compact text of an event record in a Redis stream entry.

A record (``rummy.events.to_dict``: ``{"type": "Melded", "v": 1, "seat": 1, "cards": [...],
"table": [[...], ...]}``) is stored as a JSON array, its keys left out and its lists of card
tokens written as strings::

    {"type":"Melded","v":1,"seat":1,"cards":["8D","9D"],"table":[["8D","9D","TD"]]}   (81 B)
    ["Melded",1,1,"~8D 9D","~~8D 9D TD"]                                             (36 B)

- **Keys by position.** :data:`LAYOUTS` names, for each ``(type, v)``, the keys after
  ``"type"`` and ``"v"`` in their order. A record whose keys are exactly those, in that
  order, is stored as ``[type, v, value...]``; any other record (another type, another
  version, a key added or missing) is stored as its JSON object, as before. An entry of
  :data:`LAYOUTS` is never changed once released: a new schema version gets a new entry
  (docs/events.md), so every stored array stays readable.
- **Token lists as strings.** A non-empty list of non-empty strings without a space,
  comma, newline, ``~`` or ``'`` becomes ``"~" + " ".join(list)``; a non-empty list of
  such lists (each may be empty) becomes ``"~~" + ",".join(" ".join(inner))``. A string
  value that itself starts with ``~`` is written as ``"~'" + value``. Only values at the top
  of the array are
  rewritten; everything else stays JSON.

Both directions are pure functions; :func:`unpack` of :func:`pack` is the record itself
(checked for every event type by ``tests/contract/test_codec.py`` and by hypothesis over
arbitrary JSON records). Text that starts with ``{`` (every entry written before this
encoding, and records without a layout) is read as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import fields
from types import MappingProxyType
from typing import Any

from rummy.events import EVENT_TYPES
from rummy_store.base import dumps, serialise_events

__all__ = ["LAYOUTS", "pack", "pack_events", "unpack"]

_RELEASED: Mapping[tuple[str, int], tuple[str, ...]] = {
    ("GameStarted", 1): ("players", "rules", "dealer", "seed", "names", "turn_seconds"),
    ("GameStarted", 2): ("players", "rules", "dealer", "seed", "names", "turn_seconds"),
    ("GameStarted", 3): ("players", "rules", "dealer", "seed", "names", "turn_seconds",
                         "salt", "commitment"),
    ("RoundStarted", 1): ("round", "dealer", "deck", "hand"),
    ("CardDrawn", 1): ("seat", "card", "draw"),
    ("Passed", 1): ("seat",),
    ("Melded", 1): ("seat", "cards", "table"),
    ("StockExhausted", 1): ("seat",),
    ("Knocked", 1): ("seat", "points"),
    ("TurnEnded", 1): ("seat",),
    ("RoundScored", 1): ("round", "reason", "knocker", "hands", "points", "scores",
                         "winners", "totals"),
    ("GameEnded", 1): ("totals", "rounds_won", "bonuses", "final", "winners"),
    ("GameEnded", 2): ("totals", "rounds_won", "bonuses", "final", "winners", "left"),
    ("SeatLeft", 1): ("seat", "reason"),
    ("SeatTakenOver", 1): ("seat", "strategy"),
    ("ReclaimRequested", 1): ("seat",),
    ("SeatReclaimed", 1): ("seat",),
    ("TimedOut", 1): ("seat", "count"),
}


def _current() -> dict[tuple[str, int], tuple[str, ...]]:
    """The layout of every event type of the core at its current schema version: its
    fields in ``to_dict``'s order (the dataclass's)."""
    return {(name, cls.VERSION): tuple(f.name for f in fields(cls))  # type: ignore[attr-defined]
            for name, cls in EVENT_TYPES.items()}


LAYOUTS: Mapping[tuple[str, int], tuple[str, ...]] = MappingProxyType({**_current(), **_RELEASED})
"""``(type, v) -> keys`` of the record after ``type`` and ``v``, in ``to_dict``'s order:
every released layout (frozen: an entry is never changed, and wins over the derived one) and
the current version of each event type of the core, derived from its fields, so that a new
event type or schema version needs no edit here (``tests/contract/test_codec.py`` pins the
released ones)."""

_KEYS = {layout: ("type", "v", *keys) for layout, keys in LAYOUTS.items()}
_BAD = frozenset(" ,\n~'")


def _token(value: Any) -> bool:
    return type(value) is str and value != "" and _BAD.isdisjoint(value)


def _value(value: Any) -> Any:
    """One top-level value in its compact form."""
    if type(value) is list and value:
        if all(_token(v) for v in value):
            return "~" + " ".join(value)
        if all(type(inner) is list and all(_token(v) for v in inner) for inner in value):
            return "~~" + ",".join(" ".join(inner) for inner in value)
    elif type(value) is str and value.startswith("~"):
        return "~'" + value
    return value


def _restore(value: Any) -> Any:
    """The inverse of :func:`_value`."""
    if type(value) is not str or not value.startswith("~"):
        return value
    if value.startswith("~'"):
        return value[2:]
    if value.startswith("~~"):
        return [inner.split(" ") if inner else [] for inner in value[2:].split(",")]
    return value[1:].split(" ")


def pack(record: dict[str, Any]) -> str:
    """The stored text of one event record: the compact array when its ``(type, v)`` has a
    layout and its keys match it exactly, else its compact JSON object.

    Raises:
        TypeError: the record is not JSON-serialisable (NaN and infinity included) or not
            valid UTF-8 text (a lone surrogate).
    """
    kind, version = record.get("type"), record.get("v")
    keys = _KEYS.get((kind, version)) if type(kind) is str and type(version) is int else None
    try:
        if keys is not None and tuple(record) == keys:
            return dumps([record["type"], record["v"],
                          *(_value(record[k]) for k in keys[2:])], "the record")
        return dumps(record, "the record")
    except ValueError as exc:  # NaN / infinity
        raise TypeError(f"the record is not JSON-serialisable: {exc}") from exc


def pack_events(events: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(type, stored text)`` of each event record, validated as
    :func:`rummy_store.base.serialise_events` validates (the same errors, naming the
    event's index)."""
    return serialise_events(events, pack)


def unpack(text: str) -> dict[str, Any]:
    """The record of a stored text (either form).

    Raises:
        ValueError: malformed text, or an array whose ``(type, v)`` has no layout or whose
            length does not match it.
    """
    data = json.loads(text)
    if type(data) is dict:
        return data
    if type(data) is not list or len(data) < 2:
        raise ValueError(f"not a stored event record: {text[:80]!r}")
    keys = _KEYS.get((data[0], data[1]))
    if keys is None or len(keys) != len(data):
        raise ValueError(f"stored event array of unknown layout {data[:2]!r} "
                         f"({len(data)} values)")
    return {"type": data[0], "v": data[1],
            **{k: _restore(v) for k, v in zip(keys[2:], data[2:], strict=True)}}
