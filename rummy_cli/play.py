"""``rummy play``: a terminal game of Manipulation Rummy against bots, for a person.

An adapter on top of the pure core (CLI side, like :mod:`rummy_cli.main`): it only calls
``rummy.decide.step``, ``rummy.views.view`` and the bots, renders with rich, and reads one
command per line. The person always sits at seat 0 and sees only seat 0's view (I3); the
other seats are bots from :data:`rummy.bots.BOTS`.

Input (one command per line; see :data:`HELP`)::

    d                 draw                      p   pass (instead of melding)
    k                 knock                     e   end the turn without knocking
    m <new table>     meld: the whole new table, melds separated by '|'
    a <cards>         add a new meld from the hand to the current table
    x <n> <cards>     extend meld number n with cards from the hand
    r <n..> = <melds> take melds n.. apart and lay these melds instead
    a/x/r parts joined by ';' are one meld action (rummy.meld_commands)
    hint  v  h  q     suggest a move, show the view again, help, quit

A rejected command changes nothing and prints the rule it breaks (e.g. ``R5.3``).

The game loop is :class:`PlaySession`; it reads lines through an injectable ``input_fn``
(``prompt -> line``, ``EOFError`` ends the game like ``q``) and writes to a rich
``Console``, so tests can drive whole games with scripted input.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any, assert_never

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from rummy.bots import BOTS, Bot, check_bot, make_bot
from rummy.cards import POINTS, format_card
from rummy.commands import Command, CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.errors import IllegalMoveError, NotationError, RummyError
from rummy.events import (
    CardDrawn,
    Event,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    ReclaimRequested,
    RoundScored,
    RoundStarted,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    StockExhausted,
    TimedOut,
    TurnEnded,
    dumps,
)
from rummy.fairness import local_salt
from rummy.lifecycle import describe as describe_seat_change
from rummy.meld_commands import apply_meld_command, meld_command
from rummy.melds import Table
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS, GameState
from rummy.views import PlayerView, view
from rummy_cli.main import usage_error
from rummy_cli.options import add_rules_option, bot_names
from rummy_cli.outputs import output_problem

HUMAN = 0
"""The person's seat."""

_MELD_WORDS = ("m", "meld", "a", "add", "x", "extend", "r", "rearrange")

HELP = """\
Commands, one per line. Cards as in docs/rules.md R1.4: 7S TD AH; a joker in
the hand is *; a joker on the table declares its card: *7S.
  d              draw the card that is due (R3.1-R3.3; Enter also draws)
  p              pass instead of melding; then draw again (R3.2, R3.3)
  m <new table>  meld: type the WHOLE new table, melds separated by | (R5)
                   e.g. m 5S 6S 7S | 8H 8D 8C | 2C 3C *4C
  a <cards>      add a new meld from your hand, e.g. a 9H 9S 9C
  x <n> <cards>  extend meld number n with hand cards, e.g. x 2 8S
  r <n..> = <melds>  take melds apart, lay these instead, e.g. r 2 3 = 2D 3D 4D | 5D 6D 7D
  x 1 9D; a 2H 3H 4H   several parts joined by ; are one meld action;
                 the numbers are those shown before the action
  k              knock: hand worth <= the threshold, turn over (R6.1)
  e              end the turn without knocking (R6.3)
  hint           what the 'basic' bot would do now
  v  h  q        show the table again, this help, quit
A turn: draw, then meld or pass; after a pass draw again (at most 3 draws;
no meld after the third). One meld action may rearrange the whole table:
every card stays on it, every meld stays legal, a table joker keeps its
card unless the real card replaces it (R5.2-R5.9)."""

_SUIT_STYLE = {"S": "bold", "C": "bold", "H": "bold red", "D": "bold red"}

_PROMPTS = {DRAW: "draw [d]", MELD_OR_PASS: "meld or pass [m/a/x/r/p]",
            KNOCK_OR_END: "knock or end the turn [k/e]"}


