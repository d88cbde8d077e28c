"""Clients whose deadlines pass while the server replies cannot flood the log (a fault noticed
while the compact storage was built, and left then).

grpcio's asyncio core logs ``ExecuteBatchError raised in core by servicer method [...]`` at
ERROR with a traceback each time a reply cannot be sent because the client has gone. Before
:class:`rummy_grpc.server.UndeliveredReplyFilter`, 2,000 GetView calls with deadlines of 1-8
ms left about ten such tracebacks in the server's log (nine lines each); now each is a count
in ``rummy_grpc_replies_undelivered_total{method}`` and the log keeps only real errors.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc import metrics
from rummy_grpc.server import (
    GRPC_CORE_LOGGER,
    UndeliveredReplyFilter,
    install_undelivered_reply_filter,
)

from .conftest import ADMIN_TOKEN, Running, humans

pytestmark = [pytest.mark.redis]

GET_VIEW = "/rummy_api.v1.GameService/GetView"


def _undelivered(method: str) -> float:
    return metrics.REPLIES_UNDELIVERED_TOTAL.labels(method)._value.get()


def _core_record(message: str, *args: object) -> logging.LogRecord:
    """A record as grpcio's core writes it: ``_LOGGER.exception(...)`` inside an except."""
    try:
        raise RuntimeError('Failed "execute_batch"')
    except RuntimeError:
        import sys
        return logging.getLogger(GRPC_CORE_LOGGER).makeRecord(
            GRPC_CORE_LOGGER, logging.ERROR, "server.pyx.pxi", 710, message, args,
            sys.exc_info())


def test_only_the_undelivered_reply_record_is_dropped_and_counted() -> None:
    f = UndeliveredReplyFilter()
    before = _undelivered(GET_VIEW)
    rec = _core_record("ExecuteBatchError raised in core by servicer method [%s]", GET_VIEW)
    assert f.filter(rec) is False
    assert _undelivered(GET_VIEW) == before + 1
    # a method path that is not well formed is counted under "other", never as a new label
    other = _undelivered("other")
    assert f.filter(_core_record("ExecuteBatchError raised in core by servicer method "
                                 "[not a path\n]")) is False
    assert _undelivered("other") == other + 1
    # every other record of grpcio's core goes on as it was
    for message in ("Unexpected [%s] raised by servicer method [%s]",
                    "ExecuteBatchError raised in core by something else"):
        assert f.filter(_core_record(message, "KeyError", GET_VIEW)
                        if "%s" in message else _core_record(message)) is True
    broken = _core_record("%d", "not a number")  # cannot format: passed on, not judged
    assert f.filter(broken) is True


def test_the_filter_is_installed_once() -> None:
    first = install_undelivered_reply_filter()
    assert install_undelivered_reply_filter() is first
    core = logging.getLogger(GRPC_CORE_LOGGER)
    assert sum(isinstance(f, UndeliveredReplyFilter) for f in core.filters) == 1


@pytest.mark.asyncio
async def test_calls_whose_deadline_passes_during_the_reply_leave_no_traceback(
    running: Running, caplog: pytest.LogCaptureFixture,
    record_property: pytest.RecordProperty,
) -> None:
    created = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2),
                                                                 admin_token=ADMIN_TOKEN))
    token = created.tokens[0].token
    request = pb.GetViewRequest(game_id=created.game_id, token=token)
    codes: dict[grpc.StatusCode, int] = {}
    before = _undelivered(GET_VIEW)

    async def one(timeout: float) -> None:
        started = time.monotonic()
        try:
            await running.stub.GetView(request, timeout=timeout)
            code = grpc.StatusCode.OK
        except grpc.aio.AioRpcError as err:
            code = err.code()
        if code == grpc.StatusCode.CANCELLED and time.monotonic() - started >= timeout:
            # the server's deadline fired first and reset the stream (RST_STREAM carries
            # no "deadline exceeded"): the client may see CANCELLED; deadline status over
            # HTTP/2 is best effort (grpc/grpc#2685). A CANCELLED before the deadline
            # stays a failure.
            code = grpc.StatusCode.DEADLINE_EXCEEDED
        codes[code] = codes.get(code, 0) + 1

    with caplog.at_level(logging.DEBUG):
        for timeout in (0.001, 0.002, 0.003, 0.005, 0.008) * 20:
            await asyncio.gather(*(one(timeout) for _ in range(20)))
        await asyncio.sleep(0.2)
    undelivered = _undelivered(GET_VIEW) - before
    record_property("deadline_exceeded", codes.get(grpc.StatusCode.DEADLINE_EXCEEDED, 0))
    record_property("replies_undelivered", undelivered)
    # the flood really raced the replies: most calls ran out of time
    assert codes.get(grpc.StatusCode.DEADLINE_EXCEEDED, 0) >= 500
    assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.DEADLINE_EXCEEDED}
    core = [r for r in caplog.records if r.name.startswith("grpc")]
    assert [r.getMessage() for r in core if r.levelno >= logging.WARNING] == []
    assert not any(r.exc_info for r in caplog.records), [
        "".join(traceback.format_exception(*r.exc_info)) for r in caplog.records
        if r.exc_info]
    # each reply that could not be sent is a count and one DEBUG line, nothing more
    lines = [r for r in caplog.records if "not delivered" in r.getMessage()]
    assert len(lines) == undelivered
    # and the server still answers a call with time to spare
    view = await running.stub.GetView(request, timeout=10)
    assert view.view.version == created.version
