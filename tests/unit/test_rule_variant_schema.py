"""A new rule variant never makes stored games unreadable (docs/events.md, "How to add a
variant").

``GameStarted.rules`` is read strictly: a record at the current ``GameStarted`` version
names every variant of ``RuleSet`` (I4: a log replays under exactly the rules it names).
So a release that adds a variant must bump ``GameStarted.VERSION``, declare the new set
in ``GameStarted.VARIANTS`` and register ``variant_added`` (the variant filled with the
rule older games were played under); ``variant_problems`` checks that, so forgetting it
fails here, not on the first stored game a server reads.

``tests/fixtures/game_started_v1.jsonl`` holds GameStarted records as today's release
stores them (a JSON object, the compact array of the Redis stream, a hand-written one
without ``"v"``); a simulated later release (``doubles_bonus`` added at version 2) reads
every one with the default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pytest
from rummy_store.codec import unpack

from rummy import rules as rules_module
from rummy.errors import NotationError
from rummy.events import (
    EVENT_TYPES,
    UPCASTERS,
    FieldCodec,
    GameStarted,
    decode,
    from_dict,
    variant_added,
    variant_problems,
)
from rummy.evolve import replay
from rummy.rules import RuleSet

FIXTURE = Path(__file__).parents[1] / "fixtures" / "game_started_v1.jsonl"
GOLDEN = sorted((Path(__file__).parents[1] / "golden").glob("*.jsonl"))
V1 = GameStarted.VARIANTS[1]
NOW = GameStarted.VERSION  #: today's GameStarted version; the simulated release is NOW + 1
CUR = GameStarted.VARIANTS[NOW]
TODAY = RuleSet().to_dict()  #: every variant of today's release, at its default


def _records() -> list[dict[str, Any]]:
    return [unpack(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


# ------------------------------------------------------------------------------- today


def test_every_variant_of_the_rule_set_is_declared_at_the_current_version() -> None:
    assert GameStarted.VARIANTS[GameStarted.VERSION] == {f.name for f in fields(RuleSet)}
    assert variant_problems() == []


def test_the_old_game_started_records_read_today() -> None:
    records = _records()
    assert len(records) == 3 and "v" not in records[2]
    started = [from_dict(r) for r in records]
    assert all(isinstance(e, GameStarted) for e in started)
    assert started[1].rules.changed() == {  # type: ignore[union-attr]
        "target_score": 60, "knock_threshold": 7, "undercut_bonus": 15,
        "round_bonus_for_all": True, "opening_meld_per_player": True,
        "opening_meld_min_points": 30}


def test_a_record_at_the_current_version_missing_a_variant_stays_an_error() -> None:
    record = _records()[0]
    del record["rules"]["round_bonus"]
    with pytest.raises(NotationError, match="GameStarted.rules: rule variants missing: "
                                            "round_bonus"):
        from_dict(record)


# ----------------------------------------------------- a variant added without declaring it


@dataclass(frozen=True, slots=True)
class RuleSetV2(RuleSet):
    """A later release's rule set: one more variant, ``doubles_bonus`` (default 0: the rule
    before the variant existed)."""

    doubles_bonus: int = 0


def release_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on in the test, ``rummy.rules`` is that release's: it knows
    ``doubles_bonus`` (0..100), and a today's ``RuleSet`` is no longer read."""
    monkeypatch.setitem(rules_module._RANGES, "doubles_bonus", (0, 100))


def test_a_variant_added_without_a_game_started_version_fails_the_check() -> None:
    problems = variant_problems(rules=RuleSetV2)
    assert len(problems) == 1
    assert (f"RuleSet has variants ['doubles_bonus'] not declared by GameStarted v{NOW}"
            in problems[0])
    assert "bump GameStarted.VERSION" in problems[0]


@dataclass(frozen=True, slots=True)
class StartedBumpedOnly(GameStarted):
    """Version bumped and the set declared, but no upcaster registered."""

    VERSION: ClassVar[int] = NOW + 1
    VARIANTS: ClassVar[Mapping[int, frozenset[str]]] = MappingProxyType(
        {**GameStarted.VARIANTS, NOW + 1: CUR | {"doubles_bonus"}})


