"""The game service's memory levels off past its state cache (a chaos test: ``make chaos``).

A review found RSS growing from 59 to 106 MiB in a 20-minute mixed soak of 3,820 games,
below the 4,096-game state cache, so no run had gone past the bound. This runs the short
version of ``benchmarks/soak_service.py``: a real ``rummy serve`` over the test Redis with a
state cache of 256 games, 3 minutes of mixed short games (server bots, human seats played
through the API, spectator streams), sampled every 10 s; RSS over the last third of the
samples must stay within the soak's tolerance (2 MiB or 2 % of RSS), and every game must
end. The full soak (10,000 games, up to an hour) is ``python benchmarks/soak_service.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.redis_helpers import REDIS_URL, redis_unreachable

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 180
CACHE = 256

pytestmark = [pytest.mark.chaos, pytest.mark.slow, pytest.mark.timeout(BUDGET + 600)]


def test_rss_levels_off_past_the_state_cache(tmp_path: Path, record_property: Any) -> None:
    redis_unreachable()
    out_file = tmp_path / "soak.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak_service.py"), "--redis-url",
         REDIS_URL, "--budget", str(BUDGET), "--cache", str(CACHE), "--sample", "10",
         "--games", "100000", "--quiet", "--json", str(out_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=BUDGET + 500, check=False)
    print(out.stdout[-4000:])
    assert out.returncode in (0, 1), out.stdout[-3000:] + out.stderr[-3000:]
    result = json.loads(out_file.read_text())
    verdict, samples = result["verdict"], result["samples"]
    record_property("games", result["games"])
    record_property("rss_mib_first_last", f"{samples[0]['rss_mib']} -> {samples[-1]['rss_mib']}")
    record_property("rss_slope_mib_per_1000_games",
                    round(verdict.get("slope_mib_per_1000_games", 0.0), 2))
    assert result["server"]["failures"] == []
    assert result["games"] > 2 * CACHE, "the soak did not go past the state cache"
    assert verdict["levelled_off"] is True, verdict
    assert out.returncode == 0
