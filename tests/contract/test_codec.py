"""The compact stored text of event records (rummy_store.codec): lossless
for every record, compact for every event type of the core, and the layouts frozen."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rummy_store.codec import LAYOUTS, pack, pack_events, unpack

from rummy.events import EVENT_TYPES, to_dict
from rummy.rules import RuleSet
from rummy.simulate import play_game

FROZEN = {  # the released layouts; an entry here never changes (docs/events.md)
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


def test_released_layouts_never_change() -> None:
    for layout, keys in FROZEN.items():
        assert LAYOUTS[layout] == keys, layout


def test_every_current_event_type_has_its_layout_in_to_dict_order() -> None:
    for name, cls in EVENT_TYPES.items():
        keys = tuple(f.name for f in dataclasses.fields(cls))
        assert LAYOUTS[(name, cls.VERSION)] == keys, name


@pytest.mark.parametrize("seats", [2, 3, 5])
def test_records_of_whole_games_round_trip_and_are_compact(seats: int) -> None:
    rules = RuleSet(opening_meld_per_player=True, opening_meld_min_points=30) \
        if seats == 3 else None
    result = play_game(["strategic"] * seats, 20 + seats, rules, record=True)
    seen = set()
    json_size = packed_size = 0
    for event in result.events:
        record = to_dict(event)
        text = pack(record)
        assert text.startswith("["), record  # every core event has a layout
        assert unpack(text) == record
        seen.add(record["type"])
        json_size += len(json.dumps(record, separators=(",", ":")))
        packed_size += len(text)
    assert {"GameStarted", "RoundStarted", "CardDrawn", "Melded", "TurnEnded",
            "RoundScored", "GameEnded"} <= seen
    assert packed_size < 0.7 * json_size  # ~0.5 in practice


def test_the_compact_forms() -> None:
    melded = {"type": "Melded", "v": 1, "seat": 1, "cards": ["8D", "*9D"],
              "table": [["8D", "*9D", "TD"], ["AS", "AH", "AC"]]}
    assert pack(melded) == '["Melded",1,1,"~8D *9D","~~8D *9D TD,AS AH AC"]'
    scored = {"type": "RoundScored", "v": 1, "round": 2, "reason": "going_out",
              "knocker": None, "hands": [[], ["2S", "3S"], []], "points": [0, 5, 0],
              "scores": [5, 0, 0], "winners": [0], "totals": [5, 0, 0]}
    assert pack(scored) == ('["RoundScored",1,2,"going_out",null,"~~,2S 3S,",[0,5,0],'
                            '[5,0,0],[0],[5,0,0]]')
    assert unpack(pack(scored)) == scored
    assert unpack('{"type":"Passed","v":1,"seat":0}') == {"type": "Passed", "v": 1, "seat": 0}


@pytest.mark.parametrize("record", [
    {"type": "Passed", "v": 1, "seat": 0, "extra": 1},          # a key more: JSON object
    {"type": "Passed", "v": 2, "seat": 0},                       # a version without layout
    {"v": 1, "type": "Passed", "seat": 0},                       # keys in another order
    {"type": "Custom", "payload": {"a": [1, 2]}},                # any other type
    {"type": "Knocked", "v": True, "seat": 0, "points": 1},      # v must be an int
])
def test_records_without_a_matching_layout_stay_json_objects(record: dict) -> None:
    text = pack(record)
    assert text.startswith("{") and unpack(text) == record
    assert list(unpack(text)) == list(record)


@pytest.mark.parametrize("value", [
    "~", "~x", "~~x", "~'x", "'x", "a b", [], [[]], [[], []], ["a b"], ["~a"], ["'a"],
    [""], ["a,b"], ["a\nb"], [["a"], "b"], [["a b"]], [1, 2], ["a", 1], [["a"], []],
    [["~"]], None, {"k": ["a"]}, ["é", "ü"],
])
def test_awkward_values_round_trip(value: object) -> None:
    record = {"type": "Knocked", "v": 1, "seat": value, "points": value}
    assert unpack(pack(record)) == record


def test_unencodable_records_are_refused_with_the_event_named() -> None:
    with pytest.raises(TypeError, match="event 1"):
        pack_events([{"type": "Passed", "v": 1, "seat": 0},
                     {"type": "Knocked", "v": 1, "seat": 0, "points": math.nan}])
    with pytest.raises(TypeError, match="event 0"):
        pack_events([{"type": "Passed", "v": 1, "seat": {1, 2}}])
    with pytest.raises(TypeError, match="not valid UTF-8"):  # Redis cannot keep it
        pack_events([{"type": "Passed", "v": 1, "seat": "\ud800"}])
    with pytest.raises(ValueError, match="no string 'type'"):
        pack_events([{"v": 1}])
    with pytest.raises(ValueError, match="unknown layout"):
        unpack('["Nope",1,2]')
    with pytest.raises(ValueError, match="unknown layout"):
        unpack('["Passed",1]')  # a value missing


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6)
    | st.sampled_from(["~", "~~", "~'", "'", " ", ",", "8D", "*AS"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                                  max_size=3),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(layout=st.sampled_from(sorted(LAYOUTS)), data=st.data())
def test_any_json_values_in_any_layout_round_trip(layout: tuple[str, int], data) -> None:
    keys = LAYOUTS[layout]
    record = {"type": layout[0], "v": layout[1],
              **{k: data.draw(_json, label=k) for k in keys}}
    text = pack(record)
    assert text.startswith("[")
    assert unpack(text) == record
