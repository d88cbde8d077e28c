"""The one place an event store is built from a URL: :func:`open_store`.

Every command that takes a store URL (``rummy serve``, ``rummy replay``, ``rummy export``,
the batch workers' ``--record-every``) goes through it, so each accepts every URL the others
do, and an unknown one gets one error text (:class:`UnknownStoreURL`).

==================================================  =========================================
URL                                                 store
==================================================  =========================================
``memory://``, ``memory``, ``""`` or ``None``       a new :class:`~rummy_store.memory.
                                                    MemoryEventStore` (this process only)
``redis://``, ``rediss://``, ``unix://``            :class:`~rummy_store.redis_store.
                                                    RedisEventStore` on a single Redis
``redis+cluster://``, ``rediss+cluster://``         the same on a Redis Cluster
==================================================  =========================================

A new backend adds its scheme here and implements the protocols of :mod:`rummy_store.base`
(checked by the contract suite, :mod:`rummy_store.contract`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rummy_store.base import EventStore

__all__ = ["MEMORY_URLS", "SCHEMES", "UnknownStoreURL", "open_game_store", "open_store",
           "store_scheme"]

MEMORY_URLS = ("", "memory", "memory://")
"""The URLs of a new in-memory store (``None`` too)."""

SCHEMES = ("memory", "redis", "rediss", "unix", "redis+cluster", "rediss+cluster")
"""The URL schemes :func:`open_store` accepts."""


class UnknownStoreURL(ValueError):
    """A store URL whose scheme no backend takes. The message names the URL's scheme (never
    the URL: it may hold a password) and lists the accepted ones."""

    def __init__(self, scheme: str, *, slashes: bool = True) -> None:
        what = f"unknown event store url scheme {scheme!r}" + ("" if slashes else " (no '://')")
        super().__init__(
            f"{what}: use memory://, redis://host:port/db, rediss://..., unix:///path.sock, "
            f"redis+cluster://host:port[,host:port...] or rediss+cluster://...")
        self.scheme = scheme


def store_scheme(url: str | None) -> str:
    """The backend scheme of ``url`` (one of :data:`SCHEMES`), lowercased.

    Raises:
        UnknownStoreURL: no backend takes it.
    """
    if url is None or url in MEMORY_URLS:
        return "memory"
    scheme, sep, _ = url.partition("://")
    if not sep:  # name only what stands before the first ':' (the rest may be a password)
        head = re.match(r"[A-Za-z][A-Za-z0-9+.-]{0,19}", url)
        raise UnknownStoreURL(head.group(0).lower() if head else "", slashes=False)
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        raise UnknownStoreURL(scheme[:20])
    return scheme


def open_store(url: str | None = None, *, prefix: str = "rummy", idle_ttl: float = 0.0,
               request_ttl: float = 0.0, batch: bool = True,
               environ: Mapping[str, str] | None = None, **options: Any) -> EventStore:
    """A new event store for ``url`` (see the table above); the caller closes it.

    Args:
        url: the store URL; ``None`` or ``""``: a new in-memory store.
        prefix: the first part of every Redis key (ignored in memory).
        idle_ttl: seconds after which an active game without an append expires (0: never).
        request_ttl: seconds a finished game keeps its request records (0: forever).
        batch: group-commit appends and reads on a single Redis (:mod:`rummy_store.batching`).
        environ: replaces ``os.environ`` for the password file and CA of a Redis URL
            (:mod:`rummy_store.urls`).
        options: passed to the Redis client (``socket_timeout``, ``max_connections``, ...).

    Nothing connects yet: the first command does (a connection error comes from it).

    Raises:
        UnknownStoreURL: a URL no backend takes (a ``ValueError``).
        ValueError: a malformed Redis URL, a bad prefix or expiry.
        rummy_store.urls.SecretFileError: a password or CA file named by the environment
            cannot be used.
    """
    if store_scheme(url) == "memory":
        from rummy_store.memory import MemoryEventStore
        return MemoryEventStore(idle_ttl=idle_ttl, request_ttl=request_ttl)
    assert url is not None
    from rummy_store.redis_store import RedisEventStore
    return RedisEventStore.from_url(url, prefix=prefix, idle_ttl=idle_ttl,
                                    request_ttl=request_ttl, batch=batch, environ=environ,
                                    **options)


def open_game_store(url: str | None = None, *, archive_url: str | None = None,
                    archive_schema: str = "rummy", **kwargs: Any) -> Any:
    """:func:`open_store` behind a :class:`rummy_store.sealed.GameStore`: personal fields
    sealed (:mod:`rummy_store.shred`) and, with ``archive_url`` (PostgreSQL, psycopg), the
    archive of finished games read where Redis has no such game. Other arguments as
    :func:`open_store`. The game service, ``rummy replay``, ``rummy export`` and ``rummy
    erase`` use it.

    Raises:
        What :func:`open_store` raises; ``ValueError`` for a bad ``archive_schema``.
    """
    from rummy_store.archive import PgArchive
    from rummy_store.sealed import GameStore
    archive = PgArchive(archive_url, schema=archive_schema) if archive_url else None
    return GameStore(open_store(url, **kwargs), archive)
