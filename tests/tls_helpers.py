"""Throwaway certificates for the TLS tests, made with the ``openssl`` command line (present
wherever the service's images and CI run; no Python dependency needed). EC P-256 keys, valid
for two days.

``make_ca(dir)`` makes a CA; ``make_cert(dir, ca, name, ...)`` a leaf it signs: a server
certificate for ``127.0.0.1`` / ``localhost`` (SANs) or a client certificate, with a chosen
serial number so a test can tell two certificates apart.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Pem:
    """A certificate and its key, as PEM files."""

    cert: Path
    key: Path

    def read(self) -> tuple[bytes, bytes]:
        """``(certificate PEM, key PEM)``."""
        return self.cert.read_bytes(), self.key.read_bytes()


def _openssl(*args: str, cwd: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, f"openssl {' '.join(args)}: {done.stderr}"


def make_ca(directory: Path, name: str = "test-ca") -> Pem:
    """A self-signed CA certificate ``<name>.pem`` and key ``<name>.key`` in ``directory``."""
    pem = Pem(directory / f"{name}.pem", directory / f"{name}.key")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", str(pem.key), "-out", str(pem.cert), "-days", "2",
             "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
    return pem


def make_cert(directory: Path, ca: Pem, name: str, *, serial: int = 1,
              client: bool = False, cn: str | None = None) -> Pem:
    """A leaf certificate signed by ``ca``: ``<name>.pem`` / ``<name>.key``.

    Args:
        name: file stem; also the subject CN unless ``cn`` is given.
        serial: the certificate's serial number.
        client: a client certificate (extendedKeyUsage clientAuth, SAN ``DNS:<cn>``);
            else a server certificate for ``127.0.0.1`` and ``localhost``.
    """
    cn = cn or name
    pem = Pem(directory / f"{name}.pem", directory / f"{name}.key")
    csr = directory / f"{name}.csr"
    ext = directory / f"{name}.ext"
    if client:
        ext.write_text(f"subjectAltName=DNS:{cn}\nextendedKeyUsage=clientAuth\n"
                       "basicConstraints=CA:FALSE\n")
    else:
        ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                       "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(pem.key), "-out", str(csr), "-subj", f"/CN={cn}", cwd=directory)
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key),
             "-set_serial", str(serial), "-days", "2", "-out", str(pem.cert),
             "-extfile", str(ext), cwd=directory)
    return pem
