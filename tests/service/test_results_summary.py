"""The summaries the service hands to the results feed (:func:`rummy_grpc.results.summarize`)
and their ``GameResult`` messages, over a golden game log (R9: final totals, winners)."""

from __future__ import annotations

import json
from pathlib import Path

import rummy_grpc  # noqa: F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.results import controller, summarize
from rummy_grpc.results_rpc import result_to_proto
from rummy_store.results import FeedEntry

from rummy.events import GameEnded, GameStarted, from_dict
from rummy.lifecycle import Control

LOG = Path(__file__).parents[1] / "golden" / "basic-random-3p-seed2.jsonl"
META = {"seats": [{"kind": "bot", "name": "basic-bot", "strategy": "basic"},
                  {"kind": "human", "name": "Bea", "strategy": ""},
                  {"kind": "bot", "name": "basic-bot", "strategy": "basic"}]}


def _events() -> list:
    return [from_dict(json.loads(line)) for line in LOG.read_text().splitlines() if line]


def test_only_appends_that_start_or_end_a_game_have_a_summary() -> None:
    events = _events()
    assert summarize("g", events[2:5], 2, META) is None
    created = summarize("g", events[:2], 0, META)
    started = events[0]
    assert isinstance(started, GameStarted)
    assert created == {"kind": "created", "game_id": "g", "version": 2, "seats": [
        {"seat": i, "name": started.names[i], "controller": c}
        for i, c in enumerate(["bot:basic", "human", "bot:basic"])]}


def test_an_ended_summary_carries_the_final_scores_and_winners() -> None:
    events = _events()
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    at = len(events) - 1
    s = summarize("g", [ended], at, META)
    assert s is not None and s["kind"] == "ended" and s["version"] == len(events)
    assert [x["final"] for x in s["seats"]] == list(ended.final)
    assert [x["rounds_won"] for x in s["seats"]] == list(ended.rounds_won)
    assert [x["seat"] for x in s["seats"] if x["winner"]] == list(ended.winners)
    assert s["winners"] == list(ended.winners) and s["totals"] == list(ended.totals)
    assert [x["name"] for x in s["seats"]] == ["basic-bot", "Bea", "basic-bot"]  # from meta
    msg = result_to_proto(FeedEntry("1700000000123-4", s, 2))
    assert (msg.entry_id, msg.kind, msg.game_id, msg.version, msg.deliveries) == (
        "1700000000123-4", pb.RESULT_KIND_ENDED, "g", len(events), 2)
    assert msg.ts == 1700000000.123
    assert [x.final_score for x in msg.seats] == list(ended.final)
    assert [x.controller for x in msg.seats] == ["bot:basic", "human", "bot:basic"]
    assert json.loads(msg.summary_json) == s


def test_an_abandoned_entry_and_an_unknown_kind() -> None:
    msg = result_to_proto(FeedEntry("5-0", {"kind": "abandoned", "game_id": "g"}, 1))
    assert (msg.kind, msg.game_id, msg.version, list(msg.seats)) == (
        pb.RESULT_KIND_ABANDONED, "g", 0, [])
    assert result_to_proto(FeedEntry("5-1", {"kind": "later"}, 1)).kind == \
        pb.RESULT_KIND_UNSPECIFIED
    assert controller({"kind": "bot", "strategy": "search"}) == "bot:search"
    assert controller({}) == ""


def test_an_ended_summary_names_who_played_each_seat_and_who_left() -> None:
    # R13.4: Bea (seat 1) left at version 40, a basic bot played her seat from then on
    control = Control(("", "basic", ""), ("", "leave", ""), (False, True, False), (0, 0, 0),
                      (False, False, False), ((40, 1, "basic"),))
    ended = GameEnded((10, 160, 20), (1, 3, 0), (25, 0, 0), (35, 160, 20), (0,), (1,))
    s = summarize("g", [ended], 99, META, control)
    assert s is not None
    assert [x["left"] for x in s["seats"]] == [False, True, False]
    assert s["seats"][1]["controllers"] == [{"from_version": 1, "controller": "human"},
                                            {"from_version": 40, "controller": "bot:basic"}]
    assert s["seats"][0]["controllers"] == [{"from_version": 1, "controller": "bot:basic"}]
    msg = result_to_proto(FeedEntry("1700000000123-5", s, 1))
    assert [x.left for x in msg.seats] == [False, True, False]
    assert [(c.from_version, c.controller) for c in msg.seats[1].controllers] == [
        (1, "human"), (40, "bot:basic")]
