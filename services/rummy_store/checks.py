"""Argument checks and encodings shared by the store implementations.

Every store refuses the same malformed arguments with the same errors (the contract suite
checks it), and keeps one JSON encoding (:func:`dumps`). Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "check_claim",
    "check_delay",
    "check_game_id",
    "check_name",
    "check_request_id",
    "check_version",
    "dumps",
    "request_digest",
    "serialise_events",
    "serialise_snapshot",
    "utf8",
]


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""The encoder of :func:`dumps`, made once: ``json.dumps`` with any argument but the
defaults builds a new encoder on every call (``json.dumps(obj, **the same arguments)`` is
``JSONEncoder(**them).encode(obj)``: the same text)."""
_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_GAME_ID = re.compile(r"[^{}\s]+")  # \s: what str.isspace() calls whitespace


def check_game_id(game_id: str) -> str:
    """Return ``game_id`` if it is usable inside a Redis hash tag; raise ``ValueError``."""
    if not isinstance(game_id, str) or _GAME_ID.fullmatch(game_id) is None \
            or not _encodes(game_id):
        raise ValueError(f"bad game id {game_id!r}: need a non-empty UTF-8 string without "
                         f"{{}} or spaces")
    return game_id


def check_version(name: str, value: int) -> int:
    """Return ``value`` if it is an int >= 0; raise ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return value


def check_delay(name: str, value: float) -> float:
    """Return ``value`` as a float if it is a finite number >= 0; raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def check_claim(lease: float, limit: int) -> None:
    """Raise ``ValueError`` unless ``lease`` > 0 seconds and ``limit`` is an int >= 1."""
    if check_delay("lease", lease) <= 0:
        raise ValueError(f"lease must be > 0 seconds, got {lease!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")


def check_name(name: str) -> str:
    """Return ``name`` if it is a non-empty string without whitespace; raise ``ValueError``."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"bad name {name!r}: need a non-empty string without spaces")
    return name


def check_request_id(request_id: str | None) -> str | None:
    """Return ``request_id`` if it is None or a non-empty string; raise ``ValueError``."""
    if request_id is not None and (not isinstance(request_id, str) or not request_id
                                   or not _encodes(request_id)):
        raise ValueError(f"request_id must be None or a non-empty UTF-8 string, got "
                         f"{request_id!r}")
    return request_id


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def dumps(obj: Any, what: str = "a value") -> str:
    """Compact JSON, the one encoding the stores keep (raises ``TypeError`` if unencodable,
    a lone surrogate included, naming ``what``: Redis keeps UTF-8, and every store refuses
    alike; ``ValueError`` for NaN or infinity)."""
    return utf8(_COMPACT.encode(obj), what)


def utf8(text: str, what: str = "a value") -> str:
    """``text`` if it encodes as UTF-8; raises ``TypeError`` naming ``what`` otherwise (a
    lone surrogate such as ``"\\ud800"``, which JSON allows and Redis cannot store)."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        raise TypeError(f"{what} is not valid UTF-8 text ({exc.reason} at {exc.start}: "
                        f"{text[max(0, exc.start - 10):exc.start + 10]!r})") from None
    return text


def serialise_snapshot(version: int, data: dict[str, Any]) -> str:
    """The JSON text of a snapshot's ``data``, validated (``version`` must be an int >= 0).

    Raises:
        ValueError: a bad ``version``.
        TypeError: ``data`` is not a dict or not JSON-serialisable.
    """
    check_version("version", version)
    if not isinstance(data, dict):
        raise TypeError(f"snapshot data must be a dict, got {type(data).__name__}")
    try:
        return dumps(data)
    except ValueError as exc:  # NaN / infinity
        raise TypeError(f"snapshot data is not JSON-serialisable: {exc}") from exc


def serialise_events(events: Sequence[dict[str, Any]],
                     encode: Callable[[dict[str, Any]], str] | None = None
                     ) -> list[tuple[str, str]]:
    """``(type, text)`` for each event dict, validated; ``encode`` makes the text (default
    :func:`dumps`, the JSON object; the Redis store passes ``rummy_store.codec.pack``).

    Raises:
        ValueError: an event has no non-empty string ``"type"``.
        TypeError: an event is not a dict, not JSON-serialisable or not UTF-8 text (the
            message names the event's index).
    """
    out = []
    for i, event in enumerate(events):
        if not isinstance(event, dict):
            raise TypeError(f"event {i} is a {type(event).__name__}, not a dict: {event!r}")
        kind = event.get("type")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"event {i} has no string 'type': {event!r}")
        try:
            out.append((kind, (encode or dumps)(event)))
        except ValueError as exc:  # NaN / infinity
            raise TypeError(f"event {i} is not JSON-serialisable: {exc}") from exc
        except TypeError as exc:
            raise TypeError(f"event {i}: {exc}") from None
    return out


def request_digest(payload: Any) -> str:
    """A stable hash of a request body for ``append(request_hash=...)``: the SHA-256 hex
    digest of its canonical JSON (keys sorted). Raises ``TypeError`` if not encodable.

    >>> request_digest({"b": 1, "a": [2]}) == request_digest({"a": [2], "b": 1})
    True
    """
    text = _SORTED.encode(payload)
    return hashlib.sha256(text.encode()).hexdigest()
