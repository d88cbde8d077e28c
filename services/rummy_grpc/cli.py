"""Service subcommands for the ``rummy`` console command (wired lazily by ``rummy_cli/main.py``,
since the core never imports grpc or redis):

* ``rummy serve [--redis-url URL] [--port P] [--metrics-port M] [--store memory|redis]
  [--max-streams-per-game N] [--max-streams-per-client N] [--max-streams N]
  [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]] [--api-keys FILE]
  [--allow-client-cn NAME ...] [--admin-token-file FILE] [--rate-commands R/s]
  [--rate-burst N] [--rate-create R/s] [--rate-create-burst N] [--rate-events E/s]
  [--rate-events-burst N] [--read-feed] [--uvloop] [--no-batch]``;
  ``rummy serve --new-api-key NAME`` / ``--hash-api-key NAME`` print an ``--api-keys`` line
* ``rummy export GAME_ID [--redis-url URL] > game.jsonl`` (one ``rummy.events.dumps`` line per
  event: the file format ``rummy replay FILE`` reads)
* ``rummy replay --redis-url URL GAME_ID [--step] [--at N]`` (registered here only when the
  core's parser has no ``replay`` of its own, e.g. under ``python -m rummy_grpc``)

``add_parsers(subparsers)`` registers all three; ``add_serve_parser``, ``add_export_parser`` and
``add_replay_parser`` register one each.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any, TextIO, cast

from rummy.events import Event, dumps
from rummy_grpc.model import (
    IDLE_EXPIRY,
    LEASE_SECONDS,
    MAX_EVENTS,
    MAX_STREAMS,
    MAX_STREAMS_PER_CLIENT,
    MAX_STREAMS_PER_GAME,
    POLL_SECONDS,
    RATE_BURST,
    RATE_COMMANDS,
    RATE_CREATE,
    RATE_CREATE_BURST,
    RATE_EVENTS,
    RATE_EVENTS_BURST,
    REQUEST_WINDOW,
)
from rummy_grpc.serve_options import api_key_line, serve_security

LOCAL_REDIS = "redis://127.0.0.1:6379/0"
DEFAULT_REDIS_URL = os.environ.get("RUMMY_REDIS_URL", LOCAL_REDIS)
"""Where ``export`` and ``replay`` look without ``--redis-url``."""


def _int_in(low: int, high: int | None, what: str, rule: str) -> Any:
    """An ``argparse`` type: an integer ``low..high`` (``high`` None: no upper bound);
    ``what`` names the value in the error for a non-integer, ``rule`` states the range."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{rule}, got {value}")
        return value
    return parse


_positive = _int_in(1, None, "an integer", "must be > 0")
"""An ``argparse`` type: an integer > 0."""
_port = _int_in(0, 65535, "a port number", "a port is 0..65535")
"""An ``argparse`` type: a TCP port, 0..65535."""


