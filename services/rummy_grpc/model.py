"""The values the application layer hands to the servicer, and the limits it enforces
(no gRPC, no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from rummy.commands import COMMAND_KINDS
from rummy.events import Event
from rummy.views import PlayerView

MAX_REQUEST_ID = 128  #: longest client request id (ids are kept with the game's stream)
MAX_MELDS = 60
"""Most melds a Meld request may carry (106 cards make at most 35 melds)."""
MAX_TABLE_CARDS = 120
"""Most card tokens a Meld request may carry (the deck has 106)."""
MAX_NAME = 40
"""Longest seat name, in characters."""
LEASE_SECONDS = 3.0
"""How long a claimed due game is reserved for the replica that claimed it (seconds)."""
POLL_SECONDS = 0.25
"""How often every replica polls the store for due games (seconds)."""
MAX_EVENTS = 100_000
"""Default cap of events per game (a 4-player game to 100 points takes a few hundred)."""
MAX_STREAMS_PER_GAME = 256
"""Default bound on open streams of one game."""
MAX_STREAMS_PER_CLIENT = 512
"""Default bound on open streams of one client (seat token, else peer host)."""
MAX_STREAMS = 10_000
"""Default bound on open streams of one server process."""
RATE_COMMANDS = 1000.0
"""Default rate limit of ``rummy serve`` on game calls (everything but ``CreateGame``) per
caller, in calls per second (token bucket; 0: no limit)."""
RATE_BURST = 2000
"""Default burst (bucket size) of the game-call rate limit, in calls."""
RATE_CREATE = 50.0
"""Default rate limit of ``rummy serve`` on ``CreateGame`` per caller, calls per second."""
RATE_CREATE_BURST = 100
"""Default burst of the ``CreateGame`` rate limit, in calls."""
BOT_WAIT = 1.0
"""Seconds a client's call waits for the server bots that play after its command: their
moves made by then are in the reply; a bot still thinking goes on in the background (its
moves reach the client by ``StreamEvents`` and ``GetView``), so no call waits on a slow
bot (a cold compile, a ``search`` bot on a busy host, ``--bot-delay``)."""
RATE_EVENTS = 2000.0
"""Default rate limit of ``rummy serve`` on events read with ``GetEvents`` per caller, in
events per second: a page is priced by its size (a cost-weighted token bucket), so a client
looping over pages of 1,000 gets two a second, about a seventh of one core's time, instead
of all of it (0: no limit)."""
RATE_EVENTS_BURST = 10_000
"""Default burst of the events rate limit, in events (ten full pages: a game's whole history
at once)."""
READ_CHUNK = 250
"""Events a ``GetEvents`` page is read, decoded and encoded by at a time: between two chunks
the event loop serves other calls (a page of 1,000 took one 70 ms stretch of it)."""
RATE_CALLERS = 10_000
"""Most callers whose rate-limit buckets are kept (least recently used ones are dropped)."""
IDLE_EXPIRY = 7 * 86400.0
"""Seconds after which an active game without an append expires, with all its keys (an
abandoned game; finished games are kept)."""
REQUEST_WINDOW = 3600.0
"""How long a ``CreateGame`` request id is remembered (seconds): a retry within it returns
the original game."""
MAX_PAGE_SIZE = 1000
"""Most events one GetEvents response carries (page_size 0 means this; a larger one is
reduced to it). 1000 events of the largest kind (a Melded event with the whole table) stay
well under the 1 MiB message limit."""


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """One seat of a new game: ``kind`` is ``"human"`` or ``"bot"``; ``strategy`` names a bot
    of ``rummy.bots.BOTS``; ``name`` labels the seat (default: ``seatN`` / the strategy)."""

    kind: str
    name: str = ""
    strategy: str = ""


@dataclass(frozen=True, slots=True)
class Created:
    """A new game: its id, one secret token per human seat (``{seat: token}``) and version."""

    game_id: str
    tokens: dict[int, str]
    version: int


@dataclass(frozen=True, slots=True)
class Timed:
    """An event as a caller may see it: stream ``version`` (1-based), the (redacted) event
    and its append time ``ts`` (seconds since the epoch)."""

    version: int
    event: Event
    ts: float


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did, as the caller may see it.

    Attributes:
        seat: the caller's seat.
        version: the game's version after the command and the bot moves that followed it
            (for a duplicate: after the original append).
        events: the events appended (the command's, then the bots'), redacted for ``seat``.
        view: the caller's view afterwards (None when the caller asked to omit it).
        turn_deadline: when the seat to act times out (epoch seconds; 0: no time limit).
        duplicate: the ``request_id`` had been applied before; nothing new was appended.
    """

    seat: int
    version: int
    events: list[Timed]
    view: PlayerView | None
    turn_deadline: float
    duplicate: bool


@dataclass(frozen=True, slots=True)
class EventPage:
    """One page of a game's event log.

    Attributes:
        events: at most the page size of events, in version order, as the caller may see
            them.
        full: the events are full information (admin, or the game is over).
        next_after_version: 0 when the page reaches the end of the range asked for, else
            the ``after_version`` that reads the next page (the last event's version).
    """

    events: list[Timed]
    full: bool
    next_after_version: int


@dataclass(frozen=True, slots=True)
class StateAt:
    """A game's state at a version for replays: ``view`` is the caller's (the spectator's
    when ``full``); ``hands`` (by seat), ``stock`` (top first) and ``seed`` only when
    ``full``."""

    version: int
    full: bool
    view: PlayerView
    hands: tuple[tuple[int, ...], ...] | None
    stock: tuple[int, ...] | None
    seed: int | None


__all__ = ["COMMAND_KINDS", "IDLE_EXPIRY", "LEASE_SECONDS", "MAX_EVENTS", "MAX_MELDS",
           "MAX_NAME", "MAX_PAGE_SIZE", "MAX_REQUEST_ID", "MAX_STREAMS",
           "MAX_STREAMS_PER_CLIENT", "MAX_STREAMS_PER_GAME", "MAX_TABLE_CARDS", "POLL_SECONDS",
           "RATE_BURST", "RATE_CALLERS", "RATE_COMMANDS", "RATE_CREATE", "RATE_CREATE_BURST",
           "RATE_EVENTS", "RATE_EVENTS_BURST", "READ_CHUNK", "BOT_WAIT",
           "REQUEST_WINDOW", "Created", "EventPage", "Outcome", "SeatSpec", "StateAt", "Timed"]
