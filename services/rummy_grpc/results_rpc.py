"""``StreamResults``, ``AckResults`` and ``ListParkedResults``: the results feed's gRPC
calls (:mod:`rummy_grpc.results`), a mixin of :class:`rummy_grpc.servicer.GameServicer`.
Each needs the admin token."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store.results import FeedEntry

from rummy_grpc.aborts import abort, call
from rummy_grpc.errors import ServiceError
from rummy_grpc.results import ResultsRpc

__all__ = ["ResultsServicer", "result_to_proto"]

log = logging.getLogger("rummy_grpc")
T = TypeVar("T")

_KINDS = {"created": pb.RESULT_KIND_CREATED, "ended": pb.RESULT_KIND_ENDED,
          "abandoned": pb.RESULT_KIND_ABANDONED}


def result_to_proto(entry: FeedEntry) -> pb.GameResult:
    """A feed entry as a ``GameResult`` (unknown summary kinds: ``RESULT_KIND_UNSPECIFIED``,
    the JSON still carries them)."""
    s = entry.summary
    return pb.GameResult(
        entry_id=entry.id, kind=_KINDS.get(str(s.get("kind")), pb.RESULT_KIND_UNSPECIFIED),
        game_id=str(s.get("game_id", "")), version=int(s.get("version", 0)), ts=entry.ts,
        seats=[pb.ResultSeat(seat=int(x.get("seat", i)), name=str(x.get("name", "")),
                             controller=str(x.get("controller", "")),
                             final_score=int(x.get("final", 0)),
                             rounds_won=int(x.get("rounds_won", 0)),
                             winner=bool(x.get("winner", False)),
                             left=bool(x.get("left", False)),
                             controllers=[pb.ControlSpan(
                                 from_version=int(c.get("from_version", 1)),
                                 controller=str(c.get("controller", "")))
                                 for c in x.get("controllers") or []])
               for i, x in enumerate(s.get("seats") or [])],
        deliveries=entry.deliveries,
        summary_json=json.dumps(s, separators=(",", ":"), sort_keys=True))




class ResultsServicer:
    """The results feed's calls; the servicer provides ``app`` (its store and read
    models) and ``_admit`` (the caller gate)."""

    app: Any
    _results: ResultsRpc | None = None

    async def _admit(self, context: grpc.aio.ServicerContext, *, create: bool = False,
                     privileged: bool = False) -> Any:
        raise NotImplementedError  # pragma: no cover - GameServicer's

    def _results_rpc(self) -> ResultsRpc:
        if self._results is None:
            self._results = ResultsRpc(self.app.store)
        return self._results

    async def _admin(self, context: grpc.aio.ServicerContext, admin_token: str) -> None:
        await self._admit(context, privileged=True)
        try:
            self.app.reads.require_admin(admin_token)
        except ServiceError as exc:
            await abort(context, exc)

    async def StreamResults(self, request: pb.StreamResultsRequest,
                            context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[pb.StreamResultsResponse]:
        await self._admin(context, request.admin_token)
        batches = self._results_rpc().stream(
            request.group, request.consumer, request.start, request.max_batch,
            request.lease_seconds, request.max_deliveries, request.max_in_flight)
        try:
            async for batch in batches:
                yield pb.StreamResultsResponse(results=[result_to_proto(e) for e in batch])
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001
            await abort(context, exc)
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def AckResults(self, request: pb.AckResultsRequest,
                         context: grpc.aio.ServicerContext) -> pb.AckResultsResponse:
        await self._admin(context, request.admin_token)
        n = await call(context, lambda: self._results_rpc().ack(request.group,
                                                                list(request.entry_ids)))
        return pb.AckResultsResponse(acknowledged=n)

    async def ListParkedResults(self, request: pb.ListParkedResultsRequest,
                                context: grpc.aio.ServicerContext
                                ) -> pb.ListParkedResultsResponse:
        await self._admin(context, request.admin_token)
        parked, status = await call(context, lambda: self._results_rpc().parked(
            request.group, request.after, request.limit))
        return pb.ListParkedResultsResponse(
            parked=[pb.ParkedResult(result=result_to_proto(p.entry), consumer=p.consumer,
                                    parked_id=p.parked_id) for p in parked],
            pending=status.pending, lag=max(0, status.lag), parked_total=status.parked,
            last_delivered=status.last_delivered)