def _seconds(text: str) -> float:
    """An ``argparse`` type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _positive_seconds(text: str) -> float:
    """An ``argparse`` type: a finite number of seconds > 0."""
    value = _seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def _rate(text: str) -> float:
    """An ``argparse`` type: calls per second, ``R`` or ``R/s``, finite and >= 0."""
    body = text.strip()
    if body.endswith("/s"):
        body = body[:-2]
    try:
        value = float(body)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a rate (calls per second, e.g. 50 or 50/s): "
                                         f"{text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite rate >= 0, got {text}")
    return value


def add_serve_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``serve`` on an ``argparse`` subparsers object; returns its parser."""
    p = sub.add_parser(
        "serve", help="run the gRPC game service",
        description="Run the event-sourced gRPC game service (rummy_api.v1.GameService, with "
        "health and reflection). Without --redis-url games live in an embedded in-memory store "
        "and vanish on exit. SIGTERM/SIGINT shut it down gracefully.")
    p.add_argument("--redis-url", help="event store Redis URL, e.g. redis://127.0.0.1:6379/0, "
                   "or a Redis Cluster: redis+cluster://host:port[,host:port...]")
    p.add_argument("--store", choices=("memory", "redis"),
                   help="event store (default: redis with --redis-url, else memory)")
    p.add_argument("--prefix", default="rummy", help="event store key prefix (default rummy)")
    p.add_argument("--host", default="0.0.0.0", help="address to bind (default 0.0.0.0)")
    p.add_argument("--port", type=_port, default=50051,
                   help="gRPC port, 0..65535 (default 50051; 0: any free port)")
    p.add_argument("--metrics-port", type=_port,
                   help="serve Prometheus /metrics on this port, 1..65535, or 0 for any "
                   "free port (logged at start; default: off)")
    p.add_argument("--grace", type=_seconds, default=5.0,
                   help="seconds in-flight calls get at shutdown (default 5)")
    p.add_argument("--bot-delay", type=_seconds, default=0.0,
                   help="seconds between two server-bot commands (default 0)")
    p.add_argument("--max-streams-per-game", type=_positive, default=MAX_STREAMS_PER_GAME,
                   metavar="N", help="open StreamEvents calls allowed on one game; past it a "
                   f"new stream gets RESOURCE_EXHAUSTED (default {MAX_STREAMS_PER_GAME})")
    p.add_argument("--max-streams-per-client", type=_positive, default=MAX_STREAMS_PER_CLIENT,
                   metavar="N", help="open streams allowed to one client: its seat token, "
                   "else its caller (API key name, certificate CN, else host) (default "
                   f"{MAX_STREAMS_PER_CLIENT})")
    p.add_argument("--max-streams", type=_positive, default=MAX_STREAMS, metavar="N",
                   help=f"open streams allowed on this server (default {MAX_STREAMS})")
    p.add_argument("--port-file", help="write the bound port to this file once serving")
    p.add_argument("--lease", type=_positive_seconds, default=LEASE_SECONDS, metavar="SECONDS",
                   help="seconds a replica reserves a due game (bot turn, turn deadline) it "
                   "claimed; a dead replica's games go on through another after at most "
                   f"this long (default {LEASE_SECONDS:g})")
    p.add_argument("--poll", type=_positive_seconds, default=POLL_SECONDS, metavar="SECONDS",
                   help=f"seconds between two polls of the due games (default {POLL_SECONDS:g})")
    p.add_argument("--max-events", type=_positive, default=MAX_EVENTS, metavar="N",
                   help="cap of events per game; commands past it get FAILED_PRECONDITION "
                   f"GAME_LIMIT and the game stops (default {MAX_EVENTS})")
    p.add_argument("--bot-strategies", type=_strategies, default=None, metavar="LIST",
                   help="comma-separated bot strategies CreateGame may seat (default: all "
                   "but search, whose moves cost ~100x a strategic move's CPU; add it "
                   "only for trusted callers: docs/security.md)")
    p.add_argument("--hints", choices=("on", "off"), default="on",
                   help="serve GetHint, the solver's best play for the seat to act (CPU "
                   "work priced in the rate limit); off: GetHint answers "
                   "FAILED_PRECONDITION HINTS_DISABLED (default on)")
    p.add_argument("--read-feed", action="store_true",
                   help="answer GetView from memory while the store's append feed (Redis "
                   "pub/sub, a single Redis only) shows the cached state is the latest: "
                   "saves a Redis read per GetView when clients poll; a view from one "
                   "process then trails another process's append by the notification's "
                   "delay, and a cached state is read again at least every second (a "
                   "bound for writers that do not announce: every server on the store "
                   "should run a release with the feed). Needs --redis-url, a single "
                   "Redis. Default: every GetView reads the store (docs/architecture.md)")
    p.add_argument("--uvloop", action="store_true",
                   help="run on uvloop's event loop (libuv) instead of asyncio's: 7-17%% "
                   "less server CPU per call in A/B runs, within the noise in others "
                   "(docs/benchmarks.md). Default: asyncio's loop")
    p.add_argument("--no-batch", action="store_true",
                   help="send every Redis command on its own round trip. Default: a group "
                   "commit: an append or read that finds no round trip in flight goes at "
                   "once; those that arrive meanwhile go together in one pipeline when it "
                   "returns (or after 0.05 s if it is slow), which saves server CPU under "
                   "load (rummy_store.batching)")
    p.add_argument("--request-window", type=_seconds, default=REQUEST_WINDOW,
                   metavar="SECONDS", help="idempotency window: seconds a CreateGame request "
                   "id is remembered, and a finished game keeps its commands' request ids "
                   f"(default {REQUEST_WINDOW:g})")
    p.add_argument("--processes", type=_positive, default=1, metavar="N",
                   help="run N server processes on one port (SO_REUSEPORT), one per core; "
                   "needs --redis-url; copy i serves metrics on --metrics-port + i (with "
                   "--metrics-port 0, each on a free port); a copy that dies is started "
                   "again (default 1)")
    p.add_argument("--reuse-port", action="store_true",
                   help="bind with SO_REUSEPORT so several processes share the port (set by "
                   "--processes for its copies)")
    p.add_argument("--idle-expiry", type=_seconds, default=IDLE_EXPIRY, metavar="SECONDS",
                   help="seconds after which a game with no new event expires with all its "
                   "data (an abandoned game; finished games are kept; 0: never; default "
                   f"{IDLE_EXPIRY:g} = 7 days)")
    from rummy_grpc.archiving import add_retention_options
    add_retention_options(p)
    sec = p.add_argument_group(
        "transport security and callers",
        "TLS, client certificates, API keys and per-caller rate limits (docs/security-"
        "transport.md). Without --api-keys or --allow-client-cn, CreateGame and admin "
        "requests are open to every caller.")
    sec.add_argument("--tls-cert", metavar="FILE",
                     help="PEM certificate chain: serve TLS only (needs --tls-key); reloaded "
                     "when the file changes or on SIGHUP")
    sec.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    sec.add_argument("--tls-client-ca", metavar="FILE",
                     help="PEM CA(s): require client certificates signed by it (mutual TLS)")
    sec.add_argument("--api-keys", metavar="FILE",
                     help="known callers' API keys, one name:sha256hex a line (only digests "
                     "at rest); clients send 'authorization: Bearer <key>'")
    sec.add_argument("--allow-client-cn", action="append", default=[], metavar="NAME",
                     help="a client-certificate subject CN or SAN that is a known caller "
                     "(repeatable; needs --tls-client-ca)")
    sec.add_argument("--admin-token-file", metavar="FILE",
                     help="read the admin token from this file (default: "
                     "$RUMMY_ADMIN_TOKEN_FILE, else $RUMMY_ADMIN_TOKEN)")
    sec.add_argument("--rate-commands", type=_rate, default=RATE_COMMANDS, metavar="R/s",
                     help="game calls (all but CreateGame) per second per caller; past it "
                     f"RESOURCE_EXHAUSTED RATE_LIMITED (default {RATE_COMMANDS:g}/s; 0: off)")
    sec.add_argument("--rate-burst", type=_positive, default=RATE_BURST, metavar="N",
                     help=f"burst of --rate-commands, in calls (default {RATE_BURST})")
    sec.add_argument("--rate-create", type=_rate, default=RATE_CREATE, metavar="R/s",
                     help="CreateGame calls per second per caller (default "
                     f"{RATE_CREATE:g}/s; 0: off)")
    sec.add_argument("--rate-create-burst", type=_positive, default=RATE_CREATE_BURST,
                     metavar="N", help="burst of --rate-create, in calls (default "
                     f"{RATE_CREATE_BURST})")
    sec.add_argument("--rate-events", type=_rate, default=RATE_EVENTS, metavar="E/s",
                     help="events read with GetEvents per second per caller, a page priced "
                     "by its size; past it RESOURCE_EXHAUSTED RATE_LIMITED (default "
                     f"{RATE_EVENTS:g}/s; 0: off)")
    sec.add_argument("--rate-events-burst", type=_positive, default=RATE_EVENTS_BURST,
                     metavar="N", help="burst of --rate-events, in events (default "
                     f"{RATE_EVENTS_BURST})")
    keys = sec.add_mutually_exclusive_group()
    keys.add_argument("--new-api-key", metavar="NAME",
                      help="print a new random API key, then its --api-keys line "
                      "NAME:sha256hex, and exit")
    keys.add_argument("--hash-api-key", metavar="NAME",
                      help="read an API key from stdin, print its --api-keys line "
                      "NAME:sha256hex, and exit")
    p.set_defaults(func=cmd_serve)
    return cast(argparse.ArgumentParser, p)


