"""Erasure of a game's seat names and a game's feed history: ``EraseSeatNames`` and
``ListGameResults`` (admin RPCs, a mixin of :class:`rummy_grpc.servicer.GameServicer`),
``rummy erase GAME_ID`` (:mod:`rummy_store.erase_cli`) does the same straight on the store.

The store does the work (:func:`rummy_store.erase.erase_game`: the game's key deleted,
plaintext copies of games written before sealing rewritten; docs/security.md, "Personal
data and erasure"); the service then drops the game from its caches, so this replica
shows "erased" at once. Another replica's cached state of the game keeps its names until
it is evicted or read from the store again (its key cache lasts
:data:`rummy_store.sealed.KEY_CACHE_SECONDS`).
"""

from __future__ import annotations

from typing import Any

import grpc
from rummy_api.v1 import game_service_pb2 as pb

from rummy_grpc.aborts import call
from rummy_grpc.errors import GameNotFound

__all__ = ["ErasureServicer", "erase_in_app"]


async def erase_in_app(app: Any, game_id: str) -> Any:
    """Erase ``game_id``'s seat names in ``app``'s store and forget its cached state.

    Raises:
        GameNotFound: no store holds the game.
    """
    from rummy_store.erase import erase_game
    try:
        done = await erase_game(app.store, game_id)
    except ValueError:  # a game id the store cannot hold
        done = None
    if done is None:
        raise GameNotFound(f"no game {game_id!r}")
    app.repo.forget(game_id)
    return done


class ErasureServicer:
    """``EraseSeatNames`` and ``ListGameResults``; the servicer provides ``app`` and
    ``_admin`` (the admin gate of :class:`rummy_grpc.results_rpc.ResultsServicer`)."""

    app: Any

    async def _admin(self, context: grpc.aio.ServicerContext, admin_token: str) -> None:
        raise NotImplementedError  # pragma: no cover - ResultsServicer's

    async def EraseSeatNames(self, request: pb.EraseSeatNamesRequest,
                             context: grpc.aio.ServicerContext) -> pb.EraseSeatNamesResponse:
        await self._admin(context, request.admin_token)
        done = await call(context, lambda: erase_in_app(self.app, request.game_id))
        return pb.EraseSeatNamesResponse(in_store=done.in_redis, in_archive=done.in_archive,
                                         rewritten=done.rewritten)

    async def ListGameResults(self, request: pb.ListGameResultsRequest,
                              context: grpc.aio.ServicerContext
                              ) -> pb.ListGameResultsResponse:
        from rummy_grpc.results_rpc import result_to_proto
        await self._admin(context, request.admin_token)

        async def history() -> list[Any]:
            try:
                return list(await self.app.store.results_history(request.game_id))
            except ValueError:
                return []
        found = await call(context, history)
        return pb.ListGameResultsResponse(results=[result_to_proto(e) for e in found])
