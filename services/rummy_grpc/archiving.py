"""Retention in the service: ``rummy serve --retain-finished DURATION --archive-url URL``
runs the archive mover (:class:`rummy_store.retention.Archiver`) in the background and
exports its metrics (docs/operations.md, "Retention and the archive").

Every replica may run it: two movers that meet on one game both write the same verified
copy and one of them deletes the Redis keys (the delete script checks the stream first).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
from typing import Any

__all__ = ["ARCHIVE_EVERY", "ArchiveLoop", "add_retention_options", "duration"]

log = logging.getLogger("rummy_grpc.archive")

ARCHIVE_EVERY = 5.0
"""Seconds between two archive passes when the last one found nothing more to move."""

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration(text: str) -> float:
    """An ``argparse`` type: a duration, ``90``, ``90s``, ``15m``, ``12h`` or ``30d``
    (seconds, minutes, hours, days), > 0.

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text or "")
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (a number > 0 with s, m, h or d: 90s, 15m, 12h, 30d)")
    return float(m.group(1)) * _UNITS[m.group(2)]


def add_retention_options(p: argparse.ArgumentParser) -> None:
    """Add ``--retain-finished``, ``--archive-url`` and ``--archive-schema`` to ``p``."""
    g = p.add_argument_group(
        "retention", "finished games move from Redis to a PostgreSQL archive "
        "(docs/operations.md, 'Retention and the archive')")
    g.add_argument("--retain-finished", type=duration, default=None, metavar="DURATION",
                   help="move a finished game to the archive this long after its last "
                   "event (90s, 15m, 12h, 30d; needs --archive-url and the Redis store). "
                   "Default: off, finished games stay in Redis for good")
    g.add_argument("--archive-url", default=os.environ.get("RUMMY_ARCHIVE_URL"),
                   metavar="URL", help="the archive: a PostgreSQL URL (postgresql://host:"
                   "5432/db; default $RUMMY_ARCHIVE_URL). Archived games are read from it "
                   "(GetEvents, GetState) even without --retain-finished")
    g.add_argument("--archive-schema", default=os.environ.get("RUMMY_ARCHIVE_SCHEMA",
                                                              "rummy"),
                   metavar="NAME", help="the archive's schema (default $RUMMY_ARCHIVE_SCHEMA "
                   "or 'rummy')")


class ArchiveLoop:
    """Passes of the archive mover until cancelled: one pass, then the next at once while
    passes find a full batch to move, else after ``every`` seconds.

    Args:
        store: the service's :class:`rummy_store.sealed.GameStore` (Redis, with archive).
        retain: seconds a finished game stays in Redis after its last event.
        every: seconds between passes that found little to do.

    Raises:
        ValueError: as :class:`rummy_store.retention.Archiver`.
    """

    def __init__(self, store: Any, retain: float, *, every: float = ARCHIVE_EVERY,
                 batch: int = 200) -> None:
        from rummy_store.retention import Archiver
        self.archiver = Archiver(store, retain, batch=batch)
        self.every = every
        self.passes = 0

    async def run(self) -> None:
        """Run passes until cancelled; a failed pass is logged and counted, never raised."""
        # metrics imported here, not at module level: `rummy worker` builds the serve
        # parser (add_retention_options) and must not open the service's metric files
        from rummy_grpc import metrics

        while True:
            full = False
            try:
                got = await self.archiver.run_once()
                self.passes += 1
                metrics.ARCHIVE_BACKLOG.set(got.backlog)
                metrics.ARCHIVE_OVERDUE_SECONDS.set(got.oldest)
                metrics.ARCHIVE_MOVED_TOTAL.inc(got.moved)
                metrics.ARCHIVE_FEED_TRIMMED_TOTAL.inc(got.trimmed)
                if got.failed:
                    metrics.child(metrics.ARCHIVE_FAILURES_TOTAL, "move").inc(got.failed)
                full = got.moved >= self.archiver.batch or got.trimmed >= 1000
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the store or archive is down: retry
                metrics.child(metrics.ARCHIVE_FAILURES_TOTAL, "pass").inc()
                log.warning("archive pass failed (retried in %.0f s): %s: %s", self.every,
                            type(exc).__name__, exc)
            if not full:
                await asyncio.sleep(self.every)
