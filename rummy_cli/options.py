"""Options several ``rummy`` commands share: ``--rules`` (one rule set) and ``--bots``.

Found by the CLI tester: ``--rules a=1 --rules b=2`` kept only the last flag, a variant
given twice kept its last value, and ``--bots ""`` or ``--bots basic,,random`` silently
became another line-up. The commands now read these options through one parser each, so
they all say the same thing about the same mistake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["add_rules_option", "bot_names", "chunks_text", "rule_set"]


def add_rules_option(p: Any, name: str = "--rules", example: str = "knock_threshold=7",
                     help_text: str | None = None) -> None:
    """Add a ``--rules VARIANT=VALUE ...`` option to parser ``p`` whose repeated flags
    merge (``--rules a=1 --rules b=2`` is ``--rules a=1 b=2``): argparse's ``extend``."""
    p.add_argument(name, nargs="*", action="extend", default=[], metavar="VARIANT=VALUE",
                   help=help_text or f"rule variants of docs/rules.md §11, e.g. {example} "
                   f"(repeat {name} or list several; each variant once)")


def rule_set(pairs: Sequence[str], what: str = "--rules") -> Any:
    """The :class:`rummy.rules.RuleSet` of one rule-set option
    (:func:`rummy.rules.parse_rule_pairs`: each variant at most once).

    Raises:
        ValueError: a pair without ``=``, a variant given twice, an unknown variant or a
            bad value (``InvalidRuleSetError`` is a ``ValueError``; R11).
    """
    from rummy.rules import RuleSet, parse_rule_pairs
    return RuleSet.from_dict(parse_rule_pairs(pairs, what))


def bot_names(text: str | None, what: str = "--bots") -> list[str] | None:
    """The bot names of a comma-separated ``--bots`` value, stripped; ``None`` (the option
    was not given) stays ``None`` for the command's default line-up.

    Raises:
        ValueError: an empty list (``--bots ""``) or an empty name (``basic,,random``, a
            trailing comma), naming its position.
    """
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise ValueError(f"{what} is empty: give one or more bot names, e.g. basic,random")
    for i, n in enumerate(names, 1):
        if not n:
            raise ValueError(f"{what} {text!r}: name {i} of {len(names)} is empty "
                             "(two commas in a row, or a comma at an end)")
    return names


def chunks_text(games: int, chunks: int, chunk_size: int) -> str:
    """``"10 games in 1 chunk of 10"``, ``"450 games in 3 chunks of up to 200"``: the
    plan of a batch with singular and plural right and no chunk larger than the games."""
    size = min(chunk_size, games)
    of = f"of {size}" if chunks == 1 or games % size == 0 else f"of up to {size}"
    return (f"{games} game{'' if games == 1 else 's'} in {chunks} "
            f"chunk{'' if chunks == 1 else 's'} {of}")
