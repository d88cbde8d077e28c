"""``ListGames``: the games a caller may list, newest first, one page at a time.

Who sees what: the admin token lists every game; a known caller (an API key, ``key:<name>``,
or an allowed client certificate, ``cn:<name>``; :mod:`rummy_grpc.callers`) lists the games
it created, recorded as ``"creator"`` in each game's meta at creation (games created before
that have none and are listed to the admin only). Any other caller is refused:
``NoCredentials`` without credentials, ``BadCredentials`` with credentials not accepted.

Paging follows an index, newest first: a page token is the id of the last game of the
previous page, so that games created meanwhile (entered at the head of the index) neither
shift nor repeat a page. A known caller's page comes from the store's per-creator index
(:class:`rummy_store.creators.CreatorIndex`, by state): it reads the caller's own entries
and the listed games only. The admin's comes from the games index
(``GameIndex.list_games``), read up to :data:`SCAN_LIMIT` games per call (a filter that
matches few of the newest games may therefore end early: the newest ``SCAN_LIMIT`` games
are the ones listed); so does a known caller's on a store without a per-creator index.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from rummy_api.v1 import game_service_pb2 as pb
from rummy_store.base import EventStore
from rummy_store.creators import CreatorIndex, UnknownCursor

from rummy.lifecycle import controllers, left_seats
from rummy.rules import RuleSet
from rummy.state import GAME_OVER
from rummy_grpc.auth import check_admin
from rummy_grpc.callers import Identity
from rummy_grpc.convert import rules_to_proto
from rummy_grpc.errors import BadCredentials, BadRequest, GameNotFound, NoCredentials
from rummy_grpc.lifecycle import names
from rummy_grpc.repository import GameRepository

DEFAULT_PAGE_SIZE = 50
"""Games per page when the request says 0."""
MAX_LIST_PAGE_SIZE = 200
"""The most games per page (larger requests are reduced to it)."""
SCAN_LIMIT = 10_000
"""The most index entries one call reads (newest first)."""
FILTERS = ("all", "active", "finished")
"""The state filters, by the proto ``GameListFilter`` value (0, 1, 2)."""


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One listed game: ``seats`` as ``(kind, name, strategy)``, ``rules`` its rule set,
    ``created`` and ``last_move`` in seconds since the epoch (``last_move`` never before
    ``created``), ``version`` its number of
    events, ``creator`` the identity that created it (``""``: not recorded);
    ``controllers`` by seat who plays it now, as a view shows it (``"human"`` or
    ``"bot:<strategy>"``, a server bot that took a human seat over included, R13.1) and
    ``left`` the seats that resigned or left (R13.4)."""

    game_id: str
    seats: tuple[tuple[str, str, str], ...]
    rules: RuleSet
    created: float
    last_move: float
    finished: bool
    version: int
    creator: str
    controllers: tuple[str, ...] = ()
    left: tuple[int, ...] = ()


def _token(game_id: str, state: str, admin: bool) -> str:
    """The opaque page token after ``game_id`` (bound to the filter and the scope)."""
    return base64.urlsafe_b64encode(f"1:{state}:{int(admin)}:{game_id}".encode()).decode()


def _after(token: str, state: str, admin: bool) -> str | None:
    """The game id a page token names (``None``: the first page).

    Raises:
        BadRequest: a token that is not one of this call's filter and scope.
    """
    if not token:
        return None
    try:
        version, t_state, t_admin, game_id = base64.urlsafe_b64decode(
            token.encode()).decode().split(":", 3)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadRequest("page_token is not one this server gave") from None
    if version != "1" or t_state != state or t_admin != str(int(admin)) or not game_id:
        raise BadRequest("page_token belongs to another state filter or caller scope: send "
                         "the same admin_token and state as the first page")
    return game_id


async def list_games(repo: GameRepository, admin_secret: str, who: Identity,
                     admin_token: str, state: int, page_size: int,
                     page_token: str) -> tuple[list[GameSummary], str]:
    """One page of the games ``who`` may list (module docstring), newest first, and the
    next page's token (``""``: the last page).

    Args:
        repo: the games' repository (its store's index and meta, each game's latest state).
        admin_secret: the server's admin token (``""``: none).
        who: the caller (:meth:`rummy_grpc.callers.CallerGate.admit`).
        admin_token: the request's admin token (``""``: list the caller's own games).
        state: the proto ``GameListFilter`` value: 0 all, 1 active, 2 finished.
        page_size: games per page: 0 means :data:`DEFAULT_PAGE_SIZE`; at most
            :data:`MAX_LIST_PAGE_SIZE`.
        page_token: ``""`` or a previous response's ``next_page_token``.

    Raises:
        PermissionDenied: a wrong admin token, or one sent to a server without one.
        NoCredentials, BadCredentials: no admin token and not a known caller.
        BadRequest: a negative page size, an unknown filter, a bad page token, or one
            whose game left the index.
    """
    admin = check_admin(admin_token, admin_secret)
    if not admin and not who.known:
        raise NoCredentials() if who.credentials == "none" else BadCredentials()
    if page_size < 0:
        raise BadRequest("page_size must be >= 0")
    if state not in range(len(FILTERS)):
        raise BadRequest(f"unknown state filter {state}")
    name = FILTERS[state]
    size = min(page_size or DEFAULT_PAGE_SIZE, MAX_LIST_PAGE_SIZE)
    after = _after(page_token, name, admin)
    store: Any = repo.store
    if not admin and isinstance(store, CreatorIndex):
        return await _own_page(repo, store, who.key, name, admin, size, after)
    ids: list[str] = await store.list_games(limit=SCAN_LIMIT, active_only=name == "active")
    if name == "finished":
        active = set(await store.list_games(limit=SCAN_LIMIT, active_only=True))
        ids = [g for g in ids if g not in active]
    start = 0
    if after is not None:
        try:
            start = ids.index(after) + 1
        except ValueError:
            raise BadRequest(_GONE) from None
    page: list[GameSummary] = []
    last = None
    for pos in range(start, len(ids)):
        summary = await _summary(repo, ids[pos], None if admin else who.key)
        if summary is None:
            continue
        page.append(summary)
        last = pos
        if len(page) == size:
            break
    more = last is not None and len(page) == size and last + 1 < len(ids)
    return page, _token(page[-1].game_id, name, admin) if more else ""


