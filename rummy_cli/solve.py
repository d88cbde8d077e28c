"""``rummy solve``: the best meld action (R5) for a position given in card notation (R1.4).

This module does I/O (argparse, stdin, files, printing); the search itself is the pure
:func:`rummy.solver.best_play`. :mod:`rummy_cli.main` registers it with :func:`add_parser`.

Examples::

    rummy solve --table "5S 6S 7S | 8H 8D 8C" --hand "8S KD"
    rummy solve --table "5S 6S *7S" --hand "7S KD QD" --explain
    echo '{"table": [["5S","6S","7S"]], "hand": ["8S","KD"]}' | rummy solve --input -
    rummy solve --input tests/conformance/cases/best_play.jsonl --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from rummy.cards import JOKER, TABLE_JOKER_BASE, format_card, format_cards, parse_cards
from rummy.conformance import case_opening, case_rules
from rummy.errors import NotationError, RummyError
from rummy.melds import Table, canonical_table, format_table, parse_table, table_text
from rummy.solver import Play, best_play, compiled, solve
from rummy_cli.options import add_rules_option, rule_set


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``solve`` on an argparse subparsers object; returns the parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "solve", help="find the best meld action for a table and a hand",
        description="Find the meld action (docs/rules.md §5) that adds the most points (R1.5) of "
        "hand cards to the table, with every rearrangement of the table and the joker rules "
        "R5.6-R5.9. Cards in the notation of R1.4: 7S, TD, * (hand joker), *7S (table joker "
        "declared 7S). Prints the value and the whole new table. The table need not be legal "
        "(any multiset of cards in melds); the new table always is.")
    p.add_argument("--table", default="", help='melds separated by "|", e.g. "5S 6S 7S | 8H 8D 8C"')
    p.add_argument("--hand", default="", help='hand cards, e.g. "8S KD *"')
    p.add_argument("--input", metavar="FILE",
                   help='JSON lines, one position per line with "table" and "hand" '
                   '(a conformance case file works); "-" reads stdin')
    p.add_argument("--keep", default="", help="hand cards that must stay in the hand")
    p.add_argument("--objective", choices=("points", "cards"), default="points",
                   help="maximise points added (default) or cards added")
    p.add_argument("--node-limit", type=int, default=None, metavar="N",
                   help="stop after N search states; the answer is then flagged not proven "
                        "optimal (and 'no play found' does not prove that there is none)")
    p.add_argument("--backend", choices=("auto", "pure", "compiled"), default="auto",
                   help="search backend: auto (compiled when numba is installed, default), "
                        "pure (the reference, standard library) or compiled (numba); all "
                        "give the same play")
    p.add_argument("--explain", action="store_true",
                   help="show every meld of the new table and where each hand card went")
    p.add_argument("--json", action="store_true", help="print one JSON object per position")
    add_rules_option(p, example="ace_high=false", help_text="rule variants of docs/rules.md "
                     "§11 the play must obey, e.g. joker_moves=locked (a case of --input "
                     "that carries its own \"rules\" and \"opening\" is solved under them)")
    p.add_argument("--opening", action="store_true",
                   help="the play is the seat's opening meld (R5.5 and the opening variants)")
    p.set_defaults(func=run)
    return p


def _positions(args: argparse.Namespace) -> list[tuple[Table, tuple[int, ...], dict[str, Any]]]:
    if args.input is None:
        return [(parse_table(args.table), parse_cards(args.hand), {})]
    stream = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    out = []
    with stream:
        for n, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise NotationError(f"line {n}: not JSON ({e.msg})") from None
            if not isinstance(obj, dict) or "hand" not in obj:
                raise NotationError(f'line {n}: expected an object with "table" and "hand"')
            try:
                out.append((parse_table(obj.get("table") or []), parse_cards(obj["hand"]),
                            obj))
            except (TypeError, AttributeError):
                raise NotationError(f'line {n}: "table" and "hand" must be card notation '
                                    'strings (or lists of them)') from None
    return out


def explain(table: Table, hand: tuple[int, ...], play: Play) -> list[str]:
    """Human-readable lines: each meld of the new table, marked ``kept`` (on the table
    before, unchanged), ``new`` (only hand cards) or ``changed``; hand cards in ``[ ]``;
    re-declared jokers (R5.8) listed at the end."""
    old = Counter(canonical_table(table))
    from_hand = Counter(c for c in play.cards if c != JOKER)
    hand_jokers = play.cards.count(JOKER)
    jokers_before = Counter(c for m in table for c in m if c >= TABLE_JOKER_BASE)
    lines = []
    for meld in play.table:
        if old[meld] > 0:
            old[meld] -= 1
            lines.append(f"  kept     {' '.join(format_cards(meld))}")
            jokers_before.subtract(c for c in meld if c >= TABLE_JOKER_BASE)
            continue
        tokens = []
        for c in meld:
            if c < JOKER and from_hand[c] > 0:
                from_hand[c] -= 1
                tokens.append(f"[{format_card(c)}]")
            elif c >= TABLE_JOKER_BASE and jokers_before[c] > 0:
                jokers_before[c] -= 1
                tokens.append(format_card(c))
            elif c >= TABLE_JOKER_BASE and hand_jokers > 0:
                hand_jokers -= 1
                tokens.append(f"[{format_card(c)}]")
            else:
                tokens.append(format_card(c))
        real = [t for t in tokens if not t.startswith("[")]
        kind = "new" if not real else "changed"
        lines.append(f"  {kind:<8} {' '.join(tokens)}")
    redeclared = [format_card(c) for c, k in jokers_before.items() for _ in range(max(k, 0))]
    if redeclared:
        lines.append(f"  jokers re-declared (R5.8): {' '.join(sorted(redeclared))}")
    lines.append("  [ ] = card from the hand")
    return lines


def run(args: argparse.Namespace) -> int:
    """Run ``rummy solve``; returns the exit code (0 ok, 2 bad input)."""
    try:
        if args.input is None and not args.hand.strip():
            raise NotationError("give the hand with --hand (and the table with --table), "
                                "or positions with --input")
        positions = _positions(args)
        keep = parse_cards(args.keep)
    except (NotationError, OSError) as e:
        print(f"rummy solve: {e}", file=sys.stderr)
        return 2
    if args.backend != "pure" and compiled.usable():
        # load numba's cached machine code (or compile it) before anything is timed
        best_play((), (0, 1, 2), backend="compiled")
    for table, hand, meta in positions:
        t0 = time.perf_counter()
        try:
            rules = (case_rules(meta) if "rules" in meta else rule_set(args.rules))
            opening = case_opening(meta) if "table" in meta else args.opening or not table
            play, proven = solve(table, hand, keep=keep, objective=args.objective,
                                 node_limit=args.node_limit, backend=args.backend,
                                 rules=rules, opening=opening)
        except (ValueError, RummyError) as e:
            print(f"rummy solve: {e}", file=sys.stderr)
            return 2
        ms = (time.perf_counter() - t0) * 1e3
        if args.json:
            out: dict[str, Any] = {
                "points": play.points if play else 0,
                "cards": format_cards(play.cards) if play else [],
                "table": format_table(play.table) if play else None,
                "optimal": proven,
                "ms": round(ms, 3)}
            if "id" in meta:
                out["id"] = meta["id"]
            if "best_points" in meta:
                out["expected"] = meta["best_points"]
            print(json.dumps(out))
            continue
        label = f"{meta['id']}: " if "id" in meta else ""
        if play is None and not proven:
            print(f"{label}no play found within --node-limit {args.node_limit} (the search "
                  f"stopped early: a play may exist); value 0  [{ms:.2f} ms]")
            continue
        if play is None:
            why = " with the --keep cards kept" if keep else ""
            print(f"{label}no legal meld action{why} (R5.1: at least one card must come from "
                  f"the hand); value 0  [{ms:.2f} ms]")
            continue
        flag = "" if play.optimal else "  (node limit reached: not proven optimal)"
        print(f"{label}value {play.points} points, {len(play.cards)} card(s): "
              f"{' '.join(format_cards(play.cards))}  [{ms:.2f} ms]{flag}")
        print(f"new table: {table_text(play.table)}")
        if args.explain:
            print("\n".join(explain(table, hand, play)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m rummy_cli.solve``)."""
    parser = argparse.ArgumentParser(prog="rummy")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
