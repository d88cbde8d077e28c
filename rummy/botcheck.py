"""``rummy bot check``: play a tester's bot against the built-in bots and check that it keeps
the bot contract (docs/bots.md): every command it sends is legal, and its decisions depend on
its seat's view alone (the view-only contract, I3 of docs/rules.md §10).

The view-only check is differential, as :func:`rummy.invariants.i3_problems` is for views: at
each of the bot's decisions, copies of the bot (``copy.deepcopy``, so its random generator
and memory are those of the real bot) decide on the same view while the state beside it is
the true state and then each hidden variant of it (other hands and stock order moved, another
seed: ``rummy.invariants._hidden_variants``). The copies run from a frame whose local
``state`` is that state, as :func:`rummy.simulate.play_game`'s is, so a bot that peeks at
its caller (``sys._getframe``, ``inspect``, ``gc``) sees a different hidden state and, if it
uses it, decides differently. A bot that gives different commands for one view is refused;
so is one that gives different commands on the true state (it is not deterministic given its
seed and its views, which reproducible batches need). The check cannot see a peek that never
changes a decision during the games played, nor a bot that reads hidden state the runner
does not hand it (say, by re-dealing from a seed it guessed); it is a test, not a proof.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from rummy.bots import check_bot, make_bot
from rummy.commands import Command, CreateGame
from rummy.decide import step
from rummy.errors import IllegalMoveError
from rummy.invariants import _hidden_variants
from rummy.rules import RuleSet
from rummy.simulate import MAX_STEPS, game_seed, lineup_for
from rummy.state import GAME_OVER, GameState
from rummy.views import PlayerView, view

DEFAULT_OPPONENTS = ("basic", "random")  #: the built-in bots ``rummy bot check`` plays against


@dataclass
class BotCheck:
    """What :func:`check_bot_contract` found.

    Attributes:
        bot: the bot's name as given.
        games: games played (a game stops at the bot's first illegal command or crash).
        decisions: decisions of the bot checked.
        illegal: one line per illegal command: game seed, command and the rule broken.
        peeks: one line per decision that changed with the hidden state (I3).
        nondeterministic: one line per decision a copy of the bot made differently on the
            same view and state.
        crashes: one line per exception (other than an illegal move) the bot raised.
    """

    bot: str
    games: int = 0
    decisions: int = 0
    illegal: list[str] = field(default_factory=list)
    peeks: list[str] = field(default_factory=list)
    nondeterministic: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not (self.illegal or self.peeks or self.nondeterministic or self.crashes)


def _decide(bot: object, seen: PlayerView, state: GameState) -> Command:
    """``bot.act(seen)`` called from a frame whose local ``state`` is ``state`` (the name
    :func:`rummy.simulate.play_game` gives the true state)."""
    assert state is not None  # this frame's local: what a peeking bot would find here
    cmd: Command = bot.act(seen)  # type: ignore[attr-defined]
    return cmd


def _peek_problem(bot: object, seen: PlayerView, state: GameState) -> tuple[str, str]:
    """``("nondeterministic"|"peek", message)`` for this decision, or ``("", "")``."""
    reference = _decide(copy.deepcopy(bot), seen, state)
    again = _decide(copy.deepcopy(bot), seen, state)
    if again != reference:
        return "nondeterministic", f"{reference} then {again} for the same view and seed"
    for variant in _hidden_variants(state, state.turn):
        other = _decide(copy.deepcopy(bot), seen, variant)
        if other != reference:
            if _decide(copy.deepcopy(bot), seen, variant) != other:  # chance, not a peek
                return "nondeterministic", f"{reference}, then {other} for the same view"
            return "peek", (f"{reference} with the true hidden state, {other} when the other "
                            "hands and the stock order differ (I3: a bot sees its view only)")
    return "", ""


def check_bot_contract(name: str, games: int = 4, seed: int = 0, players: int = 2,
                       opponents: Sequence[str] = DEFAULT_OPPONENTS,
                       rules: RuleSet | None = None, max_reports: int = 5) -> BotCheck:
    """Play ``games`` games of bot ``name`` against ``opponents`` and check its contract.

    Game ``i`` is seeded with ``rummy.simulate.game_seed(seed, i)``, the line-up ``name``
    followed by the opponents cycled to ``players`` seats, rotated by ``i`` seats (as a
    batch rotates). Only the bot under test is checked; every one of its decisions is.

    Args:
        name: a bot name :func:`rummy.bots.check_bot` accepts (``package.module:Class``).
        games: games to play (>= 1).
        seed: master seed.
        players: seats per game (2..5, R1.1).
        opponents: built-in (or other) bot names for the other seats.
        rules: the rule set (default rules if ``None``).
        max_reports: keep at most this many lines per kind of problem.

    Returns:
        A :class:`BotCheck`; ``ok`` when nothing was found.

    Raises:
        ValueError: an unknown or unimportable bot, fewer than 1 game, a bad player count.
    """
    check_bot(name)
    for o in opponents:
        check_bot(o)
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if not opponents:
        raise ValueError("give at least one opponent")
    rules = rules or RuleSet()
    rules.check_players(players)
    base = [name] + [opponents[i % len(opponents)] for i in range(players - 1)]
    out = BotCheck(name)

    def note(kind: list[str], text: str) -> None:
        if len(kind) < max_reports:
            kind.append(text)

    for i in range(games):
        gseed = game_seed(seed, i)
        lineup = lineup_for(base, i)
        mine = lineup.index(name)
        agents = [make_bot(b, gseed * 8 + s) for s, b in enumerate(lineup)]
        state, _ = step(None, CreateGame(players, gseed, rules, tuple(lineup)))
        out.games += 1
        steps = 0
        while state.phase != GAME_OVER and steps <= MAX_STEPS:
            seat = state.turn
            seen = view(state, seat)
            if seat == mine:
                out.decisions += 1
                try:
                    kind, text = _peek_problem(agents[seat], seen, state)
                except Exception as e:  # noqa: BLE001 - the bot's own failure, reported
                    note(out.crashes, f"game seed {gseed}: {type(e).__name__}: {e}")
                    break
                if kind:
                    note(out.peeks if kind == "peek" else out.nondeterministic,
                         f"game seed {gseed}, round {state.round}, {state.phase}: {text}")
            try:
                cmd = _decide(agents[seat], seen, state)
            except Exception as e:  # noqa: BLE001
                if seat != mine:
                    raise
                note(out.crashes, f"game seed {gseed}: {type(e).__name__}: {e}")
                break
            try:
                state, _ = step(state, cmd)
            except IllegalMoveError as e:
                if seat != mine:
                    raise
                note(out.illegal, f"game seed {gseed}, round {state.round}, {state.phase}: "
                     f"{cmd} broke {e.rule} ({e})")
                break
            except Exception as e:  # noqa: BLE001 - a malformed command (not a Command...)
                if seat != mine:
                    raise
                note(out.illegal, f"game seed {gseed}: {cmd!r} refused: "
                     f"{type(e).__name__}: {e}")
                break
            steps += 1
    return out


__all__ = ["DEFAULT_OPPONENTS", "BotCheck", "check_bot_contract"]
