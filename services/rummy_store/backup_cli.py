"""``rummy backup`` and ``rummy restore``: a Redis store's keys to a file and back
(:mod:`rummy_store.backup`, docs/operations.md), with a rich progress bar on stderr."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parsers", "cmd_backup", "cmd_restore"]


def add_parsers(sub: Any) -> None:
    """Register ``backup`` and ``restore`` on the ``rummy`` command's subparsers."""
    for name, helptext, fn in (
            ("backup", "write every key of a Redis store's prefix to a file (DUMP)", cmd_backup),
            ("restore", "restore a backup file into a Redis (RESTORE)", cmd_restore)):
        p = sub.add_parser(name, help=helptext, description=helptext + "; see "
                           "docs/operations.md")
        p.add_argument("--redis-url", required=True,
                       help="a single Redis: redis://[user:password@]host:port/db (a password "
                       "file: $RUMMY_REDIS_PASSWORD_FILE)")
        p.add_argument("--prefix", default=None,
                       help="the store's key prefix (backup: default 'rummy'; restore: must "
                       "match the file's when given)")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        if name == "backup":
            p.add_argument("out", type=Path, help="the backup file to write ('-': stdout)")
        else:
            p.add_argument("--replace", action="store_true",
                           help="overwrite existing keys (default: refuse a target that "
                           "holds keys of the prefix)")
            p.add_argument("file", type=Path, help="a file written by rummy backup")
        p.set_defaults(func=fn)


def _client(url: str) -> Any:
    from rummy_store.redis_client import client_from_url, is_cluster_url
    if is_cluster_url(url):
        raise ValueError("backup and restore take a single Redis URL, not a cluster")
    return client_from_url(url, decode_responses=False, max_connections=4)


def _progress(quiet: bool) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
    return Progress("[progress.description]{task.description}", BarColumn(),
                    MofNCompleteColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), disable=quiet, transient=False)


def cmd_backup(args: argparse.Namespace) -> int:
    """``rummy backup``: exit 0 and the key count on stderr; 2 on a bad URL."""
    from rummy_store.backup import backup
    prefix = args.prefix or "rummy"
    try:
        client = _client(args.redis_url)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        with _progress(args.quiet) as bar:
            task = bar.add_task(f"backup {prefix}", total=None)

            def step(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)
            try:
                if str(args.out) == "-":
                    return await backup(client, prefix, sys.stdout.buffer, progress=step)
                tmp = args.out.with_name(args.out.name + ".partial")
                with open(tmp, "wb") as out:
                    n = await backup(client, prefix, out, progress=step)
                tmp.replace(args.out)  # a backup cut short never has the final name
                return n
            finally:
                await client.aclose()
    n = asyncio.run(run())
    print(f"backed up {n} keys of prefix {prefix!r}", file=sys.stderr)
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """``rummy restore``: exit 0; 1 when the file or the target is refused
    (:class:`~rummy_store.backup.BackupError`); 2 on a bad URL."""
    from rummy_store.backup import BackupError, restore
    try:
        client = _client(args.redis_url)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        with _progress(args.quiet) as bar:
            task = bar.add_task(f"restore {args.file.name}", total=None)

            def step(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)
            try:
                return await restore(client, args.file, replace=args.replace,
                                     prefix=args.prefix, progress=step)
            finally:
                await client.aclose()
    try:
        n = asyncio.run(run())
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"restored {n} keys", file=sys.stderr)
    return 0
