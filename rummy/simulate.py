"""Bot-versus-bot games: ``play_game`` (a loop over decide/evolve) and mergeable aggregates.

Everything here is pure and deterministic given the seeds: the process pool, progress bars
and printing live in :mod:`rummy_cli.main` and in the workers.

Seeds: game ``index`` of a batch with master seed ``S`` is played with
:func:`game_seed` ``(S, index)``, and the bot line-up is rotated by ``index % players``
seats (unless ``rotate=False``) so that seat advantage and bot strength are not confounded.
Any single game of a batch can therefore be re-run alone.

Aggregates are integer counts only (win credit is counted in 1/60ths, so shared wins of
up to 5 players are exact), so merging is associative and commutative: the same seed gives
the same report whatever the number of processes or the chunk size.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy.bots import check_bot, make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.events import Event, GameEnded, Knocked, RoundScored, TurnEnded
from rummy.fairness import local_salt
from rummy.quality import count_plays, game_sums, is_sampled, sample_every
from rummy.rules import RuleSet
from rummy.state import GAME_OVER, MELD_OR_PASS
from rummy.views import view

WIN_UNIT = 60  #: win credit of one outright win; shared wins get WIN_UNIT // k each
MAX_STEPS = 200_000  #: a game longer than this is a bug (an engine or bot loop)
SCORE_BIN = 25  #: width of the final-score histogram bins, in points
#: the line-up of ``rummy simulate`` and ``rummy batch`` without ``--bots``: bots that end
#: rounds by knocking or going out, as people do (``basic,random`` let 99% of rounds run
#: the stock out, which measured the bots more than the rules)
DEFAULT_LINEUP = ("strategic", "greedy")
AGGREGATE_VERSION = 3  #: ``Aggregate.to_dict()["v"]``: 2 added the per-game (clustered)
#: sums, 3 those of the points left (an interval of the mean points left)


def game_seed(master_seed: int, index: int) -> int:
    """Seed of game ``index`` of a batch (SHA-256 of both, 63 bits): stable everywhere."""
    digest = hashlib.sha256(f"rummy-batch:{master_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def lineup_for(bots: Sequence[str], index: int, rotate: bool = True) -> tuple[str, ...]:
    """Bot of each seat for game ``index``: ``bots`` rotated by ``index`` seats if ``rotate``."""
    n = len(bots)
    k = index % n if rotate else 0
    return tuple(bots[(seat - k) % n] for seat in range(n))


@dataclass(frozen=True, slots=True)
class GameResult:
    """Summary of one finished game.

    Attributes:
        seed: the game's seed.
        bots: strategy of each seat.
        final: final totals after bonuses (R9), by seat.
        winners: seats with the highest final total (R9.4).
        rounds: number of rounds played.
        turns: turns of each round (a turn ends with TurnEnded, a knock or going out).
        reasons: how each round ended: ``"knock"``, ``"undercut"`` (a knock that lost),
            ``"going_out"``, ``"stock"``.
        points_left: hand points left per seat at each round's end, summed over rounds.
        steps: commands decided.
        events: the event log, when recorded.
        positions: running totals after each round (R7), round 1 first.
        meld_phases: meld phases (R3.2) the game went through.
        plays: distinct legal plays found at each sampled meld phase
            (:func:`rummy.quality.count_plays`; empty with ``metrics=False``; -1 where the
            count failed, which no figure uses and the report counts apart).
    """

    seed: int
    bots: tuple[str, ...]
    final: tuple[int, ...]
    winners: tuple[int, ...]
    rounds: int
    turns: tuple[int, ...]
    reasons: tuple[str, ...]
    points_left: tuple[int, ...]
    steps: int
    events: tuple[Event, ...] = ()
    positions: tuple[tuple[int, ...], ...] = ()
    meld_phases: int = 0
    plays: tuple[int, ...] = ()


def play_game(bots: Sequence[str], seed: int, rules: RuleSet | None = None, *,
              record: bool = False, metrics: bool = True, commit: bool = False) -> GameResult:
    """Play one complete game (to the target score, R9.1) between bots.

    Args:
        bots: strategy name of each seat (2–5 seats, R1.1).
        seed: the game's seed (deck shuffles, first dealer, each bot's own seed).
        rules: the rule set (default rules if ``None``).
        record: keep the full event log in the result.
        metrics: sample meld phases for the decision-move metrics
            (:mod:`rummy.quality`; the only part of them that costs a solver call).
        commit: ``GameStarted`` carries a seed commitment with the local salt
            :func:`rummy.fairness.local_salt` of ``seed``, so that ``rummy verify``
            checks the log (what ``rummy simulate --events-dir`` writes).

    Returns:
        The game's :class:`GameResult`.

    Raises:
        ValueError: unknown bot or invalid rule set.
        RuntimeError: the game did not end within ``MAX_STEPS`` commands (a bug).
        IllegalMoveError: a bot sent an illegal command (a bug in the bot).
    """
    rules = rules or RuleSet()
    players = len(bots)
    agents = [make_bot(name, seed * 8 + seat) for seat, name in enumerate(bots)]
    salt = local_salt(seed) if commit else None
    state, events = step(None, CreateGame(players, seed, rules, tuple(bots), salt=salt))
    log: list[Event] = list(events) if record else []
    turns: list[int] = []
    reasons: list[str] = []
    points_left = [0] * players
    round_turns = 0
    steps = 0
    positions: list[tuple[int, ...]] = []
    every = sample_every(bots)
    meld_phases = 0
    plays: list[int] = []
    while state.phase != GAME_OVER:
        seat = state.turn
        seen = view(state, seat)
        if state.phase == MELD_OR_PASS:
            if metrics and is_sampled(seed, meld_phases, every):
                try:
                    plays.append(count_plays(seen))
                except ValueError:  # the solver refused the position: a metric never
                    # fails a game (only ValueError: a runner's signals, such as Celery's
                    # soft time limit, must still stop the chunk)
                    plays.append(-1)  # counted apart (quality "sample_errors")
            meld_phases += 1
        cmd = agents[seat].act(seen)
        state, events = step(state, cmd)
        steps += 1
        if record:
            log.extend(events)
        for e in events:
            if isinstance(e, (TurnEnded, Knocked)):
                round_turns += 1
            elif isinstance(e, RoundScored):
                if e.reason == "going_out":  # the turn that went out (R6.2)
                    round_turns += 1
                turns.append(round_turns)
                round_turns = 0
                reason: str = str(e.reason)
                if reason == "knock" and e.knocker not in e.winners:
                    reason = "undercut"
                reasons.append(reason)
                positions.append(tuple(e.totals))
                for i, p in enumerate(e.points):
                    points_left[i] += p
        if steps > MAX_STEPS:
            raise RuntimeError(f"game with seed {seed} did not end after {MAX_STEPS} commands")
    result = state.result
    assert isinstance(result, GameEnded)
    return GameResult(seed, tuple(bots), result.final, result.winners, state.round,
                      tuple(turns), tuple(reasons), tuple(points_left), steps, tuple(log),
                      tuple(positions), meld_phases, tuple(plays))


# ----------------------------------------------------------------------------- aggregates

def _add(a: dict[Any, int], b: dict[Any, int]) -> dict[Any, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


@dataclass(frozen=True)
class Aggregate:
    """Integer counts over a set of games; ``merge`` is associative and commutative.

    Win credit is in units of 1/``WIN_UNIT`` of a win; scores are in points. Keys of
    per-bot dicts are strategy names; per-seat lists are indexed by seat.

    Per-game sums for intervals clustered by game (:mod:`rummy.stats`): with ``m`` a bot's
    seats in one game, ``w`` the sum of their win credit and ``s`` the sum of their final
    scores, ``bot_games`` counts the games the bot played, and ``bot_seats`` = Σm,
    ``bot_seats_sq`` = Σm², ``bot_wins`` = Σw, ``bot_wins_sq`` = Σw², ``bot_wins_seats`` =
    Σw·m, ``bot_score_sum`` = Σs, ``bot_score_sq`` = Σs², ``bot_score_seats`` = Σs·m (sums
    over games). ``seat_wins_sq`` is Σ over games of a seat's credit squared. Likewise
    for the points left at rounds' ends, with ``r = m × rounds`` the bot's seat-rounds in
    one game and ``p`` their points left: ``bot_rounds`` = Σr, ``bot_points_left`` = Σp,
    ``bot_left_sq`` = Σp², ``bot_left_rounds`` = Σp·r, ``bot_rounds_sq`` = Σr².
    ``quality`` holds the integer sums of the game-quality metrics
    (:func:`rummy.quality.game_sums`; its ``games`` counts the games that carried them, as
    aggregates stored before they existed have none).
    """

    players: int
    games: int = 0
    rounds: int = 0
    turns: int = 0
    steps: int = 0
    seat_wins: tuple[int, ...] = ()
    seat_wins_sq: tuple[int, ...] = ()
    bot_seats: dict[str, int] = field(default_factory=dict)
    bot_wins: dict[str, int] = field(default_factory=dict)
    bot_wins_sq: dict[str, int] = field(default_factory=dict)
    bot_score_sum: dict[str, int] = field(default_factory=dict)
    bot_score_hist: dict[str, dict[int, int]] = field(default_factory=dict)
    bot_points_left: dict[str, int] = field(default_factory=dict)
    bot_rounds: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    rounds_hist: dict[int, int] = field(default_factory=dict)
    turns_hist: dict[int, int] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    bot_games: dict[str, int] = field(default_factory=dict)
    bot_seats_sq: dict[str, int] = field(default_factory=dict)
    bot_wins_seats: dict[str, int] = field(default_factory=dict)
    bot_score_sq: dict[str, int] = field(default_factory=dict)
    bot_score_seats: dict[str, int] = field(default_factory=dict)
    bot_left_sq: dict[str, int] = field(default_factory=dict)
    bot_left_rounds: dict[str, int] = field(default_factory=dict)
    bot_rounds_sq: dict[str, int] = field(default_factory=dict)
    quality: dict[str, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, players: int) -> Aggregate:
        """The aggregate of no games."""
        return cls(players, seat_wins=(0,) * players, seat_wins_sq=(0,) * players)

    @classmethod
    def of_failure(cls, players: int, failed: FailedGame) -> Aggregate:
        """The aggregate of a game that failed (a bot raised or sent an illegal command):
        it counts in no statistic, only in :attr:`failed`, with its error in one line
        (``"RuntimeError: ..."``) so that the game can be re-run alone."""
        return cls(players, seat_wins=(0,) * players, seat_wins_sq=(0,) * players,
                   failed={failed.index: failed.error})

    @classmethod
    def of_game(cls, r: GameResult) -> Aggregate:
        """The aggregate of one game."""
        n = len(r.bots)
        credit = WIN_UNIT // len(r.winners)
        seat_wins = tuple(credit if i in r.winners else 0 for i in range(n))
        bot_seats: dict[str, int] = {}
        bot_wins: dict[str, int] = {}
        bot_sq: dict[str, int] = {}
        score_sum: dict[str, int] = {}
        hist: dict[str, dict[int, int]] = {}
        left: dict[str, int] = {}
        bot_rounds: dict[str, int] = {}
        for i, b in enumerate(r.bots):
            bot_rounds[b] = bot_rounds.get(b, 0) + r.rounds
            bot_seats[b] = bot_seats.get(b, 0) + 1
            bot_wins[b] = bot_wins.get(b, 0) + seat_wins[i]
            score_sum[b] = score_sum.get(b, 0) + r.final[i]
            h = hist.setdefault(b, {})
            k = r.final[i] // SCORE_BIN * SCORE_BIN
            h[k] = h.get(k, 0) + 1
            left[b] = left.get(b, 0) + r.points_left[i]
        for b in bot_seats:  # one game is one cluster: squares of the per-game sums
            bot_sq[b] = bot_wins[b] ** 2
        reasons: dict[str, int] = {}
        for reason in r.reasons:
            reasons[reason] = reasons.get(reason, 0) + 1
        turns_hist: dict[int, int] = {}
        for t in r.turns:
            turns_hist[t] = turns_hist.get(t, 0) + 1
        return cls(n, 1, r.rounds, sum(r.turns), r.steps, seat_wins,
                   tuple(w * w for w in seat_wins), bot_seats, bot_wins, bot_sq, score_sum,
                   hist, left, bot_rounds, reasons, {r.rounds: 1}, turns_hist,
                   bot_games={b: 1 for b in bot_seats},
                   bot_seats_sq={b: m * m for b, m in bot_seats.items()},
                   bot_wins_seats={b: bot_wins[b] * m for b, m in bot_seats.items()},
                   bot_score_sq={b: v * v for b, v in score_sum.items()},
                   bot_score_seats={b: score_sum[b] * m for b, m in bot_seats.items()},
                   bot_left_sq={b: v * v for b, v in left.items()},
                   bot_left_rounds={b: left[b] * r for b, r in bot_rounds.items()},
                   bot_rounds_sq={b: r * r for b, r in bot_rounds.items()},
                   quality=game_sums(bots=r.bots, winners=r.winners, final=r.final,
                                     positions=r.positions, turns=sum(r.turns),
                                     reasons=r.reasons, plays=r.plays,
                                     meld_phases=r.meld_phases, win_unit=WIN_UNIT))

    def merge(self, other: Aggregate) -> Aggregate:
        """The aggregate of both sets of games (exact; order does not matter)."""
        if self.players != other.players:
            raise ValueError("cannot merge aggregates of different player counts")
        hist = {b: dict(h) for b, h in self.bot_score_hist.items()}
        for b, h in other.bot_score_hist.items():
            hist[b] = _add(hist.get(b, {}), h)
        return Aggregate(
            self.players, self.games + other.games, self.rounds + other.rounds,
            self.turns + other.turns, self.steps + other.steps,
            tuple(a + b for a, b in zip(self.seat_wins, other.seat_wins, strict=True)),
            tuple(a + b for a, b in zip(self.seat_wins_sq, other.seat_wins_sq, strict=True)),
            _add(self.bot_seats, other.bot_seats), _add(self.bot_wins, other.bot_wins),
            _add(self.bot_wins_sq, other.bot_wins_sq),
            _add(self.bot_score_sum, other.bot_score_sum), hist,
            _add(self.bot_points_left, other.bot_points_left),
            _add(self.bot_rounds, other.bot_rounds),
            _add(self.reasons, other.reasons), _add(self.rounds_hist, other.rounds_hist),
            _add(self.turns_hist, other.turns_hist), {**self.failed, **other.failed},
            _add(self.bot_games, other.bot_games), _add(self.bot_seats_sq, other.bot_seats_sq),
            _add(self.bot_wins_seats, other.bot_wins_seats),
            _add(self.bot_score_sq, other.bot_score_sq),
            _add(self.bot_score_seats, other.bot_score_seats),
            _add(self.bot_left_sq, other.bot_left_sq),
            _add(self.bot_left_rounds, other.bot_left_rounds),
            _add(self.bot_rounds_sq, other.bot_rounds_sq), _add(self.quality, other.quality))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (histogram keys become strings); inverse of :meth:`from_dict`."""
        return {
            "v": AGGREGATE_VERSION,
            "players": self.players, "games": self.games, "rounds": self.rounds,
            "turns": self.turns, "steps": self.steps, "seat_wins": list(self.seat_wins),
            "seat_wins_sq": list(self.seat_wins_sq), "bot_seats": self.bot_seats,
            "bot_wins": self.bot_wins, "bot_wins_sq": self.bot_wins_sq,
            "bot_score_sum": self.bot_score_sum,
            "bot_score_hist": {b: {str(k): v for k, v in h.items()}
                               for b, h in self.bot_score_hist.items()},
            "bot_points_left": self.bot_points_left, "bot_rounds": self.bot_rounds,
            "reasons": self.reasons,
            "rounds_hist": {str(k): v for k, v in self.rounds_hist.items()},
            "turns_hist": {str(k): v for k, v in self.turns_hist.items()},
            "failed": {str(k): v for k, v in sorted(self.failed.items())},
            "bot_games": self.bot_games, "bot_seats_sq": self.bot_seats_sq,
            "bot_wins_seats": self.bot_wins_seats, "bot_score_sq": self.bot_score_sq,
            "bot_score_seats": self.bot_score_seats, "bot_left_sq": self.bot_left_sq,
            "bot_left_rounds": self.bot_left_rounds, "bot_rounds_sq": self.bot_rounds_sq,
            "quality": self.quality,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Aggregate:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            ValueError: an aggregate of another format (before version 2, ``bot_wins_sq``
                summed squares per seat and the per-game sums did not exist; before 3, the
                sums of the points left): its games must be re-played, as merging it would
                give wrong intervals.
            KeyError: a missing key.
        """
        if d.get("v", 1) != AGGREGATE_VERSION:
            raise ValueError(f"aggregate format {d.get('v', 1)} is not {AGGREGATE_VERSION} "
                             "(clustered sums missing): re-play these games")
        return cls(
            d["players"], d["games"], d["rounds"], d["turns"], d["steps"],
            tuple(d["seat_wins"]), tuple(d["seat_wins_sq"]), dict(d["bot_seats"]),
            dict(d["bot_wins"]), dict(d["bot_wins_sq"]), dict(d["bot_score_sum"]),
            {b: {int(k): v for k, v in h.items()} for b, h in d["bot_score_hist"].items()},
            dict(d["bot_points_left"]), dict(d["bot_rounds"]), dict(d["reasons"]),
            {int(k): v for k, v in d["rounds_hist"].items()},
            {int(k): v for k, v in d["turns_hist"].items()},
            {int(k): str(v) for k, v in (d.get("failed") or {}).items()},
            dict(d["bot_games"]), dict(d["bot_seats_sq"]), dict(d["bot_wins_seats"]),
            dict(d["bot_score_sq"]), dict(d["bot_score_seats"]), dict(d["bot_left_sq"]),
            dict(d["bot_left_rounds"]), dict(d["bot_rounds_sq"]),
            {str(k): int(v) for k, v in (d.get("quality") or {}).items()})


def merge_all(players: int, aggregates: Iterable[Aggregate]) -> Aggregate:
    """Merge many aggregates (the empty aggregate if there are none)."""
    total = Aggregate.empty(players)
    for a in aggregates:
        total = total.merge(a)
    return total


def failure_text(error: BaseException) -> str:
    """One line naming a failed game's error: ``"IllegalMoveError: R5.3: ..."``."""
    return " ".join(f"{type(error).__name__}: {error}".split())[:500]


@dataclass(frozen=True, slots=True)
class FailedGame:
    """A game of a batch that failed: its index in the batch and its error in one line
    (:func:`failure_text`)."""

    index: int
    error: str


def play_or_fail(bots: Sequence[str], seed: int, rules: RuleSet | None, index: int, *,
                 record: bool = False, commit: bool = False,
                 passthrough: tuple[type[BaseException], ...] = ()) -> GameResult | FailedGame:
    """:func:`play_game`, or, when a bot raises or breaks a rule (a bot bug), the
    :class:`FailedGame` of game ``index``: one game's failure never loses a
    batch. Only ``Exception`` is caught (``KeyboardInterrupt`` still stops),
    and not the ``passthrough`` types: a runner's own signals, such as Celery's soft
    time limit, which must stop the chunk."""
    try:
        return play_game(bots, seed, rules, record=record, commit=commit)
    except passthrough:
        raise
    except Exception as e:  # noqa: BLE001 - recorded as a failed game, with its error
        return FailedGame(index, failure_text(e))


#: called after each finished game of :func:`play_range` with (game index, result,
#: wall-clock seconds of the game)
GameHook = Callable[[int, GameResult, float], None]


def play_range(bots: Sequence[str], master_seed: int, start: int, stop: int,
               rules: RuleSet | None = None, rotate: bool = True, *,
               record: Callable[[int], bool] | None = None, on_game: GameHook | None = None,
               passthrough: tuple[type[BaseException], ...] = (),
               commit: bool = False) -> Aggregate:
    """Play games ``start .. stop-1`` of a batch and return their aggregate: the one
    simulation loop of ``rummy simulate`` (each process task), of Celery chunks and of
    :func:`run_games`.

    Game ``i`` uses :func:`game_seed` ``(master_seed, i)`` and :func:`lineup_for`
    ``(bots, i, rotate)``. A game that fails is counted in ``Aggregate.failed`` (see
    :func:`play_or_fail`, which also explains ``passthrough``).

    Args:
        record: ``record(i)`` true keeps game ``i``'s event log in the result given to
            ``on_game`` (``None``: record none).
        on_game: called after each game that finished (not after failed ones).
        commit: each recorded game's ``GameStarted`` carries a seed commitment
            (:func:`play_game`).
    """
    agg = Aggregate.empty(len(bots))
    for i in range(start, stop):
        t0 = time.perf_counter()
        r = play_or_fail(lineup_for(bots, i, rotate), game_seed(master_seed, i), rules, i,
                         record=record is not None and record(i), passthrough=passthrough,
                         commit=commit)
        if isinstance(r, FailedGame):  # a bot failed: a failed game, not a lost run
            agg = agg.merge(Aggregate.of_failure(len(bots), r))
            continue
        if on_game is not None:
            on_game(i, r, time.perf_counter() - t0)
        agg = agg.merge(Aggregate.of_game(r))
    return agg


def run_games(bots: Sequence[str], master_seed: int, start: int, stop: int,
              rules: RuleSet | None = None, rotate: bool = True) -> Aggregate:
    """:func:`play_range` without hooks (kept for callers and tests)."""
    return play_range(bots, master_seed, start, stop, rules, rotate)


def parse_lineup(names: str | Sequence[str] | None, players: int) -> tuple[str, ...]:
    """The seat line-up from bot names (a comma-separated string such as ``--bots``, or a
    list), cycled over ``players`` seats: ``basic,random`` for 4 players is
    ``basic,random,basic,random``. ``None`` or ``""`` means :data:`DEFAULT_LINEUP`.

    Raises:
        ValueError: an unknown bot (naming the known ones), or more names than players.
    """
    if names is None or (isinstance(names, str) and not names.strip()):
        names = DEFAULT_LINEUP
    items = names.split(",") if isinstance(names, str) else list(names)
    clean = [n.strip() for n in items if n.strip()]
    if not clean:
        raise ValueError("give at least one bot name")
    for b in clean:
        check_bot(b)
    if len(clean) > players:
        raise ValueError(f"{len(clean)} bots for {players} players")
    return tuple(clean[i % len(clean)] for i in range(players))


# ----------------------------------------------------------------------------- report

def report(agg: Aggregate) -> dict[str, Any]:
    """The balance report of an aggregate as a JSON-ready dict:
    ``rummy.balance.BalanceReport.of(agg).to_dict()`` (see there for the keys; ``games``
    does not include the ``failed_games``, which count in no figure)."""
    from rummy.balance import BalanceReport  # rummy.balance imports this module

    return BalanceReport.of(agg).to_dict()
