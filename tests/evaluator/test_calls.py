"""Call-mode helpers: argument formats, ListNode/TreeNode conversion, result transfer."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

from evaluator import calls


@pytest.fixture
def ns() -> dict[str, Any]:
    return calls.build_prelude_namespace()


def test_it_reads_one_json_argument_per_line() -> None:
    assert calls.parse_call_input("[2,7,11,15]\n9") == ([[2, 7, 11, 15], 9], None)


def test_it_reads_python_literals_with_null_true_false() -> None:
    assert calls.parse_call_input("(1, 2)\n[None, null]\n{true: 'x'}") == ([(1, 2), [None, None], {True: "x"}],
                                                                         None)


def test_it_reads_leetcodedataset_named_arguments_in_order() -> None:
    positional, named = calls.parse_call_input('n = 7, queries = [[0,5],[1,6]], s = "a, b = c"')
    assert positional == []
    assert named == {"n": 7, "queries": [[0, 5], [1, 6]], "s": "a, b = c"}
    assert list(named) == ["n", "queries", "s"]


def test_it_rejects_text_that_is_not_arguments() -> None:
    with pytest.raises(ValueError):
        calls.parse_call_input("[1, 2")
    with pytest.raises(ValueError):
        calls.parse_call_input("__import__('os')")


def test_named_arguments_bind_by_name_or_by_position_when_renamed(ns: dict[str, Any]) -> None:
    def f(a: int, b: int) -> int:
        return a - b

    assert calls.bind_arguments(f, [], {"b": 1, "a": 5}, ns) == ([], {"b": 1, "a": 5})
    assert calls.bind_arguments(f, [], {"x": 5, "y": 1}, ns) == ([5, 1], {})


def test_list_node_parameters_receive_linked_lists(ns: dict[str, Any]) -> None:
    exec("def f(head: Optional[ListNode], k: int) -> None:\n    return None\n", ns)
    args, _ = calls.bind_arguments(ns["f"], [[1, 2, 3], 2], None, ns)
    assert calls.linked_to_list(args[0]) == [1, 2, 3]
    assert args[1] == 2


def test_string_annotations_and_lists_of_nodes_are_understood(ns: dict[str, Any]) -> None:
    exec("from __future__ import annotations\n"
         "def f(lists: List[Optional[ListNode]], root: 'Optional[TreeNode]') -> None:\n    return None\n", ns)
    args, _ = calls.bind_arguments(ns["f"], [[[1, 4], [], [2]], [1, None, 2]], None, ns)
    assert [calls.linked_to_list(n) for n in args[0]] == [[1, 4], [], [2]]
    assert calls.tree_to_list(args[1]) == [1, None, 2]


def test_trees_round_trip_in_leetcode_level_order(ns: dict[str, Any]) -> None:
    values = [5, 3, 6, 5, 2, 5, 7, 1, 8, None, None, 6, 8]
    root = calls._build_tree(values, ns["TreeNode"])
    assert calls.tree_to_list(root) == values


def test_a_cyclic_returned_list_is_refused(ns: dict[str, Any]) -> None:
    head = calls._build_linked([1, 2], ns["ListNode"])
    head.next.next = head
    with pytest.raises(ValueError, match="cyclic"):
        calls.encode_result(head)


def test_results_keep_tuples_sets_dicts_and_special_floats() -> None:
    value = {"t": (1, 2), "s": {3}, 4: [math.inf, -math.inf]}
    back = calls.decode_result(calls.encode_result(value))
    assert back == value
    assert isinstance(back["t"], tuple)
    nan = calls.decode_result(calls.encode_result(math.nan))
    assert math.isnan(nan)


def test_returned_nodes_are_serialized_as_lists(ns: dict[str, Any]) -> None:
    head = calls._build_linked([7, 0, 8], ns["ListNode"])
    assert calls.decode_result(calls.encode_result(head)) == [7, 0, 8]


def test_huge_integers_travel_as_text() -> None:
    big = 10 ** 5000
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # as inside the sandbox
    try:
        data = calls.encode_result(big)
    finally:
        sys.set_int_max_str_digits(previous)
    back = calls.decode_result(data)
    assert isinstance(back, calls.BigInt)
    assert back.digits == "1" + "0" * 5000


def test_unknown_objects_are_opaque() -> None:
    back = calls.decode_result(calls.encode_result(object()))
    assert isinstance(back, calls.Opaque)


def test_entry_points_resolve_methods_and_plain_functions(ns: dict[str, Any]) -> None:
    exec("class Solution:\n    def f(self, x):\n        return x + 1\ndef g(x):\n    return 2 * x\n", ns)
    assert calls.resolve_entry_point(ns, "Solution().f")(1) == 2
    assert calls.resolve_entry_point(ns, "f")(1) == 2
    assert calls.resolve_entry_point(ns, "g")(2) == 4
    with pytest.raises(LookupError):
        calls.resolve_entry_point(ns, "Solution().missing")


def test_the_prelude_keeps_three_argument_pow(ns: dict[str, Any]) -> None:
    exec("r = pow(3, 4, 5)", ns)
    assert ns["r"] == 1
    assert callable(ns["tree_node"]) and ns["inf"] == math.inf


def test_a_comma_separated_line_spreads_over_several_parameters(ns: dict[str, Any]) -> None:
    def f(coins: list[int], max_jump: int) -> None:
        return None

    positional, named = calls.parse_call_input("[1,2,4,-1,2], 2")
    assert calls.bind_arguments(f, positional, named, ns) == ([[1, 2, 4, -1, 2], 2], {})
