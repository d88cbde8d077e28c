"""The HTML reports rendered by headless Chromium: the sweep page of
``rummy sweep`` / ``rummy batch sweep`` and the balance report page of ``rummy batch
report`` show their matplotlib charts.

For each page, Chromium loads a copy with a probe script appended (the reports themselves
have no script) that measures, in the laid-out page, every chart's size, the paths with a
non-empty bounding box and the texts; ``--dump-dom`` returns the measurements. A screenshot
of the page must show the charts' colours.

Skips (with the reason) when no Chromium or no matplotlib is installed; `.ci/run` installs
Chromium, ``make setup`` the ``report`` extra.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rummy.balance import BalanceReport
from rummy.rules import RuleSet
from rummy.simulate import play_range
from rummy_cli.charts import PALETTE, matplotlib_missing
from rummy_cli.sweep import parse_sweep, render_html, sweep_document

BROWSER = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                     "google-chrome", "chrome")) if p), None)
pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (apt-get install -y "
                       "chromium; .ci/run installs it): the report pages are not rendered"),
    pytest.mark.skipif(matplotlib_missing() is not None,
                       reason="matplotlib missing (the 'report' extra): no charts to render"),
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-extensions"]
PROBE = """<script>
const charts = [...document.querySelectorAll('svg.chart')].map(s => {
  const r = s.getBoundingClientRect();
  const drawn = [...s.querySelectorAll('path')].filter(p => {
    const b = p.getBBox(); return b.width > 0 || b.height > 0; }).length;
  return {label: s.getAttribute('aria-label'), width: r.width, height: r.height,
          paths: drawn, texts: s.querySelectorAll('text').length};
});
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = JSON.stringify(charts);
document.body.appendChild(pre);
</script>"""


def measure(page: Path, tmp: Path) -> list[dict[str, Any]]:
    """The probe's measurements of every chart of ``page``, as laid out by Chromium."""
    assert BROWSER is not None
    probe = tmp / f"probe-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</html>", PROBE + "</html>"),
                     encoding="utf-8")
    out = subprocess.run([BROWSER, *FLAGS, "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', out, flags=re.DOTALL)
    assert found, out[-2000:]
    return list(json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<")
                           .replace("&gt;", ">").replace("&quot;", '"')))


def screenshot_colours(page: Path, tmp: Path) -> set[tuple[int, int, int]]:
    """The set of RGB colours of a 1400×2400 screenshot of ``page``."""
    from PIL import Image  # a dependency of matplotlib

    assert BROWSER is not None
    png = tmp / f"{page.stem}.png"
    subprocess.run([BROWSER, *FLAGS, "--window-size=1400,2400", f"--screenshot={png}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    with Image.open(png) as im:
        assert im.size == (1400, 2400)
        return {c for _, c in im.convert("RGB").getcolors(maxcolors=1 << 20) or []}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _check(charts: list[dict[str, Any]], labels: list[str]) -> None:
    assert [c["label"] for c in charts] == labels
    for c in charts:
        assert c["width"] > 200 and c["height"] > 120, c  # laid out at a readable size
        assert c["paths"] >= 6, c  # axes, ticks, lines or bars, error bars: drawn
        assert c["texts"] >= 4, c  # title, axis labels, tick labels


def test_sweep_page_shows_every_chart(tmp_path: Path) -> None:
    combos = parse_sweep(["knock_threshold=0,10"])
    bots = ["greedy", "human", "random"]
    reports = [BalanceReport.of(play_range(bots, 4, 0, 6, RuleSet.from_dict(c)))
               .with_run(4, bots, RuleSet.from_dict(c).changed()) for c in combos]
    doc = sweep_document(combos, reports, games=6, players=3, seed=4, bots=bots, seconds=0)
    page = tmp_path / "sweep.html"
    page.write_text(render_html(doc), encoding="utf-8")
    _check(measure(page, tmp_path),
           ["Win rate by seat", "Win rate by bot (per seat-game)", "Game length",
            "How rounds ended", "Mean points left at a round's end",
            "Skill trace: win-rate margin", "Turns per game", "Drama: lead changes per game",
            "Decisiveness and decisions"])
    colours = screenshot_colours(page, tmp_path)
    assert {_rgb(c) for c in PALETTE[:3]} <= colours  # the three bots' lines are painted


def test_balance_report_page_shows_every_chart(tmp_path: Path) -> None:
    from rummy_worker.batches import BatchSpec, batch_report, merge_results
    from rummy_worker.chunks import compute_chunk
    from rummy_worker.output import to_html

    spec = BatchSpec(games=6, bots=("greedy", "human", "random"), seed=2, chunk_size=3)
    merged = merge_results(spec.players, [compute_chunk(spec, i) for i in range(spec.chunks)])
    doc = {"batch_id": "b1", "spec": spec.to_dict(), "chunks": spec.chunks,
           "chunks_done": spec.chunks, "complete": True, "report": batch_report(spec, merged)}
    page = tmp_path / "report.html"
    page.write_text(to_html(doc), encoding="utf-8")
    _check(measure(page, tmp_path),
           ["Win rate by seat", "Win rate by bot (per seat-game)", "Final score: greedy",
            "Final score: human", "Final score: random", "Rounds per game",
            "Turns per round"])
    assert _rgb(PALETTE[0]) in screenshot_colours(page, tmp_path)


VERDICT_PROBE = """<script>
const seen = {
  variants: [...document.querySelectorAll('ul.variants li')].map(e => e.innerText),
  verdicts: [...document.querySelectorAll('li.verdict')].map(e => e.innerText),
  commands: [...document.querySelectorAll('code.ab-command')].map(e => e.innerText),
  headings: [...document.querySelectorAll('section.compare h2')].map(e => e.innerText),
};
const pre = document.createElement('pre');
pre.id = 'verdicts';
pre.textContent = JSON.stringify(seen);
document.body.appendChild(pre);
</script>"""


def read_verdicts(page: Path, tmp: Path) -> dict[str, list[str]]:
    """The variant names, verdicts and `rummy batch ab` commands as Chromium renders them
    (``innerText``: what a reader sees, laid out)."""
    assert BROWSER is not None
    probe = tmp / f"verdicts-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</html>",
                                                              VERDICT_PROBE + "</html>"),
                     encoding="utf-8")
    out = subprocess.run([BROWSER, *FLAGS, "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r'<pre id="verdicts">(.*?)</pre>', out, flags=re.DOTALL)
    assert found, out[-2000:]
    return dict(json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<")
                           .replace("&gt;", ">").replace("&quot;", '"')))


def test_ab_page_names_the_variants_and_states_a_verdict_per_bot(tmp_path: Path) -> None:
    from rummy_worker.batches import BatchSpec, batch_report, merge_results
    from rummy_worker.chunks import compute_chunk
    from rummy_worker.output import to_html

    spec = BatchSpec(games=8, bots=("greedy", "random", "greedy"), seed=2, chunk_size=4,
                     compare_rules={"knock_threshold": 10})
    merged = merge_results(spec.players, [compute_chunk(spec, i) for i in range(spec.chunks)])
    rep = batch_report(spec, merged)
    doc = {"batch_id": "ab", "spec": spec.to_dict(), "chunks": spec.chunks,
           "chunks_done": spec.chunks, "complete": True, "report": rep}
    page = tmp_path / "ab.html"
    page.write_text(to_html(doc), encoding="utf-8")
    seen = read_verdicts(page, tmp_path)
    assert seen["variants"] == ["A = rules default; bots greedy,random,greedy",
                                "B = rules knock_threshold=10; bots greedy,random,greedy"]
    verdicts = seen["verdicts"]
    assert [v.split(":")[0] for v in verdicts] == [
        "greedy win rate", "random win rate", "seat 0 win rate", "seat 1 win rate",
        "seat 2 win rate", "rounds per game", "turns per game",
        # every game-quality figure, paired game by game
        "skill trace (greedy over random)", "lead changes per game",
        "largest deficit a winner came back from", "games won from behind",
        "decided after round", "decided after (share of the game's rounds)",
        "meld phases with more than one play", "distinct plays per meld phase",
        "games in which a round ran the stock out"]
    from rummy_worker.output import ab_verdicts

    from rummy.quality import verdict

    cmp = rep.compare  # type: ignore[union-attr]
    assert verdicts == [verdict(label, e["diff"], e["low"], e["high"], 8, unit)
                        for _, label, e, unit in ab_verdicts(cmp)]
    seat0 = cmp["seat_win_rate"][0]
    assert seat0["low"] < 0 < seat0["high"]  # 8 games: too few to tell
    assert re.fullmatch(r"seat 0 win rate: no detectable change at this sample size \(8 "
                        r"games, 95% CI -?\d+\.\d to -?\d+\.\d points\); about \d+ games "
                        r"would detect ±2\.0 points", verdicts[2])
    # one chart of differences per unit, each laid out and drawn
    _check([c for c in measure(page, tmp_path) if "(95% paired CI)" in c["label"]],
           [f"{title}, A − B (95% paired CI)" for title in (
               "Win rates and skill trace",
               "Shares of games and meld phases", "Rounds per game",
               "Turns per game", "Turns per round", "Drama: lead changes per game",
               "Comeback: largest deficit overcome", "Decided after round",
               "Distinct plays per meld phase")])


def test_sweep_page_states_the_difference_and_the_ab_command(tmp_path: Path) -> None:
    combos = parse_sweep(["joker_moves=free,locked"])
    bots = ["strategic", "greedy"]
    reports = [BalanceReport.of(play_range(bots, 4, 0, 6, RuleSet.from_dict(c)))
               .with_run(4, bots, RuleSet.from_dict(c).changed()) for c in combos]
    doc = sweep_document(combos, reports, games=6, players=2, seed=4, bots=bots, seconds=0)
    page = tmp_path / "sweep.html"
    page.write_text(render_html(doc), encoding="utf-8")
    seen = read_verdicts(page, tmp_path)
    assert seen["headings"] == ["B − A, where A = rules joker_moves=free and B = rules "
                                "joker_moves=locked"]
    assert seen["commands"] == ["rummy batch ab --games 6 --players 2 --bots strategic,greedy "
                                "--seed 4 --rules joker_moves=free --compare-rules "
                                "joker_moves=locked --wait --html ab.html"]
    names = [v.split(":")[0] for v in seen["verdicts"]]
    skill = doc["sweep"][0]["quality"]["skill_trace"][0]
    assert names == [
        "greedy win rate", "strategic win rate",
        f"skill trace ({skill['stronger']} over {skill['weaker']})", "turns per game",
        "rounds per game", "lead changes per game",
        "decided after (share of the game's rounds)", "meld phases with more than one play"]
    # sweep_document without per-game rows (as `rummy batch sweep` writes it): unpaired
    assert seen["verdicts"] == [e["verdict"] + " (unpaired)"
                                for e in doc["compare"][0]["diffs"]]
    turns = next(e for e in doc["compare"][0]["diffs"] if e["metric"] == "turns per game")
    assert seen["verdicts"][3] == turns["verdict"] + " (unpaired)"
    assert "under joker_moves=locked than under joker_moves=free" in turns["verdict"] or \
        "no detectable change at this sample size (6 games" in turns["verdict"]


def test_a_paired_sweep_page_states_every_figure_paired_with_a_chart_per_unit(
        tmp_path: Path) -> None:
    from rummy.paired_quality import result_figures
    from rummy_cli.sweep import paired_compare

    combos = parse_sweep(["knock_threshold=0,10"])
    bots = ["greedy", "random"]
    reports, games = [], []
    for c in combos:
        rows: dict[int, dict[str, int]] = {}
        agg = play_range(bots, 4, 0, 6, RuleSet.from_dict(c),
                         on_game=lambda i, r, _s, rows=rows: rows.__setitem__(
                             i, result_figures(r)))
        reports.append(BalanceReport.of(agg).with_run(4, bots, RuleSet.from_dict(c).changed()))
        games.append(rows)
    paired = [paired_compare(games[0], games[1], "knock_threshold=0", "knock_threshold=10")]
    doc = sweep_document(combos, reports, games=6, players=2, seed=4, bots=bots, seconds=0,
                         paired=paired)
    page = tmp_path / "sweep.html"
    page.write_text(render_html(doc), encoding="utf-8")
    seen = read_verdicts(page, tmp_path)
    diffs = doc["paired_compare"][0]["diffs"]
    assert all(e["paired"] for e in diffs)  # every figure paired: none left unpaired
    assert seen["verdicts"] == [e["verdict"] for e in diffs]
    assert [v.split(":")[0] for v in seen["verdicts"]][:5] == [
        "greedy win rate", "random win rate", "seat 0 win rate", "seat 1 win rate",
        "skill trace (greedy over random)"]
    turns = next(e for e in diffs if e["metric"] == "turns per game")
    a, b = (sum(g[i]["turns"] for i in range(6)) / 6 for g in games)
    assert turns["diff"] == pytest.approx(b - a) and turns["games"] == 6
    charts = [c for c in measure(page, tmp_path) if "B − A" in c["label"]]
    units = {e["unit"] for e in diffs}
    assert len(charts) == len(units)  # one chart per unit
    _check(charts, [c["label"] for c in charts])
    assert charts[0]["label"] == "Win rates and skill trace, B − A (95% paired CI)"
