"""The 13-gram statement overlap check between evaluation problems and a training release."""

from __future__ import annotations

from training.evaluate import contamination_report, statement_ngrams

TRAIN = {
    "platform": "cf",
    "external_id": "1A",
    "statement": (
        "Theatre Square in the capital city of Berland has a rectangular shape with the size n by m meters. "
        "On the occasion of the city's anniversary, a decision was taken to pave the Square with square "
        "granite flagstones. Each flagstone is of the size a by a."
    ),
}


def _row(pid: str, statement: str) -> dict[str, str]:
    return {"platform": "lc", "external_id": pid, "statement": statement}


def test_an_exact_copy_is_flagged() -> None:
    report = contamination_report([_row("copy", TRAIN["statement"])], [TRAIN])
    assert report["lc:copy"]["matched_train_ids"] == ["cf:1A"]
    assert report["lc:copy"]["overlap"] == 1.0


def test_an_unrelated_statement_is_not_flagged() -> None:
    other = _row("other", "Given an array of integers, return the indices of the two numbers that add up to a target.")
    assert contamination_report([other], [TRAIN]) == {}


def test_a_paraphrase_sharing_one_13_gram_is_flagged() -> None:
    paraphrase = _row(
        "para",
        "Our town decided that, on the occasion of the city's anniversary, a decision was taken to pave "
        "the main road with bricks. How many bricks are needed?",
    )
    report = contamination_report([paraphrase], [TRAIN])
    assert report["lc:para"]["shared"] >= 1 and report["lc:para"]["overlap"] < 0.5


def test_a_higher_threshold_needs_more_shared_13_grams() -> None:
    paraphrase = _row("para", "On the occasion of the city's anniversary, a decision was taken to pave the park.")
    assert contamination_report([paraphrase], [TRAIN], threshold=1)
    assert contamination_report([paraphrase], [TRAIN], threshold=50) == {}


def test_ngrams_ignore_case_and_punctuation() -> None:
    assert statement_ngrams("Print A+B, then STOP!", n=3) == statement_ngrams("print a b then stop", n=3)
