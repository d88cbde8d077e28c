"""``rummy.events.to_dict`` encodes each field by a plan computed once per event class;
a class outside ``EVENT_TYPES`` (a later release's, a test's) is planned on the
fly and encodes the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from rummy.cards import parse_card
from rummy.events import EVENT_TYPES, INTS, FieldCodec, Melded, to_dict

from ..conftest import play_random_game


def _reference(event: object) -> dict:
    """to_dict as it was written before the plan: field by field with dataclasses.fields."""
    from dataclasses import fields

    from rummy.cards import format_card
    from rummy.melds import format_table
    out: dict = {"type": event.TYPE, "v": event.VERSION}  # type: ignore[attr-defined]
    for f in fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        if value is None:
            out[f.name] = None
        elif f.name == "card":
            out[f.name] = format_card(value)
        elif f.name in ("cards", "deck", "hand"):
            out[f.name] = [format_card(c) for c in value]
        elif f.name == "table":
            out[f.name] = format_table(value)
        elif f.name == "hands":
            out[f.name] = [[format_card(c) for c in h] for h in value]
        elif f.name == "rules":
            out[f.name] = value.to_dict()
        elif isinstance(value, tuple):
            out[f.name] = list(value)
        else:
            out[f.name] = value
    return out


def test_every_event_of_random_games_encodes_as_field_by_field():
    seen = set()
    for seed, players in ((3, 2), (4, 3), (5, 5)):
        _, events, _ = play_random_game(seed, players=players)
        for e in events:
            assert to_dict(e) == _reference(e)
            seen.add(e.TYPE)
    assert {"GameStarted", "RoundStarted", "CardDrawn", "Melded", "TurnEnded"} <= seen


@dataclass(frozen=True)
class MeldedV2(Melded):
    """A later release's Melded with one more field (not in EVENT_TYPES)."""

    VERSION: ClassVar[int] = 2
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = {**Melded.ENCODING, "note": INTS}
    note: tuple[int, ...] = (1, 2)


def test_a_class_outside_the_registry_is_planned_on_the_fly():
    assert MeldedV2 not in EVENT_TYPES.values()
    e = MeldedV2(1, (parse_card("8D"),), ((parse_card("8D"), parse_card("9D"),
                                           parse_card("TD")),))
    assert to_dict(e) == _reference(e)
    assert to_dict(e)["v"] == 2 and to_dict(e)["note"] == [1, 2]
    assert to_dict(e)["table"] == [["8D", "9D", "TD"]]
