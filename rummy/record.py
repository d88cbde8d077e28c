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
from typing import assert_never

from rummy.cards import format_card, parse_card
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
from rummy.fairness import seed_commitment
from rummy.melds import Table, parse_meld
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
    if start.seed is None:
        raise NotationError("GameStarted has no seed: a seat's redacted copy (I3) cannot be "
                            "recorded; export the full log")
    yield _header("Format", FORMAT)
    yield _header("Players", str(start.players))
    for i, name in enumerate(start.names):
        yield _header(f"Seat{i}", name)
    yield _header("Rules", " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                                    for k, v in start.rules.changed().items()))
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


def _create(headers: dict[str, tuple[int, str]], last: int) -> CreateGame:
    def get(name: str) -> tuple[int, str]:
        if name not in headers:
            raise _error(last, f"missing header [{name} \"...\"] (docs/record.md)")
        return headers[name]

    def integer(name: str) -> int:
        n, text = get(name)
        if not re.fullmatch(r"-?\d+", text):
            raise _error(n, f"header {name} must be an integer, got {text!r}", token=text)
        return int(text)

    n, fmt = get("Format")
    if fmt != FORMAT:
        raise _error(n, f"unknown record format {fmt!r}; this release reads {FORMAT!r}",
                     token=fmt)
    players = integer("Players")
    seats = sorted(int(m.group(1)) for h in headers if (m := _SEAT_HEADER.match(h)))
    if seats != list(range(len(seats))):
        raise _error(last, f"seat headers must be Seat0..SeatN without gaps, got {seats}")
    names = tuple(headers[f"Seat{i}"][1] for i in seats)
    n, rules_text = get("Rules")
    try:
        rules = RuleSet.from_dict(parse_rule_pairs(rules_text.split(), what="header Rules"))
    except RummyError as e:
        raise _error(n, e.message, token=rules_text, rule=e.rule) from None
    seed = integer("Seed")
    salt = None
    if "Salt" in headers or "Commitment" in headers:
        n, salt = get("Salt")
        at, commitment = get("Commitment")
        try:
            expected = seed_commitment(seed, salt)
        except ValueError as e:
            raise _error(n, f"header Salt: {e}", token=salt) from None
        if commitment != expected:
            raise _error(at, f"header Commitment {commitment!r} is not sha256(Salt || Seed) = "
                         f"{expected}: the seed or the salt was changed after the commitment",
                         token=commitment)
    return CreateGame(players, seed, rules, names, integer("TurnSeconds"), salt)


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
    with the ``+`` melds."""
    melds = list(state.table)
    added: list[tuple[int, ...]] = []
    for t in tokens:
        try:
            meld = parse_meld(t[2:-1])
        except NotationError as e:
            raise _error(n, e.message, token=e.token) from None
        if t[0] == "+":
            added.append(meld)
        elif meld in melds:
            melds.remove(meld)
        else:
            raise _error(n, f"meld {t} is not on the table", token=t)
    return tuple(melds + added)


def from_record(text: str) -> list[Event]:
    """The event log of a game record (the inverse of :func:`to_record`).

    The game's commands are re-played through the engine, then every line is checked
    against what the game gives (decks, hands, cards drawn, scores); blank lines and
    ``#`` comments are ignored, as are runs of spaces.

    Raises:
        NotationError: the message starts with ``line N:`` (1-based) and says what is
            wrong there: a malformed header, card or action; a command the rules refuse
            (the rule it breaks, e.g. ``R5.3``, is in ``rule``); or a line that differs
            from what the game gives (the expected text is in the message).
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
    create = _create(headers, lines[i - 1][0])
    try:
        state, events = step(None, create)
    except RummyError as e:
        raise _error(headers[_header_of(e, headers)][0], e.message, rule=e.rule) from None
    n, dealer = headers.get("Dealer", (lines[i - 1][0], ""))
    if dealer != str(state.dealer):
        raise _error(n, f"the seed {create.seed} gives dealer {state.dealer} (R2.1), the record "
                     f"says {dealer!r}: is the Seed header right?", token=dealer)
    for n, line in lines[i:]:
        m = _TURN.match(line)
        if m is None:
            continue  # a line the game gives by itself (round, deck, scores): checked below
        seat = int(m.group(2))
        tokens = _TOKEN.findall(m.group(3))
        k = 0
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
                if tok in ("draw", "knock") and k < len(tokens):  # the card / points shown
                    arg = tokens[k]
                    k += 1
                    if tok == "draw":
                        try:
                            parse_card(arg)
                        except NotationError as e:
                            raise _error(n, e.message, token=arg) from None
            if cmd is None:
                continue
            try:
                state, new = step(state, cmd)
            except RummyError as e:
                raise _error(n, f"{tok} refused: {e.message}", token=tok, rule=e.rule) from None
            events.extend(new)
    expected = _significant(to_record(events))
    for (n, got), (_, want) in zip(lines, expected, strict=False):
        if got != want:
            raise _error(n, f"the game gives {want!r} here, the record says {got!r}",
                         token=got)
    if len(lines) > len(expected):
        n, got = lines[len(expected)]
        raise _error(n, f"the game gives nothing more here, the record says {got!r}",
                     token=got)
    if len(lines) < len(expected):
        n = lines[-1][0] + 1
        raise _error(n, f"the record ends here but the game gives {expected[len(lines)][1]!r}")
    return events


__all__ = ["FORMAT", "from_record", "to_record"]
