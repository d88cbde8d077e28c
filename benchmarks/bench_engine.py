"""Engine benchmarks: meld-action validation, engine steps/s, games/s.

Prints, in one run, our figures beside the reference measured in the same run (the
straightforward Counter-based check ``check_action_slow``) and the published anchors:

* validation of a whole-table meld action on 30-, 60- and 90-card tables (median and p99,
  microseconds), once with one meld changed (a card laid off) and once with every meld of
  the new table changed (written in another order); target <= 15 us at 60 cards with every
  meld changed;
* engine steps per second with ``random`` bots (one step = one command decided and its
  events evolved; anchors: OpenSpiel's C++ gin rummy from Python ~63,000 steps/s, RLCard's
  pure-Python gin rummy 13,000-16,000; target >= 60,000), without and with the bots' time;
* full 4-player games per second with ``basic`` bots;
* engine vs OpenSpiel, the two engines interleaved in rounds: (a) the full
  random-play loop in decisions/s (ours: the ``random`` bot chooses from
  ``view(state, seat)``, then ``step``; OpenSpiel: ``gin_rummy``, ``legal_actions`` ->
  ``random.choice`` -> ``apply_action``, chance nodes sampled from ``chance_outcomes``);
  (b) the engine step alone, replaying recorded commands through ``step`` and recorded
  action lists through ``apply_action`` on fresh states. Targets: (a) >= 1.5x, (b) >= 1.0x.
  Needs the ``bench`` extra (``pip install -e '.[bench]'``, OpenSpiel); without it these
  rows are skipped with a message.

Usage: python benchmarks/bench_engine.py [--quick] [--only openspiel|step|validation|steps|games]
       [--rounds N] [--seconds S]   (``--only step``: the OpenSpiel comparison (b) alone)
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

# this tree's rummy/, not whichever one the environment installed (a worktree's venv may
# point at another checkout)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rummy.bots import make_bot  # noqa: E402
from rummy.cards import JOKER, TABLE_JOKER_BASE, new_deck  # noqa: E402
from rummy.commands import CreateGame  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.melds import VALID_MELDS, check_action, check_action_slow  # noqa: E402
from rummy.simulate import game_seed, play_game  # noqa: E402
from rummy.state import GAME_OVER  # noqa: E402
from rummy.views import view  # noqa: E402


def table_of(size: int, rng: random.Random):
    """A legal two-deck table of about ``size`` cards (jokers included), a hand, and a legal
    meld action on it (the table plus one card laid off, plus a new meld when possible)."""
    while True:
        pool = list(new_deck(2))
        rng.shuffle(pool)
        masks = list(VALID_MELDS)
        rng.shuffle(masks)
        table, n = [], 0
        for m in masks:
            cards = [i for i in range(52) if m >> i & 1]
            if n + len(cards) > size or not all(c in pool for c in cards):
                continue
            meld = []
            for c in cards:
                pool.remove(c)
                if JOKER in pool and rng.random() < 0.05:
                    pool.remove(JOKER)
                    meld.append(TABLE_JOKER_BASE + c)
                else:
                    meld.append(c)
            table.append(tuple(meld))
            n += len(cards)
            if n >= size - 2:
                break
        hand = pool[:14]
        for i, meld in enumerate(table):  # lay one hand card off
            mm = sum(1 << (c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c) for c in meld)
            for c in hand:
                if c < 52 and VALID_MELDS.get(mm + (1 << c)) == len(meld) + 1:
                    new = list(table)
                    new[i] = meld + (c,)
                    new.reverse()
                    return tuple(table), tuple(sorted(hand)), tuple(new)


def timed(fn, args, repeat: int) -> list[float]:
    out = []
    perf = time.perf_counter
    for _ in range(repeat):
        t = perf()
        fn(*args)
        out.append(perf() - t)
    return out


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def every_meld_changed(table, hand, new):
    """The same action with every meld of the new table written in another card order, so
    no meld stands unchanged (the validator's shortcut for unchanged melds never applies)."""
    return table, hand, tuple(tuple(reversed(m)) if len(m) > 1 else m for m in new)


def bench_validation(quick: bool) -> None:
    rng = random.Random(42)
    print("meld-action validation (whole table, two decks; us per check)")
    print("ours: check_action as anyone calls it; engine: with table_is_legal=True, as the "
          "engine calls it (unchanged melds skipped)")
    print(f"{'table':>7} {'cards':>6} {'ours p50':>9} {'ours p99':>9} {'engine p50':>10} "
          f"{'ref p50':>8} {'ref p99':>8} {'speed-up':>8}   target: <= 15 us at 60 cards, "
          "every meld changed")
    for size, changed in ((30, False), (60, False), (90, False), (30, True), (60, True),
                          (90, True)):
        positions = [table_of(size, rng) for _ in range(40 if quick else 200)]
        if changed:
            positions = [every_meld_changed(*p) for p in positions]
        ours, ref, engine = [], [], []
        for table, hand, new in positions:
            assert check_action(table, hand, new) == check_action_slow(table, hand, new)
            ours += timed(check_action, (table, hand, new), 20)
            engine += timed(lambda t, h, n: check_action(t, h, n, table_is_legal=True),
                            (table, hand, new), 20)
            ref += timed(check_action_slow, (table, hand, new), 20)
        cards = statistics.mean(sum(len(m) for m in p[2]) for p in positions)
        o50, o99 = statistics.median(ours) * 1e6, pct(ours, 0.99) * 1e6
        r50, r99 = statistics.median(ref) * 1e6, pct(ref, 0.99) * 1e6
        e50 = statistics.median(engine) * 1e6
        print(f"{size:>7} {cards:>6.1f} {o50:>9.1f} {o99:>9.1f} {e50:>10.1f} {r50:>8.1f} "
              f"{r99:>8.1f} "
              f"{r50 / o50:>7.1f}x   "
              + ("every meld changed" if changed else "one meld changed (one card laid off)"))


def record_commands(games: int, players: int = 4):
    """Commands of ``games`` random-bot games, with the state before each."""
    runs = []
    for g in range(games):
        seed = game_seed(99, g)
        bots = [make_bot("random", seed + i) for i in range(players)]
        s, _ = step(None, CreateGame(players, seed))
        start = s
        cmds = []
        while s.phase != GAME_OVER:
            c = bots[s.turn].act(view(s, s.turn))
            cmds.append(c)
            s, _ = step(s, c)
        runs.append((start, cmds))
    return runs


def bench_steps(quick: bool) -> None:
    runs = record_commands(10 if quick else 40)
    total = sum(len(c) for _, c in runs)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for start, cmds in runs:
            s = start
            for c in cmds:
                s, _ = step(s, c)
        best = max(best, total / (time.perf_counter() - t))
    # with the random bots choosing (view + act + step)
    t = time.perf_counter()
    steps = 0
    for g in range(10 if quick else 40):
        steps += play_game(["random"] * 4, game_seed(99, g)).steps
    with_bots = steps / (time.perf_counter() - t)
    print(f"\nengine steps/s, random bots, 4 players ({total} steps): decide+evolve "
          f"{best:,.0f}/s; with the bots' own time {with_bots:,.0f}/s")
    print("  anchors: OpenSpiel C++ gin rummy from Python ~63,000/s; RLCard pure-Python gin "
          "rummy 13,000-16,000/s; target >= 60,000/s")


def bench_games(quick: bool) -> None:
    n = 20 if quick else 100
    t = time.perf_counter()
    rounds = 0
    for g in range(n):
        rounds += play_game(["basic"] * 4, game_seed(5, g)).rounds
    dt = time.perf_counter() - t
    print(f"\nfull 4-player games/s with basic bots: {n / dt:.1f} games/s "
          f"({rounds / n:.1f} rounds per game, one process)")


# ----------------------------------------------------------------- engine vs OpenSpiel

def _our_random_game(seed: int, players: int) -> int:
    """One game of ``random`` bots through the full loop; returns its decisions (commands
    sent by seats; ``CreateGame`` and the automatic events are not decisions)."""
    bots = [make_bot("random", seed * 8 + i) for i in range(players)]
    s, _ = step(None, CreateGame(players, seed))
    n = 0
    while s.phase != GAME_OVER:
        seat = s.turn
        s, _ = step(s, bots[seat].act(view(s, seat)))
        n += 1
    return n


def _os_random_game(game, rng: random.Random) -> tuple[int, int]:
    """One OpenSpiel game with uniformly random players; chance nodes are sampled from
    ``chance_outcomes``. Returns ``(decisions, chance actions)``: decisions are player
    actions only; the chance actions' time is included in the loop's time."""
    s = game.new_initial_state()
    n = c = 0
    choice, choices = rng.choice, rng.choices
    while not s.is_terminal():
        if s.is_chance_node():
            actions, probs = zip(*s.chance_outcomes(), strict=True)
            s.apply_action(choices(actions, probs)[0])
            c += 1
        else:
            s.apply_action(choice(s.legal_actions()))
            n += 1
    return n, c


def _os_record(game, rng: random.Random) -> tuple[list[int], int]:
    """The action list of one random OpenSpiel game (chance actions included) and its
    number of decisions."""
    s = game.new_initial_state()
    actions: list[int] = []
    n = 0
    while not s.is_terminal():
        if s.is_chance_node():
            acts, probs = zip(*s.chance_outcomes(), strict=True)
            a = rng.choices(acts, probs)[0]
        else:
            a = rng.choice(s.legal_actions())
            n += 1
        actions.append(a)
        s.apply_action(a)
    return actions, n


def _interleaved(seconds: float, ours, theirs, slices: int = 10, *more) -> tuple[
        tuple[float, int, int], ...]:
    """Run ``ours()``, ``theirs()`` (and any ``more``; each returns the units it did) in
    alternating slices of ``seconds / slices`` of **CPU time** each (``process_time``: the
    other processes of a loaded machine do not count) until each has had ``seconds``, so a
    change of the machine's load hits all alike. Returns ``(rate, units, calls)`` for each,
    the rate per CPU-second."""
    clock = time.process_time
    fns = (ours, theirs) + more
    acc = [[0.0, 0, 0] for _ in fns]
    slice_s = seconds / slices
    for _ in range(slices):
        for a, fn in zip(acc, fns, strict=True):
            t0 = clock()
            while True:
                a[1] += fn()
                a[2] += 1
                dt = clock() - t0
                if dt >= slice_s:
                    a[0] += dt
                    break
    return tuple((a[1] / a[0], a[1], a[2]) for a in acc)


def _summary(rates: list[float]) -> tuple[float, float]:
    """Median rate and the p99 round (the rate of the slowest 1% of rounds: with a few
    rounds, the slowest)."""
    return statistics.median(rates), sorted(rates)[int(0.01 * len(rates))]


def bench_openspiel(quick: bool, rounds: int, seconds: float) -> None:
    print(f"\nengine vs OpenSpiel gin_rummy, {rounds} rounds of ~"
          f"{seconds:g} CPU-s per engine, interleaved in slices within each round (rates per "
          f"CPU-second; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}); "
          "decisions = "
          "commands a seat sends (ours) / player actions (OpenSpiel; chance actions not "
          "counted, their time included)")
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        print("  SKIPPED: OpenSpiel is not installed (pip install -e '.[bench]' or "
              "pip install open_spiel); the OpenSpiel rows need it")
        return
    game = pyspiel.load_game("gin_rummy")
    players = 4
    # (a) the full random-play loop
    ours_r: list[float] = []
    os_r: list[float] = []
    our_dec = our_games = os_dec = os_games = 0
    count = {"game": 0, "chance": 0}
    rng = random.Random(15)

    def ours_one() -> int:  # the same sequence of games on every run
        count["game"] += 1
        return _our_random_game(game_seed(15, count["game"]), players)

    def os_one() -> int:
        n, c = _os_random_game(game, rng)
        count["chance"] += c
        return n

    print(f"(a) full random-play loop, decisions/s; ours: {players} players, random bots")
    print(f"{'round':>7} {'ours':>10} {'OpenSpiel':>10} {'ratio':>6}")
    for r in range(rounds):
        a, b = _interleaved(seconds, ours_one, os_one)
        ours_r.append(a[0])
        os_r.append(b[0])
        our_dec += a[1]
        our_games += a[2]
        os_dec += b[1]
        os_games += b[2]
        print(f"{r + 1:>7} {ours_r[-1]:>10,.0f} {os_r[-1]:>10,.0f} {ours_r[-1] / os_r[-1]:>5.2f}x")
    om, op = _summary(ours_r)
    sm, sp = _summary(os_r)
    ratio_a = om / sm
    print(f" median {om:>10,.0f} {sm:>10,.0f} {ratio_a:>5.2f}x   target >= 1.5x "
          f"({'met' if ratio_a >= 1.5 else 'NOT met'})")
    print(f"    p99 {op:>10,.0f} {sp:>10,.0f} {op / sp:>5.2f}x   (slowest round of each; "
          "ratio of the two)")
    print(f"  decisions per game (the games differ): ours {our_dec / our_games:,.1f} "
          f"({players}-player Manipulation Rummy to the target score); OpenSpiel "
          f"{os_dec / os_games:,.1f} (+{count['chance'] / os_games:,.1f} chance actions; "
          "2-player gin rummy, one hand)")
    bench_openspiel_step(quick, rounds, seconds, game, rng)


def _load_openspiel(rounds: int, seconds: float, what: str):
    """The OpenSpiel ``gin_rummy`` game, or ``None`` (with a message) without OpenSpiel."""
    print(f"\nengine vs OpenSpiel gin_rummy, {what}: {rounds} rounds of ~"
          f"{seconds:g} CPU-s per engine, interleaved in slices within each round (rates per "
          f"CPU-second; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        print("  SKIPPED: OpenSpiel is not installed (pip install -e '.[bench]' or "
              "pip install open_spiel); the OpenSpiel rows need it")
        return None
    return pyspiel.load_game("gin_rummy")


def bench_openspiel_step(quick: bool, rounds: int, seconds: float, game=None,
                         rng: random.Random | None = None) -> None:
    """(b) the engine step alone: recorded commands / action lists replayed (``--only
    step`` runs this part alone)."""
    if game is None:
        game = _load_openspiel(rounds, seconds, "engine step alone")
        if game is None:
            return
    if rng is None:
        rng = random.Random(15)
    players = 4
    runs = record_commands(10 if quick else 30, players)
    os_runs = [_os_record(game, rng) for _ in range(100 if quick else 300)]
    ours_steps = sum(len(c) for _, c in runs)
    os_calls = sum(len(a) for a, _ in os_runs)
    os_decs = sum(n for _, n in os_runs)

    nxt = [0, 0]

    def replay_ours() -> int:  # one recorded game per call, in turn
        start, cmds = runs[nxt[0] % len(runs)]
        nxt[0] += 1
        s = start
        for c in cmds:
            s, _ = step(s, c)
        return len(cmds)

    new_state = game.new_initial_state
    start = new_state()  # cloned for each replay: like for like with our start states

    def replay_os() -> int:  # from a clone of one start state, as ours
        actions, _ = os_runs[nxt[1] % len(os_runs)]
        nxt[1] += 1
        s = start.clone()
        apply = s.apply_action
        for a in actions:
            apply(a)
        return len(actions)

    def replay_os_new() -> int:  # each game from new_initial_state()
        actions, _ = os_runs[nxt[1] % len(os_runs)]
        nxt[1] += 1
        s = new_state()
        apply = s.apply_action
        for a in actions:
            apply(a)
        return len(actions)

    ours_s: list[float] = []
    os_s: list[float] = []
    os_new: list[float] = []
    print("(b) engine step alone, CPU time: ours step() per command (recorded commands from "
          "a recorded start state, no bot); OpenSpiel apply_action() per call (recorded "
          "actions, chance actions included) like for like from a clone() of one start "
          "state, and from new_initial_state() (its cost inside OpenSpiel's time)")
    print(f"{'round':>7} {'ours':>10} {'OS clone':>10} {'ratio':>6} {'OS new':>10} {'ratio':>6}")
    for r in range(rounds):
        a, b, c = _interleaved(seconds, replay_ours, replay_os, 10, replay_os_new)
        ours_s.append(a[0])
        os_s.append(b[0])
        os_new.append(c[0])
        print(f"{r + 1:>7} {ours_s[-1]:>10,.0f} {os_s[-1]:>10,.0f} "
              f"{ours_s[-1] / os_s[-1]:>5.2f}x {os_new[-1]:>10,.0f} "
              f"{ours_s[-1] / os_new[-1]:>5.2f}x")
    om, op = _summary(ours_s)
    sm, sp = _summary(os_s)
    nm, np_ = _summary(os_new)
    ratio_b = om / sm
    print(f" median {om:>10,.0f} {sm:>10,.0f} {ratio_b:>5.2f}x {nm:>10,.0f} {om / nm:>5.2f}x")
    print(f"    p99 {op:>10,.0f} {sp:>10,.0f} {op / sp:>5.2f}x {np_:>10,.0f} {op / np_:>5.2f}x   "
          "(slowest round of each; ratio of the two)")
    print(f"  like for like (both from a cloned start state): {ratio_b:.2f}x, target >= 1.0x "
          f"({'met' if ratio_b >= 1.0 else 'NOT met'}); with OpenSpiel's "
          f"new_initial_state() in its time: {om / nm:.2f}x")
    print(f"  OpenSpiel counted per decision instead (its chance calls' time included): "
          f"{sm / (os_calls / os_decs):,.0f}/s, ratio {om / (sm * os_decs / os_calls):.2f}x; "
          f"{os_calls / len(os_runs):.1f} apply_action calls per game, "
          f"{os_decs / len(os_runs):.1f} of them decisions; ours "
          f"{ours_steps / len(runs):.1f} steps per game")


if __name__ == "__main__":
    args = sys.argv[1:]
    quick = "--quick" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    n_rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else (3 if quick else 7)
    secs = float(args[args.index("--seconds") + 1]) if "--seconds" in args else \
        (0.5 if quick else 1.0)
    if only in (None, "validation"):
        bench_validation(quick)
    if only in (None, "steps"):
        bench_steps(quick)
    if only in (None, "games"):
        bench_games(quick)
    if only in (None, "openspiel"):
        bench_openspiel(quick, n_rounds, secs)
    if only == "step":
        bench_openspiel_step(quick, n_rounds, secs)
