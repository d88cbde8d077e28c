"""Snapshots: a :class:`~rummy.state.GameState` as a JSON-ready dict and back (pure, no I/O).

A snapshot lets a reader rebuild the state at a version from the newest snapshot at or
before it plus the few events after it, instead of replaying the whole stream (I4 still
holds: ``state_from_dict(state_to_dict(s)) == s``, field for field). The encoding reuses the
codecs of the events: cards in the R1.4 notation (:func:`rummy.cards.format_card`), the table
as :func:`rummy.melds.format_table` writes it, the rules as :meth:`RuleSet.to_dict`, and
``last_round`` / ``result`` as the :func:`rummy.events.to_dict` of their event.

Shape of schema version 1 (only dict, list, str, int, bool and None)::

    {"snapshot": 1,
     "rules": {<variant>: int | bool, ...},        # RuleSet.to_dict()
     "players": int, "names": [str, ...], "seed": int | None,
     "version": int, "round": int, "dealer": int, "turn": int,
     "phase": "draw" | "meld_or_pass" | ...,       # a Phase value
     "draws": int,
     "hands": [[card, ...], ...],                  # one list per seat, e.g. ["7S", "*"]
     "table": [[table card, ...], ...],            # e.g. [["5S", "6S", "*7S"]]
     "deck": [card, ...], "stock_pos": int,
     "final_turns_left": int | None, "knocker": int | None,
     "end_reason": "knock" | "going_out" | "stock" | None,
     "totals": [int, ...], "rounds_won": [int, ...], "opened": [bool, ...],
     "last_round": {"type": "RoundScored", ...} | None,   # events.to_dict
     "result": {"type": "GameEnded", ...} | None}

A later schema bumps ``"snapshot"``; a reader refuses versions it does not know (a store's
snapshots are a cache of the event stream: a caller that cannot read one replays events, as
``rummy_grpc.repository`` does for any snapshot it cannot read). ``"rules"`` is read as
strictly as ``GameStarted.rules`` at its current version (every variant of this release,
no other): a snapshot written before a variant was added, or by a release that knows more
variants, is refused, so it is never read under other rules; the replay that replaces it
writes a snapshot of this release at the same version.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rummy.cards import format_card, parse_card
from rummy.errors import NotationError, RummyError
from rummy.events import GameEnded, RoundEndReason, RoundScored, from_dict, to_dict
from rummy.lifecycle import Control
from rummy.melds import format_table, parse_table
from rummy.rules import RuleSet
from rummy.state import GameState, Phase

__all__ = ["SNAPSHOT_VERSION", "state_from_dict", "state_to_dict"]

SNAPSHOT_VERSION = 1
"""The schema version written in every snapshot's ``"snapshot"`` field."""

_FIELDS = ("snapshot", *GameState._fields)
_OPTIONAL = frozenset({"control"})
"""Fields a snapshot may leave out: ``control`` (§13) only when no lifecycle event has
happened (every snapshot before it has none)."""
_T = TypeVar("_T")


def state_to_dict(state: GameState) -> dict[str, Any]:
    """The JSON-ready snapshot of ``state`` (shape in the module docstring).

    The result holds hidden information (every hand, the deck, the seed): it is for the
    event store, never for a player.
    """
    return {
        "snapshot": SNAPSHOT_VERSION,
        "rules": state.rules.to_dict(),
        "players": state.players,
        "names": list(state.names),
        "seed": state.seed,
        "version": state.version,
        "round": state.round,
        "dealer": state.dealer,
        "turn": state.turn,
        "phase": state.phase.value,
        "draws": state.draws,
        "hands": [[format_card(c) for c in hand] for hand in state.hands],
        "table": format_table(state.table),
        "deck": [format_card(c) for c in state.deck],
        "stock_pos": state.stock_pos,
        "final_turns_left": state.final_turns_left,
        "knocker": state.knocker,
        "end_reason": None if state.end_reason is None else state.end_reason.value,
        "totals": list(state.totals),
        "rounds_won": list(state.rounds_won),
        "opened": list(state.opened),
        "last_round": None if state.last_round is None else to_dict(state.last_round),
        "result": None if state.result is None else to_dict(state.result),
    } | ({} if state.control is None else {"control": state.control.to_dict()})


