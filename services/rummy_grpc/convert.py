"""Translation between the core's values and ``rummy_api.v1`` messages (no logic, no rules).

Events go through the core's JSON codec (``rummy.events.to_dict``: cards in notation), whose
field names are the proto field names; tables and hands become ``repeated Cards``.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import json_format
from rummy_api.v1 import game_service_pb2 as pb

from rummy.cards import format_card
from rummy.events import Event, RoundEndReason, RoundScored, to_dict
from rummy.melds import Table, format_table
from rummy.rules import RuleSet
from rummy.state import Phase
from rummy.views import PlayerView

_PAYLOAD_FIELD = {
    "GameStarted": "game_started", "RoundStarted": "round_started", "CardDrawn": "card_drawn",
    "Passed": "passed", "Melded": "melded", "StockExhausted": "stock_exhausted",
    "Knocked": "knocked", "TurnEnded": "turn_ended", "RoundScored": "round_scored",
    "GameEnded": "game_ended", "SeatLeft": "seat_left", "SeatTakenOver": "seat_taken_over",
    "ReclaimRequested": "reclaim_requested", "SeatReclaimed": "seat_reclaimed",
    "TimedOut": "timed_out",
}
#: every core phase (rummy.state.Phase) and its proto value, one to one
_PHASES: dict[str, Any] = {Phase.DRAW: pb.PHASE_DRAW, Phase.MELD_OR_PASS: pb.PHASE_MELD_OR_PASS,
           Phase.KNOCK_OR_END: pb.PHASE_KNOCK_OR_END, Phase.GAME_OVER: pb.PHASE_GAME_OVER,
           Phase.DEALING: pb.PHASE_DEALING, Phase.TURN_OVER: pb.PHASE_TURN_OVER,
           Phase.ROUND_OVER: pb.PHASE_ROUND_OVER, Phase.ROUND_SCORED: pb.PHASE_ROUND_SCORED}
assert set(_PHASES) == set(Phase)
_ACTIONS = {"draw": pb.ACTION_DRAW, "meld": pb.ACTION_MELD, "pass": pb.ACTION_PASS,
            "knock": pb.ACTION_KNOCK, "end_turn": pb.ACTION_END_TURN}
ACTION_NAMES = {v: k for k, v in _ACTIONS.items()}

#: every core round-end reason and its proto value, one to one
REASON_CODES: dict[str, Any] = {
    RoundEndReason.KNOCK: pb.ROUND_END_REASON_KNOCK,
    RoundEndReason.GOING_OUT: pb.ROUND_END_REASON_GOING_OUT,
    RoundEndReason.STOCK: pb.ROUND_END_REASON_STOCK}
assert set(REASON_CODES) == set(RoundEndReason)
"""Proto ``Action`` value -> the core's action kind (``"draw"``, ...)."""


