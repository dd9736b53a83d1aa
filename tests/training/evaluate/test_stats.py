"""McNemar and the paired bootstrap on hand-computed cases."""

from __future__ import annotations

import pytest

from training.evaluate import mcnemar, paired_bootstrap


def test_it_uses_the_exact_binomial_test_for_few_discordant_pairs() -> None:
    # b=1, c=6: P(X <= 1 | n=7, 1/2) = (1 + 7) / 128, doubled.
    assert mcnemar(1, 6) == pytest.approx(16 / 128)


def test_it_uses_the_corrected_chi_square_for_many_discordant_pairs() -> None:
    # b=10, c=25: chi2 = (15 - 1)^2 / 35 = 5.6; P(chi2_1 > 5.6) = 0.017960 (tables / scipy.stats.chi2.sf).
    assert mcnemar(10, 25) == pytest.approx(0.017960, abs=1e-5)


def test_no_discordant_pairs_means_no_evidence_of_a_difference() -> None:
    assert mcnemar(0, 0) == 1.0
    assert mcnemar(3, 3) == 1.0


def test_the_paired_bootstrap_sees_a_consistent_improvement() -> None:
    a = [0.0, 0.25, 0.5, 0.0, 0.25] * 8
    b = [x + 0.25 for x in a]
    out = paired_bootstrap(a, b, n=500)
    assert out["diff"] == pytest.approx(0.25)
    assert out["ci95"][0] <= 0.25 <= out["ci95"][1]
    assert out["p_value"] < 0.01


def test_the_paired_bootstrap_finds_no_difference_between_equal_models() -> None:
    a = [0.0, 1.0, 0.5, 0.25] * 5
    out = paired_bootstrap(a, list(a), n=200)
    assert out["diff"] == 0.0 and out["p_value"] == 1.0


def test_unpaired_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap([0.1], [0.1, 0.2])
