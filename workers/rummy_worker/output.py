"""The balance report as rich tables, JSON, CSV and one self-contained HTML file.

Input everywhere is a *document*: ``{"batch_id", "spec", "complete", "chunks",
"chunks_done", "report"}`` where ``report`` is :func:`rummy_worker.batches.batch_report`
output: a typed :class:`rummy.balance.BalanceReport`, or an
:class:`rummy_worker.batches.ABReport` for an A/B batch. Every renderer reads those objects;
only :func:`to_json` turns them into dicts (``BalanceReport.to_dict``).
The HTML file has no external resources: inline CSS and inline SVG charts drawn by
matplotlib (:mod:`rummy_cli.charts`, the ``report`` extra): win rate by seat and by bot with
95% error bars and the 1/players line, final-score histograms per bot, rounds per game,
turns per round; for A/B batches one difference plot per unit with paired 95% intervals
(win rates, skill trace and every game-quality figure, paired game by game). Without
matplotlib the page says so and keeps its tables.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

from rummy.balance import BalanceReport
from rummy_cli.charts import Charts, matplotlib_missing, missing_note, unit_charts
from rummy_worker.batches import ABReport

# ----------------------------------------------------------------------------- JSON / CSV


def variants(rep: BalanceReport | ABReport) -> list[BalanceReport]:
    """The variant reports of a batch report: ``[rep]``, or ``[A, B]`` for an A/B batch."""
    return [rep.a, rep.b] if isinstance(rep, ABReport) else [rep]


def to_dict(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with its report as JSON-ready dicts."""
    return {**doc, "report": doc["report"].to_dict()}


def to_json(doc: dict[str, Any]) -> str:
    """The document as indented JSON (keys sorted; histogram keys become strings)."""
    return json.dumps(to_dict(doc), indent=2, sort_keys=True)


def _csv_rows(rep: BalanceReport, variant: str) -> Iterable[list[Any]]:
    yield [variant, "games", "", "", rep.games, "", "", ""]
    for key, value in (("players", rep.players), ("rounds", rep.rounds),
                       ("turns", rep.turns), ("rounds_per_game", rep.rounds_per_game),
                       ("turns_per_round", rep.turns_per_round)):
        yield [variant, key, "", "", value, "", "", ""]
    for seat, r in enumerate(rep.seats):
        yield [variant, "seat_win_rate", "seat", seat, r.rate, r.low, r.high, r.n]
    yield [variant, "seat_fairness_p", "", "", rep.fairness.p_value, "", "", rep.games]
    for bot, s in rep.bots.items():
        yield [variant, "bot_win_rate", "bot", bot, s.win.rate, s.win.low, s.win.high, s.win.n]
        yield [variant, "bot_win_rate_naive", "bot", bot, s.win.rate, s.win.naive_low,
               s.win.naive_high, s.win.n]
    for bot, s in rep.bots.items():
        yield [variant, "bot_mean_score", "bot", bot, s.score.mean,
               "" if s.score.low is None else s.score.low,
               "" if s.score.high is None else s.score.high, s.score.n]
    for bot, s in rep.bots.items():
        yield [variant, "bot_mean_points_left", "bot", bot, s.points_left, "", "", ""]
    for reason, v in rep.round_end_share.items():
        yield [variant, "round_end_share", "reason", reason, v, "", "", ""]
    for bot, s in rep.bots.items():
        for lo, count in s.score_hist.items():
            yield [variant, f"score_hist:{bot}", "score_bin_low", lo, count, "", "", ""]
    for k, count in rep.rounds_hist.items():
        yield [variant, "rounds_hist", "rounds", k, count, "", "", ""]
    for k, count in rep.turns_hist.items():
        yield [variant, "turns_hist", "turns", k, count, "", "", ""]
    if rep.quality is not None and rep.quality.games:
        q = rep.quality
        for t in q.skill:
            yield [variant, "quality:skill_trace", "bots", f"{t.stronger}>{t.weaker}",
                   t.margin.mean, t.margin.low, t.margin.high, t.games]
        for key, _, value, low, high, _unit in q.rows():
            if key != "skill_trace":
                yield [variant, f"quality:{key}", "", "", value, low, high, q.games]


