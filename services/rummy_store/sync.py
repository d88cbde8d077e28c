"""Synchronous helpers for the replay CLI and Celery workers (no event loop of their own).

Each call opens a store with :func:`rummy_store.factory.open_store` (every URL ``rummy
serve`` takes: a single Redis, a Redis Cluster, ``memory://``), runs one coroutine with
:func:`asyncio.run` and closes the store, so it is safe after a fork. Do not call these from
inside a running event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from rummy_store.base import AppendResult, EventStore, StoredEvent
from rummy_store.factory import open_store

__all__ = ["append_sync", "open_store", "read_all_sync", "run_sync", "with_store_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion on a new event loop and return its result.

    Raises:
        RuntimeError: called from a thread that already runs an event loop.
    """
    return asyncio.run(coro)


def with_store_sync(
    url: str, fn: Callable[[EventStore], Awaitable[T]], *, prefix: str = "rummy",
    archive_url: str | None = None, sealed: bool = False,
) -> T:
    """Open the store at ``url`` (:func:`~rummy_store.factory.open_store`; with ``sealed``
    or an ``archive_url``, :func:`~rummy_store.factory.open_game_store`: names opened,
    archived games read), await ``fn(store)``, close the store; return the result.

    Raises:
        rummy_store.factory.UnknownStoreURL: a URL no backend takes; what ``fn`` raises.
    """

    async def main() -> T:
        if sealed or archive_url:
            import os

            from rummy_store.factory import open_game_store
            store: EventStore = open_game_store(
                url, prefix=prefix, archive_url=archive_url,
                archive_schema=os.environ.get("RUMMY_ARCHIVE_SCHEMA", "rummy"))
        else:
            store = open_store(url, prefix=prefix)
        try:
            return await fn(store)
        finally:
            await store.close()

    return run_sync(main())


def read_all_sync(
    url: str,
    game_id: str,
    *,
    after_version: int = 0,
    to_version: int | None = None,
    prefix: str = "rummy",
    archive_url: str | None = None,
) -> list[StoredEvent]:
    """The events of ``game_id`` in version order (see :meth:`EventStore.read`); ``[]`` for
    an unknown game. Seat names are opened (:mod:`rummy_store.shred`); a game moved to the
    archive at ``archive_url`` (default ``$RUMMY_ARCHIVE_URL``) is read from there."""
    import os
    archive_url = archive_url or os.environ.get("RUMMY_ARCHIVE_URL") or None
    return with_store_sync(
        url, lambda store: store.read(game_id, after_version, to_version), prefix=prefix,
        archive_url=archive_url, sealed=True,
    )


def append_sync(
    url: str,
    game_id: str,
    events: Sequence[dict[str, Any]],
    expected_version: int,
    *,
    request_id: str | None = None,
    request_hash: str | None = None,
    response: dict[str, Any] | None = None,
    prefix: str = "rummy",
) -> AppendResult:
    """:meth:`EventStore.append` on a one-off connection (raises what it raises)."""
    return with_store_sync(
        url,
        lambda store: store.append(
            game_id,
            events,
            expected_version,
            request_id=request_id,
            request_hash=request_hash,
            response=response,
        ),
        prefix=prefix,
    )
