"""``rummy worker`` and ``rummy batch submit|ab|sweep|status|report|replay-game|resume|list``
(``tune`` and ``restrict``: :mod:`rummy_worker.tune`, :mod:`rummy_worker.restrict`).

Registered by ``rummy_cli.main`` through :func:`add_parsers` (lazily: this module imports nothing
heavier than argparse at import time; Celery, Redis and Prometheus are imported inside the
command functions, after the environment has been set from the options).

Connection options (each also read from the environment, see :mod:`rummy_worker.config`):
``--broker`` (RUMMY_BROKER_URL), ``--state-url`` (RUMMY_STATE_URL), ``--prefix``
(RUMMY_KEY_PREFIX), ``--queue`` (RUMMY_QUEUE). Passwords may come from
``RUMMY_BROKER_PASSWORD_FILE`` instead of the URLs; messages print URLs redacted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from typing import Any

from rummy_cli.outputs import output_problem, write_output

EPILOG_BATCH = """\
examples:
  rummy worker -c 4 --metrics-port 9108          # on each machine
  rummy batch submit --games 100000 --players 4 --bots basic,random --seed 7
  rummy batch status BATCH_ID --wait
  rummy batch report BATCH_ID --html report.html --csv report.csv
  rummy batch ab --games 20000 --players 3 --bots basic,random --compare-rules knock_threshold=7
  rummy batch ab --games 20000 --players 2 --bots basic,random --compare-bots random,random
  rummy batch sweep --rules knock_threshold=0,5,10 --games 2000 --players 4 --html s.html
  rummy batch replay-game BATCH_ID 1234 --events game.jsonl

Game i of a batch is played with seed game_seed(seed, i) and the line-up rotated by i seats,
exactly as `rummy simulate` does: the same seed gives the same report, whatever the chunk
size and the number of workers. An A/B batch plays every game index under both variants
(paired) and reports A - B with 95% confidence intervals.
"""


EPILOG_SWEEP = """\
examples:
  rummy batch sweep --rules knock_threshold=0,5,10,15 --games 4000 --players 4 --seed 7
  rummy batch sweep --rules hand_size=7,10 --rules knock_threshold=5,10 --games 2000 \\
      --json s.json --html s.html

The values are docs/rules.md section 11 variants. Every value plays the same seeds, deals and
line-ups; the figures and their 95% intervals are the balance report's. The same options
give the same report as the local `rummy sweep` (which runs in local processes).
"""


def _set_env(args: argparse.Namespace) -> None:
    """Export connection options to the environment before Celery is imported."""
    for opt, var in (("broker", "RUMMY_BROKER_URL"), ("state_url", "RUMMY_STATE_URL"),
                     ("prefix", "RUMMY_KEY_PREFIX"), ("queue", "RUMMY_QUEUE")):
        value = getattr(args, opt, None)
        if value:
            os.environ[var] = value
    mp_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if mp_dir:  # the worker image sets it; a one-off `rummy batch ...` in it needs it too
        with contextlib.suppress(OSError):  # unwritable: prometheus-client says so itself
            os.makedirs(mp_dir, exist_ok=True)


def _connection_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connections (default: environment, then local Redis)")
    g.add_argument("--broker", metavar="URL", help="Celery broker URL (redis:// or amqp://)")
    g.add_argument("--state-url", metavar="URL", help="Redis URL of the batch state")
    g.add_argument("--prefix", help="key prefix of the batch state (default rummy)")
    g.add_argument("--queue", help="queue of the chunk tasks (default rummy-sim)")


def _store() -> Any:
    from rummy_worker import config
    from rummy_worker.batches import BatchStore

    return BatchStore(config.state_client(), config.key_prefix())


def _die(msg: str, code: int = 1) -> int:
    """Print ``error: msg`` and return the exit code: 1 for a failure, 2 for bad usage (the
    same codes as every ``rummy`` subcommand). A URL's password in ``msg`` is redacted."""
    from rummy_store.urls import redact_text

    print(f"error: {redact_text(msg)}", file=sys.stderr)
    return code


