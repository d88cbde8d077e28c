"""Testers' own bots: ``package.module:Class`` names and the ``rummy.bots`` entry point
group go through the one name check ``check_bot``; ``rummy bot check`` refuses a bot that
sends an illegal command or peeks at hidden information (I3), and passes the example bot."""

from __future__ import annotations

import importlib.metadata
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import rummy.bots as registry
from rummy.botcheck import check_bot_contract
from rummy.bots import bot_class, check_bot, make_bot
from rummy.bots.random_bot import RandomBot
from rummy.commands import Command, Pass
from rummy.quality import MARGIN_UNIT, QualityReport
from rummy.simulate import parse_lineup, play_game
from rummy.views import PlayerView

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "examples.my_bot:MyBot"


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_LOADED", {})


def test_module_class_names_are_bots() -> None:
    from examples.my_bot import MyBot

    assert check_bot(EXAMPLE) == EXAMPLE
    assert bot_class(EXAMPLE) is MyBot
    bot = make_bot(EXAMPLE, 3)
    assert isinstance(bot, MyBot) and bot.name == "my_bot"
    assert parse_lineup(f"{EXAMPLE},basic", 4) == (EXAMPLE, "basic", EXAMPLE, "basic")
    r = play_game([EXAMPLE, "basic"], seed=7, metrics=False)
    assert r.bots == (EXAMPLE, "basic") and r.rounds >= 1 and len(r.final) == 2


def test_a_bot_that_cannot_be_imported_names_its_package() -> None:
    with pytest.raises(ValueError, match="cannot import bot 'nopkg.bots:Bot' from package "
                       "'nopkg': ModuleNotFoundError"):
        check_bot("nopkg.bots:Bot")
    with pytest.raises(ValueError, match="cannot import .* AttributeError"):
        check_bot("examples.my_bot:NoSuchBot")
    with pytest.raises(ValueError, match="not a bot class"):
        check_bot("rummy.cards:hand_points")
    with pytest.raises(ValueError, match="bad bot name"):
        check_bot("examples.my_bot:")
    with pytest.raises(ValueError, match="unknown bot 'nobody'; known bots: basic"):
        check_bot("nobody")


