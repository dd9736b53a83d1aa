"""The lenient fallback chain and the strict (LiveCodeBench-style) baseline on hand-made outputs."""

from __future__ import annotations

import pytest

from evaluator.compare import (
    Checker,
    compare_output,
    compare_value,
    floats_close,
    lenient,
    parse_checker,
    strict,
    structural_equal,
)


# ------------------------------------------------------------------------------------ the chain
def test_it_accepts_identical_output_with_the_exact_comparator() -> None:
    assert lenient("1 2\n3\n", "1 2\n3\n") == (True, "exact")


def test_it_accepts_crlf_and_trailing_spaces_as_line_end_normalized() -> None:
    assert lenient("1 2\n3\n", "1 2  \r\n3\r\n\r\n") == (True, "line_end_normalized")


def test_line_end_normalization_keeps_leading_spaces_significant() -> None:
    ok, method = lenient("a\nb", " a\nb")
    assert (ok, method) == (True, "whitespace_tokens")  # accepted one step later, by tokens


def test_it_accepts_reflowed_whitespace_as_whitespace_tokens() -> None:
    assert lenient("1 2 3\n", "1\n2   3") == (True, "whitespace_tokens")


def test_it_accepts_more_float_digits_as_float_tokens() -> None:
    assert lenient("0.333333\n", "0.333333333\n") == (True, "float_tokens")


def test_it_accepts_exponent_notation_as_float_tokens() -> None:
    assert lenient("0.0000001 2500000.0", "1e-07 2.5E+06") == (True, "float_tokens")


def test_it_accepts_a_relative_error_below_the_tolerance() -> None:
    assert lenient("123456789.0", "123456789.5")[0]  # relative error 4e-9


def test_it_accepts_inf_and_nan_only_as_themselves() -> None:
    assert lenient("inf -inf nan", "Infinity -inf NaN")[0]
    assert not lenient("inf", "-inf")[0]
    assert not lenient("nan", "0.0")[0]
    assert not lenient("1.5", "inf")[0]


def test_it_rejects_a_float_just_outside_the_tolerance() -> None:
    assert lenient("0.333333", "0.333335") == (False, "lenient")


def test_it_rejects_an_integer_that_is_off_by_one_even_when_large() -> None:
    # a relative tolerance would accept this; integers are compared exactly
    assert lenient("1000000000", "1000000001") == (False, "lenient")
    assert lenient("1000000000", "1000000001.0") == (False, "lenient")


def test_it_accepts_an_integral_float_for_an_integer_answer() -> None:
    assert lenient("3", "3.0") == (True, "float_tokens")


def test_it_keeps_integer_text_significant_for_leading_zeros() -> None:
    assert not lenient("007", "7")[0]


def test_it_rejects_swapped_tokens_because_order_matters() -> None:
    assert not lenient("1 2", "2 1")[0]


def test_it_rejects_a_missing_or_extra_token() -> None:
    assert not lenient("1 2 3", "1 2")[0]
    assert not lenient("1 2", "1 2 3")[0]


def test_it_rejects_a_changed_word_and_case() -> None:
    assert not lenient("YES", "NO")[0]
    assert not lenient("Yes", "YES")[0]


def test_it_does_not_treat_underscored_numbers_as_numbers() -> None:
    assert not lenient("1000", "1_000")[0]


def test_float_tolerance_can_be_set_by_the_problem() -> None:
    loose = parse_checker({"kind": "lenient", "float_tolerance": 1e-2})
    assert lenient("3.14", "3.1416", loose)[0]
    assert not lenient("3.14", "3.1416")[0]


def test_floats_close_uses_absolute_or_relative_error() -> None:
    assert floats_close(0.0, 1e-7, 1e-6, 1e-6)
    assert floats_close(1e9, 1e9 + 500, 1e-6, 1e-6)
    assert not floats_close(1.0, 1.01, 1e-6, 1e-6)


# ---------------------------------------------------------------------------------------- strict
def test_strict_accepts_decimal_equal_tokens() -> None:
    assert strict("2.5\n", "2.50") == (True, "strict")


def test_strict_rejects_more_float_digits() -> None:
    assert strict("0.333333", "0.333333333") == (False, "strict")


def test_strict_requires_the_same_line_structure() -> None:
    assert not strict("1 2 3", "1\n2 3")[0]


def test_strict_ignores_surrounding_whitespace_of_lines() -> None:
    assert strict("1 2\n3\n", "  1 2  \n3")[0]


def test_compare_output_dispatches_on_the_checker_kind() -> None:
    assert compare_output("0.5", "0.50000001", {"kind": "lenient"}) == (True, "float_tokens")
    assert compare_output("0.5", "0.50000001", {"kind": "strict"}) == (False, "strict")
    assert compare_output("ABC", "abc", {"kind": "icpc"}) == (True, "icpc")


def test_parse_checker_rejects_unknown_options() -> None:
    with pytest.raises(ValueError, match="unknown checker option"):
        parse_checker({"kind": "lenient", "ignore_order": True})
    with pytest.raises(ValueError, match="kind"):
        parse_checker({"kind": "fuzzy"})


# ------------------------------------------------------------------------------------ call values
def test_call_values_accept_the_str_form_exactly() -> None:
    assert compare_value("[2, 2, 2]", [2, 2, 2]) == (True, "exact")
    assert compare_value("aa", "aa") == (True, "exact")


