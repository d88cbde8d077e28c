"""Prometheus metrics of the game service (docs/architecture.md, "Metrics").

Names follow Prometheus conventions: one ``rummy_`` prefix, base units (``_seconds``),
``_total`` for counters, and bounded label values only (command kinds, outcomes, event types,
gRPC method names; never a game or player id). Served by :func:`start_metrics_server`.
"""

from __future__ import annotations

import functools
from typing import Any

from prometheus_client import Counter, Gauge, Histogram, start_http_server

#: Microsecond-resolution buckets: rule validation takes microseconds to milliseconds.
VALIDATION_BUCKETS = (1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
                      2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1, 1.0)
LATENCY_BUCKETS = (1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25,
                   0.5, 1.0, 2.5, 5.0, 10.0)

RULE_VALIDATION_SECONDS = Histogram(
    "rummy_rule_validation_seconds",
    "Time to decide one command (validate it and derive its events), in seconds.",
    buckets=VALIDATION_BUCKETS)
COMMANDS_TOTAL = Counter(
    "rummy_commands_total",
    "Commands handled, by command kind and outcome (ok, illegal_move, version_conflict, ...).",
    ["command", "outcome"])
BOT_FAILURES_TOTAL = Counter(
    "rummy_bot_failures_total",
    "Bot moves that failed (the bot raised, or proposed a move the rules refuse) and were "
    "replaced by the phase's default move (draw, pass, end_turn), by bot strategy and why.",
    ["strategy", "reason"])
FOLLOW_UP_FAILURES = Counter(
    "rummy_follow_up_failures_total",
    "Appends whose follow-up work (snapshot, bot moves, the next due time) failed; the events "
    "stand, the call reports them applied; the replica retries that work with a back-off, and "
    "what is due stays due for every replica's due-games poll.")
EVENTS_APPENDED_TOTAL = Counter(
    "rummy_events_appended_total", "Events appended to the event store, by event type.",
    ["type"])
EVENT_APPEND_SECONDS = Histogram(
    "rummy_event_append_seconds", "Latency of one event-store append, in seconds.",
    buckets=LATENCY_BUCKETS)
GAMES_ACTIVE = Gauge(
    "rummy_games_active", "Games in progress known to this server process.")
STREAMS_OPEN = Gauge(
    "rummy_streams_open",
    "StreamEvents calls in progress on this server process (counted against the stream "
    "bounds from admission until the handler ends).")
RATE_LIMITED_TOTAL = Counter(
    "rummy_rate_limited_total",
    "Calls refused with RESOURCE_EXHAUSTED / RATE_LIMITED because their caller went past its "
    "rate limit, by limit kind (command: game calls; create: CreateGame).",
    ["kind"])
VIEW_READS_TOTAL = Counter(
    "rummy_view_reads_total",
    "Latest-state reads for GetView, by source: memory (known to be the latest through the "
    "store's append feed) or store (read from the event store).",
    ["source"])
VIEW_READS_MEMORY = VIEW_READS_TOTAL.labels("memory")
VIEW_READS_STORE = VIEW_READS_TOTAL.labels("store")
GRPC_SERVER_HANDLING_SECONDS = Histogram(
    "rummy_grpc_server_handling_seconds",
    "Time to handle one gRPC call on the server (whole stream for streaming calls), seconds.",
    ["method"], buckets=LATENCY_BUCKETS)
REPLIES_UNDELIVERED_TOTAL = Counter(
    "rummy_grpc_replies_undelivered_total",
    "Replies a handler finished but gRPC could not send because the client had gone (its "
    "deadline passed, it cancelled, its connection closed), by method. grpcio logs each at "
    "ERROR with a traceback; the server counts them here instead (rummy_grpc.server."
    "UndeliveredReplyFilter), so that clients with tight deadlines cannot flood the log.",
    ["method"])
GRPC_SERVER_HANDLED_TOTAL = Counter(
    "rummy_grpc_server_handled_total", "gRPC calls completed, by method and status code.",
    ["method", "code"])
RESULTS_APPENDED_TOTAL = Counter(
    "rummy_results_appended_total",
    "Summaries this server process appended to the results feed, by kind (created, ended, "
    "abandoned).", ["kind"])
RESULTS_DELIVERED_TOTAL = Counter(
    "rummy_results_delivered_total",
    "Results-feed entries sent on StreamResults by this process, by consumer group "
    "(redeliveries included).", ["group"])
RESULTS_ACKED_TOTAL = Counter(
    "rummy_results_acked_total",
    "Results-feed entries acknowledged through this process (AckResults), by group.",
    ["group"])
RESULTS_PENDING = Gauge(
    "rummy_results_pending",
    "Results-feed entries delivered to the group and not acknowledged (store-wide, as last "
    "read by this process), by consumer group.", ["group"])
RESULTS_LAG = Gauge(
    "rummy_results_lag",
    "Results-feed entries not yet delivered to the group (store-wide, as last read by this "
    "process; -1: unknown), by consumer group.", ["group"])
RESULTS_PARKED = Gauge(
    "rummy_results_parked",
    "Results-feed entries parked for the group after too many deliveries (store-wide, as "
    "last read by this process), by consumer group.", ["group"])
RESULTS_STREAMS = Gauge(
    "rummy_results_streams_open",
    "StreamResults calls in progress on this server process, by consumer group (0 on every "
    "replica: nobody consumes the group).", ["group"])
ARCHIVE_BACKLOG = Gauge(
    "rummy_archive_backlog",
    "Finished games past the retention period still in Redis, as this process's last "
    "archive pass found them (eligible, not moved by that pass; rummy serve "
    "--retain-finished).")
ARCHIVE_OVERDUE_SECONDS = Gauge(
    "rummy_archive_overdue_seconds",
    "Seconds past the retention period of the oldest eligible game the last archive pass "
    "found (0: none; grows when the archive falls behind).")
ARCHIVE_MOVED_TOTAL = Counter(
    "rummy_archive_moved_total",
    "Finished games moved from Redis to the archive by this process.")
ARCHIVE_FAILURES_TOTAL = Counter(
    "rummy_archive_failures_total",
    "Archive moves and passes that failed (retried by the next pass), by stage.", ["stage"])
ARCHIVE_FEED_TRIMMED_TOTAL = Counter(
    "rummy_archive_feed_trimmed_total",
    "Results-feed entries copied to the archive and trimmed from Redis by this process.")


def observe_feed(group: str, status: Any) -> None:
    """Set the feed gauges of ``group`` from a :class:`rummy_store.results.FeedStatus`
    (the group's counts, whichever consumer asked)."""
    child(RESULTS_PENDING, group).set(status.pending)
    child(RESULTS_LAG, group).set(status.lag)
    child(RESULTS_PARKED, group).set(status.parked)


@functools.cache
def child(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once per label set (every label value here is
    from a bounded set, so the cache is bounded too): ``labels()`` takes a lock and builds
    a key on every call, a cost paid on every gRPC call before."""
    return metric.labels(*labels)


def start_metrics_server(port: int, addr: str = "0.0.0.0") -> int:
    """Serve ``/metrics`` over HTTP on ``port`` (0: any free port) in a daemon thread.

    Returns:
        The port actually bound.
    """
    server, _thread = start_http_server(port, addr=addr)
    return int(server.server_address[1])
