"""``rummy bot check MODULE:CLASS``: play a tester's bot against the built-in bots and check
the bot contract (legal commands only, decisions from the view alone: docs/bots.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DESCRIPTION = """\
Play a bot (package.module:Class, an entry point of the group rummy.bots, or a built-in
name) against built-in bots for a few games and check the bot contract of docs/bots.md:

  * every command it sends is legal (the engine's IllegalMoveError names the rule broken);
  * its decisions depend on its view only (I3): copies of the bot decide on the same view
    while the state beside it has the other hands and the stock order re-dealt, and must
    send the same command; they must also agree on the true state (a bot is deterministic
    given its seed and its views).

Exit status: 0 when the bot keeps the contract, 1 when it does not, 2 for bad options or a
bot that cannot be imported."""


def cmd_bot_check(args: argparse.Namespace) -> int:
    """Run :func:`rummy.botcheck.check_bot_contract` and print its findings."""
    from rummy.botcheck import check_bot_contract
    from rummy_cli.options import bot_names

    try:
        opponents = bot_names(args.against, "--against") or []
        result = check_bot_contract(args.bot, games=args.games, seed=args.seed,
                                    players=args.players, opponents=opponents)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"bot": result.bot, "ok": result.ok, "games": result.games,
                          "decisions": result.decisions, "illegal": result.illegal,
                          "peeks": result.peeks,
                          "nondeterministic": result.nondeterministic,
                          "crashes": result.crashes}, indent=2))
    else:
        print(f"bot {result.bot}: {result.games} game(s), {result.decisions} decisions checked")
        for title, lines in (("illegal commands", result.illegal),
                             ("decisions that depend on hidden information (I3)", result.peeks),
                             ("decisions that differ for the same view and seed",
                              result.nondeterministic),
                             ("exceptions raised by the bot", result.crashes)):
            if lines:
                print(f"FAIL {title}:")
                for line in lines:
                    print(f"  {line}")
        print("OK: the bot keeps the contract" if result.ok
              else "REFUSED: the bot breaks the contract (docs/bots.md)")
    return 0 if result.ok else 1


def add_parser(sub: Any) -> None:
    """Register ``rummy bot check``."""
    p = sub.add_parser("bot", help="testers' own bots: check one keeps the bot contract")
    bsub = p.add_subparsers(dest="bot_command", metavar="SUBCOMMAND", required=True)
    c = bsub.add_parser("check", help="play a bot for a few games and check its commands are "
                        "legal and its decisions use its view only", description=DESCRIPTION,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("bot", metavar="MODULE:CLASS",
                   help="the bot: package.module:Class, an entry point name or a built-in")
    c.add_argument("--games", type=int, default=4, help="games to play (default 4)")
    c.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    c.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    c.add_argument("--against", default="basic,random",
                   help="comma-separated opponents, cycled (default basic,random)")
    c.add_argument("--json", action="store_true", help="print the findings as JSON")
    c.set_defaults(func=cmd_bot_check)
