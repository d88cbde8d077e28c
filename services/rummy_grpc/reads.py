"""Read models: what a caller may see of a game (views, events, the state at a version,
the live stream). Everything a player receives goes through ``rummy.views.view`` /
``rummy.views.redact`` (I3); full information only for the admin or once the game is over.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from rummy.events import EVENT_TYPES, Event, GameEnded
from rummy.state import GAME_OVER
from rummy.views import REDACTED_TYPES, PlayerView, redact, view
from rummy_grpc.auth import authenticate, check_admin
from rummy_grpc.errors import BadRequest, PermissionDenied
from rummy_grpc.lifecycle import named_view
from rummy_grpc.model import MAX_PAGE_SIZE, READ_CHUNK, EventPage, StateAt, Timed
from rummy_grpc.repository import GameRepository
from rummy_grpc.timers import deadline


def page_cost(after_version: int, to_version: int | None, page_size: int) -> int:
    """The most events a ``GetEvents`` page can hold: its price in the events rate limit
    (the page size, 0 meaning :data:`~rummy_grpc.model.MAX_PAGE_SIZE`, larger reduced to
    it; at most the range ``after_version < v <= to_version``). 0 for a bad request."""
    size = min(page_size or MAX_PAGE_SIZE, MAX_PAGE_SIZE)
    if size < 0 or after_version < 0:
        return 0
    if to_version is not None:
        size = min(size, max(0, to_version - after_version))
    return size


def redact_for(meta: dict[str, Any], seat: int | None, event: Event) -> Event:
    """``event`` as ``seat`` (``None``: a spectator) may see it (I3)."""
    return redact(event, seat, players=meta["players"], hand_size=meta["hand_size"])


#: the current schema version of every event type (a record at it needs no upcast)
_CURRENT_VERSION: dict[str, int] = {
    name: cls.VERSION for name, cls in EVENT_TYPES.items()}  # type: ignore[attr-defined]


def redact_record(seat: int | None, data: dict[str, Any]) -> dict[str, Any] | None:
    """A stored record (``rummy.events.to_dict`` form) as ``seat`` (``None``: a spectator)
    may see it (I3), without decoding it; ``None`` when it needs decoding first.

    For a record at its type's current schema version, of a type :func:`rummy.views.redact`
    leaves unchanged (``rummy.views.REDACTED_TYPES``) or a ``CardDrawn`` (whose card only its
    drawer sees), the result has the fields of
    ``to_dict(redact_for(meta, seat, from_dict(data)))`` (lists where that has tuples); it
    is ``data`` itself when nothing is hidden from ``seat`` (do not mutate it). A
    ``RoundStarted`` or ``GameStarted`` (the deal, the seed), or a record at an older
    schema version (upcast on decoding), gives ``None``.
    """
    etype = data.get("type")
    if etype is None or data.get("v") != _CURRENT_VERSION.get(etype):
        return None
    if etype not in REDACTED_TYPES:
        return data
    if etype == "CardDrawn":
        return data if data.get("seat") == seat else {**data, "card": None}
    return None


class ReadModels:
    """The read side of the game service.

    Args:
        repo: the games' repository.
        admin_secret: the server's admin token ("" : no admin access).
    """

    def __init__(self, repo: GameRepository, admin_secret: str) -> None:
        self._repo = repo
        self._admin = admin_secret

    def require_admin(self, admin_token: str) -> None:
        """Admit only the admin (store-wide calls: the results feed).

        Raises:
            PermissionDenied: no admin token, or a wrong one (or none configured).
        """
        if not check_admin(admin_token, self._admin):
            raise PermissionDenied("this call needs the admin token (admin_token)")

    async def get_view(self, game_id: str, token: str) -> tuple[PlayerView, float]:
        """The caller's view (a spectator's without a token) and the turn deadline.

        Raises:
            GameNotFound, PermissionDenied.
        """
        meta = await self._repo.meta(game_id)
        caller = authenticate(meta, token)
        state, ts = await self._repo.latest(game_id)  # from memory when known to be latest
        return named_view(meta, view(state, caller.seat)), deadline(meta, state, ts)

    async def get_events(self, game_id: str, token: str, admin_token: str = "",
                         after_version: int = 0,
                         to_version: int | None = None) -> tuple[list[Timed], bool]:
        """The first page (at most :data:`~rummy_grpc.model.MAX_PAGE_SIZE` events) of
        :meth:`get_events_page`, and whether it is full information.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (negative versions).
        """
        page = await self.get_events_page(game_id, token, admin_token, after_version,
                                          to_version)
        return page.events, page.full

    async def get_events_page(self, game_id: str, token: str, admin_token: str = "",
                              after_version: int = 0, to_version: int | None = None,
                              page_size: int = 0) -> EventPage:
        """One page of the events ``after_version < v <= to_version`` (``None``: to the
        end): the first ``page_size`` of them (0: :data:`~rummy_grpc.model.MAX_PAGE_SIZE`,
        larger values reduced to it), full information for an admin or once the game is
        over, otherwise redacted for the caller's seat / spectator; and the
        ``after_version`` of the next page (0 when this one reaches the end of the range,
        the game's version when the call was served standing for "the end").

        Raises:
            GameNotFound, PermissionDenied, BadRequest (negative versions or page size).
        """
        if after_version < 0 or (to_version is not None and to_version < 0):
            raise BadRequest("versions must be >= 0")
        if page_size < 0:
            raise BadRequest(f"page_size must be >= 0 (0: {MAX_PAGE_SIZE}), got {page_size}")
        size = min(page_size or MAX_PAGE_SIZE, MAX_PAGE_SIZE)
        meta = await self._repo.meta(game_id)
        caller = authenticate(meta, token, admin_token, self._admin)
        state, _ = await self._repo.load(game_id)
        full = caller.admin or state.phase == GAME_OVER
        end = state.version if to_version is None else min(to_version, state.version)
        # versions are 1, 2, 3, ...: the page is the range cut at after_version + size
        limit = after_version + size if to_version is None else min(to_version,
                                                                    after_version + size)
        events: list[Timed] = []
        # read, decoded and redacted a chunk at a time: each read yields the event loop to
        # other calls (a page of 1,000 was one 70 ms stretch of it)
        for lo in range(after_version, max(after_version, limit), READ_CHUNK):
            records = await self._repo.read(game_id, lo, min(lo + READ_CHUNK, limit))
            events += [Timed(r.version,
                             r.event if full else redact_for(meta, caller.seat, r.event), r.ts)
                       for r in records]
            if len(records) < min(READ_CHUNK, limit - lo):
                break  # the end of the stream
        last = events[-1].version if events else after_version
        more = len(events) == size and last < end
        return EventPage(events, full, last if more else 0)

    async def get_state(self, game_id: str, token: str, admin_token: str = "",
                        version: int = 0) -> StateAt:
        """The state at ``version`` (0: latest): full information for an admin or once the
        game is over, else the caller's view at that version.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (version out of range).
        """
        meta = await self._repo.meta(game_id)
        caller = authenticate(meta, token, admin_token, self._admin)
        latest, _ = await self._repo.load(game_id)
        if version < 0 or version > latest.version:
            raise BadRequest(f"version must be 0..{latest.version}, got {version}")
        if version == 0 or version == latest.version:
            state = latest
        else:
            state = await self._repo.state_at(game_id, version)
        if caller.admin or latest.phase == GAME_OVER:
            return StateAt(state.version, True, named_view(meta, view(state, None)),
                           state.hands, state.deck[state.stock_pos:], state.seed)
        return StateAt(state.version, False, named_view(meta, view(state, caller.seat)), None,
                       None, None)

    async def stream(self, game_id: str, token: str, admin_token: str = "",
                     after_version: int = 0) -> AsyncGenerator[Timed, None]:
        """Events after ``after_version``, catch-up then live, redacted for the caller's seat
        (full information for an admin, or if the game was over when the stream started);
        ends after ``GameEnded``.

        Raises:
            GameNotFound, PermissionDenied, BadRequest (negative version).
        """
        if after_version < 0:
            raise BadRequest("after_version must be >= 0")
        meta = await self._repo.meta(game_id)
        caller = authenticate(meta, token, admin_token, self._admin)
        state, _ = await self._repo.load(game_id)
        if after_version > state.version:
            raise BadRequest(f"after_version {after_version} is beyond the stream's version "
                             f"{state.version}")
        full = caller.admin or state.phase == GAME_OVER
        if state.phase == GAME_OVER and after_version >= state.version:
            return
        sub = self._repo.subscribe(game_id, after_version)
        try:
            async for r in sub:
                yield Timed(r.version,
                            r.event if full else redact_for(meta, caller.seat, r.event), r.ts)
                if isinstance(r.event, GameEnded):
                    return
        finally:
            with contextlib.suppress(Exception):
                await sub.aclose()


__all__ = ["ReadModels", "page_cost", "redact_for", "redact_record"]
