"""The replay page (`rummy replay LOG --html F`): the meld diff, the embedded data, the page
of one seat holds no card that seat could not see (I3), and the errors of the options."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rummy.cards import JOKER, effective, format_card, parse_cards
from rummy.events import CardDrawn, Melded, RoundScored, RoundStarted, dumps
from rummy.invariants import verify_log
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.views import redact, view
from rummy_cli.main import main
from rummy_cli.replay import read_log
from rummy_cli.replay_page import page_data, render_page, table_diff

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _marks(old: str | list[str], new: list[str], added: str):
    marked, fresh = table_diff(parse_table(old), parse_table(new), parse_cards(added))
    return [[(format_card(c), m, format_card(w) if w else None) for c, m, w in row]
            for row in marked], fresh


def test_diff_marks_new_and_moved_cards():
    marked, fresh = _marks(["5S 6S 7S 8S", "8H 8D 8C"], ["4S 5S 6S 7S", "8S 8H 8D 8C"], "4S")
    assert marked == [[("4S", "new", None), ("5S", "", None), ("6S", "", None),
                       ("7S", "", None)],
                      [("8S", "moved", None), ("8H", "", None), ("8D", "", None),
                       ("8C", "", None)]]
    assert fresh == []


def test_diff_marks_a_freed_and_redeclared_joker():
    # R5.8/R5.9: the real 7S replaces the joker, which is used at once as 9C
    marked, fresh = _marks(["*7S 8S 9S"], ["7S 8S 9S", "9H 9D *9C"], "7S 9H 9D")
    assert marked[0] == [("7S", "new", None), ("8S", "", None), ("9S", "", None)]
    assert sorted(marked[1]) == [("*9C", "freed", "*7S"), ("9D", "new", None),
                                 ("9H", "new", None)]
    assert fresh == [1]


def test_diff_of_a_hand_joker_and_a_joker_that_only_moves():
    # R5.6: a joker from the hand takes a declaration; R5.7: a table joker keeps its own
    marked, _ = _marks(["3H 4H 5H *6H"], ["3H 4H 5H", "*6H 7H 8H", "QD KD *AD"], "7H 8H QD KD *")
    flat = {(c, m) for row in marked for c, m, _ in row}
    assert ("*6H", "moved") in flat and ("*AD", "new") in flat
    assert parse_cards("*") == (JOKER,)


def test_page_data_steps_follow_the_replay():
    events = read_log(str(GOLDEN / "basic-2p-seed1.jsonl"))
    data = page_data(events)
    states = list(verify_log(events))
    assert len(data["steps"]) == len(events) == len(states)
    for i in (1, 12, 300, len(events)):
        step, state = data["steps"][i - 1], states[i - 1]
        table = data["tables"][step["t"]]["melds"]
        shown = [[c if isinstance(c, str) else c[0] for c in m] for m in table]
        assert shown == [[format_card(c) for c in m] for m in state.table]
        assert step["s"] == state.stock_size and step["o"] == list(state.totals)
        assert step["h"] == [" ".join(format_card(c) for c in h) for h in state.hands]


def _one_round(seed: int):
    """A one-round game that ends at the first knock (R6.1 with a high threshold): most of
    the stock is never drawn, so seat 0 and seat 1 never see those cards."""
    rules = RuleSet(target_score=1, knock_threshold=1000)
    events = play_game(("greedy", "basic"), seed, rules, record=True).events
    # stop before the round is scored (hands are public then): a game in progress
    return events[:next(i for i, e in enumerate(events) if isinstance(e, RoundScored))]


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"(?<![0-9A-Za-z])[A2-9TJQK][SHDC](?![0-9A-Za-z])", text))


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_page_holds_no_card_the_seat_could_not_see(tmp_path, seat):
    events = _one_round(5)
    start = events[0]
    players, hand_size = start.players, start.rules.hand_size
    seen: set[str] = set()  # every card token the seat may see, in any form (I3)
    for e, state in zip(events, verify_log(events), strict=True):
        v = view(state, seat)
        seen.update(format_card(c) for c in v.hand)
        seen.update(format_card(effective(c)) for m in v.table for c in m)
        r = redact(e, seat, players=players, hand_size=hand_size)
        if isinstance(r, CardDrawn) and r.card is not None:
            seen.add(format_card(r.card))
        if isinstance(r, (Melded)):
            seen.update(format_card(c) for c in r.cards if c != JOKER)
        if isinstance(r, RoundScored):
            seen.update(format_card(c) for h in r.hands for c in h if c != JOKER)
    deck = next(e.deck for e in events if isinstance(e, RoundStarted))
    assert deck is not None
    hidden = {format_card(c) for c in deck if c != JOKER} - seen
    assert len(hidden) > 10, "the test needs cards the seat never saw"
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in events))
    page = tmp_path / "seat.html"
    assert main(["replay", str(log), "--html", str(page), "--seat", str(seat),
                 "--analyse"]) == 0
    text = page.read_text()
    assert _tokens(text) & hidden == set()
    assert _tokens(text) <= seen
    # the page of every hand shows the other hand (the check above is not vacuous)
    full = tmp_path / "full.html"
    assert main(["replay", str(log), "--html", str(full)]) == 0
    assert len(hidden & _tokens(full.read_text())) >= 3
    data = json.loads(re.search(r'id="game">(.*?)</script>', text, re.S).group(1))
    assert all(h is None for s in data["steps"] for p, h in enumerate(s["h"]) if p != seat)
    assert {a["seat"] for a in data["analysis"]} == {seat}


def test_page_is_self_contained_and_safe():
    events = read_log(str(GOLDEN / "random-5p-seed4.jsonl"))
    html = render_page(page_data(events, title="</script><b>{{js}}</b>"))
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    assert html.count("</script>") == 2  # the data block and the script, nothing injected
    assert "&lt;/script&gt;&lt;b&gt;{{js}}&lt;/b&gt;" in html


def test_options_errors(tmp_path, capsys):
    log = GOLDEN / "basic-2p-seed1.jsonl"
    page = str(tmp_path / "p.html")
    assert main(["replay", str(log), "--html", page, "--seat", "2"]) == 2
    assert "--seat 2: this game has seats 0..1 (R1.1)" in capsys.readouterr().err
    assert main(["replay", str(log), "--seat", "1"]) == 2
    assert "add --html FILE or --analyse" in capsys.readouterr().err
    assert main(["replay", str(log), "--json", "-"]) == 2
    assert "add --analyse" in capsys.readouterr().err
    # a seat's redacted copy of the log cannot show every hand
    events = read_log(str(log))
    red = tmp_path / "seat0.jsonl"
    red.write_text("".join(dumps(redact(e, 0, players=2, hand_size=10)) + "\n" for e in events))
    assert main(["replay", str(red), "--html", page]) == 1
    err = capsys.readouterr().err
    assert "every hand was asked for (no --seat)" in err and "not full-information" in err
    assert main(["replay", str(red), "--html", page, "--seat", "0"]) == 1
    assert "not full-information: event 2" in capsys.readouterr().err
    assert not Path(page).exists()
