"""Assemble and run the gRPC server: GameService (metrics and request decoding wrapped around
every handler at registration) + health + reflection.

``create_server(address, store) -> (server, port)`` binds (port 0: any free port, as tests
do) and returns a :class:`RummyServer` not yet started; :func:`serve` runs one until SIGTERM or
SIGINT and shuts it down gracefully (health NOT_SERVING, in-flight calls get ``grace``
seconds, timers and bot tasks cancelled, the store closed).

With a :class:`~rummy_grpc.tls.TlsConfig` the one port serves TLS only (mutual TLS with a
client CA), for every service on it: GameService, health and reflection. Certificates reload
without a restart when their files change, or on SIGHUP under :func:`serve`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import re
import signal
from collections.abc import Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_store.base import EventStore

from rummy_grpc import metrics
from rummy_grpc.app import GameApp
from rummy_grpc.callers import CallerGate, CallerPolicy
from rummy_grpc.decoding import add_decoding_servicer
from rummy_grpc.limits import (
    MAX_STREAMS,
    MAX_STREAMS_PER_CLIENT,
    MAX_STREAMS_PER_GAME,
    RateLimiter,
    StreamLimits,
)
from rummy_grpc.model import (
    IDLE_EXPIRY,
    LEASE_SECONDS,
    MAX_EVENTS,
    POLL_SECONDS,
    RATE_BURST,
    RATE_CREATE_BURST,
    RATE_EVENTS_BURST,
    REQUEST_WINDOW,
)
from rummy_grpc.servicer import GameServicer
from rummy_grpc.tls import CertReloader, TlsConfig
from rummy_grpc.warmup import warm_bots

log = logging.getLogger("rummy_grpc")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["GameService"].full_name
"""``rummy_api.v1.GameService``: the name health checks and reflection report."""
MAX_MESSAGE_BYTES = 1 << 20
HEALTH_INTERVAL = 2.0
"""Seconds between two pings of the event store by the health watcher."""
"""Largest request or response message accepted (1 MiB); larger requests get
RESOURCE_EXHAUSTED before any handler runs."""


GRPC_CORE_LOGGER = "grpc._cython.cygrpc"
"""The logger grpcio's asyncio server core writes to."""
_UNDELIVERED = "ExecuteBatchError raised in core by servicer method"
_METHOD = re.compile(r"\[(/[A-Za-z0-9_.]+/[A-Za-z0-9_]+)\]")


