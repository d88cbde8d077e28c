"""Runs the shared conformance case format (tests/conformance/cases/README.md).

``run_case(case) -> (ok, message)``; ``rummy conformance`` (:mod:`rummy_cli.main`) reads
the JSON-lines files. Kinds: ``meld``,
``action``, ``best_play``, ``round_score``, ``hand_value``, ``game_end``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from rummy.cards import JOKER, decks_for, format_card, hand_points, parse_cards, physical
from rummy.decide import check_opening_action
from rummy.errors import IllegalMoveError, NotationError, RummyError
from rummy.melds import check_action, is_valid_meld, parse_meld, parse_table
from rummy.rules import RuleSet
from rummy.scoring import final_scores, score_round

KINDS = ("meld", "action", "best_play", "round_score", "hand_value", "game_end")


class NotProven(Exception):
    """A well-formed ``best_play`` case whose value the solver cannot prove under the case's
    rule set (``rummy.solver.Unproven``): it fails as not proven, not as malformed."""


def _best_points(table: Any, hand: Any, rules: RuleSet, opening: bool) -> int:
    from rummy.solver import Unproven, best_points
    try:
        return int(best_points(table, hand, rules=rules, opening=opening))
    except Unproven as e:
        raise NotProven(str(e)) from None


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


#: the rule numbers of docs/rules.md a case may cite: its numbered rules, its sections
#: (R1 to R11, and R13, leaving a served game) and its invariants (I1 to I4);
#: ``tests/unit/test_conformance_sanity.py`` compares the numbered ones with the document
RULE_IDS = frozenset(
    [f"R{s}.{n}" for s, last in ((1, 5), (2, 3), (3, 6), (4, 5), (5, 9), (6, 3), (7, 8),
                                 (8, 3), (9, 4), (13, 5)) for n in range(1, last + 1)]
    + ["R9.3a", "R13"] + [f"R{s}" for s in range(1, 12)] + [f"I{n}" for n in range(1, 5)])


def _supply(cards: Iterable[int], decks: int, where: str) -> str | None:
    """Why ``cards`` (table or hand cards, jokers by any declaration) cannot all come from
    ``decks`` decks (R1.2, R1.3: one copy of each card and one joker per deck), or
    ``None``."""
    count = Counter(physical(c) for c in cards)
    for card, n in sorted(count.items()):
        if n > decks:
            name = "jokers" if card == JOKER else f"copies of {format_card(card)}"
            return (f"{n} {name} in {where}; {decks} deck{'s' if decks > 1 else ''} "
                    f"hold{'' if decks > 1 else 's'} {decks} (R1.2)")
    return None


def _impossible(case: dict[str, Any], rules: RuleSet) -> str | None:
    """Why a well-formed case describes a position the rules never reach (a rule number
    that does not exist, an empty meld on the table before the action, more copies of a
    card than the decks hold, a game that has not ended), or ``None``. The cards are
    parsed here; a notation error is left to :func:`run_case`."""
    rule = case.get("rule")
    if rule not in RULE_IDS:
        return (f"rule {rule!r} is not a rule of docs/rules.md (R1.1 to R9.4 and R9.3a, a "
                "section R1 to R11, or an invariant I1 to I4)")
    kind = case.get("kind")
    try:
        if kind in ("action", "best_play"):
            table = parse_table(case["table"])
            hand = parse_cards(case["hand"])
            # an illegal table before the action is a position of its own (shared case
            # a-027: every meld of the new table is checked, unchanged ones too), but an
            # empty meld is no meld at all
            for i, meld in enumerate(table, 1):
                if not meld:
                    return (f"meld {i} of the table before the action is empty: a meld has "
                            "at least three cards (R4.1)")
            return _supply([c for m in table for c in m] + list(hand), 2,
                           "the table and the hand")
        if kind == "hand_value":
            return _supply(parse_cards(case["hand"]), 2, "the hand")
        if kind == "round_score" and isinstance(case.get("hands"), list) \
                and 2 <= len(case["hands"]) <= 5:
            hands = [parse_cards(h) for h in case["hands"]]
            return _supply([c for h in hands for c in h], decks_for(len(hands)),
                           f"the {len(hands)} hands")
        if kind == "game_end":
            totals, won = case.get("totals"), case.get("rounds_won")
            if isinstance(totals, list) and isinstance(won, list):
                if len(totals) != len(won):
                    return (f"{len(totals)} totals but {len(won)} rounds_won: one of each per "
                            "seat")
                target = rules.target_score
                if totals and all(type(t) is int for t in totals) and max(totals) < target:
                    return (f"no total reaches {target}: the game has not ended (R9.1), so "
                            "there are no final bonuses")
    except (KeyError, RummyError, TypeError):
        return None  # run_case names what is missing or malformed
    return None


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


def case_rules(case: dict[str, Any]) -> RuleSet:
    """The rule set a case is played under: its ``rules`` object (docs/rules.md §11
    variants, JSON-typed; the variants it leaves out at their defaults), or the default
    rules.

    Raises:
        InvalidRuleSetError: ``rules`` is not an object, names an unknown variant, or gives
            a value of the wrong type or out of range (the case is malformed: it is never
            run under other rules).
    """
    if "rules" not in case:
        return RuleSet()
    return RuleSet.from_json(case["rules"], complete=False)


def case_opening(case: dict[str, Any]) -> bool:
    """Whether an ``action`` or ``best_play`` case is the acting seat's opening meld (R5.5
    and the opening variants of §11): its ``opening`` field, else whether ``table`` is
    empty.

    Raises:
        NotationError: ``opening`` is not ``true`` or ``false``.
    """
    if "opening" in case:
        if not isinstance(case["opening"], bool):
            raise NotationError(f"field 'opening' must be true or false, got "
                                f"{case['opening']!r}")
        return case["opening"]
    return not case.get("table")


def run_case(case: dict[str, Any]) -> tuple[bool, str]:
    """Run one case under its rule set (:func:`case_rules`). Returns ``(passed,
    message)``; the message explains a failure.

    A malformed case (missing fields, bad notation, a ``rules`` object that names an
    unknown variant or a value out of range, an ``opening`` that is not a boolean) fails
    with the error as message, and so does a case on which the engine itself raises: one
    bad case never stops a run (``rummy conformance`` goes on with the next one and always
    prints its summary).
    """
    kind = case.get("kind")
    try:
        rules = case_rules(case)
        opening = case_opening(case) if kind in ("action", "best_play") else False
    except RummyError as e:
        return False, f"malformed case: {e}"
    problem = _malformed(case) or _impossible(case, rules)
    if problem is not None:
        return False, f"malformed case: {problem}"
    try:
        if kind == "meld":
            got = is_valid_meld(parse_meld(case["cards"]), rules.ace_high)
            return got == case["valid"], f"valid={got}, expected {case['valid']}"
        if kind == "action":
            table = parse_table(case["table"])
            hand = parse_cards(case["hand"])
            new = parse_table(case["new_table"])
            try:
                added = check_action(table, hand, new, rules=rules)
                check_opening_action(rules, table, new, added, opening=opening)
                valid, rule = True, None
            except IllegalMoveError as e:
                valid, rule = False, e.rule
            if valid != case["valid"]:
                return False, f"valid={valid} ({rule}), expected {case['valid']}"
            if not valid and rule != case["rule"]:
                return False, f"rejected for {rule}, expected {case['rule']}"
            return True, ""
        if kind == "best_play":
            points = _best_points(parse_table(case["table"]), parse_cards(case["hand"]),
                                  rules, opening)
            return points == case["best_points"], \
                f"best_points={points}, expected {case['best_points']}"
        if kind == "round_score":
            k = case["knocker"]
            if not isinstance(case["hands"], list) or not 2 <= len(case["hands"]) <= 5:
                return False, "malformed case: a round has 2 to 5 hands (R1.1)"
            if not (k is None or (type(k) is int and 0 <= k < len(case["hands"]))):
                return False, f"malformed case: knocker {k!r} is not a seat of the hands"
            r = score_round([parse_cards(h) for h in case["hands"]], case["knocker"], rules)
            ok = list(r.scores) == case["scores"] and list(r.winners) == case["winners"]
            return ok, f"scores={list(r.scores)} winners={list(r.winners)}, expected " \
                       f"scores={case['scores']} winners={case['winners']}"
        if kind == "hand_value":
            hand = parse_cards(case["hand"])
            pts = hand_points(hand)
            may = pts <= rules.knock_threshold
            ok = pts == case["points"] and may == case["may_knock"]
            return ok, f"points={pts} may_knock={may}, expected {case['points']} " \
                       f"{case['may_knock']}"
        if kind == "game_end":
            if not all(type(x) is int and x >= 0 for x in case["totals"] + case["rounds_won"]):
                return False, "malformed case: totals and rounds_won must be integers >= 0"
            if not 2 <= len(case["totals"]) <= 5:
                return False, "malformed case: a game has 2 to 5 players (R1.1)"
            g = final_scores(case["totals"], case["rounds_won"], rules)
            ok = list(g.final) == case["final"] and list(g.winners) == case["winners"]
            return ok, f"final={list(g.final)} winners={list(g.winners)}, expected " \
                       f"final={case['final']} winners={case['winners']}"
        return False, f"unknown case kind {kind!r} (known: {', '.join(KINDS)})"
    except NotProven as e:  # a well-formed case the solver cannot settle under its rules
        return False, f"not proven: {e}"
    except ImportError as e:  # a missing or renamed engine function fails, never skips
        return False, f"the runner of kind {kind!r} is broken: {type(e).__name__}: {e}"
    except KeyError as e:
        return False, f"malformed case: missing field {e}"
    except RummyError as e:
        return False, f"malformed case: {e}"
    except (TypeError, ValueError, IndexError, AttributeError) as e:
        return False, f"malformed case: {type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001 - a crash of the engine fails this case only
        return False, f"error: {type(e).__name__}: {e}"
