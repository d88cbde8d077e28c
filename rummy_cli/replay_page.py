"""The replay page: one self-contained HTML file of a game (``rummy replay LOG --html F``).

The file needs no network: the CSS and the plain script (``rummy_cli/page/``) are inlined
and the game is embedded as JSON (``<script type="application/json" id="game">``). All the
game logic stays here, in Python; the script only draws the step it is asked for.

Data embedded (:func:`page_data`), one entry per event, the state *after* event ``i``
(``i`` = 1..N, the numbering of ``rummy replay --at N``):

* ``e``: a sentence describing the event, ``r`` round, ``d`` dealer, ``u`` seat to act,
  ``p`` phase, ``s`` stock size, ``o`` running totals, ``z`` hand sizes;
* ``h``: one entry per seat, the hand as space-separated notation (R1.4), or ``null`` for a
  hand the viewer may not see;
* ``t``: index into ``tables``; a table is ``{"melds": [[card, ...], ...], "fresh": [j]}``
  where a card is its notation, or ``[notation, mark, was]`` after a meld action:
  ``mark`` is ``"new"`` (from the hand, R5.4), ``"moved"`` (from another meld, R5.2) or
  ``"freed"`` (a table joker redeclared after its real card replaced it, R5.8–R5.9; ``was``
  its old declaration); ``fresh`` lists the melds that did not exist before;
* ``c``: the change as text (what moved, what was added, which joker was freed);
* ``b``: once a seat of a served game changed hands (§13), who plays each seat:
  ``"player"`` or ``"bot <strategy>"``;
* ``a``: the analysis note of the decision answered by this event (with ``--analyse``);
* ``m``: the review of that decision (class, marks, equity lost, choice made and best);
  ``k``: the ``rummy replay --fork`` command that starts a game before a meld decision;
* ``j``: the jump marks this step carries: ``"round"`` (a deal), ``"meld"``, ``"mark"``
  (a review class or mark), ``"knock"``; the page's keys r, m, x, k jump to the next one
  (with Shift: the previous one).

With ``seat`` set, every step is built from :func:`rummy.views.view` of that seat and its
redacted copy of each event (:func:`rummy.views.redact`), so the file holds no card the
seat could not see (I3); the analysis is then only that seat's.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import Any, assert_never

from rummy.analysis import GameAnalysis
from rummy.cards import JOKER, TABLE_JOKER_BASE, format_card, hand_points
from rummy.events import (
    CardDrawn,
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    ReclaimRequested,
    RoundScored,
    RoundStarted,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    StockExhausted,
    TimedOut,
    TurnEnded,
)
from rummy.invariants import verify_log
from rummy.lifecycle import controller_text
from rummy.lifecycle import describe as describe_seat_change
from rummy.melds import Table
from rummy.review import GameReview
from rummy.views import redact, view

#: a card of a table with its marker: (table card, mark, old declaration of a freed joker)
MarkedCard = tuple[int, str, int | None]


def table_diff(old: Table, new: Table, added: Sequence[int]
               ) -> tuple[list[list[MarkedCard]], list[int]]:
    """What a meld action (R5) did to the table, card by card.

    Each new meld is paired with the old meld it shares most cards with; a card of the new
    meld that was in its paired meld is unmarked, one from another old meld is ``"moved"``
    (R5.2), one from the hand is ``"new"`` (R5.4), and a table joker whose declaration
    changed is ``"freed"`` with its old declaration (R5.8, R5.9). Two copies of a card are
    the same card (R1.3), so which copy moved is not told apart.

    Args:
        old: the table before the action; new: after it (``Melded.table``).
        added: the hand cards played (``Melded.cards``; a hand joker is ``JOKER``).

    Returns:
        ``(marked, fresh)``: for each meld of ``new``, its cards as ``(card, mark, was)``;
        and the indices of the melds of ``new`` that share no card with an old meld.
    """
    pairs = sorted(((sum((Counter(o) & Counter(n)).values()), -i, -j)
                    for i, o in enumerate(old) for j, n in enumerate(new)), reverse=True)
    partner: dict[int, int] = {}
    used: set[int] = set()
    for overlap, mi, mj in pairs:
        if overlap and -mi not in used and -mj not in partner:
            partner[-mj] = -mi
            used.add(-mi)
    left = [Counter(m) for m in old]  # old cards not yet placed, by old meld
    marked: list[list[MarkedCard | None]] = []
    pending: list[tuple[int, int]] = []  # (new meld, position) of cards not in their pair
    for j, meld in enumerate(new):
        row: list[MarkedCard | None] = []
        pool = left[partner[j]] if j in partner else Counter()
        for k, c in enumerate(meld):
            if pool[c] > 0:
                pool[c] -= 1
                row.append((c, "", None))
            else:
                row.append(None)
                pending.append((j, k))
        marked.append(row)
    hand = Counter(added)
    total_left: Counter[int] = Counter()
    for cnt in left:
        total_left.update(cnt)
    jokers_later: list[tuple[int, int]] = []
    for j, k in pending:  # real cards, and jokers that kept their declaration (R5.7)
        c = new[j][k]
        if total_left[c] > 0:
            total_left[c] -= 1
            marked[j][k] = (c, "moved", None)
        elif c < TABLE_JOKER_BASE:
            hand[c] -= 1
            marked[j][k] = (c, "new", None)
        else:
            jokers_later.append((j, k))
    for j, k in jokers_later:  # redeclared table jokers first (R5.9: they must be placed)
        c = new[j][k]
        old_jokers = sorted(x for x, n in total_left.items() if x >= TABLE_JOKER_BASE and n > 0)
        if old_jokers:
            was = old_jokers[0]
            total_left[was] -= 1
            marked[j][k] = (c, "freed", was)
        else:
            hand[JOKER] -= 1
            marked[j][k] = (c, "new", None)
    fresh = [j for j in range(len(new)) if j not in partner]
    return [[x for x in row if x is not None] for row in marked], fresh


def change_text(marked: list[list[MarkedCard]]) -> str:
    """One line naming what a meld action added, moved and redeclared (R5.4, R5.2, R5.8)."""
    new = [format_card(c) for row in marked for c, m, _ in row if m == "new"]
    moved = [format_card(c) for row in marked for c, m, _ in row if m == "moved"]
    freed = [f"joker {format_card(w)} freed by the real {format_card(w - TABLE_JOKER_BASE)}, "
             f"now {format_card(c)}"
             for row in marked for c, m, w in row if m == "freed" and w is not None]
    parts = []
    if new:
        parts.append("new from the hand: " + " ".join(new))
    if moved:
        parts.append("moved between melds: " + " ".join(moved))
    parts.extend(freed)
    return "; ".join(parts)


def _seat(names: Sequence[str], seat: int) -> str:
    name = names[seat] if seat < len(names) else ""
    return f"seat {seat}" + (f" ({name})" if name else "")


def describe(e: Event, names: Sequence[str]) -> str:
    """A sentence for an event as its receiver may see it (a redacted draw has no card).

    One case per event type of :data:`rummy.events.Event`: a new event type this does not
    describe fails mypy (``assert_never``)."""
    match e:
        case GameStarted():
            return (f"game started: {e.players} players, first dealer seat {e.dealer}, "
                    f"target {e.rules.target_score} points")
        case RoundStarted():
            return f"round {e.round} dealt by seat {e.dealer}"
        case CardDrawn():
            card = format_card(e.card) if e.card is not None else "a card"
            return f"{_seat(names, e.seat)} drew {card} (draw {e.draw})"
        case Passed():
            return f"{_seat(names, e.seat)} passed"
        case Melded():
            pts = hand_points(e.cards)
            cards = " ".join(format_card(c) for c in e.cards)
            return f"{_seat(names, e.seat)} melded {cards} ({pts} points)"
        case StockExhausted():
            return f"{_seat(names, e.seat)} drew the last stock card: final turns (R8.2)"
        case Knocked():
            return f"{_seat(names, e.seat)} knocked with {e.points} points (R6.1)"
        case TurnEnded():
            return f"{_seat(names, e.seat)} ended the turn"
        case RoundScored():
            hands = "; ".join(
                f"seat {i}: {' '.join(format_card(c) for c in h) or 'out'} ({p})"
                for i, (h, p) in enumerate(zip(e.hands, e.points, strict=True)))
            return (f"round {e.round} scored ({e.reason}): winners "
                    f"{', '.join(map(str, e.winners))}; scores {list(e.scores)}; hands {hands}")
        case GameEnded():
            left = f"; left the game: {', '.join(f'seat {x}' for x in e.left)} (R13.4)" \
                if e.left else ""
            return (f"game over: final {list(e.final)}, winner(s) "
                    f"{', '.join(f'seat {w}' for w in e.winners)}{left}")
        case SeatLeft() | SeatTakenOver() | ReclaimRequested() | SeatReclaimed() | TimedOut():
            return describe_seat_change(e, _seat(names, e.seat))
        case _:
            assert_never(e)


def _check_redacted(e: Event, seat: int | None) -> None:
    """Refuse to embed a hidden field in a seat's page (I3); a guard against a regression
    of :func:`rummy.views.redact`."""
    if seat is None:
        return
    hidden = ((isinstance(e, GameStarted) and e.seed is not None)
              or (isinstance(e, RoundStarted) and e.deck is not None)
              or (isinstance(e, CardDrawn) and e.seat != seat and e.card is not None))
    if hidden:
        raise AssertionError(f"I3: {type(e).__name__} would show seat {seat} hidden cards")


def _cards(cards: Sequence[int]) -> str:
    return " ".join(format_card(c) for c in cards)


def _analysis_notes(analysis: GameAnalysis) -> dict[int, str]:
    notes: dict[int, str] = {}
    for d in analysis.decisions:
        best = (f"best {d.best}: " + " ".join(f"[{_cards(m)}]" for m in d.best_melds)
                + f" (type: {d.best_command})") if d.best else "no meld possible"
        note = f"seat {d.seat}: {best}; played {d.played}"
        if d.counted:
            note += f"; missed {d.counted} points"
        if d.missed > d.counted:
            note += f"; {d.missed - d.counted} points missed before and still open"
        if not d.proven:
            note += " (search budget reached: best is a lower bound)"
        notes[d.index] = note
    for k in analysis.knocks:
        notes[k.index] = (f"seat {k.seat}: missed knock with {k.hand_points} points "
                          f"(threshold {k.threshold}, R6.1)")
    return notes


def page_data(events: Sequence[Event], seat: int | None = None,
              analysis: GameAnalysis | None = None, title: str = "", *,
              review: GameReview | None = None, source: str = "") -> dict[str, Any]:
    """The JSON embedded in the page (shape in the module docstring).

    Args:
        events: a full-information log (verified here, :func:`rummy.invariants.verify_log`).
        seat: show only what this seat saw (I3); ``None``: every hand.
        analysis: embed these analysis notes and summaries (its ``seat`` must match).
        title: the page title.
        review: embed the review (:mod:`rummy.review`): ``"review"`` holds the seats'
            figures, the marked decisions and the equity graph; steps get ``m`` (the
            decision's class and marks) and ``k`` (the ``rummy replay --fork`` command
            that starts a game from the position before a meld decision).
        source: the log's path or game id, for the fork commands.

    Raises:
        ValueError: ``seat`` is not a seat of the game (R1.1), or the analysis covers other
            seats than ``seat`` (it would reveal their hands).
        rummy.invariants.ReplayError: the log is inconsistent or redacted.
    """
    start = events[0]
    if not isinstance(start, GameStarted):
        raise ValueError("a game log starts with GameStarted")
    players, names = start.players, start.names
    if seat is not None and not 0 <= seat < players:
        raise ValueError(f"--seat must be 0..{players - 1} (R1.1), got {seat}")
    if analysis is not None and seat is not None and analysis.seat != seat:
        raise ValueError("with a seat, only that seat's analysis may be embedded (I3)")
    if review is not None and review.seat != seat:
        raise ValueError("with a seat, only that seat's review may be embedded (I3)")
    marks = {d.index: d for d in review.decisions} if review is not None else {}
    meld_decisions = ({d.index for d in analysis.decisions} if analysis is not None
                      else set())
    hand_size = start.rules.hand_size
    notes = _analysis_notes(analysis) if analysis is not None else {}
    tables: list[dict[str, Any]] = []
    plain: dict[tuple[tuple[int, ...], ...], int] = {}
    steps: list[dict[str, Any]] = []
    before: Table = ()
    for i, (e, state) in enumerate(zip(events, verify_log(events), strict=True), 1):
        shown = e if seat is None else redact(e, seat, players=players, hand_size=hand_size)
        _check_redacted(shown, seat)
        change = ""
        if isinstance(e, Melded):
            marked, fresh = table_diff(before, e.table, e.cards)
            change = change_text(marked)
            tables.append({"melds": [[format_card(c) if not m else
                                      [format_card(c), m, format_card(w) if w else None]
                                      for c, m, w in row] for row in marked],
                           "fresh": fresh})
            t = len(tables) - 1
        else:
            key = state.table
            if key not in plain:
                tables.append({"melds": [[format_card(c) for c in m] for m in key],
                               "fresh": []})
                plain[key] = len(tables) - 1
            t = plain[key]
        before = state.table
        if seat is None:
            hands: list[str | None] = [_cards(h) for h in state.hands]
        else:
            mine = view(state, seat).hand
            hands = [_cards(mine) if p == seat else None for p in range(players)]
        step: dict[str, Any] = {
            "e": describe(shown, names), "r": state.round, "d": state.dealer,
            "u": state.turn, "p": str(state.phase), "s": state.stock_size,
            "o": list(state.totals), "z": [len(h) for h in state.hands], "h": hands, "t": t}
        if change:
            step["c"] = change
        if state.control is not None:  # who plays each seat of a served game (§13)
            step["b"] = [controller_text(c) for c in state.control.controllers]
        if i in notes:
            step["a"] = notes[i]
        r = marks.get(i)
        if r is not None:
            step["m"] = {"cls": r.cls, "marks": list(r.marks), "lost": round(r.lost, 1),
                         "kind": r.kind, "chosen": r.chosen, "best": r.best,
                         "seat": r.seat}
        if i in meld_decisions and source:
            step["k"] = fork_command(source, i - 1, seat)
        jumps = [kind for kind, hit in (
            ("round", isinstance(e, RoundStarted)), ("meld", isinstance(e, Melded)),
            ("mark", r is not None and bool(r.cls or r.marks)),
            ("knock", isinstance(e, Knocked))) if hit]
        if jumps:
            step["j"] = jumps
        steps.append(step)
    data: dict[str, Any] = {
        "title": title, "players": players, "names": list(names), "seat": seat,
        "target": start.rules.target_score, "threshold": start.rules.knock_threshold,
        "steps": steps, "tables": tables}
    if analysis is not None:
        data["analysis"] = analysis.to_dict()["seats"]
    if review is not None:
        rd = review.to_dict()
        data["review"] = {"seats": rd["seats"], "graph": rd["graph"],
                          "budget": rd["budget"], "seed": rd["seed"],
                          "thresholds": rd["thresholds"]}
    return data


def fork_command(source: str, after: int, seat: int | None = None) -> str:
    """The command line that starts a what-if game from the state after event ``after``
    (``rummy replay SOURCE --fork N``), quoted for a POSIX shell; with ``seat``, played as
    that seat (``--as``)."""
    import shlex
    cmd = f"rummy replay {shlex.quote(source)} --fork {after}"
    return cmd + (f" --as {seat}" if seat is not None else "")


def _asset(name: str) -> str:
    return resources.files("rummy_cli").joinpath("page", name).read_text(encoding="utf-8")


def render_page(data: dict[str, Any]) -> str:
    """The self-contained HTML text of a page (inline CSS and script, JSON data)."""
    blob = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    blob = blob.replace("<", "\\u003c")  # no "</script>" can close the data block
    title = data.get("title") or "Manipulation Rummy replay"
    parts = {"title": html.escape(title), "css": _asset("replay.css"),
             "js": _asset("replay.js"), "data": blob}
    # one pass over the template only: a name or title holding "{{js}}" stays text
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], _asset("replay.html"))


def write_page(path: str, events: Sequence[Event], seat: int | None = None,
               analysis: GameAnalysis | None = None, title: str = "", *,
               review: GameReview | None = None, source: str = "") -> int:
    """Write the replay page of ``events`` to ``path``; returns the number of steps.

    Raises:
        ValueError, ReplayError: as :func:`page_data`. OSError: the file cannot be written.
    """
    data = page_data(events, seat, analysis, title, review=review, source=source)
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_page(data))
    return len(data["steps"])
