"""Runs the shared conformance case format (tests/conformance/cases/README.md).

``run_case(case) -> (ok, message)``; ``rummy conformance`` (:mod:`rummy_cli.main`) reads
the JSON-lines files. Kinds: ``meld``,
``action``, ``best_play``, ``round_score``, ``hand_value``, ``game_end``.
"""

from __future__ import annotations

from typing import Any

from rummy.cards import hand_points, parse_cards
from rummy.errors import IllegalMoveError, RummyError
from rummy.melds import check_action, is_valid_meld, parse_meld, parse_table
from rummy.rules import RuleSet
from rummy.scoring import final_scores, score_round

KINDS = ("meld", "action", "best_play", "round_score", "hand_value", "game_end")


def _best_points(table: Any, hand: Any) -> int:
    from rummy.solver import best_points  # the solver (issue 3)
    return int(best_points(table, hand))


#: the type of each expected value of a case (``bool`` is not an ``int`` here)
_EXPECTED: dict[str, dict[str, str]] = {
    "meld": {"valid": "bool"}, "action": {"valid": "bool"}, "best_play": {"best_points": "int"},
    "round_score": {"scores": "ints", "winners": "ints"},
    "hand_value": {"points": "int", "may_knock": "bool"},
    "game_end": {"final": "ints", "winners": "ints"},
}


#: the card fields of each kind: ``cards`` a JSON array of cards, ``table`` an array of
#: melds (arrays of cards), ``hands`` an array of hands (arrays of cards). The engine's
#: parsers also read a notation string (``"AS 2S 3S"``, ``"5S 6S 7S | 8H 8D 8C"``), but
#: the case format has arrays only (README): a string is a malformed case, not a pass
_CARD_LISTS: dict[str, dict[str, str]] = {
    "meld": {"cards": "cards"},
    "action": {"table": "table", "hand": "cards", "new_table": "table"},
    "best_play": {"table": "table", "hand": "cards"},
    "round_score": {"hands": "table"},
    "hand_value": {"hand": "cards"},
}


def _is_cards(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(c, str) for c in v)


def _malformed_cards(case: dict[str, Any]) -> str | None:
    """Why a card field of a case is not the JSON array the format asks for, or ``None``
    (a missing field is left to :func:`run_case`, which names it)."""
    for key, shape in _CARD_LISTS.get(str(case.get("kind")), {}).items():
        if key not in case:
            continue
        v = case[key]
        if shape == "cards" and not _is_cards(v):
            return (f"field {key!r} must be a JSON array of cards (R1.4), e.g. "
                    f'["AS", "2S"], got {v!r}')
        if shape == "table" and not (isinstance(v, list) and all(_is_cards(m) for m in v)):
            what = "hands" if key == "hands" else "melds"
            return (f"field {key!r} must be a JSON array of {what}, each a JSON array of "
                    f'cards (R1.4), e.g. [["5S", "6S", "7S"]], got {v!r}')
    return None


def _malformed(case: dict[str, Any]) -> str | None:
    """Why a case is malformed (a card field that is not a JSON array of cards, an
    expected value of the wrong JSON type), or ``None``."""
    problem = _malformed_cards(case)
    if problem is not None:
        return problem
    for key, kind in _EXPECTED.get(str(case.get("kind")), {}).items():
        if key not in case:
            return f"missing field {key!r}"
        v = case[key]
        ok = (isinstance(v, bool) if kind == "bool" else
              type(v) is int if kind == "int" else
              isinstance(v, list) and all(type(x) is int for x in v))
        if not ok:
            want = {"bool": "true or false", "int": "an integer",
                    "ints": "a list of integers"}[kind]
            return f"field {key!r} must be {want}, got {v!r}"
    return None


def run_case(case: dict[str, Any]) -> tuple[bool, str]:
    """Run one case. Returns ``(passed, message)``; the message explains a failure.

    A malformed case (missing fields, bad notation) fails with the error as message, and
    so does a case on which the engine itself raises: one bad case never stops a run
    (``rummy conformance`` goes on with the next one and always prints its summary).
    """
    kind = case.get("kind")
    problem = _malformed(case)
    if problem is not None:
        return False, f"malformed case: {problem}"
    try:
        if kind == "meld":
            got = is_valid_meld(parse_meld(case["cards"]))
            return got == case["valid"], f"valid={got}, expected {case['valid']}"
        if kind == "action":
            table = parse_table(case["table"])
            hand = parse_cards(case["hand"])
            new = parse_table(case["new_table"])
            try:
                check_action(table, hand, new)
                valid, rule = True, None
            except IllegalMoveError as e:
                valid, rule = False, e.rule
            if valid != case["valid"]:
                return False, f"valid={valid} ({rule}), expected {case['valid']}"
            if not valid and rule != case["rule"]:
                return False, f"rejected for {rule}, expected {case['rule']}"
            return True, ""
        if kind == "best_play":
            points = _best_points(parse_table(case["table"]), parse_cards(case["hand"]))
            return points == case["best_points"], \
                f"best_points={points}, expected {case['best_points']}"
        if kind == "round_score":
            k = case["knocker"]
            if not isinstance(case["hands"], list) or not 2 <= len(case["hands"]) <= 5:
                return False, "malformed case: a round has 2 to 5 hands (R1.1)"
            if not (k is None or (type(k) is int and 0 <= k < len(case["hands"]))):
                return False, f"malformed case: knocker {k!r} is not a seat of the hands"
            r = score_round([parse_cards(h) for h in case["hands"]], case["knocker"], RuleSet())
            ok = list(r.scores) == case["scores"] and list(r.winners) == case["winners"]
            return ok, f"scores={list(r.scores)} winners={list(r.winners)}, expected " \
                       f"scores={case['scores']} winners={case['winners']}"
        if kind == "hand_value":
            hand = parse_cards(case["hand"])
            pts = hand_points(hand)
            may = pts <= RuleSet().knock_threshold
            ok = pts == case["points"] and may == case["may_knock"]
            return ok, f"points={pts} may_knock={may}, expected {case['points']} " \
                       f"{case['may_knock']}"
        if kind == "game_end":
            if not all(type(x) is int and x >= 0 for x in case["totals"] + case["rounds_won"]):
                return False, "malformed case: totals and rounds_won must be integers >= 0"
            if not 2 <= len(case["totals"]) <= 5:
                return False, "malformed case: a game has 2 to 5 players (R1.1)"
            g = final_scores(case["totals"], case["rounds_won"], RuleSet())
            ok = list(g.final) == case["final"] and list(g.winners) == case["winners"]
            return ok, f"final={list(g.final)} winners={list(g.winners)}, expected " \
                       f"final={case['final']} winners={case['winners']}"
        return False, f"unknown case kind {kind!r} (known: {', '.join(KINDS)})"
    except ImportError as e:
        return False, f"not available: {e}"
    except KeyError as e:
        return False, f"malformed case: missing field {e}"
    except RummyError as e:
        return False, f"malformed case: {e}"
    except (TypeError, ValueError, IndexError, AttributeError) as e:
        return False, f"malformed case: {type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - a crash of the engine fails this case only
        return False, f"error: {type(e).__name__}: {e}"
