"""``rummy erase GAME_ID``: erase a game's seat names in a store and its archive, straight
on the store (no server needed; the ``EraseSeatNames`` RPC does the same through a server,
:mod:`rummy_grpc.erasure`). See :mod:`rummy_store.erase` and docs/security.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

__all__ = ["add_parsers", "cmd_erase"]


def add_parsers(sub: Any) -> None:
    """Register ``rummy erase`` on the ``rummy`` command's subparsers."""
    text = "erase a game's seat names everywhere the store keeps them (crypto-shredding)"
    p = sub.add_parser("erase", help=text, description=text + "; docs/security.md")
    p.add_argument("game_id", metavar="GAME_ID", help="the game whose seat names are erased")
    p.add_argument("--redis-url", default=os.environ.get("RUMMY_REDIS_URL",
                                                         "redis://127.0.0.1:6379/0"),
                   help="the event store (default $RUMMY_REDIS_URL or the local Redis)")
    p.add_argument("--prefix", default="rummy", help="the store's key prefix")
    p.add_argument("--archive-url", default=os.environ.get("RUMMY_ARCHIVE_URL"),
                   help="the archive (PostgreSQL; default $RUMMY_ARCHIVE_URL): erased there "
                   "too")
    p.add_argument("--archive-schema", default=os.environ.get("RUMMY_ARCHIVE_SCHEMA",
                                                              "rummy"),
                   help="the archive's schema (default $RUMMY_ARCHIVE_SCHEMA or 'rummy')")
    p.set_defaults(func=cmd_erase)


def cmd_erase(args: argparse.Namespace) -> int:
    """``rummy erase``: 0 when erased (what was rewritten on stdout), 1 for an unknown
    game or an unreachable store."""
    from rummy_store.erase import erase_game
    from rummy_store.factory import open_game_store
    from rummy_store.urls import redact_text

    async def run() -> Any:
        store = open_game_store(args.redis_url, prefix=args.prefix,
                                archive_url=args.archive_url,
                                archive_schema=args.archive_schema)
        try:
            return await erase_game(store, args.game_id)
        finally:
            await store.close()

    try:
        done = asyncio.run(run())
    except Exception as exc:  # noqa: BLE001 - report any store failure plainly
        print(f"error: cannot erase game {args.game_id!r}: {redact_text(str(exc))}",
              file=sys.stderr)
        return 1
    if done is None:
        print(f"error: no game {args.game_id!r} in the store or the archive", file=sys.stderr)
        return 1
    where = " and ".join(w for w, b in (("the store", done.in_redis),
                                        ("the archive", done.in_archive)) if b)
    rewritten = ", ".join(f"{k} {v}" for k, v in sorted(done.rewritten.items()) if v)
    print(f"erased the seat names of game {args.game_id} in {where}"
          + (f"; rewrote plaintext copies: {rewritten}" if rewritten else ""))
    return 0
