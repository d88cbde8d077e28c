"""The retry semantics written in docs/api.md ("Retries"), one test each."""

from __future__ import annotations

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb

from .test_errors_and_races import _game, _refused

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


def _draw(gid, token, **options):
    return pb.DrawRequest(game_id=gid, token=token, options=pb.CommandOptions(**options))


async def test_a_duplicate_returns_the_original_events_and_version_and_the_current_view(
        running, store):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    first = (await stub.Draw(_draw(gid, tokens[turn], request_id="d1",
                                   expected_version=2))).result
    await stub.Pass(pb.PassRequest(game_id=gid, token=tokens[turn]))  # the game moves on
    again = (await stub.Draw(_draw(gid, tokens[turn], request_id="d1",
                                   expected_version=2))).result
    assert again.duplicate and not first.duplicate
    # the original result: its events and the version after them ...
    assert (again.version, list(again.events)) == (first.version, list(first.events))
    # ... and the caller's view as it is now, with its own version
    assert again.view.version == await store.version(gid) > again.version


async def test_same_means_same_command_seat_table_and_expected_version(running):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    await stub.Draw(_draw(gid, tokens[turn], request_id="d2", expected_version=2))
    # a retry that drops the expected_version it first had is another request
    await _refused(stub.Draw(_draw(gid, tokens[turn], request_id="d2")),
                   grpc.StatusCode.ALREADY_EXISTS)
    # and so is another command under the same id
    await _refused(stub.Pass(pb.PassRequest(
        game_id=gid, token=tokens[turn],
        options=pb.CommandOptions(request_id="d2", expected_version=2))),
        grpc.StatusCode.ALREADY_EXISTS)


async def test_request_ids_are_per_game_and_a_refused_command_records_nothing(running, store):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    other = 1 - turn
    # refused (not the caller's turn): nothing appended, the id stays free
    await _refused(stub.Draw(_draw(gid, tokens[other], request_id="d3")),
                   grpc.StatusCode.PERMISSION_DENIED)
    assert await store.version(gid) == 2
    ok = (await stub.Draw(_draw(gid, tokens[turn], request_id="d3"))).result
    assert not ok.duplicate and ok.version == 3
    gid2, tokens2, turn2 = await _game(stub)
    fresh = (await stub.Draw(_draw(gid2, tokens2[turn2], request_id="d3"))).result
    assert not fresh.duplicate


async def test_an_enum_left_at_zero_is_refused_not_guessed(running):
    # docs/api.md, "Enums": a name a client's loader does not know is sent as 0
    err = await _refused(running.stub.CreateGame(pb.CreateGameRequest(seats=[
        pb.SeatSpec(kind=pb.SEAT_KIND_UNSPECIFIED), pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)])),
        grpc.StatusCode.INVALID_ARGUMENT)
    assert "kind must be human or bot" in err.details()


async def test_an_enum_value_unknown_to_the_server_is_named_not_called_unspecified(running):
    # found by a tester: kind 99 was reported as "got 'unspecified'"
    err = await _refused(running.stub.CreateGame(pb.CreateGameRequest(seats=[
        pb.SeatSpec(kind=99), pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)])),
        grpc.StatusCode.INVALID_ARGUMENT)
    assert "seat 0: kind must be human or bot, got 'enum value 99'" in err.details()


@pytest.mark.parametrize("name", [
    "\x1b]0;PWNED\x07\x1b[2J",  # OSC window title, then clear the screen
    "eve\r\n12:00 seat 1 knocked",  # a forged log line
    "nul\x00", "\u202eevil",  # NUL, a right-to-left override (a format character)
])
async def test_a_seat_name_with_control_characters_is_refused_and_creates_nothing(
        running, name):
    before = await running.server.app.store.list_games()
    err = await _refused(running.stub.CreateGame(pb.CreateGameRequest(
        seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=name),
               pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="bob")],
        request_id=f"names-{len(name)}")), grpc.StatusCode.INVALID_ARGUMENT)
    assert "seat 0: the name" in err.details() and "printable" in err.details()
    assert await running.server.app.store.list_games() == before
    ok = await running.stub.CreateGame(pb.CreateGameRequest(seats=[
        pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="Zoë 🂡"),  # printable unicode is fine
        pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="bob")]))
    assert ok.game_id