def _usage(msg: str) -> int:
    """:func:`_die` for bad arguments (exit code 2)."""
    return _die(msg, 2)


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`BatchSpec` of ``batch submit``/``ab`` options (validated).

    Raises:
        ValueError: bad options (message for the user): an empty bot list or name, an
            unknown bot, a bad rule pair, a variant given twice in --rules or in
            --compare-rules (R11), a bad spec.
    """
    from rummy.rules import RuleSet, parse_rule_pairs
    from rummy_cli.options import bot_names
    from rummy_worker.batches import BatchSpec, expand_bots

    bots = expand_bots(bot_names(args.bots) or "", args.players)  # "": the default
    rules = RuleSet.from_dict(parse_rule_pairs(args.rules)).changed()
    compare_names = bot_names(args.compare_bots, "--compare-bots")
    compare_bots = (expand_bots(compare_names, args.players)
                    if compare_names is not None else None)
    compare_rules = None
    if args.compare_rules:
        merged = {**RuleSet.from_dict(rules).to_dict(),
                  **parse_rule_pairs(args.compare_rules, "--compare-rules")}
        compare_rules = RuleSet.from_dict(merged).changed()
    return BatchSpec(games=args.games, bots=bots, seed=args.seed, rules=rules,
                     chunk_size=args.chunk_size, rotate=not args.no_rotate,
                     record_every=args.record_every, compare_bots=compare_bots,
                     compare_rules=compare_rules).validate()


# ----------------------------------------------------------------------------- commands

def cmd_worker(args: argparse.Namespace) -> int:
    """``rummy worker``: a Celery worker consuming chunk tasks (blocks until stopped)."""
    _set_env(args)
    problem = url_problem()
    if problem is not None:
        return _die(problem, 2)
    if args.metrics_port is not None and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        import tempfile

        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="rummy-metrics-")
    mp_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if mp_dir:
        os.makedirs(mp_dir, exist_ok=True)
        for name in os.listdir(mp_dir):  # stale samples of a previous run
            if name.endswith(".db"):
                os.unlink(os.path.join(mp_dir, name))
    from rummy_store.urls import SecretFileError

    from rummy_worker import config, metrics
    try:
        from rummy_worker.celery_app import app
    except SecretFileError as e:  # a password or CA file named by the environment
        return _die(str(e))

    if args.metrics_port is not None:
        metrics.start_exposition(args.metrics_port, args.metrics_addr)
        print(f"metrics on http://{args.metrics_addr}:{args.metrics_port}/metrics "
              f"(multiprocess dir {mp_dir})", file=sys.stderr)
    argv = ["worker", f"--loglevel={args.loglevel}", f"--queues={args.queues or config.queue()}"]
    if args.concurrency:
        argv.append(f"--concurrency={args.concurrency}")
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    extra = list(args.celery_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    argv += extra
    return _run_celery(app, argv)


def _run_celery(app: Any, argv: list[str]) -> int:
    """Run ``celery`` with ``argv`` on ``app`` and return its exit status: the worker's own
    (1 after an unrecoverable error), where ``Celery.worker_main`` returned nothing and
    ``rummy worker`` exited 0, so a restart-on-failure supervisor left it down."""
    import click
    from celery.bin.celery import celery

    celery.params[0].default = app
    try:
        code = celery.main(args=argv, standalone_mode=False)
    except click.exceptions.Exit as e:
        code = e.exit_code
    except click.ClickException as e:
        e.show()
        code = e.exit_code
    except click.exceptions.Abort:
        code = 1
    finally:
        celery.params[0].default = None
    return int(code or 0) if isinstance(code, int) else 0


def cmd_submit(args: argparse.Namespace) -> int:
    """``rummy batch submit``/``ab``: record a batch, send its chunks, print its id.
    Bad options, and output files (``--json``/``--csv``/``--html``) that cannot be written,
    exit 2 before anything is sent."""
    from rummy_cli.options import chunks_text

    _set_env(args)
    try:
        spec = spec_from_args(args)
    except ValueError as e:
        return _usage(str(e))
    if args.command_name == "ab" and not spec.is_ab:
        return _usage("an A/B batch needs --compare-bots and/or --compare-rules")
    test = None
    if getattr(args, "sprt", None) is not None:
        from rummy.sprt import bounds, parse_elos
        try:
            test = parse_elos(args.sprt)
            bounds(args.alpha, args.beta)
        except ValueError as e:
            return _usage(str(e))
        if not 0 <= args.sprt_slot < spec.players:
            return _usage(f"--sprt-slot {args.sprt_slot}: the line-up has slots 0.."
                          f"{spec.players - 1} (one per bot of --bots)")
    problem = _outputs_problem(args)
    if problem:
        return _usage(problem)
    from rummy_worker.tasks import limits

    store = _store()
    try:
        soft, hard = limits(args.soft_time_limit, args.time_limit)
    except ValueError as e:
        return _usage(str(e))
    batch_id, failure = _create_and_send(store, spec, soft, hard)
    if failure:
        return _die(failure)
    print(batch_id)
    print(f"batch {batch_id}: {chunks_text(spec.games, spec.chunks, spec.chunk_size)}",
          file=sys.stderr)
    if test is not None:
        return _run_sprt(store, batch_id, args, test)
    if args.wait:
        code = _wait(store, batch_id, quiet=False)
        if code:
            return code
        return _print_report(store, batch_id, args)
    return 0


def sprt_of(store: Any, batch_id: str, elos: tuple[float, float], alpha: float,
            beta: float, slot: int = 0) -> tuple[Any, int, int]:
    """``(SprtResult, chunks done, chunks)`` of an A/B batch's stored chunks: the GSPRT
    (:func:`rummy.sprt.sprt`) on the paired scores of line-up slot ``slot`` (0 to
    players - 1; :func:`rummy_worker.paired.slot_scores`).

    Raises:
        UnknownBatch: no such batch.
    """
    from rummy.sprt import sprt
    from rummy_worker.paired import Paired, slot_scores

    spec, merged = store.merged(batch_id)
    paired = merged.paired or Paired.empty(spec.players)
    games, total, total_sq = slot_scores(paired, slot)
    return sprt(games, total, total_sq, elos[0], elos[1], alpha, beta), merged.chunks, \
        spec.chunks


def _run_sprt(store: Any, batch_id: str, args: argparse.Namespace,
              elos: tuple[float, float], interval: float = 0.5) -> int:
    """``rummy batch ab --sprt``: poll the stored chunks until the LLR crosses a bound or
    every chunk is done, then print the test and the (partial) A/B report. Chunks still
    not started when the test stops are skipped (:meth:`BatchStore.stop`); those already
    running still store their results, which ``rummy batch report BATCH_ID`` shows."""
    from rummy_worker import config

    most = config.max_failures()
    shown = -1
    while True:
        result, done, chunks = sprt_of(store, batch_id, elos, args.alpha, args.beta,
                                       args.sprt_slot)
        if done != shown:
            shown = done
            print(f"sprt: {result.games} paired games ({done}/{chunks} chunks), LLR "
                  f"{result.llr:.3f} in [{result.lower:.3f}, {result.upper:.3f}]",
                  file=sys.stderr)
        if result.decision or done == chunks:
            break
        st = store.status(batch_id, most)
        if st.failed:
            return _die(f"batch {batch_id}: {len(st.given_up)} chunk(s) failed {most} times "
                        f"and were given up; see `rummy batch status {batch_id}`")
        time.sleep(interval)
    if result.decision and done < chunks:
        store.stop(batch_id, f"SPRT accepted {result.decision} after {result.games} games")
        print(f"batch {batch_id}: stopped by the SPRT after {done}/{chunks} chunks; the "
              "workers skip the chunks not started", file=sys.stderr)
    verdict = {"H1": f"H1 accepted: variant B is about {elos[1]:g} Elo stronger than A or "
                     "more",
               "H0": f"H0 accepted: variant B is not {elos[1]:g} Elo stronger than A (about "
                     f"{elos[0]:g} or less)",
               "": "undecided: every game was played before the LLR crossed a bound"}
    print(f"SPRT (GSPRT of fishtest, slot {args.sprt_slot} of the line-up, ELO0={elos[0]:g}, "
          f"ELO1={elos[1]:g}, alpha={args.alpha:g}, beta={args.beta:g}): "
          f"{verdict[result.decision]}; LLR {result.llr:.3f}, bounds [{result.lower:.3f}, "
          f"{result.upper:.3f}], {result.games} paired games used "
          f"({done}/{chunks} chunks)")
    args.partial = True
    code = _print_report(store, batch_id, args)
    json_path = getattr(args, "json", None)
    if json_path and json_path != "-":
        with contextlib.suppress(OSError, ValueError):
            with open(json_path, encoding="utf-8") as f:
                doc = json.load(f)
            doc["sprt"] = result.to_dict()
            write_output(json_path, json.dumps(doc, indent=2))
    return code


def _create_and_send(store: Any, spec: Any, soft: float, hard: float,
                     label: str = "") -> tuple[str, str]:
    """Record a batch and send all its chunks: ``(batch id, "")``, or ``(batch id, what to
    tell the user)`` when the broker refused them (the batch stays recorded: ``rummy batch
    resume`` sends them later)."""
    from rummy_worker.tasks import send_chunks

    batch_id = store.create(spec)
    try:
        send_chunks(batch_id, spec, list(range(spec.chunks)), prefix=store.prefix,
                    soft_time_limit=soft, time_limit=hard)
    except Exception as e:  # noqa: BLE001 - any broker failure: the batch is recorded
        named = f"batch {batch_id} ({label})" if label else f"batch {batch_id}"
        return batch_id, (f"{named} is recorded but its chunks could not be sent "
                          f"({type(e).__name__}: {e}); run `rummy batch resume {batch_id}` "
                          "once the broker is reachable")
    return batch_id, ""


def _wait(store: Any, batch_id: str, quiet: bool, interval: float = 0.5,
          timeout: float | None = None) -> int:
    """Show a progress bar until the batch is complete (0), or every missing chunk has
    failed (1), or ``timeout`` seconds passed (1)."""
    return _wait_all(store, [batch_id], quiet, interval, timeout, label=f"batch {batch_id}")


def _wait_all(store: Any, batch_ids: list[str], quiet: bool, interval: float = 0.5,
              timeout: float | None = None, label: str = "batches") -> int:
    """One progress bar over the chunks of several batches, until every batch is complete
    (0), or every missing chunk of some batch was given up after ``RUMMY_CHUNK_MAX_FAILURES``
    failed attempts (1), or ``timeout`` seconds passed (1). Lost chunks are healed on the
    way (:func:`rummy_worker.tasks.heal`)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from rummy_worker import config

    most = config.max_failures()
    sts = [store.status(b, most) for b in batch_ids]
    t0 = time.monotonic()
    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("chunks"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), disable=quiet) as progress:
        task = progress.add_task("chunks", total=sum(st.chunks for st in sts),
                                 completed=sum(st.done for st in sts))
        swept = time.monotonic()
        while True:
            if time.monotonic() - swept >= config.sweep_interval():
                swept = time.monotonic()
                with contextlib.suppress(Exception):  # the waiter also heals lost chunks
                    from rummy_worker.tasks import heal
                    heal(store)
            sts = [store.status(b, most) for b in batch_ids]
            progress.update(task, completed=sum(st.done for st in sts))
            if all(st.complete or st.stopped for st in sts):  # stopped: nothing more runs
                return 0
            for st in sts:
                if st.failed:
                    print(f"batch {st.batch_id}: {len(st.given_up)} chunk(s) failed "
                          f"{most} times and were given up; see "
                          f"`rummy batch status {st.batch_id}`", file=sys.stderr)
                    return 1
            if timeout is not None and time.monotonic() - t0 > timeout:
                done = sum(st.done for st in sts)
                print(f"{label}: not complete after {timeout:g} s "
                      f"({done}/{sum(st.chunks for st in sts)} chunks)", file=sys.stderr)
                return 1
            time.sleep(interval)


