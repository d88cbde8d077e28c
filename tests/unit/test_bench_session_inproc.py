"""``benchmarks/bench_session_inproc.py`` plays real moves through ``GameServicer.Session``
(memory store, fake stream contexts): every command is accepted, the moves asked for are
made (at most one more per game: those in flight at the count), in both modes (the
sessions, ``GameApp.command`` alone); counted, not timed."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from benchmarks import bench_session_inproc as bench


@pytest.mark.parametrize("mode", ["session", "command"])
def test_the_benchmark_makes_the_moves_it_is_asked_for(mode: str,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    args = argparse.Namespace(store="memory", redis_url="", games=3, moves=120,
                              profile=False, sort="tottime", top=0, callers="", mode=mode)
    cpu = asyncio.run(bench.run(args))
    out = capsys.readouterr().out.split()
    assert out[:2] == [mode, "memory"]
    # a game whose move was in flight when the count was reached finishes it
    assert 120 <= int(out[out.index("moves") + 1]) <= 120 + 3
    assert cpu > 0