def card_markup(card: int) -> str:
    """Rich markup of one card (hand or table card): suits coloured, jokers highlighted."""
    text = format_card(card)
    if text.startswith("*"):
        return f"[bold magenta]{escape(text)}[/]"
    return f"[{_SUIT_STYLE[text[-1]]}]{text}[/]"


def cards_markup(cards: Iterable[int]) -> str:
    """Rich markup of cards separated by spaces."""
    return " ".join(card_markup(c) for c in cards)


def scripted(lines: Iterable[str], echo: IO[str] | None = None) -> Callable[[str], str]:
    """An ``input_fn`` that returns ``lines`` one by one, then raises ``EOFError``.

    With ``echo``, each prompt and answer is written to it (as a terminal would show them).
    """
    it = iter(lines)

    def read(prompt: str) -> str:
        try:
            line = next(it)
        except StopIteration:
            raise EOFError from None
        if echo is not None:
            echo.write(f"{prompt}{line}\n")
        return line

    return read


class PlaySession:
    """One game between a person (seat 0) and bots (seats 1..n-1), driven by text input.

    Attributes:
        state: the current full game state (never shown; only seat 0's view is rendered).
        events: every event of the game so far, in order (a complete event log).
        bots: the bot of each seat (``None`` for the person's seat).
    """

    def __init__(self, players: int, bots: Sequence[str], seed: int,
                 rules: RuleSet | None = None, *, console: Console | None = None,
                 input_fn: Callable[[str], str] = input, name: str = "you",
                 save: IO[str] | None = None) -> None:
        """Create the game (the deal happens at once).

        Args:
            players: number of seats, 2..5 (R1.1).
            bots: strategy names for seats 1..n-1, cycled if fewer than the bot seats.
            seed: the game's seed (shuffles, first dealer, the bots' seeds).
            rules: rule variants (default rules if ``None``).
            console: where to render (default: a new terminal console).
            input_fn: ``prompt -> line``; raising ``EOFError`` quits.
            name: the person's seat label.
            save: a text stream that receives every event as a JSON line (for
                ``rummy replay``).

        Raises:
            ValueError: a bad player count, an unknown bot or an invalid rule set (the
                message says which; an ``InvalidRuleSetError`` cites R1.1 / R11).
        """
        if not bots:
            raise ValueError("at least one bot strategy is needed")
        for b in bots:
            check_bot(b)
        rules = rules or RuleSet()
        rules.check_players(players)
        if len(bots) > players - 1:
            raise ValueError(f"{len(bots)} bots for {players - 1} bot seat(s)")
        lineup = [bots[i % len(bots)] for i in range(players - 1)]
        self.human = HUMAN  # the person's seat (-1: none, every seat a bot)
        self._start = 0  # events before this index are not narrated (a resumed game)
        self.console = console or Console()
        self.input_fn = input_fn
        self.seed = seed
        self.save = save
        self.names = (name, *lineup)
        self.bots: list[Bot | None] = [None] + [make_bot(b, seed * 8 + s)
                                                for s, b in enumerate(lineup, 1)]
        self.events: list[Event] = []
        self._bot_log: list[str] = []
        self._draw = 0  # the draw number of the person's last draw (the rule of a pass)
        self._table_changed = self._hand_changed = False
        self._shown: Table = ()  # the table in the order last numbered
        state, events = step(None, CreateGame(players, seed, rules, self.names,
                                              salt=local_salt(seed)))
        self.state: GameState = state
        self._record(events)

    @classmethod
    def resume(cls, state: GameState, events: Sequence[Event], bots: dict[int, str],
               human: int | None, seed: int, *, console: Console | None = None,
               input_fn: Callable[[str], str] = input, save: IO[str] | None = None
               ) -> PlaySession:
        """A session that goes on from ``state`` (reached by ``events``, which are written
        to ``save`` first): ``human`` types the moves of that seat (``None``: bots play
        every seat), ``bots`` maps every other seat to a strategy of
        :data:`rummy.bots.BOTS`, seeded from ``seed`` and the seat.

        Raises:
            ValueError: an unknown bot, a seat without a bot, or ``human`` not a seat.
        """
        if human is not None and not 0 <= human < state.players:
            raise ValueError(f"seat must be 0..{state.players - 1} (R1.1), got {human}")
        self = cls.__new__(cls)
        self.human = -1 if human is None else human
        self.console = console or Console()
        self.input_fn = input_fn
        self.seed = seed
        self.save = save
        self.names = state.names
        self.bots = []
        for s in range(state.players):
            if s == self.human:
                self.bots.append(None)
                continue
            name = bots.get(s)
            if name is None or (name not in BOTS and not _is_bot(name)):
                raise ValueError(f"seat {s} needs a bot; known bots: "
                                 f"{', '.join(sorted(BOTS))}, got {name!r}")
            self.bots.append(make_bot(name, seed * 8 + s))
        self.events = []
        self._bot_log = []
        self._draw = state.draws
        self._table_changed = self._hand_changed = False
        self._shown = ()
        self.state = state
        self._record(events)
        self._start = len(self.events)
        return self

    # ------------------------------------------------------------------ the loop

    def run(self) -> int:
        """Play until the game ends or the person quits.

        Returns:
            0 when the game ended, 1 when the person quit (``q`` or end of input).
        """
        c = self.console
        c.print(f"[bold]Manipulation Rummy[/] — you are seat {self.human} against "
                + ", ".join(f"{escape(self.names[s])} (seat {s})"
                            for s in range(self.state.players) if s != self.human)
                + f"; seed {self.seed}; 'h' for help." if self.human >= 0 else
                "[bold]Manipulation Rummy[/] — bots only: "
                + ", ".join(f"{escape(self.names[s])} (seat {s})"
                            for s in range(self.state.players)) + ".")
        changed = self.state.rules.changed()
        if changed:
            c.print(f"rule variants: {escape(str(changed))}", highlight=False)
        self._narrate(self.events[self._start:])  # a resumed game: only what is new
        show = "full"
        while self.state.phase != GAME_OVER:
            if self.state.turn != self.human:
                self._bot_turns()
                show = "full"
                continue
            if show == "full":
                self.render()
            elif show == "short":
                self.render_hand()
            show = ""
            try:
                line = self.input_fn(f"{_PROMPTS.get(self.state.phase, '')}> ")
            except EOFError:
                line = "q"
            outcome = self.handle(line)
            if outcome == "quit":
                c.print(f"You left the game. Seed {self.seed} replays this deal.")
                return 0
            if outcome == "view" or (outcome == "moved" and self._table_changed):
                show = "full"
            elif outcome == "moved" and self._hand_changed:
                show = "short"
        return 0

    def handle(self, line: str) -> str:
        """Carry out one line of input.

        Returns:
            ``"moved"`` (a command was accepted), ``"rejected"`` (nothing changed; the reason
            was printed), ``"view"`` (re-render requested), ``"info"`` (help or hint printed)
            or ``"quit"``.
        """
        c = self.console
        text = line.strip()
        word, _, rest = text.partition(" ")
        word = word.lower()
        if word in ("q", "quit", "exit"):
            return "quit"
        if word in ("h", "help", "?"):
            c.print(escape(HELP), highlight=False)
            return "info"
        if word in ("v", "view"):
            return "view"
        if word == "hint":
            self._hint()
            return "info"
        if not word and self.state.phase == DRAW:
            word = "d"  # Enter draws when drawing is the only thing to do
        elif not word:
            c.print(f"you may: {self.actions_text(view(self.state, self.human))}; h for help",
                    highlight=False)
            return "info"
        try:
            cmd = self.parse(word, rest)
        except NotationError as e:
            c.print(f"[red]✗ {escape(e.message)}[/]", highlight=False)
            return "rejected"
        if cmd is None:
            c.print(f"[yellow]unknown command {escape(text)!r}; type h for help[/]",
                    highlight=False)
            return "rejected"
        try:
            state, events = step(self.state, cmd)
        except IllegalMoveError as e:
            c.print(f"[red]✗ not allowed — {escape(e.message)}[/]", highlight=False)
            if e.meld:
                c.print(f"  offending meld: {escape(' '.join(e.meld))}", highlight=False)
            c.print(f"  [dim](see docs/rules.md {escape(e.rule)}; nothing was changed)[/]",
                    highlight=False)
            return "rejected"
        except RummyError as e:
            c.print(f"[red]✗ {escape(e.message)}[/]", highlight=False)
            return "rejected"
        self._table_changed = state.table != self.state.table or state.round != self.state.round
        self._hand_changed = state.hands[self.human] != self.state.hands[self.human]
        self.state = state
        self._record(events)
        self._narrate(events)
        return "moved"

    def parse(self, word: str, rest: str) -> Command | None:
        """The command for one input line (``word`` lower-cased, ``rest`` its arguments).

        ``a`` and ``x`` are built from the current table; they are shorthands for ``m``.

        Returns:
            The command, or ``None`` if ``word`` is not a game command.

        Raises:
            NotationError: a malformed card or meld number, naming the bad token.
        """
        seat = self.human
        simple: dict[str, Callable[[int], Command]] = {
            "d": Draw, "draw": Draw, "p": Pass, "pass": Pass, "k": Knock, "knock": Knock,
            "e": EndTurn, "end": EndTurn}
        if word in simple:
            if rest.strip():
                raise NotationError(f"'{word}' takes no arguments, got {rest.strip()!r}",
                                    token=rest.strip())
            return simple[word](seat)
        if word in _MELD_WORDS:
            # a/x/r parts joined by ';', or one m: rummy.meld_commands (one parser for
            # what a person types and what the hint and the review print)
            return Meld(seat, apply_meld_command(self.numbered_table(), f"{word} {rest}"))
        return None

    # ------------------------------------------------------------------ rendering

    def render(self) -> None:
        """Print the person's view: scores, the numbered table, the hand, the actions."""
        v = view(self.state, self.human)
        c = self.console
        c.print()
        head = (f"[bold]Round {v.round}[/] · dealer {escape(self.names[v.dealer])} · "
                f"stock {v.stock_size} card(s)")
        if v.final_turns_left is not None:
            head += " · [yellow]stock exhausted: final turns (R8.2)[/]"
        c.print(head, highlight=False)
        scores = RichTable(box=None, padding=(0, 2), show_edge=False)
        for col in ("seat", "player", "cards", "total", "rounds won"):
            scores.add_column(col, justify="right" if col != "player" else "left")
        for s in range(v.players):
            mark = "▶ " if s == v.turn else "  "
            scores.add_row(f"{mark}{s}", escape(self.names[s]), str(v.hand_sizes[s]),
                           str(v.totals[s]), str(v.rounds_won[s]))
        c.print(scores)
        c.print(f"[bold]Table[/] ({len(v.table)} meld(s))" if v.table
                else "[bold]Table[/]: empty — the first meld must be a complete meld from "
                "your hand (R5.5)", highlight=False)
        for i, m in enumerate(self.numbered_table(), 1):
            c.print(f"  {i:>2}. {cards_markup(m)}", highlight=False)
        self.render_hand(v)

    def numbered_table(self) -> Table:
        """The table in display order, numbered from 1 for ``x``: a meld keeps its number
        while it stays on the table unchanged; changed and new melds take the numbers at the
        end (in the engine's order). A new round starts the numbering again."""
        table = self.state.table
        left = list(table)
        kept = []
        for m in self._shown:
            if m in left:
                left.remove(m)
                kept.append(m)
        self._shown = (*kept, *left)
        return self._shown

    def render_hand(self, v: PlayerView | None = None) -> None:
        """Print the person's hand (sorted, with points) and, on their turn, the actions."""
        v = v or view(self.state, self.human)
        c = self.console
        c.print(f"[bold]Your hand[/] ({len(v.hand)} cards, {v.hand_points} points): "
                f"{self.hand_markup(v)}", highlight=False)
        if v.actions:
            c.print(f"[bold green]Your turn[/] — {self.actions_text(v)}", highlight=False)

    @staticmethod
    def hand_markup(v: PlayerView) -> str:
        """The hand sorted by suit then rank (jokers last), each card with its points."""
        return " ".join(f"{card_markup(c)}[dim]({POINTS[c]})[/]" for c in sorted(v.hand))

    @staticmethod
    def actions_text(v: PlayerView) -> str:
        """What the person may type now, from ``v.actions``."""
        words = {"draw": "d draw", "meld": "m/a/x meld", "pass": "p pass",
                 "knock": "k knock", "end_turn": "e end the turn"}
        text = ", ".join(words[a] for a in v.actions)
        if v.phase == MELD_OR_PASS and v.final_turns_left is None:
            text += f" (draw {v.draws} of {v.rules.max_draws_per_turn})"
        if v.phase == KNOCK_OR_END:
            text += (f" (hand {v.hand_points} points ≤ {v.rules.knock_threshold}: "
                     "you may knock, R6.1)")
        return text

    # ------------------------------------------------------------------ bots and narration

    def _bot_turns(self) -> None:
        """Let the bots play until the person must act or the game ends."""
        while self.state.phase != GAME_OVER and self.state.turn != self.human:
            seat = self.state.turn
            bot = self.bots[seat]
            assert bot is not None
            cmd = bot.act(view(self.state, seat))
            self.state, events = step(self.state, cmd)
            self._record(events)
            self._narrate(events, actor=seat, command=cmd)
        self._flush_bot_line()

    def _record(self, events: Sequence[Event]) -> None:
        self.events.extend(events)
        if self.save is not None:
            self.save.writelines(dumps(e) + "\n" for e in events)

    def _bot_action(self, seat: int, cmd: Command, events: Sequence[Event]) -> str:
        if isinstance(cmd, Draw):
            return "draws"
        if isinstance(cmd, Pass):
            return "passes"
        if isinstance(cmd, Meld):
            melded = next(e for e in events if isinstance(e, Melded))
            return (f"melds {cards_markup(melded.cards)} "
                    f"({len(melded.table)} meld(s) on the table)")
        if isinstance(cmd, Knock):
            knock = next(e for e in events if isinstance(e, Knocked))
            return f"[bold]knocks[/] with {knock.points} point(s)"
        return "ends the turn"

    def _flush_bot_line(self) -> None:
        if self._bot_log:
            self.console.print("  " + "\n  ".join(self._bot_log), highlight=False)
            self._bot_log = []

    def _narrate(self, events: Sequence[Event], actor: int | None = None,
                 command: Command | None = None) -> None:
        """Describe events: one line per bot command, the person's draws, round results."""
        c = self.console
        if actor is not None and command is not None:
            self._bot_log.append(f"{escape(self.names[actor])} (seat {actor}) "
                                 f"{self._bot_action(actor, command, events)}")
        for e in events:
            match e:  # one case per event type: a new one not narrated here fails mypy
                case CardDrawn() if e.seat == self.human and e.card is not None:
                    self._draw = e.draw
                    c.print(f"You draw {card_markup(e.card)} (draw {e.draw}).",
                            highlight=False)
                case Melded() if e.seat == self.human:
                    c.print(f"You meld {cards_markup(e.cards)}.", highlight=False)
                case Passed() if e.seat == self.human:
                    # a pass after the first draw is R3.2's, after a later one R3.3's
                    c.print(f"You pass ({'R3.2' if self._draw <= 1 else 'R3.3'}).",
                            highlight=False)
                case Knocked() if e.seat == self.human:
                    c.print("You knock.", highlight=False)
                case TurnEnded() if e.seat == self.human:
                    c.print("Your turn is over.", highlight=False)
                case StockExhausted():
                    self._flush_bot_line()
                    c.print("[yellow]The stock is exhausted (R8.1): everyone gets one final "
                            "turn without drawing (R8.2).[/]", highlight=False)
                case RoundScored():
                    self._flush_bot_line()
                    self._round_result(e)
                case RoundStarted():
                    self._flush_bot_line()
                    first = (e.dealer + 1) % self.state.players
                    who = ("you play" if first == self.human
                           else f"{escape(self.names[first])} plays")
                    dealer = ("you" if e.dealer == self.human else escape(self.names[e.dealer]))
                    c.print(f"[bold]Round {e.round}[/] is dealt; the dealer is {dealer} (seat "
                            f"{e.dealer}); {who} first.", highlight=False)
                case GameEnded():
                    self._flush_bot_line()
                    self._game_result(e)
                case CardDrawn() | Melded() | Passed() | Knocked() | TurnEnded():
                    pass  # a bot's move: told in its command's line above
                case GameStarted():
                    pass  # the game's opening is told before the first round
                case SeatLeft() | SeatTakenOver() | ReclaimRequested() | SeatReclaimed() \
                        | TimedOut():
                    self._flush_bot_line()  # a served game's seat change (§13)
                    c.print(escape(describe_seat_change(
                        e, f"{self.names[e.seat]} (seat {e.seat})")), highlight=False)
                case _:
                    assert_never(e)

    def _round_result(self, e: RoundScored) -> None:
        c = self.console
        how = {"knock": f"{escape(self.names[e.knocker or 0])} knocked",
               "going_out": f"{escape(self.names[e.knocker or 0])} went out (R6.2)",
               "stock": "the stock ran out (R8.3)"}[e.reason]
        t = RichTable(title=f"Round {e.round} is over: {how}", box=None, padding=(0, 2))
        for col in ("seat", "player", "hand left", "points", "score", "total"):
            t.add_column(col, justify="left" if col in ("player", "hand left") else "right")
        for s in range(len(e.points)):
            win = " ★" if s in e.winners else ""
            t.add_row(str(s), escape(self.names[s]) + win, cards_markup(e.hands[s]) or "-",
                      str(e.points[s]), f"+{e.scores[s]}", str(e.totals[s]))
        c.print(t)

    def _game_result(self, e: GameEnded) -> None:
        c = self.console
        t = RichTable(title="Game over (R9)", box=None, padding=(0, 2))
        for col in ("seat", "player", "total", "bonuses", "final"):
            t.add_column(col, justify="left" if col == "player" else "right")
        for s in range(len(e.final)):
            t.add_row(str(s), escape(self.names[s]), str(e.totals[s]), f"+{e.bonuses[s]}",
                      str(e.final[s]))
        c.print(t)
        winners = ", ".join(f"{escape(self.names[s])} (seat {s})" for s in e.winners)
        verdict = ("" if self.human < 0 else
                   "You win!" if self.human in e.winners else "You lose.")
        c.print(f"[bold]Winner: {winners}[/]. {verdict}", highlight=False)

    def _hint(self) -> None:
        v = view(self.state, self.human)
        if not v.actions:
            self.console.print("not your turn")
            return
        cmd = make_bot("basic", 0).act(v)
        if isinstance(cmd, Meld):
            text = self.shortest_meld(cmd.table)
        else:
            text = {Draw: "d", Pass: "p", Knock: "k", EndTurn: "e"}[type(cmd)]
        # one line, never wrapped, so it can be pasted at the prompt
        self.console.print(f"the basic bot would type: {escape(text)}", highlight=False,
                           soft_wrap=True)

    def shortest_meld(self, new_table: Table) -> str:
        """The shortest input that makes ``new_table`` from the numbered table
        (:func:`rummy.meld_commands.meld_command`): ``a``/``x`` parts joined by ``;``, one
        ``r`` when melds are taken apart, ``m <whole table>`` only when shorter."""
        return meld_command(self.numbered_table(), new_table)


