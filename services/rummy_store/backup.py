"""Backup and restore of a Redis store: every key of its prefix, ``DUMP`` / ``RESTORE``
(docs/operations.md, "Backup and restore").

The file is gzip-compressed JSON lines, written and read as a stream (a store larger than
memory passes through):

1. a header ``{"format": "rummy-store-backup", "version": 1, "prefix", "redis_version",
   "created" (epoch s), "keys" (how many follow)}``;
2. one line per key ``{"k": key, "ttl": ms left (-1: none), "d": DUMP payload in base64}``;
3. a trailer ``{"end": true, "keys": n, "sha256": digest of the key lines}``: a file cut
   short (a full disk, a killed process) is refused by :func:`restore`.

``DUMP`` keeps everything of a key, its type and encoding, a stream's entry ids and
consumer groups (the results feed's checkpoints) included. Its payload carries the RDB
version: a backup restores into the same or a newer Redis (7.0 here), not an older one.

**Consistency.** The keys of one game (``P:{G}:*``) are dumped in one ``MULTI`` / ``EXEC``,
so a game is restored as it was at one moment (its events, request records, meta and
snapshots agree). Different games, and the global keys (the index, the due games, the
results feed), are dumped at different moments while the store keeps serving: a game
created during the backup may be restored without its index entry (the service lists it
again on its next ``set_active``; its events are whole), a summary in the results feed may
be missing for a game appended after the feed was dumped. For one point in time, stop
the servers (or copy an RDB / AOF instead).

A single Redis only: a cluster URL is refused (back up a cluster by its primaries' RDB
files).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import redis.asyncio as aioredis

__all__ = ["FORMAT", "BackupError", "backup", "restore"]

FORMAT = "rummy-store-backup"
VERSION = 1
_BATCH = 256  # keys per SCAN step and per pipeline of DUMPs / RESTOREs


class BackupError(Exception):
    """A backup file that is not one, is cut short or damaged, or a restore refused
    (keys of the prefix already present without ``replace``)."""


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _game_tag(key: str, prefix: str) -> str:
    """The game id of a game's key ``P:{G}:...``, or ``""`` for a global key."""
    rest = key[len(prefix) + 1:]
    if rest.startswith("{") and "}" in rest and not rest.startswith(f"{{{prefix}:"):
        return rest[1:rest.index("}")]
    return ""


async def _keys(client: aioredis.Redis, prefix: str) -> list[str]:
    """Every key of ``prefix`` (``SCAN``, names only), a game's keys next to each other."""
    pattern = prefix.replace("\\", "\\\\")
    for ch in "*?[]":
        pattern = pattern.replace(ch, "\\" + ch)
    found: set[str] = set()
    async for key in client.scan_iter(match=f"{pattern}:*", count=1000):
        found.add(_s(key))
    return sorted(found, key=lambda k: (_game_tag(k, prefix), k))


