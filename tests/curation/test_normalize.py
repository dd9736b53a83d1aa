"""Stage "normalize": canonical statements, hashes, MinHash signatures and near-duplicate detection."""

from __future__ import annotations

import pytest

from curation.normalize import (
    Fingerprint,
    NearDuplicateIndex,
    canonical_statement,
    explain_duplicate,
    find_duplicates,
    jaccard,
    minhash_signature,
    shingles,
    sig_from_bytes,
    sig_to_bytes,
    statement_hash,
)

STATEMENT = (
    "Polycarp has an array of n integers. In one move he may choose two adjacent elements whose sum is even "
    "and replace them with their half sum. He wants the array to contain as few elements as possible after "
    "any number of moves. Determine the minimum possible length of the array and print a sequence of moves "
    "that reaches it. The first line contains a single integer t, the number of test cases. Each test case "
    "starts with the integer n followed by the n elements of the array. For every test case print the "
    "minimum length on the first line and the moves on the following lines. If there are several "
    "answers, print any of them. Note that the moves are applied one after another and indices refer "
    "to the current array."
)
# The same problem as another platform might print it: a few words changed, HTML markup, LaTeX.
EDITED = (
    "<p>Polycarp has an array of $n$ integers. In one move he may choose two neighbouring elements whose sum "
    "is even and replace them with their half sum.</p> <p>He wants the array to contain as few elements as "
    "possible after any number of moves. Determine the minimum possible length of the array and print a "
    "sequence of moves that reaches it.</p> The first line contains a single integer t, the number of test "
    "cases. Each test case starts with the integer n followed by the n elements of the array. For every test "
    "case output the minimum length on the first line and the moves on the following lines. If there are "
    "several answers, print any of them. Note that the moves are applied one after another and indices refer "
    "to the current array."
)
UNRELATED = (
    "You are given a weighted tree with n vertices. Answer q queries: for each query report the sum of edge "
    "weights on the path between vertices u and v, modulo a large prime. The tree is given as a list of "
    "parent pointers; vertex one is the root. Queries must be answered online, each decoded with the "
    "previous answer, so offline processing does not help. Print one line per query."
)


def test_canonical_text_is_case_folded_nfkc_and_free_of_markup() -> None:
    assert canonical_statement("<p>Ｆｉｎｄ  the <b>MAX</b>!</p>\n\n") == "find the max"


def test_all_spellings_of_less_or_equal_canonicalize_alike() -> None:
    forms = ["1 \\le n \\le 10", "1 &le; n &le; 10", "1 <= n <= 10", "1 ≤ n ≤ 10", "$1 \\leq n \\leq 10$"]
    assert {canonical_statement(f) for f in forms} == {"1 ≤ n ≤ 10"}


def test_sample_headings_are_noise_but_sample_data_is_kept() -> None:
    a = canonical_statement("Sample Input 1\n3\nSample Output 1\n6")
    b = canonical_statement("Example 1:\nInput\n3\nOutput\n6")
    assert a == "3 6"
    assert b == "input 3 output 6"


def test_the_same_statement_with_different_formatting_has_the_same_hash() -> None:
    assert statement_hash("<p>Print  the sum.</p>") == statement_hash("print the SUM")
    assert statement_hash("print the sum") != statement_hash("print the product")


def test_shingles_are_word_five_grams_of_the_canonical_text() -> None:
    assert shingles("A b, c d e f") == {"a b c d e", "b c d e f"}
    assert shingles("too short") == {"too short"}


def test_an_identical_statement_has_estimated_jaccard_one() -> None:
    assert jaccard(minhash_signature(STATEMENT), minhash_signature(STATEMENT)) == 1.0


def test_the_minhash_estimate_tracks_the_true_jaccard_of_the_shingle_sets() -> None:
    a, b = shingles(STATEMENT), shingles(EDITED)
    true_j = len(a & b) / len(a | b)
    estimate = jaccard(minhash_signature(STATEMENT), minhash_signature(EDITED))
    assert abs(estimate - true_j) < 0.12  # 128 permutations: standard error about 0.03


