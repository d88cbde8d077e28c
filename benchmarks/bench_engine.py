"""Engine benchmarks (issue 2): meld-action validation, engine steps/s, games/s.

Prints, in one run, our figures beside the reference measured in the same run (the
straightforward Counter-based check ``check_action_slow``) and the published anchors:

* validation of a whole-table meld action on 30-, 60- and 90-card tables (median and p99,
  microseconds), once with one meld changed (a card laid off) and once with every meld of
  the new table changed (written in another order); target <= 15 us at 60 cards with every
  meld changed (issue 10);
* engine steps per second with ``random`` bots (one step = one command decided and its
  events evolved; anchors: OpenSpiel's C++ gin rummy from Python ~63,000 steps/s, RLCard's
  pure-Python gin rummy 13,000-16,000; target >= 60,000), without and with the bots' time;
* full 4-player games per second with ``basic`` bots.

Usage: python benchmarks/bench_engine.py [--quick]
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from rummy.bots import make_bot
from rummy.cards import JOKER, TABLE_JOKER_BASE, new_deck
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.melds import VALID_MELDS, check_action, check_action_slow
from rummy.simulate import game_seed, play_game
from rummy.state import GAME_OVER
from rummy.views import view


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


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    bench_validation(quick)
    bench_steps(quick)
    bench_games(quick)