def to_csv(doc: dict[str, Any]) -> str:
    """The report as tidy CSV rows.

    Columns: ``variant`` (``a``; ``b`` or ``a-b`` in A/B batches), ``metric``, ``key_kind``,
    ``key``, ``value``, ``low``, ``high``, ``n``. Rates are fractions, scores points;
    ``low``/``high`` are 95% bounds (seat rates: Wilson; bot rates: clustered by game, and
    the naive Wilson bounds as ``bot_win_rate_naive``; mean scores: clustered normal;
    ``a-b`` differences: paired normal). ``seat_fairness_p`` is the chi-square p-value.
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["variant", "metric", "key_kind", "key", "value", "low", "high", "n"])
    rep = doc["report"]
    if isinstance(rep, ABReport):
        w.writerows(_csv_rows(rep.a, "a"))
        w.writerows(_csv_rows(rep.b, "b"))
        cmp = rep.compare
        g = cmp["games"]
        for seat, e in enumerate(cmp["seat_win_rate"]):
            w.writerow(["a-b", "seat_win_rate", "seat", seat, e["diff"], e["low"], e["high"], g])
        for slot, e in enumerate(cmp["slot_win_rate"]):
            w.writerow(["a-b", "slot_win_rate", "slot", f"{slot}:{e['bot_a']}/{e['bot_b']}",
                        e["diff"], e["low"], e["high"], g])
        for bot, e in sorted((cmp.get("bot_win_rate") or {}).items()):
            w.writerow(["a-b", "bot_win_rate", "bot", bot, e["diff"], e["low"], e["high"], g])
        for key in ("rounds_per_game", "turns_per_game", "turns_per_round"):
            e = cmp[key]
            w.writerow(["a-b", key, "", "", e["diff"], e["low"], e["high"], g])
        for kind, label, e, unit in ab_verdicts(cmp):
            if kind not in ("bot", "seat", "length"):
                w.writerow(["a-b", f"quality:{kind}", "metric", f"{label} ({unit})",
                            e["diff"], e["low"], e["high"], e["games"]])
    else:
        w.writerows(_csv_rows(rep, "a"))
    return out.getvalue()


# ----------------------------------------------------------------------------- terminal


def _spark(hist: dict[Any, int]) -> str:
    bars = "▁▂▃▄▅▆▇█"
    if not hist:
        return ""
    keys = sorted(int(k) for k in hist)
    counts = {int(k): v for k, v in hist.items()}
    step = min((b - a for a, b in itertools.pairwise(keys)), default=1) or 1
    full = range(keys[0], keys[-1] + step, step)
    top = max(counts.values())
    return "".join(bars[min(7, counts.get(k, 0) * 8 // (top + 1))] if counts.get(k) else " "
                   for k in full)


def _fmt_ci(e: dict[str, Any], pct: bool) -> str:
    if e["low"] is None:
        return "n/a"
    if pct:
        return f"{100 * e['low']:+.1f} … {100 * e['high']:+.1f} pp"
    return f"{e['low']:+.3f} … {e['high']:+.3f}"


def render_terminal(doc: dict[str, Any], console: Any) -> None:
    """Print the report with rich: the lead's ``rummy_cli.report_format.render`` tables, score
    distributions per bot, and for A/B batches a table of paired differences."""
    from rich.table import Table

    from rummy_cli.report_format import render

    spec = doc.get("spec") or {}
    status = "" if doc.get("complete", True) else (
        f" [red](partial: {doc['chunks_done']}/{doc['chunks']} chunks)[/red]")
    rep = doc["report"]
    is_ab = isinstance(rep, ABReport)
    for variant, r in zip("ab", variants(rep), strict=False):
        bots: list[str] = ((spec.get("compare_bots") if variant == "b" else None)
                           or spec.get("bots") or [])
        rules = spec.get("compare_rules") if variant == "b" and spec.get("compare_rules") \
            is not None else spec.get("rules", {})
        label = f"variant {variant.upper()}: " if is_ab else ""
        render(r, console, title=f"Batch {doc.get('batch_id', '?')}{status}: {label}"
               f"{r.games} games, bots {','.join(bots)}, seed {spec.get('seed')}"
               + (f", rules {rules}" if rules else ""))
        hist = Table(title="Final score distribution per bot (bins of 25 points)")
        for col in ("bot", "mean", "min bin", "histogram", "max bin"):
            hist.add_column(col, justify="right" if col != "histogram" else "left")
        for b, s in r.bots.items():
            keys = sorted(s.score_hist)
            hist.add_row(b, f"{s.score.mean:.1f}", str(keys[0]) if keys else "",
                         _spark(dict(s.score_hist)), str(keys[-1]) if keys else "")
        console.print(hist)
    if isinstance(rep, ABReport):
        cmp = rep.compare
        from rummy.quality import verdict

        names = variant_names(spec)
        t = Table(title=f"A − B, paired over {cmp['games']} games (95% CI); {names[0]}; "
                  f"{names[1]}")
        for col in ("metric", "A", "B", "A − B", "95% CI"):
            t.add_column(col, justify="right")
        for bot, e in sorted((cmp.get("bot_win_rate") or {}).items()):
            t.add_row(f"win rate {bot}", f"{100 * e['a']:.1f}%", f"{100 * e['b']:.1f}%",
                      f"{100 * e['diff']:+.1f} pp", _fmt_ci(e, True))
        for seat, e in enumerate(cmp["seat_win_rate"]):
            t.add_row(f"win rate seat {seat}", f"{100 * e['a']:.1f}%", f"{100 * e['b']:.1f}%",
                      f"{100 * e['diff']:+.1f} pp", _fmt_ci(e, True))
        for slot, e in enumerate(cmp["slot_win_rate"]):
            t.add_row(f"win rate slot {slot} ({e['bot_a']} / {e['bot_b']})",
                      f"{100 * e['a']:.1f}%", f"{100 * e['b']:.1f}%",
                      f"{100 * e['diff']:+.1f} pp", _fmt_ci(e, True))
        for key in ("rounds_per_game", "turns_per_game", "turns_per_round"):
            e = cmp[key]
            t.add_row(key.replace("_", " "), f"{e['a']:.3f}", f"{e['b']:.3f}",
                      f"{e['diff']:+.3f}", _fmt_ci(e, False))
        for kind, label, e, unit in ab_verdicts(cmp):
            if kind not in ("bot", "seat", "length"):
                pct = unit in ("pp", "%")

                def shown(x: float, pct: bool = pct) -> str:
                    return f"{100 * x:.1f}%" if pct else f"{x:.3f}"

                t.add_row(f"{label} ({unit})", shown(e["a"]), shown(e["b"]),
                          f"{100 * e['diff']:+.1f} pp" if pct else f"{e['diff']:+.3f}",
                          _fmt_ci(e, pct))
        console.print(t)
        console.print(f"[bold]Verdict[/bold] ({names[0]}; {names[1]}):")
        for _, label, e, unit in ab_verdicts(cmp):
            console.print("  " + verdict(label, e["diff"], e["low"], e["high"], cmp["games"],
                                         unit), highlight=False)
        if cmp.get("quality") is None:  # chunks that predate the paired quality sums
            for v in quality_verdicts(rep.a, rep.b, cmp["games"]):
                console.print(f"  {v} (unpaired)", highlight=False)


# ----------------------------------------------------------------------------- HTML / SVG


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;
text-align:right}th{background:#f3f3f3}.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{max-width:100%;height:auto}
code{background:#f3f3f3;padding:1px 4px}"""


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _ci_text(low: float | None, high: float | None, fmt: str = "pct") -> str:
    if low is None or high is None:
        return "n/a"
    return f"{_pct(low)} – {_pct(high)}" if fmt == "pct" else f"{low:.1f} – {high:.1f}"


