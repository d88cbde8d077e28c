"""Who is calling at the transport level, for backends: API keys, client
certificates, and the per-caller rate limits.

Seat tokens (:mod:`rummy_grpc.auth`) say which seat of a game a request acts for; this
module says which *caller* (a backend, an operator's tool) sends it:

* an **API key** in the ``authorization`` metadata, ``Bearer <key>``. The server knows keys
  only by their SHA-256 digest (``--api-keys FILE``, one ``name:sha256hex`` a line; make one
  with ``rummy serve --hash-api-key``); a key sent is hashed and compared with every digest
  in constant time (``hmac.compare_digest``, no early exit), and its identity is
  ``key:<name>``;
* a **client certificate** verified by mutual TLS (``--tls-client-ca``): its subject CN or
  a DNS/URI SAN, read from ``context.auth_context()``, is a known caller when it is one of
  the ``--allow-client-cn`` names; its identity is ``cn:<name>``;
* else the caller is its **peer host**, ``host:<ip>``.

When keys or certificate names are configured (:attr:`CallerPolicy.enforced`),
``CreateGame`` and every request carrying an ``admin_token`` are reserved to known callers:
no credentials answer ``UNAUTHENTICATED`` (reason ``NO_CREDENTIALS``), credentials that are
not accepted ``PERMISSION_DENIED`` (``BAD_CREDENTIALS``), with one message whatever was wrong.
Without any configured, those calls stay open to every caller, as before.

Every GameService call then passes its caller's rate limit (:class:`CallerGate`): one token
bucket per caller identity for ``CreateGame``, one for the other calls.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rummy_grpc.errors import BadCredentials, NoCredentials
from rummy_grpc.limits import RateLimiter, client_key

AUTHORIZATION = "authorization"
"""The metadata key of an API key (gRPC metadata keys are lower case)."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_HEX = re.compile(r"[0-9a-f]{64}")


def hash_api_key(key: str) -> str:
    """The SHA-256 hex digest of an API key, as an ``--api-keys`` file holds it.

    API keys are long random strings (:func:`new_api_key`), so a fast hash is enough: the
    digest alone does not let anyone call.

    Raises:
        ValueError: an empty key, or one with whitespace (it could not travel in a header).
    """
    if not key or any(c.isspace() for c in key) or not key.isprintable():
        raise ValueError("an API key is a non-empty string of printable characters "
                         "without spaces")
    return hashlib.sha256(key.encode()).hexdigest()


def new_api_key() -> str:
    """A fresh random API key: 256 bits, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One configured key: its ``name`` (the caller identity ``key:<name>``, in logs and
    rate limits) and the SHA-256 ``digest`` (32 bytes) of the key itself."""

    name: str
    digest: bytes


def parse_api_keys(text: str, source: str = "api keys") -> list[ApiKey]:
    """Parse an ``--api-keys`` file: one ``name:sha256hex`` a line; blank lines and lines
    starting with ``#`` are skipped.

    Raises:
        ValueError: a malformed line (named by its number, the digest never quoted), a
            duplicate name or digest, or no key at all.
    """
    keys: list[ApiKey] = []
    names: set[str] = set()
    digests: set[bytes] = set()
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, digest = line.partition(":")
        name, digest = name.strip(), digest.strip().lower()
        if not sep or not _NAME.fullmatch(name) or not _HEX.fullmatch(digest):
            raise ValueError(f"{source} line {n}: expected name:sha256hex (a name of letters, "
                             "digits, '.', '_', '@', '-' and 64 hex digits: rummy serve "
                             "--hash-api-key prints one)")
        value = bytes.fromhex(digest)
        if name in names or value in digests:
            raise ValueError(f"{source} line {n}: duplicate key name or digest")
        names.add(name)
        digests.add(value)
        keys.append(ApiKey(name, value))
    if not keys:
        raise ValueError(f"{source}: no API key in the file")
    return keys


