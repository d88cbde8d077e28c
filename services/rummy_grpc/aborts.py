"""How an RPC handler turns an exception into a gRPC status: the one place for every
servicer (the game service and the results feed)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import grpc

from rummy_grpc.errors import map_error

log = logging.getLogger("rummy_grpc")
T = TypeVar("T")


async def abort(context: grpc.aio.ServicerContext, exc: BaseException) -> NoReturn:
    """End the call with the status :func:`rummy_grpc.errors.map_error` gives ``exc``
    (code, message and error details), or INTERNAL (logged) for an exception it does not
    know. Never returns."""
    mapped = map_error(exc)
    if mapped is None:
        log.exception("internal error", exc_info=exc)
        await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")
    else:
        await context.abort(mapped.code, mapped.message, mapped.trailing_metadata())
    raise AssertionError("unreachable")  # pragma: no cover


async def call(context: grpc.aio.ServicerContext, fn: Callable[[], Awaitable[T]]) -> T:
    """``await fn()``, every error mapped by :func:`abort` (an abort passes through)."""
    try:
        return await fn()
    except grpc.aio.AbortError:
        raise
    except Exception as exc:  # noqa: BLE001 - every error is mapped or reported INTERNAL
        await abort(context, exc)


__all__ = ["abort", "call"]