def cmd_status(args: argparse.Namespace) -> int:
    """``rummy batch status ID``: chunks done, failures; ``--wait`` shows a progress bar."""
    _set_env(args)
    from rummy_worker import config
    from rummy_worker.batches import UnknownBatch

    store = _store()
    most = config.max_failures()
    try:
        if args.wait:
            code = _wait(store, args.batch_id, quiet=False, timeout=args.timeout)
        st = store.status(args.batch_id, most)
        spec = store.spec(args.batch_id)
    except UnknownBatch as e:
        return _die(str(e))
    if args.json:
        print(json.dumps({"batch_id": st.batch_id, "chunks": st.chunks, "done": st.done,
                          "complete": st.complete, "failed": st.failed,
                          "failures": st.failures, "attempts": st.attempts,
                          "given_up": list(st.given_up), "stopped": st.stopped,
                          "spec": spec.to_dict()},
                         indent=2, sort_keys=True))
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.progress_bar import ProgressBar

        console = Console()
        state = ("complete" if st.complete else "failed" if st.failed
                 else f"stopped: {st.stopped}" if st.stopped else "running")
        console.print(f"batch {st.batch_id}: {st.done}/{st.chunks} chunks "
                      f"({state}), {spec.games} games, "
                      f"bots {','.join(spec.bots)}, seed {spec.seed}"
                      + (" [A/B]" if spec.is_ab else ""))
        console.print(ProgressBar(total=st.chunks, completed=st.done, width=50))
        for i, err in sorted(st.failures.items()):
            n = st.attempts.get(i, 1)
            how = (f"given up after {n} failed attempts" if i in st.given_up
                   else f"failed attempt {n} of {most}; retrying")
            console.print(f"[red]chunk {i} failed[/red] ({how}): "
                          f"{escape((err.splitlines() or [''])[0])}", highlight=False)
    if args.wait:
        return code
    return 0 if st.complete else (1 if st.failures else 0)


