"""Connection URLs with credentials: passwords from secret files, TLS settings, redaction.

Every Redis URL of the project (the event store, Celery's broker and result backend, the batch
state) may carry an ACL user and a password, ``redis://user:password@host:port/db``, and may
use TLS, ``rediss://``. A password need not be written in the URL (where it would show in
``ps``, in a ConfigMap or in a shell history): a file named by an environment variable, such
as a mounted Kubernetes or compose secret, supplies it to a URL that has none.

Environment:
    RUMMY_REDIS_PASSWORD_FILE: the event store's password, for an event-store URL without
        one (``rummy serve --redis-url``, ``RUMMY_REDIS_URL``, ``RUMMY_EVENT_STORE_URL``).
    RUMMY_BROKER_PASSWORD_FILE: the broker's password, for ``RUMMY_BROKER_URL``,
        ``RUMMY_RESULT_URL`` and ``RUMMY_STATE_URL`` without one.
    RUMMY_REDIS_CA_FILE: CA bundle (PEM) that verifies the servers of ``rediss://`` (and
        ``amqps://``) URLs; without it the system's CAs are used. Certificates are always
        verified.

Nothing here logs; :func:`redact_url` and :func:`redact_text` are what every message that
names a URL goes through (a password is never printed). Standard library only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

__all__ = [
    "BROKER_PASSWORD_FILE",
    "CA_FILE",
    "REDACTED",
    "REDIS_PASSWORD_FILE",
    "SecretFileError",
    "read_secret_file",
    "redact_text",
    "redact_url",
    "redis_tls_kwargs",
    "resolve_url",
    "with_password",
]

REDIS_PASSWORD_FILE = "RUMMY_REDIS_PASSWORD_FILE"
"""Environment variable: file holding the event store's password."""
BROKER_PASSWORD_FILE = "RUMMY_BROKER_PASSWORD_FILE"
"""Environment variable: file holding the broker's (and result/state Redis's) password."""
CA_FILE = "RUMMY_REDIS_CA_FILE"
"""Environment variable: CA bundle verifying ``rediss://`` / ``amqps://`` servers."""

REDACTED = "***"
"""What a password is replaced with in anything printed."""

