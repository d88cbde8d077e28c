"""Who is calling: a seat token, a spectator, or the admin. One function for every call.

Seat tokens are 192-bit random strings handed out once by ``CreateGame``; only their
SHA-256 digest is stored in the game's meta. The admin token (``RUMMY_ADMIN_TOKEN``) unlocks
full information; it is compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from rummy_grpc.errors import PermissionDenied, Unauthenticated


def hash_token(token: str) -> str:
    """The SHA-256 hex digest under which a seat token is stored (tokens are 192-bit random,
    so a fast hash is enough; the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Caller:
    """The caller of one request: ``seat`` (``None``: a spectator) and ``admin``."""

    seat: int | None
    admin: bool


def authenticate(meta: dict[str, Any], token: str, admin_token: str = "",
                 admin_secret: str = "", *, seat_required: bool = False) -> Caller:
    """Identify the caller of a request on the game whose meta is ``meta``.

    Args:
        meta: the game's meta (``tokens``: digest -> seat).
        token: the seat token sent ("" for none).
        admin_token: the admin token sent ("" for none).
        admin_secret: the server's admin token ("" or ``None``: no admin access).
        seat_required: the call acts for a seat (a command): a token is required.

    Raises:
        Unauthenticated: no token where a seat is required.
        PermissionDenied: a token that is not a seat token of this game, or a wrong admin
            token.
    """
    seat: int | None = None
    if token:
        found = meta["tokens"].get(hash_token(token))
        if found is None:
            raise PermissionDenied("the token is not a seat token of this game")
        seat = int(found)
    elif seat_required:
        raise Unauthenticated("a seat token is required for this call")
    return Caller(seat, check_admin(admin_token, admin_secret))


def check_admin(admin_token: str, admin_secret: str) -> bool:
    """True for the right admin token (compared in constant time), False for none.

    Raises:
        PermissionDenied: a token sent to a server without one, or a wrong token.
    """
    if not admin_token:
        return False
    if not admin_secret:
        raise PermissionDenied("this server has no admin token configured "
                               "(RUMMY_ADMIN_TOKEN_FILE, --admin-token-file)")
    if not hmac.compare_digest(admin_token, admin_secret):
        raise PermissionDenied("wrong admin token")
    return True


__all__ = ["Caller", "authenticate", "check_admin", "hash_token"]
