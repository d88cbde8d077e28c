"""``strategic``: the greedy play, but it holds back its knock while no opponent can end
the round before its next turn.

Knocking (R6.1) ends the round at once and the winner scores the points its opponents
still hold (R7.2, R7.3). Every turn an opponent does not meld it draws up to three cards
(R3.1–R3.3), so the pot of points grows while the round goes on; and if another player
knocks with more points than ours, we win with the undercut bonus (R7.4). Waiting has one
risk: another player ends the round first, by knocking or by going out (R6.2).

Rule (from the seat's own view, I3): after its turn, with a hand worth at most the knock
threshold, the bot *waits* (ends its turn without knocking, R6.3) when every opponent
holds more cards than the knock threshold — each card is worth at least 1 point (R1.5), so
none of them can knock before the bot's next turn and only going out in one meld can end
the round — and the stock still holds more than one card per player. Otherwise it knocks
at once. In the final turns after the stock ran out (R8.2) it knocks whenever allowed.

The numbers behind the rule (4 players, default rules, seeds in docs/strength.md):
knocking at once is never undercut by greedy opponents (0 of 205 knocks), and holding back
a knock while an opponent holds few cards loses (win share 0.13–0.21 against three greedy
bots, fair 0.25); waiting only while no opponent can knock keeps par against greedy bots
and wins clearly when the table has weaker players who let the pot grow.

Melding is the greedy bot's: the solver's best play whenever one exists, under the R5.5
opening variants (:func:`rummy.bots.greedy.plan_play`). Passing to dig for a bigger meld
(R3.2) and keeping a joker back were measured and rejected (no gain, or a loss).
"""

from __future__ import annotations

from rummy.bots.greedy import GreedyBot
from rummy.views import PlayerView


def should_knock(view: PlayerView) -> bool:
    """Whether to knock now (the viewer may knock: its turn is over, R6.1).

    True in the final turns (R8.2), when the stock holds at most one card per player, or
    when some opponent holds no more cards than the knock threshold (it could knock, or
    go out, before the viewer's next turn).
    """
    if view.final_turns_left is not None or view.stock_size <= view.players:
        return True
    threshold = view.rules.knock_threshold
    return any(size <= threshold for seat, size in enumerate(view.hand_sizes)
               if seat != view.seat)


class StrategicBot(GreedyBot):
    """Greedy melding; knocks only when an opponent could end the round before its next
    turn (see :func:`should_knock`), else plays on to let the pot grow (R6.3)."""

    name = "strategic"

    def knock_now(self, view: PlayerView) -> bool:
        """See :func:`should_knock`."""
        return should_knock(view)
