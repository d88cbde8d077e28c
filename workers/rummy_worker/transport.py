"""kombu's Redis transport, made to survive any entry on its queues.

kombu's Redis channel decodes each entry it pops with ``json.loads`` and builds a message
of it; an entry that is not a kombu message (``LPUSH rummy-sim '{not json'``, a JSON value
without its properties, an undecodable body) raised out of the worker's event loop, and
Celery ended the whole worker ("Unrecoverable error: JSONDecodeError"). A key of the wrong
type on a queue's name (``SET rummy-sim x``) made every BRPOP fail the same way.

Here such an entry is logged and parked on the list ``<queue>.malformed`` (the last
:data:`PARKED_KEEP` entries, for an operator to read; at most :data:`MAX_ENTRY_BYTES` of an
entry is kept), and a key of the wrong type is renamed to ``<key>.malformed``; the worker
goes on consuming. Entries longer than :data:`MAX_ENTRY_BYTES` are parked undecoded
(a chunk task is a few kilobytes). What Celery itself refuses in a well-formed message (an
unregistered task, an undecodable body) it logs and acknowledges as before.

Celery uses this transport for ``redis://`` and ``rediss://`` brokers
(:mod:`rummy_worker.celery_app` sets ``broker_transport``).
"""

from __future__ import annotations

import logging
from queue import Empty
from typing import Any

import redis
from kombu.transport import redis as kombu_redis
from kombu.utils import encoding as _encoding
from kombu.utils import json as _json

bytes_to_str: Any = _encoding.bytes_to_str  # kombu's helpers, untyped
loads: Any = _json.loads

log = logging.getLogger("rummy_worker")

MAX_ENTRY_BYTES = 1 << 20  #: longer queue entries are parked without being decoded
PARKED_KEEP = 1000  #: parked entries kept per queue
PARKED_SUFFIX = ".malformed"


def _problem(payload: Any) -> str | None:
    """Why ``payload`` (a decoded queue entry) is not a kombu message, or ``None``."""
    if not isinstance(payload, dict):
        return f"a JSON {type(payload).__name__}, not a message"
    props = payload.get("properties")
    if not isinstance(props, dict):
        return "no properties"
    if not isinstance(props.get("delivery_tag"), str):
        return "no delivery tag"
    info = props.get("delivery_info")
    if not isinstance(info, dict) or not isinstance(info.get("routing_key", ""), str):
        return "no delivery info"
    if not isinstance(payload.get("headers", {}), dict):
        return "headers are not a mapping"
    if not isinstance(payload.get("body", ""), str):
        return "the body is not a string"
    return None


def _task_body_problem(payload: dict[str, Any], message: Any) -> str | None:
    """Why a JSON task message's body is not what Celery's protocol 2 unpacks
    (``[args, kwargs, embed]``: a list, a dict, a dict), or ``None``. Celery raises that
    ``ValueError`` in the consumer itself, which ends the worker with the message put back
    on the queue, so every worker that takes it dies. Only JSON bodies are looked at (a
    body of another content type is never deserialised here; Celery refuses what it does
    not accept)."""
    headers = payload.get("headers")
    if not isinstance(headers, dict) or "task" not in headers:
        return None
    if payload.get("content-type") != "application/json":
        return None
    body = message.decode()
    if not (isinstance(body, (list, tuple)) and len(body) == 3
            and isinstance(body[0], (list, tuple)) and isinstance(body[1], dict)
            and isinstance(body[2], dict)):
        return "a task message whose body is not [args, kwargs, embed] (Celery protocol 2)"
    return None