def _payload_kwargs(data: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments of a payload message from a ``to_dict`` event dict."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("type", "v") or value is None:
            continue
        if key in ("table", "hands"):
            value = [pb.Cards(cards=m) for m in value]
        elif key == "rules":
            value = pb.RuleSet(**value)
        elif key == "reason" and data.get("type") == "RoundScored":
            out["reason_code"] = REASON_CODES[RoundEndReason(value)]
        out[key] = value
    return out


_PAYLOAD_CLASS = {name: getattr(pb, name) for name in _PAYLOAD_FIELD}


def event_dict_to_proto(data: dict[str, Any], version: int, ts: float) -> pb.Event:
    """A proto ``Event`` from a stored/``to_dict`` event dict (cards in notation).

    Raises:
        KeyError: unknown event type.
    """
    etype = data["type"]
    payload = _PAYLOAD_CLASS[etype](**_payload_kwargs(data))
    return pb.Event(version=version, type=etype, ts=ts, **{_PAYLOAD_FIELD[etype]: payload})


def event_to_proto(event: Event, version: int, ts: float) -> pb.Event:
    """A proto ``Event`` from a core event (already redacted by the caller if needed)."""
    return event_dict_to_proto(to_dict(event), version, ts)


def table_to_proto(table: Table) -> list[pb.Cards]:
    """``repeated Cards`` of a table, each meld in notation."""
    return [pb.Cards(cards=m) for m in format_table(table)]


@functools.lru_cache(maxsize=4096)
def _table_protos(table: Table) -> tuple[pb.Cards, ...]:
    """:func:`table_to_proto`, cached: a table stays the same across most versions of a
    game, and every view of it repeats it (do not mutate the result; a message field that
    takes it copies it)."""
    return tuple(table_to_proto(table))


@functools.lru_cache(maxsize=1024)
def _round_scored_proto(event: RoundScored) -> pb.RoundScored:
    """The proto of a view's ``last_round``, cached: the same event is in every view until
    the next round is scored (do not mutate the result, copy it)."""
    return pb.RoundScored(**_payload_kwargs(to_dict(event)))


def table_from_proto(melds: Any) -> list[list[str]]:
    """Card tokens of a ``repeated Cards`` table (parse with ``rummy.melds.parse_table``)."""
    return [list(m.cards) for m in melds]


@functools.lru_cache(maxsize=256)
def rules_to_proto(rules: RuleSet) -> pb.RuleSet:
    """The proto ``RuleSet`` of a core rule set (cached: rule sets are frozen values; do not
    mutate the result, copy it)."""
    return pb.RuleSet(**rules.to_dict())


def view_to_proto(v: PlayerView, *, turn_deadline: float = 0.0) -> pb.PlayerView:
    """A proto ``PlayerView`` of a core view; ``turn_deadline`` in seconds since the epoch."""
    msg = pb.PlayerView(
        players=v.players, names=v.names, version=v.version, round=v.round, dealer=v.dealer,
        turn=v.turn, phase=_PHASES.get(v.phase, pb.PHASE_UNSPECIFIED), draws=v.draws,
        hand=[format_card(c) for c in v.hand], hand_sizes=v.hand_sizes,
        table=_table_protos(v.table), stock_size=v.stock_size, totals=v.totals,
        rounds_won=v.rounds_won, opened=v.opened, actions=[_ACTIONS[a] for a in v.actions],
        hand_points=v.hand_points, turn_deadline=turn_deadline,
        controllers=v.controllers, away=v.away)
    if v.seat is not None:
        msg.seat = v.seat
    if v.final_turns_left is not None:
        msg.final_turns_left = v.final_turns_left
    msg.rules.CopyFrom(rules_to_proto(v.rules))
    if v.last_round is not None:
        msg.last_round.CopyFrom(_round_scored_proto(v.last_round))
    if v.result is not None:
        msg.result.CopyFrom(pb.GameEnded(**_payload_kwargs(to_dict(v.result))))
    return msg


_PHASE_NAMES = {v: k for k, v in _PHASES.items()}


def view_from_proto(msg: pb.PlayerView) -> PlayerView:
    """A core ``PlayerView`` rebuilt from its proto (for clients that run ``rummy.bots`` on
    what the server sends). ``last_round`` and ``result`` are not carried back (``None``).

    Raises:
        rummy.errors.NotationError: a malformed card token.
        rummy.errors.InvalidRuleSetError: a rule set out of range.
    """
    from rummy.cards import parse_card
    from rummy.melds import parse_table

    rules = RuleSet.from_dict(json_format.MessageToDict(
        msg.rules, preserving_proto_field_name=True, always_print_fields_with_no_presence=True))
    return PlayerView(
        seat=msg.seat if msg.HasField("seat") else None, players=msg.players,
        names=tuple(msg.names), rules=rules, version=msg.version, round=msg.round,
        dealer=msg.dealer, turn=msg.turn, phase=_PHASE_NAMES.get(msg.phase, "unspecified"),
        draws=msg.draws, hand=tuple(sorted(parse_card(c) for c in msg.hand)),
        hand_sizes=tuple(msg.hand_sizes), table=parse_table([list(m.cards) for m in msg.table]),
        stock_size=msg.stock_size,
        final_turns_left=msg.final_turns_left if msg.HasField("final_turns_left") else None,
        totals=tuple(msg.totals), rounds_won=tuple(msg.rounds_won),
        opened=tuple(msg.opened) or (False,) * msg.players,
        actions=tuple(ACTION_NAMES[a] for a in msg.actions),
        last_round=None, result=None, controllers=tuple(msg.controllers),
        away=tuple(msg.away))
