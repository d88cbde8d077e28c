"""The replay page's jump marks in headless Chromium: pressing r, m, x, k (and with Shift)
moves to the next (previous) round, meld, review mark and knock, as the page data says.

Chromium is driven over its DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON
messages ended by NUL on file descriptors 3 and 4), so no extra package is needed. Skips
(with the reason) when no Chromium is installed; `.ci/run` installs the Debian package.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rummy.events import dumps
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy_cli.main import main

BROWSER = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser",
                                                     "google-chrome", "chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium installed (apt-get install -y chromium; .ci/run "
    "installs it): the replay page is not rendered")
HANG_GUARD = 120.0  # seconds: only a guard against a hung browser, not a bound under test


class DevTools:
    """A minimal client of Chromium's DevTools protocol over ``--remote-debugging-pipe``."""

    def __init__(self) -> None:
        assert BROWSER is not None
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # Chromium reads commands on fd 3, writes answers on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next = 0
        self._buf = b""
        self.session = ""

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + HANG_GUARD
        while True:
            while b"\0" not in self._buf:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([self._from_child], [], [], max(0.0, left))
                if not ready:
                    raise TimeoutError(f"no answer to {method}")
                chunk = os.read(self._from_child, 1 << 16)
                if not chunk:
                    raise EOFError("Chromium closed the pipe")
                self._buf += chunk
            raw, _, self._buf = self._buf.partition(b"\0")
            answer = json.loads(raw)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def open(self, url: str) -> None:
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + HANG_GUARD
        while self.eval("document.readyState") != "complete" or \
                self.eval("document.getElementById('pos').textContent") == "":
            if time.monotonic() > deadline:
                raise TimeoutError("the page did not load")
            time.sleep(0.05)

    def eval(self, expr: str) -> Any:
        return self.call("Runtime.evaluate", expression=expr,
                         returnByValue=True)["result"].get("value")

    def press(self, key: str, shift: bool = False) -> None:
        code = "Key" + key.upper()
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key.upper() if shift else key,
                      code=code, windowsVirtualKeyCode=ord(key.upper()),
                      modifiers=8 if shift else 0,
                      **({"text": key.upper() if shift else key} if kind == "keyDown" else {}))

    def step(self) -> int:
        return int(self.eval("location.hash.split('=')[1]"))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=HANG_GUARD)
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture
def chromium() -> Iterator[DevTools]:
    tools = DevTools()
    try:
        yield tools
    finally:
        tools.close()


def test_jump_keys_move_to_the_next_round_meld_mark_and_knock(tmp_path: Path, chromium):
    events = play_game(("strategic", "basic"), 2, RuleSet(target_score=60), record=True).events
    assert events is not None
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in events))
    page = tmp_path / "game.html"
    assert main(["replay", str(log), "--analyse", "--budget", "1", "--html", str(page)]) == 0
    data = json.loads(page.read_text().split('id="game">')[1].split("</script>")[0])
    marks = {kind: [i for i, s in enumerate(data["steps"], 1) if kind in s.get("j", [])]
             for kind in ("round", "meld", "mark", "knock")}
    assert all(marks.values()), marks  # the game has every kind of mark
    chromium.open(page.as_uri() + "#step=1")
    assert chromium.step() == 1
    keys = {"round": "r", "meld": "m", "mark": "x", "knock": "k"}
    for kind, key in keys.items():
        chromium.eval("location.hash = '#step=1'")
        time.sleep(0.1)
        seen = []
        for _ in range(min(3, len(marks[kind]))):
            chromium.press(key)
            seen.append(chromium.step())
        assert seen == marks[kind][:len(seen)], kind
        chromium.press(key, shift=True)  # back to the previous one
        expect = marks[kind][len(seen) - 2] if len(seen) > 1 else seen[0]
        assert chromium.step() == expect, kind
    # the marks under the slider are the review's marks, each a button to its event
    ticks = chromium.eval("Array.from(document.querySelectorAll('#marks .tick'))"
                          ".map(function (b) { return +b.getAttribute('data-step'); })")
    assert ticks == marks["mark"]
    assert chromium.eval("document.querySelectorAll('#graph polyline').length") == 2
