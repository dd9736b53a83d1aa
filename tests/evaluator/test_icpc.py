"""The ICPC / Kattis default output validator flags, as the problem package format defines them."""

from __future__ import annotations

import pytest

from evaluator.compare import icpc, parse_checker, parse_validator_flags


def check(expected: str, actual: str, flags: str = "") -> bool:
    return icpc(expected, actual, parse_checker(parse_validator_flags(flags)))[0]


def test_without_flags_tokens_compare_case_insensitively() -> None:
    assert check("Yes\nPOSSIBLE", "yes possible")


def test_without_flags_any_whitespace_run_equals_any_other() -> None:
    assert check("1 2\n3\n", "  1\t2 3")


def test_without_flags_numbers_are_compared_as_text() -> None:
    assert not check("1.0", "1")
    assert not check("0.5", "0.50")


def test_case_sensitive_rejects_a_case_change() -> None:
    assert not check("Yes", "yes", "case_sensitive")
    assert check("Yes", "Yes", "case_sensitive")


def test_space_change_sensitive_requires_identical_whitespace() -> None:
    assert check("1 2\n", "1 2\n", "space_change_sensitive")
    assert not check("1 2\n", "1  2\n", "space_change_sensitive")
    assert not check("1 2\n", "1 2", "space_change_sensitive")  # the trailing newline too
    assert not check("1 2", " 1 2", "space_change_sensitive")


def test_space_change_sensitive_still_ignores_case_by_default() -> None:
    assert check("a B\n", "A b\n", "space_change_sensitive")


def test_float_tolerance_sets_both_absolute_and_relative() -> None:
    assert check("100.0", "100.00009", "float_tolerance 1e-6")  # relative 9e-7
    assert check("0.0", "0.0000009", "float_tolerance 1e-6")  # absolute
    assert not check("0.0", "0.000002", "float_tolerance 1e-6")


def test_absolute_tolerance_alone_does_not_accept_relative_error() -> None:
    assert not check("1000000", "1000000.5", "float_absolute_tolerance 1e-3")
    assert check("1000000", "1000000.5", "float_relative_tolerance 1e-6")


def test_relative_tolerance_alone_does_not_accept_absolute_error_near_zero() -> None:
    assert not check("0", "1e-9", "float_relative_tolerance 1e-6")


def test_with_tolerance_a_float_answer_token_needs_a_float_output_token() -> None:
    assert not check("2.5", "two", "float_tolerance 1e-6")
    assert not check("2.5", "inf", "float_tolerance 1e-6")


def test_with_tolerance_integer_answer_tokens_are_floats_too() -> None:
    assert check("3", "3.0000001", "float_tolerance 1e-6")


def test_with_tolerance_non_numeric_answer_tokens_stay_strings() -> None:
    assert check("case #1: 0.5", "CASE #1: 0.5000001", "float_tolerance 1e-6")
    assert not check("abc", "abd", "float_tolerance 1e-6")


def test_hexadecimal_floats_are_not_numbers_in_the_format() -> None:
    assert not check("16", "0x10", "float_tolerance 1e-9")
    assert not check("0", "0x0", "float_tolerance 0")
    assert not check("0", "0X0", "float_tolerance 0")


def test_a_value_that_underflows_is_not_zero() -> None:
    assert not check("0", "1e-4000", "float_tolerance 0")
    assert not check("1e-4000", "0", "float_tolerance 0")


def test_zero_written_with_an_exponent_or_a_sign_is_still_zero() -> None:
    assert check("0", "0e5", "float_tolerance 0")
    assert check("0", "-0.000", "float_tolerance 0")


def test_an_inf_answer_token_is_compared_as_a_string() -> None:
    assert check("inf", "INF", "float_tolerance 1e-6")
    assert not check("inf", "1e400", "float_tolerance 1e-6")


def test_trailing_output_is_rejected() -> None:
    assert not check("1", "1 2")
    assert not check("1 2", "1")


def test_validator_flags_parse_from_a_package_string() -> None:
    assert parse_validator_flags("case_sensitive float_tolerance 1e-4") == {
        "kind": "icpc", "case_sensitive": True, "float_tolerance": 1e-4}


def test_an_unknown_or_incomplete_flag_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown validator flag"):
        parse_validator_flags("ignore_order")
    with pytest.raises(ValueError, match="needs a value"):
        parse_validator_flags("float_tolerance")
