"""Restricted play (rummy.bots.restrict): names, the switch checks, and whole games in
which every restricted command is legal and keeps its switch."""

from __future__ import annotations

import pytest

from rummy.bots import bot_class, check_bot, make_bot
from rummy.bots.restrict import (
    Restrictions,
    added_points,
    breaks,
    frees_joker,
    parse_restrictions,
    rearranges,
    restricted_play,
)
from rummy.cards import hand_points, parse_cards
from rummy.commands import CreateGame, Knock, Meld
from rummy.decide import step
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.state import GAME_OVER
from rummy.views import view


def test_names_are_checked_like_bots() -> None:
    assert check_bot("greedy!no-rearrange") == "greedy!no-rearrange"
    assert check_bot("basic!knock-at-0!no-joker-free") == "basic!knock-at-0!no-joker-free"
    assert check_bot("examples.my_bot:MyBot!no-rearrange")
    with pytest.raises(ValueError, match="unknown restriction 'no-melds'.*known: "
                       "no-rearrange, no-joker-free, no-wait, knock-at-N"):
        check_bot("greedy!no-melds")
    with pytest.raises(ValueError, match="unknown bot 'gredy'"):
        check_bot("gredy!no-rearrange")
    with pytest.raises(ValueError, match="given twice"):
        check_bot("greedy!knock-at-0!knock-at-3")
    with pytest.raises(ValueError, match=r"0\.\.1000 \(hand points, R6\.1\)"):
        check_bot("greedy!knock-at-x")
    with pytest.raises(ValueError, match="empty restriction"):
        check_bot("greedy!")
    # an untrusted name may restrict a built-in bot, never import a module
    assert check_bot("greedy!no-wait", imports=False) == "greedy!no-wait"
    with pytest.raises(ValueError, match="unknown bot"):
        check_bot("os:system!no-wait", imports=False)


def test_parse_restrictions() -> None:
    assert parse_restrictions(["no-rearrange", "knock-at-3"]) == Restrictions(
        no_rearrange=True, knock_at=3)
    bot = make_bot("strategic!no-wait", 5)
    assert bot.name == "strategic!no-wait"
    assert bot_class("strategic!no-wait") is bot_class("strategic!no-wait")


def test_rearranges_and_frees_joker() -> None:
    table = parse_table(["5S 6S 7S", "9H 9D 9C"])
    laid_off = parse_table(["4S 5S 6S 7S 8S", "9H 9D 9C 9S"])
    new_meld = parse_table(["5S 6S 7S", "9H 9D 9C", "KH KD KC"])
    moved = parse_table(["5S 6S 7S", "9H 9D 9C", "8S 9S TS"])  # 9S from the hand: fine
    split = parse_table(["5S 6S", "7S 7H 7D", "9H 9D 9C"])  # 7S moved to a group
    assert not rearranges(table, laid_off)
    assert not rearranges(table, new_meld)
    assert not rearranges(table, moved)
    assert rearranges(table, parse_table(["5S 6S 7S 8S", "9H 9D 9C"]) + ((),)) is False
    two_decks = parse_table(["5S 6S 7S", "5S 6S 7S"])
    joined = parse_table(["5S 6S 7S 5S 6S 7S"])  # not legal, but two melds in one
    assert rearranges(two_decks, joined)
    assert not rearranges(two_decks, parse_table(["5S 6S 7S 8S", "5S 6S 7S"]))
    del split
    jt = parse_table(["5S *6S 7S"])
    freed = parse_table(["5S 6S 7S", "*9H 9D 9C"])  # the real 6S frees the joker (R5.8)
    kept = parse_table(["5S *6S 7S 8S"])
    assert frees_joker(jt, freed) and rearranges(jt, freed)
    assert not frees_joker(jt, kept) and not rearranges(jt, kept)
    r = Restrictions(no_joker_free=True)
    assert breaks(r, jt, freed) == "no-joker-free"
    assert breaks(Restrictions(no_rearrange=True), table,
                  parse_table(["5S 6S", "7S 7H 7D", "9H 9D 9C"])) == "no-rearrange"
    assert added_points(table, laid_off) == 4 + 8 + 9


