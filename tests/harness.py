"""Small helpers of the test harness: where a missing tool may skip a test and where it
must fail it.

A test that needs an optional tool (Node.js and the npm packages of ``tests/node``,
Chromium) skips with the reason on a developer's machine; under ``CI=true`` (what CI runners
set, and ``.ci/run`` exports) the same reason fails the test, so CI never reports green for
a check it did not run. ``tests/conftest.py`` applies :func:`ci_forbids_skip` to every skip.
"""

from __future__ import annotations

import os
import re

#: skip reasons that fail a CI run: a missing Node.js, npm, or npm package
CI_REQUIRED = re.compile(r"node\.?js|\bnpm\b", re.IGNORECASE)


def in_ci() -> bool:
    """Whether this is a CI run: the environment variable ``CI`` is ``true`` or ``1``."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def ci_forbids_skip(reason: str) -> bool:
    """Whether a skip with ``reason`` must fail instead (CI, and a tool CI must have)."""
    return in_ci() and CI_REQUIRED.search(reason) is not None


HANG_GUARD = float(os.environ.get("RUMMY_TEST_HANG_GUARD", "300"))
"""Seconds a test waits for something that must happen before it gives up: a hang guard,
never a pass criterion (a loaded machine may take many times the usual time; a timing
figure worth keeping belongs in ``benchmarks/``). ``RUMMY_TEST_HANG_GUARD`` overrides it."""
