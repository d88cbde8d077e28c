"""RL environment speed: ``rummy_env.manipulation_rummy_v0`` against OpenSpiel's gin_rummy.

Both loops are what a researcher runs to collect random-play experience, interleaved in
slices within each round so a change of the machine's load hits both alike:

* ours: ``raw_env(players=2)``, ``env.last()`` -> a uniformly random legal action from
  ``obs["action_mask"]`` (``.nonzero()``, then ``random.Random.randrange``: the same
  generator as OpenSpiel's loop, whose ``random.choice`` picks from a list) ->
  ``env.step``; one step = one ``env.step`` of an agent (with ``--auto-forced`` the
  forced decisions, every draw, are played inside ``step`` and not counted: the agent is
  asked only when it has a choice; with ``--actions edits`` a meld is built edit by edit,
  each edit a step);
* OpenSpiel 2.0.2: ``pyspiel.load_game("gin_rummy")``, ``legal_actions`` ->
  ``random.choice`` -> ``apply_action``, chance nodes sampled from ``chance_outcomes``
  (their time included, not counted as steps), plus ``observation_tensor`` of the player to
  act, as an agent reads an observation each step.

Prints steps/s per round and the median over rounds, the ratio ours / OpenSpiel, the
share of our time spent in the solver's searches of meld slots 0/1 and our rate without it
(the environment's own overhead), and the median and p99 microseconds per step over every
slice. Every figure is warm: one game of each loop is played before timing. The load
average is printed with the figures.
Needs the ``bench`` extra (``pip install -e '.[bench]'``); without OpenSpiel only our
figures are printed. Run ``python -m rummy_env.warmup`` once after an install first (the
solver's numba kernels compile on first use).

Usage: python benchmarks/bench_env.py [--rounds N] [--seconds S] [--auto-forced]
       [--players P] [--clock wall|cpu] [--actions slots|edits]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from rummy_env import manipulation_rummy_v0 as rummy_v0


class SolverClock:
    """Time spent in the solver's searches of the meld slots 0/1
    (:func:`rummy_env._candidates.solver_play`, the solver called as ``plan_play`` would
    call it), so the environment's own overhead can be told apart from the solver's.

    It wraps ``_candidates.slot_search``, the name the environment reads on each miss of
    its position cache, not ``solver_play``: when the module is compiled ahead of time
    (mypyc) its calls to its own functions are direct and would not see the patch."""

    def __init__(self) -> None:
        from rummy_env import _candidates
        self.seconds = 0.0
        self.calls = 0
        real = _candidates.slot_search

        def timed(*a: object, **k: object) -> object:
            t0 = CLOCK[0]()
            try:
                return real(*a, **k)  # type: ignore[arg-type]
            finally:
                self.seconds += CLOCK[0]() - t0
                self.calls += 1
        _candidates.slot_search = timed  # type: ignore[assignment]


def ours_loop(players: int, auto_forced: bool, **kwargs: Any) -> Callable[[], int]:
    """A function that plays one random game through the AEC API and returns the agent
    steps it took (the same sequence of seeds on every run)."""
    env = rummy_v0.raw_env(players=players, auto_forced=auto_forced, **kwargs)
    rng = random.Random(0)
    games = [0]

    def one() -> int:
        games[0] += 1
        env.reset(seed=games[0])
        n = 0
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[rng.randrange(len(legal))]))
            n += 1
        return n
    return one


def openspiel_loop(observe: bool = True) -> Callable[[], int] | None:
    """One random gin_rummy game per call (decisions returned), or None without
    OpenSpiel; ``observe`` reads the acting player's ``observation_tensor`` each step."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(15)

    def one() -> int:
        s = game.new_initial_state()
        n = 0
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(rng.choices(actions, probs)[0])
            else:
                if observe:
                    s.observation_tensor(s.current_player())
                s.apply_action(rng.choice(s.legal_actions()))
                n += 1
        return n
    return one


#: the clock of :func:`interleaved`: wall time, or with ``--clock cpu`` this process's CPU
#: time (steadier on a machine shared with other jobs: time spent waiting for a core is not
#: counted, for either loop)
CLOCK: list[Callable[[], float]] = [time.perf_counter]


