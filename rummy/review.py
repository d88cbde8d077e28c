"""A review of every decision of a game, each seat judged from its own view (I3).

Pure (no I/O), deterministic given ``seed``. Built on :mod:`rummy.analysis` (the solver's
best play at each meld decision) and on the ``search`` bot's determinized rollouts
(:mod:`rummy.bots.search`: :func:`~rummy.bots.search.determinize` and
:func:`~rummy.bots.search.outcome`). The definitions (thresholds, accuracy, the graph)
are in ``docs/review.md``; in short:

* **equity** is in round points, the ``search`` bot's :func:`~rummy.bots.search.outcome`:
  the seat's round score minus the best opponent's (R7), plus ``game_weight`` x (2 x its
  share of the win - 1) when the round ends the game (R9).
* **meld decisions** (the seat melded, R5): equity lost = the points of the distinct miss
  (:attr:`rummy.analysis.MeldDecision.counted`, the solver's exact best play).
* **draw-again-or-meld decisions** (the seat passed while a meld was open to it, R3.2,
  R3.3, R8.2) and **knock-or-play-on decisions** (R6.1, R6.3): every choice is played in
  the same ``budget`` determinizations of the hidden cards (drawn from the seat's view
  only) and the round rolled out with the ``strategic`` policy for every seat; equity
  lost = best mean - chosen mean when that difference exceeds :data:`SIGNIFICANCE`
  standard errors of the paired difference, else 0 (too close to call).
* **classes** by equity lost: :data:`INACCURACY`, :data:`MISTAKE`, :data:`BLUNDER`
  points; **marks** ``missed going out`` (a play that emptied the hand, R6.2, was open
  and not made) and ``missed knock`` (knocking was significantly better, R6.1).
* **accuracy** of a decision: ``100 * exp(-lost / ACCURACY_SCALE)``; a seat's accuracy is
  the mean over its judged decisions (those with a real choice).
* **equity graph**: after every turn (and every deal), each seat's chance to win the game
  from its own view: ``budget`` determinizations, each rolled out to the end of the round;
  when that does not end the game (R9.1), the rest of the game is completed
  :data:`CONTINUATIONS` times from a pool of whole rounds played by ``strategic`` bots
  under the same rules (seats shuffled), and the share of wins (R9.4) averaged. The
  interval is the normal interval (1.96 standard errors over the determinizations,
  clipped to 0..1).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy.analysis import (
    ANALYSIS_NODE_LIMIT,
    GameAnalysis,
    MeldDecision,
    analyse_steps,
    seat_steps,
)
from rummy.bots.greedy import plan_play
from rummy.bots.search import DEFAULT_GAME_WEIGHT, determinize, outcome, unseen_cards
from rummy.bots.strategic import StrategicBot
from rummy.commands import Command, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.events import (
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    RoundScored,
    RoundStarted,
    TurnEnded,
)
from rummy.evolve import evolve
from rummy.lifecycle import left_seats
from rummy.rules import RuleSet
from rummy.scoring import final_scores, game_over
from rummy.state import GameState
from rummy.views import PlayerView, view

#: determinizations per evaluated choice and per graph point and seat, by default
DEFAULT_BUDGET = 4
#: equity lost (round points) from which a decision is an inaccuracy, a mistake, a blunder
INACCURACY, MISTAKE, BLUNDER = 10.0, 25.0, 50.0
#: a rollout difference counts only beyond this many standard errors of the paired mean
SIGNIFICANCE = 2.0
#: points of equity lost that divide a decision's accuracy by e (docs/review.md)
ACCURACY_SCALE = 30.0
#: completions of the rest of the game per determinization, in the equity graph
CONTINUATIONS = 64
#: whole games of strategic bots whose rounds form the continuation pool
POOL_GAMES = 4
#: commands after which a rollout is cut off (a round is a few hundred at most)
MAX_ROLLOUT_STEPS = 5_000


def classify(lost: float) -> str:
    """The class of a decision that lost ``lost`` points of equity: ``"blunder"`` from
    :data:`BLUNDER`, ``"mistake"`` from :data:`MISTAKE`, ``"inaccuracy"`` from
    :data:`INACCURACY`, else ``""``."""
    if lost >= BLUNDER:
        return "blunder"
    if lost >= MISTAKE:
        return "mistake"
    if lost >= INACCURACY:
        return "inaccuracy"
    return ""


def accuracy(lost: float) -> float:
    """A decision's accuracy in percent: ``100 * exp(-lost / ACCURACY_SCALE)`` (100 for a
    best choice; 72 for 10 points lost, 43 for 25, 19 for 50)."""
    return 100.0 * math.exp(-max(0.0, lost) / ACCURACY_SCALE)


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of a decision and its estimated equity (round points, mean over the
    determinizations, with the standard error of the mean)."""

    label: str
    equity: float
    se: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"label": self.label, "equity": round(self.equity, 2), "se": round(self.se, 2)}


