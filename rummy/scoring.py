"""Round scoring (docs/rules.md §7, §8.3) and game-end bonuses (§9). Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rummy.cards import hand_points
from rummy.rules import DEFAULT_RULES, RuleSet


@dataclass(frozen=True, slots=True)
class RoundScore:
    """Outcome of a round.

    Attributes:
        points: each seat's hand value in points (R1.5), by seat.
        scores: each seat's score for the round (R7.2–R7.8), by seat.
        winners: seats that won the round, ascending (R7.1, R7.5, R7.6).
    """

    points: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]


def score_round(hands: Sequence[Sequence[int]], knocker: int | None,
                rules: RuleSet = DEFAULT_RULES) -> RoundScore:
    """Score a round from the hands left when it ends.

    Args:
        hands: each seat's hand (cards 0..52), by seat.
        knocker: the seat that knocked or went out, or ``None`` when the round ended after
            the stock ran out (R8.3).
        rules: the game's rule set (bonuses of R7.4 and R7.7).

    Returns:
        The points, scores and winners (R7.1–R7.8): the lowest hand wins; each winner scores
        the sum of the other players' excess over the lowest value (R7.2/R7.3, tied winners
        contribute 0); a knocker who ties loses to the others (R7.5); a winner who did not
        knock gets the undercut bonus (R7.4); an empty hand gets the going-out bonus (R7.7).
    """
    points = tuple(map(hand_points, hands))
    low = min(points)
    tied = [i for i, p in enumerate(points) if p == low]
    if knocker is not None and knocker in tied and len(tied) > 1:
        tied.remove(knocker)  # R7.5: the knocker loses every tie
    base = sum(points) - low * len(points)  # R7.2/R7.3: sum over others of p[j] - low
    scores = [0] * len(points)
    for w in tied:
        s = base
        if knocker is not None and w != knocker:
            s += rules.undercut_bonus  # R7.4 / R7.5 / R7.6
        if not hands[w]:
            s += rules.going_out_bonus  # R7.7
        scores[w] = s
    return RoundScore(points, tuple(scores), tuple(tied))


@dataclass(frozen=True, slots=True)
class GameEnd:
    """Final standings (R9).

    Attributes:
        bonuses: each seat's bonus points (R9.2, R9.3), by seat.
        final: each seat's total after bonuses, by seat.
        winners: seats with the highest final total (R9.4), ascending.
    """

    bonuses: tuple[int, ...]
    final: tuple[int, ...]
    winners: tuple[int, ...]


def game_over(totals: Sequence[int], rules: RuleSet = DEFAULT_RULES) -> bool:
    """True if a running total reached the target (R9.1)."""
    return max(totals) >= rules.target_score


def final_scores(totals: Sequence[int], rounds_won: Sequence[int],
                 rules: RuleSet = DEFAULT_RULES, left: Sequence[int] = ()) -> GameEnd:
    """Bonuses and winners at the end of the game (R9.2–R9.4, R13.4).

    A total at or above the target gets ``game_bonus``; every other player gets
    ``round_bonus`` per round won (every player does with ``round_bonus_for_all``).
    Bonuses never count toward the target (R9.3a). A seat in ``left`` (it resigned or
    left a served game) takes no bonus and ranks below every other seat: the winners are
    the highest final totals among the others (among all when every seat left).
    """
    bonuses = []
    for i, (t, won) in enumerate(zip(totals, rounds_won, strict=True)):
        b = 0
        reached = t >= rules.target_score
        if reached:
            b += rules.game_bonus
        if not reached or rules.round_bonus_for_all:
            b += rules.round_bonus * won
        bonuses.append(0 if i in left else b)
    final = tuple(t + b for t, b in zip(totals, bonuses, strict=True))
    stayed = [i for i in range(len(final)) if i not in left] or range(len(final))
    top = max(final[i] for i in stayed)
    return GameEnd(tuple(bonuses), final, tuple(i for i in stayed if final[i] == top))
