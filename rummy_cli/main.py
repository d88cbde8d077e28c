"""The ``rummy`` command line (an adapter: argument parsing, processes, files, printing).

Subcommands of the core: ``simulate``, ``replay``, ``conformance``, ``solve``. Subcommands
of the adapters (``serve``, ``export``, ``worker``, ``batch``) are registered lazily when
their packages (and extras) are installed, so ``rummy`` never needs grpc/redis/celery to run
the core commands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rummy_cli.outputs import write_output

EPILOG_SIMULATE = """\
examples:
  rummy simulate --games 200 --players 4 --seed 7
  rummy simulate --games 2000 --players 4 --bots strategic,greedy,basic,random --jobs 2
  rummy simulate --games 200 --players 4 --bots basic,random    (two bots on alternate seats)
  rummy simulate --games 10 --players 3 --events-dir out/ --rules knock_threshold=7
  rummy simulate --replay-game 17 --games 200 --players 4 --seed 7 --events-dir out/

Game i of a run is played with a seed derived from (--seed, i), with the bot line-up
rotated by i seats (unless --no-rotate), so the report does not depend on --jobs and any
single game can be re-run alone with --replay-game i.
"""


def usage_error(message: str) -> SystemExit:
    """Print ``message`` (an ``error: ...`` line) and return the exit of a usage error: every
    ``rummy`` subcommand exits 0 on success, 1 on a failure, 2 on bad arguments."""
    print(message, file=sys.stderr)
    return SystemExit(2)


def _parse_rules(pairs: Sequence[str]) -> Any:
    """The rule set of ``--rules`` (:func:`rummy_cli.options.rule_set`).

    Raises:
        SystemExit: code 2 with an ``error: ...`` line: a bad pair, a variant given twice,
            an unknown variant or a bad value (R11).
    """
    from rummy_cli.options import rule_set
    try:
        return rule_set(pairs)
    except ValueError as e:
        raise usage_error(f"error: {e}") from None


def _lineup(bots: str | None, players: int) -> list[str]:
    """The seat line-up of ``--bots`` (``None``: the default line-up), cycled over
    ``players`` seats (:func:`rummy.simulate.parse_lineup`).

    Raises:
        SystemExit: code 2 with an ``error: ...`` line: an empty list or name, an unknown
            bot, more bots than players.
    """
    from rummy.simulate import parse_lineup
    from rummy_cli.options import bot_names
    try:
        return list(parse_lineup(bot_names(bots), players))
    except ValueError as e:
        raise usage_error(f"error: {e}") from None


def _output_check(*paths: str | None) -> None:
    """Check output files before the work (:func:`rummy_cli.outputs.output_problem`).

    Raises:
        SystemExit: code 2 with ``error: cannot write X: ...``.
    """
    from rummy_cli.outputs import output_problem
    problem = output_problem(*paths)
    if problem:
        raise usage_error(f"error: {problem}")


def _chunk(args: tuple[list[str], int, int, int, Any, bool, str | None]) -> dict[str, Any]:
    """Worker-process body: :func:`rummy.simulate.play_range` over games [start, stop),
    writing each game's events when asked; returns the aggregate as a dict."""
    from rummy.events import dumps
    from rummy.simulate import GameResult, play_range
    bots, seed, start, stop, rules, rotate, events_dir = args

    def write_events(i: int, r: GameResult, _seconds: float) -> None:
        assert events_dir is not None
        with open(os.path.join(events_dir, f"game-{i:06d}.jsonl"), "w",
                  encoding="utf-8") as f:
            f.writelines(dumps(e) + "\n" for e in r.events)

    agg = play_range(bots, seed, start, stop, rules, rotate,
                     record=None if events_dir is None else (lambda _i: True),
                     on_game=None if events_dir is None else write_events,
                     commit=events_dir is not None)
    return agg.to_dict()


