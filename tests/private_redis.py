"""A private ``redis-server`` for a test: on a free port, with an ACL user and a password,
optionally with TLS only (a throwaway CA and server certificate made by ``openssl``).

Used by the tests of Redis with credentials (``tests/contract/test_redis_acl.py``). The
shared Redis on 6379 is never reconfigured: other tests run against it at the same time.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis

from tests.chaos_helpers import free_port

USER = "rummy"
PASSWORD = "s3cret-Pa55:with@odd/chars"
"""The ACL user's password: ':' '@' '/' check that URLs are built and parsed right."""


@dataclass(frozen=True)
class PrivateRedis:
    """A running private Redis: where it listens and how to log in."""

    port: int
    user: str
    password: str
    tls: bool
    ca_file: Path | None

    @property
    def scheme(self) -> str:
        """``rediss`` with TLS, else ``redis``."""
        return "rediss" if self.tls else "redis"

    def url(self, *, user: str | None = None, password: str | None = None, db: int = 0) -> str:
        """A URL of this Redis; ``password=""`` leaves the password out (a secret file gives
        it), ``user=""`` the user too."""
        from urllib.parse import quote

        u = self.user if user is None else user
        p = self.password if password is None else password
        userinfo = f"{quote(u, safe='')}:{quote(p, safe='')}@" if p else (f"{u}@" if u else "")
        return f"{self.scheme}://{userinfo}127.0.0.1:{self.port}/{db}"


def tls_supported() -> str | None:
    """``None`` if ``redis-server`` supports TLS and ``openssl`` can make certificates,
    else why not."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed"
    if shutil.which("openssl") is None:
        return "openssl is not installed"
    # a TLS build rejects the missing certificate; a build without TLS the directive itself
    out = subprocess.run(["redis-server", "--port", "0", "--tls-port", "1",
                          "--tls-cert-file", "/nonexistent.crt"],
                         capture_output=True, text=True, timeout=10, check=False)
    text = (out.stdout + out.stderr).lower()
    if "not supported" in text or "bad directive" in text:
        return "redis-server was built without TLS"
    return None


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1/localhost signed by it:
    ``(ca.crt, server.crt, server.key)``."""
    d = directory

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")  # fast TLS
    run("req", "-x509", *ec, "-days", "2", "-subj", "/CN=rummy test CA",
        "-keyout", "ca.key", "-out", "ca.crt")
    run("req", *ec, "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n", encoding="utf-8")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.crt")
    return d / "ca.crt", d / "server.crt", d / "server.key"


@contextlib.contextmanager
def private_redis(directory: Path, *, tls: bool = False) -> Iterator[PrivateRedis]:
    """Start ``redis-server`` on a free port with ACL user ``rummy`` (password
    :data:`PASSWORD`, every key and command) and the default user disabled; with ``tls``
    the port speaks TLS only. Stopped (by its pid) on exit."""
    port = free_port()
    args = ["redis-server", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(directory),
            "--user", "default", "off",
            "--user", USER, "on", f">{PASSWORD}", "~*", "&*", "+@all"]
    ca = None
    if tls:
        ca, cert, key = make_certificates(directory)
        args += ["--port", "0", "--tls-port", str(port), "--tls-cert-file", str(cert),
                 "--tls-key-file", str(key), "--tls-ca-cert-file", str(ca),
                 "--tls-auth-clients", "no"]
    else:
        args += ["--port", str(port)]
    log = open(directory / f"redis-{port}.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = PrivateRedis(port=port, user=USER, password=PASSWORD, tls=tls, ca_file=ca)
    try:
        kwargs = {"ssl_ca_certs": str(ca)} if ca else {}
        deadline = time.monotonic() + 15
        while True:
            try:
                client = redis.Redis.from_url(server.url(), socket_connect_timeout=0.5, **kwargs)
                try:
                    client.ping()
                finally:
                    client.close()
                break
            except redis.RedisError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("private redis-server did not start: "
                                       + (directory / f"redis-{port}.log").read_text()) from None
                time.sleep(0.05)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


WRONG_PASSWORD = "not-the-Pa55word"
"""A password the private Redis refuses."""


def environ_for(server: PrivateRedis, password_file: Path | None = None) -> dict[str, str]:
    """The environment a client of ``server`` needs: its CA (TLS) and, if given, the
    password file (``RUMMY_REDIS_PASSWORD_FILE``)."""
    env = {}
    if password_file is not None:
        env["RUMMY_REDIS_PASSWORD_FILE"] = str(password_file)
    if server.ca_file is not None:
        env["RUMMY_REDIS_CA_FILE"] = str(server.ca_file)
    return env


START_COMMAND = 'redis-server --daemonize yes --port 6379 --save ""'
"""The command that starts the shared test Redis the suite looks for first."""


@dataclass
class PlainRedis:
    """A private ``redis-server`` without credentials, started for a whole test session when
    nothing answers at the test Redis URL (:func:`tests.redis_helpers.ensure_test_redis`)."""

    proc: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Terminate it (by its pid), killing it after 10 s."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_plain_redis(directory: Path, timeout: float = 15.0) -> PlainRedis:
    """Start ``redis-server`` on a free port of 127.0.0.1, no persistence, no password, its
    log in ``directory``; returns once it answers PING.

    Raises:
        FileNotFoundError: ``redis-server`` is not installed.
        RuntimeError: it exited or did not answer within ``timeout`` seconds (a hang guard;
            it normally answers in well under a second), with its log.
    """
    if shutil.which("redis-server") is None:
        raise FileNotFoundError("redis-server is not installed")
    port = free_port()
    log_path = directory / f"redis-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port),
                                 "--save", "", "--appendonly", "no", "--dir", str(directory)],
                                stdout=log, stderr=subprocess.STDOUT)
    server = PlainRedis(proc, port, directory)
    deadline = time.monotonic() + timeout
    while True:
        try:
            client = redis.Redis.from_url(server.url, socket_connect_timeout=0.5)
            try:
                client.ping()
            finally:
                client.close()
            return server
        except redis.RedisError:
            if proc.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError("private redis-server did not start: "
                                   + log_path.read_text(errors="replace")) from None
            time.sleep(0.05)
