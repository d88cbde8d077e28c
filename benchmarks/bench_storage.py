"""Redis memory per event of whole games played through the game service.

Plays complete two-seat games of the ``basic`` bot through :class:`rummy_grpc.app.GameApp`
(in this process, over the real Redis at ``--redis-url``, under a fresh key prefix), every
command carrying its own client ``request_id`` as a careful client sends it, then reads
``MEMORY USAGE`` of every key of each game (the event stream, the request records, the
metadata, the snapshots) and prints bytes per stored event by kind, beside the anchor: the
event JSON of ``rummy.events.to_dict`` (what the stream kept before the compact encoding)
and the target (at most 120 bytes per event, request records included).

Memory is counted, not timed, so the figures do not depend on the machine's load; they
depend on the games (``--games``, ``--seed``) and on Redis's encoding settings
(``hash-max-listpack-entries``, ``stream-node-max-entries``), which are printed.

Usage: ``python benchmarks/bench_storage.py [--games 6] [--seed 1] [--redis URL]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))

import redis.asyncio as aioredis  # noqa: E402
from rummy_grpc.app import GameApp  # noqa: E402
from rummy_grpc.model import SeatSpec  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402

from benchmarks.bench_service import script  # noqa: E402  (the same scripted games)
from rummy.commands import Draw, EndTurn, Knock, Meld, Pass  # noqa: E402
from rummy.melds import format_table  # noqa: E402

ADMIN = "bench-storage-admin"
TARGET = 120  # bytes per event, request records included
KINDS = ("events", "requests", "meta", "snapshots")


def kind_of(cmd: Any) -> tuple[str, Any]:
    """The service's command kind and table argument of a core command."""
    if isinstance(cmd, Meld):
        return "meld", format_table(cmd.table)
    names = {Draw: "draw", Pass: "pass", Knock: "knock", EndTurn: "end_turn"}
    return names[type(cmd)], None


async def play(app: GameApp, seed: int) -> str:
    """Play the game of ``seed`` to its end through ``app``; returns its id."""
    created = await app.create_game([SeatSpec("human", f"p{i}") for i in (0, 1)], {},
                                    seed=seed, admin_token=ADMIN,
                                    request_id=str(uuid.uuid4()))
    for version, seat, cmd in script(seed):
        kind, table = kind_of(cmd)
        await app.command(created.game_id, created.tokens[seat], kind, table,
                          expected_version=version, request_id=str(uuid.uuid4()),
                          with_view=False)
    return created.game_id


async def keys_of(client: aioredis.Redis, prefix: str, game: str) -> dict[str, list[str]]:
    """Every key of one game, grouped by kind (the request records may be several keys)."""
    out: dict[str, list[str]] = {k: [] for k in KINDS}
    async for raw in client.scan_iter(match=f"{prefix}:{{{game}}}:*", count=1000):
        key = raw.decode() if isinstance(raw, bytes) else raw
        kind = key.split("}:", 1)[1].split(":", 1)[0]
        out.setdefault(kind, []).append(key)
    return out


async def main_async(args: argparse.Namespace) -> None:
    prefix = f"bench-storage-{uuid.uuid4().hex[:10]}"
    store = RedisEventStore.from_url(args.redis, prefix=prefix)
    client = aioredis.Redis.from_url(args.redis)
    app = GameApp(store, admin_token=ADMIN)
    try:
        games = [await play(app, args.seed + i) for i in range(args.games)]
        totals = dict.fromkeys(KINDS, 0)
        events = json_bytes = text_bytes = keys = 0
        for game in games:
            stored = await store.read(game)
            events += len(stored)
            json_bytes += sum(len(json.dumps(se.data, separators=(",", ":"))) for se in stored)
            for _, fields in await client.xrange(f"{prefix}:{{{game}}}:events"):
                text_bytes += len(fields[b"data"])
            for kind, names in (await keys_of(client, prefix, game)).items():
                keys += len(names)
                for name in names:
                    totals[kind] = totals.get(kind, 0) + (await client.memory_usage(name) or 0)
        config = await client.config_get("hash-max-listpack-entries")
        config.update(await client.config_get("stream-node-max-entries"))
        print(f"{args.games} two-seat games of the basic bot through GameApp, a request_id "
              f"on every command: {events:,} events, {keys} keys; Redis "
              + ", ".join(f"{k.decode() if isinstance(k, bytes) else k} "
                          f"{v.decode() if isinstance(v, bytes) else v}"
                          for k, v in config.items()))
        print(f"{'kind':<12} {'bytes/event':>12}")
        for kind, total in totals.items():
            print(f"{kind:<12} {total / events:>12.1f}")
        during = sum(totals.values()) / events
        after = (sum(totals.values()) - totals["requests"]) / events
        print(f"{'all':<12} {during:>12.1f}   target <= {TARGET} ({during / TARGET:.2f}x of "
              f"it; {'met' if during <= TARGET else 'NOT met'})")
        print(f"{'after window':<12} {after:>12.1f}   (request records expired)")
        print(f"anchor: an event's JSON (rummy.events.to_dict, compact separators) is "
              f"{json_bytes / events:.1f} bytes; its stored text (rummy_store.codec) "
              f"{text_bytes / events:.1f} bytes ({text_bytes / json_bytes:.2f}x). Before the "
              f"compact storage (commit 811330e) the same games took 200.2 bytes/event in "
              f"all (stream 108.9, request records 84.8): docs/benchmarks.md")
    finally:
        await app.close()
        async for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            await client.delete(key)
        await client.aclose()
        await store.close()


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"need at least 1, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=_positive, default=6,
                        help="games to play, at least 1 (default 6)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (1)")
    parser.add_argument("--redis-url", dest="redis", metavar="URL",
                        default=os.environ.get("RUMMY_TEST_REDIS_URL",
                                               "redis://127.0.0.1:6379/0"),
                        help="the Redis to measure on (default %(default)s)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