def _report_html(r: BalanceReport, heading: str, charts: Charts | None) -> str:
    """The HTML of one balance report; its charts from ``charts`` (``None``: matplotlib
    is missing, the page says so once, the tables stay)."""
    out = [f"<h2>{_esc(heading)}</h2>"]
    out.extend(f"<p><strong>Warning:</strong> {_esc(w)}</p>" for w in r.warnings)
    out.append(_table(["games", "players", "rounds", "turns", "rounds per game",
                       "turns per round"],
                      [[r.games, r.players, r.rounds, r.turns,
                        f"{r.rounds_per_game:.3f}", f"{r.turns_per_round:.3f}"]]))
    out.append("<h3>Win rate by seat and by bot (95% CI; bots clustered by game)</h3>")
    if charts is not None:
        fair = 1 / r.players if r.players else None
        out.append("<div class=plots>")
        out.append(charts.rate_bars([f"seat {i}" for i in range(len(r.seats))], list(r.seats),
                                    "Win rate by seat", reference=fair))
        out.append(charts.rate_bars(list(r.bots), [s.win for s in r.bots.values()],
                                    "Win rate by bot (per seat-game)", reference=fair))
        out.append("</div>")
    out.append(_table(["seat", "win rate", "95% CI (Wilson)", "games"],
                      [[i, _pct(e.rate), _ci_text(e.low, e.high), e.n]
                       for i, e in enumerate(r.seats)]))
    out.append(f"<p>Seat fairness (chi-square test against 1/{r.players}): "
               f"{_esc(r.fairness.verdict)}</p>")
    out.append(_table(["bot", "win rate", "95% CI (clustered)", "naive CI", "seat-games",
                       "mean final score", "95% CI", "mean points left per round"],
                      [[b, _pct(s.win.rate), _ci_text(s.win.low, s.win.high),
                        _ci_text(s.win.naive_low, s.win.naive_high), s.win.n,
                        f"{s.score.mean:.1f}", _ci_text(s.score.low, s.score.high, "num"),
                        f"{s.points_left:.2f}"]
                       for b, s in r.bots.items()]))
    sh = r.round_end_share
    out.append("<h3>How rounds ended (share of rounds)</h3>")
    out.append(_table(["knock", "undercut", "going out", "stock exhausted"],
                      [[_pct(sh["knock"]), _pct(sh["undercut"]), _pct(sh["going_out"]),
                        _pct(sh["stock"])]]))
    out.append(quality_html(r))
    if charts is not None:
        out.append("<h3>Final score distribution per bot</h3><div class=plots>")
        for i, (b, s) in enumerate(r.bots.items()):
            out.append(charts.histogram(dict(s.score_hist), f"Final score: {b}",
                                        "final score (points, bins of 25)", bin_width=25,
                                        color=i))
        out.append("</div><h3>Game and round length</h3><div class=plots>")
        out.append(charts.histogram(dict(r.rounds_hist), "Rounds per game", "rounds"))
        out.append(charts.histogram(dict(r.turns_hist), "Turns per round", "turns"))
        out.append("</div>")
    return "".join(out)


