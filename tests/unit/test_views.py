"""``view`` builds its named tuple positionally: every field must still hold
what its name says, and nothing of the state beyond what the seat may see (I3)."""

from __future__ import annotations

from rummy.bots import make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.simulate import game_seed
from rummy.state import GAME_OVER, GameState
from rummy.views import PlayerView, legal_action_kinds, view


def _by_name(s: GameState, seat: int | None) -> PlayerView:
    acting = seat is not None and seat == s.turn and s.phase != GAME_OVER
    return PlayerView(
        seat=seat, players=s.players, names=s.names, rules=s.rules, version=s.version,
        round=s.round, dealer=s.dealer, turn=s.turn, phase=s.phase, draws=s.draws,
        hand=s.hands[seat] if seat is not None else (),
        hand_sizes=tuple(len(h) for h in s.hands), table=s.table, stock_size=s.stock_size,
        final_turns_left=s.final_turns_left, totals=s.totals, rounds_won=s.rounds_won,
        opened=s.opened, actions=legal_action_kinds(s) if acting else (),
        last_round=s.last_round, result=s.result,
        controllers=s.control.controllers if s.control else ("",) * s.players,
        away=s.control.away if s.control else ("",) * s.players)


def test_view_fields_hold_what_their_names_say() -> None:
    seed = game_seed(3, 0)
    bots = [make_bot("random", seed + i) for i in range(3)]
    s, _ = step(None, CreateGame(3, seed))
    n = 0
    while True:
        for seat in (None, 0, 1, 2):
            v = view(s, seat)
            assert type(v) is PlayerView
            assert v == _by_name(s, seat)
            assert v._asdict() == _by_name(s, seat)._asdict()
            assert not any(isinstance(x, GameState) for x in v)  # no reference to the state
            assert s.deck not in v and s.hands not in v
        if s.phase == GAME_OVER:
            break
        s, _ = step(s, bots[s.turn].act(view(s, s.turn)))
        n += 1
    assert n > 100