# ---------------------------------------------------------------------- command line

EPILOG = """\
examples:
  rummy play                                  you against a basic bot
  rummy play --players 4 --bots basic,random  you against basic, random, basic
  rummy play --seed 7 --rules target_score=50 --save game.jsonl
  rummy replay game.jsonl                     replay a saved game afterwards
"""


def add_parser(subparsers: Any) -> None:
    """Register ``rummy play`` on the ``rummy`` command's subparsers."""
    p = subparsers.add_parser(
        "play", help="play a game in the terminal against bots",
        description="Play Manipulation Rummy against bots in the terminal. You are seat 0; "
        "type h in the game for the commands.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=int, default=2, help="seats including you, 2..5 "
                   "(default 2)")
    p.add_argument("--bots", default="basic", help="comma-separated bot strategies for the "
                   f"other seats, cycled (default basic; known: {', '.join(sorted(BOTS))})")
    p.add_argument("--seed", type=int, help="the deal's seed (default: random, printed)")
    add_rules_option(p, example="target_score=50")
    p.add_argument("--name", default="you", help="your name at the table (default you)")
    p.add_argument("--save", metavar="FILE", help="write the game's events as JSON lines "
                   "(open it later with `rummy replay FILE`)")
    p.set_defaults(func=cmd_play)