def quality_html(r: BalanceReport) -> str:
    """The game-quality table of a report with each metric's one-line definition
    (:func:`rummy_cli.report_format.quality_rows`; ``""`` when the report has none)."""
    from rummy.quality import SAMPLE_EVERY
    from rummy_cli.report_format import quality_rows

    rows = quality_rows(r)
    if not rows or r.quality is None:
        return ""
    q = r.quality
    verdicts = "".join(f"<p class=verdict>Skill trace: {_esc(t.verdict)}</p>"
                       for t in q.skill)
    return (f"<h3>Game quality ({q.games} games; 95% CI clustered by game)</h3>"
            + _table(["metric", "value", "95% CI", "definition"], rows) + verdicts
            + f"<p>Plays were counted at {q.sampled} of {q.meld_phases} meld phases "
            f"(one in {SAMPLE_EVERY} or more, fewer with bots that do not run the solver); "
            "definitions and sources: docs/metrics.md.</p>")


def variant_names(spec: dict[str, Any]) -> tuple[str, str]:
    """``("A = rules ..., bots ...", "B = rules ..., bots ...")`` of an A/B batch spec: each
    variant's changed rules (``default`` when none) and line-up."""
    def name(letter: str, rules: Any, bots: Any) -> str:
        text = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                         for k, v in sorted((rules or {}).items())) or "default"
        return f"{letter} = rules {text}; bots {','.join(bots or [])}"

    rules_b = spec.get("compare_rules")
    return (name("A", spec.get("rules"), spec.get("bots")),
            name("B", spec.get("rules") if rules_b is None else rules_b,
                 spec.get("compare_bots") or spec.get("bots")))


