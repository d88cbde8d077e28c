"""Charts of the HTML reports, drawn by matplotlib and embedded as inline SVG.

matplotlib (the ``report`` extra) renders each chart with its SVG backend into an
``io.StringIO``; the ``<svg>`` element is put into the page as it is, so a report stays one
self-contained file (no script, no image file, no external resource). Only
:class:`matplotlib.figure.Figure` is used, never ``pyplot``: no global figure state, no GUI
backend, nothing left open.

Without matplotlib the HTML reports still render, with :func:`missing_note` where the
charts would be (the terminal, JSON and CSV reports never need it).

Determinism: text stays text (``svg.fonttype = none``), no date is written, and the ids
matplotlib gives clip paths and markers are salted with the chart's number on its page
(:class:`Charts` counts them), so the same report gives the same page byte for byte.
Every element id of a chart (matplotlib also numbers its artists ``figure_1``, ``axes_1``,
``line2d_3`` ... afresh in each figure) is prefixed with ``c<number>-`` together with every
reference to it (``href="#..."``, ``url(#...)``) by :func:`prefix_ids`, so that two charts
of one page never share an id (HTML requires unique ids).
"""

from __future__ import annotations

import html
import io
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

#: colours of successive series (colour-blind safe "tableau" order of matplotlib)
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948",
           "#9c755f")
#: an interval of a series point: ``(value, low, high)``; ``low``/``high`` ``None`` when
#: the figure has no interval; a whole point ``None`` when the value has no such series
Point = tuple[float, float | None, float | None] | None