class UndeliveredReplyFilter(logging.Filter):
    """Turns grpcio's ERROR-with-traceback for a reply that could not be sent into a count.

    When a client's deadline passes, or it cancels, while the server is sending the reply,
    grpcio's asyncio core logs ``ExecuteBatchError raised in core by servicer method
    [/pkg.Service/Method]`` at ERROR with a nine-line traceback, although nothing is wrong
    with the server: the client is gone. A client that sends calls with tight deadlines
    could fill the log with them and hide real errors. This filter, installed on the
    ``grpc._cython.cygrpc`` logger by :func:`install_undelivered_reply_filter`, drops those
    records (and only those), counting each in ``rummy_grpc_replies_undelivered_total
    {method}`` and writing one DEBUG line to the ``rummy_grpc`` logger. The method label is
    the path in the message when it is a well-formed ``/package.Service/Method`` (gRPC only
    runs handlers of registered methods), else ``other``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot format is not ours to judge
            return True
        if not message.startswith(_UNDELIVERED):
            return True
        found = _METHOD.search(message)
        method = found.group(1) if found else "other"
        metrics.child(metrics.REPLIES_UNDELIVERED_TOTAL, method).inc()
        log.debug("reply to %s not delivered: the client had gone (deadline or cancel)",
                  method)
        return False


def install_undelivered_reply_filter() -> UndeliveredReplyFilter:
    """Install :class:`UndeliveredReplyFilter` on grpcio's core logger, once per process.

    Returns:
        The installed filter (the one already there on a second call).
    """
    core = logging.getLogger(GRPC_CORE_LOGGER)
    for f in core.filters:
        if isinstance(f, UndeliveredReplyFilter):
            return f
    f = UndeliveredReplyFilter()
    core.addFilter(f)
    return f


class MetricsPortError(RuntimeError):
    """The Prometheus endpoint could not bind its port (taken, or not usable)."""


class RummyServer:
    """A bound, not yet started server. ``app`` is its :class:`GameApp`, ``streams`` its
    :class:`~rummy_grpc.limits.StreamLimits` (``streams.open``: handlers streaming now),
    ``gate`` its :class:`~rummy_grpc.callers.CallerGate` (known callers, rate limits), ``tls``
    its :class:`~rummy_grpc.tls.CertReloader` (``None``: plaintext)."""

    def __init__(self, server: grpc.aio.Server, app: GameApp,
                 health_servicer: Any, *, health_interval: float = HEALTH_INTERVAL,
                 streams: StreamLimits | None = None, gate: CallerGate | None = None,
                 tls: CertReloader | None = None) -> None:
        self.grpc_server = server
        self.app = app
        self.streams = streams if streams is not None else StreamLimits()
        """The open ``StreamEvents`` calls and their bounds."""
        self.gate = gate if gate is not None else CallerGate()
        self.tls = tls
        self.health = health_servicer
        self.health_interval = health_interval
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start serving, then resume the store's active games (timers, bots) and report
        SERVING to health checks; from then on health follows the store (:meth:`watch`).

        Before SERVING, the solver bots the server offers are warmed
        (:func:`rummy_grpc.warmup.warm_bots`: their compiled kernels, once per process; 1 s
        from numba's cache, 18-50 s with an empty one). Until then (and for good if this
        raises, e.g. the store is unreachable) health checks of ``""`` and
        ``rummy_api.v1.GameService`` answer NOT_SERVING.

        Raises:
            rummy_store.base.StoreAccessDenied: the store's user may not run a command the
                service needs (``EventStore.check_access``): nothing is served.
        """
        await self.app.store.check_access()
        await self.grpc_server.start()
        await self.app.start()
        # the solver bots' compiled kernels, before SERVING: never inside a client's call
        await asyncio.to_thread(warm_bots, self.app.bot_strategies)
        await self._set_health(True)
        self._watch = asyncio.get_running_loop().create_task(self.watch())

    async def _set_health(self, serving: bool) -> None:
        status = (health_pb2.HealthCheckResponse.SERVING if serving
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.health.set_all(status)

    async def watch(self) -> None:
        """Ping the store every ``health_interval`` seconds, and at once when the server's
        background work saw a store call fail (``GameApp.store_trouble``: the due-games
        poll, every ``POLL_SECONDS``, meets a refused connection first): health is
        NOT_SERVING while the store does not answer within ``health_interval``, and
        SERVING again once it does. A Redis that hangs and one that is gone (SIGKILL,
        connection refused) both turn health NOT_SERVING within one ping interval."""
        serving = True
        trouble = self.app.store_trouble
        while True:
            woken = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(trouble.wait(), timeout=self.health_interval)
                woken = True
            trouble.clear()
            try:
                await asyncio.wait_for(self.app.store.ping(), timeout=self.health_interval)
                up = True
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - any failure: the store is not serving
                up = False
            if up != serving:
                serving = up
                log.warning("event store %s; health %s", "answers again" if up
                            else ("does not answer (a store call failed, pinged at once)"
                                  if woken else "does not answer"),
                            "SERVING" if up else "NOT_SERVING")
                await self._set_health(up)

    async def stop(self, grace: float | None = 5.0) -> None:
        """Graceful shutdown: NOT_SERVING, refuse new calls, give in-flight calls ``grace``
        seconds (``None``: cancel at once), then cancel timers and bot tasks."""
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(BaseException):
                await self._watch
        await self.health.enter_graceful_shutdown()
        await self.grpc_server.stop(grace)
        await self.app.close()

    def reload_tls(self) -> bool:
        """Make new connections load the certificate files again (SIGHUP). The files are
        checked now, so a bad set is reported at once; the current certificate stays in use
        until a good set is in place. Returns True when the files check out (False: they do
        not, or the server has no TLS)."""
        if self.tls is None:
            log.warning("SIGHUP: no TLS configured; nothing to reload")
            return False
        from rummy_grpc.tls import TlsError, load_key_pair
        try:
            load_key_pair(self.tls.config)
        except TlsError as exc:
            log.warning("SIGHUP: keeping the current TLS certificate: %s", exc)
            return False
        self.tls.request_reload()
        log.info("SIGHUP: new connections will use the TLS files now in %s", self.tls.config.cert)
        return True

    async def wait_for_termination(self) -> None:
        """Block until the server stops."""
        await self.grpc_server.wait_for_termination()


class HealthService(health.aio.HealthServicer):  # type: ignore[misc]
    """The standard health service (grpcio-health-checking) with ``List`` served: the
    library's ``List`` answers UNIMPLEMENTED and logs a traceback on every call. The
    statuses are the ones set through :meth:`set` and :meth:`set_all` (and NOT_SERVING for
    all after :meth:`enter_graceful_shutdown`), overall status ``""`` included.

    Unlike the library's servicer, which starts with ``""`` SERVING, the overall status
    ``""`` and every name in ``services`` start NOT_SERVING: the server says SERVING only
    once it has started."""

    def __init__(self, services: tuple[str, ...] = ()) -> None:
        super().__init__()
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
        self._statuses: dict[str, int] = {name: not_serving for name in ("", *services)}
        # no watcher can exist yet: setting the library's table directly is what its
        # own ``_set`` does in that case
        self._server_status.update(self._statuses)
        self._closing = False

    async def set_all(self, status: int) -> None:
        """Set every known service, ``""`` included, to ``status`` at once: a ``Check`` or
        ``List`` never sees two of them disagree (ignored after a graceful shutdown began).
        ``Watch`` calls are woken afterwards, each sees the new status."""
        if self._closing:
            return
        for name in self._statuses:  # no await in this loop: one step of the event loop
            self._statuses[name] = status
            self._server_status[name] = status
        for name in list(self._statuses):
            if name in self._server_watchers:  # a defaultdict: test before indexing
                condition = self._server_watchers[name]
                async with condition:
                    condition.notify_all()

    async def set(self, service: str, status: int) -> None:
        """Set a service's status (ignored after a graceful shutdown began)."""
        if not self._closing:
            self._statuses[service] = status
        await super().set(service, status)

    async def enter_graceful_shutdown(self) -> None:
        """Every service NOT_SERVING, for good."""
        self._closing = True
        for service in self._statuses:
            self._statuses[service] = health_pb2.HealthCheckResponse.NOT_SERVING
        await super().enter_graceful_shutdown()

    async def List(self, request: health_pb2.HealthListRequest,
                   context: grpc.aio.ServicerContext) -> health_pb2.HealthListResponse:
        """Every known service and its status (grpc.health.v1.Health/List)."""
        return health_pb2.HealthListResponse(statuses={
            name: health_pb2.HealthCheckResponse(status=status)
            for name, status in self._statuses.items()})


def create_server(address: str, store: EventStore, *, admin_token: str | None = None,
                  max_message_bytes: int = MAX_MESSAGE_BYTES, bot_delay: float = 0.0,
                  cache_size: int = 4096,
                  health_interval: float = HEALTH_INTERVAL, lease: float = LEASE_SECONDS,
                  poll: float = POLL_SECONDS, max_events: int = MAX_EVENTS,
                  request_window: float = REQUEST_WINDOW, reuse_port: bool = False,
                  max_streams_per_game: int = MAX_STREAMS_PER_GAME,
                  max_streams_per_client: int = MAX_STREAMS_PER_CLIENT,
                  max_streams: int = MAX_STREAMS, tls: TlsConfig | None = None,
                  callers: CallerPolicy | None = None, rate_commands: float = 0.0,
                  rate_burst: int = RATE_BURST, rate_create: float = 0.0,
                  rate_create_burst: int = RATE_CREATE_BURST,
                  rate_events: float = 0.0, rate_events_burst: int = RATE_EVENTS_BURST,
                  read_feed: bool = False,
                  bot_strategies: Sequence[str] | None = None,
                  hints: bool = True,
                  retain_finished: float = 0.0) -> tuple[RummyServer, int]:
    """Build the server and bind ``address`` (``"127.0.0.1:0"`` picks a free port).

    Args:
        address: ``host:port`` to listen on: plaintext without ``tls``, TLS only with it.
        store: the event store games live in.
        admin_token: full-information token (default: env ``RUMMY_ADMIN_TOKEN``).
        max_message_bytes: the receive and send message size limit.
        bot_delay: seconds between two bot commands (demo pacing; 0 in tests).
        cache_size: games whose latest state stays in memory.
        health_interval: seconds between two pings of the store by the health watcher.
        lease: seconds a replica reserves a due game it claimed (a dead replica's games go
            on through another one after at most this long).
        poll: seconds between two polls of the store's due games.
        max_events: cap of events per game (commands past it: FAILED_PRECONDITION).
        request_window: seconds a CreateGame request id is remembered.
        reuse_port: bind with ``SO_REUSEPORT`` (several processes on one port,
            ``rummy serve --processes``); off by default, so a taken port is an error.
        max_streams_per_game: open ``StreamEvents`` calls allowed on one game.
        max_streams_per_client: open streams allowed to one client (its seat token, else
            its caller: API key name, certificate CN, else host).
        max_streams: open streams allowed on this server. Past any of the three bounds a new
            stream fails at once with ``RESOURCE_EXHAUSTED`` (reason ``STREAM_LIMIT``).
        tls: certificate, key and optional client CA (mutual TLS); ``None``: plaintext.
        callers: the known callers (API keys, client-certificate names); when any is
            configured, ``CreateGame`` and admin requests need one (``None``: open).
        rate_commands: game calls (all but ``CreateGame``) per second per caller; 0: no
            limit (the default here; ``rummy serve`` defaults to ``RATE_COMMANDS``).
        rate_burst: bucket size of that limit, in calls.
        rate_create: ``CreateGame`` calls per second per caller; 0: no limit.
        rate_create_burst: bucket size of that limit, in calls.
        rate_events: events read with ``GetEvents`` per second per caller, a page priced by
            its size (0: no limit; ``rummy serve`` defaults to ``RATE_EVENTS``).
        rate_events_burst: bucket size of that limit, in events.
        read_feed: ``GetView`` from memory while the store's append feed is live
            (:class:`GameApp`'s ``read_feed``; ``rummy serve --read-feed``).
        bot_strategies: the bot strategies ``CreateGame`` may seat (default
            ``rummy_grpc.app.SERVED_BOTS``: all but ``search``).
        hints: serve ``GetHint`` (False: refused with ``HINTS_DISABLED``,
            ``rummy serve --hints off``).
        retain_finished: seconds a finished game stays in Redis before the archive mover
            moves it (0: off; ``rummy serve --retain-finished``; needs a store with an
            archive, :func:`rummy_store.factory.open_game_store`).

    Returns:
        ``(server, port)``: call ``await server.start()``; ``port`` is the bound port.

    Raises:
        RuntimeError: the address could not be bound.
        ValueError: a stream bound is not a positive integer, a bad rate or burst.
        TlsError: (a ValueError) a TLS file is missing, unreadable, not PEM, or the key
            does not match the certificate.
    """
    install_undelivered_reply_filter()
    streams = StreamLimits(max_streams_per_game, max_streams_per_client, max_streams)
    gate = CallerGate(callers, RateLimiter(rate_commands, rate_burst, kind="command"),
                      RateLimiter(rate_create, rate_create_burst, kind="create"),
                      RateLimiter(rate_events, rate_events_burst, kind="events"))
    reloader = CertReloader(tls) if tls is not None else None
    if admin_token is None:
        admin_token = os.environ.get("RUMMY_ADMIN_TOKEN") or None
    app = GameApp(store, admin_token=admin_token, bot_delay=bot_delay, cache_size=cache_size,
                  lease=lease, poll=poll, max_events=max_events,
                  request_window=request_window, read_feed=read_feed,
                  bot_strategies=bot_strategies, retain_finished=retain_finished)
    server = grpc.aio.server(
        options=[("grpc.max_receive_message_length", max_message_bytes),
                 ("grpc.max_send_message_length", max_message_bytes),
                 ("grpc.so_reuseport", 1 if reuse_port else 0)])
    # the generated registration, with requests decoded inside the call: undecodable bytes
    # get INVALID_ARGUMENT (MALFORMED) instead of grpcio's UNKNOWN and logged traceback
    add_decoding_servicer(pb_grpc.add_GameServiceServicer_to_server,
                          GameServicer(app, streams, gate, hints=hints), server)
    health_servicer = HealthService((SERVICE_NAME,))
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    if reloader is not None:
        port = server.add_secure_port(address, reloader.credentials())
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise RuntimeError(f"could not bind {address}")
    return RummyServer(server, app, health_servicer, health_interval=health_interval,
                       streams=streams, gate=gate, tls=reloader), port


GC_THRESHOLD = (20_000, 20, 20)
"""The collector's thresholds while serving (:func:`tune_gc`)."""


def tune_gc() -> None:
    """Once started, move every object alive to the collector's permanent generation
    (``gc.freeze``: modules, the rules' tables, the solver's kernels are never scanned
    again) and collect the young generation every 20,000 allocations instead of 700: a
    served move allocates a few hundred short-lived objects, and a full scan of the
    startup heap every few moves cost about 3% of the server's CPU (py-spy, native)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def make_store(kind: str, redis_url: str | None, prefix: str = "rummy", *,
               idle_ttl: float = IDLE_EXPIRY,
               request_ttl: float = REQUEST_WINDOW, batch: bool = True,
               archive_url: str | None = None, archive_schema: str = "rummy") -> EventStore:
    """The event store for ``rummy serve``: ``"redis"`` (needs ``redis_url``) or ``"memory"``.

    Args:
        kind, redis_url, prefix: which store, where, under which key prefix.
        idle_ttl: seconds after which a game without an append expires (0: never).
        request_ttl: seconds a finished game keeps its request records (0: forever).
        batch: group-commit the Redis appends and reads (those that queue behind a round
            trip in flight go together; :mod:`rummy_store.batching`); False: one round trip
            each.
        archive_url, archive_schema: the PostgreSQL archive of finished games (None: none).

    The store is built by :func:`rummy_store.factory.open_game_store` (the one factory of
    every command that takes a store URL: a single Redis or a Redis Cluster), which seals
    the seat names (:mod:`rummy_store.shred`) and reads archived games.

    Raises:
        ValueError: an unknown kind, ``"redis"`` without a URL, a negative expiry, a URL no
            backend takes (``rummy_store.factory.UnknownStoreURL``).
    """
    from rummy_store.factory import open_game_store
    if kind == "memory":
        return open_game_store("memory://", idle_ttl=idle_ttl,  # type: ignore[no-any-return]
                               request_ttl=request_ttl)
    if kind == "redis":
        if not redis_url:
            raise ValueError("--store redis needs --redis-url")
        return open_game_store(redis_url, prefix=prefix,  # type: ignore[no-any-return]
                               idle_ttl=idle_ttl, request_ttl=request_ttl, batch=batch,
                               archive_url=archive_url, archive_schema=archive_schema)
    raise ValueError(f"unknown store {kind!r}: memory or redis")


async def serve(address: str, store: EventStore, *, metrics_port: int | None = None,
                grace: float = 5.0, ready: Any = None, **options: Any) -> None:
    """Run the server until SIGTERM/SIGINT, then shut down gracefully and close the store.

    Args:
        address: ``host:port`` to bind.
        store: the event store (closed on exit).
        metrics_port: serve Prometheus ``/metrics`` on this port (``None``: no endpoint).
        grace: seconds in-flight calls get at shutdown.
        ready: optional callable ``ready(port)`` called once serving.
        options: passed to :func:`create_server`.
    """
    if metrics_port is not None:
        from rummy_grpc.metrics import start_metrics_server
        host = address.rsplit(":", 1)[0].strip("[]")
        try:
            bound = start_metrics_server(metrics_port,
                                         host if host not in ("", "::") else "0.0.0.0")
        except (OSError, OverflowError) as e:
            raise MetricsPortError(f"cannot serve metrics on port {metrics_port}: "
                                   f"{getattr(e, 'strerror', None) or e}") from None
        log.info("metrics on :%d/metrics", bound)
    server, port = create_server(address, store, **options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, server.reload_tls)
    if server.gate.policy.enforced and server.tls is None:
        log.warning("API keys are configured but the server has no TLS: keys travel in "
                    "clear text; use --tls-cert/--tls-key (or a TLS proxy in front)")
    try:
        await server.start()
    except BaseException:  # e.g. the store is unreachable: stop cleanly, then say why
        await server.stop(None)
        await store.close()
        raise
    tune_gc()
    log.info("rummy gRPC server listening on port %d (%s)", port,
             "plaintext" if server.tls is None
             else "mutual TLS" if server.tls.config.mutual else "TLS")
    if ready is not None:
        ready(port)
    try:
        await stop.wait()
    finally:
        log.info("shutting down (grace %.1fs)", grace)
        await server.stop(grace)
        await store.close()