def test_restricted_play_keeps_the_table() -> None:
    """A hand that the solver would use by splitting a table run: the restricted play
    lays new melds and lay-offs only."""
    state, _ = step(None, CreateGame(2, 11, RuleSet()))
    # a position built by hand on top of a real view: table 3H..9H, hand 6S 6D TH KS
    v = view(state, state.turn)._replace(
        table=parse_table(["3H 4H 5H 6H 7H 8H 9H"]), hand=parse_cards(["6S", "6D", "TH", "KS"]),
        actions=("meld", "pass"))
    t = restricted_play(v, Restrictions(no_rearrange=True))
    assert t == parse_table(["3H 4H 5H 6H 7H 8H 9H TH"])  # only the lay-off of TH
    t2 = restricted_play(v, Restrictions(no_joker_free=True))
    assert t2 is not None and added_points(v.table, t2) == 6 + 6 + 10  # 6H moves: allowed
    assert rearranges(v.table, t2)


def _melds_and_knocks(bots: list[str], seed: int) -> tuple[list[tuple], list[tuple]]:
    """Play a game, returning each seat's meld actions (seat, table before, after) and
    knocks (seat, hand points)."""
    players = len(bots)
    agents = [make_bot(b, seed * 8 + s) for s, b in enumerate(bots)]
    state, _ = step(None, CreateGame(players, seed, RuleSet(), tuple(bots)))
    melds, knocks = [], []
    while state.phase != GAME_OVER:
        seat = state.turn
        v = view(state, seat)
        cmd = agents[seat].act(v)
        if isinstance(cmd, Meld):
            melds.append((seat, tuple(v.table), tuple(cmd.table)))
        if isinstance(cmd, Knock):
            knocks.append((seat, hand_points(v.hand)))
        state, _ = step(state, cmd)  # raises IllegalMoveError on an illegal command
    return melds, knocks


@pytest.mark.parametrize("seed", [3, 4])
def test_games_keep_every_switch(seed: int) -> None:
    melds, knocks = _melds_and_knocks(["greedy!no-rearrange!knock-at-0", "greedy",
                                       "greedy!no-joker-free", "random!no-rearrange"], seed)
    seat_melds = {s: [(a, b) for t, a, b in melds if t == s] for s in range(4)}
    assert seat_melds[0] and seat_melds[2] and seat_melds[3]
    assert all(not rearranges(a, b) for a, b in seat_melds[0] + seat_melds[3])
    assert all(not frees_joker(a, b) for a, b in seat_melds[2])
    assert all(s != 0 for s, _ in knocks)  # knock-at-0: never
    # the unrestricted greedy bot does rearrange in these games (the switch bites)
    assert any(rearranges(a, b) for a, b in seat_melds[1])


def test_no_wait_knocks_whenever_allowed() -> None:
    r = play_game(["strategic!no-wait", "strategic"], 9, record=True)
    assert r.winners
    melds, knocks = _melds_and_knocks(["strategic!no-wait", "greedy"], 9)
    assert knocks and all(p <= 5 for _, p in knocks)


@pytest.mark.slow
def test_restricted_bots_in_tournament_sweep_and_bot_check() -> None:
    """Every command that takes bots takes a restricted one (simulate, batch submit and
    batch ab on the workers: tests/workers/test_tune_workers.py)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), str(root / "services"), str(root / "workers")])}

    def rummy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=root, env=env,
                              capture_output=True, text=True, timeout=900, check=False)

    out = rummy("tournament", "--bots", "greedy,basic!knock-at-0", "--games", "1",
                "--players", "2")
    assert out.returncode == 0, out.stderr
    assert "basic!knock-at-0" in out.stdout
    out = rummy("sweep", "--rules", "knock_threshold=5,10", "--bots",
                "greedy!no-rearrange,basic", "--players", "2", "--games", "2", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "greedy!no-rearrange win" in out.stdout
    out = rummy("bot", "check", "greedy!no-joker-free", "--games", "1")
    assert out.returncode == 0 and "keeps the contract" in out.stdout, out.stdout + out.stderr
    out = rummy("simulate", "--bots", "greedy!no-melds", "--games", "1")
    assert out.returncode == 2 and "unknown restriction 'no-melds'" in out.stderr
