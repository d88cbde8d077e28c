"""The rule set of a game: docs/rules.md §11 variants as one frozen value.

A ``RuleSet`` is recorded in the ``GameStarted`` event, so a replay always uses the rules
the game was played with (I4). Unknown variants and out-of-range values are refused when
the game is created (§11), never ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from rummy.errors import InvalidRuleSetError

_INTEGER = re.compile(r"[+-]?[0-9]{1,9}")  #: an integer variant written as text (ASCII)

#: (minimum, maximum) of each integer variant (docs/rules.md §11 "Ranges"); booleans are listed
#: with ``None``, the option variants with the tuple of their values (strings).
_RANGES: dict[str, tuple[int, int] | tuple[str, ...] | None] = {
    "target_score": (1, 100_000),
    "knock_threshold": (0, 1000),
    "hand_size": (1, 20),
    "max_draws_per_turn": (1, 10),
    "undercut_bonus": (0, 10_000),
    "going_out_bonus": (0, 10_000),
    "game_bonus": (0, 10_000),
    "round_bonus": (0, 10_000),
    "round_bonus_for_all": None,
    "opening_meld_per_player": None,
    "opening_meld_min_points": (0, 1000),
    "knock_timing": ("end", "start"),
    "joker_release": ("table", "hand"),
    "joker_moves": ("free", "locked"),
    "ace_high": None,
}


def _kind(rng: tuple[int, int] | tuple[str, ...] | None) -> str:
    """How §11 words a variant's allowed values, for error messages."""
    if rng is None:
        return "true or false"
    if isinstance(rng[0], str):
        return "one of " + ", ".join(repr(v) for v in rng)
    return f"an integer in {rng[0]}..{rng[1]}"


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Rule variants of docs/rules.md §11; every default is the normative rule.

    Attributes (points are R1.5 card points):
        target_score: game ends after a round in which a total reaches this (R9.1).
        knock_threshold: a hand worth at most this many points may knock (R6.1).
        hand_size: cards dealt to each player (R2.2).
        max_draws_per_turn: draws before the turn is over without a meld (R3.1–R3.3).
        undercut_bonus: bonus of a round winner who did not knock (R7.4).
        going_out_bonus: bonus of a round winner with an empty hand (R7.7).
        game_bonus: bonus for a total of ``target_score`` or more (R9.2).
        round_bonus: bonus per round won for the other players (R9.3).
        round_bonus_for_all: everyone gets the per-round bonus (variant of R9.3).
        opening_meld_per_player: R5.5 applies to each player's first meld action of the
            round: it must contain at least one complete legal meld made only of cards
            from that player's hand; the same action may also lay off and rearrange
            (§11, resolved).
        opening_meld_min_points: the opening meld action (the round's first, or each
            player's first with ``opening_meld_per_player``) must add at least this many
            points (R1.5), counting every card the action adds, jokers at 25 (§11).
        knock_timing: ``"end"`` (R6.1: knock after the turn is over) or ``"start"`` (knock
            only at the start of one's own turn, before the first draw; never after a turn).
        joker_release: ``"table"`` (R5.8: the real card may come from the table or the hand)
            or ``"hand"`` (only real cards the action adds from the hand free jokers).
        joker_moves: ``"free"`` (R5.7) or ``"locked"``: no table joker is ever freed, and a
            table meld holding a joker stays whole (cards may be added to it, none leave).
        ace_high: ``True`` (R4.3: Q-K-A is a sequence) or ``False`` (the ace is low only).

    A new variant changes the recorded ``GameStarted`` (docs/events.md, "How to add a
    variant": a schema version and an upcaster; a test fails without them).

    Every value is checked when the rule set is made, however it is made (constructor,
    :meth:`from_dict`, ``dataclasses.replace``): integers are ``int`` (not ``bool``) within
    their §11 range, booleans are ``bool``.

    Raises:
        InvalidRuleSetError: a value of the wrong type or out of range, naming the
            variant and its range (R11).
    """

    target_score: int = 150
    knock_threshold: int = 5
    hand_size: int = 10
    max_draws_per_turn: int = 3
    undercut_bonus: int = 10
    going_out_bonus: int = 25
    game_bonus: int = 100
    round_bonus: int = 25
    round_bonus_for_all: bool = False
    opening_meld_per_player: bool = False
    opening_meld_min_points: int = 0
    knock_timing: str = "end"
    joker_release: str = "table"
    joker_moves: str = "free"
    ace_high: bool = True

    def __new__(cls, *args: Any, **kwargs: Any) -> RuleSet:
        # an unknown keyword is an unknown variant (R11), not a TypeError of the dataclass
        unknown = [k for k in kwargs if k not in _RANGES]
        if unknown:
            raise InvalidRuleSetError(f"unknown rule variant {unknown[0]!r}; known variants: "
                                      f"{', '.join(_RANGES)} (R11)")
        if len(args) > len(_RANGES):
            raise InvalidRuleSetError(f"a rule set has {len(_RANGES)} variants, got "
                                      f"{len(args)} values (R11)")
        return object.__new__(cls)

    def __post_init__(self) -> None:
        for name, rng in _RANGES.items():
            value = getattr(self, name)
            if rng is None:
                if not isinstance(value, bool):
                    raise InvalidRuleSetError(f"rule variant {name} must be true or false, "
                                              f"got {value!r} (R11)")
            elif isinstance(rng[0], str):
                if not isinstance(value, str) or value not in rng:
                    raise InvalidRuleSetError(f"rule variant {name} must be {_kind(rng)}, "
                                              f"got {value!r} (R11)")
            elif isinstance(value, bool) or not isinstance(value, int):
                raise InvalidRuleSetError(f"rule variant {name} must be an integer in "
                                          f"{rng[0]}..{rng[1]}, got {value!r} (R11)")
            elif not rng[0] <= value <= rng[1]:
                raise InvalidRuleSetError(f"rule variant {name}={value} is out of range "
                                          f"{rng[0]}..{rng[1]} (R11)")

    @property
    def restricts_melds(self) -> bool:
        """Whether a §11 option variant removes meld actions that the default rules allow
        (``ace_high=False``, ``joker_release="hand"``, ``joker_moves="locked"``)."""
        return not self.ace_high or self.joker_release != "table" or \
            self.joker_moves != "free"

    def to_dict(self) -> dict[str, Any]:
        """Every variant with its value (JSON-ready)."""
        return asdict(self)

    def changed(self) -> dict[str, Any]:
        """Only the variants that differ from the default rules."""
        default = RuleSet()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}

    @classmethod
    def from_dict(cls, variants: Mapping[str, Any] | None = None) -> RuleSet:
        """Build and validate a rule set from ``{variant: value}`` (missing = default).

        Accepts the strings ``"true"``/``"false"`` (any case) for booleans and decimal
        integers written in ASCII digits with an optional sign (``"-3"``, ``"+7"``,
        ``"150"``) for integers, spaces around either ignored, so that CLI ``key=value``
        pairs and the gRPC ``variants`` map work; nothing else is converted. A rule set
        read back from JSON (a log, a store) takes no strings: :meth:`from_json`.

        Raises:
            InvalidRuleSetError: an unknown variant, a value of the wrong type, or a value
                out of range (§11), naming the variant.
        """
        if variants is None:
            variants = {}
        if not isinstance(variants, Mapping):
            raise InvalidRuleSetError(f"rule variants must be a mapping of variant to value, "
                                      f"got {type(variants).__name__} (R11)")
        values: dict[str, Any] = {}
        for key, raw in variants.items():
            if not isinstance(key, str) or key not in _RANGES:
                raise InvalidRuleSetError(
                    f"unknown rule variant {key!r}; known variants: {', '.join(_RANGES)} (R11)")
            rng = _RANGES[key]
            if isinstance(raw, str):
                text = raw.strip()
                if rng is not None and isinstance(rng[0], str):
                    raw = text
                elif rng is None:
                    if text.lower() not in ("true", "false"):
                        raise InvalidRuleSetError(f"rule variant {key} must be true or false, "
                                                  f"got {raw!r} (R11)")
                    raw = text.lower() == "true"
                else:
                    if not _INTEGER.fullmatch(text):
                        raise InvalidRuleSetError(
                            f"rule variant {key} must be an integer in {rng[0]}..{rng[1]}, "
                            f"got {raw!r} (R11)")
                    raw = int(text)
            values[key] = raw
        return cls(**values)  # __post_init__ checks types and ranges

    @classmethod
    def from_json(cls, variants: Any, *, complete: bool = True) -> RuleSet:
        """The rule set of a ``GameStarted`` event read back from JSON (a log, a store):
        an object holding every variant of this release (``to_dict``), each a JSON value of
        its own type (``true``/``false``, integers); nothing is converted or filled in, so
        a log replays under exactly the rules it names (I4). A later release that adds a
        variant bumps the event's schema version and upcasts older events to it, filling
        the new variant with the rule they were played under (``GameStarted.VARIANTS``,
        ``rummy.events.variant_added``; docs/events.md, "How to add a variant"), so that
        an old game reaches this method complete.
        ``complete=False``: the variants left out take their defaults (``changed()``
        output, as a batch spec carries it); the types are as strict.

        Raises:
            InvalidRuleSetError: not an object, an unknown or missing variant, a string or
                other value of the wrong type, or a value out of range (§11).
        """
        if not isinstance(variants, Mapping):
            raise InvalidRuleSetError(f"rule variants must be an object of variant to value, "
                                      f"got {type(variants).__name__} (R11)")
        missing = [k for k in _RANGES if k not in variants] if complete else []
        if missing:
            raise InvalidRuleSetError(f"rule variants missing: {', '.join(missing)}; a "
                                      f"recorded rule set names every variant (R11)")
        for key, value in variants.items():
            if key not in _RANGES:
                continue  # from_dict names the unknown variant
            rng = _RANGES[key]
            if isinstance(value, str) and (rng is None or not isinstance(rng[0], str)):
                raise InvalidRuleSetError(f"rule variant {key} must be {_kind(rng)}, got the "
                                          f"string {value!r} (R11)")
        return cls.from_dict(variants)  # unknown variants, types and ranges

    def check_players(self, players: int) -> None:
        """Check the player count (R1.1) and that the deal leaves a stock (R2.2).

        Raises:
            InvalidRuleSetError: fewer than 2 or more than 5 players, or a hand size too
                large for the deck.
        """
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 5:
            raise InvalidRuleSetError(f"a game has 2 to 5 players, got {players!r} (R1.1)",
                                      rule="R1.1")
        deck = 53 if players == 2 else 106
        if self.hand_size * players >= deck:
            raise InvalidRuleSetError(
                f"hand_size={self.hand_size} with {players} players leaves no stock "
                f"({deck} cards, R2.2)", rule="R2.2")


def parse_rule_pairs(pairs: Sequence[str], what: str = "--rules") -> dict[str, str]:
    """``{variant: value}`` from ``variant=value`` strings (a command line's ``--rules``),
    several pairs in one string separated by commas (``knock_timing=start,ace_high=false``);
    the values stay strings for :meth:`RuleSet.from_dict` to check.

    Raises:
        InvalidRuleSetError: a pair without ``=``, or a variant given twice (even with the
            same value: one value per variant); ``what`` names the option (R11).
    """
    out: dict[str, str] = {}
    split: list[str] = []
    for p in pairs:  # "a=1,b=2" is two pairs; a comma inside a value stays (refused later)
        for part in p.split(","):
            if "=" in part or not split:
                split.append(part)
            else:
                split[-1] += "," + part
    for p in split:
        if "=" not in p:
            raise InvalidRuleSetError(f"{what} takes variant=value pairs, got {p!r} (R11)")
        k, v = p.split("=", 1)
        if k.strip() in out:
            raise InvalidRuleSetError(f"{what}: variant {k.strip()} given twice (R11: one "
                                      "value per variant)")
        out[k.strip()] = v.strip()
    return out


DEFAULT_RULES = RuleSet()