def state_from_dict(data: Any) -> GameState:
    """Rebuild the state of a :func:`state_to_dict` snapshot (also after a JSON round trip).

    Checks the shape (every field present, no other, each of its type; one hand, total,
    round count and opened flag per seat) but not the rules of the game: a snapshot is
    trusted as the events it was folded from are.

    Raises:
        NotationError: not an object, a missing ``"snapshot"`` schema version or one this
            release does not read, a missing or unknown field, or a malformed value; the
            message names the field.
    """
    if not isinstance(data, dict):
        raise NotationError(f"a snapshot must be a JSON object, got {type(data).__name__}")
    schema = data.get("snapshot")
    if isinstance(schema, bool) or not isinstance(schema, int):
        raise NotationError(f"snapshot: field 'snapshot' (the schema version) must be an "
                            f"integer, got {schema!r}", token=schema)
    if schema != SNAPSHOT_VERSION:
        raise NotationError(f"snapshot schema version {schema} is not readable by this release "
                            f"(it reads version {SNAPSHOT_VERSION})", token=schema)
    missing = [f for f in _FIELDS if f not in data and f not in _OPTIONAL]
    if missing:
        raise NotationError(f"snapshot is missing field(s) {missing}")
    extra = sorted(str(k) for k in data if k not in _FIELDS)
    if extra:
        raise NotationError(f"snapshot has unknown field(s) {extra}")

    players = _field(data, "players", _int)
    state = GameState(
        rules=_field(data, "rules", _rules),
        players=players,
        names=tuple(_field(data, "names", _list_of(_str))),
        seed=_field(data, "seed", _optional(_int)),
        version=_field(data, "version", _int),
        round=_field(data, "round", _int),
        dealer=_field(data, "dealer", _int),
        turn=_field(data, "turn", _int),
        phase=_field(data, "phase", _phase),
        draws=_field(data, "draws", _int),
        hands=tuple(tuple(h) for h in _field(data, "hands", _list_of(_cards))),
        table=_field(data, "table", _table),
        deck=_field(data, "deck", _cards),
        stock_pos=_field(data, "stock_pos", _int),
        final_turns_left=_field(data, "final_turns_left", _optional(_int)),
        knocker=_field(data, "knocker", _optional(_int)),
        end_reason=_field(data, "end_reason", _optional(_reason)),
        totals=tuple(_field(data, "totals", _list_of(_int))),
        rounds_won=tuple(_field(data, "rounds_won", _list_of(_int))),
        opened=tuple(_field(data, "opened", _list_of(_bool))),
        last_round=_field(data, "last_round", _optional(_event_of(RoundScored))),
        result=_field(data, "result", _optional(_event_of(GameEnded))),
        control=_field(data, "control", _optional(_control)) if "control" in data else None,
    )
    for name in ("hands", "totals", "rounds_won", "opened"):
        if len(getattr(state, name)) != players:
            raise NotationError(f"snapshot field {name!r} must have one entry per seat "
                                f"({players}), got {len(getattr(state, name))}")
    return state


# ---------------------------------------------------------------- field decoders


def _field(data: dict[str, Any], name: str, decode: Callable[[Any], _T]) -> _T:
    """``decode(data[name])``, a decoding error re-raised naming the snapshot field."""
    try:
        return decode(data[name])
    except NotationError as e:
        raise NotationError(f"snapshot field {name!r}: {e.message}", token=e.token) from None


def _control(value: Any) -> Control:
    try:
        return Control.from_dict(value)
    except (KeyError, TypeError, ValueError) as e:
        raise NotationError(f"malformed control: {e}", token=value) from None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise NotationError(f"expected an integer, got {value!r}", token=value)
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise NotationError(f"expected true or false, got {value!r}", token=value)
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise NotationError(f"expected a string, got {value!r}", token=value)
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise NotationError(f"expected a list, got {value!r}", token=value)
    return value


def _list_of(item: Callable[[Any], _T]) -> Callable[[Any], list[_T]]:
    return lambda value: [item(x) for x in _list(value)]


def _optional(decode: Callable[[Any], _T]) -> Callable[[Any], _T | None]:
    return lambda value: None if value is None else decode(value)


def _cards(value: Any) -> tuple[int, ...]:
    """Hand cards in notation, order kept (``parse_card`` of each token)."""
    return tuple(parse_card(t) for t in _list(value))


def _table(value: Any) -> tuple[tuple[int, ...], ...]:
    """A table as ``format_table`` writes it (``parse_table`` of a list of melds)."""
    return parse_table(_list(value))


def _rules(value: Any) -> RuleSet:
    if not isinstance(value, dict):
        raise NotationError(f"expected an object of rule variants, got {value!r}", token=value)
    try:
        return RuleSet.from_json(value)
    except RummyError as e:
        raise NotationError(str(e), token=value) from None


def _phase(value: Any) -> Phase:
    text = _str(value)
    try:
        return Phase(text)
    except ValueError:
        raise NotationError(f"unknown phase {value!r}; known: {[p.value for p in Phase]}",
                            token=value) from None


def _reason(value: Any) -> RoundEndReason:
    text = _str(value)
    try:
        return RoundEndReason(text)
    except ValueError:
        raise NotationError(f"unknown round end reason {value!r}; known: "
                            f"{[r.value for r in RoundEndReason]}", token=value) from None


def _event_of(cls: type[_T]) -> Callable[[Any], _T]:
    """A decoder of the ``events.to_dict`` of one event class."""
    def decode(value: Any) -> _T:
        event = from_dict(value)
        if not isinstance(event, cls):
            raise NotationError(f"expected a {cls.__name__} event, got {type(event).__name__}",
                                token=value)
        return event
    return decode