def test_entry_point_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package registers ``mine = "examples.my_bot:MyBot"`` under the group
    ``rummy.bots`` (simulated: importlib.metadata is patched to list that entry point)."""
    from examples.my_bot import MyBot

    eps = importlib.metadata.EntryPoints([
        importlib.metadata.EntryPoint("mine", EXAMPLE, "rummy.bots"),
        importlib.metadata.EntryPoint("broken", "brokenpkg.bots:Bot", "rummy.bots")])
    seen: list[str] = []

    def fake(**kw: str) -> importlib.metadata.EntryPoints:
        seen.append(kw["group"])
        return eps.select(group=kw["group"])

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    assert check_bot("mine") == "mine" and seen == ["rummy.bots"]
    assert bot_class("mine") is MyBot
    assert play_game(["mine", "random"], seed=2, metrics=False).bots == ("mine", "random")
    with pytest.raises(ValueError, match="cannot import bot 'broken' .*package 'brokenpkg'"):
        check_bot("broken")
    with pytest.raises(ValueError, match="known bots: .*broken.*mine"):
        check_bot("nobody")


def test_skill_trace_keeps_bot_names_with_a_colon() -> None:
    """The skill trace's keys are ``margin:A|B:n``; a bot named ``module:Class`` used to be
    cut at its colon, so the pair was never found and the trace said "too few games"."""
    pair = f"{EXAMPLE}|random"
    q = {"games": 3, f"margin:{pair}:n": 3, f"margin:{pair}:sum": 2 * MARGIN_UNIT,
         f"margin:{pair}:sq": 2 * MARGIN_UNIT ** 2}
    skill = QualityReport.of(q).skill
    assert [(s.stronger, s.weaker, s.games) for s in skill] == [(EXAMPLE, "random", 3)]


def test_bot_check_passes_the_example_bot() -> None:
    result = check_bot_contract(EXAMPLE, games=2, seed=1)
    assert result.ok and result.games == 2 and result.decisions > 100


def test_bot_check_refuses_a_peeking_bot() -> None:
    result = check_bot_contract("tests.fixtures.peeking_bot:PeekingBot", games=3, seed=0)
    assert not result.ok and result.peeks and not result.illegal
    assert "I3" in result.peeks[0] and "Knock" in result.peeks[0]


def test_bot_check_refuses_an_illegal_bot_naming_the_rule() -> None:
    result = check_bot_contract("tests.fixtures.peeking_bot:IllegalBot", games=2, seed=0)
    assert not result.ok and len(result.illegal) == 2 and not result.peeks
    assert "broke R5.4" in result.illegal[0]


class Moody(RandomBot):
    """Passes or melds by the process-wide generator, not its own seeded one."""

    def act(self, view: PlayerView) -> Command:
        if "pass" in view.actions and random.random() < 0.5:
            return Pass(view.turn)
        return super().act(view)


def test_bot_check_refuses_a_nondeterministic_bot() -> None:
    result = check_bot_contract(f"{__name__}:Moody", games=1)
    assert result.nondeterministic and not result.ok
    assert "for the same view" in result.nondeterministic[0]


def _rummy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=600, check=False)


def test_commands_take_module_class_bots(tmp_path: Path) -> None:
    """``rummy simulate`` (two processes: each imports the bot), ``rummy tournament``,
    ``rummy sweep`` and ``rummy bot check`` in real subprocesses, from the checkout (the
    module is found under the current directory)."""
    sim = _rummy("simulate", "--bots", f"{EXAMPLE},basic", "--players", "2", "--games", "4",
                 "--jobs", "2", "--seed", "1", "--json", "-")
    assert sim.returncode == 0, sim.stderr
    doc = json.loads(sim.stdout)
    assert doc["games"] == 4 and EXAMPLE in doc["bots"]
    ok = _rummy("bot", "check", EXAMPLE, "--games", "1", "--seed", "2", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"] is True
    bad = _rummy("bot", "check", "tests.fixtures.peeking_bot:PeekingBot", "--games", "3")
    assert bad.returncode == 1 and "REFUSED" in bad.stdout and "I3" in bad.stdout
    out = tmp_path / "sweep.json"
    tour = _rummy("tournament", "--bots", f"{EXAMPLE},basic", "--games", "2", "--seed", "1")
    assert tour.returncode == 0 and f"| {EXAMPLE} |" in tour.stdout, tour.stderr
    sweep = _rummy("sweep", "--rules", "knock_threshold=0,10", "--games", "2", "--players",
                   "2", "--bots", f"{EXAMPLE},basic", "--quiet", "--json", str(out))
    assert sweep.returncode == 0, sweep.stderr
    assert EXAMPLE in json.loads(out.read_text())["lineup"]
    gone = _rummy("simulate", "--bots", "nopkg.bots:Bot", "--games", "2")
    assert gone.returncode == 2 and "package 'nopkg'" in gone.stderr


def test_untrusted_names_import_nothing() -> None:
    """A name from a remote client (the service's game creation passes ``imports=False``)
    never makes the process import a module: only built-in bots and those the operator's
    configuration already imported pass."""
    name = "examples.rl_random_vs_greedy:Bot"  # a module that exists
    with pytest.raises(ValueError, match=f"unknown bot '{name}'; known bots: basic"):
        check_bot(name, imports=False)
    assert "examples.rl_random_vs_greedy" not in sys.modules
    with pytest.raises(ValueError, match="unknown bot"):
        check_bot(EXAMPLE, imports=False)  # not imported yet in this test
    assert check_bot("basic", imports=False) == "basic"
    check_bot(EXAMPLE)  # the operator's configuration imports it
    assert check_bot(EXAMPLE, imports=False) == EXAMPLE