def document(store: Any, batch_id: str) -> dict[str, Any]:
    """The report document of a batch (see :mod:`rummy_worker.output`).

    For a plain batch the document also carries ``seed``, ``bots`` and ``rules`` in its
    report, as ``rummy simulate --json`` writes them.

    Raises:
        UnknownBatch: no such batch.
    """
    from rummy.balance import BalanceReport
    from rummy_worker.batches import batch_report

    spec, merged = store.merged(batch_id)
    rep = batch_report(spec, merged)
    if isinstance(rep, BalanceReport):
        rep = rep.with_run(spec.seed, spec.bots, spec.rules)
    return {"batch_id": batch_id, "spec": spec.to_dict(), "chunks": spec.chunks,
            "chunks_done": merged.chunks, "complete": merged.chunks == spec.chunks,
            "report": rep}


def _outputs_problem(args: argparse.Namespace) -> str | None:
    """Why one of the output files of ``args`` (``--json``, ``--csv``, ``--html``,
    ``--events``) cannot be written (:func:`rummy_cli.outputs.output_problem`), or
    ``None``; checked before the work."""

    paths = [getattr(args, name, None) for name in ("json", "csv", "html", "events")]
    return output_problem(*(p for p in paths if isinstance(p, str)))


def _print_report(store: Any, batch_id: str, args: argparse.Namespace) -> int:
    from rummy_worker import output

    doc = document(store, batch_id)
    if not doc["complete"] and not getattr(args, "partial", False):
        return _die(f"batch {batch_id} is not complete ({doc['chunks_done']}/{doc['chunks']} "
                    "chunks); wait, or pass --partial")
    json_path = getattr(args, "json", None)
    csv_path = getattr(args, "csv", None)
    html_path = getattr(args, "html", None)
    unwritten = ""
    for path, render in ((json_path, output.to_json), (csv_path, output.to_csv),
                         (html_path, output.to_html)):
        if not path:
            continue
        try:
            write_output(path, render(doc), announce=True)
        except OSError as e:  # checked up front, but the disk may fill or vanish
            unwritten = unwritten or path
            _die(f"cannot write {path}: {e.strerror or e}")
    if "-" not in (json_path, csv_path, html_path):
        from rich.console import Console

        output.render_terminal(doc, Console())
    if unwritten:
        return 1
    failed = [f for r in output.variants(doc["report"]) for f in r.failed_games]
    if failed:
        print(f"error: {len(failed)} game(s) of batch {batch_id} failed (a bot raised or "
              f"broke a rule); first: game {failed[0][0]}: {failed[0][1]}. "
              f"Re-run one with `rummy batch replay-game {batch_id} INDEX`", file=sys.stderr)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """``rummy batch report ID``: terminal tables; ``--json``/``--csv``/``--html FILE``."""
    _set_env(args)
    from rummy_worker.batches import UnknownBatch

    problem = _outputs_problem(args)
    if problem:
        return _usage(problem)
    try:
        return _print_report(_store(), args.batch_id, args)
    except UnknownBatch as e:
        return _die(str(e))