def interleaved(seconds: float, fns: list[Callable[[], int]], slices: int = 10,
                clock: SolverClock | None = None
                ) -> tuple[list[float], list[list[float]], float, float]:
    """Run each function in alternating slices until each has had ``seconds``.

    Returns ``(rates, per_slice_us, solver_s, first_s)``: the rate (units per second) of
    each, the microseconds per unit of each slice (for the median and p99), the solver
    seconds spent inside the first function's slices (``clock``) and those slices' time."""
    acc = [[0.0, 0] for _ in fns]
    per: list[list[float]] = [[] for _ in fns]
    solver = 0.0
    for _ in range(slices):
        for k, (a, fn) in enumerate(zip(acc, fns, strict=True)):
            before = clock.seconds if clock is not None and k == 0 else 0.0
            now = CLOCK[0]
            t0 = now()
            n = 0
            while True:
                n += fn()
                dt = now() - t0
                if dt >= seconds / slices:
                    break
            a[0] += dt
            a[1] += n
            per[k].append(dt / max(n, 1) * 1e6)
            if clock is not None and k == 0:
                solver += clock.seconds - before
    return [n / t for t, n in acc], per, solver, acc[0][0]


def p99(values: list[float]) -> float:
    """The 99th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds per loop per round")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--auto-forced", action="store_true")
    ap.add_argument("--actions", choices=("slots", "edits"), default="slots",
                    help="our action mode: meld slots (default) or edit-level actions, "
                    "where a meld is many steps (not like for like with OpenSpiel's steps)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall time (default) or this process's CPU time")
    args = ap.parse_args()
    if args.clock == "cpu":
        CLOCK[0] = time.process_time
    clock = SolverClock()
    ours = ours_loop(args.players, args.auto_forced, actions=args.actions)
    ours()  # warm-up: imports, the solver's kernels (every figure below is warm)
    theirs = openspiel_loop(observe=True)
    bare = openspiel_loop(observe=False)
    if theirs is None or bare is None:
        print("OpenSpiel is not installed (pip install -e '.[bench]'): our figures only")
        fns = [ours]
    else:
        theirs()
        fns = [ours, theirs, bare]
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"random-play loop, warm, steps/s; ours: {args.players} players, auto_forced="
          f"{args.auto_forced}, actions={args.actions}; OpenSpiel: gin_rummy (2 players), "
          "'obs' reads observation_tensor each step as an agent does, 'bare' does not; "
          f"{args.rounds} rounds of ~{args.seconds:g} s ({args.clock} clock) per loop; "
          f"load average {load}")
    print("one step = one decision of the player to act: ours env.last() (observation "
          "and action mask) + a uniformly random legal action + env.step(); OpenSpiel "
          "['OS obs'] observation_tensor + legal_actions + random.choice + apply_action, "
          "chance nodes sampled (timed, not counted as steps)")
    print("'ours-solver' is our rate with the solver's searches of meld slots 0/1 "
          "taken out (the environment's own overhead)")
    from rummy import accel
    print(f"our modules: {accel.status()} (RUMMY_ACCEL=0: pure Python; "
          "python -m rummy.accel build: compiled)")
    print(f"{'round':>6} {'ours':>9} {'OS obs':>9} {'ratio':>6} {'OS bare':>9} {'ratio':>6} "
          f"{'solver':>7} {'ours-solver':>11} {'ratio':>6}")
    rows: list[list[float]] = []
    slices: list[list[float]] = [[] for _ in fns]
    for r in range(args.rounds):
        rates, per, solver_s, ours_s = interleaved(args.seconds, fns, clock=clock)
        for k, us in enumerate(per):
            slices[k].extend(us)
        share = min(solver_s / ours_s, 0.99)
        rates.append(rates[0] / (1 - share))
        rates.append(share)
        rows.append(rates)
        if len(fns) == 3:
            print(f"{r + 1:>6} {rates[0]:>9,.0f} {rates[1]:>9,.0f} "
                  f"{rates[0] / rates[1]:>5.2f}x {rates[2]:>9,.0f} "
                  f"{rates[0] / rates[2]:>5.2f}x {share:>6.0%} {rates[3]:>11,.0f} "
                  f"{rates[3] / rates[1]:>5.2f}x")
        else:
            print(f"{r + 1:>6} {rates[0]:>9,.0f} {'':>9} {'':>6} {'':>9} {'':>6} "
                  f"{share:>6.0%} {rates[1]:>11,.0f}")
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    if len(fns) == 3:
        print(f"median {med[0]:>9,.0f} {med[1]:>9,.0f} {med[0] / med[1]:>5.2f}x "
              f"{med[2]:>9,.0f} {med[0] / med[2]:>5.2f}x {med[4]:>6.0%} {med[3]:>11,.0f} "
              f"{med[3] / med[1]:>5.2f}x")
    else:
        print(f"median {med[0]:>9,.0f} {'':>9} {'':>6} {'':>9} {'':>6} {med[2]:>6.0%} "
              f"{med[1]:>11,.0f}")
    names = ["ours", "OS obs", "OS bare"][:len(fns)]
    print("microseconds per step over every slice: " + "; ".join(
        f"{name} median {statistics.median(us):,.1f}, p99 {p99(us):,.1f}"
        for name, us in zip(names, slices, strict=True)))


if __name__ == "__main__":
    main()