def cmd_simulate(args: argparse.Namespace) -> int:
    """``rummy simulate``: bot-versus-bot games in local processes, then a balance report."""
    from rummy.balance import BalanceReport
    from rummy.simulate import Aggregate, merge_all
    from rummy_cli.report_format import render
    console = Console(stderr=False)
    if not 2 <= args.players <= 5:
        raise usage_error(f"error: --players must be 2..5, got {args.players} (R1.1)")
    if args.games < 1:
        raise usage_error("error: --games must be at least 1")
    if args.jobs < 0 or args.chunk_size < 0:
        raise usage_error("error: --jobs and --chunk-size must not be negative")
    if args.replay_game is not None and not 0 <= args.replay_game < args.games:
        raise usage_error(f"error: --replay-game must be a game index 0..{args.games - 1}")
    rules = _parse_rules(args.rules)
    try:
        rules.check_players(args.players)
    except ValueError as e:
        raise usage_error(f"error: {e}") from None
    bots = _lineup(args.bots, args.players)
    _output_check(args.json)
    if args.events_dir:
        try:
            os.makedirs(args.events_dir, exist_ok=True)
        except OSError as e:
            raise usage_error(f"error: cannot create --events-dir {args.events_dir}: "
                              f"{e.strerror}") from None
        if not os.access(args.events_dir, os.W_OK | os.X_OK):
            raise usage_error(f"error: cannot write --events-dir {args.events_dir}: "
                              "permission denied")
    if args.replay_game is not None:
        return _replay_one(args, bots, rules, console)
    jobs = max(1, args.jobs or os.cpu_count() or 1)
    size = args.chunk_size or max(1, min(25, -(-args.games // (jobs * 8))))
    chunks = [(bots, args.seed, a, min(a + size, args.games), rules, not args.no_rotate,
               args.events_dir) for a in range(0, args.games, size)]
    results: list[Aggregate] = []
    t0 = time.perf_counter()
    try:
        with Progress(TextColumn("[bold]simulating"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("games"), TimeElapsedColumn(), console=Console(stderr=True),
                      disable=args.quiet) as progress:
            task = progress.add_task("games", total=args.games)
            if jobs == 1:
                for c in chunks:
                    results.append(Aggregate.from_dict(_chunk(c)))
                    progress.advance(task, c[3] - c[2])
            else:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    futures = {pool.submit(_chunk, c): c for c in chunks}
                    for fut in as_completed(futures):
                        c = futures[fut]
                        results.append(Aggregate.from_dict(fut.result()))
                        progress.advance(task, c[3] - c[2])
    except OSError as e:  # only the --events-dir files are written during the run
        print(f"error: cannot write the events of a game to {e.filename or args.events_dir}:"
              f" {e.strerror or e}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - t0
    rep = BalanceReport.of(merge_all(args.players, results)).with_run(
        args.seed, bots, rules.changed())
    written = True
    if args.json:
        text = json.dumps(rep.to_dict(), indent=2, sort_keys=True)
        try:
            write_output(args.json, text)
        except OSError as e:  # checked up front, but the disk may fill or vanish
            written = False
            print(f"error: cannot write {args.json}: {e.strerror or e}; the report "
                  "is printed below", file=sys.stderr)
    if args.json != "-":
        render(rep, console, title=f"Balance report: {args.games} games, {args.players} "
               f"players, bots {','.join(bots)}, seed {args.seed}"
               + (f", rules {rules.changed()}" if rules.changed() else ""))
        console.print(f"[dim]{args.games / elapsed:.1f} games/s with {jobs} process(es); "
                      f"{rep.steps / elapsed:,.0f} engine steps/s[/dim]",
                      highlight=False)
    if rep.failed_games:
        n = len(rep.failed_games)
        print(f"error: {n} of {args.games} game(s) failed (a bot raised or broke a rule); "
              f"first: game {rep.failed_games[0][0]}. Re-run one alone with "
              f"--replay-game INDEX (same --seed, --bots, --players, --rules)", file=sys.stderr)
        return 1
    return 0 if written else 1


def _replay_one(args: argparse.Namespace, bots: list[str], rules: Any, console: Console) -> int:
    from rummy.events import dumps
    from rummy.simulate import game_seed, lineup_for, play_game
    i = args.replay_game
    lineup = lineup_for(bots, i, not args.no_rotate)
    try:
        r = play_game(lineup, game_seed(args.seed, i), rules, record=True, commit=True)
    except Exception as e:  # noqa: BLE001 - a bot failed: say which game and why
        from rummy.simulate import failure_text
        print(f"error: game {i} of seed {args.seed} (bots {','.join(lineup)}) failed: "
              f"{failure_text(e)}", file=sys.stderr)
        return 1
    console.print(f"game {i} of seed {args.seed}: bots {','.join(lineup)}, game seed {r.seed}, "
                  f"{r.rounds} rounds, final {list(r.final)}, winners {list(r.winners)}")
    if args.events_dir:
        path = os.path.join(args.events_dir, f"game-{i:06d}.jsonl")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(dumps(e) + "\n" for e in r.events)
        except OSError as e:
            print(f"error: cannot write {path}: {e.strerror or e}", file=sys.stderr)
            return 1
        console.print(f"events written to {path}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """``rummy replay``: rebuild a game from its event log, verify it, print it."""
    from rummy.invariants import ReplayError
    from rummy_cli.replay import page_and_analysis, page_options_used, read_log, replay_events
    if not args.redis_url and not os.path.exists(args.source):
        # a game id, not a file: read the store named by RUMMY_REDIS_URL, as `rummy export`
        args.redis_url = os.environ.get("RUMMY_REDIS_URL") or None
    if args.redis_url:
        try:
            from rummy_store import decode_events, read_all_sync
            from rummy_store.urls import redact_url
        except ImportError as e:
            raise SystemExit(f"error: replay from Redis needs the service extra ({e})") from None
        try:
            events = decode_events(read_all_sync(args.redis_url, args.source,
                                                 prefix=args.prefix))
        except Exception as e:  # noqa: BLE001 - report any store failure plainly
            raise SystemExit(f"error: cannot read game {args.source!r} from "
                             f"{redact_url(args.redis_url)}: {e}") from None
        if not events:
            raise SystemExit(f"error: no events for game {args.source!r} in "
                             f"{redact_url(args.redis_url)}")
    else:
        try:
            events = read_log(args.source)
        except ReplayError as e:
            print(f"error: corrupt event log: {e.message}", file=sys.stderr)
            return 1
        except OSError as e:
            print(f"error: cannot read {args.source}: {e.strerror}", file=sys.stderr)
            return 1
    if getattr(args, "fork", None) is not None:
        from rummy_cli.fork import run_fork
        return run_fork(events, args)
    if page_options_used(args):
        return page_and_analysis(events, args)
    # a file must hold a whole game (a truncated log is an error); a stream in the store
    # may be a game in progress
    incomplete = args.allow_incomplete or bool(args.redis_url)
    return replay_events(events, step=args.step, at=args.at, allow_incomplete=incomplete)


def cmd_conformance(args: argparse.Namespace) -> int:
    """``rummy conformance FILE...``: run shared-format cases; non-zero exit on failure.

    Every file must hold at least one case; every case needs a non-empty string ``id``,
    unique within the run (a second case with an id is a failure naming both places:
    with two cases under one id, a report of that id is ambiguous). A malformed line,
    case or file is a ``FAIL`` line naming ``FILE:LINE``, counted as failed; the run goes
    on and always prints ``N passed, M failed``. Exit code 0 when all passed, else 1.
    """
    from functools import partial

    from rummy.conformance import run_case
    from rummy_cli.inputs import MAX_LINE_BYTES
    from rummy_cli.outputs import terminal_safe
    passed = failed = 0
    seen: dict[str, str] = {}  # id -> FILE:LINE of its first case
    for path in args.files:
        try:
            f = open(path, "rb")  # noqa: SIM115
        except OSError as e:
            print(f"FAIL {path}: cannot read: {e.strerror}")
            failed += 1
            continue
        cases_here = 0
        with f:
            for n, raw in enumerate(iter(partial(f.readline, MAX_LINE_BYTES + 1), b""), 1):
                where = f"{path}:{n}"
                if len(raw) > MAX_LINE_BYTES:  # no end in sight (/dev/zero, a binary file)
                    print(f"FAIL {where}: malformed line: longer than "
                          f"{MAX_LINE_BYTES // 1024} KiB; the rest of the file is skipped")
                    failed += 1
                    cases_here += 1
                    break
                if not raw.strip():
                    continue
                cases_here += 1  # a line that does not decode still counts as a case
                try:
                    line = raw.decode("utf-8-sig" if n == 1 else "utf-8")  # a BOM is fine
                    case = json.loads(line)
                    if not isinstance(case, dict):
                        raise ValueError("a case must be a JSON object")
                except RecursionError:
                    print(f"FAIL {where}: malformed line: JSON nested too deeply")
                    failed += 1
                    continue
                except ValueError as e:
                    print(f"FAIL {where}: malformed line: {e}")
                    failed += 1
                    continue
                case_id = case.get("id")
                if not isinstance(case_id, str) or not case_id.strip():
                    got = "no 'id'" if "id" not in case else f"'id' {case_id!r}"
                    print(f"FAIL {where}: malformed case: {got}; every case needs a "
                          "non-empty string id (tests/conformance/cases/README.md)")
                    failed += 1
                    continue
                case_id = terminal_safe(case_id)
                if case_id in seen:
                    print(f"FAIL {where}: malformed case: id {case_id!r} given twice "
                          f"(first at {seen[case_id]}); ids must be unique within a run")
                    failed += 1
                    continue
                seen[case_id] = where
                try:
                    ok, msg = run_case(case)
                except Exception as e:  # noqa: BLE001 - report, go on with the next case
                    ok, msg = False, f"error: {type(e).__name__}: {e}"
                if ok:
                    passed += 1
                    if args.verbose:
                        print(f"ok   {case_id} ({terminal_safe(case.get('kind'))}, "
                              f"{terminal_safe(case.get('rule'))})")
                else:
                    failed += 1
                    print(f"FAIL {case_id} ({terminal_safe(case.get('kind'))}, "
                          f"{terminal_safe(case.get('rule'))}): "
                          f"{terminal_safe(' '.join(str(msg).split()))}")
        if cases_here == 0:
            print(f"FAIL {path}: no cases (the file is empty or holds only blank lines)")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rummy`` with every available subcommand."""
    from rummy_cli.options import add_rules_option
    parser = argparse.ArgumentParser(
        prog="rummy", description="Manipulation Rummy: rules engine, bots, simulations, "
        "replays and the game service. Rules: docs/rules.md (R1–R11).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("simulate", help="play bot-versus-bot games and print a balance report",
                       description="Play bot-versus-bot games in local processes and print a "
                       "balance report: win rates by seat\nand by bot with 95% intervals "
                       "clustered by game, a seat-fairness test, how rounds ended,\ngame "
                       "length. Game i uses a seed derived from --seed and i, so any game can "
                       "be re-run\nalone (--replay-game).\n\nBots (docs/strength.md): random, "
                       "basic (no table manipulation), human (human-like:\nmisses some "
                       "manipulations, softmax over its plays), greedy (the solver's best play),"
                       "\nstrategic (greedy, knocks late), search (Monte Carlo rollouts; about "
                       "100x the cost of\nstrategic per game).",
                       epilog=EPILOG_SIMULATE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    p.add_argument("--players", type=int, default=4, help="players per game, 2..5 (default 4)")
    p.add_argument("--bots",
                   help="comma-separated bot line-up, cycled over the seats (default "
                   "strategic,greedy: bots that knock and go out, so rounds end as people's "
                   "do)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument("--jobs", type=int, default=0,
                   help="worker processes (default 0: one per CPU; 1: all in this process)")
    p.add_argument("--chunk-size", type=int, default=0,
                   help="games per process task (default 0: about games / (jobs x 8), at "
                   "most 25)")
    p.add_argument("--events-dir", help="write each game's events as JSON lines to this folder")
    add_rules_option(p)
    p.add_argument("--no-rotate", action="store_true",
                   help="keep the line-up fixed per seat instead of rotating it every game")
    p.add_argument("--json", metavar="FILE",
                   help="also write the report as JSON ('-': stdout only)")
    p.add_argument("--replay-game", type=int, metavar="INDEX",
                   help="re-run only game INDEX of this run (same seeds and line-up)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_simulate)

    from rummy_cli.sweep import add_sweep_parser
    add_sweep_parser(sub)
    from rummy_cli.tune import add_tune_parser
    add_tune_parser(sub)

    from rummy_cli.replay import EPILOG_REPLAY, add_page_options
    p = sub.add_parser("replay", help="rebuild a game from its event log, verifying every event",
                       description="Rebuild a game from a JSON-lines event log (or from the "
                       "Redis event store with --redis-url), verify every event against the "
                       "rules and the invariants I1–I3, and print the final state and scores; "
                       "or write it as an HTML page (--html) and analyse the play (--analyse).",
                       epilog=EPILOG_REPLAY, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="event log file (JSON lines), or GAME_ID with --redis-url")
    p.add_argument("--step", action="store_true", help="print each event and the state after it")
    p.add_argument("--at", type=int, metavar="N", help="show the state after event N (1-based)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="accept a log that ends before the game is over (a game in progress);"
                   " by default a file must hold a whole game")
    p.add_argument("--redis-url", help="read the game GAME_ID from this event store "
                   "(default: $RUMMY_REDIS_URL when SOURCE is not a file)")
    p.add_argument("--prefix", default="rummy", help="event store key prefix (default rummy)")
    add_page_options(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("conformance", help="run conformance case files (JSON lines)",
                       description="Run shared-format conformance cases; prints one line per "
                       "failing case and 'N passed, M failed'; exits 1 on any failure.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="case files, JSON lines (e.g. tests/conformance/cases/*.jsonl)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    p.set_defaults(func=cmd_conformance)

    _optional_commands(sub)
    return parser


#: subcommands that live in an adapter package, with the extra that brings its libraries
_ADAPTERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("rummy_grpc.cli", "service", ("serve", "export")),
    ("rummy_worker.cli", "worker", ("worker", "batch")),
    ("rummy_store.backup_cli", "service", ("backup", "restore")),
    ("rummy_store.erase_cli", "service", ("erase",)),
)


def _missing_extra(name: str, extra: str, error: ImportError) -> Any:
    """The ``func`` of a subcommand whose extra is not installed: says which to install."""
    def run(args: argparse.Namespace) -> int:
        print(f"error: `rummy {name}` needs the '{extra}' extra: "
              f"pip install 'manipulation-rummy[{extra}]' ({error})", file=sys.stderr)
        return 1
    return run


def _optional_commands(sub: Any) -> None:
    """Register subcommands that live in other packages. One whose libraries are missing
    is still listed, and says which extra to install."""
    try:
        from rummy_cli.solve import add_parser as solve_parser
        solve_parser(sub)
    except ImportError:
        pass
    for module, extra, names in _ADAPTERS:
        try:
            mod = __import__(module, fromlist=["add_parsers"])
        except ImportError as e:
            for name in names:
                # no option prefix: whatever follows (--help included) reaches the error
                p = sub.add_parser(name, help=f"(needs the '{extra}' extra: pip install "
                                   f"'manipulation-rummy[{extra}]')", prefix_chars="\0",
                                   add_help=False)
                p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
                p.set_defaults(func=_missing_extra(name, extra, e))
            continue
        mod.add_parsers(sub)
    from rummy_cli.record import add_parser as record_parser
    record_parser(sub)
    from rummy_cli.tournament import add_parser as tournament_parser
    tournament_parser(sub)
    from rummy_cli.puzzles import add_parser as puzzles_parser
    puzzles_parser(sub)
    from rummy_cli.verify import add_parser as verify_parser
    verify_parser(sub)
    from rummy_cli.bot import add_parser as bot_parser
    bot_parser(sub)
    try:
        from rummy_cli.play import add_parser as play_parser
        play_parser(sub)
    except ImportError:
        pass


def _redact(message: str) -> str:
    """``message`` with every URL password replaced by ``***`` (``rummy_store.urls``; the
    plain install has no store to name, so the message is returned as it is)."""
    try:
        from rummy_store.urls import redact_text
    except ImportError:
        return message
    return redact_text(message)


def _innermost(parser: argparse.ArgumentParser,
               args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)parser of the deepest subcommand ``args`` names (``rummy record import``:
    the ``import`` parser), so that an error shows the usage of what the user typed."""
    while True:
        choices: dict[str, argparse.ArgumentParser] = {}
        dest = ""
        for action in parser._actions:  # argparse has no public way to the subparsers
            if isinstance(action, argparse._SubParsersAction):
                choices, dest = dict(action.choices), action.dest or ""
                break
        name = getattr(args, dest, None) if dest else None
        if not isinstance(name, str) or name not in choices:
            return parser
        parser = choices[name]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rummy`` console command; returns the exit code."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # told by the subcommand that was given, with its usage, not rummy's
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SystemExit as e:  # an adapter's error message: never print a URL's password
        if isinstance(e.code, str):
            e.code = _redact(e.code)
        raise
    except ModuleNotFoundError as e:  # an adapter's library is missing: name the extra
        extra = next((x for _, x, names in _ADAPTERS if args.command in names), None)
        if extra is None or e.name is None or e.name.split(".")[0] in ("rummy", "rummy_grpc",
                                                                        "rummy_worker"):
            raise
        print(f"error: `rummy {args.command}` needs the '{extra}' extra: "
              f"pip install 'manipulation-rummy[{extra}]' (no module named {e.name!r})",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