#: the paired game-quality figures (:mod:`rummy.paired_quality`) that the win-rate and
#: length statistics of :mod:`rummy_worker.paired` already give
_SAME = frozenset({"bot", "seat"})
_SAME_LENGTH = frozenset({"rounds per game", "turns per game", "turns per round"})


def ab_verdicts(cmp: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], str]]:
    """The paired differences of an A/B comparison as ``(kind, label, entry, unit)``: per
    bot and per seat (win rates, unit ``pp``), rounds and turns per game, then every other
    game-quality figure paired game by game (``cmp["quality"]``, when the batch has it:
    skill trace, drama, decisiveness, decision moves and branching, the rest of the
    duration), each in its own unit."""
    rows: list[tuple[str, str, dict[str, Any], str]] = []
    rows += [("bot", f"{b} win rate", e, "pp")
             for b, e in sorted((cmp.get("bot_win_rate") or {}).items())]
    rows += [("seat", f"seat {i} win rate", e, "pp")
             for i, e in enumerate(cmp["seat_win_rate"])]
    rows += [("length", "rounds per game", cmp["rounds_per_game"], "rounds"),
             ("length", "turns per game", cmp["turns_per_game"], "turns")]
    rows += [(e["kind"], e["metric"], e, e["unit"]) for e in cmp.get("quality") or []
             if e["kind"] not in _SAME and e["metric"] not in _SAME_LENGTH]
    return rows


def quality_verdicts(a: BalanceReport, b: BalanceReport, games: int) -> list[str]:
    """Verdicts in words (A − B) on the game-quality figures of an A/B batch that the
    paired statistics do not hold: skill trace, lead changes, decisiveness, decision moves.
    Their intervals are unpaired (each variant's own interval, variances added):
    conservative, as both variants play the same seeds."""
    from rummy.quality import verdict
    from rummy_cli.sweep import unpaired_diff

    if a.quality is None or b.quality is None or not a.quality.games or not b.quality.games:
        return []
    qa, qb = a.quality.to_dict(), b.quality.to_dict()
    out = []
    for key, label, unit in (("lead_changes", "lead changes per game", "changes"),
                             ("decided_share", "decided after (share of the game's rounds)",
                              "%"),
                             ("decision_share", "meld phases with more than one play", "%")):
        e = unpaired_diff(qb[key], qa[key])  # A − B
        if e is not None:
            out.append(verdict(label, e["diff"], e["low"], e["high"], games, unit))
    ta = {(t["stronger"], t["weaker"]): t for t in qa["skill_trace"]}
    for t in qb["skill_trace"]:
        u = ta.get((t["stronger"], t["weaker"]))
        if u is not None:
            e = unpaired_diff({"value": t["margin"], "low": t["low"], "high": t["high"]},
                      {"value": u["margin"], "low": u["low"], "high": u["high"]})
            if e is not None:
                out.append(verdict(f"skill trace ({t['stronger']} over {t['weaker']})",
                                   e["diff"], e["low"], e["high"], games, "pp"))
    return out