@dataclass(frozen=True, slots=True)
class ReviewedDecision:
    """One reviewed decision.

    Attributes:
        index: 1-based index of the answering event (``--at index-1`` shows the position).
        round, seat: where and who. kind: ``"meld"`` (judged by the solver),
            ``"draw_again"`` (a pass while a meld was open, judged by rollouts) or
            ``"knock"`` (knock or play on, judged by rollouts).
        chosen: label of the choice made. best: label of the best choice.
        lost: equity lost in round points (0 for a best or too-close choice).
        cls: :func:`classify` of ``lost``. marks: ``"missed going out"``,
            ``"missed knock"``. choices: the rollout estimates (empty for ``"meld"``).
        meld: the solver's analysis of a meld-or-pass decision (``None`` for a knock).
        controller: who made it: ``""`` the seat's player, else the server bot that had
            taken the seat over (§13).
    """

    index: int
    round: int
    seat: int
    kind: str
    chosen: str
    best: str
    lost: float
    cls: str
    marks: tuple[str, ...] = ()
    choices: tuple[Choice, ...] = ()
    meld: MeldDecision | None = None
    controller: str = ""

    @property
    def accuracy(self) -> float:
        """:func:`accuracy` of ``lost``."""
        return accuracy(self.lost)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        out: dict[str, Any] = {
            "index": self.index, "round": self.round, "seat": self.seat, "kind": self.kind,
            "chosen": self.chosen, "best": self.best, "lost": round(self.lost, 2),
            "class": self.cls, "marks": list(self.marks),
            "accuracy": round(self.accuracy, 1),
            "choices": [c.to_dict() for c in self.choices],
            "controller": self.controller}
        if self.meld is not None:
            out["best_command"] = self.meld.best_command
            out["best_points"] = self.meld.best
            out["played_points"] = self.meld.played
        return out


