"""TLS and mutual TLS: a TLS client plays, a plaintext client is refused, mTLS
refuses a client without a certificate, health and reflection follow the port's
credentials, certificates reload without dropping games (on SIGHUP in a real ``rummy serve``
process, and on a file change), and ``rummy serve`` says clearly what is wrong with its
files. Certificates are throwaway ones made by ``openssl`` (tests/tls_helpers.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.server import RummyServer, create_server
from rummy_grpc.tls import TlsConfig, TlsError, load_key_pair

from tests.chaos_helpers import ROOT, server_log, start_server
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable
from tests.tls_helpers import Pem, make_ca, make_cert

from .conftest import ADMIN_TOKEN, humans, play_turns

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pem]:
    """A CA, a server certificate (serial 1), a second server certificate (serial 2), the
    client certificates ``backend-a`` and ``backend-b``, and one from another CA."""
    d = tmp_path_factory.mktemp("pki")
    ca = make_ca(d)
    other_dir = d / "other"
    other_dir.mkdir()
    other_ca = make_ca(other_dir, "other-ca")
    return {"ca": ca,
            "server": make_cert(d, ca, "server", serial=1),
            "server2": make_cert(d, ca, "server2", serial=2),
            "client": make_cert(d, ca, "backend-a", serial=10, client=True),
            "client2": make_cert(d, ca, "backend-b", serial=12, client=True),
            "stranger": make_cert(other_dir, other_ca, "stranger", serial=11, client=True)}


def channel_credentials(pki: dict[str, Pem], client: str | None = None,
                        api_key: str | None = None) -> grpc.ChannelCredentials:
    """TLS channel credentials trusting the test CA; with a client certificate and/or an
    API key (sent as ``authorization: Bearer <key>`` on every call)."""
    key = cert = None
    if client is not None:
        cert, key = pki[client].read()
    creds = grpc.ssl_channel_credentials(pki["ca"].cert.read_bytes(), key, cert)
    if api_key is not None:
        creds = grpc.composite_channel_credentials(
            creds, grpc.access_token_call_credentials(api_key))
    return creds


@contextlib.asynccontextmanager
async def serving(store: Any, **options: Any) -> AsyncIterator[tuple[RummyServer, int]]:
    """A started in-process server on 127.0.0.1:0 (``options``: :func:`create_server`)."""
    server, port = create_server("127.0.0.1:0", store, admin_token=ADMIN_TOKEN, **options)
    await server.start()
    try:
        yield server, port
    finally:
        await server.stop(None)


def served_serial(port: int, pki: dict[str, Pem], client: str | None = None) -> int:
    """The serial number of the certificate a new TLS connection to ``port`` is shown
    (the standard ``ssl`` module, ALPN h2, verified against the test CA)."""
    ctx = ssl.create_default_context(cafile=str(pki["ca"].cert))
    ctx.set_alpn_protocols(["h2"])
    if client is not None:
        ctx.load_cert_chain(str(pki[client].cert), str(pki[client].key))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname="localhost") as tls:
        return int(tls.getpeercert()["serialNumber"], 16)  # type: ignore[index,arg-type]


async def create_and_play(stub: pb_grpc.GameServiceStub, commands: int = 6
                          ) -> tuple[str, dict[int, str], pb.PlayerView]:
    """Create a 2-human game and play ``commands`` commands; returns id, tokens, view."""
    created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
    tokens = {t.seat: t.token for t in created.tokens}
    view = await play_turns(stub, created.game_id, tokens, {0: "basic", 1: "basic"},
                            max_commands=commands)
    return created.game_id, tokens, view


@pytest.mark.asyncio
async def test_a_tls_client_plays_and_a_plaintext_client_is_refused(store, pki) -> None:
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key))
    async with serving(store, tls=tls) as (_, port):
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}",
                                           channel_credentials(pki)) as ch:
            game_id, tokens, view = await create_and_play(pb_grpc.GameServiceStub(ch))
            assert view.version > 2  # commands were applied
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as plain:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await pb_grpc.GameServiceStub(plain).GetView(
                    pb.GetViewRequest(game_id=game_id, token=tokens[0]), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        # a client that does not trust the server's CA is refused too
        other = grpc.ssl_channel_credentials(pki["stranger"].cert.read_bytes())
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}", other) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await pb_grpc.GameServiceStub(ch).GetView(
                    pb.GetViewRequest(game_id=game_id), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE


@pytest.mark.asyncio
async def test_health_and_reflection_are_served_over_tls(store, pki) -> None:
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key), str(pki["ca"].cert))
    async with serving(store, tls=tls) as (_, port):
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}",
                                           channel_credentials(pki, "client")) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            for service in ("", "rummy_api.v1.GameService"):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            names: set[str] = set()
            async for answer in refl.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")])):
                names |= {s.name for s in answer.list_services_response.service}
            assert "rummy_api.v1.GameService" in names
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as plain:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await health_pb2_grpc.HealthStub(plain).Check(
                    health_pb2.HealthCheckRequest(), timeout=5)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE


@pytest.mark.asyncio
async def test_mutual_tls_refuses_a_client_without_a_certificate(store, pki) -> None:
    tls = TlsConfig(str(pki["server"].cert), str(pki["server"].key), str(pki["ca"].cert))
    async with serving(store, tls=tls) as (_, port):
        for who in (None, "stranger"):  # no certificate; one of another CA
            async with grpc.aio.secure_channel(f"127.0.0.1:{port}",
                                               channel_credentials(pki, who)) as ch:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await pb_grpc.GameServiceStub(ch).CreateGame(
                        pb.CreateGameRequest(seats=humans(2)), timeout=5)
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE, who
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}",
                                           channel_credentials(pki, "client")) as ch:
            _, _, view = await create_and_play(pb_grpc.GameServiceStub(ch), 4)
            assert view.version > 2


@pytest.mark.asyncio
async def test_changed_files_reload_on_the_next_handshake(store, pki, tmp_path) -> None:
    cert, key = tmp_path / "tls.pem", tmp_path / "tls.key"
    cert.write_bytes(pki["server"].cert.read_bytes())
    key.write_bytes(pki["server"].key.read_bytes())
    async with serving(store, tls=TlsConfig(str(cert), str(key))) as (server, port):
        assert await asyncio.to_thread(served_serial, port, pki) == 1
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}",
                                           channel_credentials(pki)) as old:
            game_id, tokens, _ = await create_and_play(pb_grpc.GameServiceStub(old), 2)
            # a bad set (the new key without its certificate) is refused; serial 1 stays
            replace(key, pki["server2"].key.read_bytes())
            assert await asyncio.to_thread(served_serial, port, pki) == 1
            replace(cert, pki["server2"].cert.read_bytes())  # no SIGHUP: mtimes changed
            assert await asyncio.to_thread(served_serial, port, pki) == 2
            assert server.tls is not None and server.tls.reloads == 1
            # the connection made before goes on with the game
            view = await play_turns(pb_grpc.GameServiceStub(old), game_id, tokens,
                                    {0: "basic", 1: "basic"}, max_commands=2)
            assert view.version > 2


def replace(path: Path, data: bytes) -> None:
    """Replace a file atomically (write a sibling, rename), as certificate tools do."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.asyncio
