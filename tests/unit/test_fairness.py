"""The provably fair deal (rummy.fairness, docs/fairness.md): the seed commitment of
GameStarted, its reveal and ``rummy verify`` refusing tampered logs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from pathlib import Path

import pytest

from rummy.cards import decks_for, format_card, shuffled_deck
from rummy.commands import CreateGame
from rummy.decide import round_deck, step
from rummy.errors import NotationError
from rummy.events import GameStarted, RoundStarted, dumps, from_dict, to_dict
from rummy.fairness import seed_commitment, verify_deal
from rummy.simulate import play_game
from rummy.views import redact
from rummy_cli.main import main

SALT = "00112233445566778899aabbccddeeff"


def _fair_game(seed: int = 11) -> list:
    """A finished game whose GameStarted carries the commitment decide writes for SALT."""
    events = list(play_game(["greedy", "greedy"], seed, None, record=True).events)
    first = events[0]
    _, made = step(None, CreateGame(first.players, first.seed, first.rules, first.names,
                                    first.turn_seconds, SALT))
    assert isinstance(made[0], GameStarted)
    return [made[0], *events[1:]]


def test_commitment_is_sha256_of_salt_then_decimal_seed() -> None:
    expected = hashlib.sha256(b"00112233445566778899aabbccddeeff" b"4611686018427387903")
    assert seed_commitment(4611686018427387903, SALT) == expected.hexdigest()
    _, events = step(None, CreateGame(2, 42, salt=SALT))
    started = events[0]
    assert isinstance(started, GameStarted)
    assert started.VERSION == 3 and started.salt == SALT
    assert started.commitment == hashlib.sha256(SALT.encode() + b"42").hexdigest()


@pytest.mark.parametrize("salt", ["", "xyz", SALT.upper(), SALT + "0"])
def test_a_malformed_salt_is_refused(salt: str) -> None:
    with pytest.raises(NotationError, match="32 lowercase hex digits"):
        step(None, CreateGame(2, 42, salt=salt))


def test_seats_see_the_commitment_but_not_seed_or_salt() -> None:
    started = _fair_game()[0]
    seen = redact(started, 0, players=2, hand_size=10)
    assert isinstance(seen, GameStarted)
    assert seen.seed is None and seen.salt is None
    assert seen.commitment == started.commitment != ""
    assert to_dict(seen)["commitment"] == started.commitment


def test_a_v2_record_reads_as_no_commitment() -> None:
    record = to_dict(_fair_game()[0])
    del record["salt"], record["commitment"]
    record["v"] = 2
    old = from_dict(record)
    assert isinstance(old, GameStarted)
    assert (old.salt, old.commitment) == (None, "")
    assert verify_deal([old]) == ["GameStarted carries no seed commitment (a game recorded "
                                  "before commitments, or by a creator that did not commit)"]
    with pytest.raises(NotationError, match="which version 3 added"):
        from_dict({**record, "commitment": "ab"})


def test_round_deck_is_the_documented_recipe() -> None:
    # docs/fairness.md: the recipe a verifier in Python runs, card c as "A23456789TJQK"[c % 13]
    # + "SHDC"[c // 13], 52 the joker "*"
    for seed, rnd, players in [(11, 1, 2), (4611686018427387903, 7, 5)]:
        decks = 1 if players == 2 else 2
        deck = list(range(52)) * decks + [52] * decks
        random.Random(f"rummy:{seed}:round:{rnd}").shuffle(deck)
        tokens = ["*" if c == 52 else "A23456789TJQK"[c % 13] + "SHDC"[c // 13] for c in deck]
        assert tuple(deck) == round_deck(seed, rnd, players) \
            == shuffled_deck(decks_for(players), random.Random(f"rummy:{seed}:round:{rnd}"))
        assert tokens == [format_card(c) for c in round_deck(seed, rnd, players)]


def test_an_untampered_game_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _fair_game()
    assert verify_deal(events) == []
    log = tmp_path / "game.jsonl"
    log.write_text("".join(dumps(e) + "\n" for e in events))
    assert main(["verify", str(log)]) == 0
    rounds = sum(isinstance(e, RoundStarted) for e in events)
    assert f"the decks of all {rounds} rounds follow from the seed" in capsys.readouterr().out


def _lines(events: list) -> list[dict]:
    return [to_dict(e) for e in events]


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict]) -> str:
    log = tmp_path / "tampered.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["verify", str(log)]) == 1
    return capsys.readouterr().err


def test_a_tampered_deck_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = _lines(_fair_game())
    i = next(i for i, r in enumerate(records) if r["type"] == "RoundStarted" and r["round"] == 2)
    deck = records[i]["deck"]
    # swap two stock cards: the game still replays under the rules, but not from the seed
    deck[-1], deck[-2] = deck[-2], deck[-1]
    err = _refused(tmp_path, capsys, records)
    assert f"event {i + 1}: the deck of round 2 does not follow from the seed " \
           f"(first difference at position {len(deck) - 2})" in err


def test_a_tampered_seed_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = _lines(_fair_game())
    records[0]["seed"] += 1
    err = _refused(tmp_path, capsys, records)
    assert "the seed or the salt was changed after the commitment" in err


def test_a_tampered_salt_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = _lines(_fair_game())
    records[0]["salt"] = "f" + SALT[1:]
    err = _refused(tmp_path, capsys, records)
    assert "the seed or the salt was changed after the commitment" in err


def test_a_redacted_log_cannot_be_verified() -> None:
    events = _fair_game()
    seat_copy = [redact(e, 0, players=2, hand_size=10) for e in events]
    assert verify_deal(seat_copy) == [
        "the seed or the salt is not revealed (a redacted log, or a game not over): verify a "
        "full-information log of a finished game"]


def test_a_tampered_commitment_with_seed_and_salt_kept_is_refused() -> None:
    events = _fair_game()
    forged = dataclasses.replace(events[0], commitment="0" * 64)
    (problem,) = verify_deal([forged, *events[1:]])
    assert problem.startswith("GameStarted: the commitment 000")


def test_a_game_record_keeps_the_commitment_and_refuses_a_changed_salt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rummy.record import from_record, to_record
    events = _fair_game()
    text = to_record(events)
    assert f'[Salt "{SALT}"]' in text and f'[Commitment "{events[0].commitment}"]' in text
    assert from_record(text) == events  # an import of the export gives the same events
    record = tmp_path / "game.txt"
    record.write_text(text)
    assert main(["verify", str(record)]) == 0
    capsys.readouterr()
    record.write_text(text.replace(SALT, "f" + SALT[1:]))
    assert main(["verify", str(record)]) == 1
    assert "the seed or the salt was changed after the commitment" in capsys.readouterr().err


def test_local_salt_is_a_documented_function_of_the_seed() -> None:
    from rummy.fairness import SALT_PATTERN, local_salt
    assert local_salt(7) == hashlib.sha256(b"rummy-local-salt:7").hexdigest()[:32]
    assert SALT_PATTERN.fullmatch(local_salt(7))
    assert local_salt(7) != local_salt(8)


def test_every_log_rummy_simulate_writes_verifies(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    out.mkdir()
    assert main(["simulate", "--games", "3", "--players", "3", "--jobs", "1", "--quiet",
                 "--events-dir", str(out)]) == 0
    logs = sorted(out.glob("game-*.jsonl"))
    assert len(logs) == 3
    capsys.readouterr()
    for log in logs:
        assert main(["verify", str(log)]) == 0, capsys.readouterr().err
    # and its deal is still checked: a swapped stock card is refused
    records = [json.loads(line) for line in logs[0].read_text().splitlines()]
    i = next(i for i, r in enumerate(records) if r["type"] == "RoundStarted")
    records[i]["deck"][-1], records[i]["deck"][-2] = (records[i]["deck"][-2],
                                                      records[i]["deck"][-1])
    assert "does not follow from the seed" in _refused(tmp_path, capsys, records)


def test_the_same_simulated_game_with_and_without_a_commitment_is_the_same_game() -> None:
    plain = play_game(["greedy", "basic"], 5, None, record=True)
    committed = play_game(["greedy", "basic"], 5, None, record=True, commit=True)
    assert committed.events[0].commitment and not plain.events[0].commitment
    assert committed.events[1:] == plain.events[1:]
    assert committed.final == plain.final