def load_api_keys(path: str | Path) -> list[ApiKey]:
    """:func:`parse_api_keys` of a file.

    Raises:
        ValueError: the file cannot be read, or see :func:`parse_api_keys`.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the API keys file {path}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    return parse_api_keys(text, str(path))


@dataclass(frozen=True, slots=True)
class Identity:
    """The caller of one request.

    Attributes:
        key: ``"key:<name>"``, ``"cn:<name>"`` or ``"host:<host>"``: what rate limits and
            stream bounds count against.
        known: a configured API key matched, or an allowed certificate name.
        credentials: ``"none"`` (no API key, no client certificate), ``"ok"`` or ``"bad"``
            (an ``authorization`` header that is malformed or matches no key, or a
            certificate whose names are not allowed).
    """

    key: str
    known: bool
    credentials: str


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class CallerPolicy:
    """The known callers: API keys and allowed client-certificate names.

    Args:
        api_keys: configured keys (names and digests).
        allowed_names: certificate subject CNs or DNS/URI SANs allowed (exact match).
    """

    def __init__(self, api_keys: Sequence[ApiKey] = (),
                 allowed_names: Iterable[str] = ()) -> None:
        self.api_keys = tuple(api_keys)
        self.allowed_names = frozenset(allowed_names)

    @property
    def enforced(self) -> bool:
        """True when any key or name is configured: ``CreateGame`` and admin calls then need
        a known caller. False: every caller may make them (the open default)."""
        return bool(self.api_keys or self.allowed_names)

    def match_key(self, key: str) -> str | None:
        """The name of the configured key ``key`` is, or ``None``. Compares the key's digest
        with every configured digest in constant time, without stopping at a match."""
        digest = hashlib.sha256(key.encode()).digest()
        found: str | None = None
        for entry in self.api_keys:
            if hmac.compare_digest(digest, entry.digest):
                found = entry.name
        return found

    def identify(self, metadata: Iterable[tuple[str, Any]] | None,
                 auth_context: Mapping[str, Sequence[bytes]] | None,
                 peer: str) -> Identity:
        """The caller of a request from its metadata, TLS auth context and peer string.

        An ``authorization`` header is checked first: a matching ``Bearer`` key makes the
        caller ``key:<name>``; a header that does not match makes the credentials ``bad``
        (the caller then counts as its host). Else an mTLS certificate: its CN or SANs,
        ``cn:<name>`` and known when one is allowed; else ``cn:<CN>``, not known, and
        ``bad`` if names are configured (``none`` if only keys are).
        """
        headers = [_text(v) for k, v in (metadata or ()) if k.lower() == AUTHORIZATION]
        host = client_key("", peer)
        if headers:
            scheme, _, key = headers[0].strip().partition(" ")
            name = (self.match_key(key.strip()) if len(headers) == 1 and
                    scheme.lower() == "bearer" and key.strip() and self.api_keys else None)
            if name is None:
                return Identity(host, False, "bad")
            return Identity(f"key:{name}", True, "ok")
        names = self.certificate_names(auth_context)
        if names:
            for name in names:
                if name in self.allowed_names:
                    return Identity(f"cn:{name}", True, "ok")
            # a certificate the client CA vouches for still names the caller for rate
            # limits and stream bounds, known or not
            return Identity(f"cn:{names[0]}", False, "bad" if self.allowed_names else "none")
        return Identity(host, False, "none")

    @staticmethod
    def certificate_names(auth_context: Mapping[str, Sequence[bytes]] | None) -> list[str]:
        """The subject CN, then the SANs, of a verified client certificate (``[]``: none).
        gRPC fills ``x509_common_name`` and ``x509_subject_alternative_name`` only for a
        certificate that verified against the server's client CA."""
        if not auth_context:
            return []
        names: list[str] = []
        for field in ("x509_common_name", "x509_subject_alternative_name"):
            names += [_text(v) for v in auth_context.get(field, ())]
        return names


class CallerGate:
    """Admission of every GameService call: caller identity, the known-caller check of
    ``CreateGame`` and admin requests, and the per-caller rate limits.

    Args:
        policy: the known callers (default: none, the open server).
        commands: rate limit of game calls (everything but ``CreateGame``; a stream counts
            once, when it opens). Default: none.
        create: rate limit of ``CreateGame``. Default: none.
        events: rate limit of events read with ``GetEvents``, in events (a page costs its
            size: :meth:`charge_events`). Default: none.
    """

    def __init__(self, policy: CallerPolicy | None = None,
                 commands: RateLimiter | None = None,
                 create: RateLimiter | None = None,
                 events: RateLimiter | None = None) -> None:
        self.policy = policy if policy is not None else CallerPolicy()
        self.commands = commands if commands is not None else RateLimiter(0, 1)
        self.create = create if create is not None else RateLimiter(0, 1, kind="create")
        self.events = events if events is not None else RateLimiter(0, 1, kind="events")

    def identify(self, context: Any) -> Identity:
        """The caller of the call whose ``grpc.aio.ServicerContext`` is ``context``."""
        try:
            auth = context.auth_context()
        except Exception:  # noqa: BLE001 - a test double may have none
            auth = None
        return self.policy.identify(context.invocation_metadata(), auth, context.peer())

    def admit(self, context: Any, *, create: bool = False,
              privileged: bool = False) -> Identity:
        """Admit a call or raise. The rate limit is taken first (by identity; unknown
        callers by host), so that guessing keys is rate limited too.

        Args:
            context: the call's ``grpc.aio.ServicerContext``.
            create: the call is ``CreateGame`` (its own limit, and reserved to known
                callers when the policy is enforced).
            privileged: the request carries an ``admin_token`` (reserved likewise).

        Returns:
            The caller's identity.

        Raises:
            RateLimited: past the caller's rate limit.
            NoCredentials: a reserved call without credentials (policy enforced).
            BadCredentials: a reserved call with credentials not accepted.
        """
        who = self.identify(context)
        (self.create if create else self.commands).take(who.key)
        if (create or privileged) and self.policy.enforced and not who.known:
            if who.credentials == "none":
                raise NoCredentials()
            raise BadCredentials()
        return who

    def charge_events(self, who: Identity, events: int) -> None:
        """Price a read of up to ``events`` events (a ``GetEvents`` page) to the caller's
        events bucket, before the read; :meth:`refund_events` gives back what it did not
        use.

        Raises:
            RateLimited: past the caller's events rate (kind ``"events"``).
        """
        self.events.take(who.key, events)

    def refund_events(self, who: Identity, events: int) -> None:
        """Give back ``events`` priced by :meth:`charge_events` and not read."""
        self.events.refund(who.key, events)


__all__ = ["AUTHORIZATION", "ApiKey", "CallerGate", "CallerPolicy", "Identity",
           "hash_api_key", "load_api_keys", "new_api_key", "parse_api_keys"]
