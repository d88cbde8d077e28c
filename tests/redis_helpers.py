"""Helpers for tests that use the real Redis (``RUMMY_TEST_REDIS_URL``, default
``redis://127.0.0.1:6379/0``), shared by the contract and the service suites."""

from __future__ import annotations

import functools
import os

import redis
import redis.asyncio as aioredis

REDIS_URL = os.environ.get("RUMMY_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@functools.cache
def redis_unreachable() -> str | None:
    """None if the test Redis answers PING, else why not."""
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        try:
            client.ping()
        finally:
            client.close()
    except redis.RedisError as exc:
        return f"Redis at {REDIS_URL} is unreachable: {exc}"
    return None


async def delete_prefix(prefix: str) -> None:
    """Delete every key under ``prefix:``."""
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
