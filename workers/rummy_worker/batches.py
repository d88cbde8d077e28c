"""Batch specs and batch state in Redis; chunk results are merged idempotently.

A batch is ``games`` games between a bot line-up under rule variants, from one master seed;
game ``i`` uses seed ``rummy.simulate.game_seed(seed, i)`` and line-up
``lineup_for(bots, i, rotate)``, exactly as ``rummy simulate`` does, so any game can be
re-played alone and the merged report equals ``report(run_games(...))`` locally. An A/B batch
(``compare_bots`` and/or ``compare_rules`` set) plays every game index under both variants.

Redis layout (``P`` is the key prefix, default ``"rummy"``; ``{id}`` is a hash tag so one
batch lives on one cluster shard)::

    P:batch:{id}            hash   spec (JSON), chunks (count), created (epoch seconds), queue
    P:batch:{id}:chunks     hash   chunk index -> chunk result JSON   (HSETNX: first wins)
    P:batch:{id}:failures   hash   chunk index -> last error text
    P:batch:{id}:leases     hash   chunk index -> lease end (epoch s) while a worker holds it
    P:batch:{id}:queued     hash   chunk index -> send time (epoch s) while it waits in the broker
    P:batch:{id}:fails      hash   chunk index -> failed attempts; "index@" -> last failure time
    P:batches               zset   batch id scored by creation time

A chunk result is stored with ``HSETNX``, so a chunk computed twice (a redelivered task
after a worker died) is counted once; results are deterministic, so either copy is the same.

Self-healing: every chunk is in one of these places. *Queued*: sent, marked with its send
time, waiting in the broker. *Leased*: a worker took it off the broker (the mark is cleared
in the same step) and renews a lease while it holds it, reserved or computing. *Stored*.
*Failed*: its last attempt raised; counted. The sweeps (every worker and every ``--wait``,
:func:`rummy_worker.tasks.heal`) send a chunk again only when it is lost: its lease lapsed
(its worker died), or it is marked queued but the broker's queue holds fewer messages than
there are such marks (a broker restarted empty, a purged queue), confirmed at two sweeps;
and a failed chunk after a back-off, until it failed :class:`RetryPolicy` ``max_failures``
times and is given up (the batch then ends as failed). A chunk that only waits in the queue,
however long, is never sent twice.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy.balance import BalanceReport
from rummy.bots import check_bot
from rummy.paired_quality import PairedFigures
from rummy.paired_quality import compare as compare_figures
from rummy.rules import RuleSet
from rummy.simulate import Aggregate, merge_all, parse_lineup
from rummy_worker.paired import Paired, compare

DEFAULT_CHUNK_SIZE = 200  #: games per chunk task (chunky: never one task per game)
MAX_CHUNKS = 100_000  #: refuse specs that would flood the broker with tasks


@dataclass(frozen=True)
class BatchSpec:
    """What a batch plays. Ids, seeds and names only: JSON round-trips it exactly.

    Attributes:
        games: number of games (>= 1); A/B batches play each index once per variant.
        bots: strategy per line-up slot (2–5 names; ``len(bots)`` is the player count).
        seed: master seed (any int); game ``i`` uses ``game_seed(seed, i)``.
        rules: changed rule variants (``RuleSet.from_dict`` input; ``{}`` = default rules).
        chunk_size: games per chunk task (>= 1).
        rotate: rotate the line-up by ``i % players`` seats in game ``i``.
        record_every: record every K-th game (indices 0, K, 2K, ...) to the event store;
            0 records none.
        compare_bots: variant B's line-up (same player count), or ``None`` (= ``bots``).
        compare_rules: variant B's full changed-variant dict, or ``None`` (= ``rules``).
    """

    games: int
    bots: tuple[str, ...]
    seed: int
    rules: Mapping[str, Any] = field(default_factory=dict)
    chunk_size: int = DEFAULT_CHUNK_SIZE
    rotate: bool = True
    record_every: int = 0
    compare_bots: tuple[str, ...] | None = None
    compare_rules: Mapping[str, Any] | None = None

    @property
    def players(self) -> int:
        """Seats per game."""
        return len(self.bots)

    @property
    def is_ab(self) -> bool:
        """True for an A/B (paired) batch."""
        return self.compare_bots is not None or self.compare_rules is not None

    @property
    def chunks(self) -> int:
        """Number of chunks: ``ceil(games / chunk_size)``."""
        return -(-self.games // self.chunk_size)

    def chunk_range(self, index: int) -> tuple[int, int]:
        """Game indices ``(start, stop)`` of chunk ``index`` (stop exclusive).

        Raises:
            IndexError: ``index`` is not in ``0 .. chunks-1``.
        """
        if not 0 <= index < self.chunks:
            raise IndexError(f"chunk {index} out of range 0..{self.chunks - 1}")
        start = index * self.chunk_size
        return start, min(self.games, start + self.chunk_size)

    def ruleset(self, variant: str = "a") -> RuleSet:
        """The validated :class:`RuleSet` of variant ``"a"`` or ``"b"``."""
        if variant == "b" and self.compare_rules is not None:
            return RuleSet.from_dict(self.compare_rules)
        return RuleSet.from_dict(self.rules)

    def lineup(self, variant: str = "a") -> tuple[str, ...]:
        """The bot line-up of variant ``"a"`` or ``"b"``."""
        if variant == "b" and self.compare_bots is not None:
            return self.compare_bots
        return self.bots

    def validate(self) -> BatchSpec:
        """Return ``self`` if playable.

        Raises:
            ValueError: a non-positive games or chunk size, a negative ``record_every``, an
                unknown bot, a bad player count or rule variant (``InvalidRuleSetError``, a
                ``ValueError``; values are JSON-typed, as ``RuleSet.from_json`` reads them),
                line-ups of different sizes, or too many chunks.
        """
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise ValueError(f"games must be a positive integer, got {self.games!r}")
        if isinstance(self.chunk_size, bool) or not isinstance(self.chunk_size, int) \
                or self.chunk_size < 1:
            raise ValueError(f"chunk size must be a positive integer, got {self.chunk_size!r}")
        if not isinstance(self.rotate, bool):
            raise ValueError(f"rotate must be true or false, got {self.rotate!r}")
        if isinstance(self.record_every, bool) or not isinstance(self.record_every, int) \
                or self.record_every < 0:
            raise ValueError(f"record_every must be >= 0, got {self.record_every!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")  # noqa: TRY004
        if self.chunks > MAX_CHUNKS:
            raise ValueError(f"{self.chunks} chunks is more than {MAX_CHUNKS}; raise the "
                             "chunk size")
        for rules in (self.rules, self.compare_rules or {}):
            RuleSet.from_json(rules, complete=False)  # JSON types: no "30" for 30
        for variant in ("a", "b"):
            lineup = self.lineup(variant)
            for name in lineup:
                check_bot(name)
            self.ruleset(variant).check_players(len(lineup))
        if len(self.lineup("b")) != self.players:
            raise ValueError("both line-ups of an A/B batch need the same number of players")
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; inverse of :meth:`from_dict`."""
        return {
            "games": self.games, "bots": list(self.bots), "seed": self.seed,
            "rules": dict(self.rules), "chunk_size": self.chunk_size, "rotate": self.rotate,
            "record_every": self.record_every,
            "compare_bots": None if self.compare_bots is None else list(self.compare_bots),
            "compare_rules": None if self.compare_rules is None else dict(self.compare_rules),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BatchSpec:
        """Rebuild from :meth:`to_dict` output (missing optional keys take defaults).

        Raises:
            KeyError: ``games``, ``bots`` or ``seed`` missing.
        """
        cb = d.get("compare_bots")
        cr = d.get("compare_rules")
        return cls(
            games=d["games"], bots=tuple(d["bots"]), seed=d["seed"],
            rules=dict(d.get("rules") or {}),
            chunk_size=d.get("chunk_size", DEFAULT_CHUNK_SIZE), rotate=d.get("rotate", True),
            record_every=d.get("record_every", 0),
            compare_bots=None if cb is None else tuple(cb),
            compare_rules=None if cr is None else dict(cr))


def expand_bots(names: str | Sequence[str], players: int) -> tuple[str, ...]:
    """The line-up from ``--bots`` and ``--players``: :func:`rummy.simulate.parse_lineup`,
    the same parser as ``rummy simulate`` (names cycled over the seats; ``""`` is the
    default line-up).

    Raises:
        ValueError: no names, an unknown bot, or more names than players.
    """
    return parse_lineup(names, players)


def game_id(batch_id: str, index: int, variant: str = "a") -> str:
    """Event-store game id of a recorded game: ``batch-<id>-<index>`` (``-b`` for variant
    B of an A/B batch)."""
    return f"batch-{batch_id}-{index}" + ("-b" if variant == "b" else "")


# ----------------------------------------------------------------------------- results

@dataclass(frozen=True)
class Merged:
    """Merged chunk results: variant A's aggregate; B's and the paired sums for A/B."""

    a: Aggregate
    b: Aggregate | None = None
    paired: Paired | None = None
    chunks: int = 0
    #: the paired game-quality sums (None when a chunk predates them)
    quality: PairedFigures | None = None


def merge_results(players: int, results: Sequence[Mapping[str, Any]]) -> Merged:
    """Merge chunk results (``rummy_worker.chunks.compute_chunk`` output), in any order.

    Raises:
        ValueError: results of different player counts.
    """
    a = merge_all(players, (Aggregate.from_dict(r["a"]) for r in results))
    b = pr = None
    quality: PairedFigures | None = None
    if any("b" in r for r in results):
        b = merge_all(players, (Aggregate.from_dict(r["b"]) for r in results if "b" in r))
        pr = Paired.empty(players)
        for r in results:
            if "paired" in r:
                pr = pr.merge(Paired.from_dict(r["paired"]))
        # chunks written before the paired quality sums existed have none: then none
        if all("paired_quality" in r for r in results if "paired" in r):
            quality = PairedFigures()
            for r in results:
                if "paired_quality" in r:
                    quality = quality.merge(PairedFigures.from_dict(r["paired_quality"]))
    return Merged(a, b, pr, len(results), quality)


@dataclass(frozen=True)
class ABReport:
    """The report of an A/B batch: each variant's :class:`BalanceReport` and the paired
    comparison (:func:`rummy_worker.paired.compare` output: differences A − B with 95%
    paired intervals)."""

    a: BalanceReport
    b: BalanceReport
    compare: dict[str, Any]
    """:func:`rummy_worker.paired.compare` output, and under ``"quality"`` (when every chunk
    carried the sums) :func:`rummy.paired_quality.compare` output: every game-quality
    figure A − B with its paired 95% interval clustered by game and its verdict."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"a": ..., "b": ..., "compare": ...}``."""
        return {"a": self.a.to_dict(), "b": self.b.to_dict(), "compare": self.compare}


def batch_report(spec: BatchSpec, merged: Merged) -> BalanceReport | ABReport:
    """The balance report of merged results.

    Returns:
        ``BalanceReport.of(merged.a)`` for a plain batch (equal to the report of
        ``rummy simulate`` with the same seed); for an A/B batch an :class:`ABReport`.
    """
    if merged.b is None or merged.paired is None:
        return BalanceReport.of(merged.a)
    cmp = compare(merged.paired, spec.lineup("a"), spec.lineup("b"))
    if merged.quality is not None:
        cmp["quality"] = compare_figures(merged.quality, first="A", second="B")
    return ABReport(BalanceReport.of(merged.a), BalanceReport.of(merged.b), cmp)


# ----------------------------------------------------------------------------- Redis state

class UnknownBatch(LookupError):
    """No batch with this id under this key prefix."""


DEFAULT_MAX_FAILURES = 3  #: failed attempts after which a chunk is given up
DEFAULT_RETRY_BACKOFF = 5.0  #: seconds before the first retry of a failed chunk


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failing chunk is tried: given up after ``max_failures`` failed attempts;
    after failure ``k`` it is sent again no sooner than ``backoff * 2 ** (k - 1)`` seconds
    (capped at ``cap``) later."""

    max_failures: int = DEFAULT_MAX_FAILURES
    backoff: float = DEFAULT_RETRY_BACKOFF
    cap: float = 300.0

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure before the next attempt."""
        return float(min(self.cap, self.backoff * 2 ** max(0, failures - 1)))


@dataclass(frozen=True)
class BatchStatus:
    """Progress of a batch: ``done`` of ``chunks`` chunk results stored; ``failures`` maps
    chunk index to the last error of chunks not (yet) stored, ``attempts`` to their failed
    attempts so far, and ``given_up`` lists the chunks that failed ``max_failures`` times
    (never sent again)."""

    batch_id: str
    chunks: int
    done: int
    failures: dict[int, str]
    created: float
    attempts: dict[int, int] = field(default_factory=dict)
    given_up: tuple[int, ...] = ()
    stopped: str = ""  #: why the batch was stopped early (:meth:`BatchStore.stop`), or ""

    @property
    def complete(self) -> bool:
        """Every chunk's result is stored."""
        return self.done >= self.chunks

    @property
    def failed(self) -> bool:
        """Not complete and nothing left to run: every chunk without a result was given up."""
        return not self.complete and self.done + len(self.given_up) >= self.chunks


def is_chunk_index(index: Any, chunks: int) -> bool:
    """True when ``index`` is an int (not a bool) in ``0 .. chunks - 1``."""
    return not isinstance(index, bool) and isinstance(index, int) and 0 <= index < chunks


class BatchStore:
    """Batch state in Redis (see the module docstring for the layout).

    Args:
        client: a sync ``redis.Redis`` created in this process (after fork), with
            ``decode_responses=True``.
        prefix: key prefix; tests use a unique one.
    """

    def __init__(self, client: Any, prefix: str = "rummy") -> None:
        self.r = client
        self.prefix = prefix

    def _meta(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}"

    def _chunks(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}:chunks"

    def _failures(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}:failures"

    def _leases(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}:leases"

    def _queued(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}:queued"

    def _fails(self, batch_id: str) -> str:
        return f"{self.prefix}:batch:{{{batch_id}}}:fails"

    # -- where each chunk is: queued (sent, no worker has it yet), leased (a worker holds it),
    # stored, or failed (attempts counted). A sweep sends a chunk again only when it is lost:
    # its lease lapsed, or it is marked queued but the broker's queue no longer holds it.

    def take_lease(self, batch_id: str, index: int, seconds: float) -> None:
        """Record that a worker holds chunk ``index`` (reserved or computing), until
        ``seconds`` from now (epoch seconds in the hash ``…:leases``); the worker renews it."""
        self.r.hset(self._leases(batch_id), str(index), repr(time.time() + seconds))

    def receive(self, batch_id: str, index: int, seconds: float) -> None:
        """A worker took chunk ``index`` off the broker: lease it for ``seconds`` and clear
        its queued mark, in one transaction."""
        with self.r.pipeline() as pipe:
            pipe.hset(self._leases(batch_id), str(index), repr(time.time() + seconds))
            pipe.hdel(self._queued(batch_id), str(index))
            pipe.execute()

    def mark_queued(self, batch_id: str, indices: Sequence[int]) -> None:
        """Mark chunks as sent and waiting in the broker (the mark is the send time, epoch
        seconds); written just before their tasks are published."""
        if indices:
            now = repr(time.time())
            self.r.hset(self._queued(batch_id), mapping={str(i): now for i in indices})

    def requeued(self, batch_id: str, indices: Sequence[int]) -> None:
        """Chunks a worker held went back to the broker's queue (a warm shutdown returns its
        reserved tasks): their leases become queued marks."""
        if indices:
            now = repr(time.time())
            with self.r.pipeline() as pipe:
                pipe.hdel(self._leases(batch_id), *map(str, indices))
                pipe.hset(self._queued(batch_id), mapping={str(i): now for i in indices})
                pipe.execute()

    def queued_marks(self, batch_id: str) -> dict[int, str]:
        """Queued marks of chunks without a result: chunk index -> mark (send time)."""
        have = set(self.r.hkeys(self._chunks(batch_id)))
        return {int(k): v for k, v in self.r.hgetall(self._queued(batch_id)).items()
                if k not in have}

    def live_leases(self, batch_id: str) -> set[int]:
        """Chunks whose lease has not lapsed."""
        now = time.time()
        return {int(k) for k, v in self.r.hgetall(self._leases(batch_id)).items()
                if float(v) > now}

    def set_queue(self, batch_id: str, queue: str) -> None:
        """Record the queue the batch's chunks are sent to (a sweep sends lost ones there)."""
        self.r.hset(self._meta(batch_id), "queue", queue)

    def queue_of(self, batch_id: str) -> str | None:
        """The queue the batch's chunks were sent to, if recorded."""
        value = self.r.hget(self._meta(batch_id), "queue")
        return str(value) if value is not None else None

    def set_limits(self, batch_id: str, soft: float, hard: float) -> None:
        """Record the chunk time limits (seconds) the batch was sent with."""
        self.r.hset(self._meta(batch_id), mapping={"soft_limit": repr(soft),
                                                   "hard_limit": repr(hard)})

    def limits_of(self, batch_id: str) -> tuple[float, float] | None:
        """``(soft, hard)`` time limits the batch was sent with, if recorded."""
        soft, hard = self.r.hmget(self._meta(batch_id), ["soft_limit", "hard_limit"])
        return (float(soft), float(hard)) if soft and hard else None

    def drop_lease(self, batch_id: str, index: int) -> None:
        """Chunk ``index`` is no longer being computed (stored, or failed and noted)."""
        self.r.hdel(self._leases(batch_id), str(index))

    def failed_attempts(self, batch_id: str) -> dict[int, tuple[int, float]]:
        """Chunk index -> (failed attempts, epoch seconds of the last failure)."""
        raw = self.r.hgetall(self._fails(batch_id))
        return {int(k): (int(v), float(raw.get(f"{k}@", 0.0)))
                for k, v in raw.items() if not k.endswith("@")}

    def reset_failures(self, batch_id: str, indices: Sequence[int]) -> None:
        """Forget the failed attempts of chunks (``rummy batch resume``: tried afresh)."""
        fields = [f for i in indices for f in (str(i), f"{i}@")]
        if fields:
            self.r.hdel(self._fails(batch_id), *fields)

    def _may_send(self, fails: Mapping[int, tuple[int, float]], index: int, now: float,
                  retry: RetryPolicy) -> bool:
        """True when chunk ``index`` may be sent again now: it failed fewer than
        ``retry.max_failures`` times and its back-off since the last failure has passed."""
        count, at = fails.get(index, (0, 0.0))
        return count < retry.max_failures and (count == 0 or now >= at + retry.delay(count))

    def claim_stalled(self, batch_id: str, retry: RetryPolicy | None = None) -> list[int]:
        """Chunks without a result whose lease lapsed (the worker holding them died): each
        one claimed turns its lapsed lease into a queued mark in one atomic step, so that of
        several sweepers exactly one sends it again. A chunk given up (failed
        ``retry.max_failures`` times) or in its back-off is left. Returns the indices
        claimed."""
        retry = retry or RetryPolicy()
        now = time.time()
        have = set(self.r.hkeys(self._chunks(batch_id)))
        fails = self.failed_attempts(batch_id)
        claimed = []
        for index, until in self.r.hgetall(self._leases(batch_id)).items():
            if index in have or float(until) > now:
                continue
            if not self._may_send(fails, int(index), now, retry):
                continue
            if self._claim(keys=[self._leases(batch_id), self._queued(batch_id)],
                           args=[index, until, repr(now)]):
                claimed.append(int(index))
        return sorted(claimed)

    def claim_unmarked(self, batch_id: str, patience: float,
                       retry: RetryPolicy | None = None) -> list[int]:
        """Chunks without a result, a lease or a queued mark: a chunk whose last attempt
        failed (sent again once its back-off passed, never after ``retry.max_failures``
        failures), or, once the batch made no progress for ``patience`` seconds or twice its
        mean chunk time, a chunk never marked (sent by a release without queued marks).
        Each one is claimed with a queued mark (HSETNX: one sweeper wins) and returned to be
        sent again."""
        retry = retry or RetryPolicy()
        meta = self.r.hgetall(self._meta(batch_id))
        if not meta:
            return []
        now = time.time()
        timed = int(meta.get("timed", 0))
        mean = float(meta.get("busy_seconds", 0.0)) / timed if timed else 0.0
        since = float(meta.get("last_done", meta.get("created", now)))
        stuck = now - since >= max(patience, 2 * mean)
        leased = set(self.r.hkeys(self._leases(batch_id)))
        queued = set(self.r.hkeys(self._queued(batch_id)))
        fails = self.failed_attempts(batch_id)
        claimed = []
        for index in self.missing_chunks(batch_id):
            if str(index) in leased or str(index) in queued:
                continue
            if not (index in fails or stuck) or not self._may_send(fails, index, now, retry):
                continue
            if self.r.hsetnx(self._queued(batch_id), str(index), repr(now)):
                claimed.append(index)
        return claimed

    def claim_queued(self, batch_id: str, index: int, mark: str) -> bool:
        """Claim a chunk marked queued whose message the broker lost: its mark is replaced
        by a new one only if it still is ``mark`` (one sweeper wins; a worker that took the
        chunk meanwhile cleared it). True when this call claimed it."""
        return bool(self._claim_mark(keys=[self._queued(batch_id)],
                                     args=[str(index), mark, repr(time.time())]))

    @property
    def _claim(self) -> Any:
        script = getattr(self, "_claim_script", None)
        if script is None:  # compare-and-set: the lease still holds the lapsed value
            script = self.r.register_script(
                "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then "
                "redis.call('HDEL', KEYS[1], ARGV[1]) "
                "redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) return 1 end return 0")
            self._claim_script = script
        return script

    @property
    def _claim_mark(self) -> Any:
        script = getattr(self, "_claim_mark_script", None)
        if script is None:  # compare-and-set on the queued mark
            script = self.r.register_script(
                "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then "
                "redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) return 1 end return 0")
            self._claim_mark_script = script
        return script

    def create(self, spec: BatchSpec, batch_id: str | None = None) -> str:
        """Record a new batch and return its id (12 hex digits unless given).

        Raises:
            ValueError: an invalid spec, or ``batch_id`` already exists or is malformed.
        """
        spec.validate()
        batch_id = batch_id or secrets.token_hex(6)
        if not batch_id or any(c in batch_id for c in "{} \t\n"):
            raise ValueError(f"bad batch id {batch_id!r}")
        now = time.time()
        created = self.r.hsetnx(self._meta(batch_id), "spec", json.dumps(spec.to_dict()))
        if not created:
            raise ValueError(f"batch {batch_id} already exists")
        self.r.hset(self._meta(batch_id), mapping={"chunks": spec.chunks, "created": now})
        self.r.zadd(f"{self.prefix}:batches", {batch_id: now})
        return batch_id

    def spec(self, batch_id: str) -> BatchSpec:
        """The spec of a batch.

        Raises:
            UnknownBatch: no such batch.
        """
        raw = self.r.hget(self._meta(batch_id), "spec")
        if raw is None:
            raise UnknownBatch(f"no batch {batch_id!r} under prefix {self.prefix!r}")
        return BatchSpec.from_dict(json.loads(raw))

    def chunk_exists(self, batch_id: str, index: Any) -> bool:
        """True when batch ``batch_id`` was submitted under this prefix and ``index`` is
        one of its chunks (:func:`is_chunk_index`): what a task message must name before a
        worker leases, plays or notes anything for it."""
        chunks = self.r.hget(self._meta(batch_id), "chunks") if isinstance(index, int) else None
        return chunks is not None and is_chunk_index(index, int(chunks))

    def has_chunk(self, batch_id: str, index: int) -> bool:
        """True when chunk ``index``'s result is stored."""
        return bool(self.r.hexists(self._chunks(batch_id), str(index)))

    def put_chunk(self, batch_id: str, index: int, result: Mapping[str, Any],
                  seconds: float | None = None) -> bool:
        """Store a chunk result unless one is stored already (HSETNX); ``seconds`` is the
        time it took to compute (kept as the batch's mean chunk time).

        Returns:
            True if this call stored it, False if the chunk was already counted.
        """
        stored = bool(self.r.hsetnx(self._chunks(batch_id), str(index),
                                    json.dumps(result, separators=(",", ":"))))
        self.r.hdel(self._failures(batch_id), str(index))
        self.r.hdel(self._queued(batch_id), str(index))
        if stored:  # progress, and the time a chunk takes (a sweep's patience)
            meta = self._meta(batch_id)
            self.r.hset(meta, "last_done", repr(time.time()))
            if seconds is not None:
                self.r.hincrbyfloat(meta, "busy_seconds", seconds)
                self.r.hincrby(meta, "timed", 1)
        return stored

    def has_failure(self, batch_id: str, index: int) -> bool:
        """True when chunk ``index``'s last attempt failed and is noted."""
        return bool(self.r.hexists(self._failures(batch_id), str(index)))

    def record_failure(self, batch_id: str, index: int, error: str) -> int:
        """Remember the last error of chunk ``index`` (shown by ``batch status``) and count
        the failed attempt; returns the chunk's failed attempts so far."""
        with self.r.pipeline() as pipe:
            pipe.hset(self._failures(batch_id), str(index), error[:2000])
            pipe.hincrby(self._fails(batch_id), str(index), 1)
            pipe.hset(self._fails(batch_id), f"{index}@", repr(time.time()))
            count = pipe.execute()[1]
        return int(count)

    def status(self, batch_id: str, max_failures: int = DEFAULT_MAX_FAILURES) -> BatchStatus:
        """Progress of a batch; a chunk without a result that failed ``max_failures`` times
        is given up.

        Raises:
            UnknownBatch: no such batch.
        """
        meta = self.r.hgetall(self._meta(batch_id))
        if not meta:
            raise UnknownBatch(f"no batch {batch_id!r} under prefix {self.prefix!r}")
        have = {int(k) for k in self.r.hkeys(self._chunks(batch_id))}
        failures = {int(k): v for k, v in self.r.hgetall(self._failures(batch_id)).items()}
        attempts = {i: n for i, (n, _) in self.failed_attempts(batch_id).items()
                    if i not in have}
        given_up = tuple(sorted(i for i, n in attempts.items() if n >= max_failures))
        return BatchStatus(batch_id, int(meta["chunks"]), len(have), failures,
                           float(meta.get("created", 0.0)), attempts, given_up,
                           meta.get("stopped", ""))

    def stop(self, batch_id: str, reason: str) -> None:
        """Stop a batch early (e.g. a sequential test decided): workers skip its chunks
        not yet started and the sweepers send none again; stored results stay.

        Raises:
            UnknownBatch: no such batch; ValueError: an empty reason.
        """
        if not reason:
            raise ValueError("give the reason a batch stops")
        if not self.r.exists(self._meta(batch_id)):
            raise UnknownBatch(f"no batch {batch_id!r} under prefix {self.prefix!r}")
        self.r.hset(self._meta(batch_id), "stopped", reason)

    def stopped(self, batch_id: str) -> str:
        """Why the batch was stopped (:meth:`stop`), or ``""``."""
        return str(self.r.hget(self._meta(batch_id), "stopped") or "")

    def missing_chunks(self, batch_id: str) -> list[int]:
        """Indices of chunks whose result is not stored, ascending."""
        spec = self.spec(batch_id)
        have = {int(k) for k in self.r.hkeys(self._chunks(batch_id))}
        return [i for i in range(spec.chunks) if i not in have]

    def results(self, batch_id: str) -> dict[int, dict[str, Any]]:
        """Stored chunk results by chunk index."""
        return {int(k): json.loads(v)
                for k, v in self.r.hgetall(self._chunks(batch_id)).items()}

    def merged(self, batch_id: str) -> tuple[BatchSpec, Merged]:
        """The spec and the merge of every stored chunk result.

        Raises:
            UnknownBatch: no such batch.
        """
        spec = self.spec(batch_id)
        return spec, merge_results(spec.players, list(self.results(batch_id).values()))

    def recent(self, limit: int = 20) -> list[str]:
        """Up to ``limit`` batch ids, newest first."""
        return list(self.r.zrevrange(f"{self.prefix}:batches", 0, limit - 1))

    def delete(self, batch_id: str) -> None:
        """Forget a batch (its state and results; recorded games stay in the event store)."""
        self.r.delete(self._meta(batch_id), self._chunks(batch_id), self._failures(batch_id),
                      self._leases(batch_id), self._queued(batch_id), self._fails(batch_id))
        self.r.zrem(f"{self.prefix}:batches", batch_id)
