"""Puzzles from real games: the biggest misses as solver-checked best-play positions.

Pure (no I/O). A puzzle is a meld decision of a game (:mod:`rummy.analysis`) where the
seat missed points: the table before the decision and the seat's hand (its own view, I3),
and the question "find the play worth ``best`` points". Every puzzle

* is proven: the solver finished its search (``best`` is the optimum, not a bound);
* is a ``best_play`` case of the shared conformance format
  (``tests/conformance/cases/README.md``) that :func:`rummy.conformance.run_case` passes,
  with ``rules`` and ``opening`` when the game's rules need them, so ``rummy conformance``
  accepts the file;
* counts a distinct miss (:attr:`rummy.analysis.MeldDecision.counted`): the same missed
  play at the next draw is not a second puzzle, nor is the same position twice.

Puzzles are ordered by the points missed (largest first), then by source and event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rummy.analysis import MeldDecision, analyse
from rummy.conformance import run_case
from rummy.events import Event, GameStarted
from rummy.melds import Table, format_meld, format_table
from rummy.rules import RuleSet

#: puzzles kept by default, and the smallest miss (points) that makes one
DEFAULT_COUNT = 10
DEFAULT_MIN_POINTS = 10


@dataclass(frozen=True, slots=True)
class Puzzle:
    """One puzzle: where it comes from (``source`` and the 1-based ``event`` that answered
    the decision), the position (``table``, ``hand``, ``rules``, ``opening``: the seat had
    not opened under R5.5's per-player variant), the answer (``best`` points, the whole
    ``best_table`` and ``command`` as typed in ``rummy play``) and what was played."""

    id: str
    source: str
    event: int
    round: int
    seat: int
    table: Table
    hand: tuple[int, ...]
    rules: RuleSet
    opening: bool
    best: int
    best_table: Table
    best_melds: Table
    command: str
    played: int
    missed: int

    @property
    def question(self) -> str:
        """The puzzle's question: ``"find the play worth 31 points"``."""
        return f"find the play worth {self.best} points"

    def to_case(self) -> dict[str, Any]:
        """The conformance ``best_play`` case (JSON-ready); the fields after
        ``best_points`` are notes a runner ignores."""
        case: dict[str, Any] = {
            "id": self.id, "kind": "best_play", "rule": "R5",
            "table": format_table(self.table), "hand": format_meld(self.hand),
            "best_points": self.best}
        changed = self.rules.changed()
        if changed:
            case["rules"] = changed
        if self.opening:
            case["opening"] = True
        case.update({"question": self.question, "source": self.source, "event": self.event,
                     "round": self.round, "seat": self.seat, "played_points": self.played,
                     "missed_points": self.missed, "answer": self.command,
                     "answer_melds": format_table(self.best_melds)})
        return case


def _candidate(source: str, d: MeldDecision, rules: RuleSet, opening: bool, pid: str
               ) -> Puzzle:
    return Puzzle(pid, source, d.index, d.round, d.seat, d.table, d.hand, rules, opening,
                  d.best, d.best_table, d.best_melds, d.best_command, d.played, d.counted)


def find_puzzles(games: Sequence[tuple[str, Sequence[Event]]], *,
                 count: int = DEFAULT_COUNT, min_points: int = DEFAULT_MIN_POINTS,
                 seat: int | None = None) -> list[Puzzle]:
    """The ``count`` biggest distinct misses of ``games`` (``(source, full-information
    log)`` pairs) worth at least ``min_points``, as proven puzzles (module docstring);
    with ``seat``, only that seat's misses ("learn from your mistakes").

    Raises:
        ValueError: a log that does not start with ``GameStarted``; ``count`` or
            ``min_points`` below 1.
    """
    if count < 1 or min_points < 1:
        raise ValueError("count and min_points must be at least 1")
    found: list[tuple[int, str, int, MeldDecision, RuleSet, bool]] = []
    for source, events in games:
        start = events[0] if events else None
        if not isinstance(start, GameStarted):
            raise ValueError(f"{source}: a game log starts with GameStarted")
        rules = start.rules
        if seat is not None and not 0 <= seat < start.players:
            continue  # a game with fewer seats has none of that seat's misses
        for d in analyse(events, seat).decisions:
            if d.counted >= min_points and d.proven and d.best_table:
                opened_before = _opened(events, d)
                opening = rules.opening_meld_per_player and not opened_before
                found.append((d.counted, source, d.index, d, rules, opening))
    found.sort(key=lambda x: (-x[0], x[1], x[2]))
    out: list[Puzzle] = []
    seen: set[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]] = set()
    for _missed, source, _index, d, rules, opening in found:
        key = (tuple(sorted(tuple(sorted(m)) for m in d.table)), tuple(sorted(d.hand)))
        if key in seen:
            continue
        p = _candidate(source, d, rules, opening, f"p-{len(out) + 1:03d}")
        ok, _msg = run_case(p.to_case())
        if not ok:
            continue  # the conformance runner does not agree (e.g. an opening subtlety)
        seen.add(key)
        out.append(p)
        if len(out) == count:
            break
    return out


def _opened(events: Sequence[Event], d: MeldDecision) -> bool:
    """Whether seat ``d.seat`` had melded earlier in round ``d.round`` (R5.5)."""
    from rummy.events import Melded, RoundStarted
    rnd = 0
    for e in events[:d.index - 1]:
        if isinstance(e, RoundStarted):
            rnd = e.round
        elif isinstance(e, Melded) and e.seat == d.seat and rnd == d.round:
            return True
    return False


__all__ = ["DEFAULT_COUNT", "DEFAULT_MIN_POINTS", "Puzzle", "find_puzzles"]