async def test_rummy_serve_reloads_its_certificate_on_sighup(pki, tmp_path) -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"rummy-test-tls-{os.getpid()}-{tmp_path.name[-8:]}"
    cert, key = tmp_path / "tls.pem", tmp_path / "tls.key"
    cert.write_bytes(pki["server"].cert.read_bytes())
    key.write_bytes(pki["server"].key.read_bytes())
    proc, port = start_server(REDIS_URL, prefix, tmp_path, "tls", "--tls-cert", str(cert),
                              "--tls-key", str(key), "--tls-client-ca", str(pki["ca"].cert))
    try:
        assert await asyncio.to_thread(served_serial, port, pki, "client") == 1
        target = f"localhost:{port}"
        async with grpc.aio.secure_channel(target, channel_credentials(pki, "client")) as old:
            stub = pb_grpc.GameServiceStub(old)
            game_id, tokens, _ = await create_and_play(stub, 3)
            replace(key, pki["server2"].key.read_bytes())  # as certbot or cert-manager do
            replace(cert, pki["server2"].cert.read_bytes())
            proc.send_signal(signal.SIGHUP)
            await asyncio.sleep(0.3)
            assert await asyncio.to_thread(served_serial, port, pki, "client") == 2
            # the game goes on, on the old connection and on a new one
            v1 = await play_turns(stub, game_id, tokens, {0: "basic", 1: "basic"},
                                  max_commands=2)
            async with grpc.aio.secure_channel(target,
                                               channel_credentials(pki, "client")) as new:
                v2 = await play_turns(pb_grpc.GameServiceStub(new), game_id, tokens,
                                      {0: "basic", 1: "basic"}, max_commands=2)
            assert v2.version > v1.version
            health = health_pb2_grpc.HealthStub(old)
            reply = await health.Check(health_pb2.HealthCheckRequest())
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        print(f"\nSIGHUP: serial 1 -> 2 for new connections; game {game_id[:8]} went on "
              f"to version {v2.version} on the old and a new connection")
        assert proc.poll() is None
        log = server_log(tmp_path, "tls")
        assert "Traceback" not in log, log[-3000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        await delete_prefix(prefix)


# ------------------------------------------------------------------------- rummy serve

def serve_args(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m rummy_grpc serve --store memory --port 0 ARGS`` (expected to exit)."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}")
    return subprocess.run([sys.executable, "-m", "rummy_grpc", "serve", "--store", "memory",
                           "--host", "127.0.0.1", "--port", "0", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_rummy_serve_says_what_is_wrong_with_its_tls_files(pki, tmp_path) -> None:
    s = pki["server"]
    missing = tmp_path / "nope.pem"
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    unreadable = tmp_path / "secret.key"
    unreadable.write_bytes(s.key.read_bytes())
    unreadable.chmod(0)
    cases = [
        (("--tls-cert", str(missing), "--tls-key", str(s.key)),
         f"cannot read the TLS certificate {missing}"),
        (("--tls-cert", str(s.cert), "--tls-key", str(missing)),
         f"cannot read the TLS key {missing}"),
        (("--tls-cert", str(garbage), "--tls-key", str(s.key)), "is not a PEM file"),
        (("--tls-cert", str(s.cert), "--tls-key", str(pki["server2"].key)),
         "does not match the certificate"),
        (("--tls-cert", str(s.cert)), "--tls-cert and --tls-key go together"),
        (("--tls-client-ca", str(pki["ca"].cert)), "--tls-client-ca needs --tls-cert"),
        (("--tls-cert", str(s.cert), "--tls-key", str(s.key), "--allow-client-cn", "x"),
         "--allow-client-cn needs --tls-client-ca"),
    ]
    if os.geteuid() != 0:  # root reads any file
        cases.append((("--tls-cert", str(s.cert), "--tls-key", str(unreadable)),
                      "Permission denied"))
    for args, message in cases:
        done = serve_args(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], \
            (args, done.stderr)
        assert "Traceback" not in done.stderr


def test_load_key_pair_checks_the_pair(pki) -> None:
    s = pki["server"]
    cert, key, ca = load_key_pair(TlsConfig(str(s.cert), str(s.key), str(pki["ca"].cert)))
    assert cert.startswith(b"-----BEGIN CERTIFICATE") and b"PRIVATE KEY" in key and ca
    with pytest.raises(TlsError, match="does not match"):
        load_key_pair(TlsConfig(str(s.cert), str(pki["client"].key)))
    with pytest.raises(TlsError, match="client CA"):
        load_key_pair(TlsConfig(str(s.cert), str(s.key), str(s.key)))


def test_a_reload_request_reloads_unchanged_files(pki) -> None:
    # SIGHUP calls request_reload: the next handshake gets the files again even when they
    # look unchanged (e.g. a tool that keeps mtimes); without it, nothing is reloaded
    from rummy_grpc.tls import CertReloader
    s = pki["server"]
    reloader = CertReloader(TlsConfig(str(s.cert), str(s.key)))
    assert reloader.fetch() is None and reloader.fetch() is None
    reloader.request_reload()
    assert reloader.fetch() is not None and reloader.reloads == 1
    assert reloader.fetch() is None