def test_call_values_accept_json_or_python_literals_structurally() -> None:
    assert compare_value("[3,9,20,null,null,15,7]", [3, 9, 20, None, None, 15, 7]) == (True, "structural")
    assert compare_value("true", True) == (True, "structural")
    assert compare_value('"abc"', "abc") == (True, "structural")


def test_call_values_accept_nested_tuples_for_lists_in_lenient_but_not_strict() -> None:
    assert compare_value("[0, 1]", (0, 1)) == (True, "structural")
    assert compare_value("[[1, 2], [3]]", [(1, 2), (3,)])[0]
    assert compare_value("[[1, 2], [3]]", [(1, 2), (3,)], {"kind": "strict"}) == (False, "strict")


def test_strict_turns_a_top_level_tuple_into_a_list_as_livecodebench_does() -> None:
    assert compare_value("[0, 1]", (0, 1), {"kind": "strict"}) == (True, "strict")


def test_call_values_compare_floats_with_tolerance() -> None:
    assert compare_value("0.16666666666666666", 0.1666666667)[0]
    assert compare_value("2.0", 2)[0]
    assert not compare_value("2.0", 2.001)[0]
    assert not compare_value("0.16666666666666666", 0.1666666667, {"kind": "strict"})[0]


def test_call_values_never_confuse_bool_and_int() -> None:
    checker = Checker()
    assert not structural_equal(True, 1, checker)
    assert not structural_equal(1, True, checker)


def test_call_values_use_set_semantics_only_for_an_expected_set() -> None:
    assert compare_value("{1, 2, 3}", [3, 1, 2]) == (True, "structural")
    assert not compare_value("{1, 2}", [1, 1, 2])[0]  # duplicates are content
    assert not compare_value("[1, 2, 3]", [3, 1, 2])[0]  # a list answer keeps its order
    assert not compare_value("[1, 2, 3]", {1, 2, 3})[0]


def test_call_values_compare_dicts_by_keys_then_values() -> None:
    assert compare_value("{'a': 1.0, 'b': [1]}", {"b": [1], "a": 1.0000001})[0]
    assert not compare_value("{'a': 1}", {"a": 1, "b": 2})[0]


def test_call_values_reject_a_close_wrong_answer() -> None:
    assert not compare_value("[1, 2, 3]", [1, 2, 4])[0]
    assert not compare_value("[1, 2, 3]", [1, 2])[0]
    assert not compare_value("None", 0)[0]
    assert not compare_value("abc", "abd")[0]


def test_call_values_accept_a_digit_string_written_unquoted() -> None:
    # LeetCodeDataset writes str(result): a function returning "579" has output 579
    assert compare_value("579", "579") == (True, "exact")
    assert not compare_value("579", "578")[0]


def test_an_integer_answer_is_never_matched_through_a_float() -> None:
    # 10000000000000001 and 1e16 are the same double: the typical `/` instead of `//` mistake
    assert not compare_output("10000000000000001\n", "1e16\n")[0]
    assert not compare_output("10000000000000001\n", "10000000000000000.0\n")[0]
    assert compare_output("5\n", "5.0\n") == (True, "float_tokens")
    assert not compare_value("10000000000000001", 1e16)[0]
    assert compare_value("5", 5.0) == (True, "structural")


def test_a_huge_integer_answer_against_a_float_token_is_a_plain_mismatch() -> None:
    assert compare_output("1" * 400 + "\n", "1.5\n") == (False, "lenient")
    assert compare_output("1" * 5000 + "\n", "1.5e3\n") == (False, "lenient")


def test_bools_never_stand_in_for_numbers_inside_sets_and_dict_keys() -> None:
    assert compare_value("{0, 1}", [0, 1])[0]
    assert not compare_value("{0, 1}", [False, True])[0]
    assert compare_value("{1: 2}", {1: 2})[0]
    assert not compare_value("{1: 2}", {True: 2})[0]


# ---------------------------------------------------------------------- comparison cost (hostile output)
# A solution controls its output, so no comparator may be super-linear in it. Each case is a few hundred
# kilobytes that a quadratic comparator needs minutes for and a linear one milliseconds: the timeout is a
# guard that turns a hang into a failure, not a speed claim.
HOSTILE_OUTPUTS = {
    "a long run of spaces that does not end its line": ("1" + " " * 200_000 + "2", "1" + " " * 199_999 + "3"),
    "a long run of tabs before a newline": ("1\t\n2", "1" + "\t" * 200_000 + "x\n2"),
    "a long digit string against an integer": ("9" * 200_000, "9" * 199_999 + "8"),
    "a long digit string written as a float": ("9" * 200_000, "9" * 199_999 + ".0"),
    "a long fraction": ("0." + "3" * 200_000, "0.4" + "3" * 199_999),
    "a huge exponent": ("1000", "1.0e999999999"),
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["lenient", "strict", "icpc"])
@pytest.mark.parametrize("name", sorted(HOSTILE_OUTPUTS))
def test_no_comparator_is_super_linear_in_a_hostile_output(kind: str, name: str) -> None:
    expected, actual = HOSTILE_OUTPUTS[name]
    spec = {"kind": "icpc", "float_tolerance": 1e-6} if kind == "icpc" else {"kind": kind}
    assert compare_output(expected, actual, spec)[0] is False


def test_a_deeply_nested_expected_value_is_compared_as_text_not_a_crash() -> None:
    nested = "[" * 5000 + "]" * 5000
    assert compare_value(nested, []) == (False, "lenient")
