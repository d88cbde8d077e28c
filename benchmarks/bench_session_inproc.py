"""The Python CPU of a ``GameService.Session`` move, without gRPC: microseconds a move.

``GameServicer.Session`` is driven in one process through fake stream contexts (an
``asyncio.Queue`` for the requests, one for the responses; no gRPC, no sockets, no
threads), both seats of each game on their own session, playing the same two-seat
default-move loop as ``benchmarks/bench_peer.py`` (its ``Tracker``: draw, pass, end turn
when due, each command with ``expected_version``). Everything a served move runs in Python
runs here: the caller gate's command rate limit (on, at a rate no client reaches), the
seat token checked on every command, the decision, the store's expected-version append
(memory store, or Redis at 127.0.0.1:6379 under a fresh key prefix, deleted at the end), the
metrics, the result and the push of the opponent's events redacted for its seat (I3).

Printed: moves (the count asked for, plus any move in flight when it was reached),
**process CPU microseconds a move** (``time.process_time``: the handler's Python, the
store client's, and this harness's clients: the ``Tracker`` and the queues, a few
microseconds) and wall microseconds a move. Games are created inside the measured window
as earlier ones end; one warm-up pass of the same size runs first.

``--mode command``: the same moves through ``GameApp.command`` alone (the result turned
into its proto; no session, no push, no subscription): the difference between the two
modes is the ``Session`` layer's share.

``--profile``: the measured pass under ``cProfile`` (its overhead roughly triples the
figures: compare shares, not microseconds), the top functions by ``--sort``.

Examples::

    python benchmarks/bench_session_inproc.py --store memory --games 100 --moves 3000
    python benchmarks/bench_session_inproc.py --store redis --profile --sort cumtime

What a served move costs on top (gRPC, the kernel, the thread wake-ups) is measured in
docs/benchmarks.md ("The session move's gRPC share, and two trims").
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import cProfile
import os
import pstats
import sys
import time
import uuid
from typing import Any

import grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.app import GameApp
from rummy_grpc.callers import CallerGate
from rummy_grpc.convert import view_to_proto
from rummy_grpc.limits import RateLimiter, StreamLimits
from rummy_grpc.model import SeatSpec
from rummy_grpc.server import make_store
from rummy_grpc.servicer import GameServicer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_peer as bp  # noqa: E402 - the served benchmark's move loop and Tracker


class FakeStream:
    """The parts of a ``grpc.aio`` stream context a ``Session`` uses: ``read`` takes the
    next request (bytes, or ``grpc.aio.EOF``) from ``inbox``; ``write`` puts the response
    on ``out``."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.out: asyncio.Queue[Any] = asyncio.Queue()

    async def read(self) -> Any:
        """The next request."""
        return await self.inbox.get()

    async def write(self, message: pb.SessionResponse) -> None:
        """Send one response."""
        self.out.put_nowait(message)

    def peer(self) -> str:
        """The client's address (one for every stream: one caller)."""
        return "ipv4:127.0.0.1:1"

    def invocation_metadata(self) -> tuple[()]:
        """No metadata."""
        return ()

    def auth_context(self) -> dict[str, Any]:
        """No TLS identity."""
        return {}

    def cancelled(self) -> bool:
        """Never cancelled."""
        return False

    def done(self) -> bool:
        """Never done."""
        return False

    async def abort(self, *args: Any) -> None:
        """An abort is a failure of the benchmark."""
        raise RuntimeError(args)


async def seat(svc: GameServicer, game_id: str, token: str, me: int, tr: bp.Tracker,
               stats: dict[str, int], limit: int, ctx: FakeStream, other: FakeStream) -> None:
    """One seat's session: open it, then command when it is this seat's turn, else take
    the pushed events, until the game ends or ``limit`` moves were made in all."""
    ctx.inbox.put_nowait(pb.SessionRequest(open=pb.SessionOpen(
        game_id=game_id, token=token, after_version=tr.version)).SerializeToString())
    task = asyncio.create_task(svc.Session(None, ctx))  # type: ignore[arg-type]
    tag = 0
    try:
        while not tr.over and stats["n"] < limit:
            if tr.turn == me and tr.phase in bp.KIND:
                tag += 1
                ctx.inbox.put_nowait(pb.SessionRequest(command=pb.SessionCommand(
                    tag=tag, kind=bp.KIND[tr.phase],
                    options=pb.CommandOptions(expected_version=tr.version))
                ).SerializeToString())
                while True:
                    msg = await ctx.out.get()
                    if msg is None:
                        return
                    if tr.take(msg):
                        break
                stats["n"] += 1
            else:
                msg = await ctx.out.get()
                if msg is None:
                    return
                tr.see(msg.event)
    finally:
        other.out.put_nowait(None)  # the other seat stops waiting for pushes
        ctx.inbox.put_nowait(grpc.aio.EOF)
        await task