def test_a_bump_without_its_upcaster_fails_the_check() -> None:
    assert variant_problems(StartedBumpedOnly, RuleSetV2, UPCASTERS) == [
        f"no upcaster of GameStarted v{NOW} to v{NOW + 1}"]
    wrong = {**UPCASTERS, ("GameStarted", NOW): variant_added(NOW, "double_bonus", 0)}  # typo
    problems = variant_problems(StartedBumpedOnly, RuleSetV2, wrong)
    assert len(problems) == 1 and "gives variants" in problems[0]


# ------------------------------------------------------ the later release, done as documented


def _rules_v2(name: str, raw: Any) -> RuleSetV2:
    if not isinstance(raw, dict):
        raise NotationError(f"field {name!r} must be an object", token=raw)
    return RuleSetV2.from_json(raw)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class GameStartedV2(GameStarted):
    """``GameStarted`` of the later release: version NOW + 1 records ``doubles_bonus``."""

    VERSION: ClassVar[int] = NOW + 1
    VARIANTS: ClassVar[Mapping[int, frozenset[str]]] = MappingProxyType(
        {**GameStarted.VARIANTS, NOW + 1: CUR | {"doubles_bonus"}})
    ENCODING: ClassVar[Mapping[str, FieldCodec]] = MappingProxyType(
        {**GameStarted.ENCODING, "rules": FieldCodec(RuleSetV2.to_dict, _rules_v2)})


V2_TYPES = {**EVENT_TYPES, "GameStarted": GameStartedV2}
V2_UPCASTERS = {**UPCASTERS, ("GameStarted", NOW): variant_added(NOW, "doubles_bonus", 0)}


def test_the_documented_bump_passes_the_check() -> None:
    assert variant_problems(GameStartedV2, RuleSetV2, V2_UPCASTERS) == []


def test_every_old_record_reads_with_the_new_variant_at_its_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    read_today = [from_dict(record) for record in _records()]
    release_v2(monkeypatch)
    for record, today in zip(_records(), read_today, strict=True):
        later = decode(record, V2_TYPES, V2_UPCASTERS)
        assert type(later) is GameStartedV2 and isinstance(later.rules, RuleSetV2)
        assert later.rules.doubles_bonus == 0
        assert {k: v for k, v in later.rules.to_dict().items() if k != "doubles_bonus"} \
            == today.rules.to_dict()  # type: ignore[union-attr]
        assert (later.players, later.dealer, later.seed, later.names, later.turn_seconds) \
            == (today.players, today.dealer, today.seed, today.names,  # type: ignore[union-attr]
                today.turn_seconds)  # type: ignore[union-attr]
    record = _records()[0]
    decode(record, V2_TYPES, V2_UPCASTERS)
    assert record == _records()[0]  # the upcaster does not change its argument


def test_the_later_release_stays_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    release_v2(monkeypatch)
    v2 = {**_records()[0], "v": NOW + 1}
    v2["rules"] = {**TODAY, **v2["rules"]}  # every variant of today's release
    with pytest.raises(NotationError, match="rule variants missing: doubles_bonus"):
        decode(v2, V2_TYPES, V2_UPCASTERS)  # v2 must name the new variant
    v2["rules"] = {**v2["rules"], "doubles_bonus": 4}
    assert decode(v2, V2_TYPES, V2_UPCASTERS).rules.doubles_bonus == 4  # type: ignore[union-attr]
    v1_ahead = _records()[0]
    v1_ahead["rules"] = {**v1_ahead["rules"], "doubles_bonus": 4}
    with pytest.raises(NotationError, match="names the rule variant 'doubles_bonus', which "
                                            f"version {NOW + 1} added"):
        decode(v1_ahead, V2_TYPES, V2_UPCASTERS)
    v1_short = _records()[0]
    del v1_short["rules"]["hand_size"]
    with pytest.raises(NotationError, match="rule variants missing: hand_size"):
        decode(v1_short, V2_TYPES, V2_UPCASTERS)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_a_golden_game_replays_the_same_under_the_later_release(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    today = replay(from_dict(d) for d in stored)
    release_v2(monkeypatch)
    later = replay(decode(d, V2_TYPES, V2_UPCASTERS) for d in stored)
    assert today is not None and later is not None
    assert later._replace(rules=today.rules) == today  # I4 across the bump
    assert later.rules.doubles_bonus == 0  # type: ignore[attr-defined]
