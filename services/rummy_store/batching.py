"""One Redis round trip for the commands that a server's calls reach together.

A game server runs one asyncio task per call; under load many of them need Redis (an append
script, the ``XRANGE`` of a read) at about the same time. Sent one by one through redis-py,
each pays a round trip: the client's packing, a pool connection, a socket write, a wake-up
of the loop for the reply and its parsing, about 70-110 us of the server's CPU on this
project's machines, more than the rules and the view together.

:class:`CommandBatcher` is a group commit: a command that finds nothing in flight goes at
once, on its own (a caller alone pays nothing more); while a round trip is in flight, the
commands that arrive queue, and go together as one non-transactional pipeline as soon as
it returns (``ioredis``'s "auto-pipelining" is the same idea for Node.js). Measured in the
game server at 10 and 100 concurrent games, calls reach Redis about one loop tick apart:
batching the commands of one tick gave pipelines of 1.2-1.7 commands, waiting for the round
trip in flight about 3 (``benchmarks/bench_service.py`` prints the gain against
``rummy serve --no-batch``). A command waits at most one round trip longer, and never
more than :data:`HOLD_SECONDS` behind a slow one.

What it keeps of redis-py: the pool and its connections (their packing, the hiredis
reply parser, timeouts and errors), the reply parsing by command name (the client's
response callbacks). What it leaves out is the command layer around them: a round trip
takes a connection from the pool, writes every command of the batch in one send, reads the
replies in order and gives the connection back (``Redis.execute_command`` adds a retry
wrapper and a pipeline its own command stack; measured on one sequential ``XRANGE``,
137 against 102 us of client CPU, a one-command pipeline 133). The store's clients retry
nothing (``Retry(NoBackoff(), 0)``), so no retry is lost. A batch is not a transaction:
each command is still atomic on its own (the append script is one command) and the others
in the batch do not see or wait for it. A command's error (``NOSCRIPT``, a script's
``error_reply``, a value that cannot be packed) goes to its caller only; an error of the
whole round trip (a connection lost, a timeout) closes the connection and goes to every
caller of the batch, as it would have to each of them alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

__all__ = ["HOLD_SECONDS", "CommandBatcher"]

HOLD_SECONDS = 0.05
"""How long a round trip in flight holds back the commands queued behind it, at most. A
round trip takes about 0.1-2 ms here; one that takes longer (a connection that stopped
answering, until redis-py's socket timeout of 5 s) no longer stalls every game of the
server: the queue goes on other pool connections."""


class CommandBatcher:
    """Sends the commands that queue behind a round trip in flight as one pipeline.

    Args:
        client: a single-Redis ``redis.asyncio.Redis`` (not a cluster client: a cluster
            pipeline splits by node and is left to redis-py).
        max_in_flight: pipelines sent at once (default 1); further commands queue.
        hold: seconds a round trip holds its place in flight (default :data:`HOLD_SECONDS`):
            one slower than that (a stuck connection, until redis-py's socket timeout) no
            longer holds back the commands behind it, which go on other connections.

    :meth:`call` returns the command's parsed reply, or raises its error; a caller that is
    cancelled leaves the others of its batch alone.
    """

    def __init__(self, client: aioredis.Redis, max_in_flight: int = 1,
                 hold: float = HOLD_SECONDS) -> None:
        self._r = client
        self._max = max_in_flight
        self._hold = hold
        self._in_flight = 0
        self._scheduled = False
        self._pending: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.batches = 0
        """Round trips made (for tests and diagnostics)."""
        self.commands = 0
        """Commands sent (``commands / batches`` is the mean batch size)."""

    async def call(self, *args: Any) -> Any:
        """Send one command (``"EVALSHA", sha, numkeys, *keys, *argv``, ``"XRANGE", ...``),
        at once or with the others queued behind the round trip in flight; its reply as
        redis-py parses it.

        Raises:
            redis.exceptions.RedisError: the command's own error, or the round trip's.
        """
        if self._in_flight < self._max and not self._pending:  # idle: go at once, alone
            release = self._acquire()
            self.batches += 1
            self.commands += 1
            try:
                (result,) = await self._round_trip([args])
            finally:
                release()
            if isinstance(result, Exception):
                raise result
            return result
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((args, future))
        if not self._scheduled and self._in_flight < self._max:
            self._scheduled = True
            loop.call_soon(self._flush_soon)
        return await future

    def _acquire(self) -> Callable[[], None]:
        """Take a place in flight; returns its release (idempotent), which also runs by
        itself after ``hold`` seconds. A release lets what queued go next."""
        self._in_flight += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            timer.cancel()
            self._in_flight -= 1
            if self._pending and not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._flush_soon)

        timer = asyncio.get_running_loop().call_later(self._hold, release)
        return release

    def _flush_soon(self) -> None:
        self._scheduled = False
        if not self._pending or self._in_flight >= self._max:
            return
        batch, self._pending = self._pending, []
        release = self._acquire()
        task = asyncio.ensure_future(self._send(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: release())

    async def _send(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any]]]) -> None:
        live = [(args, future) for args, future in batch if not future.done()]
        if not live:
            return
        self.batches += 1
        self.commands += len(live)
        try:
            results = await self._round_trip([args for args, _ in live])
        except BaseException as exc:  # the round trip failed (or the server is stopping)
            for _, future in live:
                if not future.done():
                    if isinstance(exc, asyncio.CancelledError):
                        future.cancel()
                    else:
                        future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, future), result in zip(live, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _round_trip(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Send ``commands`` in one write on a pooled connection and read their replies:
        each parsed as ``Redis.execute_command`` parses it, or the command's own error as
        the value (a Redis error reply; a command the connection cannot pack, a lone
        surrogate or a bool say, which is then not sent). The connection always goes back
        to the pool, closed if the round trip failed.

        Raises:
            redis.exceptions.ConnectionError, TimeoutError, asyncio.CancelledError: the
                round trip failed (the connection is closed: replies may be pending on it).
        """
        pool = self._r.connection_pool
        conn = await pool.get_connection()  # type: ignore[no-untyped-call]
        results: list[Any] = [None] * len(commands)
        sent: list[int] = []
        packed: list[bytes] = []
        try:
            for i, args in enumerate(commands):
                try:
                    packed += conn.pack_command(*args)
                    sent.append(i)
                except Exception as exc:  # noqa: BLE001 - DataError, UnicodeError, an int
                    results[i] = exc  # past str()'s limit (ValueError): this caller's own
            if packed:
                await conn.send_packed_command(packed)
            callbacks = self._r.response_callbacks
            for i in sent:
                try:
                    reply = await conn.read_response()
                except ResponseError as exc:
                    results[i] = exc
                    continue
                parse = callbacks.get(commands[i][0])
                results[i] = reply if parse is None else parse(reply)
                if inspect.isawaitable(results[i]):  # as Redis.parse_response allows
                    results[i] = await results[i]
        except BaseException:
            with contextlib.suppress(Exception):
                await conn.disconnect()
            raise
        finally:
            await pool.release(conn)
        return results

    async def close(self) -> None:
        """Wait for the round trips in flight (their callers get their replies)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