def test_signatures_survive_a_round_trip_through_bytes() -> None:
    sig = minhash_signature(STATEMENT)
    data = sig_to_bytes(sig)
    assert isinstance(data, bytes) and len(data) < 600
    restored = sig_from_bytes(data)
    assert list(restored.hashvalues) == list(sig.hashvalues)
    assert jaccard(restored, minhash_signature(STATEMENT)) == 1.0


def test_the_index_finds_a_lightly_edited_statement_and_not_an_unrelated_one() -> None:
    index = NearDuplicateIndex(threshold=0.8)
    index.add("cf/1A", minhash_signature(STATEMENT))
    index.add("cf/2B", minhash_signature(UNRELATED))
    found = index.query(minhash_signature(EDITED))
    assert [key for key, _ in found] == ["cf/1A"]
    assert found[0][1] >= 0.8


def test_index_answers_are_at_or_above_the_threshold_and_best_first() -> None:
    index = NearDuplicateIndex(threshold=0.5)
    index.add("edited", minhash_signature(EDITED))
    index.add("same", minhash_signature(STATEMENT))
    found = index.query(minhash_signature(STATEMENT))
    assert [k for k, _ in found] == ["same", "edited"]
    assert found[0][1] == 1.0 and all(j >= 0.5 for _, j in found)


def test_an_index_rejects_a_threshold_outside_zero_and_one() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        NearDuplicateIndex(threshold=1.5)


def test_adding_the_same_key_twice_is_an_error() -> None:
    index = NearDuplicateIndex()
    index.add("a", minhash_signature(STATEMENT))
    with pytest.raises(ValueError, match="already in the index"):
        index.add("a", minhash_signature(STATEMENT))


def test_explanations_name_the_hash_or_the_similarity_and_the_platforms() -> None:
    original = Fingerprint.of("cf/1A", "codeforces", STATEMENT)
    copy = Fingerprint.of("cc/X", "codechef", "<p>" + STATEMENT.upper() + "</p>")
    edited = Fingerprint.of("cc/Y", "codechef", EDITED)
    other = Fingerprint.of("cf/9Z", "codeforces", UNRELATED)
    assert (
        explain_duplicate(copy, original)
        == f"same statement hash {original.statement_hash[:12]} across codechef and codeforces"
    )
    assert explain_duplicate(edited, original).startswith("MinHash Jaccard 0.")
    assert explain_duplicate(edited, original).endswith(">= 0.80 across codechef and codeforces")
    assert explain_duplicate(other, original).startswith("not a duplicate: MinHash Jaccard 0.")


def test_find_duplicates_links_exact_and_near_copies_to_the_first_seen_original() -> None:
    items = [
        Fingerprint.of("cf/1A", "codeforces", STATEMENT),
        Fingerprint.of("cf/9Z", "codeforces", UNRELATED),
        Fingerprint.of("cc/X", "codechef", STATEMENT + "  "),
        Fingerprint.of("cc/Y", "codechef", EDITED),
    ]
    links = list(find_duplicates(items))
    assert [(link.duplicate, link.original, link.kind) for link in links] == [
        ("cc/X", "cf/1A", "exact"),
        ("cc/Y", "cf/1A", "near"),
    ]
    assert links[1].reason.startswith("MinHash Jaccard") and links[1].jaccard >= 0.8


def test_the_real_train_file_has_exactly_its_two_placeholder_statements_as_exact_duplicates() -> None:
    from pathlib import Path

    from curation.importers import get_importer

    path = (
        Path(__file__).resolve().parents[2].parent
        / "shared"
        / "data"
        / "leetcodedataset"
        / "LeetCodeDataset-v0.2.0-train.jsonl.gz"
    )
    if not path.exists():
        pytest.skip(f"real data not available: {path} is missing")
    recs = [r.record for r in get_importer("leetcodedataset").parse(path) if r.record]
    links = list(find_duplicates(Fingerprint.of(r.external_id, r.platform, r.statement) for r in recs))
    # Both rows say "English description is not available for the problem." - linked, not deleted.
    assert [(link.duplicate, link.original, link.kind) for link in links] == [
        ("guess-numbers", "deep-dark-fraction", "exact")
    ]