def matplotlib_missing() -> str | None:
    """``None`` when matplotlib can be imported, else the reason in one line."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        return f"{e}"
    return None


def missing_note(reason: str) -> str:
    """The HTML paragraph that stands in for the charts when matplotlib is missing."""
    return ("<p class=nochart><strong>Charts are not drawn:</strong> matplotlib is not "
            "installed (<code>pip install 'manipulation-rummy[report]'</code>; "
            f"{html.escape(reason)}). The tables below hold every figure.</p>")


class Charts:
    """The charts of one page; each method returns one ``<svg>`` element as a string.

    Raises (every method):
        ImportError: matplotlib is not installed (check :func:`matplotlib_missing` first).
    """

    def __init__(self) -> None:
        #: charts drawn so far on this page (salts the next chart's SVG ids)
        self.count = 0

    # -- plumbing ---------------------------------------------------------------------

    def _figure(self, width: float, height: float) -> Any:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(width, height), layout="constrained")
        return fig

    def _svg(self, fig: Any, title: str) -> str:
        """The figure as an inline ``<svg>`` element labelled ``title`` for screen readers."""
        import matplotlib

        self.count += 1
        buf = io.StringIO()
        with matplotlib.rc_context({"svg.hashsalt": f"rummy-chart-{self.count}",
                                    "svg.fonttype": "none"}):
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None,
                                                     "Format": None, "Type": None})
        text = buf.getvalue()
        text = prefix_ids(text[text.index("<svg"):], f"c{self.count}-")
        label = html.escape(title, quote=True)
        return text.replace("<svg ", f'<svg role="img" aria-label="{label}" class="chart" ',
                            1)

    @staticmethod
    def _style(ax: Any, title: str, xlabel: str, ylabel: str) -> None:
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(axis="y", color="#e5e5e5")
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)

    # -- balance report ---------------------------------------------------------------

    def rate_bars(self, labels: Sequence[str], rates: Sequence[Any], title: str,
                  reference: float | None = None) -> str:
        """Bars of rates (``ProportionCI``-like: ``rate``, ``low``, ``high``, fractions)
        drawn in percent, with their 95% intervals as error bars and, if given, a dashed
        reference line at ``reference`` (a fraction, e.g. ``1/players``)."""
        fig = self._figure(5.2, 3.0)
        ax = fig.add_subplot()
        x = list(range(len(rates)))
        vals = [100 * r.rate for r in rates]
        err = [[max(0.0, 100 * (r.rate - r.low)) for r in rates],
               [max(0.0, 100 * (r.high - r.rate)) for r in rates]]
        ax.bar(x, vals, width=0.6, color=[PALETTE[i % len(PALETTE)] for i in x])
        ax.errorbar(x, vals, yerr=err, fmt="none", ecolor="#111", capsize=5, linewidth=1.3)
        for i, r in enumerate(rates):
            ax.annotate(f"{100 * r.rate:.1f}%", (i, 100 * r.high), textcoords="offset points",
                        xytext=(0, 3), ha="center", fontsize=8)
        if reference is not None:
            ax.axhline(100 * reference, color="#777", linestyle="--", linewidth=1,
                       label=f"fair share 1/{round(1 / reference)} = {100 * reference:.1f}%")
            fig.legend(fontsize=8, loc="outside lower center", frameon=False)
        ax.set_xticks(x, list(labels))
        top = max([50.0] + [100 * r.high for r in rates])
        ax.set_ylim(0, min(100.0, top * 1.15))
        self._style(ax, title, "", "win rate (%)")
        return self._svg(fig, title)

    def histogram(self, hist: Mapping[Any, int], title: str, xlabel: str,
                  bin_width: int = 1, color: int = 0) -> str:
        """A histogram: ``hist`` maps a bin's low edge (int, or its string) to a count."""
        fig = self._figure(3.8, 2.4)
        ax = fig.add_subplot()
        from matplotlib.ticker import MaxNLocator

        counts = sorted((int(k), int(v)) for k, v in hist.items())
        # a bin of one value is centred on it; a wider bin spans [low, low + width)
        ax.bar([k for k, _ in counts], [v for _, v in counts], width=bin_width * 0.9,
               align="center" if bin_width == 1 else "edge",
               color=PALETTE[color % len(PALETTE)])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        self._style(ax, title, xlabel, "count")
        return self._svg(fig, title)

    def diffs(self, rows: Sequence[tuple[str, Mapping[str, Any]]], title: str,
              scale: float = 100.0, unit: str = "pp", axis: str = "A − B") -> str:
        """A forest plot of paired differences (``diff``, ``low``, ``high`` times
        ``scale``, in ``unit``) with a line at zero; ``axis`` names the difference."""
        fig = self._figure(6.4, max(2.0, 1.0 + 0.32 * len(rows)))
        ax = fig.add_subplot()
        y = list(range(len(rows)))[::-1]
        for yi, (_, e) in zip(y, rows, strict=True):
            d = e["diff"] * scale
            if e["low"] is not None:
                ax.errorbar([d], [yi], xerr=[[max(0.0, d - e["low"] * scale)],
                                             [max(0.0, e["high"] * scale - d)]],
                            fmt="o", color=PALETTE[0], ecolor="#111", capsize=4)
            else:
                ax.plot([d], [yi], "o", color=PALETTE[0])
        ax.axvline(0, color="#777", linewidth=1)
        ax.set_yticks(y, [lab for lab, _ in rows])
        # a long title over axes pushed right by long row labels would be cut: wrap it
        width = max(30, 60 - max((len(lab) for lab, _ in rows), default=0))
        self._style(ax, "\n".join(textwrap.wrap(title, width)),
                    f"{axis} ({unit})" if unit else axis, "")
        ax.grid(axis="x", color="#e5e5e5")
        return self._svg(fig, title)

    # -- tune report ------------------------------------------------------------------

    def front(self, points: Sequence[tuple[str, Point, Point, bool]], title: str,
              xlabel: str, ylabel: str) -> str:
        """A scatter of candidates ``(label, x, y, on_front)``, each coordinate a
        :data:`Point` with its 95% interval as an error bar; the members of the Pareto
        front are drawn in colour, joined and labelled, the others in grey."""
        fig = self._figure(7.2, 4.2)
        ax = fig.add_subplot()
        front = []
        for label, x, y, on in points:
            if x is None or y is None:
                continue
            xerr = None if x[1] is None or x[2] is None else \
                [[max(0.0, x[0] - x[1])], [max(0.0, x[2] - x[0])]]
            yerr = None if y[1] is None or y[2] is None else \
                [[max(0.0, y[0] - y[1])], [max(0.0, y[2] - y[0])]]
            ax.errorbar([x[0]], [y[0]], xerr=xerr, yerr=yerr, fmt="o",
                        color=PALETTE[0] if on else "#bbbbbb",
                        ecolor=PALETTE[0] if on else "#dddddd", capsize=3,
                        markersize=6 if on else 4, zorder=3 if on else 2)
            if on:
                front.append((x[0], y[0], label))
        front.sort()
        if len(front) > 1:
            ax.plot([f[0] for f in front], [f[1] for f in front], color=PALETTE[0],
                    linewidth=1, linestyle="--", zorder=1)
        for k, (fx, fy, label) in enumerate(front):  # alternate sides: fewer overlaps
            ax.annotate(label, (fx, fy), textcoords="offset points",
                        xytext=(5, 5) if k % 2 == 0 else (5, -11), fontsize=7)
        self._style(ax, title, xlabel, ylabel)
        ax.grid(axis="x", color="#e5e5e5")
        return self._svg(fig, title)

    # -- sweep report -----------------------------------------------------------------

    def sweep(self, values: Sequence[str], variable: str, series: Mapping[str, Sequence[Point]],
              title: str, ylabel: str, percent: bool = False,
              reference: float | None = None,
              groups: Sequence[Any] | None = None, zero: bool = False) -> str:
        """One metric against the variant value: a line per series with 95% error bars.

        Args:
            values: the tick label of each variant value (or combination), in sweep order.
            variable: the x-axis label (the variant's name, or names joined by " / ").
            series: series name -> one :data:`Point` per value (fractions when ``percent``,
                drawn in percent; else in the figure's own unit, named by ``ylabel``).
            reference: a dashed line at this fraction (``1/players`` for win rates).
            groups: for a grid of several variants, a key per value (the values of every
                variant but the last): a series' line joins only neighbouring values of one
                key, and a dotted rule separates the keys, so that combinations that differ
                in another variant are not drawn as one trend (:func:`segments`). ``None``:
                one line through every value.
            zero: draw a line at 0 and let the axis go below it (differences, margins).
        """
        fig = self._figure(6.4, 3.2)
        ax = fig.add_subplot()
        k = 100.0 if percent else 1.0
        n = max(1, len(series))
        for j, (name, points) in enumerate(series.items()):
            shift = (j - (n - 1) / 2) * min(0.08, 0.5 / n)  # side by side, not on top
            xs, ys, lo, hi = [], [], [], []
            at: dict[int, tuple[float, float]] = {}  # value index -> its point
            for i, p in enumerate(points):
                if p is None:
                    continue
                v, low, high = p
                at[i] = (i + shift, k * v)
                xs.append(i + shift)
                ys.append(k * v)
                lo.append(0.0 if low is None else max(0.0, k * (v - low)))
                hi.append(0.0 if high is None else max(0.0, k * (high - v)))
            color = PALETTE[j % len(PALETTE)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", markersize=4, capsize=3,
                        linewidth=1.3, linestyle="none", color=color, label=name)
            for run in segments(groups if groups is not None else [None] * len(points)):
                line = [at[i] for i in run if i in at]
                if len(line) > 1:
                    ax.plot([x for x, _ in line], [y for _, y in line], linewidth=1.3,
                            color=color)
        for i in range(1, len(values)):
            if groups is not None and groups[i] != groups[i - 1]:
                ax.axvline(i - 0.5, color="#bbb", linestyle=":", linewidth=1)
        if reference is not None:
            ax.axhline(k * reference, color="#777", linestyle="--", linewidth=1,
                       label=f"1/{round(1 / reference)} = {k * reference:.1f}"
                       + ("%" if percent else ""))
        ticks = ["\n".join(textwrap.wrap(v, 18)) or v for v in values]
        ax.set_xticks(range(len(values)), ticks)
        ax.set_xlim(-0.5, len(values) - 0.5)
        if zero:
            ax.axhline(0, color="#777", linewidth=1)
        elif percent:
            ax.set_ylim(bottom=0)
        self._style(ax, title, variable, ylabel)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return self._svg(fig, title)