class Channel(kombu_redis.Channel):
    """A Redis channel that parks malformed queue entries instead of raising them."""

    def _full(self, key: str) -> str:
        """``key`` with the broker's global key prefix, for the commands kombu's prefixing
        client leaves alone (TYPE, RENAME, LTRIM)."""
        return (self.global_keyprefix or "") + key

    def _park(self, queue: str, item: bytes | str, why: str) -> None:
        raw = item if isinstance(item, bytes) else str(item).encode("utf-8", "replace")
        log.error("queue %s: dropped a malformed entry (%s; %d bytes: %r); parked on %s",
                  queue, why, len(raw), raw[:120], queue + PARKED_SUFFIX)
        try:
            with self.conn_or_acquire() as client:
                key = queue + PARKED_SUFFIX
                client.lpush(key, raw[:MAX_ENTRY_BYTES])  # kombu's client prefixes LPUSH
                client.ltrim(self._full(key), 0, PARKED_KEEP - 1)  # but not LTRIM
        except Exception as exc:  # noqa: BLE001 - parking is best effort: it is logged
            log.warning("could not park the entry on %s (%s)", queue + PARKED_SUFFIX, exc)

    def _message(self, queue: str, item: bytes | str) -> Any:
        """The decoded payload of a queue entry, or ``None`` (parked)."""
        if len(item) > MAX_ENTRY_BYTES:
            self._park(queue, item, f"longer than {MAX_ENTRY_BYTES} bytes")
            return None
        try:
            payload = loads(bytes_to_str(item))
        except Exception as exc:  # noqa: BLE001 - JSON, UTF-8: any decoding error
            self._park(queue, item, f"{type(exc).__name__}: {exc}")
            return None
        problem = _problem(payload)
        if problem is None:
            try:  # what kombu does with it first: decode the body, read the properties
                make: Any = self.Message
                problem = _task_body_problem(payload, make(payload, channel=self))
            except Exception as exc:  # noqa: BLE001
                problem = f"{type(exc).__name__}: {exc}"
        if problem is not None:
            self._park(queue, item, problem)
            return None
        return payload

    def _wrong_types(self) -> None:
        """Rename the keys of this channel's queues that are not lists (BRPOP fails on
        them) to ``<key>.malformed``."""
        me: Any = self
        with self.conn_or_acquire() as client:
            for queue in list(self.active_queues):
                for pri in self.priority_steps:
                    key = self._full(me._q_for_pri(queue, pri))
                    kind = bytes_to_str(client.type(key))
                    if kind not in ("list", "none"):
                        log.error("queue %s: key %r is a %s, not a list; renamed to %r",
                                  queue, key, kind, key + PARKED_SUFFIX)
                        client.rename(key, key + PARKED_SUFFIX)

    def _brpop_read(self, **options: Any) -> bool:
        """kombu's ``_brpop_read``, parking malformed entries (see the module)."""
        try:
            try:
                dest__item = self.client.parse_response(self.client.connection, "BRPOP",
                                                        **options)
            except self.connection_errors:
                self.client.connection.disconnect()
                raise
            except redis.exceptions.ResponseError as exc:
                if "WRONGTYPE" not in str(exc):
                    raise
                self._wrong_types()
                raise Empty() from None
            if not dest__item:
                raise Empty()
            dest, item = dest__item
            dest = bytes_to_str(dest).rsplit(self.sep, 1)[0]
            self._queue_cycle.rotate(dest)
            payload = self._message(dest, item)
            if payload is None:
                raise Empty()
            self.connection._deliver(payload, dest)
            return True
        finally:
            self._in_poll = None  # type: ignore[assignment]
            flush = getattr(self, "_flush_brpop_reauth", None)  # kombu >= 5.6
            if flush is not None:
                flush()

    def _get(self, queue: Any, timeout: Any = None) -> Any:
        """kombu's ``_get`` (a polling read), skipping malformed entries."""
        me: Any = self
        with self.conn_or_acquire() as client:
            for pri in self.priority_steps:
                while True:
                    item = client.rpop(me._q_for_pri(queue, pri))
                    if not item:
                        break
                    payload = self._message(queue, item)
                    if payload is not None:
                        me._maybe_update_queues_expire(client, queue)
                        return payload
            me._maybe_update_queues_expire(client, queue)
            raise Empty()


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`Channel`."""

    Channel = Channel
