"""The seat lifecycle's calls (docs/rules.md §13): ``Resign``, ``Leave`` and ``ReclaimSeat``,
a mixin of :class:`rummy_grpc.servicer.GameServicer` (which provides ``_command_rpc``: the
caller gate, the command path of :class:`rummy_grpc.commands.CommandHandler` and the
``CommandResult``)."""

from __future__ import annotations

from typing import Any

import grpc
from rummy_api.v1 import game_service_pb2 as pb


class LifecycleServicer:
    """``Resign``, ``Leave`` and ``ReclaimSeat``: each is one command of the caller's seat
    (its token), appended with the same concurrency check and idempotency key as a move."""

    _command_rpc: Any

    async def Resign(self, request: pb.ResignRequest,
                     context: grpc.aio.ServicerContext) -> pb.ResignResponse:
        return pb.ResignResponse(result=await self._command_rpc(request, context, "resign"))

    async def Leave(self, request: pb.LeaveRequest,
                    context: grpc.aio.ServicerContext) -> pb.LeaveResponse:
        return pb.LeaveResponse(result=await self._command_rpc(request, context, "leave"))

    async def ReclaimSeat(self, request: pb.ReclaimSeatRequest,
                          context: grpc.aio.ServicerContext) -> pb.ReclaimSeatResponse:
        return pb.ReclaimSeatResponse(result=await self._command_rpc(
            request, context, "reclaim", wait=request.wait))


__all__ = ["LifecycleServicer"]