_GONE = ("the page_token's game is no longer listed; start again from the first page")


async def _summary(repo: GameRepository, game_id: str,
                   creator: str | None) -> GameSummary | None:
    """The listing of one game (its meta and latest state), or ``None`` when it is gone or
    (``creator`` given) another caller created it."""
    try:
        meta = await repo.meta(game_id)
    except GameNotFound:
        return None
    if creator is not None and meta.get("creator") != creator:
        return None
    try:
        game, ts = await repo.latest(game_id)
    except GameNotFound:  # expired between the index read and now
        return None
    created = float(meta.get("created", 0.0))
    # the store keeps its timestamps in milliseconds: the creating append's can read a
    # fraction of a millisecond before the creation time taken just before it
    return GameSummary(
        game_id, tuple((s["kind"], s["name"], s.get("strategy", "")) for s in meta["seats"]),
        game.rules, created, max(ts, created), game.phase == GAME_OVER,
        game.version, str(meta.get("creator", "")),
        names(meta, controllers(game)), left_seats(game))


async def _own_page(repo: GameRepository, store: CreatorIndex, creator: str, name: str,
                    admin: bool, size: int, after: str | None) -> tuple[list[GameSummary], str]:
    """One page of ``creator``'s own games from the store's per-creator index
    (:mod:`rummy_store.creators`): it reads ``size + 1`` index entries and the metas and
    states of the listed games only, however many games the store holds."""
    try:
        ids = await store.list_created(creator, limit=size + 1, after=after, state=name)
    except UnknownCursor:
        raise BadRequest(_GONE) from None
    page = []
    for game_id in ids[:size]:
        summary = await _summary(repo, game_id, creator)
        if summary is not None:
            page.append(summary)
    more = len(ids) > size
    return page, _token(ids[size - 1], name, admin) if more else ""


BACKFILL_NAME = "creator-index-backfill"
"""The store-wide name (``RequestLog.put_if_absent``) under which one server claims the
day's :func:`backfill_creators`."""
BACKFILL_EVERY = 86_400.0
"""Seconds between two backfills of a store (by whichever server starts first)."""


async def backfill_creators(store: EventStore, claimant: str) -> int:
    """Enter the games of the store's index (the newest :data:`SCAN_LIMIT`, the ones a
    listing used to read) whose meta names a creator in the per-creator index: games
    created by a release before the index, or by one still running beside this one.
    Idempotent; run by one server of the store a day (``claimant``: this server's random
    id, raced for under :data:`BACKFILL_NAME`).

    Returns:
        The games entered (0: another server claimed it, or the store has no per-creator
        index).
    """
    index = store
    if not isinstance(index, CreatorIndex):
        return 0
    won = await store.put_if_absent(BACKFILL_NAME, {"by": claimant}, BACKFILL_EVERY)
    if won.get("by") != claimant:
        return 0
    entered = 0
    for game_id in await store.list_games(limit=SCAN_LIMIT):
        meta = await store.get_meta(game_id) or {}
        creator = meta.get("creator")
        if isinstance(creator, str) and creator:
            await index.add_created(creator, game_id, float(meta.get("created", 0.0)))
            entered += 1
    return entered


_KIND_CODES = {"human": pb.SEAT_KIND_HUMAN, "bot": pb.SEAT_KIND_BOT}


def page_to_proto(games: list[GameSummary], next_token: str) -> pb.ListGamesResponse:
    """The ``ListGamesResponse`` of a page of :func:`list_games`."""
    out = pb.ListGamesResponse(next_page_token=next_token)
    for g in games:
        msg = out.games.add(game_id=g.game_id, created=g.created, last_move=g.last_move,
                            finished=g.finished, version=g.version, creator=g.creator,
                            controllers=g.controllers, left=g.left)
        msg.rules.CopyFrom(rules_to_proto(g.rules))
        msg.seats.extend(pb.SeatSpec(kind=_KIND_CODES.get(kind, pb.SEAT_KIND_UNSPECIFIED),
                                     name=name, strategy=strategy)
                         for kind, name, strategy in g.seats)
    return out


__all__ = ["BACKFILL_EVERY", "BACKFILL_NAME", "DEFAULT_PAGE_SIZE", "FILTERS",
           "MAX_LIST_PAGE_SIZE", "SCAN_LIMIT", "GameSummary", "backfill_creators", "list_games",
           "page_to_proto"]