# scheme://[user][:password]@ — the password is everything between the first ':' after the
# scheme's '//' and the last '@' before the host (passwords may hold '@' and ':' unquoted).
_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^\s:/@]*):"
                       r"(?P<password>[^\s/]*)@(?=[^\s@]*(?:[/\s]|$))")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)[^&\s#]*", re.IGNORECASE)


class SecretFileError(ValueError):
    """A secret file named by the environment cannot be used (missing, unreadable, empty).
    The message names the variable and the path, never the file's content."""


def redact_url(url: str) -> str:
    """``url`` with its password (userinfo or ``?password=`` query) replaced by ``***``;
    the user, host, port and path stay, so an error still says where it tried.

    >>> redact_url("redis://rummy:s3cret@redis-events:6379/0")
    'redis://rummy:***@redis-events:6379/0'
    >>> redact_url("rediss://:s3cret@cache.example:6380/0")
    'rediss://:***@cache.example:6380/0'
    >>> redact_url("redis://localhost:6379/0")
    'redis://localhost:6379/0'

    A string that is no well-formed URL (no ``://`` after its scheme) keeps only its
    scheme, since where its password starts cannot be told:

    >>> redact_url("redis:/:s3cret@host")
    'redis:***'
    """
    if "://" not in url and (":" in url or "@" in url):
        head = re.match(r"[A-Za-z][A-Za-z0-9+.-]*", url)
        return f"{head.group(0) if head else ''}:{REDACTED}"
    return redact_text(url)


def redact_text(text: str) -> str:
    """Every URL password inside ``text`` (an error message, a log line, an exception's
    text) replaced by ``***``.

    >>> redact_text("cannot read from amqp://guest:guest@rabbit:5672//: refused")
    'cannot read from amqp://guest:***@rabbit:5672//: refused'
    >>> redact_text("unix:///run/redis.sock?db=0&password=s3cret")
    'unix:///run/redis.sock?db=0&password=***'
    """
    text = _USERINFO.sub(lambda m: f"{m['head']}{m['user']}:{REDACTED}@", text)
    return _QUERY_PASSWORD.sub(lambda m: f"{m['head']}{REDACTED}", text)


def read_secret_file(path: str, variable: str = "secret file") -> str:
    """The secret in the file at ``path``: its text without the trailing newline(s) that
    ``echo`` and editors add (other whitespace is kept: it may be part of the secret).

    Raises:
        SecretFileError: the file is missing, unreadable or empty (the message names
            ``variable`` and ``path``, never the content).
    """
    try:
        with open(path, encoding="utf-8") as f:
            secret = f.read().rstrip("\r\n")
    except OSError as e:
        raise SecretFileError(f"{variable}={path}: cannot read the secret file "
                              f"({e.strerror or type(e).__name__})") from None
    except UnicodeDecodeError:
        raise SecretFileError(f"{variable}={path}: the secret file is not UTF-8 text") from None
    if not secret:
        raise SecretFileError(f"{variable}={path}: the secret file is empty")
    return secret


def _has_password(url: str) -> bool:
    parts = urlsplit(url)
    return parts.password is not None or bool(
        re.search(r"(?:^|&)password=", parts.query, re.IGNORECASE))


def with_password(url: str, password: str) -> str:
    """``url`` with ``password`` put in its userinfo (percent-encoded), keeping its user;
    ``url`` unchanged when it already has a password (the URL wins over a file).

    >>> with_password("redis://rummy@redis-events:6379/0", "p@ss word")
    'redis://rummy:p%40ss%20word@redis-events:6379/0'
    >>> with_password("redis://redis-events:6379/0", "pw")
    'redis://:pw@redis-events:6379/0'
    >>> with_password("redis://:old@h:6379/0", "new")
    'redis://:old@h:6379/0'
    """
    if _has_password(url):
        return url
    parts = urlsplit(url)
    if parts.scheme == "unix":
        sep = "&" if parts.query else "?"
        return f"{url.rstrip('?&')}{sep}password={quote(password, safe='')}"
    userinfo, _, host = parts.netloc.rpartition("@")
    netloc = f"{userinfo}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def resolve_url(url: str, password_file_variable: str,
                environ: Mapping[str, str] | None = None) -> str:
    """``url`` with the password from the file that ``password_file_variable`` names in the
    environment, when the variable is set and the URL has no password; else ``url``.

    Raises:
        SecretFileError: the variable names a file that cannot be used.
    """
    env = os.environ if environ is None else environ
    path = env.get(password_file_variable)
    if not path or _has_password(url):
        return url
    return with_password(url, read_secret_file(path, password_file_variable))


def redis_tls_kwargs(url: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for ``redis.Redis.from_url`` (sync or asyncio) that a ``rediss://``
    URL needs: server certificates always verified, against ``RUMMY_REDIS_CA_FILE`` when it
    is set. ``{}`` for any other URL.

    Raises:
        SecretFileError: ``RUMMY_REDIS_CA_FILE`` names a file that does not exist.
    """
    if not url.startswith("rediss://"):
        return {}
    kwargs: dict[str, Any] = {"ssl_cert_reqs": "required"}
    ca = ca_file(environ)
    if ca:
        kwargs["ssl_ca_certs"] = ca
    return kwargs


def ca_file(environ: Mapping[str, str] | None = None) -> str | None:
    """The CA bundle named by ``RUMMY_REDIS_CA_FILE``, or ``None`` when unset.

    Raises:
        SecretFileError: the variable names a file that does not exist.
    """
    env = os.environ if environ is None else environ
    path = env.get(CA_FILE) or None
    if path is not None and not os.path.isfile(path):
        raise SecretFileError(f"{CA_FILE}={path}: no such CA file")
    return path
