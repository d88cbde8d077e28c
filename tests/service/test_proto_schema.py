"""The proto messages carry every rule variant and every event field (docs/events.md, "How
to add a variant", "How to add an event").

``rules_to_proto`` is ``pb.RuleSet(**rules.to_dict())`` and an event's payload is its
``to_dict`` record as keyword arguments: a variant or an event field missing from
``proto/rummy_api/v1/game_service.proto`` would make the first GetView (or the first event
sent) raise ``ValueError`` at run time. These tests compare the proto descriptors with the
core's ``RuleSet`` fields and each event class's declared encodings, so the gap fails here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.convert import _PAYLOAD_FIELD, event_to_proto, rules_to_proto

from rummy import events as ev
from rummy.rules import RuleSet

from ..conftest import play_random_game

F = FieldDescriptor
_INTEGERS = {F.TYPE_INT32, F.TYPE_INT64, F.TYPE_SINT32, F.TYPE_SINT64, F.TYPE_UINT32,
             F.TYPE_UINT64}


def _scalar(fd: FieldDescriptor) -> str:
    """``int``, ``bool``, ``str``, ``message:<name>``, ``enum`` of a proto field, and
    ``[...]`` around it when repeated."""
    if fd.type in _INTEGERS:
        kind = "int"
    elif fd.type == F.TYPE_BOOL:
        kind = "bool"
    elif fd.type == F.TYPE_STRING:
        kind = "str"
    elif fd.type == F.TYPE_MESSAGE:
        kind = f"message:{fd.message_type.name}"
    else:
        kind = f"type {fd.type}"
    return f"[{kind}]" if fd.is_repeated else kind


def variant_mismatches(rules: type, message: Descriptor) -> list[str]:
    """Why the proto ``RuleSet`` message does not carry every variant of ``rules`` with
    its type (an ``int`` variant as an integer field, a ``bool`` one as ``bool``, an option
    variant, ``str``, as ``string``)."""
    problems = []
    by_name = message.fields_by_name
    for f in fields(rules):
        want = {bool: "bool", "bool": "bool", str: "str", "str": "str"}.get(f.type, "int")
        if f.name not in by_name:
            problems.append(f"variant {f.name} is not in proto message {message.name}")
        elif _scalar(by_name[f.name]) != want:
            problems.append(f"variant {f.name} is {want} but proto {message.name}."
                            f"{f.name} is {_scalar(by_name[f.name])}")
    for name in sorted(set(by_name) - {f.name for f in fields(rules)}):
        problems.append(f"proto {message.name}.{name} is no variant of the core RuleSet")
    return problems


def test_the_proto_rule_set_has_every_variant_with_its_type() -> None:
    assert variant_mismatches(RuleSet, pb.RuleSet.DESCRIPTOR) == []


@dataclass(frozen=True, slots=True)
class RuleSetPlus(RuleSet):
    """A core rule set that gained a variant the proto lacks."""

    doubles_bonus: int = 0


def test_a_variant_missing_from_the_proto_is_found_here_not_at_the_first_get_view() -> None:
    assert variant_mismatches(RuleSetPlus, pb.RuleSet.DESCRIPTOR) == [
        "variant doubles_bonus is not in proto message RuleSet"]
    with pytest.raises(ValueError, match="doubles_bonus"):  # the fault this test guards
        pb.RuleSet(**{**RuleSet().to_dict(), "doubles_bonus": 0})


def test_the_proto_rule_set_of_a_rule_set_holds_every_value() -> None:
    rules = RuleSet(target_score=60, round_bonus_for_all=True, opening_meld_min_points=30)
    msg = rules_to_proto(rules)
    assert {f.name: getattr(msg, f.name) for f in fields(RuleSet)} == rules.to_dict()


#: the proto shape each declared field encoding is written as (``rummy.events.ENCODING``)
_PROTO_SHAPES = ((ev.INT, "int"), (ev.INTS, "[int]"), (ev.STRS, "[str]"), (ev.CARD, "str"),
                 (ev.CARDS, "[str]"), (ev.TABLE, "[message:Cards]"),
                 (ev.HANDS, "[message:Cards]"), (ev.REASON, "str"), (ev.STR, "str"),
                 (ev.RULES, "message:RuleSet"), (ev.LEAVE_REASON, "str"))


def _shape(codec: ev.FieldCodec) -> str:
    """The proto shape of an encoding (``optional(c)`` is ``c``'s)."""
    for known, shape in _PROTO_SHAPES:
        if (codec.encode, codec.decode) == (known.encode, known.decode):
            return shape
    raise AssertionError(f"an encoding with no proto shape here: {codec}")


def event_mismatches(types: dict[str, Any]) -> list[str]:
    """Why ``pb.Event``'s payload does not carry each event type, each field with the
    shape of its declared encoding."""
    payload = {fd.message_type.name: fd for fd in
               pb.Event.DESCRIPTOR.oneofs_by_name["payload"].fields}
    problems = []
    for name, cls in types.items():
        if name not in payload:
            problems.append(f"event {name} has no field in proto Event's payload oneof")
            continue
        message = payload[name].message_type
        for field, codec in cls.ENCODING.items():
            fd = message.fields_by_name.get(field)
            if fd is None:
                problems.append(f"{name}.{field} is not in proto message {name}")
            elif _scalar(fd) != _shape(codec):
                problems.append(f"{name}.{field} is written as {_shape(codec)} but proto "
                                f"{name}.{field} is {_scalar(fd)}")
    return problems


def test_every_event_type_and_field_is_in_the_proto_event() -> None:
    assert event_mismatches(dict(ev.EVENT_TYPES)) == []
    payload = {fd.message_type.name: fd.name for fd in
               pb.Event.DESCRIPTOR.oneofs_by_name["payload"].fields}
    assert {name: _PAYLOAD_FIELD.get(name) for name in ev.EVENT_TYPES} == {
        name: payload[name] for name in ev.EVENT_TYPES}  # convert.py's table of them


@dataclass(frozen=True, slots=True)
class Resigned:
    """A later release's event type, not yet in the proto."""

    TYPE = "Resigned"
    VERSION = 1
    ENCODING = {"seat": ev.INT}
    seat: int


def test_an_event_missing_from_the_proto_is_found_here() -> None:
    assert event_mismatches({**ev.EVENT_TYPES, "Resigned": Resigned}) == [
        "event Resigned has no field in proto Event's payload oneof"]


def test_every_event_of_a_game_converts() -> None:
    _, events, _ = play_random_game(5, players=3)
    seen = set()
    for n, e in enumerate(events, 1):
        msg = event_to_proto(e, n, 0.0)
        assert msg.type == e.TYPE and msg.WhichOneof("payload") is not None
        seen.add(e.TYPE)
    assert {"GameStarted", "RoundStarted", "CardDrawn", "Melded", "RoundScored"} <= seen
