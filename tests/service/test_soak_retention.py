"""Redis memory stays flat with retention on (a slow test: the bounded version of
``benchmarks/soak_retention.py``).

2,000 short games through a real ``rummy serve --retain-finished 10`` over a private
``redis-server``, 8 at a time: after the first 400 games (the retention window full),
every sample of Redis ``used_memory`` taken while games are played stays within 2 MiB of
their median and does not drift (fitted to the keys held, the last third of the samples
within 0.5 MiB of the first: ``soak_retention.verdict``), and every game ends in the
archive. Without retention Redis would grow with every finished game (its
keys and two feed entries stay for good: docs/operations.md, "Memory per game").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import pg_helpers

ROOT = Path(__file__).resolve().parents[2]
GAMES, WARMUP, BAND_MIB = 2000, 400, 2.0

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def test_redis_memory_stays_flat_over_2000_finished_games_with_retention(
        tmp_path: Path) -> None:
    why = pg_helpers.pg_unreachable()
    if why:
        pytest.fail(why)
    out_file = tmp_path / "soak.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak_retention.py"), "--games",
         str(GAMES), "--warmup", str(WARMUP), "--band-mib", str(BAND_MIB), "--retain", "10",
         "--sample", "10", "--budget", "1500", "--quiet", "--pg-url", pg_helpers.PG_URL,
         "--json", str(out_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=1700, check=False)
    print(out.stdout[-3000:])
    assert out.returncode in (0, 1), out.stdout[-3000:] + out.stderr[-3000:]
    verdict = json.loads(out_file.read_text())["verdict"]
    assert verdict["games"] == GAMES and verdict["drained"], verdict
    assert verdict["flat"], verdict
    assert verdict["max_deviation_mib"] <= BAND_MIB and abs(verdict["drift_mib"]) <= 0.5
