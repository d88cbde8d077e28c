"""Game records: a human-readable text form of a whole game, like chess's PGN (docs/record.md).

:func:`to_record` writes a full event log as text: headers (players, seat names, rules,
seed, first dealer), then per round the dealt deck and hands, one line per turn in the
R1.4 card notation, and the round's and the game's results. :func:`from_record` reads it
back: it re-plays the game's commands through the engine (:func:`rummy.decide.step`) and
checks that every line of the text is what the game gives, so
``from_record(to_record(events)) == events`` and a record that is wrong anywhere (a card
drawn that the deck did not hold, an illegal meld, a wrong score) is refused with the
number of the offending line.

Pure: no I/O; the ``rummy record`` subcommand (:mod:`rummy_cli.record`) reads and writes
the files.

>>> from rummy.simulate import play_game
>>> events = list(play_game(["basic", "random"], seed=3, record=True).events)
>>> from_record(to_record(events)) == events
True
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import assert_never

from rummy.cards import decks_for, format_card, new_deck, parse_card
from rummy.commands import Command, CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.errors import NotationError, RummyError
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
from rummy.evolve import evolve
from rummy.fairness import seed_commitment
from rummy.melds import Table, canonical_meld, parse_meld
from rummy.rules import RuleSet, parse_rule_pairs
from rummy.state import KNOCK_OR_END, GameState

#: the value of the ``Format`` header; a later, incompatible layout gets a new number
FORMAT = "manipulation-rummy-record 1"

_HEADER = re.compile(r'^\[([A-Za-z][A-Za-z0-9]*) ("(?:[^"\\]|\\.)*")\](\s+#.*)?$')
_TURN = re.compile(r"^(\d+)\. S(\d+) (.*)$")
_TOKEN = re.compile(r"[+-]\[[^\]]*\]|\S+")
_SEAT_HEADER = re.compile(r"^Seat(\d+)$")


# ------------------------------------------------------------------------------ writing

def _cards(cards: Sequence[int]) -> str:
    return " ".join(format_card(c) for c in cards) or "-"


def _seats(seats: Sequence[int]) -> str:
    return " ".join(f"S{s}" for s in seats) or "-"


def _ints(values: Sequence[int]) -> str:
    return " ".join(str(v) for v in values)


def _header(name: str, value: str) -> str:
    return f"[{name} {json.dumps(value, ensure_ascii=False)}]"


def _meld_diff(old: Table, new: Table) -> str:
    """``-[...]`` for each meld of ``old`` not in ``new``, then ``+[...]`` for each meld of
    ``new`` not in ``old`` (as multisets of melds, each in its own table's order)."""
    gone = Counter(old) - Counter(new)
    came = Counter(new) - Counter(old)
    parts: list[str] = []
    for table, left, sign in ((old, gone, "-"), (new, came, "+")):
        for m in table:
            if left[m] > 0:
                left[m] -= 1
                parts.append(f"{sign}[{' '.join(format_card(c) for c in m)}]")
    return " ".join(parts)


def _lines(events: Sequence[Event]) -> Iterator[str]:
    """The record's lines (without line ends)."""
    if not events or not isinstance(events[0], GameStarted):
        raise NotationError("a game record starts from the GameStarted event; this log does "
                            "not begin with one")
    start = events[0]
    yield _header("Format", FORMAT)
    yield _header("Players", str(start.players))
    for i, name in enumerate(start.names):
        yield _header(f"Seat{i}", name)
    yield _header("Rules", " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                                    for k, v in start.rules.changed().items()))
    if start.seed is not None:  # a game dealt elsewhere has none: its Deck lines deal it
        yield _header("Seed", str(start.seed))
    yield _header("Dealer", str(start.dealer))
    yield _header("TurnSeconds", str(start.turn_seconds))
    if start.salt is not None:  # a committed deal (rummy.fairness): optional headers
        yield _header("Salt", start.salt)
        yield _header("Commitment", start.commitment)
    table: Table = ()
    line: list[str] = []
    seat: int | None = None
    turn = 0
    players = start.players

    def flush() -> Iterator[str]:
        nonlocal line, seat
        if seat is not None:
            yield f"{turn}. S{seat} {' '.join(line)}"
        line, seat = [], None

    for n, e in enumerate(events[1:], 2):
        match e:  # one case per event type: a new one not recorded here fails mypy
            case CardDrawn() | Passed() | Melded() | StockExhausted() | Knocked() | TurnEnded():
                if seat is not None and e.seat != seat:
                    yield from flush()
                if seat is None:
                    seat = e.seat
                    turn += 1
                match e:
                    case CardDrawn():
                        if e.card is None:
                            raise NotationError(f"event {n} (CardDrawn) hides its card: a "
                                                "redacted copy (I3) cannot be recorded")
                        line.append(f"draw {format_card(e.card)}")
                    case Passed():
                        line.append("pass")
                    case Melded():
                        line.append(f"meld {_meld_diff(table, e.table)}")
                        table = e.table
                    case StockExhausted():
                        line.append("stock-empty")
                    case Knocked():
                        line.append(f"knock {e.points}")
                        yield from flush()
                    case TurnEnded():
                        line.append("end")
                        yield from flush()
                    case _:
                        assert_never(e)
            case RoundStarted():
                yield from flush()
                if e.deck is None:
                    raise NotationError(f"event {n} (RoundStarted) hides the deck: a redacted "
                                        "copy (I3) cannot be recorded")
                table, turn = (), 0
                yield ""
                yield f"Round {e.round} dealer S{e.dealer}"
                yield f"Deck {_cards(e.deck)}"
                hand_size = start.rules.hand_size
                for s in range(players):
                    dealt = sorted(e.deck[(s - e.dealer - 1) % players:hand_size * players:
                                          players])
                    yield f"Hand S{s} {_cards(dealt)}"
            case RoundScored():
                yield from flush()
                by = f" by S{e.knocker}" if e.knocker is not None else ""
                yield (f"Scored round {e.round}: {e.reason}{by}; points {_ints(e.points)}; "
                       f"scores {_ints(e.scores)}; winners {_seats(e.winners)}; "
                       f"totals {_ints(e.totals)}")
                yield "Shown " + " | ".join(f"S{s} {_cards(h)}" for s, h in enumerate(e.hands))
            case GameEnded():
                yield from flush()
                yield ""
                yield (f"Game over: totals {_ints(e.totals)}; rounds won {_ints(e.rounds_won)}; "
                       f"bonuses {_ints(e.bonuses)}; final {_ints(e.final)}; "
                       f"winners {_seats(e.winners)}")
            case GameStarted():
                yield from flush()
                raise NotationError(f"event {n} is a second {type(e).__name__}")
            case SeatLeft() | SeatTakenOver() | ReclaimRequested() | SeatReclaimed() | TimedOut():
                raise NotationError(f"event {n} ({e.TYPE}) is a change of who plays a seat "
                                    "of a served game (§13), which a game record (format 1) "
                                    "does not hold; keep the event log (rummy replay reads it)")
            case _:
                assert_never(e)
    yield from flush()


def to_record(events: Sequence[Event]) -> str:
    """The game record (text, ``\\n`` line ends, a final newline) of a full event log.

    The log may end before the game is over (a game in progress).

    Raises:
        NotationError: the log does not start with ``GameStarted``, or it is a seat's
            redacted copy (no seed, a hidden deck or a hidden drawn card, I3).
    """
    return "\n".join(_lines(events)) + "\n"


# ------------------------------------------------------------------------------ reading

def _significant(text: str) -> list[tuple[int, str]]:
    """``(line number, normalised line)`` of each line that is not blank or a comment
    (``#`` to the end of the line); outside headers, runs of spaces become one space."""
    out: list[tuple[int, str]] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):  # a header, kept as written: its value may hold '#' and
            m = _HEADER.match(line)  # runs of spaces; a comment may follow it
            line = line[:m.start(3)] if m and m.group(3) else line
        else:
            line = " ".join(line.split("#", 1)[0].split())
        if line:
            out.append((n, line))
    return out


def _error(n: int, message: str, token: object = None, rule: str = "") -> NotationError:
    return NotationError(f"line {n}: {message}", token=token, rule=rule)


#: the headers a record may hold (docs/record.md); any other is refused (a typo such as
#: ``Sed`` for ``Seed`` would otherwise be ignored silently)
_KNOWN_HEADERS = ("Format", "Players", "Rules", "Seed", "Dealer", "TurnSeconds", "Salt",
                  "Commitment")


def _create(headers: dict[str, tuple[int, str]], last: int) -> CreateGame:
    """The ``CreateGame`` of the headers; a dealt record (no ``Seed``) gets seed 0 here,
    which only validates the other headers (the deal comes from the ``Deck`` lines)."""
    def get(name: str) -> tuple[int, str]:
        if name not in headers:
            raise _error(last, f"missing header [{name} \"...\"] (docs/record.md)")
        return headers[name]

    def integer(name: str, default: int | None = None) -> int:
        if default is not None and name not in headers:
            return default
        n, text = get(name)
        if not re.fullmatch(r"-?\d+", text):
            raise _error(n, f"header {name} must be an integer, got {text!r}", token=text)
        return int(text)

    for name, (n, _) in headers.items():
        if name not in _KNOWN_HEADERS and not _SEAT_HEADER.match(name):
            raise _error(n, f"unknown header {name!r}; a record has "
                         f"{', '.join(_KNOWN_HEADERS)} and Seat0..SeatN (docs/record.md)",
                         token=name)
    n, fmt = get("Format")
    if fmt != FORMAT:
        raise _error(n, f"unknown record format {fmt!r}; this release reads {FORMAT!r}",
                     token=fmt)
    players = integer("Players")
    seats = sorted(int(m.group(1)) for h in headers if (m := _SEAT_HEADER.match(h)))
    if seats != list(range(len(seats))):
        raise _error(last, f"seat headers must be Seat0..SeatN without gaps, got {seats}")
    names = tuple(headers[f"Seat{i}"][1] for i in seats)
    n, rules_text = headers.get("Rules", (last, ""))
    try:
        rules = RuleSet.from_dict(parse_rule_pairs(rules_text.split(), what="header Rules"))
    except RummyError as e:
        raise _error(n, e.message, token=rules_text, rule=e.rule) from None
    seeded = "Seed" in headers
    seed = integer("Seed") if seeded else 0
    salt = None
    if "Salt" in headers or "Commitment" in headers:
        n, salt = get("Salt")
        if not seeded:
            raise _error(n, "a Salt commits to a seed (docs/fairness.md): a record without "
                         "a Seed header has none", token=salt)
        at, commitment = get("Commitment")
        try:
            expected = seed_commitment(seed, salt)
        except ValueError as e:
            raise _error(n, f"header Salt: {e}", token=salt) from None
        if commitment != expected:
            raise _error(at, f"header Commitment {commitment!r} is not sha256(Salt || Seed) = "
                         f"{expected}: the seed or the salt was changed after the commitment",
                         token=commitment)
    return CreateGame(players, seed, rules, names, integer("TurnSeconds", 0), salt)


def _header_of(error: RummyError, headers: dict[str, tuple[int, str]]) -> str:
    """The header a refused ``CreateGame`` of the record is to blame on: the turn limit, a
    seat's name, the rules (a hand size the deck cannot deal, R2.2), else the players."""
    message = error.message
    if "turn_seconds" in message and "TurnSeconds" in headers:
        return "TurnSeconds"
    if "name" in message:
        return next((h for h in headers if _SEAT_HEADER.match(h)), "Players")
    if error.rule in ("R2.2", "R11") and "Rules" in headers and "players" not in message:
        return "Rules"
    return "Players"


_ACTIONS = frozenset({"draw", "pass", "meld", "knock", "end", "stock-empty"})


def _token_command(state: GameState, seat: int, token: str, n: int) -> Command | None:
    """The command a turn-line token asks for; ``None`` when the event it names follows
    from the previous command (a turn ended automatically, R3.5; the stock ran out, R8.1)."""
    if token == "draw":
        return Draw(seat)
    if token == "pass":
        return Pass(seat)
    if token == "knock":
        return Knock(seat)
    if token == "end":
        auto = not (state.phase == KNOCK_OR_END and state.turn == seat)
        return None if auto else EndTurn(seat)
    if token == "stock-empty":
        return None
    raise _error(n, f"unknown turn action {token!r}; expected draw, pass, meld, knock, end "
                 "or stock-empty (docs/record.md)", token=token)


def _meld_table(state: GameState, tokens: list[str], n: int) -> Table:
    """The new table of ``meld -[...] +[...]``: the old table without the ``-`` melds,
    with the ``+`` melds. A ``-`` meld may list its cards in any order (R4.5)."""
    melds = list(state.table)
    added: list[tuple[int, ...]] = []
    for t in tokens:
        try:
            meld = parse_meld(t[2:-1])
        except NotationError as e:
            raise _error(n, e.message, token=e.token) from None
        if t[0] == "+":
            added.append(meld)
            continue
        key = canonical_meld(meld)
        at = next((i for i, m in enumerate(melds) if m == meld or m == key), None)
        if at is None:
            at = next((i for i, m in enumerate(melds) if canonical_meld(m) == key), None)
        if at is None:
            raise _error(n, f"meld {t} is not on the table", token=t)
        del melds[at]
    return tuple(melds + added)


def _decks(body: list[tuple[int, str]], players: int) -> list[tuple[int, tuple[int, ...]]]:
    """``(line, deck)`` of each ``Deck`` line of a dealt record (no ``Seed``), in order;
    each must be one whole shuffled deck for the player count (R1.2, R2.2)."""
    want = sorted(new_deck(decks_for(players)))
    out: list[tuple[int, tuple[int, ...]]] = []
    for n, line in body:
        if not line.startswith("Deck "):
            continue
        try:
            deck = tuple(parse_card(t) for t in line.split()[1:])
        except NotationError as e:
            raise _error(n, e.message, token=e.token) from None
        if sorted(deck) != want:
            have, full = Counter(deck), Counter(want)
            extra = sorted((have - full).elements())
            missing = sorted((full - have).elements())
            raise _error(n, f"the deck of round {len(out) + 1} is not a whole deck for "
                         f"{players} players ({len(want)} cards, R1.2): {len(deck)} cards"
                         + (f", extra {_cards(extra)}" if extra else "")
                         + (f", missing {_cards(missing)}" if missing else ""),
                         token=line, rule="R1.2")
        out.append((n, deck))
    return out


def _kind(line: str) -> str:
    """What a body line of a record is: its derived kind, or ``"turn"``."""
    if _TURN.match(line):
        return "turn"
    head = line.split(" ", 2)
    if head[0] == "Hand" and len(head) > 1:
        return "Hand " + head[1]
    return {"Round": "Round", "Deck": "Deck", "Scored": "Scored", "Shown": "Shown",
            "Game": "Game"}.get(head[0], line)


def _rule_of(kind: str, want: str, got: str) -> str:
    """The rule a wrong derived line breaks (the first part that differs)."""
    if kind == "Round":
        return "R2.1"
    if kind in ("Deck", "Hand"):
        return "R2.2"
    if kind == "Shown":
        return "R7.1"
    if kind == "turn":
        return "R2.3"
    parts = list(zip(want.split("; "), got.split("; ") + [""] * 9, strict=False))
    first = next((w for w, g in parts if w != g), want)
    label = first.split(":")[-1].strip().split(" ")[0] if kind == "Scored" else \
        first.removeprefix("Game over:").strip().split(" ")[0]
    if kind == "Scored":
        if first is parts[0][0]:
            return {"knock": "R6.1", "going_out": "R6.2"}.get(
                first.split(": ", 1)[-1].split(" ")[0], "R8.3")
        return {"points": "R1.5", "scores": "R7.1", "winners": "R7.1"}.get(label, "R9.1")
    return {"totals": "R9.1", "rounds": "R9.3", "bonuses": "R9.2", "final": "R9.3a"}.get(
        label, "R9.4")


def _check_derived(body: list[tuple[int, str]], expected: list[str], dealt: bool) -> None:
    """Match the record's body lines with the lines the game gives, in order. Turn lines
    (and, in a dealt record, ``Deck`` lines) must all be there; every other line the game
    gives (round, deck, hands, scores, hands shown, game over) may be left out, and is
    checked when present.

    Raises:
        NotationError: ``line N:`` a line the game does not give there, with the rule.
    """
    j = 0
    for n, got in body:
        kind = _kind(got)
        while j < len(expected) and _kind(expected[j]) != kind:
            want = expected[j]
            if _kind(want) == "turn" or (dealt and _kind(want) == "Deck"):
                raise _error(n, f"the game gives {want!r} here, the record says {got!r}",
                             token=got, rule=_rule_of(_kind(want), want, got))
            j += 1
        if j == len(expected):
            raise _error(n, f"the game gives nothing more here, the record says {got!r}",
                         token=got)
        want = expected[j]
        j += 1
        if kind == "turn":  # the actions were played and checked; the turn and seat here
            want_head, got_head = want.split(" ", 2)[:2], got.split(" ", 2)[:2]
            if want_head != got_head:
                raise _error(n, f"the game gives turn {' '.join(want_head)!r} here, the "
                             f"record says {' '.join(got_head)!r}", token=got, rule="R2.3")
        elif got != want:
            rule = _rule_of(kind.split(" ")[0], want, got)
            raise _error(n, f"the game gives {want!r} here, the record says {got!r} "
                         f"({rule})", token=got, rule=rule)


class _Dealer:
    """Deals a record's rounds: from the seed (the engine's own deal), or, in a dealt
    record (no ``Seed`` header), from its ``Deck`` lines in order."""

    def __init__(self, decks: list[tuple[int, tuple[int, ...]]] | None) -> None:
        self.decks = decks
        self.pending: int | None = None  #: a round due whose Deck line is missing

    def settle(self, before: GameState | None, produced: list[Event]) -> GameState:
        """The state after ``produced`` (from ``before``), with a dealt record's deck put
        in a ``RoundStarted`` at its end (the engine's automatic deal is always last)."""
        last = produced[-1] if produced else None
        if self.decks is not None and isinstance(last, RoundStarted):
            if last.round <= len(self.decks):
                produced[-1] = RoundStarted(last.round, last.dealer,
                                            self.decks[last.round - 1][1])
            else:  # no Deck line (yet) for this round: the deal waits
                self.pending = last.round
                produced.pop()
        s = before
        for e in produced:
            s = evolve(s, e)
        assert s is not None
        return s


def _check_draw(events: list[Event], arg: str, n: int) -> None:
    """A ``draw C`` token's card is the one the deck gives (R2.2)."""
    try:
        card = parse_card(arg)
    except NotationError as e:
        raise _error(n, e.message, token=arg) from None
    drawn = next(e.card for e in events if isinstance(e, CardDrawn))
    if card != drawn:
        raise _error(n, f"draw {arg}: the stock's next card is {format_card(drawn or 0)} "
                     "(the deck, R2.2)", token=arg, rule="R2.2")


def from_record(text: str) -> list[Event]:
    """The event log of a game record (the inverse of :func:`to_record`).

    The game is created from the headers and dealt from the ``Seed`` header or, when it
    has none (a game dealt elsewhere), from the ``Deck`` lines; the turn lines' commands
    are re-played through the engine, and every other line is checked against what the
    game gives (dealer, decks, hands, cards drawn, knock points, scores). Derived lines may
    be left out (docs/record.md lists which). Blank lines and ``#`` comments are ignored,
    as are runs of spaces.

    Raises:
        NotationError: the message starts with ``line N:`` (1-based) and says what is
            wrong there: a malformed or unknown header, card or action; a command the rules
            refuse (the rule it breaks, e.g. ``R5.3``, is in ``rule``); a deck that is not
            a whole deck (R1.2); or a line that differs from what the game gives (the
            expected text is in the message, the rule in ``rule``).
    """
    lines = _significant(text)
    headers: dict[str, tuple[int, str]] = {}
    i = 0
    while i < len(lines) and lines[i][1].startswith("["):
        n, line = lines[i]
        m = _HEADER.match(line)
        if m is None:
            raise _error(n, f"malformed header {line!r}; expected [Name \"value\"]", token=line)
        try:
            value = json.loads(m.group(2))
        except json.JSONDecodeError:
            raise _error(n, f"malformed header value {m.group(2)!r}", token=line) from None
        if m.group(1) in headers:
            raise _error(n, f"header {m.group(1)} given twice", token=line)
        headers[m.group(1)] = (n, value)
        i += 1
    if not headers:
        raise _error(lines[0][0] if lines else 1, "a game record starts with its headers, "
                     f"e.g. [Format \"{FORMAT}\"] (docs/record.md)")
    body = lines[i:]
    create = _create(headers, lines[i - 1][0])
    dealt = "Seed" not in headers
    try:
        state, events = step(None, create)
    except RummyError as e:
        raise _error(headers[_header_of(e, headers)][0], e.message, rule=e.rule) from None
    dealer = _Dealer(_decks(body, create.players) if dealt else None)
    if dealt:
        n, text_dealer = headers.get("Dealer", (lines[i - 1][0], ""))
        if not re.fullmatch(r"\d+", text_dealer) or int(text_dealer) >= create.players:
            what = (f"header Dealer must be a seat 0..{create.players - 1}, got "
                    f"{text_dealer!r}" if "Dealer" in headers
                    else "missing header [Dealer \"...\"]")
            raise _error(n, f"{what}: a record without a Seed header names the first "
                         "dealer (R2.1) and deals every round from its Deck lines",
                         token=text_dealer, rule="R2.1")
        first = events[0]
        assert isinstance(first, GameStarted)
        start = replace(first, seed=None, salt=None, commitment="", dealer=int(text_dealer))
        events = [start, RoundStarted(1, start.dealer, ())]
        state = dealer.settle(None, events)
    elif "Dealer" in headers:
        n, text_dealer = headers["Dealer"]
        if text_dealer != str(state.dealer):
            raise _error(n, f"the seed {create.seed} gives dealer {state.dealer} (R2.1), the "
                         f"record says {text_dealer!r}: is the Seed header right?",
                         token=text_dealer, rule="R2.1")
    for n, line in body:
        m = _TURN.match(line)
        if m is None:
            continue  # a line the game gives by itself (round, deck, scores): checked below
        if dealer.pending is not None:
            raise _error(n, f"round {dealer.pending} has no Deck line before its first turn: "
                         "a record without a Seed header deals every round from its Deck "
                         "lines (R2.2)", token=line, rule="R2.2")
        seat = int(m.group(2))
        tokens = _TOKEN.findall(m.group(3))
        k = 0
        last: list[Event] = []
        while k < len(tokens):
            tok = tokens[k]
            k += 1
            cmd: Command | None
            if tok == "meld":
                j = k
                while k < len(tokens) and tokens[k][:2] in ("+[", "-["):
                    k += 1
                cmd = Meld(seat, _meld_table(state, tokens[j:k], n))
            else:
                cmd = _token_command(state, seat, tok, n)
            arg = None
            if tok in ("draw", "knock") and k < len(tokens) and tokens[k] not in _ACTIONS:
                arg = tokens[k]  # the card drawn / the points shown: checked when given
                k += 1
            if cmd is None:
                if tok == "stock-empty" and not any(isinstance(e, StockExhausted)
                                                    for e in last):
                    raise _error(n, "stock-empty: the stock still holds cards here (R8.1)",
                                 token=tok, rule="R8.1")
                if tok == "end" and not any(isinstance(e, TurnEnded) for e in last):
                    raise _error(n, "end: the turn does not end here (R3.5)", token=tok,
                                 rule="R3.5")
                continue
            try:
                before = state
                state, new = step(state, cmd)
            except RummyError as e:
                raise _error(n, f"{tok} refused: {e.message}", token=tok, rule=e.rule) from None
            state = dealer.settle(before, new)
            last = new
            if arg is not None and tok == "draw":
                _check_draw(new, arg, n)
            elif arg is not None:
                points = next(e.points for e in new if isinstance(e, Knocked))
                if arg != str(points):
                    raise _error(n, f"knock {arg}: the hand is worth {points} points (R1.5)",
                                 token=arg, rule="R1.5")
            events.extend(new)
    expected = [line for _, line in _significant(to_record(events))]
    _check_derived(body, expected[next(i for i, x in enumerate(expected)
                                       if not x.startswith("[")):]
                   if any(not x.startswith("[") for x in expected) else [], dealt)
    return events


__all__ = ["FORMAT", "from_record", "to_record"]
