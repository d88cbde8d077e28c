"""The move choice of ``benchmarks/bench_peer.py``'s clients: from the events a seat sees,
its ``Tracker`` names the seat to act and the default move due (draw R3.6, pass R3.2, end
the turn R6.3) exactly as the core does, through stock exhaustion (R8.1), the final turns
(R8.2) and the end of rounds (R8.3), over whole games (counted, not timed)."""

from __future__ import annotations

import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.convert import event_to_proto

from benchmarks.bench_peer import KIND, Tracker
from rummy.commands import CreateGame
from rummy.decide import DEFAULT_KIND, default_command, step
from rummy.rules import RuleSet
from rummy.state import GAME_OVER

PROTO_KIND = {"draw": pb.SESSION_COMMAND_KIND_DRAW, "pass": pb.SESSION_COMMAND_KIND_PASS,
              "end_turn": pb.SESSION_COMMAND_KIND_END_TURN}


@pytest.mark.parametrize("seed", [7, 11, 2024])
def test_the_tracker_names_the_core_default_move_over_a_whole_game(seed: int) -> None:
    state, _ = step(None, CreateGame(2, seed, RuleSet(), ("p0", "p1")))
    phases = {"draw": pb.PHASE_DRAW, "meld_or_pass": pb.PHASE_MELD_OR_PASS,
              "knock_or_end": pb.PHASE_KNOCK_OR_END}
    tracker = Tracker(state.turn, phases[str(state.phase.value)], state.version)
    moves = 0
    while state.phase != GAME_OVER:
        assert tracker.turn == state.turn, moves
        assert KIND[tracker.phase] == PROTO_KIND[DEFAULT_KIND[state.phase]], moves
        before = state.version
        state, events = step(state, default_command(state))
        for i, e in enumerate(events, start=before + 1):
            tracker.see(event_to_proto(e, i, 0.0))
        moves += 1
    assert tracker.over
    assert moves > 100  # several rounds: exhausted stocks and final turns were met