def cmd_sweep(args: argparse.Namespace) -> int:
    """``rummy batch sweep``: ``rummy sweep`` on the Celery workers. One batch per value (or
    combination of values) of the swept rule variants (R11), all on the same master seed
    and line-up (paired: game ``i`` of every batch has the same seed, deal and seats);
    waits for them with one progress bar, then writes the same document, table, JSON and
    HTML as ``rummy sweep`` (:func:`rummy_cli.sweep.sweep_document`), plus the batch ids.

    Exit codes: 0 done; 1 a chunk failed or ``--timeout`` passed (the batches stay; their
    reports are ``rummy batch report ID``); 2 bad options.
    """
    _set_env(args)
    from rummy.balance import BalanceReport
    from rummy_cli.options import chunks_text
    from rummy_cli.sweep import sweep_document, sweep_plan, write_outputs
    from rummy_worker.batches import BatchSpec
    from rummy_worker.tasks import limits

    try:
        combos, rulesets, bots = sweep_plan(args)
    except SystemExit as e:  # the message is printed already
        return int(e.code) if isinstance(e.code, int) else 2
    problem = output_problem(args.json, args.html)
    if problem:
        return _usage(problem)
    try:
        specs = [BatchSpec(games=args.games, bots=tuple(bots), seed=args.seed,
                           rules=r.changed(), chunk_size=args.chunk_size).validate()
                 for r in rulesets]
        soft, hard = limits(args.soft_time_limit, args.time_limit)
    except ValueError as e:
        return _usage(str(e))
    store = _store()
    t0 = time.perf_counter()
    ids = []
    for combo, spec in zip(combos, specs, strict=True):
        label = ", ".join(f"{k}={v}" for k, v in combo.items())
        batch_id, failure = _create_and_send(store, spec, soft, hard, label)
        ids.append(batch_id)
        if failure:
            return _die(failure)
        print(f"batch {batch_id}: {label}: "
              f"{chunks_text(spec.games, spec.chunks, spec.chunk_size)}", file=sys.stderr)
    code = _wait_all(store, ids, quiet=args.quiet, timeout=args.timeout,
                     label=f"sweep of {len(ids)} batches")
    if code:
        return code
    reports = []
    for batch_id in ids:
        rep = document(store, batch_id)["report"]
        assert isinstance(rep, BalanceReport)  # a sweep's batches are never A/B
        reports.append(rep)
    doc = sweep_document(combos, reports, games=args.games, players=args.players,
                         seed=args.seed, bots=bots, seconds=time.perf_counter() - t0)
    doc["batches"] = ids
    return write_outputs(doc, args)


def load_spec(ref: str) -> tuple[str | None, Any]:
    """A batch spec by reference: a batch id in the state Redis, a JSON file (a spec, or a
    report document with a ``spec`` key) or an inline JSON object.

    Returns:
        ``(batch_id or None, BatchSpec)``.

    Raises:
        UnknownBatch: not a file, not JSON and no such batch.
    """
    from rummy_worker.batches import BatchSpec

    text = None
    if ref.lstrip().startswith("{"):
        text = ref
    elif os.path.isfile(ref):
        with open(ref, encoding="utf-8") as f:
            text = f.read()
    if text is not None:
        data = json.loads(text)
        return data.get("batch_id"), BatchSpec.from_dict(data.get("spec", data))
    return ref, _store().spec(ref)


