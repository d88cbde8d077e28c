"""Terminal rendering (rich) of balance reports, game states and events. CLI side only."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from rummy.cards import format_card
from rummy.events import Event, to_dict
from rummy.melds import table_text
from rummy.state import GameState


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def render(rep: dict[str, Any], console: Console, title: str = "Balance report") -> None:
    """Print a balance report (:func:`rummy.simulate.report` output) as tables."""
    console.print(f"[bold]{title}[/bold]")
    summary = RichTable(show_header=False, box=None)
    summary.add_row("games", str(rep["games"]))
    summary.add_row("players", str(rep["players"]))
    summary.add_row("rounds per game", f"{rep['rounds_per_game']:.2f}")
    summary.add_row("turns per round", f"{rep['turns_per_round']:.2f}")
    console.print(summary)
    seats = RichTable(title="Win rate by seat (95% CI, Wilson)")
    for col in ("seat", "win rate", "95% CI", "games"):
        seats.add_column(col, justify="right")
    for i, r in enumerate(rep["seat_win_rate"]):
        seats.add_row(str(i), _pct(r["rate"]), f"{_pct(r['low'])} – {_pct(r['high'])}",
                      str(r["n"]))
    console.print(seats)
    bots = RichTable(title="Win rate by bot (95% CI, Wilson; per seat-game)")
    for col in ("bot", "win rate", "95% CI", "seat-games", "mean final score",
                "mean points left"):
        bots.add_column(col, justify="right")
    for b, r in rep["bot_win_rate"].items():
        bots.add_row(b, _pct(r["rate"]), f"{_pct(r['low'])} – {_pct(r['high'])}", str(r["n"]),
                     f"{rep['bot_mean_score'][b]:.1f}", f"{rep['bot_mean_points_left'][b]:.1f}")
    console.print(bots)
    ends = RichTable(title="How rounds ended (share of rounds)")
    for col in ("knock", "undercut", "going out", "stock exhausted"):
        ends.add_column(col, justify="right")
    s = rep["round_end_share"]
    ends.add_row(_pct(s["knock"]), _pct(s["undercut"]), _pct(s["going_out"]), _pct(s["stock"]))
    console.print(ends)
    failed = rep.get("failed_games") or []
    if failed:
        fails = RichTable(title=f"Failed games ({len(failed)}; not counted above)")
        fails.add_column("game index", justify="right")
        fails.add_column("error")
        for f in failed[:20]:
            fails.add_row(str(f["index"]), f["error"])
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
    return "\n".join(lines)


def hand_text(hand: tuple[int, ...]) -> str:
    """Space-separated notation of a hand."""
    return " ".join(format_card(c) for c in hand)
