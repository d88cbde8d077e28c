"""Every event type of ``rummy.events.Event`` is known everywhere a stored game is read
(docs/events.md, "How to add an event"): a new event type added to the union without its
store layout, its evolve handler or its encodings fails here, not on the first stored game.

(The renderers ``match`` over ``Event`` with ``assert_never``, so mypy names each one that
does not handle a new type; the proto payload is checked in tests/service/test_proto_schema.py.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar, get_args

import pytest
from rummy_store.codec import LAYOUTS

from rummy.events import EVENT_TYPES, INT, Event, FieldCodec, TurnEnded, _plan
from rummy.evolve import _HANDLERS


def layout_problems(types: Mapping[str, type]) -> list[str]:
    """Why an event type at its current version has no store layout in its field order."""
    problems = []
    for name, cls in types.items():
        keys = tuple(f.name for f in fields(cls))
        layout = LAYOUTS.get((name, cls.VERSION))  # type: ignore[attr-defined]
        if layout is None:
            problems.append(f"{name} v{cls.VERSION} has no layout in "  # type: ignore[attr-defined]
                            "rummy_store.codec.LAYOUTS")
        elif layout != keys:
            problems.append(f"{name} v{cls.VERSION}'s layout {layout} is not its fields "  # type: ignore[attr-defined]
                            f"{keys}")
    return problems


@dataclass(frozen=True, slots=True)
class Resigned:
    """A later release's event type."""

    TYPE: ClassVar[str] = "Resigned"
    VERSION: ClassVar[int] = 1
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = {"seat": INT}
    seat: int


def test_the_registry_is_the_union() -> None:
    assert set(EVENT_TYPES.values()) == set(get_args(Event))
    assert all(name == cls.TYPE for name, cls in EVENT_TYPES.items())  # type: ignore[attr-defined]


def test_every_event_type_has_its_store_layout_at_its_current_version() -> None:
    assert layout_problems(EVENT_TYPES) == []
    assert layout_problems({**EVENT_TYPES, "Resigned": Resigned}) == [
        "Resigned v1 has no layout in rummy_store.codec.LAYOUTS"]


def test_every_event_type_has_an_evolve_handler() -> None:
    missing = [name for name, cls in EVENT_TYPES.items()
               if cls not in _HANDLERS]
    assert missing == []


def test_every_event_type_declares_the_encoding_of_each_field() -> None:
    for cls in EVENT_TYPES.values():
        assert [n for n, _ in _plan(cls)] == [f.name for f in fields(cls)]

    @dataclass(frozen=True, slots=True)
    class TurnEndedV2(TurnEnded):
        VERSION: ClassVar[int] = 2
        timeout: int = 0  # no encoding declared

    with pytest.raises(TypeError, match=r"TurnEndedV2.ENCODING must declare exactly its "
                                        r"fields: undeclared \['timeout'\]"):
        _plan(TurnEndedV2)
