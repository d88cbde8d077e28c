"""TLS and mutual TLS for ``rummy serve``, with certificates that reload in place.

:class:`TlsConfig` names the PEM files: the server's certificate chain and private key, and
optionally a client CA (mutual TLS: a client must present a certificate that CA signed).
:class:`CertReloader` checks them (:func:`load_key_pair`: readable, PEM, the key matches the
certificate, the CA parses) and builds gRPC's *dynamic* server credentials
(``grpc.dynamic_ssl_server_credentials``): gRPC calls :meth:`CertReloader.fetch` before every
new TLS handshake, and it answers a new certificate configuration when the files changed
(size, mtime or inode) or a reload was asked for (:meth:`CertReloader.request_reload`, on
SIGHUP). Connections already open keep the certificate they were set up with; no call, game
or stream is interrupted. New files that do not check out (half written, a key of another
certificate) are refused with one WARNING and the current certificate stays in use.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from dataclasses import dataclass

import grpc

log = logging.getLogger("rummy_grpc")


class TlsError(ValueError):
    """A TLS file that cannot be used: missing, unreadable, not PEM, or a key that does not
    match its certificate. The message is one line naming the file(s)."""


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """PEM files of a TLS server.

    Attributes:
        cert: the server's certificate chain (leaf first).
        key: its private key (unencrypted PEM).
        client_ca: CA certificate(s) client certificates must chain to; set: mutual TLS,
            every client must present one. ``None``: server-authenticated TLS only.
    """

    cert: str
    key: str
    client_ca: str | None = None

    @property
    def mutual(self) -> bool:
        """True when client certificates are required."""
        return self.client_ca is not None

    def paths(self) -> tuple[str, ...]:
        """The files the configuration reads, in the order cert, key, client CA."""
        return (self.cert, self.key) + ((self.client_ca,) if self.client_ca else ())


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise TlsError(f"cannot read the TLS {what} {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise TlsError(f"the TLS {what} {path} is not a PEM file")
    return data


def _check(config: TlsConfig) -> None:
    """Let OpenSSL (the ``ssl`` module) parse the files and match the key to the cert."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(config.cert, config.key)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc) or "key values mismatch" in str(exc):
            raise TlsError(f"the TLS key {config.key} does not match the certificate "
                           f"{config.cert}") from None
        raise TlsError(f"the TLS certificate {config.cert} or key {config.key} cannot be "
                       f"loaded: {exc.reason or exc}") from None
    except OSError as exc:
        raise TlsError(f"cannot read the TLS certificate {config.cert} or key {config.key}: "
                       f"{exc.strerror or exc}") from None
    if config.client_ca:
        try:
            ctx.load_verify_locations(cafile=config.client_ca)
        except (ssl.SSLError, OSError) as exc:
            raise TlsError(f"the TLS client CA {config.client_ca} cannot be loaded: "
                           f"{getattr(exc, 'reason', None) or exc}") from None


def load_key_pair(config: TlsConfig) -> tuple[bytes, bytes, bytes | None]:
    """Read and check the files of ``config``.

    Returns:
        ``(certificate chain PEM, private key PEM, client CA PEM or None)``.

    Raises:
        TlsError: a file is missing or unreadable, not PEM, the key does not match the
            certificate, or the client CA does not parse.
    """
    for _ in range(3):  # a file replaced between the read and the check: read again
        cert = _read(config.cert, "certificate")
        key = _read(config.key, "key")
        ca = _read(config.client_ca, "client CA") if config.client_ca else None
        _check(config)
        if (_read(config.cert, "certificate") == cert and _read(config.key, "key") == key
                and (ca is None or _read(config.client_ca or "", "client CA") == ca)):
            return cert, key, ca
    raise TlsError(f"the TLS files {', '.join(config.paths())} keep changing; try again")


def _stamp(paths: tuple[str, ...]) -> tuple[tuple[int, int, int] | None, ...]:
    out: list[tuple[int, int, int] | None] = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class CertReloader:
    """The server's TLS credentials, reloaded when the files change or on request.

    Args:
        config: the files.

    Raises:
        TlsError: the files do not check out now (see :func:`load_key_pair`).
    """

    def __init__(self, config: TlsConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._stamp = _stamp(config.paths())
        self._initial = self._configuration(*load_key_pair(config))
        self._force = False
        self.reloads = 0
        """Certificate configurations handed to gRPC after the first one."""

    @staticmethod
    def _configuration(cert: bytes, key: bytes,
                       ca: bytes | None) -> grpc.ServerCertificateConfiguration:
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=ca)

    def credentials(self) -> grpc.ServerCredentials:
        """Dynamic server credentials whose fetcher is :meth:`fetch` (client certificates
        required when ``config.client_ca`` is set)."""
        return grpc.dynamic_ssl_server_credentials(
            self._initial, self.fetch, require_client_authentication=self.config.mutual)

    def request_reload(self) -> None:
        """Load the files again before the next handshake even if they look unchanged
        (SIGHUP)."""
        self._force = True

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """gRPC's certificate-configuration fetcher, called before each new handshake on a
        gRPC core thread: ``None`` to keep the current certificate, else the new one. Cheap
        when nothing changed (one ``stat`` per file). Never raises."""
        try:
            stamp = _stamp(self.config.paths())
            with self._lock:
                if not self._force and stamp == self._stamp:
                    return None
                self._force = False
                self._stamp = stamp  # a bad set of files is reported once, not per handshake
                try:
                    fresh = self._configuration(*load_key_pair(self.config))
                except TlsError as exc:
                    log.warning("TLS files changed but cannot be used; keeping the current "
                                "certificate: %s", exc)
                    return None
                self.reloads += 1
                log.info("TLS certificate reloaded from %s (new connections use it)",
                         self.config.cert)
                return fresh
        except Exception:  # noqa: BLE001 - an exception here would fail the handshake
            log.exception("TLS certificate reload failed; keeping the current certificate")
            return None


__all__ = ["CertReloader", "TlsConfig", "TlsError", "load_key_pair"]
