"""Compile the hot modules (mypyc) and the solver's kernels (numba) before training.

    python -m rummy_env.warmup

It first builds the compiled copies of the environment's and the engine's hot modules
(:mod:`rummy.accel`, about a minute once per change of the sources; ``make setup`` does the
same), which later processes load: about 1.6x more environment steps per second.

The meld slots of the environment come from the exact solver (:mod:`rummy.solver`), whose
search numba compiles on first use: in a fresh install the first ``env.step`` into a meld
phase waits for that (about 2 minutes on a loaded 2-core machine, about 8 s on an idle
one). numba then caches the machine code on disk (beside the package, or in
``NUMBA_CACHE_DIR``), so later processes start at once. Run this once after installing
(e.g. in a Dockerfile or a job's setup step); it prints what it did and how long it took.
"""

from __future__ import annotations

import sys
import time


def warmup() -> float:
    """Run the solver once per objective and one short random game through the
    environment; returns the seconds taken. Never raises for a missing numba: the pure
    search then runs (slower, same plays), and the message says so."""
    from rummy.solver import warm
    t0 = time.perf_counter()
    compiled = warm()
    import numpy as np

    from rummy_env import manipulation_rummy_v0 as rummy_v0
    env = rummy_v0.raw_env(players=2)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        if not env.agents:
            break
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    seconds = time.perf_counter() - t0
    backend = "compiled (numba)" if compiled else "pure Python (numba not usable here)"
    print(f"solver ready: {backend}, warm-up took {seconds:.1f} s")
    return seconds


def main() -> int:
    """``python -m rummy_env.warmup``: the compiled copies of the hot modules first
    (:mod:`rummy.accel`, unless built for these sources already; a missing mypy or C
    compiler is reported and the pure modules run), then the solver's kernels."""
    import argparse
    argparse.ArgumentParser(prog="python -m rummy_env.warmup", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    from rummy import accel
    try:
        accel.build()
    except (RuntimeError, OSError) as e:
        print(f"compiled modules not built ({e}); the pure-Python modules run (same "
              "results, slower)",
              file=sys.stderr)
    warmup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
