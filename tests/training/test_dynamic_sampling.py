"""DAPO's dynamic sampling as a pure function on hand-built groups (training.dynamic_sampling)."""

from __future__ import annotations

from training.dynamic_sampling import fill_batch, has_signal, refill_count, refill_indices

# A group here is just its rewards.
MIXED: tuple[float, ...] = (1.0, 0.0, 0.0, 1.0)
ALL_WRONG: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
ALL_RIGHT: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)


def test_a_group_has_signal_only_when_its_valid_rewards_differ() -> None:
    assert has_signal(MIXED)
    assert not has_signal(ALL_WRONG) and not has_signal(ALL_RIGHT)
    assert not has_signal((1.0, None, None, None))  # one valid reward: no comparison
    assert has_signal((1.0, None, 0.0, None))


def test_groups_without_signal_are_dropped_and_refilled_until_the_batch_is_full() -> None:
    asked: list[tuple[int, int]] = []
    supply = iter([[ALL_RIGHT, MIXED, MIXED, ALL_WRONG], [MIXED, MIXED]])

    def more(round_: int, count: int) -> list[tuple[float, ...]]:
        asked.append((round_, count))
        return next(supply)

    out = fill_batch([MIXED, ALL_WRONG, ALL_RIGHT, MIXED], more, lambda g: g, target=4, max_rounds=5)
    assert out.groups == [MIXED] * 4
    assert (out.dropped, out.refilled, out.rounds) == (4, 2, 1)
    assert asked == [(1, 4)]  # 2 missing, half kept so far -> ask for 4
    assert out.metrics()["dynamic_sampling/batch_fill"] == 1.0


def test_it_stops_after_max_rounds_and_trains_on_what_it_has() -> None:
    out = fill_batch([ALL_WRONG, MIXED], lambda r, c: [ALL_RIGHT] * c, lambda g: g, target=2, max_rounds=2)
    assert out.groups == [MIXED] and out.rounds == 2
    assert out.metrics() == {
        "dynamic_sampling/groups_dropped": 1.0 + 2 + 2,
        "dynamic_sampling/groups_refilled": 0.0,
        "dynamic_sampling/rounds": 2.0,
        "dynamic_sampling/batch_fill": 0.5,
    }


def test_a_full_first_batch_samples_nothing_more() -> None:
    def fail(round_: int, count: int) -> list[tuple[float, ...]]:
        raise AssertionError("no refill needed")

    out = fill_batch([MIXED, MIXED], fail, lambda g: g, target=2, max_rounds=3)
    assert (out.dropped, out.refilled, out.rounds) == (0, 0, 0)


def test_the_refill_size_follows_the_kept_share_within_bounds() -> None:
    assert refill_count(missing=8, kept=8, sampled=16, cap=64) == 16
    assert refill_count(missing=8, kept=0, sampled=16, cap=64) == 64
    assert refill_count(missing=60, kept=4, sampled=64, cap=64) == 64
    assert refill_count(missing=0, kept=4, sampled=4, cap=64) == 0


def test_refill_prompts_depend_only_on_seed_step_and_round() -> None:
    a = refill_indices(100, 10, seed=3, step=7, round_=1)
    assert a == refill_indices(100, 10, seed=3, step=7, round_=1)
    assert a != refill_indices(100, 10, seed=3, step=7, round_=2)
    assert len(set(a)) == 10 and all(0 <= i < 100 for i in a)
    assert len(refill_indices(4, 10, seed=0, step=1, round_=1)) == 10  # more than there are problems
