"""The error table and the message translation, without a server."""

from __future__ import annotations

import grpc
import pytest
from rummy_grpc.convert import event_to_proto, view_from_proto, view_to_proto
from rummy_grpc.errors import (
    BadRequest,
    GameNotFound,
    PermissionDenied,
    Unauthenticated,
    map_error,
    outcome,
)
from rummy_store import RequestIdReused, StoreError, VersionConflict

from rummy.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidRuleSetError,
    NotationError,
    NotYourTurnError,
)
from rummy.events import to_dict
from rummy.views import redact, view

from ..conftest import play_random_game

C = grpc.StatusCode


@pytest.mark.parametrize(("exc", "code", "rule"), [
    (NotationError("bad card 'ZZ'", token="ZZ"), C.INVALID_ARGUMENT, "R1.4"),
    (InvalidRuleSetError("unknown rule variant 'x'"), C.INVALID_ARGUMENT, "R11"),
    (BadRequest("2 to 5 seats"), C.INVALID_ARGUMENT, ""),
    (IllegalMoveError("R5.8", "joker"), C.FAILED_PRECONDITION, "R5.8"),
    (GameOverError(), C.FAILED_PRECONDITION, "R9.1"),
    (NotYourTurnError("seat 1's turn"), C.PERMISSION_DENIED, "R3"),
    (PermissionDenied("bad token"), C.PERMISSION_DENIED, ""),
    (Unauthenticated("no token"), C.UNAUTHENTICATED, ""),
    (GameNotFound("no game"), C.NOT_FOUND, ""),
    (VersionConflict("g", 3, 4), C.ABORTED, ""),
    (RequestIdReused("g", "r"), C.ALREADY_EXISTS, ""),
    (StoreError("down"), C.UNAVAILABLE, ""),
])
def test_every_error_maps_to_its_status_with_the_rule(exc, code, rule):
    mapped = map_error(exc)
    assert mapped is not None and mapped.code == code and mapped.rule == rule
    md = dict(mapped.trailing_metadata())
    assert md.get("rummy-rule", "") == rule
    assert "grpc-status-details-bin" in md
    assert outcome(exc) == mapped.reason.lower()


def test_unexpected_errors_are_not_mapped():
    assert map_error(KeyError("x")) is None
    assert outcome(KeyError("x")) == "error"
    assert outcome(None) == "ok"


def test_views_and_events_round_trip_through_protobuf():
    state, events, states = play_random_game(5, players=3)
    for s in states[::7]:
        for seat in range(3):
            v = view(s, seat)
            back = view_from_proto(view_to_proto(v))
            assert back == v._replace(last_round=None, result=None)
    for i, e in enumerate(events, 1):
        for seat in (None, 0, 2):
            r = redact(e, seat, players=3, hand_size=10)
            msg = event_to_proto(r, i, 1.5)
            payload = getattr(msg, msg.WhichOneof("payload"))
            assert msg.type == e.TYPE and msg.version == i
            d = to_dict(r)
            if "card" in d:
                assert payload.HasField("card") == (d["card"] is not None)
            if "seed" in d:
                assert payload.HasField("seed") == (d["seed"] is not None)


def test_rule_ids_only_where_a_rule_is_broken():
    # found by a review: a bad turn_seconds was sent as R1.4; a bad seat count had no rule
    from rummy.errors import CommandError
    assert map_error(CommandError("turn_seconds must be 0..86400, got -5")).rule == ""
    m = map_error(BadRequest("a game has 2 to 5 seats, got 6 (R1.1)", rule="R1.1"))
    assert (m.code, m.reason, m.rule) == (C.INVALID_ARGUMENT, "BAD_REQUEST", "R1.1")
    assert ("rummy-rule", "R1.1") in m.trailing_metadata()


def test_round_end_reasons_map_one_to_one_to_the_proto_enum():
    from rummy_api.v1 import game_service_pb2 as pb
    from rummy_grpc.convert import REASON_CODES

    from rummy.events import RoundEndReason, RoundScored
    assert len(set(REASON_CODES.values())) == len(RoundEndReason) == 3
    e = RoundScored(1, RoundEndReason.GOING_OUT, 0, ((), (1,)), (0, 2), (27, 0), (0,), (27, 0))
    msg = event_to_proto(e, 5, 0.0)
    assert msg.round_scored.reason == "going_out"
    assert msg.round_scored.reason_code == pb.ROUND_END_REASON_GOING_OUT


def test_walk_every_version_of_recorded_games_meets_no_unspecified_phase():
    # every version of recorded 2-5 player games, every seat's and the
    # spectator's view, maps to a phase other than PHASE_UNSPECIFIED
    import json
    from pathlib import Path

    from rummy_api.v1 import game_service_pb2 as pb

    from rummy.events import from_dict
    from rummy.evolve import evolve

    players_seen = set()
    for path in sorted((Path(__file__).parents[1] / "golden").glob("*.jsonl")):
        state = None
        for line in path.read_text().splitlines():
            state = evolve(state, from_dict(json.loads(line)))
            for seat in (None, *range(state.players)):
                msg = view_to_proto(view(state, seat))
                assert msg.phase != pb.PHASE_UNSPECIFIED, (path.name, state.version, seat)
        players_seen.add(state.players)
    assert players_seen == {2, 3, 4, 5}


def test_cached_table_and_last_round_protos_are_copied_into_each_view():
    # view_to_proto caches the protos of a table and of a view's last_round (both
    # repeat across versions); a caller that changes its message must not change the next
    state, _, states = play_random_game(7, players=2)
    later = [s for s in states if s.table and s.round > 1][:3] or [s for s in states if s.table]
    for s in later:
        v = view(s, 0)
        first = view_to_proto(v)
        expected = first.SerializeToString(deterministic=True)
        first.table[0].cards.append("XX")
        if v.last_round is not None:
            first.last_round.round = 99
        again = view_to_proto(v)
        assert again.SerializeToString(deterministic=True) == expected
        assert [list(m.cards) for m in again.table] == [
            [c for c in m.cards] for m in view_to_proto(view(s, 1)).table]