def cmd_replay_game(args: argparse.Namespace) -> int:
    """``rummy batch replay-game BATCH INDEX``: re-play one game of a batch alone."""
    _set_env(args)
    from rummy.events import dumps
    from rummy_worker.batches import UnknownBatch, game_id
    from rummy_worker.chunks import play_indexed

    problem = _outputs_problem(args)
    if problem:
        return _usage(problem)
    try:
        batch_id, spec = load_spec(args.batch)
    except (UnknownBatch, ValueError, KeyError) as e:
        return _die(str(e))
    if args.variant == "b" and not spec.is_ab:
        return _usage("variant b exists only in A/B batches")
    try:
        r = play_indexed(spec, args.index, args.variant, record=bool(args.events))
    except IndexError as e:
        return _die(str(e))
    print(json.dumps({"batch_id": batch_id, "index": args.index, "variant": args.variant,
                      "game_id": (game_id(batch_id, args.index, args.variant)
                                  if batch_id else None),
                      "seed": r.seed, "bots": list(r.bots), "final": list(r.final),
                      "winners": list(r.winners), "rounds": r.rounds, "turns": list(r.turns),
                      "reasons": list(r.reasons), "steps": r.steps}, sort_keys=True))
    if args.events:
        lines = "".join(dumps(e) + "\n" for e in r.events)
        try:
            write_output(args.events, lines, announce=True)
        except OSError as e:
            return _die(f"cannot write {args.events}: {e.strerror or e}")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    """``rummy batch resume ID``: send the tasks of chunks without a stored result."""
    _set_env(args)
    from rummy_worker.batches import UnknownBatch
    from rummy_worker.tasks import resume

    try:
        missing = resume(args.batch_id, store=_store(), soft_time_limit=args.soft_time_limit,
                         time_limit=args.time_limit)
    except UnknownBatch as e:
        return _die(str(e))
    print(f"sent {len(missing)} chunk task(s): {missing[:20]}{' ...' if len(missing) > 20 else ''}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """``rummy batch list``: recent batches with their progress and rules, after the line
    naming the store it read; exit code 1 (naming the settings) when that store has no
    batch, as when the connection settings of ``rummy batch submit`` were forgotten."""
    _set_env(args)
    from rummy_store.urls import redact_url

    from rummy_worker import config

    store = _store()
    where = f"{redact_url(config.state_url())} (key prefix {config.key_prefix()!r})"
    ids = store.recent(args.limit)
    if not ids:
        return _die(f"no batches in the batch-state store {where}: if they were submitted "
                    "elsewhere, give the same RUMMY_STATE_URL and RUMMY_KEY_PREFIX (or "
                    "--state-url and --prefix) as `rummy batch submit` had")
    print(f"batches in {where}, newest first:")
    for bid in ids:
        st = store.status(bid)
        spec = store.spec(bid)
        print(f"{bid}  {st.done:>5}/{st.chunks:<5} chunks  {spec.games:>8} games  "
              f"seed {spec.seed}  bots {','.join(spec.bots)}  rules {_rules_text(spec)}")
    return 0


def _rules_text(spec: Any) -> str:
    """A batch's changed rules (``default`` when none); ``A: ... | B: ...`` for an A/B
    batch, with B's line-up when it differs."""
    def text(rules: Any) -> str:
        return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                        for k, v in sorted((rules or {}).items())) or "default"

    if not spec.is_ab:
        return text(spec.rules)
    b = text(spec.rules if spec.compare_rules is None else spec.compare_rules)
    bots = f" bots {','.join(spec.compare_bots)}" if spec.compare_bots else ""
    return f"[A/B] A: {text(spec.rules)} | B: {b}{bots}"


#: the URL schemes each setting takes (Celery's brokers as this project configures them; the
#: batch state and the event store are Redis)
_SCHEMES = {"RUMMY_BROKER_URL": ("redis", "rediss", "amqp", "amqps", "pyamqp"),
            "RUMMY_STATE_URL": ("redis", "rediss", "unix")}


def url_problem() -> str | None:
    """Why a configured URL (broker, batch state; event store for ``--record-every``)
    cannot work, naming the setting and the schemes it takes, never the URL's password;
    ``None`` when each has a usable scheme."""
    from rummy_store.factory import UnknownStoreURL, store_scheme
    from rummy_store.urls import redact_url

    from rummy_worker import config

    for name, url in (("RUMMY_BROKER_URL", config.broker_url()),
                      ("RUMMY_STATE_URL", config.state_url())):
        scheme = url.partition("://")[0].lower() if "://" in url else ""
        if scheme not in _SCHEMES[name]:
            return (f"{name} (or its option) {redact_url(url)!r} is no URL this takes: use "
                    f"{', '.join(s + '://' for s in _SCHEMES[name])}")
    store = os.environ.get("RUMMY_EVENT_STORE_URL")
    if store:
        try:
            store_scheme(store)
        except UnknownStoreURL as e:
            return f"RUMMY_EVENT_STORE_URL: {e}"
    return None