async def new_game(app: GameApp) -> tuple[Any, bp.Tracker]:
    """A two-seat game of humans created through ``app``: its ``CreatedGame`` and a
    :class:`bench_peer.Tracker` of its start (seat 0's view)."""
    created = await app.create_game([SeatSpec(kind="human", name=f"p{i}")
                                     for i in (0, 1)], {})
    view, _ = await app.get_view(created.game_id, created.tokens[0])
    pv = view_to_proto(view)
    return created, bp.Tracker(pv.turn, pv.phase, pv.version)


async def games(svc: GameServicer, app: GameApp, stats: dict[str, int], limit: int) -> None:
    """Play games one after the other (both seats at once) until ``limit`` moves."""
    while stats["n"] < limit:
        created, first = await new_game(app)
        second = copy.copy(first)
        c0, c1 = FakeStream(), FakeStream()
        await asyncio.gather(
            seat(svc, created.game_id, created.tokens[0], 0, first, stats, limit, c0, c1),
            seat(svc, created.game_id, created.tokens[1], 1, second, stats, limit, c1, c0))


KIND_NAMES = {pb.SESSION_COMMAND_KIND_DRAW: "draw", pb.SESSION_COMMAND_KIND_PASS: "pass",
              pb.SESSION_COMMAND_KIND_END_TURN: "end_turn"}


async def commands_only(app: GameApp, stats: dict[str, int], limit: int) -> None:
    """``--mode command``: the same moves through ``GameApp.command`` alone (no session, no
    push, no protobuf), one game after the other until ``limit`` moves."""
    from rummy_grpc.session import outcome_to_proto
    while stats["n"] < limit:
        created, tr = await new_game(app)
        while not tr.over and stats["n"] < limit and tr.phase in bp.KIND:
            out = await app.command(created.game_id, created.tokens[tr.turn],
                                    KIND_NAMES[bp.KIND[tr.phase]],
                                    expected_version=tr.version, with_view=False)
            for ev in outcome_to_proto(out, False).events:
                tr.see(ev)
            stats["n"] += 1


async def run(args: argparse.Namespace) -> float:
    """One warm-up pass, then the measured one; prints and returns CPU µs a move."""
    opts: dict[str, Any] = dict(idle_ttl=3600, request_ttl=600, batch=True,
                                archive_url=None, archive_schema=None)
    prefix = f"bench-inproc-{uuid.uuid4().hex[:8]}"
    if args.store == "redis":
        store = make_store("redis", args.redis_url, prefix, **opts)
    else:
        store = make_store("memory", None, "x", **opts)
    try:
        return await measure(args, store)
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            await close()
        if args.store == "redis":
            await bp.drop_keys(args.redis_url, prefix)


async def measure(args: argparse.Namespace, store: Any) -> float:
    """:func:`run`'s passes on ``store``; CPU µs a move of the measured one."""
    app = GameApp(store, bot_strategies=())
    gate = CallerGate(None, RateLimiter(1_000_000, 1_000_000, kind="command"),
                      RateLimiter(0, 1, kind="create"), RateLimiter(0, 1, kind="events"))
    svc = GameServicer(app, StreamLimits(), gate)
    stats = {"n": 0}

    def play(limit: int) -> Any:
        if args.mode == "command":
            return asyncio.gather(*(commands_only(app, stats, limit)
                                    for _ in range(args.games)))
        return asyncio.gather(*(games(svc, app, stats, limit) for _ in range(args.games)))

    await play(args.moves)
    stats["n"] = 0
    prof = cProfile.Profile() if args.profile else None
    c0, t0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    await play(args.moves)
    if prof is not None:
        prof.disable()
    c1, t1 = time.process_time(), time.perf_counter()
    n = stats["n"]
    cpu = (c1 - c0) / n * 1e6
    print(f"{args.mode} {args.store} games {args.games} moves {n} cpu_us_per_move {cpu:.1f} "
          f"wall_us_per_move {(t1 - t0) / n * 1e6:.1f}", flush=True)
    if prof is not None:
        st = pstats.Stats(prof).sort_stats(args.sort)
        st.print_stats(args.top)
        if args.callers:
            st.print_callers(args.callers)
    return cpu


def main() -> None:
    """Parse the arguments and run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--store", choices=("memory", "redis"), default="memory")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--mode", choices=("session", "command"), default="session",
                    help="session: the Session streams; command: GameApp.command alone")
    ap.add_argument("--games", type=int, default=100, help="games played at once")
    ap.add_argument("--moves", type=int, default=3000, help="moves measured (and warm-up)")
    ap.add_argument("--profile", action="store_true", help="cProfile the measured pass")
    ap.add_argument("--sort", default="tottime", help="pstats sort key (--profile)")
    ap.add_argument("--top", type=int, default=40, help="functions printed (--profile)")
    ap.add_argument("--callers", default="",
                    help="with --profile: also the callers of the functions matching this "
                         "regular expression (pstats)")
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
