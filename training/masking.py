"""Truncation masks: which responses have their advantage zeroed (M_i = 1).

MicroCoder's conditional truncation mask sets M_i = 1 only when ALL of these hold:
  (a) the response reached the length cap (``truncated``: L_max tokens and no end-of-sequence token);
  (b) its answer is not judged wrong (accepted, or undecidable: no complete program to judge);
  (c) its tail is not a repetition loop: the paper's exact test, the last m tokens are not equal to
      the m tokens before them (a looping output keeps its negative signal);
  (d) a Bernoulli draw with probability p succeeds.
Otherwise the response is trained on normally. ``all`` masks every truncated response (TRL /
DeepCoder overlong filtering) and ``none`` masks nothing, so runs can compare the three.

Condition (c) is the paper's exact block test by default. ``ngram_test=True`` (``mask.ngram_loop_test``,
off by default) adds the product's n-gram test, which also catches loops whose period does not divide
m: a departure from the paper, opt-in for ablations.

Pure functions, no torch; the trainer passes one pre-drawn uniform per sample so that the draws do
not depend on which samples happen to be eligible (reproducible across runs and resumes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Verdicts that mean "the answer was judged and it is wrong" (condition (b) fails for these).
WRONG_VERDICTS = frozenset({"WA", "RE", "TLE", "MLE", "CE"})


def is_judged_wrong(verdict: str) -> bool:
    """True for a verdict that judges the answer wrong; AC, IE and NA (no answer found) are not wrong."""
    return verdict in WRONG_VERDICTS


def tail_repeats_exactly(tokens: Sequence[int], window: int) -> bool:
    """The paper's test: the last ``window`` tokens equal the ``window`` tokens before them."""
    if window <= 0 or len(tokens) < 2 * window:
        return False
    return list(tokens[-window:]) == list(tokens[-2 * window : -window])


def ngram_repeat_ratio(tokens: Sequence[int], n: int) -> float:
    """Share of the n-grams of ``tokens`` that repeat an earlier n-gram: 1 - distinct / total.

    0 for a sequence without repeated n-grams (and for one shorter than n); close to 1 for a loop whose
    period is much shorter than the sequence (a period-P loop has at most P distinct n-grams).
    """
    total = len(tokens) - n + 1
    if n <= 0 or total <= 0:
        return 0.0
    grams = {tuple(tokens[i : i + n]) for i in range(total)}
    return 1.0 - len(grams) / total


def is_repetition_loop(
    tokens: Sequence[int],
    *,
    window: int,
    ngram_size: int = 4,
    ngram_threshold: float = 0.5,
    ngram_test: bool = False,
) -> bool:
    """Condition (c) fails: the tail is a loop by the paper's exact block test, or (only with
    ``ngram_test``) by the n-gram test.

    The n-gram test looks at the last ``2 * window`` tokens (or the whole response when shorter): the
    exact block test only catches loops whose period divides ``window``.
    """
    if tail_repeats_exactly(tokens, window):
        return True
    if not ngram_test:
        return False
    tail = tokens[-2 * window :] if window > 0 else tokens
    return ngram_repeat_ratio(tail, ngram_size) >= ngram_threshold


@dataclass(frozen=True)
class MaskDecision:
    """Per-sample outcome with the condition values, kept for the sample table and tests."""

    masked: bool
    truncated: bool
    not_wrong: bool
    no_loop: bool
    draw_hit: bool


def conditional_mask_one(
    tokens: Sequence[int],
    *,
    truncated: bool,
    verdict: str,
    uniform: float,
    probability: float,
    window: int,
    ngram_size: int = 4,
    ngram_threshold: float = 0.5,
    ngram_test: bool = False,
) -> MaskDecision:
    """MicroCoder's four-condition mask for one response (``uniform`` is its U(0, 1) draw)."""
    not_wrong = not is_judged_wrong(verdict)
    # The loop test only matters for truncated responses; skip it otherwise (it costs O(length)).
    no_loop = (
        not is_repetition_loop(
            tokens,
            window=window,
            ngram_size=ngram_size,
            ngram_threshold=ngram_threshold,
            ngram_test=ngram_test,
        )
        if truncated
        else True
    )
    draw_hit = uniform < probability
    return MaskDecision(
        masked=truncated and not_wrong and no_loop and draw_hit,
        truncated=truncated,
        not_wrong=not_wrong,
        no_loop=no_loop,
        draw_hit=draw_hit,
    )


def compute_masks(
    policy: str,
    completions: Sequence[Sequence[int]],
    truncated: Sequence[bool],
    verdicts: Sequence[str],
    uniforms: Sequence[float],
    *,
    probability: float,
    window: int,
    ngram_size: int = 4,
    ngram_threshold: float = 0.5,
    ngram_test: bool = False,
) -> list[MaskDecision]:
    """M_i for every sample under ``policy`` ('conditional' | 'all' | 'none')."""
    n = len(completions)
    if not (len(truncated) == len(verdicts) == len(uniforms) == n):
        raise ValueError("completions, truncated, verdicts and uniforms must have the same length")
    if policy == "none":
        return [
            MaskDecision(False, t, not is_judged_wrong(v), True, False) for t, v in zip(truncated, verdicts)
        ]
    if policy == "all":
        return [MaskDecision(t, t, not is_judged_wrong(v), True, True) for t, v in zip(truncated, verdicts)]
    if policy != "conditional":
        raise ValueError(f"unknown mask policy {policy!r}")
    return [
        conditional_mask_one(
            toks,
            truncated=t,
            verdict=v,
            uniform=u,
            probability=probability,
            window=window,
            ngram_size=ngram_size,
            ngram_threshold=ngram_threshold,
            ngram_test=ngram_test,
        )
        for toks, t, v, u in zip(completions, truncated, verdicts, uniforms)
    ]


__all__ = [
    "WRONG_VERDICTS",
    "MaskDecision",
    "compute_masks",
    "conditional_mask_one",
    "is_judged_wrong",
    "is_repetition_loop",
    "ngram_repeat_ratio",
    "tail_repeats_exactly",
]