def ab_html(cmp: dict[str, Any], names: tuple[str, str], charts: Charts | None,
            quality: Sequence[str] = ()) -> str:
    """The A/B section: which variant is A and which B, a verdict in words per bot, seat
    and game length (:func:`rummy.quality.verdict`), one chart per unit, and a table of the
    paired differences (win rates in points of percent, lengths in rounds and turns)."""
    from rummy.quality import verdict

    g = cmp["games"]
    rows = ab_verdicts(cmp)
    out = [f"<h2>A/B: paired over {g} games</h2><ul class=variants>"
           f"<li id=variant-a>{_esc(names[0])}</li><li id=variant-b>{_esc(names[1])}</li>"
           "</ul><h3>Verdict (differences A − B, 95% paired CI)</h3><ul id=verdict>"]
    for kind, label, e, unit in rows:
        out.append(f"<li class=verdict data-kind={kind}>"
                   f"{_esc(verdict(label, e['diff'], e['low'], e['high'], g, unit))}</li>")
    out.append("</ul>")
    from rummy_cli.sweep import MANY

    out.append(f"<p>{_esc(MANY)}</p>")
    if cmp.get("quality") is not None:
        out.append("<p>Every figure is paired game by game (the same seed under A and B); "
                   "its 95% interval is clustered by game (ratios: delta method); "
                   "definitions: docs/metrics.md.</p>")
    elif quality:  # a batch whose chunks predate the paired quality sums
        out.append("<h3>Game quality, A − B (unpaired 95% CI: conservative)</h3><ul>"
                   + "".join(f"<li class=quality-verdict>{_esc(v)}</li>" for v in quality)
                   + "</ul>")
    if charts is not None:
        out.append("<div class=plots>")
        out.extend(unit_charts([(lab, e, u) for _, lab, e, u in rows]
                               + [("turns per round", cmp["turns_per_round"],
                                   "turns/round")],
                               charts))
        out.append("</div>")

    def cell(x: float | None, unit: str, sign: bool = False) -> str:
        if x is None:
            return "n/a"
        if unit in ("pp", "%"):
            return f"{100 * x:+.1f} pp" if sign else f"{100 * x:.1f}%"
        return f"{x:+.2f}" if sign else f"{x:.2f}"

    table = [[lab, cell(e["a"], u), cell(e["b"], u), cell(e["diff"], u, True),
              "n/a" if e["low"] is None else
              f"{cell(e['low'], u, True)} … {cell(e['high'], u, True)}", u]
             for _, lab, e, u in rows + [("length", "turns per round", cmp["turns_per_round"],
                                           "turns/round")]]
    out.append(_table(["metric", "A", "B", "A − B", "95% CI", "unit"], table))
    slots = cmp.get("slot_win_rate") or []
    if any(e["bot_a"] != e["bot_b"] for e in slots):
        out.append("<p>Line-up slots (the bot at each position of --bots under A / B): "
                   + "; ".join(f"slot {i} {_esc(e['bot_a'])}/{_esc(e['bot_b'])} "
                               f"{cell(e['diff'], 'pp', True)}" for i, e in enumerate(slots))
                   + ".</p>")
    return "".join(out)


def to_html(doc: dict[str, Any]) -> str:
    """One self-contained HTML page (inline CSS and SVG charts drawn by matplotlib, no
    scripts, no external files). Without matplotlib (the ``report`` extra) the page says
    so where the charts would be and keeps every table."""
    spec = doc.get("spec") or {}
    rep = doc["report"]
    title = f"Balance report — batch {doc.get('batch_id', '?')}"
    out = ["<!doctype html><html lang=en><head><meta charset=utf-8>",
           f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{_esc(title)}</h1>"]
    if not doc.get("complete", True):
        out.append(f"<p><strong>Partial report:</strong> {doc['chunks_done']} of "
                   f"{doc['chunks']} chunks.</p>")
    out.append("<p>Batch spec: <code>" + _esc(json.dumps(spec, sort_keys=True)) + "</code></p>")
    missing = matplotlib_missing()
    charts = None if missing else Charts()
    if missing:
        out.append(missing_note(missing))
    if isinstance(rep, ABReport):
        names = variant_names(spec)
        out.append(ab_html(rep.compare, names, charts,
                           quality_verdicts(rep.a, rep.b, rep.compare["games"])))
        out.append(_report_html(rep.a, f"Variant {names[0]}", charts))
        out.append(_report_html(rep.b, f"Variant {names[1]}", charts))
    else:
        out.append(_report_html(rep, "Balance report", charts))
    out.append("</body></html>\n")
    return "".join(out)
