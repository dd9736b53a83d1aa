import pytest

from curation.buckets import bucket_from_platform


@pytest.mark.parametrize(
    ("label", "expected"),
    [("Easy", "easy"), ("Medium", "medium"), ("Hard", "hard"), ("hard", "hard"), ("introductory", "easy"),
     ("interview", "medium"), ("competition", "hard"), ("MEDIUM_HARD", "hard"), ("VERY_HARD", "hard")],
)
def test_it_maps_platform_labels_to_buckets(label: str, expected: str) -> None:
    assert bucket_from_platform(label, None) == expected


def test_it_prefers_a_rating_over_the_label() -> None:
    assert bucket_from_platform("A", 2400) == "hard"


@pytest.mark.parametrize(("rating", "expected"), [(800, "easy"), (1399, "easy"), (1400, "medium"), (1999, "medium"),
                                                  (2000, "hard")])
def test_it_splits_ratings_at_1400_and_2000(rating: int, expected: str) -> None:
    assert bucket_from_platform("", rating) == expected


@pytest.mark.parametrize(("index", "expected"), [("A", "easy"), ("B2", "easy"), ("C", "medium"), ("D", "medium"),
                                                 ("E", "hard"), ("G", "hard")])
def test_it_reads_codeforces_index_letters(index: str, expected: str) -> None:
    assert bucket_from_platform(index, None) == expected


def test_it_leaves_unknown_labels_unbucketed() -> None:
    assert bucket_from_platform("EXTERNAL", None) == ""
