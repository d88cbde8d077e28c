"""The replay page rendered by headless Chromium: stepping through a golden game shows, at
every step checked, the table, stock and scores `rummy replay LOG --at N` prints.

Skips (with the reason) when no Chromium is installed; `.ci/run` installs the Debian
package. Regenerate the reference screenshot for humans, docs/replay-page.png (not compared
pixel by pixel), with ``python -m tests.unit.test_replay_browser``.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rummy.events import dumps
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy_cli.main import main
from rummy_cli.replay import read_log, replay_events

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
BROWSER = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                     "google-chrome", "chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium installed (apt-get install -y chromium; .ci/run "
    "installs it): the replay page is not rendered")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-extensions"]


def render_dom(page: Path, step: int) -> str:
    """The DOM of ``page`` after its script ran, opened at ``#step=step``."""
    assert BROWSER is not None
    out = subprocess.run([BROWSER, *FLAGS, "--dump-dom", f"{page.as_uri()}#step={step}"],
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout


class Shown(HTMLParser):
    """Collects what the page shows: the melds of ``#table`` (their ``data-card`` tokens),
    the status line and the scores table."""

    def __init__(self) -> None:
        super().__init__()
        self.melds: list[list[str]] = []
        self.texts: dict[str, str] = {}
        self._in: str | None = None
        self._in_table = False
        self._cells: list[str] = []
        self._in_scores = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id") == "table":
            self._in_table = True
        if a.get("id") == "scores":
            self._in_scores = True
        if self._in_table and tag == "li" and "meld" in (a.get("class") or "").split():
            self.melds.append([])
        if self._in_table and a.get("data-card"):
            self.melds[-1].append(a["data-card"] or "")
        if a.get("id") in ("status", "event", "pos"):
            self._in = a["id"]
            self.texts[self._in] = ""
        if self._in_scores and tag == "td":
            self._in = "td"
            self._cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ol" and self._in_table:
            self._in_table = False
        if tag == "table" and self._in_scores:
            self._in_scores = False
        if tag in ("p", "output", "td"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "td":
            self._cells[-1] += data
        elif self._in:
            self.texts[self._in] += data

    @property
    def totals(self) -> list[int]:
        return [int(x) for x in self._cells[2::4]]


def shown(page: Path, step: int) -> Shown:
    p = Shown()
    p.feed(render_dom(page, step))
    return p


def cli_state(log: Path, n: int) -> dict[str, str]:
    """The table, stock and totals printed by `rummy replay LOG --at N`."""
    buf = io.StringIO()
    assert replay_events(read_log(str(log)), at=n, out=buf) == 0
    text = buf.getvalue()
    return {"table": re.search(r"table: (.*)", text).group(1).strip(),  # type: ignore[union-attr]
            "stock": re.search(r"stock (\d+)", text).group(1),  # type: ignore[union-attr]
            "totals": re.search(r"totals: (.*)", text).group(1).strip()}  # type: ignore[union-attr]


def test_page_shows_the_state_of_replay_at_n(tmp_path):
    log = GOLDEN / "basic-random-3p-seed2.jsonl"
    n = len(read_log(str(log)))
    page = tmp_path / "game.html"
    assert main(["replay", str(log), "--html", str(page)]) == 0
    for step in (2, 12, n // 2, n - 1, n):
        got = shown(page, step)
        want = cli_state(log, step)
        table = " | ".join(" ".join(m) for m in got.melds) or "(empty table)"
        assert table == want["table"], f"step {step}"
        assert f"stock {want['stock']} cards" in got.texts["status"], f"step {step}"
        assert " ".join(f"{i}:{t}" for i, t in enumerate(got.totals)) == want["totals"]
        assert got.texts["pos"] == f"event {step} of {n}"
        assert got.texts["event"].startswith(f"{step}. ")


def _meld_game(tmp_path: Path) -> tuple[Path, int]:
    """A game of greedy bots whose event 109 is a meld action that adds cards from the hand,
    moves cards between melds and frees a joker (R5.8, R5.9)."""
    events = play_game(("greedy", "strategic", "greedy"), 1, RuleSet(target_score=60),
                       record=True).events
    log = tmp_path / "greedy-3p-seed1.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in events))
    return log, 109


def test_meld_step_marks_what_moved_with_text_not_colour_alone(tmp_path):
    log, step = _meld_game(tmp_path)
    page = tmp_path / "game.html"
    assert main(["replay", str(log), "--html", str(page), "--analyse"]) == 0
    dom = render_dom(page, step)
    table = dom[dom.index('<ol id="table"'):]
    table = table[:table.index("</ol>")]
    for mark in ("new", "moved", "freed"):
        assert re.search(rf'class="card[^"]* {mark}"', table), mark
        assert f'<span class="mark">{mark}' in table, mark  # the marker is text too
    assert re.search(r'aria-label="[^"]*, joker freed, was jack|aria-label="[^"]*, joker '
                     r'freed, was', table)
    assert 'aria-label="4♣ four of clubs, new"' in table
    assert 'id="analysis" aria-labelledby="analysis-h">' in dom  # shown, not hidden
    got = shown(page, step)
    want = cli_state(log, step)
    assert " | ".join(" ".join(m) for m in got.melds) == want["table"]


def screenshot(page: Path, step: int, out: Path) -> None:
    """A PNG of ``page`` at ``#step=step`` (1100 x 1300 pixels)."""
    assert BROWSER is not None
    subprocess.run([BROWSER, *FLAGS, "--window-size=1100,1300", f"--screenshot={out}",
                    f"{page.as_uri()}#step={step}"], capture_output=True, timeout=120,
                   check=True)


def test_screenshot_of_a_meld_step(tmp_path):
    log, step = _meld_game(tmp_path)
    page = tmp_path / "game.html"
    assert main(["replay", str(log), "--html", str(page), "--analyse"]) == 0
    png = tmp_path / "shot.png"
    screenshot(page, step, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert (ROOT / "docs" / "replay-page.png").exists(), "the reference image for the README"


if __name__ == "__main__":  # regenerate docs/replay-page.png
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        log, step = _meld_game(Path(d))
        page = Path(d) / "game.html"
        main(["replay", str(log), "--html", str(page), "--analyse"])
        screenshot(page, step, ROOT / "docs" / "replay-page.png")
    print("wrote docs/replay-page.png", file=sys.stderr)
