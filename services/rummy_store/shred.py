"""Crypto-shredding of a game's personal fields (docs/security.md, "Personal data and
erasure").

The personal fields of a game are its seat names: ``names`` of a ``GameStarted`` record and
of a snapshot, ``name`` of each seat of the meta and of each seat of a results-feed summary.
They are written **sealed**: ``"enc1:" + base64url(nonce + AES-256-GCM ciphertext)`` under a
key of the game's own (32 random bytes), with the game id and field as associated data (a
sealed name copied to another game or field does not open). The key is kept in one place
(next to the game's events: ``P:{G}:key`` in Redis, then the archive's ``game_keys`` row
once the game moved), never inside an event, snapshot, meta or summary; erasing the game
deletes it (leaving a tombstone, so it cannot be made again), and every sealed copy, in
Redis, in the archive, in backups, becomes unreadable at once. Readers show
:data:`ERASED` in its place.

A value without the ``enc1:`` prefix is plaintext (written before sealing, or by a store
without it) and reads as it is; erasing such a game rewrites those values
(:mod:`rummy_store.erase`). The primitives are the ``cryptography`` library's AESGCM.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

__all__ = ["ERASED", "PREFIX", "TOMBSTONE", "is_sealed", "new_key", "open_value",
           "seal_value", "transform_meta", "transform_record", "transform_snapshot",
           "transform_summary"]

PREFIX = "enc1:"
"""What starts a sealed value."""
ERASED = "erased"
"""What a reader shows in place of a personal field whose key was erased."""
TOMBSTONE = b"erased"
"""What the key's place holds once the game was erased (not a key: 6 bytes, not 32)."""

Transform = Callable[[str, str], str]
"""``f(value, field) -> value``: seal or open one personal string of a game."""


def new_key() -> bytes:
    """A new game key: 32 random bytes (AES-256)."""
    return os.urandom(32)


def is_sealed(value: Any) -> bool:
    """True for a sealed value (a string that starts with :data:`PREFIX`)."""
    return isinstance(value, str) and value.startswith(PREFIX)


def seal_value(key: bytes | None, game_id: str, field: str, value: str) -> str:
    """``value`` sealed under ``key`` for ``game_id``'s ``field``; :data:`ERASED` when the
    game has no key any more (``None`` or the tombstone), a sealed value as it is."""
    if is_sealed(value):
        return value
    if key is None or len(key) != 32:
        return ERASED
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    nonce = os.urandom(12)
    ct = AESGCM(key).encrypt(nonce, value.encode(), f"{game_id}/{field}".encode())
    return PREFIX + base64.urlsafe_b64encode(nonce + ct).decode().rstrip("=")


def open_value(key: bytes | None, game_id: str, field: str, value: Any) -> Any:
    """The plaintext of a sealed ``value`` (any other value as it is); :data:`ERASED` when
    the key is gone or does not open it."""
    if not is_sealed(value):
        return value
    if key is None or len(key) != 32:
        return ERASED
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    text = value[len(PREFIX):]
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return AESGCM(key).decrypt(raw[:12], raw[12:], f"{game_id}/{field}".encode()).decode()
    except (InvalidTag, ValueError):
        return ERASED


def _names(values: Any, f: Transform, field: str) -> Any:
    if not isinstance(values, list):
        return values
    return [f(v, field) if isinstance(v, str) else v for v in values]


def transform_record(record: dict[str, Any], f: Transform) -> dict[str, Any]:
    """An event record with its personal fields passed through ``f`` (a new dict when it
    has any: the ``names`` of ``GameStarted``), else the record itself."""
    if record.get("type") != "GameStarted" or "names" not in record:
        return record
    return {**record, "names": _names(record["names"], f, "names")}


def transform_snapshot(data: dict[str, Any], f: Transform) -> dict[str, Any]:
    """A snapshot (``rummy.snapshot.state_to_dict``) with its ``names`` through ``f``."""
    if "names" not in data:
        return data
    return {**data, "names": _names(data["names"], f, "names")}


def _seats(seats: Any, f: Transform) -> Any:
    if not isinstance(seats, list):
        return seats
    return [{**s, "name": f(s["name"], "seat")} if isinstance(s, dict)
            and isinstance(s.get("name"), str) else s for s in seats]


def transform_meta(meta: dict[str, Any], f: Transform) -> dict[str, Any]:
    """A game's meta with each seat's ``name`` through ``f``."""
    if "seats" not in meta:
        return meta
    return {**meta, "seats": _seats(meta["seats"], f)}


def transform_summary(summary: dict[str, Any], f: Transform) -> dict[str, Any]:
    """A results-feed summary with each seat's ``name`` through ``f``."""
    if "seats" not in summary:
        return summary
    return {**summary, "seats": _seats(summary["seats"], f)}
