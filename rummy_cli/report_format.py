"""Terminal rendering (rich) of balance reports, game states and events. CLI side only."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table as RichTable

from rummy.balance import BalanceReport
from rummy.cards import format_card
from rummy.events import Event, to_dict
from rummy.lifecycle import controller_text
from rummy.melds import table_text
from rummy.quality import DEFINITIONS, fmt
from rummy.state import GameState


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _ci(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"{100 * low:.1f}–{100 * high:.1f}%"


def quality_rows(rep: BalanceReport) -> list[tuple[str, str, str, str]]:
    """The game-quality figures of a report as text rows ``(metric, value, 95% CI,
    definition)`` (:mod:`rummy.quality`, docs/metrics.md); spreads and the games a skill
    gap needs are in the value cell. Empty when the report has no quality sums."""
    q = rep.quality
    if q is None or not q.games:
        return []
    out = []
    for t in q.skill:
        ci = ("n/a" if t.margin.low is None or t.margin.high is None
              else f"{100 * t.margin.low:+.1f} to {100 * t.margin.high:+.1f} pp")
        need = f"; {t.games_needed} games to detect" if t.games_needed else ""
        out.append((f"skill trace: {t.stronger} over {t.weaker}",
                    f"{100 * t.margin.mean:+.1f} pp{need}", ci, DEFINITIONS["skill_trace"]))
    for key, label, value, low, high, unit in q.rows():
        if key == "skill_trace":
            continue
        text = fmt(value, unit) + ("" if unit in ("%", "pp", "round") else f" {unit}")
        if key in ("rounds", "turns"):
            sd = q.rounds.sd if key == "rounds" else q.turns.sd
            text += "" if sd is None else f" (sd {sd:.2f})"
        ci = "n/a" if low is None or high is None else f"{fmt(low, unit)} – {fmt(high, unit)}"
        out.append((label, text, ci, DEFINITIONS[key]))
    return out


def render_quality(rep: BalanceReport, console: Console) -> None:
    """Print the game-quality table of a report (nothing when it has none)."""
    rows = quality_rows(rep)
    if not rows:
        return
    q = rep.quality
    assert q is not None
    t = RichTable(title=f"Game quality over {q.games} games (95% CI clustered by game; "
                  f"plays sampled at {q.sampled} of {q.meld_phases} meld phases; "
                  "definitions: docs/metrics.md)")
    for col in ("metric", "value", "95% CI"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for label, value, ci, _ in rows:
        t.add_row(label, value, ci)
    console.print(t)
    for s in q.skill:
        console.print(f"Skill trace: {s.verdict}", highlight=False)
    if q.sample_errors:
        console.print(f"[yellow]warning:[/yellow] the plays could not be counted at "
                      f"{q.sample_errors} sampled meld phase(s) (left out)", highlight=False)
    seen = set()
    for label, _, _, definition in rows:  # one line each, once per metric
        name = label.split(":")[0]
        if name not in seen:
            seen.add(name)
            console.print(f"[dim]{name}: {definition}[/dim]", highlight=False)


def render(rep: BalanceReport, console: Console, title: str = "Balance report") -> None:
    """Print a :class:`rummy.balance.BalanceReport` as tables, with its seat-fairness
    verdict and warnings in words."""
    console.print(f"[bold]{title}[/bold]")
    summary = RichTable(show_header=False, box=None)
    summary.add_row("games", str(rep.games))
    summary.add_row("players", str(rep.players))
    summary.add_row("rounds per game", f"{rep.rounds_per_game:.2f}")
    summary.add_row("turns per round", f"{rep.turns_per_round:.2f}")
    console.print(summary)
    seats = RichTable(title="Win rate by seat (95% CI, Wilson over games)")
    for col in ("seat", "win rate", "95% CI", "games"):
        seats.add_column(col, justify="right")
    for i, r in enumerate(rep.seats):
        seats.add_row(str(i), _pct(r.rate), _ci(r.low, r.high), str(r.n))
    console.print(seats)
    console.print(f"Seat fairness (chi-square test against 1/{rep.players}): "
                  f"{rep.fairness.verdict}", highlight=False)
    bots = RichTable(title="By bot (95% CI clustered by game; naive: seat-games as if "
                     "independent)")
    # fits 80 columns with every interval whole (a cut "(22.4–29.4…" hid the upper bound):
    # the headers and the mean score's interval take a line of their own instead, and no
    # cell is ever wrapped or cut by rich (no_wrap) at 80 columns or more
    for col in ("bot", "win rate (95% CI)", "naive CI", "seat-\ngames",
                "mean score\n(95% CI)", "points\nleft"):
        bots.add_column(col, justify="right", no_wrap=True)
    for b, s in rep.bots.items():
        lo, hi = s.score.low, s.score.high
        bots.add_row(b, f"{_pct(s.win.rate).strip()} ({_ci(s.win.low, s.win.high)})",
                     _ci(s.win.naive_low, s.win.naive_high), str(s.win.n),
                     f"{s.score.mean:.1f}" + ("" if lo is None or hi is None
                                              else f"\n({lo:.0f}–{hi:.0f})"),
                     f"{s.points_left:.1f}")
    console.print(bots)
    ends = RichTable(title="How rounds ended (share of rounds)")
    for col in ("knock", "undercut", "going out", "stock exhausted"):
        ends.add_column(col, justify="right")
    sh = rep.round_end_share
    ends.add_row(_pct(sh["knock"]), _pct(sh["undercut"]), _pct(sh["going_out"]),
                 _pct(sh["stock"]))
    console.print(ends)
    render_quality(rep, console)
    for w in rep.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    failed = rep.failed_games
    if failed:
        fails = RichTable(title=f"Failed games ({len(failed)}; not counted above)")
        fails.add_column("game index", justify="right")
        fails.add_column("error")
        for index, error in failed[:20]:
            fails.add_row(str(index), error)
        if len(failed) > 20:
            fails.add_row("…", f"{len(failed) - 20} more (see the JSON report)")
        console.print(fails)


def event_line(e: Event) -> str:
    """One readable line for an event (cards in notation)."""
    d = to_dict(e)
    d.pop("v", None)
    etype = d.pop("type")
    if etype == "RoundStarted" and d.get("deck"):
        d["deck"] = f"<{len(d['deck'])} cards>"
    parts = []
    for k, v in d.items():
        if v is None or v == [] or k == "rules":
            continue
        if isinstance(v, list) and v and isinstance(v[0], list):
            v = " | ".join(" ".join(x) for x in v)
        elif isinstance(v, list):
            v = " ".join(map(str, v))
        parts.append(f"{k}={v}")
    return f"{etype} " + " ".join(parts)


def state_text(s: GameState) -> str:
    """Multi-line public description of a state (no hands except sizes, no stock order)."""
    lines = [f"version {s.version}  round {s.round}  dealer {s.dealer}  turn {s.turn}  "
             f"phase {s.phase}  draws {s.draws}  stock {s.stock_size}"
             + (f"  final turns left {s.final_turns_left}" if s.final_turns_left is not None
                else ""),
             f"  table: {table_text(s.table)}",
             "  hand sizes: " + " ".join(f"{i}:{len(h)}" for i, h in enumerate(s.hands)),
             "  totals: " + " ".join(f"{i}:{t}" for i, t in enumerate(s.totals))]
    if s.control is not None:  # a served game whose seats changed hands (§13)
        lines.append("  played by: " + " ".join(
            f"{i}:{controller_text(c)}" for i, c in enumerate(s.control.controllers)))
    return "\n".join(lines)


def hand_text(hand: tuple[int, ...]) -> str:
    """Space-separated notation of a hand."""
    return " ".join(format_card(c) for c in hand)