def add_export_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``export`` on an ``argparse`` subparsers object; returns its parser."""
    p = sub.add_parser(
        "export", help="write a stored game's events as JSON lines",
        description="Write the full event log of GAME_ID from the event store to stdout, one "
        "JSON line per event (the format `rummy replay FILE` reads).")
    p.add_argument("game_id", metavar="GAME_ID", help="the game's id (from CreateGame)")
    p.add_argument("--redis-url", default=DEFAULT_REDIS_URL,
                   help=f"event store Redis URL (default: $RUMMY_REDIS_URL or {LOCAL_REDIS})")
    p.add_argument("--prefix", default="rummy", help="event store key prefix (default rummy)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_export)
    return cast(argparse.ArgumentParser, p)


def add_replay_parser(sub: Any) -> argparse.ArgumentParser:
    """Register a store-backed ``replay`` (same options as the file replay)."""
    from rummy_cli.replay import EPILOG_REPLAY, add_page_options
    p = sub.add_parser(
        "replay", help="rebuild a stored game from the event store, verifying every event",
        epilog=EPILOG_REPLAY, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game_id", metavar="GAME_ID", help="the game's id (from CreateGame)")
    p.add_argument("--redis-url", default=DEFAULT_REDIS_URL,
                   help=f"event store Redis URL (default: $RUMMY_REDIS_URL or {LOCAL_REDIS})")
    p.add_argument("--prefix", default="rummy", help="event store key prefix (default rummy)")
    p.add_argument("--step", action="store_true", help="print each event and the state after it")
    p.add_argument("--at", type=int, metavar="N", help="show the state after event N (1-based)")
    add_page_options(p)
    p.set_defaults(func=cmd_replay)
    return cast(argparse.ArgumentParser, p)


def add_parsers(sub: Any) -> None:
    """Register ``serve``, ``export`` and (unless the parser already has one) ``replay``."""
    add_serve_parser(sub)
    add_export_parser(sub)
    if "replay" not in getattr(sub, "choices", {}):
        add_replay_parser(sub)


# ---------------------------------------------------------------------------- commands

def _strategies(text: str) -> tuple[str, ...]:
    """``--bot-strategies``: registered bot names, comma-separated."""
    from rummy.bots import check_bot
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("no bot strategy given")
    try:
        return tuple(map(check_bot, names))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    """``rummy serve``: run until SIGTERM/SIGINT. Returns the exit code: 0 after a clean
    shutdown, 2 for bad flags or unusable files (TLS, API keys, admin token), 1 when it
    cannot serve (port taken, store unreachable)."""
    if args.new_api_key or args.hash_api_key:
        return api_key_line(args)
    from rummy_store.factory import UnknownStoreURL, store_scheme
    try:
        scheme = store_scheme(args.redis_url) if args.redis_url else "memory"
    except UnknownStoreURL as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    memory = (args.store or ("memory" if scheme == "memory" else "redis")) == "memory"
    if args.read_feed and memory:
        print("error: --read-feed needs the Redis store (--redis-url): the append "
              "feed is Redis pub/sub, and an in-memory store has no other writer to hear of",
              file=sys.stderr)
        return 2
    if args.retain_finished and (memory or not args.archive_url):
        print("error: --retain-finished needs the Redis store (--redis-url) and an archive "
              "(--archive-url postgresql://...): finished games move from Redis to it",
              file=sys.stderr)
        return 2
    if args.processes > 1 and memory:
        print("error: --processes needs a shared store (--redis-url redis://...): each "
              "process would hold its own in-memory store, and the copies would not see "
              "each other's games", file=sys.stderr)
        return 2
    if args.processes > 1:
        from rummy_grpc.processes import supervise
        return supervise(args)
    from rummy_grpc.server import make_store, serve
    try:
        security = serve_security(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    logging.basicConfig(level=os.environ.get("RUMMY_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    kind = "memory" if memory else "redis"
    label = "redis cluster" if kind == "redis" and "cluster" in scheme else kind

    transport = ("plaintext" if security["tls"] is None
                 else "mutual TLS" if security["tls"].mutual else "TLS")

    def ready(port: int) -> None:
        print(f"serving rummy_api.v1.GameService on {args.host}:{port} (store: {label}, "
              f"{transport})", flush=True)
        if args.port_file:
            from rummy_grpc.processes import write_port_file
            write_port_file(args.port_file, port)

    async def run() -> None:
        store = make_store(kind, args.redis_url, args.prefix, idle_ttl=args.idle_expiry,
                           request_ttl=args.request_window, batch=not args.no_batch,
                           archive_url=args.archive_url, archive_schema=args.archive_schema)
        await serve(f"{args.host}:{args.port}", store, metrics_port=args.metrics_port,
                    grace=args.grace, ready=ready, bot_delay=args.bot_delay,
                    lease=args.lease, poll=args.poll, max_events=args.max_events,
                    request_window=args.request_window, reuse_port=args.reuse_port,
                    read_feed=args.read_feed, bot_strategies=args.bot_strategies,
                    hints=args.hints == "on",
                    max_streams_per_game=args.max_streams_per_game,
                    max_streams_per_client=args.max_streams_per_client,
                    max_streams=args.max_streams, retain_finished=args.retain_finished or 0.0,
                    **security)

    import redis.exceptions
    from rummy_store.base import StoreAccessDenied

    from rummy_grpc.server import MetricsPortError

    runner: Any = asyncio.run
    if args.uvloop:
        try:
            import uvloop
        except ImportError:
            print("error: --uvloop needs the uvloop package (pip install uvloop, or the "
                  "'service' extra on Linux and macOS)", file=sys.stderr)
            return 2
        runner = uvloop.run
    try:
        runner(run())
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except MetricsPortError as e:  # the metrics port is taken or unusable
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (RuntimeError, OSError) as e:  # the port is taken, or the address is bad
        print(f"error: cannot serve on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    except StoreAccessDenied as e:  # the store's user lacks a permission the service needs
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (redis.exceptions.RedisError,
            redis.exceptions.RedisClusterException) as e:  # the store is unreachable at start
        from rummy_store.urls import redact_text, redact_url
        print(f"error: the event store at {redact_url(args.redis_url or '')} is unreachable: "
              f"{redact_text(str(e))}",
              file=sys.stderr)
        return 1
    return 0


async def read_game(redis_url: str, game_id: str, prefix: str = "rummy") -> list[Event]:
    """Every event of ``game_id`` in the event store at ``redis_url`` (any URL of
    :func:`rummy_store.factory.open_store`), in order ([] if unknown).

    Raises:
        ValueError: a URL no backend takes.
        rummy.errors.NotationError: a stored event cannot be decoded.
        redis.exceptions.ConnectionError: Redis is unreachable.
    """
    from rummy_store.factory import open_game_store
    from rummy_store.mapper import MAPPER
    store = open_game_store(redis_url, prefix=prefix,
                            archive_url=os.environ.get("RUMMY_ARCHIVE_URL") or None,
                            archive_schema=os.environ.get("RUMMY_ARCHIVE_SCHEMA", "rummy"))
    try:
        return MAPPER.to_events(await store.read(game_id))
    finally:
        await store.close()


def export_game(events: list[Event], out: TextIO) -> int:
    """Write ``events`` as JSON lines (``rummy.events.dumps``); returns the number written."""
    out.writelines(dumps(e) + "\n" for e in events)
    return len(events)


def _read_or_exit(args: argparse.Namespace) -> list[Event]:
    try:
        events = asyncio.run(read_game(args.redis_url, args.game_id, args.prefix))
    except Exception as e:  # noqa: BLE001 - report a store failure plainly
        from rummy_store.urls import redact_text, redact_url
        raise SystemExit(f"error: cannot read game {args.game_id!r} from "
                         f"{redact_url(args.redis_url)}: {redact_text(str(e))}") from None
    if not events:
        from rummy_store.urls import redact_url
        raise SystemExit(f"error: no events for game {args.game_id!r} in "
                         f"{redact_url(args.redis_url)}")
    return events


def cmd_export(args: argparse.Namespace) -> int:
    """``rummy export GAME_ID --redis-url URL``: the game's log as JSON lines. An output
    file that cannot be written is an ``error:`` line (exit 2) before Redis is read."""
    from rummy_cli.outputs import output_problem
    problem = output_problem(args.output)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    events = _read_or_exit(args)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                export_game(events, f)
        except OSError as e:
            print(f"error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {len(events)} events of game {args.game_id} to {args.output}",
              file=sys.stderr)
    else:
        export_game(events, sys.stdout)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """``replay --redis-url URL GAME_ID``: the file replay (``rummy_cli.replay.replay_events``)
    on a stored game."""
    from rummy_cli.replay import page_and_analysis, page_options_used, replay_events
    if page_options_used(args):
        return page_and_analysis(_read_or_exit(args), args)
    return replay_events(_read_or_exit(args), step=args.step, at=args.at)