def _guarded(cmd: Any) -> Any:
    """``cmd`` with connection failures reported in one line (exit code 1), not a trace,
    and unusable URLs refused first (exit code 2)."""

    def run(args: argparse.Namespace) -> int:
        import redis
        from rummy_store.urls import SecretFileError, redact_url

        try:
            _set_env(args)
            problem = url_problem()
            if problem is not None:
                return _die(problem, 2)
            return int(cmd(args) or 0)
        except SecretFileError as e:
            return _die(str(e))
        except redis.exceptions.AuthenticationError as e:
            from rummy_worker import config

            return _die(f"the batch-state Redis at {redact_url(config.state_url())} refused "
                        f"the credentials ({type(e).__name__}: {e}); check the URL's user "
                        "and RUMMY_BROKER_PASSWORD_FILE")
        except redis.exceptions.ConnectionError as e:
            from rummy_worker import config

            return _die(f"cannot reach the batch-state Redis at "
                        f"{redact_url(config.state_url())}: {e}; set RUMMY_STATE_URL (or "
                        "--state-url) to the one `rummy batch submit` used")

    run.__doc__ = cmd.__doc__
    run.__name__ = cmd.__name__
    return run


# ----------------------------------------------------------------------------- parsers

def _limit_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--soft-time-limit", type=float, metavar="SECONDS",
                   help="per chunk (default RUMMY_TASK_SOFT_TIME_LIMIT or 900); travels with "
                   "each task")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="hard limit per chunk (default RUMMY_TASK_TIME_LIMIT or 960)")