_ID = re.compile(r'\bid="([^"]+)"')


def prefix_ids(svg: str, prefix: str) -> str:
    """``svg`` with every ``id="X"`` renamed ``prefix + X`` and every reference to those
    ids (``href="#X"``, ``xlink:href="#X"``, ``url(#X)``) renamed with it; other text is
    unchanged."""
    ids = set(_ID.findall(svg))
    if not ids:
        return svg

    def ref(m: re.Match[str]) -> str:
        name = m.group(2)
        return f"{m.group(1)}{prefix}{name}" if name in ids else m.group(0)

    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    return re.sub(r'(href="#|url\(#)([^")]+)', ref, svg)


def segments(groups: Sequence[Any]) -> list[list[int]]:
    """Runs of neighbouring indices with equal keys: ``[a, a, b, b, a]`` ->
    ``[[0, 1], [2, 3], [4]]``; the indices a sweep chart may join with one line."""
    runs: list[list[int]] = []
    for i, key in enumerate(groups):
        if runs and groups[runs[-1][-1]] == key:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


#: the axis of each unit's chart of differences: (scale to the axis, axis unit, title)
UNIT_CHARTS: dict[str, tuple[float, str, str]] = {
    "pp": (100.0, "points of percent", "Win rates and skill trace"),
    "%": (100.0, "points of percent", "Shares of games and meld phases"),
    "rounds": (1.0, "rounds", "Rounds per game"),
    "turns": (1.0, "turns", "Turns per game"),
    "turns/round": (1.0, "turns per round", "Turns per round"),
    "changes": (1.0, "lead changes", "Drama: lead changes per game"),
    "points": (1.0, "points", "Comeback: largest deficit overcome"),
    "round": (1.0, "round", "Decided after round"),
    "plays": (1.0, "plays", "Distinct plays per meld phase"),
}


def unit_charts(rows: Sequence[tuple[str, dict[str, Any], str]], charts: Charts,
                axis: str = "A − B") -> list[str]:
    """One chart of differences per unit (:data:`UNIT_CHARTS` order; a unit with no row
    draws none): ``rows`` are ``(label, entry, unit)``, entries ``{diff, low, high}``."""
    out = []
    for unit, (scale, shown, title) in UNIT_CHARTS.items():
        mine = [(label, e) for label, e, u in rows if u == unit]
        if mine:
            out.append(charts.diffs(mine, f"{title}, {axis} (95% paired CI)", scale=scale,
                                    unit=shown, axis=axis))
    return out


__all__ = ["Charts", "PALETTE", "Point", "UNIT_CHARTS", "matplotlib_missing", "missing_note",
           "prefix_ids", "segments", "unit_charts"]
