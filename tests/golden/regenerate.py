"""Regenerate the golden playthroughs (OpenSpiel-style): `make golden`.

Each golden file is the full event log (JSON lines) of one seeded bot game. The test
(`test_golden.py`) replays each file (every event verified) and re-plays the same game from
its seed, and diffs the two logs: any change to the rules engine, the bots or the event
format shows up as a diff. Regenerate only for an intended change, and review the diff.
"""

from __future__ import annotations

from pathlib import Path

from rummy.events import dumps
from rummy.rules import RuleSet
from rummy.simulate import play_game

HERE = Path(__file__).parent

#: (file name, bots, seed, rule variants)
GAMES = [
    ("basic-2p-seed1.jsonl", ("basic", "basic"), 1, {}),
    ("basic-random-3p-seed2.jsonl", ("basic", "random", "basic"), 2, {}),
    ("basic-4p-knock7-seed3.jsonl", ("basic",) * 4, 3, {"knock_threshold": 7,
                                                        "target_score": 100}),
    ("random-5p-seed4.jsonl", ("random",) * 5, 4, {"target_score": 60}),
    ("basic-3p-opening-seed5.jsonl", ("basic",) * 3, 5, {"opening_meld_per_player": True,
                                                         "opening_meld_min_points": 25}),
]


def render(bots: tuple[str, ...], seed: int, variants: dict) -> str:
    """The golden text of one game: one JSON event per line."""
    r = play_game(bots, seed, RuleSet.from_dict(variants), record=True)
    return "".join(dumps(e) + "\n" for e in r.events)


if __name__ == "__main__":
    for name, bots, seed, variants in GAMES:
        (HERE / name).write_text(render(bots, seed, variants))
        print(f"wrote tests/golden/{name}")