def _batch_spec_options(p: argparse.ArgumentParser) -> None:
    from rummy_cli.options import add_rules_option

    p.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    p.add_argument("--players", type=int, default=4, help="players per game, 2..5 (default 4)")
    p.add_argument("--bots",
                   help="comma-separated bot line-up, cycled over the seats (default "
                   "strategic,greedy: rummy.simulate.DEFAULT_LINEUP)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    add_rules_option(p)
    p.add_argument("--chunk-size", type=int, default=200,
                   help="games per chunk task (default 200)")
    p.add_argument("--no-rotate", action="store_true",
                   help="keep the line-up fixed per seat instead of rotating it every game")
    p.add_argument("--record-every", type=int, default=0, metavar="K",
                   help="write every K-th game's events to the event store "
                   "(RUMMY_EVENT_STORE_URL of the workers; game id batch-ID-INDEX)")
    p.add_argument("--compare-bots", metavar="BOTS",
                   help="A/B: variant B's line-up (same players), paired on the same seeds")
    add_rules_option(p, "--compare-rules", help_text="A/B: variant B's rules, as changes "
                     "to --rules (repeat --compare-rules or list several; each variant once)")
    _limit_options(p)
    p.add_argument("--wait", action="store_true", help="wait with a progress bar, then report")
    p.add_argument("--json", metavar="FILE", help="with --wait: write the report as JSON")
    p.add_argument("--csv", metavar="FILE", help="with --wait: write the report as CSV")
    p.add_argument("--html", metavar="FILE", help="with --wait: write the HTML report")


def _sprt_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sequential test (SPRT; docs/bots.md)")
    g.add_argument("--sprt", metavar="ELO0,ELO1",
                   help="wait, and stop as soon as the GSPRT (fishtest's) on the paired "
                   "scores of one line-up slot (--sprt-slot; B's credit against A's) accepts "
                   "H0: B is ELO0 Elo stronger, or H1: ELO1; --games is the most it plays. "
                   "Use a small --chunk-size (e.g. 10): the test looks at finished chunks")
    g.add_argument("--sprt-slot", type=int, default=0, metavar="K",
                   help="with --sprt: the line-up slot (position in --bots, from 0) whose "
                   "paired scores are tested (default 0)")
    g.add_argument("--alpha", type=float, default=0.05,
                   help="with --sprt: chance of accepting H1 when H0 holds (default 0.05)")
    g.add_argument("--beta", type=float, default=0.05,
                   help="with --sprt: chance of accepting H0 when H1 holds (default 0.05)")


def add_parsers(subparsers: Any) -> None:
    """Add ``worker`` and ``batch`` (with its sub-commands) to ``rummy``'s sub-parsers.

    Every parser sets ``func`` (the command: ``args -> exit code``).
    """
    from rummy_cli.sweep import add_sweep_options

    fmt = argparse.RawDescriptionHelpFormatter
    p = subparsers.add_parser(
        "worker", help="run a Celery simulation worker (chunks of bot-versus-bot games)",
        description="Start a Celery worker for simulation chunks, with late acks, prefetch 1, "
        "soft/hard time limits (RUMMY_TASK_SOFT_TIME_LIMIT/RUMMY_TASK_TIME_LIMIT). Extra "
        "arguments after -- go to `celery worker`.", formatter_class=fmt)
    p.add_argument("-c", "--concurrency", type=int, default=0,
                   help="pool processes (default: CPU count)")
    p.add_argument("-Q", "--queues", help="comma-separated queues (default RUMMY_QUEUE)")
    p.add_argument("-l", "--loglevel", default="INFO", help="log level (default INFO)")
    p.add_argument("-n", "--hostname", help="worker node name (celery -n)")
    p.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="serve Prometheus /metrics of all pool processes on this port")
    p.add_argument("--metrics-addr", default="0.0.0.0", help="metrics bind address")
    p.add_argument("celery_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    _connection_options(p)
    p.set_defaults(func=cmd_worker)

    batch = subparsers.add_parser(
        "batch", help="bulk simulations on Celery workers: submit, status, report, A/B",
        epilog=EPILOG_BATCH, formatter_class=fmt)
    bsub = batch.add_subparsers(dest="batch_command", metavar="SUBCOMMAND", required=True)

    for name, helptext, description in (
            ("submit", "submit a batch of games; prints the batch id",
             "Submit a batch of bot-versus-bot games to the Celery workers, in chunks; prints "
             "the batch id. Game i is played with a seed derived from --seed and i, and the "
             "line-up rotated by i seats, so `rummy batch replay-game` re-plays any game "
             "alone. Follow it with `rummy batch status BATCH_ID --wait`."),
            ("ab", "submit an A/B batch: two rule sets or line-ups, same seeds",
             "Submit an A/B batch: every game index is played under variant A (--rules, "
             "--bots) and variant B (--compare-rules and/or --compare-bots) with the same "
             "seed, and the report compares them game by game (paired 95% intervals). Needs "
             "--compare-rules and/or --compare-bots.")):
        p = bsub.add_parser(name, help=helptext, description=description, epilog=EPILOG_BATCH,
                            formatter_class=fmt)
        _batch_spec_options(p)
        if name == "ab":
            _sprt_options(p)
        _connection_options(p)
        p.set_defaults(func=_guarded(cmd_submit), command_name=name, partial=False)

    p = bsub.add_parser(
        "sweep", help="`rummy sweep` on the workers: one batch per rule-variant value",
        description="Sweep rule variants on the Celery workers: one batch per value of\n"
        "--rules VARIANT=V1,V2,... (with several --rules, per combination of values), all\n"
        "on the same --seed and line-up, so game i has the same deal and seats under every\n"
        "value (paired seeds) and a difference between values comes from the rule. Waits\n"
        "with one progress bar over all the chunks, then prints the same table and writes\n"
        "the same JSON and HTML (charts need the 'report' extra) as `rummy sweep` with the\n"
        "same options, plus the batch ids (`rummy batch report ID`: one value's report).",
        epilog=EPILOG_SWEEP, formatter_class=fmt)
    add_sweep_options(p)  # the same sweep options as `rummy sweep`
    p.add_argument("--chunk-size", type=int, default=200,
                   help="games per chunk task (default 200)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="give up waiting after SECONDS (exit 1; the batches go on)")
    _limit_options(p)
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_sweep))

    from rummy_worker.tune import add_tune_parser
    add_tune_parser(bsub, _connection_options, _limit_options, _guarded)
    from rummy_worker.restrict import add_restrict_parser
    add_restrict_parser(bsub, _connection_options, _limit_options, _guarded)

    p = bsub.add_parser("status", help="progress of a batch (--wait: progress bar)")
    p.add_argument("batch_id", metavar="BATCH_ID", help="the batch's id (from `batch submit`)")
    p.add_argument("--wait", action="store_true", help="show a progress bar until done")
    p.add_argument("--timeout", type=float, help="with --wait: give up after SECONDS (exit 1)")
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_status))

    p = bsub.add_parser("report", help="the balance report of a batch",
                        description="Print the balance report (rich tables) and/or write it "
                        "as JSON, CSV or a self-contained HTML file ('-' for stdout).")
    p.add_argument("batch_id", metavar="BATCH_ID", help="the batch's id (from `batch submit`)")
    p.add_argument("--json", metavar="FILE", help="write the report as JSON ('-': stdout)")
    p.add_argument("--csv", metavar="FILE", help="write the report as CSV ('-': stdout)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    p.add_argument("--partial", action="store_true", help="report an unfinished batch")
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_report))

    p = bsub.add_parser("replay-game", help="re-play one game of a batch alone",
                        description="Re-play game INDEX of a batch (same seed and line-up) "
                        "and print its result as JSON; BATCH_ID is a batch id, a JSON file "
                        "with a spec (or a report from `batch report --json`) or inline JSON.")
    p.add_argument("batch", metavar="BATCH_ID",
                   help="a batch id, a JSON file with a spec (or a `batch report --json` "
                   "report), or inline JSON")
    p.add_argument("index", type=int, metavar="INDEX", help="the game's index in the batch")
    p.add_argument("--variant", choices=("a", "b"), default="a", help="A/B variant")
    p.add_argument("--events", metavar="FILE",
                   help="write the game's events as JSON lines ('-': stdout)")
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_replay_game))

    p = bsub.add_parser("resume", help="re-send the tasks of chunks that have no result")
    p.add_argument("batch_id", metavar="BATCH_ID", help="the batch's id (from `batch submit`)")
    _limit_options(p)
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_resume))

    p = bsub.add_parser("list", help="recent batches")
    p.add_argument("--limit", type=int, default=20,
                   help="most batches to list, newest first (default 20)")
    _connection_options(p)
    p.set_defaults(func=_guarded(cmd_list))
