"""The security options of ``rummy serve``: TLS files, known callers (API keys, client
certificate names), the admin token and the per-caller rate limits, read from the parsed
flags and checked before the server starts; and the ``--new-api-key`` / ``--hash-api-key``
helpers. :mod:`rummy_grpc.cli` parses the flags.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def api_key_line(args: argparse.Namespace) -> int:
    """``--new-api-key NAME`` / ``--hash-api-key NAME``: print an ``--api-keys`` line."""
    from rummy_grpc.callers import hash_api_key, new_api_key, parse_api_keys
    name = args.new_api_key or args.hash_api_key
    key = new_api_key() if args.new_api_key else sys.stdin.readline().strip()
    try:
        line = f"{name}:{hash_api_key(key)}"
        parse_api_keys(line, "--new-api-key/--hash-api-key")  # the name is valid
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.new_api_key:
        print(key)
    print(line)
    return 0


def admin_token(args: argparse.Namespace) -> str | None:
    """The admin token: ``--admin-token-file``, else ``$RUMMY_ADMIN_TOKEN_FILE``, else
    ``$RUMMY_ADMIN_TOKEN`` (``None``: none).

    Raises:
        ValueError: the file cannot be read or is empty.
    """
    path = args.admin_token_file or os.environ.get("RUMMY_ADMIN_TOKEN_FILE")
    if not path:
        return os.environ.get("RUMMY_ADMIN_TOKEN") or None
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the admin token file {path}: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    if not token:
        raise ValueError(f"the admin token file {path} is empty")
    return token


def serve_security(args: argparse.Namespace) -> dict[str, Any]:
    """The TLS, caller and rate-limit options of ``rummy serve`` as :func:`create_server`
    keyword arguments, every file read and checked now.

    Raises:
        ValueError: a bad combination of flags, or a file that cannot be used (TLS files
            missing, unreadable, not PEM, a key that does not match its certificate; an API
            keys file with a bad line; an empty admin token file). The message is one line.
    """
    from rummy_grpc.callers import CallerPolicy, load_api_keys
    from rummy_grpc.tls import TlsConfig, load_key_pair
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
    if args.allow_client_cn and not args.tls_client_ca:
        raise ValueError("--allow-client-cn needs --tls-client-ca (client certificates)")
    tls = None
    if args.tls_cert:
        tls = TlsConfig(args.tls_cert, args.tls_key, args.tls_client_ca)
        load_key_pair(tls)
    keys = load_api_keys(args.api_keys) if args.api_keys else []
    return {"tls": tls, "callers": CallerPolicy(keys, args.allow_client_cn),
            "admin_token": admin_token(args),
            "rate_commands": args.rate_commands, "rate_burst": args.rate_burst,
            "rate_create": args.rate_create, "rate_create_burst": args.rate_create_burst,
            "rate_events": args.rate_events, "rate_events_burst": args.rate_events_burst}


__all__ = ["admin_token", "api_key_line", "serve_security"]