@dataclass(frozen=True, slots=True)
class GraphPoint:
    """Each seat's chance to win the game after event ``index`` (1-based), from its own
    view: ``chance[s]`` with the interval ``low[s]..high[s]`` (fractions 0..1); ``None``
    for a seat not reviewed."""

    index: int
    round: int
    chance: tuple[float | None, ...]
    low: tuple[float | None, ...]
    high: tuple[float | None, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (three decimals)."""
        def r(xs: tuple[float | None, ...]) -> list[float | None]:
            return [None if x is None else round(x, 3) for x in xs]
        return {"index": self.index, "round": self.round, "chance": r(self.chance),
                "low": r(self.low), "high": r(self.high)}


@dataclass(frozen=True, slots=True)
class SeatReview:
    """One seat's figures: ``accuracy`` (percent, mean over ``judged`` decisions), the
    number of each class and mark, and the points left on the table (distinct misses)."""

    seat: int
    name: str
    judged: int
    accuracy: float
    inaccuracies: int
    mistakes: int
    blunders: int
    missed_going_out: int
    missed_knocks: int
    points_left: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"seat": self.seat, "name": self.name, "judged": self.judged,
                "accuracy": round(self.accuracy, 1), "inaccuracies": self.inaccuracies,
                "mistakes": self.mistakes, "blunders": self.blunders,
                "missed_going_out": self.missed_going_out,
                "missed_knocks": self.missed_knocks, "points_left": self.points_left}


@dataclass(frozen=True, slots=True)
class GameReview:
    """The review of a game: ``decisions`` in log order (only those with a real choice),
    ``graph`` points in log order, ``seats`` one per reviewed seat, the ``analysis`` it
    builds on, and the ``budget`` and ``seed`` that make it reproducible."""

    players: int
    seat: int | None
    budget: int
    seed: int
    decisions: tuple[ReviewedDecision, ...]
    graph: tuple[GraphPoint, ...]
    seats: tuple[SeatReview, ...]
    analysis: GameAnalysis
    rollouts: int = field(default=0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"players", "seat", "budget", "seed", "rollouts",
        "thresholds", "seats", "decisions", "graph", "analysis"}``."""
        return {"players": self.players, "seat": self.seat, "budget": self.budget,
                "seed": self.seed, "rollouts": self.rollouts,
                "thresholds": {"inaccuracy": INACCURACY, "mistake": MISTAKE,
                               "blunder": BLUNDER, "significance_se": SIGNIFICANCE,
                               "accuracy_scale": ACCURACY_SCALE},
                "seats": [s.to_dict() for s in self.seats],
                "decisions": [d.to_dict() for d in self.decisions],
                "graph": [g.to_dict() for g in self.graph],
                "analysis": self.analysis.to_dict()}


# ---------------------------------------------------------------------- rollouts


class _Rollouts:
    """Round rollouts from a seat's view, seeded per evaluation (stable across runs)."""

    def __init__(self, seed: int, game_weight: float) -> None:
        self.seed = seed
        self.game_weight = game_weight
        self.count = 0

    def rng(self, *key: object) -> random.Random:
        return random.Random(":".join(map(str, (self.seed, *key))))

    def play(self, state: GameState, first: Command | None, me: int, policy: StrategicBot
             ) -> tuple[float, GameState, list[Event]]:
        """Play ``first`` (if any), then ``policy`` for every seat until the round is
        scored; the outcome for ``me``, the state after and the last step's events."""
        self.count += 1
        events: list[Event] = []
        value: float | None = None
        if first is not None:
            state, evs = step(state, first)
            events = list(evs)
            value = outcome(events, me, self.game_weight)
        steps = 0
        while value is None:
            state, evs = step(state, policy.act(view(state, state.turn)))
            events = list(evs)
            value = outcome(events, me, self.game_weight)
            steps += 1
            if steps > MAX_ROLLOUT_STEPS:
                raise RuntimeError("a rollout did not end its round (an engine or bot loop)")
        return value, state, events

    def compare(self, v: PlayerView, cands: Sequence[Command], n: int, key: object
                ) -> list[tuple[float, float, list[float]]]:
        """Each candidate's mean outcome, its standard error and the per-determinization
        values, over ``n`` determinizations shared by all candidates."""
        assert v.seat is not None
        rng = self.rng("decision", key)
        pool = unseen_cards(v)
        values: list[list[float]] = [[] for _ in cands]
        for _ in range(n):
            cards = list(pool)
            rng.shuffle(cards)
            det = determinize(v, cards, rng.getrandbits(62))
            pseed = rng.getrandbits(32)
            for i, c in enumerate(cands):
                values[i].append(self.play(det, c, v.seat, StrategicBot(pseed))[0])
        return [(_mean(xs), _se(xs), xs) for xs in values]


def _controller(v: PlayerView) -> str:
    """Who decided for the viewing seat (§13): ``""`` its player, else the bot's name."""
    return v.controllers[v.seat] if v.seat is not None and v.controllers else ""


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _se(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def _lost(chosen: list[float], best: list[float]) -> float:
    """Equity lost by ``chosen`` against ``best`` (paired values): the mean difference if
    it exceeds :data:`SIGNIFICANCE` standard errors, else 0; always 0 from a single
    determinization (no standard error: too close to call)."""
    diff = [b - c for b, c in zip(best, chosen, strict=True)]
    if len(diff) < 2:
        return 0.0
    m = _mean(diff)
    return m if m > 0 and m > SIGNIFICANCE * _se(diff) else 0.0


def _label(cmd: Command, v: PlayerView) -> str:
    if isinstance(cmd, Pass):
        return "pass (draw again)" if v.final_turns_left is None and \
            v.draws < v.rules.max_draws_per_turn else "pass (end the meld phase)"
    if isinstance(cmd, Knock):
        return "knock"
    if isinstance(cmd, EndTurn):
        return "play on"
    if isinstance(cmd, Meld):
        from rummy.meld_commands import meld_command
        return "meld: " + meld_command(v.table, cmd.table)
    return type(cmd).__name__.lower()


# ---------------------------------------------------------------------- the graph


def round_pool(rules: RuleSet, players: int, seed: int, games: int = POOL_GAMES
               ) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Whole rounds of ``strategic`` bots under ``rules``: ``(scores, winners)`` of every
    round of ``games`` games (R7), the continuation pool of the equity graph."""
    from rummy.simulate import play_game
    out: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for g in range(games):
        res = play_game(("strategic",) * players, seed * 1009 + g, rules, record=True)
        out.extend((e.scores, e.winners) for e in res.events or () if isinstance(e, RoundScored))
    return out


def _finish(totals: Sequence[int], won: Sequence[int], me: int, rules: RuleSet,
            pool: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], rng: random.Random,
            n: int, left: Sequence[int] = ()) -> float:
    """``me``'s mean share of the win (R9.4) over ``n`` completions of the game from
    ``totals`` and rounds won, each adding rounds drawn from ``pool`` (seats shuffled);
    the seats in ``left`` resigned or left and rank below the others (R13.4)."""
    if game_over(totals, rules):
        end = final_scores(totals, won, rules, left)
        return 1.0 / len(end.winners) if me in end.winners else 0.0
    players = len(totals)
    acc = 0.0
    for _ in range(n):
        t, w = list(totals), list(won)
        for _r in range(200):
            scores, winners = pool[rng.randrange(len(pool))]
            perm = list(range(players))
            rng.shuffle(perm)
            for s in range(players):
                t[perm[s]] += scores[s]
            for s in winners:
                w[perm[s]] += 1
            if game_over(t, rules):
                break
        end = final_scores(t, w, rules, left)
        acc += 1.0 / len(end.winners) if me in end.winners else 0.0
    return acc / n


def win_chance(v: PlayerView, ro: _Rollouts, n: int,
               pool: Sequence[tuple[tuple[int, ...], tuple[int, ...]]], key: object,
               left: Sequence[int] = ()) -> tuple[float, float, float]:
    """The viewer's chance to win the game from ``v`` alone (I3): mean, low, high (0..1)
    over ``n`` determinizations (module docstring). ``left``: the seats that resigned or
    left a served game (public, in the log): they rank below every other seat whatever
    their totals (R13.4), so a seat that left wins only when every seat did."""
    assert v.seat is not None
    me = v.seat
    rng = ro.rng("graph", key)
    pool_cards = unseen_cards(v)
    xs: list[float] = []
    for _ in range(n):
        cards = list(pool_cards)
        rng.shuffle(cards)
        det = determinize(v, cards, rng.getrandbits(62))
        _value, _after, events = ro.play(det, None, me, StrategicBot(rng.getrandbits(32)))
        scored = next(e for e in events if isinstance(e, RoundScored))
        won = list(v.rounds_won)
        for s in scored.winners:
            won[s] += 1
        # the game's end from the round's totals (the rollout's own GameEnded does not
        # know who left: a determinized state has no seat lifecycle)
        xs.append(_finish(scored.totals, won, me, v.rules, pool, rng, CONTINUATIONS, left))
    m = _mean(xs)
    half = 1.96 * _se(xs)
    return m, max(0.0, m - half), min(1.0, m + half)


# ---------------------------------------------------------------------- the review


def review(events: Sequence[Event], seat: int | None = None, *, budget: int = DEFAULT_BUDGET,
           seed: int = 0, game_weight: float = DEFAULT_GAME_WEIGHT,
           node_limit: int | None = ANALYSIS_NODE_LIMIT, graph: bool = True) -> GameReview:
    """Review a full-information game log: every seat (or only ``seat``), each decision
    judged from the deciding seat's view only (I3); see the module docstring and
    docs/review.md.

    Args:
        events: the log (verify it first, :func:`rummy.invariants.verify_log`).
        seat: review only this seat (its decisions and its graph line).
        budget: determinizations per evaluated choice and per graph point and seat; 0
            judges the meld decisions by the solver only (no rollouts, no graph). The
            cost is at most ``budget x (choices + seats x (turns + rounds))`` round
            rollouts plus one solver call per meld decision.
        seed: seeds every determinization and rollout (same seed, same figures).
        game_weight: the value of winning the game, in round points (R9).
        node_limit: the solver's budget per meld decision.
        graph: compute the equity graph (the costlier half).

    Raises:
        ValueError: no ``GameStarted`` first, a bad ``seat`` (R1.1) or ``budget``.
    """
    if not events or not isinstance(events[0], GameStarted):
        raise ValueError("a game log starts with GameStarted")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a non-negative integer, got {budget!r}")
    start = events[0]
    players = start.players
    if seat is not None and not 0 <= seat < players:
        raise ValueError(f"seat must be 0..{players - 1} (R1.1), got {seat}")
    seats = list(range(players)) if seat is None else [seat]
    steps = list(seat_steps(events, seat))
    analysis = analyse_steps(steps, players=players, names=start.names, seat=seat,
                             node_limit=node_limit)
    by_index = {d.index: d for d in analysis.decisions}
    ro = _Rollouts(seed, game_weight)
    reviewed: list[ReviewedDecision] = []
    for s in steps:
        v, e = s.view, s.event
        assert v.seat is not None
        if isinstance(e, (Melded, Passed)):
            d = by_index[s.index]
            if d.best == 0:
                continue  # no meld was open: no choice to judge (R5.1)
            marks = ("missed going out",) if (len(d.best_cards) == len(v.hand)
                                              and d.played < d.best) else ()
            if isinstance(e, Melded):
                lost = float(d.counted)
                reviewed.append(ReviewedDecision(
                    s.index, v.round, v.seat, "meld", "meld " + str(d.played) + " points",
                    "meld " + str(d.best) + " points", lost, classify(lost), marks, (), d,
                    _controller(v)))
                continue
            planned = plan_play(v)
            if planned is None:
                continue  # the opening rules (R5.5) leave no play
            cands: list[Command] = [Pass(v.seat), Meld(v.seat, planned[0])]
        elif isinstance(e, (Knocked, TurnEnded)):
            if "knock" not in v.actions:
                continue
            cands = [Knock(v.seat), EndTurn(v.seat)]
            marks = ()
            d = None
        else:  # pragma: no cover - seat_steps yields only these
            continue
        if budget == 0:
            continue  # no rollouts: only the solver's judgement of meld decisions
        est = ro.compare(v, cands, budget, s.index)
        chosen = 0 if isinstance(e, (Passed, Knocked)) else 1
        best = max(range(len(cands)), key=lambda i: (est[i][0], i == chosen))
        lost = _lost(est[chosen][2], est[best][2]) if best != chosen else 0.0
        if isinstance(e, TurnEnded) and lost > 0:
            marks = ("missed knock",)
        choices = tuple(Choice(_label(c, v), m, se) for c, (m, se, _xs) in zip(
            cands, est, strict=True))
        reviewed.append(ReviewedDecision(
            s.index, v.round, v.seat, "knock" if d is None else "draw_again",
            choices[chosen].label, choices[best].label, lost, classify(lost), marks,
            choices, d, _controller(v)))
    points = _graph(events, seats, ro, budget, seed) if graph and budget > 0 else []
    summaries = []
    for p in seats:
        mine = [r for r in reviewed if r.seat == p]
        acc = _mean([r.accuracy for r in mine]) if mine else 100.0
        summaries.append(SeatReview(
            p, start.names[p] if p < len(start.names) else "", len(mine), acc,
            sum(r.cls == "inaccuracy" for r in mine), sum(r.cls == "mistake" for r in mine),
            sum(r.cls == "blunder" for r in mine),
            sum("missed going out" in r.marks for r in mine),
            sum("missed knock" in r.marks for r in mine),
            next(s.missed_points for s in analysis.seats if s.seat == p)))
    return GameReview(players, seat, budget, seed, tuple(reviewed), tuple(points),
                      tuple(summaries), analysis, ro.count)


def _graph(events: Sequence[Event], seats: Sequence[int], ro: _Rollouts, budget: int,
           seed: int) -> list[GraphPoint]:
    """The equity graph: a point after every ``TurnEnded`` and ``RoundStarted`` (the deal,
    also after a knock) and the exact result at ``GameEnded``."""
    start = events[0]
    assert isinstance(start, GameStarted)
    players = start.players
    pool = round_pool(start.rules, players, seed)
    out: list[GraphPoint] = []
    state: GameState | None = None
    for i, e in enumerate(events, 1):
        state = evolve(state, e)
        if isinstance(e, GameEnded):
            chance: list[float | None] = [None] * players
            for p in seats:
                chance[p] = 1.0 / len(e.winners) if p in e.winners else 0.0
            out.append(GraphPoint(i, state.round, tuple(chance), tuple(chance),
                                  tuple(chance)))
        elif isinstance(e, (TurnEnded, RoundStarted)):
            if i < len(events) and isinstance(events[i], RoundScored):
                continue  # the round is scored next: the point comes after the deal
            c: list[float | None] = [None] * players
            lo: list[float | None] = [None] * players
            hi: list[float | None] = [None] * players
            for p in seats:
                c[p], lo[p], hi[p] = win_chance(view(state, p), ro, budget, pool, (i, p),
                                                left_seats(state))
            out.append(GraphPoint(i, state.round, tuple(c), tuple(lo), tuple(hi)))
    return out


__all__ = ["ACCURACY_SCALE", "BLUNDER", "CONTINUATIONS", "Choice", "DEFAULT_BUDGET",
           "GameReview", "GraphPoint", "INACCURACY", "MISTAKE", "ReviewedDecision",
           "SIGNIFICANCE", "SeatReview", "accuracy", "classify", "review", "round_pool",
           "win_chance"]