async def backup(client: aioredis.Redis, prefix: str, out: IO[bytes], *,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Write every key of ``prefix`` to ``out`` (a binary file) in the backup format.

    Args:
        client: a single Redis (``decode_responses`` either way).
        prefix: the store's key prefix.
        out: where the gzip stream goes.
        progress: called as ``progress(done, total)`` after each batch of keys.

    Returns:
        The number of keys written (a key that expired during the backup is skipped).
    """
    keys = await _keys(client, prefix)
    if progress is not None:
        progress(0, len(keys))
    info = await client.info("server")
    digest = hashlib.sha256()
    written = 0
    with gzip.GzipFile(fileobj=out, mode="wb") as gz:
        header = {"format": FORMAT, "version": VERSION, "prefix": prefix,
                  "redis_version": str(info.get("redis_version", "")),
                  "created": time.time(), "keys": len(keys)}
        gz.write(json.dumps(header).encode() + b"\n")
        for batch in _batches(keys, prefix):
            async with client.pipeline(transaction=True) as pipe:  # a game: one moment
                for k in batch:
                    pipe.dump(k)
                    pipe.pttl(k)
                replies = await pipe.execute()
            for i, k in enumerate(batch):
                payload, ttl = replies[2 * i], int(replies[2 * i + 1])
                if payload is None:  # expired or deleted meanwhile
                    continue
                raw = payload if isinstance(payload, bytes) else payload.encode("latin-1")
                line = json.dumps({"k": k, "ttl": ttl if ttl > 0 else -1,
                                   "d": base64.b64encode(raw).decode()}).encode() + b"\n"
                digest.update(line)
                gz.write(line)
                written += 1
            if progress is not None:
                progress(min(len(keys), written), len(keys))
        gz.write(json.dumps({"end": True, "keys": written,
                             "sha256": digest.hexdigest()}).encode() + b"\n")
    return written


def _batches(keys: list[str], prefix: str) -> Iterator[list[str]]:
    """Batches of about :data:`_BATCH` keys that never split one game's keys."""
    batch: list[str] = []
    for i, k in enumerate(keys):
        batch.append(k)
        nxt = keys[i + 1] if i + 1 < len(keys) else None
        if len(batch) >= _BATCH and (nxt is None or _game_tag(nxt, prefix) == ""
                                     or _game_tag(nxt, prefix) != _game_tag(k, prefix)):
            yield batch
            batch = []
    if batch:
        yield batch


def read_header(path: Path) -> dict[str, Any]:
    """The header of a backup file.

    Raises:
        BackupError: not a backup file of this format.
    """
    try:
        with gzip.open(path, "rb") as gz:
            header = json.loads(gz.readline())
    except (OSError, ValueError) as exc:
        raise BackupError(f"{path}: not a store backup ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BackupError(f"{path}: not a store backup (no {FORMAT} header)")
    if header.get("version") != VERSION:
        raise BackupError(f"{path}: backup format version {header.get('version')!r}, this "
                          f"release reads {VERSION}")
    return header


async def restore(client: aioredis.Redis, path: Path, *, replace: bool = False,
                  prefix: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> int:
    """Restore every key of the backup at ``path`` (``RESTORE``, with its time to live).

    Args:
        client: the target single Redis.
        path: a file written by :func:`backup`.
        replace: overwrite keys that exist (``RESTORE ... REPLACE``); without it, a target
            holding any key of the prefix is refused before anything is written.
        prefix: the prefix expected in the file (None: the file's).
        progress: called as ``progress(done, total)`` after each batch.

    Returns:
        The number of keys restored.

    Raises:
        BackupError: not a backup, a prefix other than ``prefix``, a file cut short or
            damaged (checked before any key is written), existing keys without ``replace``.
    """
    header = read_header(path)
    if prefix is not None and header["prefix"] != prefix:
        raise BackupError(f"{path}: a backup of prefix {header['prefix']!r}, not {prefix!r}")
    total = int(header["keys"])
    _verify(path)
    if not replace:
        async for _ in client.scan_iter(match=f"{header['prefix']}:*", count=1000):
            raise BackupError(f"the target already holds keys of prefix {header['prefix']!r}: "
                              "restore into an empty Redis, or pass --replace")
    done = 0
    with gzip.open(path, "rb") as gz:
        gz.readline()
        batch: list[dict[str, Any]] = []
        for raw in gz:
            row = json.loads(raw)
            if row.get("end"):
                break
            batch.append(row)
            if len(batch) >= _BATCH:
                done += await _restore_batch(client, batch, replace)
                batch = []
                if progress is not None:
                    progress(done, total)
        done += await _restore_batch(client, batch, replace)
        if progress is not None:
            progress(done, total)
    return done


async def _restore_batch(client: aioredis.Redis, batch: list[dict[str, Any]],
                         replace: bool) -> int:
    if not batch:
        return 0
    async with client.pipeline(transaction=False) as pipe:
        for row in batch:
            pipe.restore(row["k"], max(0, int(row["ttl"])), base64.b64decode(row["d"]),
                         replace=replace)
        await pipe.execute()
    return len(batch)


def _verify(path: Path) -> None:
    """Check the trailer (count and digest of the key lines) before anything is written.

    Raises:
        BackupError: the file is cut short or damaged.
    """
    digest = hashlib.sha256()
    n = 0
    try:
        with gzip.open(path, "rb") as gz:
            gz.readline()
            for raw in gz:
                row = json.loads(raw)
                if row.get("end"):
                    if row.get("keys") != n or row.get("sha256") != digest.hexdigest():
                        raise BackupError(f"{path}: damaged (its trailer does not match its "
                                          "keys)")
                    return
                digest.update(raw)
                n += 1
    except (OSError, EOFError, ValueError) as exc:
        raise BackupError(f"{path}: cut short or damaged ({exc})") from exc
    raise BackupError(f"{path}: cut short (no trailer after {n} keys)")
