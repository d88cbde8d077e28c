"""Report outputs: JSON equals the report, CSV is tidy, HTML is one self-contained file."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import xml.etree.ElementTree as ET

import pytest
from rich.console import Console
from rummy_worker.batches import ABReport, BatchSpec, batch_report, merge_results
from rummy_worker.chunks import compute_chunk
from rummy_worker.output import render_terminal, to_csv, to_dict, to_html, to_json


def _doc(spec: BatchSpec) -> dict:
    merged = merge_results(spec.players, [compute_chunk(spec, i) for i in range(spec.chunks)])
    return {"batch_id": "t1", "spec": spec.to_dict(), "chunks": spec.chunks,
            "chunks_done": spec.chunks, "complete": True, "report": batch_report(spec, merged)}


PLAIN = BatchSpec(games=6, bots=("basic", "random", "random"), seed=1, chunk_size=4)
AB = BatchSpec(games=6, bots=("basic", "random"), seed=1, chunk_size=4,
               compare_bots=("random", "random"))


@pytest.fixture(scope="module", params=["plain", "ab"])
def doc(request: pytest.FixtureRequest) -> dict:
    return _doc(PLAIN if request.param == "plain" else AB)


def test_json_round_trips(doc: dict) -> None:
    assert json.loads(to_json(doc)) == json.loads(json.dumps(to_dict(doc)))
    rep = doc["report"]
    plain = rep.a if isinstance(rep, ABReport) else rep
    assert json.loads(to_json(doc))["report"].get("a", json.loads(to_json(doc))["report"])[
        "bot_win_rate"]["basic"]["rate"] == plain.bots["basic"].win.rate


def test_csv_has_the_win_rates(doc: dict) -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(doc))))
    rep = doc["report"].a if isinstance(doc["report"], ABReport) else doc["report"]
    seats = [r for r in rows if r["metric"] == "seat_win_rate" and r["variant"] == "a"]
    assert [float(r["value"]) for r in seats] == [e.rate for e in rep.seats]
    assert {r["metric"] for r in rows} >= {"games", "bot_win_rate", "round_end_share",
                                           "rounds_hist", "turns_hist"}
    if isinstance(doc["report"], ABReport):
        assert any(r["variant"] == "a-b" and r["metric"] == "slot_win_rate" for r in rows)


def test_html_is_self_contained_with_plots(doc: dict) -> None:
    page = to_html(doc)
    assert page.startswith("<!doctype html>")
    assert not re.search(r"<script|<link|<img|@import|src=", page)
    # the only URLs are the SVG and XLink namespaces of matplotlib's inline SVG
    assert set(re.findall(r"https?://[^\"' ]+", page)) == {"http://www.w3.org/2000/svg",
                                                          "http://www.w3.org/1999/xlink"}
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.DOTALL)
    titles = [ET.fromstring(s).get("aria-label") for s in svgs]  # each is well-formed XML
    assert "Win rate by seat" in titles
    assert any(t.startswith("Final score: ") for t in titles)
    if isinstance(doc["report"], ABReport):
        assert any("A − B" in t for t in titles)
    assert page == to_html(doc)  # deterministic, byte for byte


def test_html_without_matplotlib_says_so(doc: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The HTML report needs matplotlib only for its charts: without it the page says so
    and keeps every table; JSON, CSV and the terminal never import it."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    page = to_html(doc)
    assert "<svg" not in page and "matplotlib is not installed" in page
    assert "Win rate by seat" in page and "<table>" in page
    to_json(doc), to_csv(doc)
    render_terminal(doc, Console(file=io.StringIO(), width=140))


def test_terminal_render(doc: dict) -> None:
    console = Console(file=io.StringIO(), width=140)
    render_terminal(doc, console)
    text = console.file.getvalue()
    assert "Win rate by seat" in text and "Final score distribution" in text
    if isinstance(doc["report"], ABReport):
        assert "A − B, paired over 6 games" in text
