"""Paired game-quality differences of an A/B batch (rummy/paired_quality.py): the same
values as the win-rate and length statistics of rummy_worker.paired where both exist,
sums that merge in any order, and a batch whose chunks predate them."""

from __future__ import annotations

import pytest
from rummy_worker.batches import BatchSpec, batch_report, merge_results
from rummy_worker.chunks import compute_chunk

from rummy.paired_quality import PairedFigures, compare


@pytest.fixture(scope="module")
def chunks() -> tuple[BatchSpec, list[dict]]:
    spec = BatchSpec(games=9, bots=("greedy", "random", "basic"), seed=5, chunk_size=3,
                     compare_rules={"knock_threshold": 10})
    return spec, [compute_chunk(spec, i) for i in range(spec.chunks)]


def test_the_figures_agree_with_the_paired_win_rates_and_lengths(chunks) -> None:
    spec, results = chunks
    cmp = batch_report(spec, merge_results(spec.players, results)).compare
    quality = {e["metric"]: e for e in cmp["quality"]}
    assert cmp["games"] == 9 and all(e["games"] == 9 for e in quality.values())
    # two separate implementations of the same paired differences
    for s, e in enumerate(cmp["seat_win_rate"]):
        q = quality[f"seat {s} win rate"]
        assert (q["diff"], q["low"], q["high"]) == pytest.approx((e["diff"], e["low"], e["high"]))
    for bot, e in cmp["bot_win_rate"].items():
        q = quality[f"{bot} win rate"]
        assert (q["diff"], q["low"], q["high"]) == pytest.approx((e["diff"], e["low"], e["high"]))
    for key, label in (("rounds_per_game", "rounds per game"),
                       ("turns_per_game", "turns per game"),
                       ("turns_per_round", "turns per round")):
        q, e = quality[label], cmp[key]
        assert (q["a"], q["b"], q["diff"], q["low"], q["high"]) == pytest.approx(
            (e["a"], e["b"], e["diff"], e["low"], e["high"]))
    # every figure has one unit, a kind and a verdict naming A and B
    kinds = {e["kind"] for e in cmp["quality"]}
    assert kinds == {"bot", "seat", "skill", "drama", "decisiveness", "decisions", "duration"}
    assert {e["unit"] for e in cmp["quality"]} == {"pp", "%", "changes", "points", "round",
                                                   "plays", "rounds", "turns",
                                                   "turns/round"}
    for e in cmp["quality"]:
        assert e["verdict"].startswith(e["metric"] + ": ")
        assert e["low"] is None or e["low"] <= e["diff"] <= e["high"]


def test_the_sums_merge_in_any_order_and_read_back(chunks) -> None:
    _, results = chunks
    parts = [PairedFigures.from_dict(r["paired_quality"]) for r in results]
    forward = parts[0].merge(parts[1]).merge(parts[2])
    backward = parts[2].merge(parts[0].merge(parts[1]))
    assert forward == backward and forward.games == 9
    assert PairedFigures.from_dict(forward.to_dict()) == forward
    assert compare(forward) == compare(backward)
    with pytest.raises(ValueError, match="malformed paired figures"):
        PairedFigures.from_dict({"games": 1, "s1": [], "s2": []})


def test_chunks_without_the_sums_fall_back_to_unpaired_quality(chunks) -> None:
    from rummy_worker.output import ab_verdicts, to_html

    spec, results = chunks
    old = [{k: v for k, v in r.items() if k != "paired_quality"} for r in results]
    rep = batch_report(spec, merge_results(spec.players, old))
    assert "quality" not in rep.compare
    assert [k for k, *_ in ab_verdicts(rep.compare)] == [
        "bot", "bot", "bot", "seat", "seat", "seat", "length", "length"]
    page = to_html({"batch_id": "old", "spec": spec.to_dict(), "chunks": 3,
                    "chunks_done": 3, "complete": True, "report": rep})
    assert "Game quality, A − B (unpaired 95% CI: conservative)" in page
