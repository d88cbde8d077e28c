"""A Node.js client written from the .proto alone plays a game against a real server:
tests/node/client.mjs with @grpc/grpc-js and @grpc/proto-loader. It decodes the
ErrorInfo detail, resumes a stream, checks that a 62-bit seed survives as a string, and
lists the services by reflection. Skipped (with the reason) when Node.js or the npm
packages are missing: `npm ci --prefix tests/node` installs them (``.ci/run`` does)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import google.rpc
import pytest

from .conftest import ADMIN_TOKEN

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"


async def test_node_client_plays_a_game(running):
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        pytest.skip("run `npm ci --prefix tests/node` first")
    google_dir = Path(google.rpc.__path__[0]).parent.parent  # .../site-packages
    proc = await asyncio.create_subprocess_exec(
        node, str(NODE_DIR / "client.mjs"), f"127.0.0.1:{running.port}", str(ROOT / "proto"),
        str(google_dir), ADMIN_TOKEN, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    text = out.decode()
    print(text)
    assert proc.returncode == 0, text
    assert text.strip().splitlines()[-1].startswith("ok ")
