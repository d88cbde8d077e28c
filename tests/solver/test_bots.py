"""The solver bots (greedy, strategic): legal in every variant, deterministic, registered."""

from __future__ import annotations

from rummy.bots import BOTS, make_bot
from rummy.bots.strategic import should_knock
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.views import view
from tests.solver.variants import OPENING_VARIANTS


def test_registered() -> None:
    assert "greedy" in BOTS and "strategic" in BOTS
    assert make_bot("greedy", 1).name == "greedy"
    assert make_bot("strategic", 1).name == "strategic"


@OPENING_VARIANTS
def test_full_games_are_legal(rules: RuleSet) -> None:
    # play_game raises IllegalMoveError if a bot sends an illegal command (R5.5 included)
    r = play_game(["strategic", "greedy", "basic", "random"], seed=11, rules=rules)
    assert r.winners
    r2 = play_game(["greedy", "strategic"], seed=5, rules=rules)
    assert r2.winners


def test_same_seed_same_game() -> None:
    a = play_game(["strategic", "greedy", "greedy"], seed=3)
    b = play_game(["strategic", "greedy", "greedy"], seed=3)
    assert a == b


def test_should_knock_depends_on_opponents_hand_sizes() -> None:
    state, _ = step(None, CreateGame(4, 1, RuleSet()))
    v = view(state, state.turn)
    assert not should_knock(v)  # everyone holds 10 cards: nobody can knock (R6.1)
    sizes = list(v.hand_sizes)
    sizes[(state.turn + 1) % 4] = 5  # an opponent with 5 cards might knock
    assert should_knock(v._replace(hand_sizes=tuple(sizes)))
    assert should_knock(v._replace(final_turns_left=3))
