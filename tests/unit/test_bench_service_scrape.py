"""The server-side split of ``benchmarks/bench_service.py``: quantiles read from two scrapes
of ``rummy_grpc_server_handling_seconds`` (counted, not timed)."""

from __future__ import annotations

import math

from benchmarks.bench_service import bucket_quantile

INF = math.inf


def test_quantiles_are_bucket_bounds_of_the_calls_between_two_scrapes() -> None:
    before = {"GetView": {0.0005: 10.0, 0.001: 10.0, 0.0025: 10.0, INF: 10.0},
              "Draw": {0.0005: 0.0, 0.001: 5.0, 0.0025: 5.0, INF: 5.0}}
    # 100 more GetView calls: 90 under 0.5 ms, 9 under 1 ms, 1 under 2.5 ms
    after = {"GetView": {0.0005: 100.0, 0.001: 109.0, 0.0025: 110.0, INF: 110.0},
             "Draw": {0.0005: 0.0, 0.001: 5.0, 0.0025: 25.0, INF: 25.0},
             "Pass": {0.0005: 0.0, 0.001: 0.0, 0.0025: 0.0, INF: 20.0},
             "CreateGame": {0.0005: 0.0, 0.001: 0.0, 0.0025: 0.0, INF: 7.0}}
    assert bucket_quantile(before, after, {"GetView"}, 0.5) == (0.0005, 100)
    assert bucket_quantile(before, after, {"GetView"}, 0.99) == (0.001, 100)
    assert bucket_quantile(before, after, {"GetView"}, 1.0) == (0.0025, 100)
    # commands: Draw's 20 new calls (all 1..2.5 ms) and Pass's 20 (past the last bound);
    # calls of methods not asked for (CreateGame) are not counted
    assert bucket_quantile(before, after, {"Draw", "Pass"}, 0.5) == (0.0025, 40)
    assert bucket_quantile(before, after, {"Draw", "Pass"}, 0.99) == (INF, 40)


def test_no_calls_between_the_scrapes_gives_no_quantile() -> None:
    same = {"GetView": {0.0005: 3.0, INF: 3.0}}
    for before, after in ((same, same), ({}, {})):
        bound, calls = bucket_quantile(before, after, {"GetView"}, 0.99)
        assert math.isnan(bound) and calls == 0
