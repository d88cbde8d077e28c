"""Commands: what a seat (or the game's creator) asks the engine to do.

``decide(state, command)`` turns a command into events or raises (see :mod:`rummy.decide`).
Cards are the integers of :mod:`rummy.cards`; adapters parse the notation first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy.errors import CommandError, NotationError
from rummy.melds import Table
from rummy.rules import RuleSet

#: the longest turn time limit a game may have, in seconds (one day; 0 is none)
MAX_TURN_SECONDS = 86_400


def check_turn_seconds(value: object) -> int:
    """Return a game's turn time limit if it is an int of 0..86400 seconds (0: none).

    The one check: :func:`rummy.decide.decide` runs it on ``CreateGame``, the replay check
    (:mod:`rummy.invariants`) on a recorded ``GameStarted``.

    Raises:
        CommandError: not an int (``bool`` is not one) or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 0 <= value <= MAX_TURN_SECONDS:
        raise CommandError(f"turn_seconds must be 0..{MAX_TURN_SECONDS}, got {value!r}")
    return value


def check_seat_name(seat: int, name: str) -> str:
    """Return a seat's name if it is printable text (``str.isprintable``; ``""`` is).

    The one check of a seat name: :func:`rummy.decide.decide` runs it on ``CreateGame``,
    the service on each seat it is asked to create. A name reaches terminals, logs and
    replay pages, so control and format characters are refused.

    Raises:
        NotationError: the name has control or format characters (terminal escapes, line
            breaks, bidi overrides); the message names the seat.
    """
    if not name.isprintable():
        raise NotationError(f"seat {seat}: the name {name!r} has control or format characters "
                            "(terminal escapes, line breaks, bidi overrides); a name must be "
                            "printable text")
    return name


@dataclass(frozen=True, slots=True)
class CreateGame:
    """Create a game of ``players`` seats (R1.1) under ``rules``; ``seed`` drives every
    shuffle and the first dealer (R2.1); ``names`` labels the seats; ``turn_seconds`` is an
    optional turn time limit enforced by a service (0: none); ``salt`` (32 lowercase hex
    digits, ``secrets.token_hex(16)``) commits the game to its seed in ``GameStarted``
    (``rummy.fairness``; ``None``: no commitment)."""

    players: int
    seed: int
    rules: RuleSet = field(default_factory=RuleSet)
    names: tuple[str, ...] = ()
    turn_seconds: int = 0
    salt: str | None = None


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw the card that is due from the stock (R3.1–R3.3, R3.6)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Do not meld after this draw (R3.2, R3.3) or in a final turn (R8.2)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Meld:
    """Make one meld action (R5): ``table`` is the whole new table (table cards)."""

    seat: int
    table: Table


@dataclass(frozen=True, slots=True)
class Knock:
    """Knock after the turn is over (R6.1)."""

    seat: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End the turn without knocking when a knock was allowed (R6.3)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Leave:
    """``seat``'s player gives the seat up, at any time, even out of turn (R13.1):
    ``resign`` for good (no reclaim), else it leaves (reclaimable where the game allows it,
    R13.3). ``strategy`` names the server bot that takes the seat over (the game's creation
    option, ``basic`` by default); ``humans`` are the game's human seats (R13.5: the game
    ends at once when every one of them has left or resigned). The service fills both from
    the game's creation options."""

    seat: int
    resign: bool = False
    strategy: str = "basic"
    humans: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Reclaim:
    """``seat``'s player takes the seat back from the bot at the start of one of its turns
    (R13.3). ``allowed`` is the game's creation option; with ``wait`` a request made at
    another moment is recorded and takes effect at the start of the seat's next turn
    (without it such a request is refused)."""

    seat: int
    allowed: bool = False
    wait: bool = False


Command = CreateGame | Draw | Pass | Meld | Knock | EndTurn | Leave | Reclaim


#: the kind name of each seat command, as the API and the metrics name it
KIND_OF: dict[type, str] = {Draw: "draw", Pass: "pass", Meld: "meld", Knock: "knock",
                            EndTurn: "end_turn"}
#: the seat commands by kind name (inverse of :data:`KIND_OF`)
COMMAND_KINDS: tuple[str, ...] = tuple(KIND_OF.values())


def command_kind(cmd: Command) -> str:
    """The kind name of a seat command (``"draw"``, ``"pass"``, ``"meld"``, ``"knock"``,
    ``"end_turn"``).

    Raises:
        ValueError: ``cmd`` is not a seat command (e.g. ``CreateGame``).
    """
    try:
        return KIND_OF[type(cmd)]
    except KeyError:
        raise ValueError(f"not a seat command: {type(cmd).__name__}") from None


def make_command(kind: str, seat: int, table: Table | None = None) -> Command:
    """The seat command of kind ``kind`` for ``seat``; ``table`` (the whole new table) is
    for ``"meld"`` only.

    Raises:
        ValueError: an unknown kind (the message lists the known ones), or a meld without
            a table.
    """
    if kind == "meld":
        if table is None:
            raise ValueError("a meld command needs the whole new table (R5)")
        return Meld(seat, table)
    if kind == "draw":
        return Draw(seat)
    if kind == "pass":
        return Pass(seat)
    if kind == "knock":
        return Knock(seat)
    if kind == "end_turn":
        return EndTurn(seat)
    raise ValueError(f"unknown command kind {kind!r}; known: {', '.join(COMMAND_KINDS)}")
