"""``search``: flat Monte Carlo search over determinizations of the hidden cards.

The bot sees only its seat's :class:`~rummy.views.PlayerView` (I3). At a decision with a
real choice it

1. lists a few *candidate* commands (:func:`candidates`): at ``knock_or_end`` knocking
   (R6.1) or playing on (R6.3); at ``meld_or_pass`` the exact solver's best play under
   several objectives (most points, most cards, the same keeping a hand joker back) and
   passing (R3.2, R3.3: the next card is drawn, or the turn ends);
2. samples a *determinization* (:func:`determinize`): the cards it cannot see — the
   deck(s) of R1.2 minus its own hand and every card on the table (I1) — shuffled and
   dealt into the opponents' hands (their sizes are public, I3) and the stock (its size
   is public), giving a full :class:`~rummy.state.GameState` consistent with the view;
3. plays every candidate in that same determinization (common random numbers: the
   candidates are compared on the same hidden cards), then *rolls out* the rest of the
   round with a fast policy for every seat, its own included (``strategic`` by default,
   :mod:`rummy.bots.strategic`), and scores the outcome (:func:`outcome`): its round
   score minus the best opponent's (R7), plus ``game_weight`` times (2 x its share of the
   win - 1) when the round ends the game (R9);
4. repeats steps 2–3 ``iterations`` times and plays the candidate with the best mean
   outcome; the first candidate (the ``strategic`` bot's own move) wins ties, and another
   candidate must beat it by ``margin`` standard errors of the paired difference.

A decision with one candidate (a draw, R3.6; a meld phase in which the solver finds no
play) is answered at once, without search.

Budget: ``iterations`` determinizations per decision (default
:data:`DEFAULT_ITERATIONS`; each costs one rollout per candidate), which keeps the bot
deterministic given its seed and its views. ``seconds`` (default ``None``) additionally
stops the search once that much wall time has passed since the decision started (at
least one determinization is always played); with it the moves depend on the machine's
speed, so it is off by default and never used by the simulator or the tournament.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from rummy.bots.base import BotBase
from rummy.bots.greedy import GreedyBot, plan_play
from rummy.bots.strategic import StrategicBot, should_knock
from rummy.cards import JOKER, decks_for, new_deck, physical
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.events import Event, GameEnded, RoundScored
from rummy.state import GameState
from rummy.views import PlayerView, view

#: determinizations per decision by default (each plays one rollout per candidate)
DEFAULT_ITERATIONS = 4
#: weight of winning (+) or losing (-) the game when a rollout's round ends it (R9), in
#: round points: the game bonus of R9.2 by default
DEFAULT_GAME_WEIGHT = 100.0
#: standard errors by which an alternative must beat the default move
DEFAULT_MARGIN = 0.0
#: commands after which a rollout is cut off (a round is a few hundred at most)
MAX_ROLLOUT_STEPS = 5_000


def unseen_cards(v: PlayerView) -> list[int]:
    """The cards the viewer cannot see, ascending: the deck(s) of R1.2 minus its hand and
    minus every card on the table (a table joker counts as a joker). By card conservation
    (I1) they are exactly the other hands and the stock.

    Raises:
        ValueError: ``v`` is a spectator view, or the count does not match the other
            hands' sizes plus the stock's size (an inconsistent view).
    """
    if v.seat is None:
        raise ValueError("a spectator view has no hand to search from")
    left = Counter(new_deck(decks_for(v.players)))
    left.subtract(v.hand)
    left.subtract(physical(c) for meld in v.table for c in meld)
    if any(n < 0 for n in left.values()):
        raise ValueError("the view holds more copies of a card than the deck (I1)")
    out = sorted(left.elements())
    hidden = sum(n for s, n in enumerate(v.hand_sizes) if s != v.seat) + v.stock_size
    if len(out) != hidden:
        raise ValueError(f"{len(out)} unseen cards for {hidden} hidden places (I1)")
    return out


def determinize(v: PlayerView, cards: Sequence[int], seed: int) -> GameState:
    """A full game state consistent with the view ``v``: the unseen cards, in the order
    ``cards`` gives them (a shuffle of :func:`unseen_cards`), dealt to the opponents
    in seat order (each gets its public hand size) and the rest to the stock, top first.

    ``seed`` becomes the state's game seed (it shuffles later rounds' decks, R2.2). The
    state passes the engine's invariants I1 and I2; every other field is the view's.

    Raises:
        ValueError: ``v`` is a spectator view, or ``cards`` has the wrong length.
    """
    if v.seat is None:
        raise ValueError("a spectator view has no hand to search from")
    hidden = sum(n for s, n in enumerate(v.hand_sizes) if s != v.seat) + v.stock_size
    if len(cards) != hidden:
        raise ValueError(f"{len(cards)} cards for {hidden} hidden places")
    hands: list[tuple[int, ...]] = []
    pos = 0
    for s in range(v.players):
        if s == v.seat:
            hands.append(v.hand)
        else:
            k = v.hand_sizes[s]
            hands.append(tuple(sorted(cards[pos:pos + k])))
            pos += k
    stock = tuple(cards[pos:])
    gone = Counter(new_deck(decks_for(v.players)))  # the cards no longer in the stock
    gone.subtract(stock)
    deck = tuple(sorted(gone.elements())) + stock
    return GameState(
        v.rules, v.players, v.names, seed, v.version, v.round, v.dealer, v.turn,
        v.phase, v.draws, tuple(hands), v.table, deck, len(deck) - len(stock),  # type: ignore[arg-type]
        v.final_turns_left, None, None, v.totals, v.rounds_won, v.opened, v.last_round,
        None)


def outcome(events: Sequence[Event], seat: int, game_weight: float) -> float | None:
    """The value for ``seat`` of a step's events, or ``None`` while the round goes on.

    When the events score the round (``RoundScored``, §7): ``seat``'s round score minus
    the highest other seat's (R7.2–R7.8), plus, when they also end the game
    (``GameEnded``, R9), ``game_weight * (2 * share - 1)`` with ``share`` the seat's share
    of the win (1, 1/k for a win shared by k, 0 for a loss; R9.4).
    """
    value: float | None = None
    for e in events:
        if isinstance(e, RoundScored):
            others = max(x for s, x in enumerate(e.scores) if s != seat)
            value = float(e.scores[seat] - others)
        elif isinstance(e, GameEnded) and value is not None:
            share = 1.0 / len(e.winners) if seat in e.winners else 0.0
            value += game_weight * (2.0 * share - 1.0)
    return value


def candidates(v: PlayerView) -> list[Command]:
    """The commands the search compares for the seat to act in ``v``, the ``strategic``
    bot's own choice first, without duplicates.

    * ``draw``: only the draw (R3.6).
    * ``knock_or_end``: knock (R6.1) and end the turn (R6.3), in the order
      :func:`rummy.bots.strategic.should_knock` prefers.
    * ``meld_or_pass``: the solver's best play by points (the greedy play), by number of
      cards, and both keeping a hand joker back, each under the opening rules (R5.5,
      :func:`rummy.bots.greedy.plan_play`), then passing (R3.2, R3.3). Only the pass when
      the solver finds no play.
    """
    seat = v.turn
    kinds = v.actions
    if "knock" in kinds and "end_turn" not in kinds:  # knock_timing=start (§11)
        rest = candidates(v._replace(actions=tuple(k for k in kinds if k != "knock")))
        return [Knock(seat), *rest] if should_knock(v) else [*rest, Knock(seat)]
    if "draw" in kinds:
        return [Draw(seat)]
    if "knock" in kinds:
        knock, wait = Knock(seat), EndTurn(seat)
        return [knock, wait] if should_knock(v) else [wait, knock]
    out: list[Command] = []
    tables: set[object] = set()
    keeps: list[tuple[int, ...]] = [()]
    if JOKER in v.hand:
        keeps.append((JOKER,))
    for keep in keeps:
        for objective in ("points", "cards"):
            planned = plan_play(v, keep=keep, objective=objective)
            if planned is not None and planned[0] not in tables:
                tables.add(planned[0])
                out.append(Meld(seat, planned[0]))
    out.append(Pass(seat))
    return out


class SearchBot(BotBase):
    """Determinized flat Monte Carlo over a few candidate moves (see the module docstring).

    Args:
        seed: seeds the bot's own ``random.Random`` (the determinizations).
        iterations: determinizations per decision (a positive integer).
        seconds: optional wall-time budget per decision, in seconds (``None``: none).
        game_weight: value of winning the game, in round points (see :func:`outcome`).
        margin: standard errors by which an alternative must beat the default move.
        rollout: registry name of the rollout policy; ``"strategic"`` or ``"greedy"``.

    Attributes:
        searched: decisions searched so far (two candidates or more).
        rollouts: rollouts played so far (candidates x determinizations).

    Raises:
        ValueError: ``iterations`` not positive, ``seconds`` not positive, an unknown
            rollout policy.
    """

    name = "search"

    def __init__(self, seed: int = 0, *, iterations: int = DEFAULT_ITERATIONS,
                 seconds: float | None = None, game_weight: float = DEFAULT_GAME_WEIGHT,
                 margin: float = DEFAULT_MARGIN, rollout: str = "strategic") -> None:
        super().__init__(seed)
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be positive or None, got {seconds!r}")
        if rollout not in ("strategic", "greedy"):
            raise ValueError(f"rollout must be 'strategic' or 'greedy', got {rollout!r}")
        self.iterations = iterations
        self.seconds = seconds
        self.game_weight = game_weight
        self.margin = margin
        self._policy: GreedyBot = (StrategicBot(seed) if rollout == "strategic"
                                     else GreedyBot(seed))
        self.searched = 0
        self.rollouts = 0

    def act(self, view: PlayerView) -> Command:
        """See :class:`rummy.bots.base.Bot`.

        Raises:
            TypeError: ``view`` is not a :class:`~rummy.views.PlayerView` (the bot never
                takes a full state: I3).
            ValueError: a spectator view or one that is not the seat's turn.
        """
        if not isinstance(view, PlayerView):
            raise TypeError(f"the search bot takes a PlayerView (I3), not "
                            f"{type(view).__name__}")
        if view.seat is None or view.seat != view.turn or not view.actions:
            raise ValueError("the search bot acts only on its own turn's view")
        cands = candidates(view)
        if len(cands) == 1:
            return cands[0]
        return cands[self._search(view, cands)]

    def _search(self, v: PlayerView, cands: list[Command]) -> int:
        """Index in ``cands`` of the candidate with the best mean :func:`outcome` over
        ``iterations`` determinizations (fewer when ``seconds`` runs out, at least one);
        candidate 0 unless another beats it (by ``margin`` standard errors of the paired
        difference when ``margin > 0``)."""
        assert v.seat is not None
        me = v.seat
        start = time.perf_counter() if self.seconds is not None else 0.0
        pool = unseen_cards(v)
        n = len(cands)
        sums = [0.0] * n
        diff_sq = [0.0] * n  # squares of the paired differences against candidate 0
        played = 0
        self.searched += 1
        while played < self.iterations:
            cards = list(pool)
            self.rng.shuffle(cards)
            det = determinize(v, cards, self.rng.getrandbits(62))
            values = [self._play_out(det, c, me) for c in cands]
            for i, x in enumerate(values):
                sums[i] += x
                d = x - values[0]
                diff_sq[i] += d * d
            played += 1
            self.rollouts += n
            if self.seconds is not None and time.perf_counter() - start >= self.seconds:
                break
        best = 0
        for i in range(1, n):
            mean_diff = (sums[i] - sums[0]) / played
            if self.margin > 0 and played > 1:
                var = max(0.0, diff_sq[i] / played - mean_diff * mean_diff)
                se = (var / (played - 1)) ** 0.5
                if mean_diff <= self.margin * se:
                    continue
            if sums[i] > sums[best]:
                best = i
        return best

    def _play_out(self, state: GameState, first: Command, me: int) -> float:
        """Play ``first`` in ``state``, then every seat with the rollout policy until the
        round is scored; the value of :func:`outcome` for ``me``."""
        state, events = step(state, first)
        value = outcome(events, me, self.game_weight)
        policy = self._policy
        steps = 0
        while value is None:
            seat = state.turn
            state, events = step(state, policy.act(view(state, seat)))
            value = outcome(events, me, self.game_weight)
            steps += 1
            if steps > MAX_ROLLOUT_STEPS:
                raise RuntimeError("a rollout did not end its round (an engine or bot loop)")
        return value


__all__ = ["SearchBot", "candidates", "determinize", "outcome", "unseen_cards",
           "DEFAULT_ITERATIONS"]
