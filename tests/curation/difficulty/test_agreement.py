"""Cohen's and Fleiss' kappa and the Wilson interval on hand-computed cases."""

from __future__ import annotations

import pytest

from curation.difficulty.agreement import cohen_kappa, fleiss_kappa, wilson_interval


def test_it_computes_cohen_kappa_on_a_hand_computed_2x2_table() -> None:
    # A\B    yes  no
    # yes     20   5     n = 50, po = (20 + 15) / 50 = 0.70
    # no      10  15     A says yes 25/50, B says yes 30/50: pe = .5*.6 + .5*.4 = 0.50
    # kappa = (0.70 - 0.50) / (1 - 0.50) = 0.40
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.40)


def test_it_gives_cohen_kappa_one_for_identical_labels_and_zero_at_chance() -> None:
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == pytest.approx(1.0)
    # po = 0.5; both raters 50/50: pe = 0.5 -> kappa 0
    assert cohen_kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]) == pytest.approx(0.0)


def test_it_returns_one_when_both_raters_use_a_single_label() -> None:
    assert cohen_kappa(["ok"] * 4, ["ok"] * 4) == 1.0


def test_it_refuses_raters_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa(["a"], ["a", "b"])


def test_it_computes_fleiss_kappa_on_a_hand_computed_case() -> None:
    # 3 items x 3 raters. P_i = (sum n_ij^2 - 3) / 6: item1 (9-3)/6 = 1, item2 (4+1-3)/6 = 1/3, item3 1.
    # P_bar = 7/9; p_a = 5/9, p_b = 4/9, Pe = 41/81; kappa = (63/81 - 41/81) / (40/81) = 22/40 = 0.55
    ratings = [["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"]]
    assert fleiss_kappa(ratings) == pytest.approx(0.55)


def test_it_matches_cohen_kappa_form_of_fleiss_for_perfect_agreement() -> None:
    assert fleiss_kappa([["x", "x"], ["y", "y"], ["x", "x"]]) == pytest.approx(1.0)


def test_it_refuses_items_with_unequal_rater_counts() -> None:
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([["a", "a"], ["a", "b", "b"]])


@pytest.mark.parametrize(
    ("successes", "low", "high"),
    [
        # 0/10: center = (z^2/20) / (1 + z^2/10) = 0.19208 / 1.38416 = 0.13877 = half width -> (0, 0.2775)
        (0, 0.0, 0.27754),
        # 5/10: center 0.5, half = 1.96 * sqrt(0.025 + 0.0096040) / 1.38416 = 0.26341
        (5, 0.23659, 0.76341),
        # 10/10 mirrors 0/10
        (10, 0.72246, 1.0),
    ],
)
def test_it_computes_the_wilson_interval_by_hand(successes: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(successes, 10)
    assert lo == pytest.approx(low, abs=1e-4)
    assert hi == pytest.approx(high, abs=1e-4)


def test_it_returns_the_whole_range_for_no_observations() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