def parse_rules(pairs: Sequence[str]) -> RuleSet:
    """A rule set from ``variant=value`` strings (:func:`rummy_cli.options.rule_set`).

    Raises:
        ValueError: a pair without ``=``, a variant given twice, an unknown variant or a
            bad value (``InvalidRuleSetError``, R11).
    """
    from rummy_cli.options import rule_set
    rules: RuleSet = rule_set(pairs)
    return rules


def cmd_play(args: argparse.Namespace, *, console: Console | None = None,
             input_fn: Callable[[str], str] = input) -> int:
    """``rummy play``: returns 0 when the game was played to the end or the person quit
    (``q``), 2 on bad options.

    Raises:
        SystemExit: invalid options (the message names the option and the rule).
    """
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    try:
        bots = bot_names(args.bots) or []
        rules = parse_rules(args.rules)
        if not 2 <= args.players <= 5:
            raise ValueError(f"--players must be 2..5, got {args.players} (R1.1)")
        problem = output_problem(args.save)
        if problem:
            raise ValueError(problem)
        save = open(args.save, "w", encoding="utf-8") if args.save else None  # noqa: SIM115
    except ValueError as e:
        raise usage_error(f"error: {e}") from None
    except OSError as e:
        raise usage_error(f"error: cannot write {args.save}: {e.strerror or e}") from None
    try:
        try:
            session = PlaySession(args.players, bots, seed, rules, console=console,
                                  input_fn=input_fn, name=args.name, save=save)
        except ValueError as e:
            raise usage_error(f"error: {e}") from None
        code = session.run()
    finally:
        if save is not None:
            save.close()
    if args.save:
        finished = session.state.phase == GAME_OVER
        cmd = f"rummy replay {args.save}" + ("" if finished else " --allow-incomplete")
        (console or Console()).print(f"events written to {args.save} ({cmd})",
                                     highlight=False, soft_wrap=True)
    return code


__all__ = ["HELP", "PlaySession", "add_parser", "cmd_play", "scripted"]


def _is_bot(name: str) -> bool:
    """Whether ``name`` names a bot :func:`rummy.bots.check_bot` accepts (a tester's own)."""
    try:
        check_bot(name)
    except ValueError:
        return False
    return True
