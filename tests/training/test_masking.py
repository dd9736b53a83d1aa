"""The truncation masks on hand-built batches."""

from __future__ import annotations

from training.masking import compute_masks, is_repetition_loop, ngram_repeat_ratio, tail_repeats_exactly

NATURAL = list(range(100, 140))  # 40 distinct tokens: no loop
LOOP3 = [1, 2, 3] * 14  # period 3: the exact 8-token block test misses it (3 does not divide 8)


def _masks(
    policy: str, rows: list[tuple[list[int], bool, str, float]], p: float = 0.5, ngram_test: bool = False
) -> list[bool]:
    decisions = compute_masks(
        policy,
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
        probability=p,
        window=8,
        ngram_size=3,
        ngram_threshold=0.5,
        ngram_test=ngram_test,
    )
    return [d.masked for d in decisions]


def test_it_masks_truncated_correct_answers_only() -> None:
    rows = [
        (NATURAL, True, "AC", 0.1),  # all four conditions hold
        (NATURAL, False, "AC", 0.1),  # finished normally
        (NATURAL, True, "WA", 0.1),  # judged wrong
    ]
    assert _masks("conditional", rows) == [True, False, False]


def test_a_truncated_answer_without_a_program_counts_as_not_wrong() -> None:
    assert _masks("conditional", [(NATURAL, True, "NA", 0.1)]) == [True]


def test_every_judged_wrong_verdict_keeps_its_signal() -> None:
    rows = [(NATURAL, True, v, 0.0) for v in ("WA", "RE", "TLE", "MLE", "CE")]
    assert _masks("conditional", rows) == [False] * 5


def test_a_looping_tail_keeps_its_negative_signal() -> None:
    block = list(range(8))
    looping = list(range(50, 60)) + block + block  # last 8 tokens equal the 8 before them
    assert _masks("conditional", [(looping, True, "AC", 0.1)]) == [False]


def test_the_bernoulli_draw_above_p_keeps_the_sample() -> None:
    assert _masks("conditional", [(NATURAL, True, "AC", 0.7)], p=0.5) == [False]
    assert _masks("conditional", [(NATURAL, True, "AC", 0.49)], p=0.5) == [True]


def test_mask_all_masks_every_truncated_response_whatever_its_verdict() -> None:
    rows = [(NATURAL, True, "WA", 0.9), (LOOP3, True, "AC", 0.9), (NATURAL, False, "AC", 0.0)]
    assert _masks("all", rows) == [True, True, False]


def test_no_mask_masks_nothing() -> None:
    assert _masks("none", [(NATURAL, True, "AC", 0.0)]) == [False]


def test_the_exact_block_test_compares_the_last_m_tokens_with_the_m_before() -> None:
    assert tail_repeats_exactly([9, 1, 2, 1, 2], 2)
    assert not tail_repeats_exactly([1, 2, 2, 1], 2)
    assert not tail_repeats_exactly([1, 1, 1], 2)  # shorter than 2m


def test_the_ngram_ratio_is_the_share_of_repeated_ngrams() -> None:
    # bigrams of [1,2,1,2,1]: (1,2) (2,1) (1,2) (2,1): 2 distinct of 4 -> 0.5 repeated
    assert ngram_repeat_ratio([1, 2, 1, 2, 1], 2) == 0.5
    assert ngram_repeat_ratio([1, 2, 3, 4], 2) == 0.0
    assert ngram_repeat_ratio([1], 2) == 0.0


def test_the_opt_in_ngram_test_catches_a_loop_whose_period_does_not_divide_m() -> None:
    assert not tail_repeats_exactly(LOOP3, 8)
    assert is_repetition_loop(LOOP3, window=8, ngram_size=3, ngram_threshold=0.5, ngram_test=True)
    assert not is_repetition_loop(NATURAL, window=8, ngram_size=3, ngram_threshold=0.5, ngram_test=True)
    assert _masks("conditional", [(LOOP3, True, "AC", 0.0)], ngram_test=True) == [False]


def test_by_default_condition_c_is_the_papers_exact_block_test_only() -> None:
    # LOOP3 loops, but its period does not divide m = 8: the paper's test does not see it, so the
    # default mask treats it like any other truncated not-wrong answer.
    assert not is_repetition_loop(LOOP3, window=8, ngram_size=3, ngram_threshold=0.5)
    assert _masks("conditional", [(LOOP3, True, "AC", 0.0)]) == [True]
