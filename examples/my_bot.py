"""A tester's own bot: run it with ``rummy simulate --bots examples.my_bot:MyBot,basic``."""
from rummy.bots.base import BotBase, legal_for
from rummy.bots.random_bot import RandomBot
from rummy.cards import hand_points
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.views import PlayerView


class MyBot(BotBase):
    """Melds the table that leaves the fewest hand points; knocks under 10 points."""

    name = "my_bot"

    def act(self, view: PlayerView) -> Command:
        seat = view.turn
        if view.actions[0] == "draw":
            return Draw(seat)
        if "knock" in view.actions:
            return Knock(seat) if hand_points(view.hand) < 10 else EndTurn(seat)
        tables = [t for t in RandomBot.candidates(view) if legal_for(view, t)]
        if not tables:
            return Pass(seat)
        return Meld(seat, max(tables, key=lambda t: sum(map(len, t))))
